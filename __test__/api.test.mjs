// Batch, async, blind index, key index, envelope check and the IV-budget warning.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createHmac, hkdfSync } from 'node:crypto';
import { resolveKeyMaterial } from './fixtures/sveltycms-reference.mjs';
import { ale, SECRET, OLD_SECRET, CTX, throwsCode } from './helpers.mjs';

const ring = new ale.KeyRing([SECRET, OLD_SECRET]);

describe('batch', () => {
  test('encryptMany / decryptMany round-trip, each value with its own IV', () => {
    const values = ['', 'a', 'ünï', '😀'.repeat(100), 'x'.repeat(5000)];
    const envs = ring.encryptMany(values, ...CTX);
    assert.equal(envs.length, values.length);
    assert.equal(new Set(envs.map((e) => e.split(':')[1])).size, values.length);
    assert.deepEqual(ring.decryptMany(envs, ...CTX), values);
    assert.deepEqual(envs.map((e) => ring.decrypt(e, ...CTX)), values);
  });

  test('a failure names the index and keeps the code', () => {
    const envs = ring.encryptMany(['a', 'b'], ...CTX);
    const e = throwsCode(assert, () => ring.decryptMany([envs[0], 'garbage'], ...CTX), 'ALE_MALFORMED_ENVELOPE');
    assert.match(e.message, /values\[1\]/);
    throwsCode(assert, () => ring.decryptMany(envs, 'other', CTX[1], CTX[2]), 'ALE_AUTH_FAILED');
    throwsCode(assert, () => ring.encryptMany(['a', 5], ...CTX), 'ALE_INVALID_INPUT');
    throwsCode(assert, () => ring.encryptMany('not an array', ...CTX), 'ALE_INVALID_INPUT');
    assert.deepEqual(ring.encryptMany([], ...CTX), []);
  });
});

describe('async', () => {
  test('encryptAsync / decryptAsync round-trip a 2 MiB value and interoperate with sync', async () => {
    const big = 'ß'.repeat(1 << 20);
    const env = await ring.encryptAsync(big, ...CTX);
    assert.equal(ring.decrypt(env, ...CTX), big);
    assert.equal(await ring.decryptAsync(ring.encrypt('small', ...CTX), ...CTX), 'small');
  });

  test('rejections carry the code', async () => {
    const env = ring.encrypt('x', ...CTX);
    await assert.rejects(ring.decryptAsync(env, 'other', CTX[1], CTX[2]), { code: 'ALE_AUTH_FAILED' });
    await assert.rejects(ring.decryptAsync('v9:x', ...CTX), { code: 'ALE_UNSUPPORTED_VERSION' });
    assert.throws(() => ring.encryptAsync('x', 'a:b', 'c', 'f'), { code: 'ALE_INVALID_CONTEXT' });
    assert.throws(() => ring.encryptAsync(42, ...CTX), { code: 'ALE_INVALID_INPUT' });
  });
});

describe('blind index', () => {
  test('equals HMAC-SHA-256 under the HKDF "sveltycms-blind-index" key over tenant:collection:field:value', () => {
    // the blind-index key is derived from the secret's AES key, never the AES key itself
    const aesKey = resolveKeyMaterial(SECRET).key;
    const key = Buffer.from(hkdfSync('sha256', aesKey, Buffer.alloc(0), 'sveltycms-blind-index', 32));
    const expected = createHmac('sha256', key).update(`${CTX.join(':')}:alice@example.com`).digest('base64url');
    assert.equal(ring.blindIndex('alice@example.com', ...CTX), expected);
    assert.equal(expected.length, 43);
  });

  test('deterministic, context-bound, and one per key for rotation', () => {
    const a = ring.blindIndex('v', ...CTX);
    assert.equal(ring.blindIndex('v', ...CTX), a);
    assert.notEqual(ring.blindIndex('w', ...CTX), a);
    assert.notEqual(ring.blindIndex('v', 'tenant-b', CTX[1], CTX[2]), a);
    const all = ring.blindIndexes('v', ...CTX);
    assert.equal(all.length, 2);
    assert.equal(all[0], a);
    assert.equal(all[1], new ale.KeyRing([OLD_SECRET]).blindIndex('v', ...CTX));
  });
});

