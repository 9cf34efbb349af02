// A keys column that still reads v1 values (readV1, the default) also looks
// up the v1-era blind indexes of the process-wide ring. With no process-wide
// key configured there are none, and the lookup goes on without them; with
// a bad one, the lookup fails with the key's error rather than miss every
// row not converted yet. In a child process, whose environment holds the
// bad key and no initKeyRing() has run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const KEK = 'v1-lookup-kek-0123456789-abcdefghijklmnop';
const run = (extra) => {
  const env = { ...process.env, ...extra };
  for (const name of ['ENCRYPTION_KEY', 'SECRET_ENCRYPTION_KEY', 'ENCRYPTION_KEY_PREVIOUS']) if (!(name in extra)) delete env[name];
  const script = fileURLToPath(new URL('./fixtures/v1-lookup-bad-key.mjs', import.meta.url));
  const r = spawnSync(process.execPath, [script, KEK], { encoding: 'utf8', env, timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout.trim().split('\n').at(-1));
};

test('a v1-era lookup under a bad process-wide key fails with its code, and with none configured finds what the tenant keys find', () => {
  assert.deepEqual(run({ ENCRYPTION_KEY: 'too short' }), { code: 'ALE_INVALID_KEY', namesVariable: true });
  assert.deepEqual(run({}), { rows: 0 });
});
