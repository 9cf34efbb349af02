// Bun only: what wiping a decrypt's plaintext from the bun:ffi path's
// scratch memory costs, the typed array's own fill against a bun:ffi call
// to the addon's ale_ffi_wipe (docs/performance.md, "Bun: the bun:ffi
// path"), 256 bytes, interleaved in batches, five sets.
//
//   bun bench/experiments/wipe.mjs [path/to/ale.<platform>.node]
import { readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { timeBatches } from '../micro.mjs';

if (!process.versions.bun) throw new Error('bun:ffi exists on Bun only: run this with bun');
const { dlopen, FFIType: T, ptr } = await import('bun:ffi');
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const library = resolve(process.argv[2] ?? join(root, readdirSync(root).find((f) => /^ale\..*\.node$/.test(f)) ?? 'ale.node'));
const { ale_ffi_wipe: wipe } = dlopen(library, { ale_ffi_wipe: { args: [T.ptr, T.i32], returns: T.void } }).symbols;

const BYTES = 256;
// As the closure in src/callbacks/prototype.js holds it: fill from a frozen
// prototype of its own.
const scratch = Object.setPrototypeOf(Buffer.allocUnsafeSlow(4096), Object.freeze(Object.create(Buffer.prototype, { fill: { value: Uint8Array.prototype.fill } })));
const at = ptr(scratch);
let k = 0;
// Each contender first dirties one byte, as a decrypt would have written the span.
const contenders = {
  fill: () => {
    scratch[k++ & (BYTES - 1)] = 1;
    scratch.fill(0, 0, BYTES);
  },
  ale_ffi_wipe: () => {
    scratch[k++ & (BYTES - 1)] = 1;
    wipe(at, BYTES);
  },
  'the loop alone': () => {
    scratch[k++ & (BYTES - 1)] = 1;
  },
};
const names = Object.keys(contenders);
const fns = Object.values(contenders);
for (let i = 0; i < 100_000; i++) for (const f of fns) f();
// Both wipes must leave the span zero.
for (const f of fns.slice(0, 2)) {
  f();
  if (scratch.subarray(0, BYTES).some((b) => b !== 0)) throw new Error('a wipe left a byte');
}
console.log(`Bun ${process.versions.bun}, ${BYTES} bytes, ns a call (2,000,000 calls in 100 batches a side)`);
for (let set = 0; set < 5; set++) {
  const timed = timeBatches(fns, { iterations: 2_000_000, rounds: 100 });
  console.log(names.map((name, i) => `${name} ${timed[i].nsPerOp.toFixed(1)}`).join(' | '));
}