describe('key index and envelope check', () => {
  test('keyIndex says which key opens a value', () => {
    assert.equal(ring.keyIndex(ring.encrypt('x', ...CTX), ...CTX), 0);
    assert.equal(ring.keyIndex(new ale.KeyRing([OLD_SECRET]).encrypt('x', ...CTX), ...CTX), 1);
    // a value under the primary passphrase's SHA-256 legacy key: past the secrets, "needs rotation"
    const legacyKey = createHash('sha256').update(SECRET).digest();
    const legacy = new ale.KeyRing([legacyKey]).encrypt('x', ...CTX);
    const index = ring.keyIndex(legacy, ...CTX);
    assert.ok(index >= ring.size, `index ${index}`);
    assert.deepEqual(
      { secret: ring.stats()[index].secret, kind: ring.stats()[index].kind, legacy: ring.stats()[index].legacy },
      { secret: 0, kind: 'legacy-sha256', legacy: true },
    );
    const strict = new ale.KeyRing([SECRET, OLD_SECRET], { legacyFallbacks: false });
    throwsCode(assert, () => strict.keyIndex(legacy, ...CTX), 'ALE_AUTH_FAILED');
    throwsCode(assert, () => ring.keyIndex(new ale.KeyRing(['z'.repeat(32)]).encrypt('x', ...CTX), ...CTX), 'ALE_AUTH_FAILED');
  });

  test('isEnvelope checks the format only', () => {
    assert.equal(ale.isEnvelope(ring.encrypt('x', ...CTX)), true);
    for (const v of ['plain', 'v1:abc', 'v2:AAAAAAAAAAAAAAAA:AAAAAAAAAAAAAAAAAAAAAA:', '', 5, null, undefined]) {
      assert.equal(ale.isEnvelope(v), false, String(v));
    }
  });
});

/** Waits until `done()` (the warning is emitted from the event loop after the call), then 20 ms more for any extra one; at most 5 s. */
async function until(done) {
  for (const end = Date.now() + 5000; !done() && Date.now() < end; ) await new Promise((resolve) => setTimeout(resolve, 5));
  await new Promise((resolve) => setTimeout(resolve, 20));
}

describe('IV budget', () => {
  test('stats count encryptions and a process warning fires at the threshold', async () => {
    const r = new ale.KeyRing([SECRET]);
    r.setIvBudgetWarning(3);
    const seen = [];
    const onWarning = (w) => w.code === 'ALE_IV_BUDGET' && seen.push(w);
    process.on('warning', onWarning);
    try {
      r.encryptMany(['a', 'b', 'c', 'd'], ...CTX);
      await until(() => seen.length >= 1);
    } finally {
      process.off('warning', onWarning);
    }
    assert.equal(seen.length, 1);
    assert.match(seen[0].message, /encrypted 3 values/);
    assert.deepEqual(r.stats()[0], { index: 0, secret: 0, kind: 'passphrase', legacy: false, encryptions: 4, decryptions: 0 });
    for (const bad of [0, -1, 2.5, NaN, Infinity, '3']) throwsCode(assert, () => r.setIvBudgetWarning(bad), 'ALE_INVALID_INPUT');
  });

  test('the warning fires once when a count passes the threshold, from batch and async calls too', async () => {
    const seen = [];
    const onWarning = (w) => w.code === 'ALE_IV_BUDGET' && seen.push(w);
    process.on('warning', onWarning);
    try {
      const batch = new ale.KeyRing([SECRET]);
      batch.encryptMany(['a', 'b'], ...CTX);
      batch.setIvBudgetWarning(1); // already past it: the next encryption warns
      batch.encryptMany(['c', 'd'], ...CTX);
      const later = new ale.KeyRing([SECRET]);
      later.setIvBudgetWarning(2);
      await later.encryptAsync('a', ...CTX);
      await later.encryptAsync('b', ...CTX);
      await later.encryptAsync('c', ...CTX);
      await until(() => seen.length >= 2);
    } finally {
      process.off('warning', onWarning);
    }
    assert.deepEqual(seen.map((w) => w.message.match(/encrypted (\d+) values/)[1]), ['3', '2']);
  });
});

describe('secrets', () => {
  test('an undefined secret (an unset variable) says so, by position, as initKeyRing() says ENCRYPTION_KEY is not set', () => {
    for (const secrets of [[undefined], [SECRET, undefined]]) {
      const e = throwsCode(assert, () => new ale.KeyRing(secrets), 'ALE_INVALID_KEY');
      assert.match(e.message, /secret #\d.*is undefined: is the environment variable it comes from set\?/);
    }
    const e = throwsCode(assert, () => new ale.KeyRing([42]), 'ALE_INVALID_KEY');
    assert.match(e.message, /must be a string or a 32-byte Uint8Array/);
  });
});
