// A secret that nearly matched a key rule (a quoted key, a trailing line
// break, 64 hex characters with a typo, base64 of too few bytes) resolves as
// SveltyCMS resolves it, with one ALE_KEY_NEAR_MISS warning per process that
// names the secret and the rule, never the value. Each case runs in a child
// (the warning is once per process), through the package entry and through
// the node:crypto backend directly, whose messages must be the same.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const HEX = '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff';
const B64 = 'ABEiM0RVZneImaq7zN3u/wARIjNEVWZ3iJmqu8zd7v8=';

/** Builds rings from `secrets` (twice) through the entry and through the fallback, or from an environment with `fromEnv`; prints each one's warnings. */
function warningsFor(secrets, { fromEnv = false } = {}) {
  const make = (m) => (fromEnv ? `${m}.KeyRing.fromEnv(secrets)` : `new ${m}.KeyRing(secrets)`);
  const dir = mkdtempSync(join(tmpdir(), 'ale-near-miss-'));
  try {
    const file = join(dir, 'probe.cjs');
    writeFileSync(
      file,
      `const seen = [];
      process.on('warning', (w) => w.code === 'ALE_KEY_NEAR_MISS' && seen.push(w.message));
      const secrets = ${JSON.stringify(secrets)};
      const entry = require(${JSON.stringify(join(root, 'main.cjs'))});
      ${make('entry')}; ${make('entry')};
      setTimeout(() => {
        const viaEntry = seen.splice(0);
        const fallback = require(${JSON.stringify(join(root, 'dist/cjs/fallback/index.js'))});
        if (entry.backend !== 'js') ${make('fallback')};
        setTimeout(() => console.log(JSON.stringify({ viaEntry, viaFallback: entry.backend === 'js' ? viaEntry : seen })), 20);
      }, 20);`,
    );
    const r = spawnSync(process.execPath, [file], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    return JSON.parse(r.stdout.trim().split('\n').at(-1));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const cases = [
  ['a hex key', HEX, null],
  ['a base64 key', B64, null],
  ['a passphrase', 'correct horse battery staple, twice over', null],
  ['a hex key with a trailing line break', `${HEX}\n`, /secret #0 \(primary\) has white space or a line break around a value that would be a key/],
  ['a base64 key in quotes', `"${B64}"`, /secret #0 \(primary\) is in quotes, and would be a key/],
  ['64 hex characters with a g', `${HEX.slice(0, 63)}g`, /is 64 characters, nearly all hex digits, so it is read as base64 or as a passphrase/],
  ['base64 of 24 bytes', 'ABEiM0RVZneImaq7zN3u/wARIjNEVWZ3', /looks like base64 of 24 bytes; a base64 key is 32 bytes/],
];

for (const [name, secret, rule] of cases) {
  test(`near-miss secrets: ${name} ${rule ? 'warns once, naming the rule and not the value' : 'does not warn'}`, () => {
    const { viaEntry, viaFallback } = warningsFor([secret]);
    if (!rule) {
      assert.deepEqual([viaEntry, viaFallback], [[], []]);
      return;
    }
    assert.equal(viaEntry.length, 1, 'once per process');
    assert.match(viaEntry[0], rule);
    assert.ok(!viaEntry[0].includes(secret.trim().replace(/^["']|["']$/g, '').slice(0, 16)), 'nothing of the value');
    assert.deepEqual(viaFallback, viaEntry, 'the node:crypto backend says the same');
  });
}

test('near-miss secrets: a previous secret is named by its position; a good primary does not hide it', () => {
  const { viaEntry } = warningsFor([HEX, `'${HEX}'`]);
  assert.equal(viaEntry.length, 1);
  assert.match(viaEntry[0], /^@sveltycms\/ale: secret #1 is in quotes/);
});

test('near-miss secrets: ENCRYPTION_KEY_PREVIOUS read as written beside its trimmed entry gives no warning of its own', () => {
  // a hex key with a line break: its trimmed entry is the key, and the value as written (a passphrase to the CMS) rides along
  assert.deepEqual(warningsFor({ ENCRYPTION_KEY: HEX, ENCRYPTION_KEY_PREVIOUS: `${B64}\n` }, { fromEnv: true }), { viaEntry: [], viaFallback: [] });
  // a near miss of an entry itself is still named
  const { viaEntry } = warningsFor({ ENCRYPTION_KEY: HEX, ENCRYPTION_KEY_PREVIOUS: `"${B64}"` }, { fromEnv: true });
  assert.equal(viaEntry.length, 1);
  assert.match(viaEntry[0], /ENCRYPTION_KEY_PREVIOUS\[0\] is in quotes/);
});
