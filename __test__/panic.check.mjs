// A panic anywhere in the addon becomes an Error with code ALE_INTERNAL and
// the process goes on: on every exported function, method and getter, and
// on the thread pool under the async calls. Runs against the addon built
// with `--features test-panic` (scripts/test.mjs builds it and sets
// ALE_TEST_PANIC_ADDON), which exports forcePanicOnNextCall().
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

const path = process.env.ALE_TEST_PANIC_ADDON;
if (!path) throw new Error('ALE_TEST_PANIC_ADDON is not set: run this through scripts/test.mjs');
const addon = createRequire(import.meta.url)(path);
const SECRET = 'panic-test-secret-0123456789-abcdefghij';
const CTX = ['t', 'c', 'f'];
// One well-formed range-tree node: depth 1, prefix 0.
const NODE = Buffer.alloc(9, 0).fill(4, 0, 1);

addon.initKeyRing([SECRET]);
const ring = new addon.KeyRing([SECRET]);
const envelope = ring.encrypt('x', ...CTX);
const bytes = ring.encryptBinary('x', ...CTX);
const tenants = addon.KeyRing.forTenants({ ivLength: 12 });
const tenantKeys = [[Buffer.alloc(32, 1)], { ivLength: 12, keyIds: ['AAAAAAAAAAAAAAAAAAAAAA'] }];

const calls = {
  'new KeyRing': () => new addon.KeyRing([SECRET]),
  'KeyRing.fromEnv': () => addon.KeyRing.fromEnv({ ENCRYPTION_KEY: SECRET }),
  'ring.encrypt': () => ring.encrypt('x', ...CTX),
  'ring.decrypt': () => ring.decrypt(envelope, ...CTX),
  'ring.encryptMany': () => ring.encryptMany(['x'], ...CTX),
  'ring.decryptMany': () => ring.decryptMany([envelope], ...CTX),
  'ring.encryptAsync': () => ring.encryptAsync('x', ...CTX),
  'ring.decryptAsync': () => ring.decryptAsync(envelope, ...CTX),
  'ring.encryptBinary': () => ring.encryptBinary('x', ...CTX),
  'ring.decryptBinary': () => ring.decryptBinary(bytes, ...CTX),
  'ring.blindIndex': () => ring.blindIndex('x', ...CTX),
  'ring.blindIndexes': () => ring.blindIndexes('x', ...CTX),
  'ring.keyIndex': () => ring.keyIndex(envelope, ...CTX),
  'ring.searchTokens': () => ring.searchTokens('x', ...CTX),
  'ring.searchTokenText': () => ring.searchTokenText('x', ...CTX),
  'ring.searchQuery': () => ring.searchQuery('xyz', 'contains', ...CTX),
  'ring.rangeTokens': () => ring.rangeTokens(NODE, ...CTX),
  'ring.stats': () => ring.stats(),
  'ring.setIvBudgetWarning': () => ring.setIvBudgetWarning(1 << 30),
  'ring.size': () => ring.size,
  'ring.ivLength': () => ring.ivLength,
  'KeyRing.forTenants': () => addon.KeyRing.forTenants({ ivLength: 12 }),
  'ring.setTenant': () => tenants.setTenant('t', ...tenantKeys),
  'ring.deleteTenant': () => tenants.deleteTenant('t'),
  'ring.tenants': () => tenants.tenants,
  initKeyRing: () => addon.initKeyRing([SECRET]),
  encrypt: () => addon.encrypt('x', ...CTX),
  decrypt: () => addon.decrypt(envelope, ...CTX),
  encryptBinary: () => addon.encryptBinary('x', ...CTX),
  decryptBinary: () => addon.decryptBinary(bytes, ...CTX),
  blindIndex: () => addon.blindIndex('x', ...CTX),
  blindIndexes: () => addon.blindIndexes('x', ...CTX),
  isEnvelope: () => addon.isEnvelope(envelope),
  isKeyRingInitialized: () => addon.isKeyRingInitialized(),
  envelopeToBytes: () => addon.envelopeToBytes(envelope),
  envelopeFromBytes: () => addon.envelopeFromBytes(bytes),
  envelopeKeyId: () => addon.envelopeKeyId(envelope),
  searchNormalize: () => addon.searchNormalize('x'),
  searchMatches: () => addon.searchMatches('x', 'x', 'words'),
  searchTokens: () => addon.searchTokens('x', ...CTX),
  searchTokenText: () => addon.searchTokenText('x', ...CTX),
  searchQuery: () => addon.searchQuery('xyz', 'contains', ...CTX),
  rangeTokens: () => addon.rangeTokens(NODE, ...CTX),
};

describe('a panic becomes ALE_INTERNAL, never an abort', () => {
  test('the list covers every export, method and getter', () => {
    const exported = Object.keys(addon).filter((k) => typeof addon[k] === 'function' && k !== 'KeyRing' && k !== 'forcePanicOnNextCall');
    const proto = Object.getOwnPropertyNames(addon.KeyRing.prototype).filter((k) => k !== 'constructor');
    const listed = Object.keys(calls);
    for (const name of exported) assert.ok(listed.includes(name), `${name} is not covered`);
    for (const name of proto) assert.ok(listed.includes(`ring.${name}`), `ring.${name} is not covered`);
  });

  for (const [name, call] of Object.entries(calls)) {
    test(name, async () => {
      addon.forcePanicOnNextCall();
      let caught;
      try {
        await call();
      } catch (e) {
        caught = e;
      }
      assert.ok(caught instanceof Error, `${name} did not throw after a forced panic`);
      assert.equal(caught.code, 'ALE_INTERNAL', `${name}: ${caught.code} ${caught.message}`);
      assert.match(caught.message, /internal error/);
      // the process and the addon go on
      await call();
    });
  }

  test('a panic on the thread pool rejects the async call with ALE_INTERNAL', async () => {
    for (const call of [calls['ring.encryptAsync'], calls['ring.decryptAsync']]) {
      addon.forcePanicOnNextCall(true);
      await assert.rejects(call(), { code: 'ALE_INTERNAL' });
      assert.equal(typeof (await call()), 'string');
    }
  });
});
