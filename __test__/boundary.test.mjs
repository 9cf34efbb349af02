// The boundary's contract on every KeyRing method and getter: a `this` that
// is not a KeyRing is ALE_INVALID_INPUT (never V8's code-less "Illegal
// invocation", never a wrong pointer), and hostile arguments get an ALE_*
// code. It also pins what src/callbacks/ assumes of napi-rs (a class instance
// wrapped as Box<T>, the type tag stamped by the constructor, the module
// hook run after registration): if one changes, these tests fail loudly.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ale, SECRET, OLD_SECRET, CTX, throwsCode } from './helpers.mjs';

const proto = ale.KeyRing.prototype;
const names = Object.getOwnPropertyNames(proto).filter((n) => n !== 'constructor');
const getters = names.filter((n) => Object.getOwnPropertyDescriptor(proto, n).get);
const methods = names.filter((n) => typeof Object.getOwnPropertyDescriptor(proto, n).value === 'function');
const ring = new ale.KeyRing([SECRET]);
const envelope = ring.encrypt('x', ...CTX);

/** Valid arguments for each method, so that only `this` is wrong. */
const ARGS = {
  encrypt: ['x', ...CTX],
  decrypt: [envelope, ...CTX],
  encryptMany: [['x'], ...CTX],
  decryptMany: [[envelope], ...CTX],
  encryptAsync: ['x', ...CTX],
  decryptAsync: [envelope, ...CTX],
  encryptBinary: ['x', ...CTX],
  decryptBinary: [ring.encryptBinary('x', ...CTX), ...CTX],
  blindIndex: ['x', ...CTX],
  blindIndexes: ['x', ...CTX],
  keyIndex: [envelope, ...CTX],
  searchTokens: ['x', ...CTX],
  searchTokenText: ['x', ...CTX],
  searchQuery: ['xyz', 'contains', ...CTX],
  rangeTokens: [Buffer.from('040000000000000000', 'hex'), ...CTX],
  stats: [],
  setIvBudgetWarning: [1000],
  // on a ring of tenants (below, `rightThis`); a KeyRing of any other kind refuses them with the same code
  setTenant: ['t', [Buffer.alloc(32, 1)], { keyIds: ['AAAAAAAAAAAAAAAAAAAAAA'] }],
  deleteTenant: ['t'],
};
const tenants = ale.KeyRing.forTenants();
/** The ring each method runs on with the right `this`. */
const rightThis = (name) => (name === 'setTenant' || name === 'deleteTenant' ? tenants : ring);

describe('every KeyRing method checks `this`', () => {
  test('the prototype has exactly the methods and getters this test knows', () => {
    assert.deepEqual(methods.sort(), Object.keys(ARGS).sort());
    assert.deepEqual(getters.sort(), ['ivLength', 'size', 'tenants']);
  });

  const foreign = { 'a plain object': {}, null: null, 'an object made from the prototype, never constructed': Object.create(proto), 'another native object': new Date(), 'a Buffer': Buffer.alloc(8) };
  for (const name of methods) {
    test(`${name}: a foreign this is ALE_INVALID_INPUT`, () => {
      for (const [what, self] of Object.entries(foreign)) {
        const e = throwsCode(assert, () => proto[name].apply(self, ARGS[name]), 'ALE_INVALID_INPUT');
        assert.match(e.message, /KeyRing/, what);
      }
      // and with the right this, the same arguments work
      const result = proto[name].apply(rightThis(name), ARGS[name]);
      if (result instanceof Promise) return result;
    });
  }
  for (const name of getters) {
    test(`${name}: a foreign this is ALE_INVALID_INPUT`, () => {
      const get = Object.getOwnPropertyDescriptor(proto, name).get;
      for (const self of Object.values(foreign)) throwsCode(assert, () => get.call(self), 'ALE_INVALID_INPUT');
    });
  }
});

