// The fallback's IV source (crates/core/src/iv.rs is the addon's).
import { randomFillSync } from 'node:crypto';
import { random } from './errors.js';

// IVs come from a 4 KiB pool of OS randomness, refilled when spent: one
// system call per 256 IVs instead of one each (docs/performance.md, "The fallback's IV pool"). Every IV is a copy, and no byte of the pool is handed out twice.
// The pool remembers the process it was filled in: a process started from a
// snapshot of this one (node --build-snapshot) or a copy of it refills
// instead of replaying the same IVs.
const ivPool = Buffer.allocUnsafeSlow(4096);
let ivDrawn = ivPool.length;
let ivPid = 0;

export function nextIv(length: number): Buffer {
  if (ivDrawn + length > ivPool.length || ivPid !== process.pid) {
    random(() => randomFillSync(ivPool));
    ivDrawn = 0;
    ivPid = process.pid;
  }
  const iv = Buffer.from(ivPool.subarray(ivDrawn, ivDrawn + length));
  ivDrawn += length;
  return iv;
}
