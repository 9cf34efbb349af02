// Differential test of the two backends, loaded side by side in one process:
// the native addon (index.js) and the node:crypto fallback (ts/fallback, as
// built). Random values, contexts and keys of every kind go through both, in
// both directions, as text and as bytes; malformed envelopes, randomly edited
// envelopes and hostile arguments must give the same code from both.
// Reproduce a run with ALE_SEED=<the seed it prints>.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { resolveKeyMaterial } from './fixtures/sveltycms-reference.mjs';
import { eventually, SECRET, OLD_SECRET, seeded } from './helpers.mjs';

const require = createRequire(import.meta.url);
const js = require('../dist/cjs/fallback/index.js');
let native = null;
try {
  native = require('../index.js');
} catch (e) {
  // The comparison needs both; only a machine without this platform's binary gets here.
  if (process.env.CI === 'true') throw e;
  console.error(`\n!!! SKIPPING the differential test: the native addon does not load here (${e.message})\n`);
}
const backends = native ? { native, js } : null;
const skip = native ? false : 'the native addon does not load on this platform';

const rand = seeded('backends.test');
const int = (n) => Math.floor(rand() * n);
const pick = (list) => list[int(list.length)];
const bytes = (n) => Buffer.from(Array.from({ length: n }, () => int(256)));

/** One random character: ASCII, Latin-1, the rest of the BMP (no lone surrogate), astral, NUL, U+FFFD. */
function char(colon = true) {
  for (;;) {
    const kind = int(7);
    let c;
    if (kind < 3) c = String.fromCharCode(0x20 + int(0x5f));
    else if (kind === 3) c = String.fromCharCode(0xa0 + int(0x60));
    else if (kind === 4) {
      const u = 0x100 + int(0xfeff - 0x100);
      if (u >= 0xd800 && u <= 0xdfff) continue;
      c = String.fromCharCode(u);
    } else if (kind === 5) c = String.fromCodePoint(0x10000 + int(0xfffff));
    else c = pick(['\u0000', '\uFFFD', '\n', ':']);
    if (colon || c !== ':') return c;
  }
}
const text = (n, colon = true) => Array.from({ length: n }, () => char(colon)).join('');
/** A context part: 1–12 characters, never ':'. */
const part = () => text(1 + int(12), false);
const context = () => [part(), part(), part()];

/** A random value: often short, sometimes empty, sometimes 70 KB. */
function value() {
  const r = int(10);
  if (r === 0) return '';
  if (r === 1) return text(70_000 / 2); // about 70 KB of UTF-8 and more
  if (r === 2) return 'x'.repeat(70 * 1024);
  return text(int(300));
}

// A secret of every kind docs/format.md ("Keys") lists, drawn at random.
const secretKinds = {
  hex: () => {
    const hex = bytes(32).toString('hex');
    return int(2) ? hex : hex.toUpperCase();
  },
  base64: () => bytes(32 + int(17)).toString('base64'), // 44 to 64 characters
  base64url: () => {
    for (;;) {
      const s = bytes(32 + int(17)).toString('base64url');
      if (/[-_]/.test(s)) return s;
    }
  },
  passphrase: () => text(32 + int(40)),
  // 44 or more characters of base64 with spaces: a passphrase with a lenient-base64 legacy key
  'base64 with spaces': () => bytes(33 + int(12)).toString('base64').replace(/=/g, '').replace(/(.{4})/g, '$1 '),
  bytes: () => bytes(32),
  'bytes (a plain Uint8Array)': () => new Uint8Array(bytes(32)),
};

/** `fn()`'s result, or its error's code: what both backends must agree on. */
function outcome(fn) {
  try {
    const result = fn();
    return { ok: Buffer.isBuffer(result) ? `<${result.toString('hex')}>` : result };
  } catch (e) {
    return { code: e?.code ?? `no code: ${e?.message}` };
  }
}
async function asyncOutcome(fn) {
  let promise;
  try {
    promise = fn();
  } catch (e) {
    return { thrown: e?.code ?? `no code: ${e?.message}` };
  }
  try {
    return { ok: await promise };
  } catch (e) {
    return { rejected: e?.code ?? `no code: ${e?.message}` };
  }
}
/** What the two backends give for `fn(backend)`; both must give the same. */
function same(fn, what) {
  const results = Object.fromEntries(Object.entries(backends).map(([name, b]) => [name, outcome(() => fn(b))]));
  assert.deepEqual(results.js, results.native, `${what}: native ${JSON.stringify(results.native).slice(0, 200)}, js ${JSON.stringify(results.js).slice(0, 200)}`);
  return results.native;
}