describe('what src/callbacks/ assumes of napi-rs', () => {
  test('rings read through the direct callbacks are the rings that were built', () => {
    // size and ivLength are read from the wrapped Box<KeyRing> by src/callbacks/checked.rs
    for (const [secrets, options, size, ivLength] of [
      [[SECRET], undefined, 1, 16],
      [[SECRET, OLD_SECRET], { ivLength: 12 }, 2, 12],
      [[SECRET, OLD_SECRET, 'a third secret of more than 32 chars'], { ivLength: 16 }, 3, 16],
    ]) {
      const r = new ale.KeyRing(secrets, options);
      assert.deepEqual([r.size, r.ivLength], [size, ivLength]);
      const env = r.encrypt('through the fast path', ...CTX);
      assert.equal(env.split(':')[1].length, ivLength === 16 ? 22 : 16);
      assert.equal(new ale.KeyRing([SECRET]).decrypt(env, ...CTX), 'through the fast path');
    }
  });

  test('a ring made by fromEnv carries the type tag too', () => {
    const r = ale.KeyRing.fromEnv({ ENCRYPTION_KEY: SECRET });
    assert.equal(r.size, 1);
    assert.equal(r.decrypt(ring.encrypt('tagged', ...CTX), ...CTX), 'tagged');
  });
});

describe('hostile arguments get ALE_* codes, on every method', () => {
  const hostile = [[], [undefined], [null, null, null, null], [42, 42, 42, 42], [{}, {}, {}, {}], [Symbol('s'), ...CTX], [() => 1, ...CTX], [10n, ...CTX]];
  for (const name of methods) {
    test(name, () => {
      for (const args of hostile) {
        if (name === 'setIvBudgetWarning' && typeof args[0] === 'number') continue; // 42 is a valid threshold
        let threw;
        try {
          const r = proto[name].apply(ring, args);
          if (r instanceof Promise) r.catch(() => {});
        } catch (e) {
          threw = e;
        }
        if (name === 'stats') continue; // takes no arguments
        assert.ok(threw instanceof Error, `${name}(${args.map(String)}) did not throw`);
        assert.match(threw.code, /^ALE_(INVALID_INPUT|INVALID_CONTEXT)$/, `${name}: ${threw.code} ${threw.message}`);
      }
    });
  }
});

