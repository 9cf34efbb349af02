// Bun only: where the bun:ffi path stops beating Node-API, by value size.
// Two loads of one build (each a copy in a directory of its own, one with
// ALE_BUN_PATH=ffi, one with napi), plus a second copy on bun:ffi as the A/A
// control, encrypt and decrypt ASCII values from 256 B to 8 KiB, every
// contender's batch interleaved with the others' in alternating order. The
// ratio is bun:ffi's time over Node-API's, per round (forward and backward
// as one pair), median with a 95% interval over the pairs; below 1,
// bun:ffi is the faster. The switch-over in src/callbacks/prototype.js
// (MAX_UNITS) is set from this (docs/performance.md, "Bun: the bun:ffi path").
//
//   bun bench/experiments/ffi-crossing.mjs [--rounds 40] [--calls 2000]
import { cpSync, mkdtempSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

if (!process.versions.bun) throw new Error('bun:ffi exists on Bun only: run this with bun');
const { values: flags } = parseArgs({ options: { rounds: { type: 'string', default: '40' }, calls: { type: 'string', default: '2000' } } });
const rounds = Number(flags.rounds);
const calls = Number(flags.calls);
if (!Number.isInteger(rounds) || rounds < 2 || rounds % 2 !== 0) throw new Error('--rounds takes an even number of at least 2');

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const binary = readdirSync(root).find((f) => /^ale\..*\.node$/.test(f));
if (!binary) throw new Error('no built addon here: npm run build:addon first');
const require = createRequire(import.meta.url);
/** The build, copied into a directory of its own and loaded with `hot` as its path. */
function load(hot) {
  const dir = mkdtempSync(join(tmpdir(), `ale-crossing-${hot}-`));
  for (const f of ['index.js', binary]) cpSync(join(root, f), join(dir, f));
  process.env.ALE_BUN_PATH = hot;
  const ale = require(join(dir, 'index.js'));
  if (ale.hotPath !== (hot === 'ffi' ? 'bun:ffi' : 'node-api')) throw new Error(`${hot}: the build took ${ale.hotPath}`);
  return ale;
}
const contenders = { ffi: load('ffi'), napi: load('napi'), 'ffi (A/A)': load('ffi') };
const secret = 'bench-secret-0123456789-abcdefghijklmnop';
const CTX = ['tenant-bench', 'content_nodes', 'data'];
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
/** A distribution-free 95% interval of the median of `xs` (order statistics of the binomial). */
function interval(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  const k = Math.max(0, Math.floor(n / 2 - 1.96 * Math.sqrt(n) / 2));
  return [s[k], s[Math.min(n - 1, n - 1 - k)]];
}

console.log(`Bun ${process.versions.bun}, ${binary}; ${rounds} rounds of ${calls} calls per contender and size; ratio = bun:ffi time / Node-API time (A/A: a second bun:ffi load / the first)\n`);
console.log('| size | op | bun:ffi (ns) | Node-API (ns) | bun:ffi / Node-API | A/A |');
console.log('| --- | --- | --- | --- | --- | --- |');
for (const bytes of [256, 512, 1024, 2048, 3072, 4096, 6144, 8192]) {
  const value = 'a'.repeat(bytes);
  const rings = Object.fromEntries(Object.entries(contenders).map(([name, ale]) => [name, new ale.KeyRing([secret])]));
  const sealed = Object.fromEntries(Object.entries(rings).map(([name, ring]) => [name, ring.encrypt(value, ...CTX)]));
  for (const [name, ring] of Object.entries(rings)) if (ring.decrypt(sealed[name], ...CTX) !== value) throw new Error(`${name}: round trip failed at ${bytes} B`);
  for (const op of ['encrypt', 'decrypt']) {
    const run = (name) => {
      const ring = rings[name];
      const input = op === 'encrypt' ? value : sealed[name];
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < calls; i++) ring[op](input, ...CTX);
      return Number(process.hrtime.bigint() - t0) / calls;
    };
    const names = Object.keys(rings);
    for (const name of names) for (let w = 0; w < 3; w++) run(name); // warm-up
    const times = Object.fromEntries(names.map((n) => [n, []]));
    for (let r = 0; r < rounds; r++) for (const name of r % 2 ? [...names].reverse() : names) times[name].push(run(name));
    // a forward round and the backward one after it are one pair, so drift cancels within it
    const pairs = (a, b) => Array.from({ length: rounds / 2 }, (_, i) => (times[a][2 * i] + times[a][2 * i + 1]) / (times[b][2 * i] + times[b][2 * i + 1]));
    const ratio = pairs('ffi', 'napi');
    const aa = pairs('ffi (A/A)', 'ffi');
    const [lo, hi] = interval(ratio);
    const [alo, ahi] = interval(aa);
    const f = (x) => x.toFixed(3);
    console.log(`| ${bytes} B | ${op} | ${median(times.ffi).toFixed(0)} | ${median(times.napi).toFixed(0)} | ${f(median(ratio))} [${f(lo)}, ${f(hi)}] | ${f(median(aa))} [${f(alo)}, ${f(ahi)}] |`);
  }
}
