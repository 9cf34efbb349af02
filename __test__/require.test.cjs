// Plain CommonJS consumers: require() of the addon and of every entry point.
const { test } = require('node:test');
const assert = require('node:assert/strict');

test('require() loads the addon and every Drizzle entry point', async () => {
  const ale = require('@sveltycms/ale');
  assert.equal(typeof ale.KeyRing, 'function');
  for (const dialect of ['sqlite', 'pg', 'mysql']) {
    const mod = require(`@sveltycms/ale/drizzle/${dialect}`);
    for (const name of ['encryptedText', 'encryptedJson', 'blindIndexColumn', 'withTenant', 'migratePlaintext', 'rotateKeys']) {
      assert.equal(typeof mod[name], 'function', `${dialect}.${name}`);
    }
  }
  const { withTenant, currentTenant } = require('@sveltycms/ale/drizzle');
  assert.equal(await withTenant('t1', () => currentTenant()), 't1');
});