describe('the hot methods: encrypt, decrypt, their binary forms, searchTokens and searchTokenText', () => {
  const hot = ['encrypt', 'decrypt', 'encryptBinary', 'decryptBinary', 'searchTokens', 'searchTokenText'];

  test('they look like the other methods and leave the instance bare', () => {
    for (const name of hot) {
      const d = Object.getOwnPropertyDescriptor(proto, name);
      assert.deepEqual([d.writable, d.enumerable, d.configurable], [true, false, true], name);
      assert.equal(d.value.name, name);
      assert.throws(() => new d.value('x', ...CTX), TypeError, `${name} is not a constructor`);
    }
    const fresh = new ale.KeyRing([SECRET]);
    fresh.decryptBinary(fresh.encryptBinary(fresh.decrypt(fresh.encrypt('x', ...CTX), ...CTX), ...CTX), ...CTX);
    fresh.searchTokens('xyz', ...CTX);
    fresh.searchTokenText('xyz', ...CTX);
    assert.deepEqual(Reflect.ownKeys(fresh), [], 'the handle is not kept on the ring');
  });

  test('a ring built from a subclass works, and two rings never share a handle', () => {
    class Tenanted extends ale.KeyRing {}
    const sub = new Tenanted([SECRET]);
    const other = new ale.KeyRing([OLD_SECRET]);
    const envelope = sub.encrypt('sub', ...CTX);
    assert.equal(ring.decrypt(envelope, ...CTX), 'sub', 'same secret, same key');
    throwsCode(assert, () => other.decrypt(envelope, ...CTX), 'ALE_AUTH_FAILED');
    assert.equal(other.decrypt(other.encrypt('other', ...CTX), ...CTX), 'other');
  });

  test('contexts: bad ones refused the same way every time, 5,000 distinct ones each bound to its own', () => {
    for (let attempt = 0; attempt < 2; attempt++) {
      throwsCode(assert, () => ring.encrypt('x', '', 'users', 'email'), 'ALE_INVALID_CONTEXT');
      throwsCode(assert, () => ring.encrypt('x', 'a:b', 'users', 'email'), 'ALE_INVALID_CONTEXT');
      throwsCode(assert, () => ring.decrypt(envelope, 'tenant-a', 'users', 'e\uD800'), 'ALE_INVALID_INPUT');
      throwsCode(assert, () => ring.encrypt('x', 'tenant-a', 7, 'email'), 'ALE_INVALID_INPUT');
      throwsCode(assert, () => ring.encryptBinary('x', 'tenant-a', 'users'), 'ALE_INVALID_INPUT');
      throwsCode(assert, () => ring.encrypt('x', new String('tenant-a'), 'users', 'email'), 'ALE_INVALID_INPUT');
    }
    // past the cache's 4,096 entries, and back to the first ones
    const contexts = Array.from({ length: 5000 }, (_, i) => [`tenant-${i % 50}`, `coll-${Math.floor(i / 50)}`, 'field']);
    const sealed = contexts.map((c, i) => ring.encrypt(`v${i}`, ...c));
    contexts.forEach((c, i) => assert.equal(ring.decrypt(sealed[i], ...c), `v${i}`));
    throwsCode(assert, () => ring.decrypt(sealed[0], ...contexts[1]), 'ALE_AUTH_FAILED');
    // contexts that differ only in the field, each used often enough to be cached
    for (let i = 0; i < 3; i++) {
      const [email, phone] = [ring.encrypt('e', 'tenant-a', 'users', 'email'), ring.encrypt('p', 'tenant-a', 'users', 'phone')];
      assert.equal(ring.decrypt(email, 'tenant-a', 'users', 'email'), 'e');
      throwsCode(assert, () => ring.decrypt(email, 'tenant-a', 'users', 'phone'), 'ALE_AUTH_FAILED');
      throwsCode(assert, () => ring.decrypt(phone, 'tenant-a', 'users', 'email'), 'ALE_AUTH_FAILED');
    }
    throwsCode(assert, () => ring.decryptBinary(ring.encryptBinary('b', ...contexts[4999]), ...contexts[0]), 'ALE_AUTH_FAILED');
  });

  test('code that patches Map or WeakMap afterwards cannot move a value to another context', { skip: ale.backend !== 'native' && 'the fallback has no handles' }, () => {
    const fresh = new ale.KeyRing([SECRET]);
    const [a, b] = [['tenant-a', 'users', 'email'], ['tenant-b', 'users', 'email']];
    const tokensOfA = fresh.searchTokens('müller', ...a).toString('hex');
    const textOfA = fresh.searchTokenText('müller', ...a);
    // both contexts cached; the last one handed out is b's, so a's calls below look a up
    for (let i = 0; i < 3; i++) for (const c of [a, b]) fresh.decrypt(fresh.encrypt('warm', ...c), ...c);
    const saved = { get: Map.prototype.get, weakGet: WeakMap.prototype.get };
    let sealed, tokens, text;
    try {
      // a hostile get: every lookup answers with tenant-b's entry
      Map.prototype.get = function (key) {
        return saved.get.call(this, key === 'tenant-a' ? 'tenant-b' : key);
      };
      WeakMap.prototype.get = () => undefined;
      sealed = fresh.encrypt('for a', ...a);
      fresh.encrypt('for b', ...b); // b's again the last, so that a is looked up once more
      tokens = fresh.searchTokens('müller', ...a).toString('hex');
      fresh.encrypt('for b', ...b);
      text = fresh.searchTokenText('müller', ...a);
    } finally {
      Map.prototype.get = saved.get;
      WeakMap.prototype.get = saved.weakGet;
    }
    assert.equal(fresh.decrypt(sealed, ...a), 'for a');
    throwsCode(assert, () => fresh.decrypt(sealed, ...b), 'ALE_AUTH_FAILED');
    assert.equal(tokens, tokensOfA, "a's tokens, not b's");
    assert.equal(text, textOfA, "a's token text, not b's");
  });

  test('code that patches the encoder, Buffer, typed-array or Math built-ins afterwards changes nothing a hot call does, on either path', { skip: ale.backend !== 'native' && 'the fallback calls them as it finds them' }, () => {
    const ring = new ale.KeyRing([SECRET]);
    const c = ['tenant-a', 'users', 'email'];
    const value = 'héllo ✓ '.repeat(40);
    for (let i = 0; i < 3; i++) ring.decrypt(ring.encrypt('warm', ...c), ...c); // the context has its handle
    const typedProto = Object.getPrototypeOf(Uint8Array.prototype);
    const saved = {
      encodeInto: TextEncoder.prototype.encodeInto,
      latin1Slice: Buffer.prototype.latin1Slice,
      utf8Slice: Buffer.prototype.utf8Slice,
      fill: Uint8Array.prototype.fill,
      length: Object.getOwnPropertyDescriptor(typedProto, 'length'),
      allocUnsafeSlow: Buffer.allocUnsafeSlow,
      setPrototypeOf: Object.setPrototypeOf,
      ceil: Math.ceil,
      log2: Math.log2,
    };
    const seen = [];
    let sealed, opened, long;
    try {
      TextEncoder.prototype.encodeInto = function () {
        seen.push('encodeInto');
        return { read: 0, written: 0 };
      };
      Buffer.prototype.latin1Slice = Buffer.prototype.utf8Slice = () => {
        seen.push('slice');
        return 'patched';
      };
      Uint8Array.prototype.fill = function () {
        seen.push(Buffer.from(this).toString('latin1'));
        return this;
      };
      Object.defineProperty(typedProto, 'length', {
        get() {
          seen.push('length');
          return 1 << 30;
        },
        configurable: true,
      });
      Buffer.allocUnsafeSlow = (n) => {
        const b = saved.allocUnsafeSlow(n);
        seen.push(b);
        return b;
      };
      Object.setPrototypeOf = (o) => {
        seen.push('setPrototypeOf');
        return o;
      };
      Math.ceil = (x) => (seen.push('ceil'), saved.ceil(x));
      Math.log2 = (x) => (seen.push('log2'), saved.log2(x));
      sealed = ring.encrypt(value, ...c);
      opened = ring.decrypt(sealed, ...c);
      // Longer than the scratch memory in bytes (3 bytes a unit), short
      // enough for bun:ffi (3 Ki units): encrypting it makes new scratch
      // Buffers (its envelope, longer, is decrypted through Node-API).
      long = ring.decrypt(ring.encrypt('✓'.repeat(3000), ...c), ...c);
    } finally {
      TextEncoder.prototype.encodeInto = saved.encodeInto;
      Buffer.prototype.latin1Slice = saved.latin1Slice;
      Buffer.prototype.utf8Slice = saved.utf8Slice;
      Uint8Array.prototype.fill = saved.fill;
      Object.defineProperty(typedProto, 'length', saved.length);
      Buffer.allocUnsafeSlow = saved.allocUnsafeSlow;
      Object.setPrototypeOf = saved.setPrototypeOf;
      Math.ceil = saved.ceil;
      Math.log2 = saved.log2;
    }
    assert.equal(opened, value);
    assert.equal(long, '✓'.repeat(3000));
    assert.equal(ring.decrypt(sealed, ...c), value);
    assert.deepEqual(seen, [], 'no patched built-in was called, and no scratch Buffer was handed out');
  });
});
