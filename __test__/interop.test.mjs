// Byte-for-byte interoperability with an independent implementation on
// node:crypto (bench/reference.mjs), in both directions, with the default
// 16-byte IVs and with 12-byte ones.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { ale, SECRET, OLD_SECRET, CTX, throwsCode } from './helpers.mjs';
import { NodeCryptoAle } from '../bench/reference.mjs';


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

for (const ivLength of [16, 12]) describe(`interop with node:crypto, ${ivLength}-byte IVs`, () => {
  const addon = new ale.KeyRing([SECRET], { ivLength });
  const reference = new NodeCryptoAle([SECRET], { ivLength });
  const ivChars = ivLength === 16 ? 22 : 16;

  test('addon → node:crypto', () => {
    for (const s of samples) {
      const env = addon.encrypt(s, ...CTX);
      assert.equal(env.split(':')[1].length, ivChars);
      assert.equal(reference.decrypt(env, ...CTX), s);
    }
  });

  test('node:crypto → addon', () => {
    for (const s of samples) assert.equal(addon.decrypt(reference.encrypt(s, ...CTX), ...CTX), s);
  });

  test('node:crypto output under a moved context fails in the addon', () => {
    const env = reference.encrypt('bound', ...CTX);
    throwsCode(assert, () => addon.decrypt(env, 'tenant-b', CTX[1], CTX[2]), 'ALE_AUTH_FAILED');
  });

  test('rotation agrees: node:crypto under the old key, addon ring [new, old]', () => {
    const env = new NodeCryptoAle([OLD_SECRET], { ivLength }).encrypt('old data', ...CTX);
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
