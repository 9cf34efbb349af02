// The README's examples run as written: the core API block, the SQLite
// Drizzle block and the SveltyCMS drop-in block. (better-sqlite3 is a Node addon, so the SQLite block runs
// under Node; the same schema runs on bun:sqlite in drizzle-sqlite.test.mjs.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SECRET } from './helpers.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');
const blockAfter = (heading) => {
  const at = readme.indexOf(heading);
  assert.ok(at >= 0, `README has no "${heading}"`);
  const m = /```js\n([\s\S]*?)```/.exec(readme.slice(at));
  return m[1];
};

function runExample(name, code) {
  // Written inside the package so that '@sveltycms/ale' and drizzle resolve.
  const [base, ext] = name.split('.');
  const file = join(root, '__test__', `.readme-${base}-${process.pid}.${ext}`);
  const cwd = mkdtempSync(join(tmpdir(), 'ale-readme-'));
  writeFileSync(file, code);
  try {
    return execFileSync(process.execPath, [file], { cwd, encoding: 'utf8', env: { ...process.env, ENCRYPTION_KEY: SECRET } });
  } finally {
    rmSync(file, { force: true });
    rmSync(cwd, { recursive: true, force: true });
  }
}

test('README: the core API example runs and round-trips', () => {
  const code = blockAfter('## Install and use').replace("ring.decrypt(stored, 'tenant-2', 'users', 'email');", "try { ring.decrypt(stored, 'tenant-2', 'users', 'email'); } catch (e) { console.log(e.code); }");
  const out = runExample('core.cjs', `${code}\nconsole.log(ring.decrypt(stored, 'tenant-1', 'users', 'email'));`);
  assert.deepEqual(out.trim().split('\n'), ['ALE_AUTH_FAILED', 'alice@example.com']);
});

test('README: the SQLite Drizzle example runs', { skip: process.versions.bun ? 'better-sqlite3 is a Node addon' : false }, () => {
  const out = runExample('sqlite.mjs', blockAfter('### SQLite'));
  assert.equal(out.trim(), "a@b.c { plan: 'pro' }");
});

test('README: the SveltyCMS drop-in example runs', () => {
  const out = runExample('sveltycms.mjs', blockAfter('## Adopting in SveltyCMS'));
  assert.deepEqual(out.trim().split('\n'), ['true true', 'Hello 1', 'title ALE_AUTH_FAILED', 'null']);
});
