// Shared by the JS tests; runs unchanged on Node 24 and Bun.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
// The package entry: the native addon, or the node:crypto fallback when
// ALE_BACKEND=js (or no binary loads), so every suite runs on either backend.
export const ale = require('../main.cjs');

export const SECRET = 'test-secret-0123456789-abcdefghijklmnop';
export const OLD_SECRET = 'older-secret-0123456789-abcdefghijklmnop';
export const CTX = ['tenant-a', 'users', 'email'];
export const runtime = process.versions.bun ? `bun ${process.versions.bun}` : `node ${process.version}`;

/** Asserts that fn throws an Error whose code is `code`; returns the error. */
export function throwsCode(assert, fn, code) {
  let caught;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  assert.ok(caught instanceof Error, `expected an Error with code ${code}, got ${caught}`);
  assert.equal(caught.code, code, caught.message);
  return caught;
}

/** The envelope with bit `bit` of part `part` (1 = IV, 2 = tag, 3 = ciphertext) flipped. */
export function flipBit(envelope, part, bit) {
  const parts = envelope.split(':');
  const bytes = Buffer.from(parts[part], 'base64url');
  bytes[bit >> 3] ^= 1 << (bit & 7);
  parts[part] = bytes.toString('base64url');
  return parts.join(':');
}
