// Byte-for-byte interoperability with an independent implementation on
// node:crypto (bench/reference.mjs), in both directions.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { ale, SECRET, OLD_SECRET, CTX, throwsCode } from './helpers.mjs';
import { NodeCryptoAle } from '../bench/reference.mjs';

const addon = new ale.KeyRing([SECRET]);
const reference = new NodeCryptoAle([SECRET]);

const samples = [
  '',
  'a',
  'alice@example.com',
  'Grüße, 世界 👋',
  'x'.repeat(4096),
  randomBytes(3000).toString('base64'),
  'ünïcødé '.repeat(600),
  '\u0000'.repeat(33),
];

describe('interop with node:crypto', () => {
  test('addon → node:crypto', () => {
    for (const s of samples) assert.equal(reference.decrypt(addon.encrypt(s, ...CTX), ...CTX), s);
  });

  test('node:crypto → addon', () => {
    for (const s of samples) assert.equal(addon.decrypt(reference.encrypt(s, ...CTX), ...CTX), s);
  });

  test('node:crypto output under a moved context fails in the addon', () => {
    const env = reference.encrypt('bound', ...CTX);
    throwsCode(assert, () => addon.decrypt(env, 'tenant-b', CTX[1], CTX[2]), 'ALE_AUTH_FAILED');
  });

  test('rotation agrees: node:crypto under the old key, addon ring [new, old]', () => {
    const env = new NodeCryptoAle([OLD_SECRET]).encrypt('old data', ...CTX);
    assert.equal(new ale.KeyRing([SECRET, OLD_SECRET]).decrypt(env, ...CTX), 'old data');
  });

  test('random lengths 0..600, both directions', () => {
    for (let n = 0; n <= 600; n += 7) {
      const s = randomBytes(n).toString('latin1');
      assert.equal(reference.decrypt(addon.encrypt(s, ...CTX), ...CTX), s);
      assert.equal(addon.decrypt(reference.encrypt(s, ...CTX), ...CTX), s);
    }
  });
});
