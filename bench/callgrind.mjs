// Runs bench/footprint-probe.mjs under callgrind on a runtime, and reads
// what callgrind dumped at each of its markers (one part file per dump), in
// the order it was dumped, and the instructions each function of an object
// ran in one part.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The probe's markers: callgrind dumps its counters before each call of one. */
const MARKERS = ['getegid', 'getuid', 'getgid'];

/**
 * Each runtime compiles on its own thread only: the JIT tiers a function
 * up when its compiler thread gets to it, which under valgrind (one thread
 * at a time) differs from run to run, and so would the code a sample runs.
 */
const ONE_THREAD = {
  node: { args: ['--single-threaded'], env: {} },
  bun: { args: [], env: { BUN_JSC_useConcurrentJIT: '0' } },
};

/**
 * Runs the probe on `runtime` ('node' or 'bun', the pinned ones) under
 * callgrind with `options`, its dumps going to `out`.<n>; the probe's
 * stdout. Only --dump-before on the markers: with --dump-after on them
 * too, valgrind 3.19 fired only the first marker's --dump-before.
 *
 * With `late`, instrumentation starts off and the probe switches it on
 * after its warm-up (--instrument): on Node 24.9 importing drizzle-orm
 * parses its package.json's exports map once per module, which most of an
 * instrumented run's time went to, and which runs uninstrumented at a few
 * times native speed. A call's instructions come out the same either way;
 * Node's page counts did not, so figures are compared made one way only
 * (docs/performance.md, "Instrumented after the warm-up"). Where
 * callgrind_control cannot reach the process (the probe exits 3), the run
 * is made again instrumented from the start.
 */
export function underCallgrind(runtime, { out, options = [], args = [], env = {}, late = false }) {
  const bin = join(root, 'node_modules', '.bin', runtime);
  const run = (fromStart) => {
    const argv = ['--tool=callgrind', `--instr-atstart=${fromStart ? 'yes' : 'no'}`, ...options, ...MARKERS.map((f) => `--dump-before=${f}`), `--callgrind-out-file=${out}`, bin, ...ONE_THREAD[runtime].args, join(root, 'bench', 'footprint-probe.mjs'), ...args, ...(fromStart ? [] : ['--instrument'])];
    return spawnSync('valgrind', argv, { cwd: root, encoding: 'utf8', maxBuffer: 64 << 20, env: { ...process.env, ...ONE_THREAD[runtime].env, ...env } });
  };
  let result = run(!late);
  if (late && result.status === 3) {
    console.error(`${result.stderr.split('\n').filter((l) => l.startsWith('callgrind_control')).join('\n')}; running the probe on ${runtime} again, instrumented from the start`);
    for (const f of readdirSync(dirname(out))) if (f.startsWith(basename(out))) rmSync(join(dirname(out), f));
    result = run(true);
  }
  if (result.status !== 0) throw new Error(`the probe failed under callgrind on ${runtime}:\n${result.stderr.split('\n').slice(-30).join('\n')}`);
  return result.stdout;
}

/** The events of a run with --cache-sim=yes; callgrind leaves trailing zero counts out of a part's totals. */
const CACHE_EVENTS = ['Ir', 'Dr', 'Dw', 'I1mr', 'D1mr', 'D1mw', 'ILmr', 'DLmr', 'DLmw'];

/**
 * Every part file `<prefix>.<n>` in `dir`, in dump order: when it was
 * dumped ('before' the function `at`, or 'other'), its path, and its totals
 * by event name, with `LLm` (last-level misses, instruction and data) added
 * when the run simulated caches (`cacheSim`).
 */
export function readParts(dir, prefix, { cacheSim = true } = {}) {
  const events = cacheSim ? CACHE_EVENTS : ['Ir'];
  const parts = [];
  for (const name of readdirSync(dir)) {
    if (!name.startsWith(`${prefix}.`)) continue;
    const file = join(dir, name);
    const text = readFileSync(file, 'utf8');
    const part = Number(/^part: (\d+)$/m.exec(text)?.[1]);
    const named = /^events: (.*)$/m.exec(text)?.[1];
    const totals = /^totals: (.*)$/m.exec(text)?.[1].split(' ').map(Number);
    if (!Number.isInteger(part) || !named || !totals) throw new Error(`${name} is not a callgrind part file`);
    if (named !== events.join(' ')) throw new Error(`${name} counts ${named}, not ${events.join(' ')}`);
    const counts = Object.fromEntries(events.map((e, i) => [e, totals[i] ?? 0]));
    if (cacheSim) counts.LLm = counts.ILmr + counts.DLmr + counts.DLmw;
    const [, when = 'other', at = ''] = /^desc: Trigger: --dump-(before)=(\S+)$/m.exec(text) ?? [];
    parts.push({ part, when, at, file, counts });
  }
  return parts.sort((a, b) => a.part - b.part);
}

/** The parts of the intervals that end with a call of `marker` (dumped before it). */
export function endingAt(parts, marker) {
  return parts.filter((p) => p.when === 'before' && p.at === marker);
}

/**
 * The instructions `object` (a path, as callgrind names the object) ran at
 * each of its addresses in one part, by address within the object: the
 * run must have had --dump-instr=yes. By address, not by function: in a
 * stripped object callgrind cannot see where a function ends, and gives a
 * tail call's cost to its caller.
 */
export function costByAddress({ file }, object) {
  const names = new Map();
  const costs = new Map();
  let ob;
  let at = 0;
  let afterCall = false;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    // "ob=(3) /path" the first time, "ob=(3)" after; "cob=" names a callee's.
    const ref = /^ob=\((\d+)\)(?: (.*))?$/.exec(line);
    if (ref) {
      if (ref[2] !== undefined) names.set(ref[1], ref[2]);
      ob = names.get(ref[1]);
      continue;
    }
    const named = /^cob=\((\d+)\) (.*)$/.exec(line);
    if (named) names.set(named[1], named[2]);
    if (line.startsWith('calls=')) {
      afterCall = true; // the next cost line is the call's inclusive cost
      continue;
    }
    if (!/^(0x|[+\-*])/.test(line)) continue;
    if (afterCall) {
      // The call's cost line: callgrind writes its position relative to
      // the last one without moving that base (dump.c, fprint_jcc).
      afterCall = false;
      continue;
    }
    // "<instr> <line> <Ir>": an address, or an offset from the last one ("+4", "-16", "*").
    const [instr, , ir = '0'] = line.split(' ');
    if (instr.startsWith('0x')) at = Number(instr);
    else if (instr[0] === '+') at += Number(instr.slice(1));
    else if (instr[0] === '-') at -= Number(instr.slice(1));
    if (ob === object) costs.set(at, (costs.get(at) ?? 0) + Number(ir));
  }
  return costs;
}
