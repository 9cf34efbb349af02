// Shared by the JS tests; runs unchanged on Node 24 and Bun.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';

const require = createRequire(import.meta.url);
// The package entry: the native addon, or the node:crypto fallback when
// ALE_BACKEND=js (or no binary loads), so every suite runs on either backend.
export const ale = require('../main.cjs');

export const SECRET = 'test-secret-0123456789-abcdefghijklmnop';
export const OLD_SECRET = 'older-secret-0123456789-abcdefghijklmnop';
export const CTX = ['tenant-a', 'users', 'email'];
export const runtime = process.versions.bun ? `bun ${process.versions.bun}` : `node ${process.version}`;

/** The environment variables the package and the SvelteKit example read secrets from. */
const SECRET_VARIABLES = ['ENCRYPTION_KEY', 'SECRET_ENCRYPTION_KEY', 'ENCRYPTION_KEY_PREVIOUS', 'ALE_KEK'];

/** A copy of `env` without them: a process started with it has no key to read, as under `vite build`. */
export function withoutSecrets(env = process.env) {
  const copy = { ...env };
  for (const name of Object.keys(copy)) if (SECRET_VARIABLES.includes(name) || /^ENCRYPTION_KEY_PREVIOUS_\d+$/.test(name)) delete copy[name];
  return copy;
}

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

/**
 * Search tokens (a Buffer, 8 bytes each, sorted) as the words a search
 * index column stores on SQLite and MySQL, written here independently of
 * ts/shared/search-words.ts and the addon's words.rs: each token's first 30
 * bits in base 32 (JavaScript's digits 0-9, a-v), six digits, a word equal
 * to the one before left out.
 */
export function searchWordsOf(tokens) {
  const words = [];
  for (let at = 0; at < tokens.length; at += 8) {
    const word = (tokens.readBigUInt64BE(at) >> 34n).toString(32).padStart(6, '0');
    if (words.at(-1) !== word) words.push(word);
  }
  return words.join(' ');
}

/**
 * A seeded generator (mulberry32) for randomized tests: the seed is
 * ALE_SEED or a random one, printed under `name`, so that a failure can be
 * replayed with ALE_SEED=<the seed>.
 */
export function seeded(name) {
  const seed = Number(process.env.ALE_SEED ?? randomBytes(4).readUInt32LE(0));
  console.log(`${name}: ALE_SEED=${seed}`);
  let state = seed >>> 0;
  return function rand() {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/**
 * Asserts that `get()` resolves to `expected`; with `late` (an index that
 * shows a committed change a moment late: InnoDB FULLTEXT), asking again
 * for up to a second first. Resolves to how many times it asked again.
 */
export async function eventually(get, expected, message, late) {
  let got = await get();
  let again = 0;
  for (const deadline = Date.now() + 1_000; late && !isDeepStrictEqual(got, expected) && Date.now() < deadline; again++) {
    await new Promise((r) => setTimeout(r, 50));
    got = await get();
  }
  assert.deepEqual(got, expected, message);
  return again;
}

/** The JSON that `script` (under scripts/) writes, run into a scratch folder: what a committed vectors file must equal. */
export function generatedJson(script) {
  const dir = mkdtempSync(join(tmpdir(), 'ale-generated-'));
  try {
    const out = join(dir, 'out.json');
    execFileSync(process.execPath, [fileURLToPath(new URL(`../scripts/${script}`, import.meta.url)), out], { stdio: 'ignore' });
    return JSON.parse(readFileSync(out, 'utf8'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Each token of `tokens` (8 bytes each) as 16 hex digits. */
export const hexOf = (tokens) => tokens.toString('hex').match(/.{16}/g) ?? [];
