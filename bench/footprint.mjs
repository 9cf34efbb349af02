// Cold footprint of the hot operations: how many 4 KiB pages and 64 B cache
// lines one call touches when nothing of it is cached (256 B values; the
// search index column's write takes a 4 KB text), and how many instructions
// it runs, counted exactly by callgrind on each runtime
// (docs/performance.md, "The cold footprint"). Inside a database write the
// caches are cold between two calls, and what a call then costs follows the
// pages it touches more than the work it does.
//
//   npm run bench:footprint                  both runtimes, 15 samples
//   node bench/footprint.mjs --runtime node --samples 3 --json out.json
//   node bench/footprint.mjs --only encryptedText   operations whose name has this
//   node bench/footprint.mjs --samples 3 --late      CI's smoke run: instrumented
//                                            after the warm-up, faster (bench/callgrind.mjs:
//                                            figures made this way are compared with each
//                                            other only)
//
// Needs valgrind (Debian's package: `sh scripts/valgrind.sh` installs it).
// The figures are exact counts of a simulated cache, so they do not move
// with the host's load; they move with the runtime's version and the build.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { endingAt, readParts, underCallgrind } from './callgrind.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { values: flags } = parseArgs({
  options: {
    runtime: { type: 'string', default: 'both' },
    samples: { type: 'string', default: '15' },
    only: { type: 'string' },
    json: { type: 'string' },
    late: { type: 'boolean' },
  },
});
const runtimes = flags.runtime === 'both' ? ['node', 'bun'] : [flags.runtime];
const samples = Number(flags.samples);
if (!Number.isInteger(samples) || samples < 1) throw new Error('--samples takes a positive integer');

/** Pages (4 KiB lines in a 16 MiB cache) and cache lines (64 B in a 4 MiB one): each cache large enough that a call never evicts its own lines. */
const GRAINS = [
  { key: 'pages', line: 4096, cache: 16 << 20 },
  { key: 'lines', line: 64, cache: 4 << 20 },
];
/** The target for one cold 256 B column encode or decode (#35). */
const PAGE_TARGET = 40;

const version = spawnSync('valgrind', ['--version'], { encoding: 'utf8' });
if (version.status !== 0) {
  console.error('valgrind is not installed. `sh scripts/valgrind.sh` installs it from Debian\'s packages (as root), then run this again.');
  process.exit(1);
}

const results = [];
for (const runtime of runtimes) {
  const bin = join(root, 'node_modules', '.bin', runtime);
  const runtimeVersion = spawnSync(bin, ['--version'], { encoding: 'utf8' }).stdout.trim();
  const counts = {};
  let operations;
  for (const grain of GRAINS) {
    const run = measure(runtime, grain);
    operations = run.operations;
    counts[grain.key] = run.perOperation;
  }
  operations.forEach((name, k) => {
    results.push({
      runtime: `${runtime === 'node' ? 'Node' : 'Bun'} ${runtimeVersion.replace(/^v/, '')}`,
      operation: name,
      pages: summary(counts.pages[k].map((s) => s.LLm)),
      lines: summary(counts.lines[k].map((s) => s.LLm)),
      instructions: summary(counts.pages[k].map((s) => s.Ir)),
    });
  });
}

console.log(`\nCold footprint of one call (256 B values unless the operation names a size; ${samples} samples; median [min–max]; ${version.stdout.trim()}${flags.late ? '; instrumented after the warm-up (--late)' : ''})\n`);
console.log('| Runtime | Operation | 4 KiB pages | 64 B lines | instructions |');
console.log('| --- | --- | --- | --- | --- |');
for (const r of results) {
  // The target was set on counts instrumented from the start, which --late's are not comparable with.
  const target = !flags.late && /^encryptedText/.test(r.operation) ? (r.pages.median <= PAGE_TARGET ? ` (≤ ${PAGE_TARGET}: met)` : ` (≤ ${PAGE_TARGET}: not met)`) : '';
  console.log(`| ${r.runtime} | ${r.operation} | ${show(r.pages)}${target} | ${show(r.lines)} | ${show(r.instructions)} |`);
}
if (flags.json) writeFileSync(flags.json, `${JSON.stringify({ valgrind: version.stdout.trim(), samples, late: flags.late === true, results }, null, 2)}\n`);

/**
 * One callgrind run of the probe at one grain: per operation, per sample,
 * the operation's interval less its baseline (the same sweep with no call).
 */
function measure(runtime, { line, cache }) {
  const dir = mkdtempSync(join(tmpdir(), 'ale-footprint-'));
  try {
    const stdout = underCallgrind(runtime, {
      out: join(dir, 'cg.out'),
      // First levels of 1 KiB (16 lines): nearly every access reaches the
      // last level, whose misses are the counts read here.
      options: ['--cache-sim=yes', '--I1=1024,2,64', '--D1=1024,2,64', `--LL=${cache},16,${line}`],
      late: flags.late,
      args: ['--line', String(line), '--cache', String(cache), '--samples', String(samples), ...(flags.only === undefined ? [] : ['--only', flags.only])],
    });
    const { operations } = JSON.parse(stdout.trim().split('\n').at(-1));
    const parts = readParts(dir, 'cg.out');
    const wanted = operations.length * samples;
    // The last `wanted` of each: any earlier call (a runtime's start-up) is not the probe's.
    const baselines = endingAt(parts, 'getuid').slice(-wanted).map((p) => p.counts);
    const calls = endingAt(parts, 'getgid').slice(-wanted).map((p) => p.counts);
    if (calls.length < wanted || baselines.length < wanted) throw new Error(`callgrind dumped ${calls.length} intervals of a call, fewer than the ${wanted} the probe makes`);
    const perOperation = operations.map((_, k) =>
      Array.from({ length: samples }, (_, s) => {
        const [baseline, call] = [baselines[k * samples + s], calls[k * samples + s]];
        return { LLm: call.LLm - baseline.LLm, Ir: call.Ir - baseline.Ir };
      }),
    );
    return { operations, perOperation };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function summary(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[mid] : Math.round((sorted[mid - 1] + sorted[mid]) / 2);
  return { median, min: sorted[0], max: sorted.at(-1) };
}

function show({ median, min, max }) {
  const f = (n) => n.toLocaleString('en-US');
  return min === max ? f(median) : `${f(median)} [${f(min)}–${f(max)}]`;
}
