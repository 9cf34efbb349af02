// The columns find their key as the SveltyCMS drop-in does: no
// initKeyRing() call, the environment read on first use, a missing key a
// coded failure of the statement (nothing written), a key set later picked
// up, and an explicit initKeyRing() still winning. In a child process with
// no key in its environment.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { OLD_SECRET, SECRET } from './helpers.mjs';

test('a schema with encrypted columns and no initKeyRing(): key read on first use, failures not cached', () => {
  const env = { ...process.env };
  for (const name of ['ENCRYPTION_KEY', 'SECRET_ENCRYPTION_KEY', 'ENCRYPTION_KEY_PREVIOUS']) delete env[name];
  const script = fileURLToPath(new URL('./fixtures/lazy-key.mjs', import.meta.url));
  const r = spawnSync(process.execPath, [script, SECRET, OLD_SECRET], { encoding: 'utf8', env, timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  const steps = Object.fromEntries(r.stdout.trim().split('\n').map((l) => JSON.parse(l)).map(({ step, ...rest }) => [step, rest]));
  assert.deepEqual(steps, {
    imported: { initialized: false },
    'no key': { code: 'ALE_INVALID_KEY', mentionsVariable: true, rows: 0 },
    'bad key': { code: 'ALE_INVALID_KEY', mentionsVariable: true, rows: 0 },
    'key set later': { ok: true, rows: 1 },
    read: { email: 'u1@x.y', profile: { id: 1 }, envelope: true, blob: true },
    'explicit ring': { ok: true, rows: 2 },
    explicit: { opensWithExplicit: true },
    rotation: { found: [1, 2] },
  });
});