describe('the native addon and the node:crypto fallback', { skip }, () => {
  test('every key kind resolves alike: same kinds, sizes and blind indexes; each reads what the other writes, text and binary, both ways', async () => {
    for (const [kind, make] of Object.entries(secretKinds)) {
      for (let round = 0; round < 6; round++) {
        const secret = make();
        const previous = secretKinds[pick(Object.keys(secretKinds))]();
        for (const ivLength of [16, 12]) {
          const rings = { native: new native.KeyRing([secret, previous], { ivLength }), js: new js.KeyRing([secret, previous], { ivLength }) };
          assert.deepEqual(rings.js.stats(), rings.native.stats(), `${kind}: the keys of [secret, previous]`);
          assert.equal(rings.js.size, 2);
          assert.equal(rings.js.ivLength, ivLength);
          // under the previous key alone, then read by the rotated ring: key index 1 on both
          const older = { native: new native.KeyRing([previous]), js: new js.KeyRing([previous]) };
          for (let i = 0; i < 4; i++) {
            const v = value();
            const ctx = context();
            assert.deepEqual(rings.js.blindIndexes(v, ...ctx), rings.native.blindIndexes(v, ...ctx), `${kind}: blind indexes`);
            for (const [from, to] of [['native', 'js'], ['js', 'native']]) {
              const envelope = rings[from].encrypt(v, ...ctx);
              assert.equal(envelope.split(':')[1].length, ivLength === 16 ? 22 : 16);
              assert.equal(rings[to].decrypt(envelope, ...ctx), v, `${kind}: ${from} → ${to}`);
              assert.equal(rings[to].keyIndex(envelope, ...ctx), 0);
              const binary = rings[from].encryptBinary(v, ...ctx);
              assert.equal(binary.length, Buffer.byteLength(v) + 2 + ivLength + 16);
              assert.equal(rings[to].decryptBinary(binary, ...ctx), v, `${kind}: ${from} → ${to}, binary`);
              assert.deepEqual(backends[to].envelopeToBytes(envelope), backends[from].envelopeToBytes(envelope));
              assert.equal(backends[to].envelopeFromBytes(binary), backends[from].envelopeFromBytes(binary));
              const old = older[from].encrypt(v, ...ctx);
              assert.equal(rings[to].decrypt(old, ...ctx), v);
              assert.equal(rings[to].keyIndex(old, ...ctx), 1, `${kind}: a previous key's value`);
              const moved = [...ctx];
              moved[int(3)] += 'x';
              same((b) => (b === native ? rings.native : rings.js).decrypt(envelope, ...moved), `${kind}: moved context`);
              const viaAsync = await rings[from].encryptAsync(v, ...ctx);
              assert.equal(await rings[to].decryptAsync(viaAsync, ...ctx), v, `${kind}: ${from} → ${to}, async`);
            }
          }
          assert.deepEqual(rings.js.stats(), rings.native.stats(), `${kind}: the same operations count the same`);
        }
      }
    }
  });

  test("a passphrase's legacy keys: SHA-256 and lenient base64, in that order, decrypt-only, reported past size", () => {
    for (const kind of ['passphrase', 'base64 with spaces']) {
      for (let round = 0; round < 8; round++) {
        const passphrase = secretKinds[kind]();
        const { fallbacks } = resolveKeyMaterial(passphrase);
        const ctx = context();
        for (const legacyKey of fallbacks) {
          const v = value();
          for (const [from, to] of [['native', 'js'], ['js', 'native']]) {
            const written = new backends[from].KeyRing([legacyKey]).encrypt(v, ...ctx);
            const reader = new backends[to].KeyRing([SECRET, passphrase]);
            assert.equal(reader.decrypt(written, ...ctx), v, `${kind}: ${from} → ${to}`);
            const index = reader.keyIndex(written, ...ctx);
            assert.ok(index >= reader.size, `legacy key index ${index}`);
            assert.equal(reader.stats()[index].legacy, true);
          }
          same((b) => new b.KeyRing([SECRET, passphrase], { legacyFallbacks: false }).decrypt(new b.KeyRing([legacyKey]).encrypt('x', ...ctx), ...ctx), 'legacyFallbacks: false');
        }
        same((b) => new b.KeyRing([passphrase]).stats(), `${kind}: legacy keys listed`);
      }
    }
  });

  test('the process-wide rings agree: text, binary and blind index across backends', () => {
    try {
      for (const b of [native, js]) b.initKeyRing([SECRET, OLD_SECRET], { ivLength: 12 });
      for (let i = 0; i < 20; i++) {
        const v = value();
        const ctx = context();
        assert.equal(js.decrypt(native.encrypt(v, ...ctx), ...ctx), v);
        assert.equal(native.decrypt(js.encrypt(v, ...ctx), ...ctx), v);
        assert.equal(js.decryptBinary(native.encryptBinary(v, ...ctx), ...ctx), v);
        assert.equal(native.decryptBinary(js.encryptBinary(v, ...ctx), ...ctx), v);
        assert.equal(js.blindIndex(v, ...ctx), native.blindIndex(v, ...ctx));
        const all = native.blindIndexes(v, ...ctx);
        assert.deepEqual(js.blindIndexes(v, ...ctx), all);
        assert.deepEqual(all, new native.KeyRing([SECRET, OLD_SECRET]).blindIndexes(v, ...ctx), 'as a ring of the same secrets gives them');
      }
      same((b) => b.isKeyRingInitialized(), 'isKeyRingInitialized');
      same((b) => b.blindIndexes('v', '', 'c', 'f'), 'blindIndexes with an empty tenant');
    } finally {
      for (const b of [native, js]) b.initKeyRing([SECRET]); // what other test files expect
    }
  });

  test('KeyRing is a class on both: a call without new is a TypeError and wraps nothing; subclasses, instanceof and destructured factories behave alike', () => {
    const CTX = ['t', 'c', 'f'];
    native.initKeyRing([OLD_SECRET]);
    js.initKeyRing([OLD_SECRET]);
    for (const [name, b] of Object.entries(backends)) {
      const { KeyRing } = b;
      assert.throws(() => KeyRing([SECRET]), TypeError, name);
      assert.throws(() => b.KeyRing([SECRET]), TypeError, `${name}, as a method of the exports`);
      assert.equal(Object.prototype.toString.call(b.encrypt), '[object Function]');
      // the exports were not turned into a ring: the process-wide functions still seal under the process-wide key
      assert.equal(new KeyRing([OLD_SECRET]).decrypt(b.encrypt('x', ...CTX), ...CTX), 'x', name);
      assert.throws(() => new KeyRing([SECRET]).decrypt(b.encrypt('x', ...CTX), ...CTX), { code: 'ALE_AUTH_FAILED' });
      const ring = new KeyRing([SECRET]);
      assert.ok(ring instanceof KeyRing && ring.constructor === KeyRing, name);
      const { fromEnv, forTenants } = KeyRing;
      const fromVars = fromEnv({ ENCRYPTION_KEY: SECRET });
      assert.ok(fromVars instanceof KeyRing && forTenants() instanceof KeyRing, name);
      assert.equal(fromVars.decrypt(ring.encrypt('y', ...CTX), ...CTX), 'y');
      class Sub extends KeyRing {
        hello() {
          return this.decrypt(this.encrypt('z', ...CTX), ...CTX);
        }
      }
      const sub = new Sub([SECRET]);
      assert.ok(sub instanceof Sub && sub instanceof KeyRing, name);
      assert.equal(sub.hello(), 'z');
      assert.equal(Sub.fromEnv({ ENCRYPTION_KEY: SECRET }).constructor, KeyRing, `${name}: the factories build a KeyRing`);
      assert.deepEqual([KeyRing.name, KeyRing.length], ['KeyRing', 2], name);
    }
    // The statics and the prototype have a class's attributes on both (a test may stub a factory).
    const attributes = (b, key) => {
      const { writable, enumerable, configurable } = Object.getOwnPropertyDescriptor(b.KeyRing, key);
      return { writable, enumerable, configurable };
    };
    for (const key of ['fromEnv', 'forTenants', 'prototype']) assert.deepEqual(attributes(native, key), attributes(js, key), key);
  });

  test("encryptMany and decryptMany read an array whose getters call the addon again: the same results on both, and no ALE_INTERNAL", () => {
    const CTX = ['t', 'c', 'f'];
    for (const [name, b] of Object.entries(backends)) {
      const ring = new b.KeyRing([SECRET]);
      const values = ['x', 'y'];
      Object.defineProperty(values, 1, { get: () => ring.decrypt(ring.encrypt('y', ...CTX), ...CTX) });
      const sealed = ring.encryptMany(values, ...CTX);
      const opened = [sealed[0]];
      Object.defineProperty(opened, 1, { get: () => ring.encryptMany(['z'], ...CTX)[0] });
      assert.deepEqual(ring.decryptMany(sealed, ...CTX), ['x', 'y'], name);
      assert.deepEqual(ring.decryptMany(opened, ...CTX), ['x', 'z'], name);
    }
  });

  test("what an element's getter throws goes on unchanged from encryptMany and decryptMany on both, a string or a frozen Error", () => {
    const CTX = ['t', 'c', 'f'];
    for (const thrown of ['plain string thrown', Object.freeze(new Error('frozen'))]) {
      for (const [name, b] of Object.entries(backends)) {
        const ring = new b.KeyRing([SECRET]);
        const values = ['x', 'y'];
        Object.defineProperty(values, 1, { get: () => { throw thrown; } });
        for (const many of ['encryptMany', 'decryptMany']) assert.throws(() => ring[many](values, ...CTX), (e) => e === thrown, `${name} ${many}`);
      }
    }
    // the length is read once: a getter that shortens the array leaves a hole where an element was
    const shrinking = () => {
      const values = ['x', 'y'];
      Object.defineProperty(values, 0, { get: () => ((values.length = 1), 'x'), configurable: true });
      return values;
    };
    assert.deepEqual(same((b) => new b.KeyRing([SECRET]).encryptMany(shrinking(), ...CTX), 'a getter that shortens the array'), { code: 'ALE_INVALID_INPUT' });
  });

  test('search and range tokens of a context over 1 KB (past what hkdfSync takes as info) are the same bytes in both backends', () => {
    // info is 'sveltycms-search-v1\0' (20 bytes) and tenant:c:f: tenants of 1,000 and 1,001 characters meet the limit and pass it
    for (const tenant of ['t'.repeat(1000), 't'.repeat(1001), 't'.repeat(5000), 'é'.repeat(600)]) {
      const ctx = [tenant, 'c', 'f'];
      // one node of the range tree (ts/drizzle/range/tree.ts): its depth, then 8 bytes of its code
      const NODE = Buffer.from('04c000000000000000', 'hex');
      const results = [
        same((b) => new b.KeyRing([SECRET]).searchTokens('Jürgen Müller', ...ctx), `search tokens, tenant of ${tenant.length}`),
        same((b) => new b.KeyRing([SECRET]).searchQuery('müll', 'contains', ...ctx), `search query, tenant of ${tenant.length}`),
        same((b) => new b.KeyRing([SECRET]).rangeTokens(NODE, ...ctx), `range tokens, tenant of ${tenant.length}`),
      ];
      assert.ok(results.every((r) => r.ok), JSON.stringify(results));
    }
  });

  test("a long version number gets one code, whatever the addon's thread buffers hold: one decrypt of a long envelope before made the addon decide on a longer head", () => {
    const odd = `v${'9'.repeat(2000)}:x`;
    const CTX = ['t', 'c', 'f'];
    const ring = new native.KeyRing([SECRET]);
    const before = outcome(() => ring.decrypt(odd, ...CTX));
    ring.decrypt(ring.encrypt('y'.repeat(3000), ...CTX), ...CTX); // grows this thread's buffer past the value's digits
    assert.deepEqual([before, outcome(() => ring.decrypt(odd, ...CTX))], [{ code: 'ALE_MALFORMED_ENVELOPE' }, { code: 'ALE_MALFORMED_ENVELOPE' }]);
    assert.deepEqual(same((b) => new b.KeyRing([SECRET]).decrypt(odd, ...CTX), 'the fallback'), { code: 'ALE_MALFORMED_ENVELOPE' });
  });

  test('a Proxy of an array is no array to either (napi_is_array): secrets, keyIds, encryptMany, decryptMany', () => {
    const P = (a) => new Proxy(a, {});
    const CTX = ['t', 'c', 'f'];
    assert.deepEqual(same((b) => new b.KeyRing(P([SECRET])).size, 'secrets'), { code: 'ALE_INVALID_KEY' });
    assert.deepEqual(same((b) => new b.KeyRing([Buffer.alloc(32, 7)], { keyIds: P(['AAAAAAAAAAAAAAAAAAAAAA']) }).size, 'keyIds'), { code: 'ALE_INVALID_INPUT' });
    assert.deepEqual(same((b) => new b.KeyRing([SECRET]).encryptMany(P(['x']), ...CTX), 'encryptMany'), { code: 'ALE_INVALID_INPUT' });
    assert.deepEqual(same((b) => new b.KeyRing([SECRET]).decryptMany(P([]), ...CTX), 'decryptMany'), { code: 'ALE_INVALID_INPUT' });
    const revoked = Proxy.revocable([SECRET], {});
    revoked.revoke();
    assert.deepEqual(same((b) => new b.KeyRing(revoked.proxy).size, 'a revoked Proxy'), { code: 'ALE_INVALID_KEY' });
    // an environment whose ownKeys trap throws: the trap's own error, from both
    const env = new Proxy({ ENCRYPTION_KEY: SECRET }, { ownKeys: () => { throw new Error('no keys here'); } });
    assert.deepEqual(same((b) => b.KeyRing.fromEnv(env).size, 'ownKeys throws'), { code: 'no code: no keys here' });
  });

  // A sparse array's length says nothing of its elements: neither backend may read hole by hole, or size a buffer by it.
  test('a sparse array of length 2^32 - 1 fails at its first hole on both: encryptMany, decryptMany, keyIds', { timeout: 60_000 }, () => {
    const sparse = (...head) => Object.assign([...head], { length: 2 ** 32 - 1 });
    const CTX = ['t', 'c', 'f'];
    const sealed = new js.KeyRing([SECRET]).encrypt('x', ...CTX);
    for (const [what, head] of [['a hole first', []], ['a hole after a value', ['x']]]) {
      assert.deepEqual(same((b) => new b.KeyRing([SECRET]).encryptMany(sparse(...head), ...CTX), `encryptMany, ${what}`), { code: 'ALE_INVALID_INPUT' });
      assert.deepEqual(same((b) => new b.KeyRing([SECRET]).decryptMany(sparse(...head.map(() => sealed)), ...CTX), `decryptMany, ${what}`), { code: 'ALE_INVALID_INPUT' });
    }
    for (const b of Object.values(backends)) assert.throws(() => new b.KeyRing([SECRET]).encryptMany(sparse('x'), ...CTX), /values\[1\]/);
    // a bad context is reported before a bad element, by both
    assert.deepEqual(same((b) => new b.KeyRing([SECRET]).encryptMany(sparse(), 't', '', 'f'), 'encryptMany, a bad context'), { code: 'ALE_INVALID_CONTEXT' });
    assert.deepEqual(same((b) => new b.KeyRing([Buffer.alloc(32, 7)], { keyIds: sparse() }), 'keyIds'), { code: 'ALE_INVALID_INPUT' });
  });

  test('fromEnv reads the same variables the same way', () => {
    const hex = randomBytes(32).toString('hex');
    const b64 = randomBytes(32).toString('base64');
    const envs = [
      { ENCRYPTION_KEY: SECRET },
      { ENCRYPTION_KEY: '', SECRET_ENCRYPTION_KEY: hex },
      { SECRET_ENCRYPTION_KEY: b64 },
      { ENCRYPTION_KEY: SECRET, SECRET_ENCRYPTION_KEY: 42 },
      { ENCRYPTION_KEY: hex, ENCRYPTION_KEY_PREVIOUS: ` ${OLD_SECRET} ,\t${b64}\n, ,,` },
      { ENCRYPTION_KEY: ` ${b64}` }, // not trimmed: a passphrase
      { ENCRYPTION_KEY: SECRET, ENCRYPTION_KEY_PREVIOUS: `\v${OLD_SECRET}` }, // \v is not trimmed
      { ENCRYPTION_KEY: SECRET, ENCRYPTION_KEY_PREVIOUS: `\u00a0${'x'.repeat(31)}` }, // nor is U+00A0
      { ENCRYPTION_KEY: SECRET, ENCRYPTION_KEY_PREVIOUS: 'short' },
      { ENCRYPTION_KEY: SECRET, ENCRYPTION_KEY_PREVIOUS: 'a passphrase whose halves are each long, enough to be passphrases of their own' },
      { ENCRYPTION_KEY: SECRET, ENCRYPTION_KEY_PREVIOUS: `${OLD_SECRET}\t` },
      { ENCRYPTION_KEY: SECRET, ENCRYPTION_KEY_PREVIOUS: ` ${hex} , ${b64} ` },
      { ENCRYPTION_KEY: SECRET, ENCRYPTION_KEY_PREVIOUS: `${hex},${OLD_SECRET}`, ENCRYPTION_KEY_PREVIOUS_1: ` ${OLD_SECRET}`, ENCRYPTION_KEY_PREVIOUS_2: b64, ENCRYPTION_KEY_PREVIOUS_4: hex },
      { ENCRYPTION_KEY: SECRET, ENCRYPTION_KEY_PREVIOUS_1: '', ENCRYPTION_KEY_PREVIOUS_2: hex },
      { ENCRYPTION_KEY: SECRET, ENCRYPTION_KEY_PREVIOUS_10: OLD_SECRET, ENCRYPTION_KEY_PREVIOUS_9: hex, ENCRYPTION_KEY_PREVIOUS_09: b64, ENCRYPTION_KEY_PREVIOUS_0: b64 },
      { ENCRYPTION_KEY: SECRET, ENCRYPTION_KEY_PREVIOUS: `${b64}\n` },
      { ENCRYPTION_KEY: SECRET, ENCRYPTION_KEY_PREVIOUS: 'the first passphrase, chosen by the admin in 2024' },
      { ENCRYPTION_KEY: SECRET, ENCRYPTION_KEY_PREVIOUS_3: 42 },
      { ENCRYPTION_KEY: SECRET, ENCRYPTION_KEY_PREVIOUS_01: hex }, // refused: looks numbered, is not read
      { ENCRYPTION_KEY: SECRET, encryption_key_previous_1: hex },
      { ENCRYPTION_KEY: SECRET, ENCRYPTION_KEY_PREVIOUS_1234567890: hex },
      { ENCRYPTION_KEY: SECRET, ENCRYPTION_KEY_PREVIOUS_1x: hex }, // not numbered at all: another variable
      { ENCRYPTION_KEY: SECRET, ENCRYPTION_KEY_PREVIOUS_1: 'short' },
      { ENCRYPTION_KEY: SECRET, ENCRYPTION_KEY_PREVIOUS_1: 42 },
      { ENCRYPTION_KEY: SECRET, ENCRYPTION_KEY_PREVIOUS: 42 },
      { ENCRYPTION_KEY: SECRET, ENCRYPTION_KEY_PREVIOUS: null },
      { ENCRYPTION_KEY: 42 },
      { ENCRYPTION_KEY: null },
      { ENCRYPTION_KEY: `${SECRET}\uD800` },
      { ENCRYPTION_KEY: 'x'.repeat(31) },
      {},
      'not an object',
      42,
    ];
    for (const env of envs) same((b) => b.KeyRing.fromEnv(env).stats(), `fromEnv(${JSON.stringify(env)})`);
    // names that look numbered and are not read are refused, by both
    for (const name of ['ENCRYPTION_KEY_PREVIOUS_01', 'encryption_key_previous_1', 'ENCRYPTION_KEY_PREVIOUS_1234567890']) {
      assert.deepEqual(same((b) => b.KeyRing.fromEnv({ ENCRYPTION_KEY: SECRET, [name]: hex }).size, name), { code: 'ALE_INVALID_KEY' });
    }
    same((b) => b.KeyRing.fromEnv({ ENCRYPTION_KEY: SECRET }, { ivLength: 12 }).ivLength, 'fromEnv with options');
    same((b) => b.KeyRing.fromEnv({ ENCRYPTION_KEY: SECRET }, 'fast'), 'fromEnv with bad options');
  });

  describe('malformed envelopes get the same code from both', () => {
    const IV = 'AAECAwQFBgcICQoL';
    const IV16 = 'AAECAwQFBgcICQoLDA0ODw';
    const TAG = 'AAECAwQFBgcICQoLDA0ODw';
    // the cases of crates/core/src/envelope.rs's tests, and more
    const cases = [
      '', 'v', 'v:', '1:a:b:c', 'V1:x:y:z', 'va:x', 'v1', 'v1x:', ' v1:', 'plain text', 'v01:a:b:c', `\u01761:${IV}:${TAG}:`,
      'v0:x', 'v2:a:b:c', 'v10:', 'v99999999999999999999999:', `v${'9'.repeat(19)}:`, `v${'9'.repeat(20)}:`, `v${'9'.repeat(2000)}:x`, `v2:${IV}:${TAG}:aGk`,
      `v1:${IV}:${TAG}`, `v1:${IV}`, `v1:${IV}:${TAG}:AAAA:AAAA`, `v1:${IV}:${TAG}::`, `v1:${IV}:${TAG}:aGk:`,
      ...['', IV.slice(0, 15), `${IV}A`, IV.slice(0, 8), `${IV}${IV}`, IV16.slice(0, 21), `${IV16}A`, IV16.slice(0, 11), `${IV16}${IV16}`, 'AAECAwQFBgcICQoLDA0ODx', 'AAECAwQFBgcICQo+', 'AAECAwQFBgcI CQo', 'AAECAwQFBgcICQo=']
        .map((iv) => `v1:${iv}:${TAG}:`),
      ...['', TAG.slice(0, 21), `${TAG}A`, TAG.slice(0, 11), `${TAG}${TAG}`, 'AAECAwQFBgcICQoLDA0OD=', 'AAECAwQFBgcICQoLDA0ODx'].map((tag) => `v1:${IV}:${tag}:`),
      ...['aGk=', 'aGkhPw==', 'aGk+', 'aGk/', 'aG k', 'aGkhP w', 'aGk\n', 'aGkh\tPw', 'aGké', 'aG\u0100', 'aGkhPx', 'aGl', 'aGkhP', 'a', 'aGk\uD800']
        .map((ct) => `v1:${IV}:${TAG}:${ct}`),
      // well formed, but no key opens them
      `v1:${IV}:${TAG}:`, `v1:${IV16}:${TAG}:aGkhPw`, `v1:${IV}:${TAG}:aGk`,
    ];
    test(`${cases.length} hand-written cases: decrypt, keyIndex, decryptMany, isEnvelope, envelopeToBytes, decryptAsync`, async () => {
      const rings = { native: new native.KeyRing([SECRET]), js: new js.KeyRing([SECRET]) };
      for (const envelope of cases) {
        const label = JSON.stringify(envelope);
        const { code } = same((b) => rings[b === native ? 'native' : 'js'].decrypt(envelope, 't', 'c', 'f'), `decrypt(${label})`);
        assert.match(code, /^ALE_(MALFORMED_ENVELOPE|UNSUPPORTED_VERSION|AUTH_FAILED)$/, label);
        // and the same words: what is wrong with the value, as the user reads it
        const message = (ring) => { try { ring.decrypt(envelope, 't', 'c', 'f'); } catch (e) { return e.message; } };
        assert.equal(message(rings.js), message(rings.native), label);
        same((b) => rings[b === native ? 'native' : 'js'].keyIndex(envelope, 't', 'c', 'f'), `keyIndex(${label})`);
        same((b) => rings[b === native ? 'native' : 'js'].decryptMany([envelope], 't', 'c', 'f'), `decryptMany(${label})`);
        same((b) => b.isEnvelope(envelope), `isEnvelope(${label})`);
        same((b) => b.envelopeToBytes(envelope), `envelopeToBytes(${label})`);
        const [a, z] = [await asyncOutcome(() => rings.native.decryptAsync(envelope, 't', 'c', 'f')), await asyncOutcome(() => rings.js.decryptAsync(envelope, 't', 'c', 'f'))];
        assert.deepEqual(z, a, `decryptAsync(${label})`);
      }
    });

    test('randomly edited envelopes: the same code, or the same plaintext, from both', () => {
      const rings = { native: new native.KeyRing([SECRET, OLD_SECRET]), js: new js.KeyRing([SECRET, OLD_SECRET]) };
      const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_+/=: v01é\u0100\n';
      let opened = 0;
      for (let i = 0; i < 1500; i++) {
        const writer = rings[pick(['native', 'js'])];
        const ctx = context();
        let envelope = writer.encrypt(text(int(40)), ...ctx);
        for (let edits = 1 + int(3); edits > 0; edits--) {
          const at = int(envelope.length + 1);
          const c = pick([...alphabet]);
          const op = int(3);
          envelope = op === 0 ? envelope.slice(0, at) + c + envelope.slice(at + 1) : op === 1 ? envelope.slice(0, at) + c + envelope.slice(at) : envelope.slice(0, at) + envelope.slice(at + 1);
        }
        const r = same((b) => rings[b === native ? 'native' : 'js'].decrypt(envelope, ...ctx), `edited ${JSON.stringify(envelope)}`);
        if ('ok' in r) opened++;
        same((b) => b.isEnvelope(envelope), `isEnvelope(edited ${JSON.stringify(envelope)})`);
      }
      console.log(`1500 edited envelopes: ${opened} still opened (an edit that changed nothing), the rest refused alike`);
    });

    test('binary envelopes: malformed, other versions and edited bytes', () => {
      const rings = { native: new native.KeyRing([SECRET]), js: new js.KeyRing([SECRET]) };
      const good = rings.native.encryptBinary('binary', 't', 'c', 'f');
      const cases = [
        Buffer.alloc(0), Buffer.from([1]), Buffer.from([0]), Buffer.from([2]), Buffer.from([1, 16]), Buffer.from([1, 12]),
        good.subarray(0, 33), good.subarray(0, 34), Buffer.from('v1:AAECAwQFBgcICQoL:AAECAwQFBgcICQoLDA0ODw:'),
        ...[0, 1, 11, 13, 15, 17, 32, 255].map((n) => Buffer.concat([Buffer.from([1, n]), good.subarray(2)])),
        ...[0, 2, 0x76, 255].map((v) => Buffer.concat([Buffer.from([v]), good.subarray(1)])),
      ];
      for (let i = 0; i < 300; i++) {
        const edited = Buffer.from(rings[pick(['native', 'js'])].encryptBinary(text(int(20)), 't', 'c', 'f'));
        edited[int(edited.length)] ^= 1 << int(8);
        cases.push(int(4) ? edited : edited.subarray(0, int(edited.length)));
      }
      for (const bytes of cases) {
        const label = bytes.toString('hex').slice(0, 80);
        same((b) => rings[b === native ? 'native' : 'js'].decryptBinary(bytes, 't', 'c', 'f'), `decryptBinary(${label})`);
        same((b) => b.envelopeFromBytes(bytes), `envelopeFromBytes(${label})`);
      }
    });

    test('maxEnvelopeLength: the same refusals; an oversized value is refused before the promise exists', async () => {
      const writer = new native.KeyRing([SECRET]);
      const envelope = writer.encrypt('y'.repeat(3000), 't', 'c', 'f');
      for (const max of [envelope.length, envelope.length - 1, 10, 1]) {
        const rings = { native: new native.KeyRing([SECRET], { maxEnvelopeLength: max }), js: new js.KeyRing([SECRET], { maxEnvelopeLength: max }) };
        for (const value of [envelope, `v2:${'A'.repeat(5000)}`, 'not an envelope '.repeat(500), `v1:${'A'.repeat(5000)}`, `v9:${'A'.repeat(5000)}`, `v01:${'A'.repeat(50)}`]) {
          same((b) => rings[b === native ? 'native' : 'js'].decrypt(value, 't', 'c', 'f'), `max ${max}: decrypt`);
          same((b) => rings[b === native ? 'native' : 'js'].keyIndex(value, 't', 'c', 'f'), `max ${max}: keyIndex`);
          // thrown while the arguments are read, or rejected: the same split on both
          const [a, z] = [await asyncOutcome(() => rings.native.decryptAsync(value, 't', 'c', 'f')), await asyncOutcome(() => rings.js.decryptAsync(value, 't', 'c', 'f'))];
          assert.deepEqual(z, a, `max ${max}: decryptAsync(${value.slice(0, 8)}…)`);
        }
      }
      // Length is counted in characters: 63 of them, 123 bytes in UTF-8 (Bun reads envelopes as UTF-8)
      const rings = { native: new native.KeyRing([SECRET], { maxEnvelopeLength: 100 }), js: new js.KeyRing([SECRET], { maxEnvelopeLength: 100 }) };
      for (const value of [`v1:${'é'.repeat(60)}`, `v1:${'A'.repeat(40)}é${'A'.repeat(40)}`]) {
        for (const m of ['decrypt', 'keyIndex']) same((b) => rings[b === native ? 'native' : 'js'][m](value, 't', 'c', 'f'), `${m}(${value.slice(0, 6)}…)`);
      }
    });
  });

  test('hostile arguments: the same code from both, in the same order of checks', () => {
    const S = SECRET;
    const CTX = ['t', 'c', 'f'];
    const rings = { native: new native.KeyRing([S]), js: new js.KeyRing([S]) };
    const ringOf = (b) => rings[b === native ? 'native' : 'js'];
    const wrong = [undefined, null, 42, {}, [], Symbol('s'), 10n, () => 'x', Buffer.from('x'), new String('x'), true];
    const calls = {
      'new KeyRing()': (b) => new b.KeyRing(),
      'new KeyRing(null)': (b) => new b.KeyRing(null),
      'new KeyRing(string)': (b) => new b.KeyRing(S),
      'new KeyRing([])': (b) => new b.KeyRing([]),
      'bad options before bad secrets': (b) => new b.KeyRing('x', 'fast'),
      'options function': (b) => new b.KeyRing([S], () => 1),
      'options array': (b) => new b.KeyRing([S], []).size,
      'options null': (b) => new b.KeyRing([S], null).ivLength,
      ...Object.fromEntries(
        [0, 8, 12, 13, 16, 24, '12', 12.5, null, undefined, new Number(12)].map((ivLength) => [`ivLength ${String(ivLength)}`, (b) => new b.KeyRing([S], { ivLength }).ivLength]),
      ),
      ...Object.fromEntries(['no', 1, null, false].map((v) => [`legacyFallbacks ${String(v)}`, (b) => new b.KeyRing([S], { legacyFallbacks: v }).stats().length])),
      ...Object.fromEntries(
        [0, -0, -5, 1, 1.5, NaN, Infinity, '100', 2 ** 53, 2 ** 53 - 1].map((v) => [`maxEnvelopeLength ${String(v)}`, (b) => new b.KeyRing([S], { maxEnvelopeLength: v }).size]),
      ),
      ...Object.fromEntries(
        [
          ['short', 'x'.repeat(31)],
          ['31 é', 'é'.repeat(31)],
          ['16 astral (32 units)', '😀'.repeat(16)],
          ['lone surrogate', `${S}\uD800`],
          ['number', 42],
          ['String object', new String(S)],
          ['Uint8Array(31)', new Uint8Array(31)],
          ['Uint8Array(33)', new Uint8Array(33)],
          ['Uint16Array(16)', new Uint16Array(16)],
          ['Uint8ClampedArray(32)', new Uint8ClampedArray(32)],
          ['DataView(32)', new DataView(new ArrayBuffer(32))],
          ['43 base64 without - or _', 'A'.repeat(43)],
          ['42 base64 + ==', `${'A'.repeat(42)}==`],
        ].map(([name, secret]) => [`secret: ${name}`, (b) => new b.KeyRing([S, secret]).stats()]),
      ),
      'a hole in the secrets': (b) => new b.KeyRing([S, , S]), // eslint-disable-line no-sparse-arrays
      'a type error after a short secret': (b) => new b.KeyRing(['short', 42]),
      ...Object.fromEntries(
        wrong.flatMap((bad, i) => [
          [`encrypt(wrong #${i})`, (b) => ringOf(b).encrypt(bad, ...CTX)],
          [`decrypt(wrong #${i})`, (b) => ringOf(b).decrypt(bad, ...CTX)],
          [`encrypt tenant wrong #${i}`, (b) => ringOf(b).encrypt('x', bad, 'c', 'f')],
          [`decrypt field wrong #${i}`, (b) => ringOf(b).decrypt('v1:x', 't', 'c', bad)],
          [`blindIndex(wrong #${i})`, (b) => ringOf(b).blindIndex(bad, ...CTX)],
          [`encryptBinary(wrong #${i})`, (b) => ringOf(b).encryptBinary(bad, ...CTX)],
          [`decryptBinary(wrong #${i})`, (b) => ringOf(b).decryptBinary(bad, ...CTX)],
          [`keyIndex(wrong #${i})`, (b) => ringOf(b).keyIndex(bad, ...CTX)],
          [`encryptMany(wrong #${i})`, (b) => ringOf(b).encryptMany(bad, ...CTX)],
          [`encryptMany([wrong #${i}])`, (b) => ringOf(b).encryptMany(['a', bad], ...CTX)],
          [`decryptMany([wrong #${i}])`, (b) => ringOf(b).decryptMany([bad], ...CTX)],
          [`encryptAsync(wrong #${i})`, (b) => ringOf(b).encryptAsync(bad, ...CTX) && 'a promise'],
          [`decryptAsync(wrong #${i})`, (b) => ringOf(b).decryptAsync(bad, ...CTX) && 'a promise'],
          [`envelopeToBytes(wrong #${i})`, (b) => b.envelopeToBytes(bad)],
          [`envelopeFromBytes(wrong #${i})`, (b) => b.envelopeFromBytes(bad)],
          [`isEnvelope(wrong #${i})`, (b) => b.isEnvelope(bad)],
          [`setIvBudgetWarning(wrong #${i})`, (b) => ringOf(b).setIvBudgetWarning(bad)],
        ]),
      ),
      'no arguments': (b) => ringOf(b).encrypt(),
      'extra arguments': (b) => ringOf(b).decrypt(ringOf(b).encrypt('x', ...CTX, 'extra'), ...CTX, 'extra'),
      ...Object.fromEntries(
        [['a:b', 'c', 'f'], ['t', 'c:d', 'f'], ['t', 'c', 'f:'], ['', 'c', 'f'], ['t', '', 'f'], ['t', 'c', ''], ['t\uD800', 'c', 'f'], ['t', 'c', '\uDFFF'], ['a:b', 42, 'f'], ['', 'c', 42]].flatMap((ctx) => [
          [`encrypt in ${JSON.stringify(ctx)}`, (b) => ringOf(b).encrypt('x', ...ctx)],
          [`encrypt(42) in ${JSON.stringify(ctx)}`, (b) => ringOf(b).encrypt(42, ...ctx)],
          [`encryptMany([42]) in ${JSON.stringify(ctx)}`, (b) => ringOf(b).encryptMany([42], ...ctx)],
          [`encryptMany(42) in ${JSON.stringify(ctx)}`, (b) => ringOf(b).encryptMany(42, ...ctx)],
          [`decryptAsync(42) in ${JSON.stringify(ctx)}`, (b) => ringOf(b).decryptAsync(42, ...ctx)],
          [`blindIndexes in ${JSON.stringify(ctx)}`, (b) => ringOf(b).blindIndexes('v', ...ctx)],
        ]),
      ),
      ...Object.fromEntries(
        ['a\uD800b', '\uDC00', 'x\uDBFF', '😀\uD83D', `${'long text '.repeat(20)}\uD800`, `\uDFFF${'long text '.repeat(20)}`].map((s, i) => [`lone surrogate #${i}`, (b) => ringOf(b).encrypt(s, ...CTX)]),
      ),
      ...Object.fromEntries([0, -1, 2.5, NaN, Infinity, '3', 1, 2 ** 64, 1e300].map((n) => [`setIvBudgetWarning(${String(n)})`, (b) => new b.KeyRing([S]).setIvBudgetWarning(n)])),
      ...Object.fromEntries(
        ['encrypt', 'decrypt', 'encryptMany', 'decryptMany', 'encryptAsync', 'decryptAsync', 'blindIndex', 'blindIndexes', 'encryptBinary', 'decryptBinary', 'keyIndex', 'stats', 'setIvBudgetWarning'].flatMap((m) =>
          [{}, null, undefined, Object.create(native.KeyRing.prototype), Object.create(js.KeyRing.prototype)].map((self, i) => [
            `${m} called on something else (#${i})`,
            (b) => b.KeyRing.prototype[m].call(self, ['x'], ...CTX),
          ]),
        ),
      ),
      ...Object.fromEntries(
        ['size', 'ivLength'].map((getter) => [`the ${getter} getter on something else`, (b) => Object.getOwnPropertyDescriptor(b.KeyRing.prototype, getter).get.call({})]),
      ),
      'the process-wide ring: argument errors after a ring exists': (b) => b.encrypt(42, 'a:b', 'c', 'f'),
      'initKeyRing with bad options': (b) => b.initKeyRing(undefined, 'x'),
      'initKeyRing with bad secrets': (b) => b.initKeyRing([42]),
    };
    for (const [name, call] of Object.entries(calls)) same(call, name);
  });

  test('keyed rings (v2): each reads what the other writes, text, binary and async; the same blind indexes and the same refusals', async () => {
    const ids = [randomBytes(16).toString('base64url'), randomBytes(16).toString('base64url')];
    const [k1, k2, indexKey] = [randomBytes(32), randomBytes(32), randomBytes(32)];
    for (const ivLength of [12, 16]) {
      const options = () => ({ ivLength, keyIds: ids, indexKey: Buffer.from(indexKey) });
      const rings = { native: new native.KeyRing([k1, k2], options()), js: new js.KeyRing([k1, k2], options()) };
      const older = { native: new native.KeyRing([k2], { ivLength, keyIds: [ids[1]] }), js: new js.KeyRing([k2], { ivLength, keyIds: [ids[1]] }) };
      for (let i = 0; i < 40; i++) {
        const [plain, ctx] = [value(), context()];
        for (const [from, to] of [['native', 'js'], ['js', 'native']]) {
          const text = rings[from].encrypt(plain, ...ctx);
          assert.ok(text.startsWith(`v2:${ids[0]}:`), text);
          assert.equal(rings[to].decrypt(text, ...ctx), plain);
          assert.equal(rings[to].keyIndex(text, ...ctx), 0);
          const bytes = rings[from].encryptBinary(plain, ...ctx);
          assert.equal(bytes[0], 2);
          assert.equal(rings[to].decryptBinary(bytes, ...ctx), plain);
          assert.equal(native.envelopeFromBytes(bytes), js.envelopeFromBytes(bytes));
          assert.equal(await rings[to].decryptAsync(await rings[from].encryptAsync(plain, ...ctx), ...ctx), plain);
          const old = older[from].encrypt(plain, ...ctx);
          assert.equal(rings[to].keyIndex(old, ...ctx), 1);
          assert.equal(rings[to].blindIndex(plain, ...ctx), rings[from].blindIndex(plain, ...ctx));
        }
        assert.deepEqual(rings.native.blindIndexes(plain, ...ctx), rings.js.blindIndexes(plain, ...ctx));
      }
      const text = rings.native.encrypt('x', 't', 'c', 'f');
      const renamed = text.replace(ids[0], ids[1]);
      const plainRing = { native: new native.KeyRing([k1]), js: new js.KeyRing([k1]) };
      const v1 = plainRing.native.encrypt('x', 't', 'c', 'f');
      same((b) => rings[b === native ? 'native' : 'js'].decrypt(renamed, 't', 'c', 'f'), 'a v2 value under another id');
      same((b) => plainRing[b === native ? 'native' : 'js'].decrypt(text, 't', 'c', 'f'), 'a v2 value in a ring without ids');
      same((b) => rings[b === native ? 'native' : 'js'].decrypt(v1, 't', 'c', 'f'), 'a v1 value in a keyed ring');
      same((b) => older[b === native ? 'native' : 'js'].decryptBinary(rings.native.encryptBinary('x', 't', 'c', 'f'), 't', 'c', 'f'), 'a binary v2 value whose key is not loaded');
      // A ciphertext that does not decode is malformed whether a key is there to try or not (the core decoded it only before a try).
      const cut = (envelope) => `${envelope.slice(0, envelope.lastIndexOf(':') + 1)}A`;
      same((b) => plainRing[b === native ? 'native' : 'js'].decrypt(cut(text), 't', 'c', 'f'), 'a v2 value whose key is not loaded, its ciphertext cut');
      same((b) => rings[b === native ? 'native' : 'js'].decrypt(cut(v1), 't', 'c', 'f'), 'a v1 value in a keyed ring, its ciphertext cut');
      assert.equal(outcome(() => rings.native.decrypt(cut(v1), 't', 'c', 'f')).code, 'ALE_MALFORMED_ENVELOPE');
      assert.equal(outcome(() => plainRing.js.decrypt(text, 't', 'c', 'f')).code, 'ALE_KEY_NOT_LOADED');
    }
    for (const [name, options] of Object.entries({
      'one id for two secrets': { keyIds: [ids[0]] },
      'the same id twice': { keyIds: [ids[0], ids[0]] },
      'an id that is not 22 characters': { keyIds: [ids[0], ids[1].slice(1)] },
      'an id that is not canonical': { keyIds: [ids[0], `${ids[1].slice(0, 21)}_`] },
      'ids that are not an array': { keyIds: ids[0] },
      'an id that is a number': { keyIds: [ids[0], 5] },
      'an index key of 31 bytes': { keyIds: ids, indexKey: Buffer.alloc(31) },
      'an index key that is a string': { keyIds: ids, indexKey: 'x'.repeat(32) },
      'ids that are null': { keyIds: null },
      "the primary's id left out (a hole)": { keyIds: [, ids[1]] }, // eslint-disable-line no-sparse-arrays
      'an index key that is null': { keyIds: ids, indexKey: null },
    })) {
      same((b) => new b.KeyRing([k1, k2], options), `keyed ring: ${name}`);
    }
  });

  test('rings of tenants: each hands a call to its tenant\'s keys; both read what the other writes; the same refusals', async () => {
    const ids = { acme: [randomBytes(16).toString('base64url'), randomBytes(16).toString('base64url')], globex: [randomBytes(16).toString('base64url')] };
    const keys = { acme: [randomBytes(32), randomBytes(32)], globex: [randomBytes(32)] };
    const indexKey = randomBytes(32);
    const rings = {};
    for (const [name, b] of Object.entries(backends)) {
      rings[name] = b.KeyRing.forTenants({ ivLength: 12 });
      for (const t of ['acme', 'globex']) rings[name].setTenant(t, keys[t], { ivLength: 12, keyIds: ids[t], indexKey: Buffer.from(indexKey) });
      assert.equal(rings[name].tenants, 2);
      assert.equal(rings[name].size, 0);
    }
    const pick = (b) => rings[b === native ? 'native' : 'js'];
    for (let i = 0; i < 20; i++) {
      const [plain, [, c, f]] = [value(), context()];
      for (const t of ['acme', 'globex']) {
        for (const [from, to] of [['native', 'js'], ['js', 'native']]) {
          const text = rings[from].encrypt(plain, t, c, f);
          assert.ok(text.startsWith(`v2:${ids[t][0]}:`));
          assert.equal(rings[to].decrypt(text, t, c, f), plain);
          assert.equal(rings[to].decryptBinary(rings[from].encryptBinary(plain, t, c, f), t, c, f), plain);
          assert.equal(await rings[to].decryptAsync(await rings[from].encryptAsync(plain, t, c, f), t, c, f), plain);
          assert.deepEqual(rings[to].blindIndexes(plain, t, c, f), rings[from].blindIndexes(plain, t, c, f));
        }
      }
    }
    const acme = rings.native.encrypt('x', 'acme', 'c', 'f');
    same((b) => pick(b).decrypt(acme, 'globex', 'c', 'f'), "a tenant's value in another tenant's context");
    same((b) => pick(b).encrypt('x', 'initech', 'c', 'f'), 'a tenant it does not hold');
    same((b) => pick(b).blindIndex('x', 'initech', 'c', 'f'), 'a blind index for a tenant it does not hold');
    // Async calls take their tenant's keys when they are made: a tenant the
    // ring does not hold rejects the promise, and a call made before its
    // tenant is deleted completes with the keys it was made with.
    for (const [what, call] of Object.entries({
      'encryptAsync for a tenant it does not hold': (b) => pick(b).encryptAsync('x', 'initech', 'c', 'f'),
      'decryptAsync for a tenant it does not hold': (b) => pick(b).decryptAsync(acme, 'initech', 'c', 'f'),
      'decryptAsync of a tenant\'s value in another tenant\'s context': (b) => pick(b).decryptAsync(acme, 'globex', 'c', 'f'),
    })) {
      const [a, z] = [await asyncOutcome(() => call(native)), await asyncOutcome(() => call(js))];
      assert.deepEqual(z, a, what);
      assert.deepEqual(a, { rejected: 'ALE_KEY_NOT_LOADED' }, what);
    }
    for (const name of ['native', 'js']) {
      const sealing = rings[name].encryptAsync('before', 'globex', 'c', 'f');
      const opening = rings[name].decryptAsync(rings[name].encrypt('kept', 'globex', 'c', 'f'), 'globex', 'c', 'f');
      const removed = rings[name].deleteTenant('globex');
      assert.equal(removed, true);
      assert.equal(await opening, 'kept', `${name}: a decryptAsync made before deleteTenant`);
      assert.ok((await sealing).startsWith(`v2:${ids.globex[0]}:`), `${name}: an encryptAsync made before deleteTenant`);
      rings[name].setTenant('globex', keys.globex, { ivLength: 12, keyIds: ids.globex, indexKey: Buffer.from(indexKey) });
    }
    same((b) => pick(b).deleteTenant('acme'), 'deleteTenant');
    same((b) => pick(b).decrypt(acme, 'acme', 'c', 'f'), 'a deleted tenant');
    same((b) => pick(b).deleteTenant('acme'), 'deleteTenant again');
    for (const [name, call] of Object.entries({
      'setTenant on a static ring': (b) => new b.KeyRing([keys.globex[0]]).setTenant('t', [keys.globex[0]], { ivLength: 12, keyIds: ids.globex }),
      'a tenant ring without ids': (b) => pick(b).setTenant('t', [keys.globex[0]], { ivLength: 12 }),
      'a tenant ring of another IV length': (b) => pick(b).setTenant('t', [keys.globex[0]], { keyIds: ids.globex }),
      'a tenant id with a colon': (b) => pick(b).setTenant('a:b', [keys.globex[0]], { ivLength: 12, keyIds: ids.globex }),
      'an empty tenant id': (b) => pick(b).setTenant('', [keys.globex[0]], { ivLength: 12, keyIds: ids.globex }),
      'a tenant id that is not a string': (b) => pick(b).setTenant(5, [keys.globex[0]], { ivLength: 12, keyIds: ids.globex }),
      'forTenants with key ids': (b) => b.KeyRing.forTenants({ keyIds: ids.globex }),
    })) {
      same(call, name);
    }
  });

  test("a ring of tenants warns ALE_IV_BUDGET once, at its threshold, when a tenant's primary reaches it: the same on both backends", async () => {
    for (const [name, b] of Object.entries(backends)) {
      const seen = [];
      const listen = (w) => w.code === 'ALE_IV_BUDGET' && seen.push(w.message.match(/encrypted (\d+) values/)[1]);
      process.on('warning', listen);
      try {
        const ring = b.KeyRing.forTenants();
        for (const t of ['acme', 'globex']) ring.setTenant(t, [randomBytes(32)], { keyIds: [randomBytes(16).toString('base64url')] });
        ring.setIvBudgetWarning(3);
        for (const t of ['acme', 'globex']) for (let i = 0; i < 3; i++) ring.encrypt('x', t, 'c', 'f');
        // emitted from the event loop after the call that crossed the threshold
        await eventually(() => [...seen], ['3'], `${name}: a warning at 3`, true);
        await new Promise((resolve) => setTimeout(resolve, 50));
        assert.deepEqual(seen, ['3'], `${name}: one warning only`);
      } finally {
        process.off('warning', listen);
      }
    }
  });
});
