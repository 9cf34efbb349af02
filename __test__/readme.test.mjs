// The documentation's examples (README.md, docs/*.md) run as written, each in
// a child process of this runtime. The blocks of docs/drizzle.md that
// continue its SQLite example (bad rows, migration, legacy reads,
// matchBlindIndex) run after it, with the rows they need added between; the
// PostgreSQL and MariaDB blocks run in drizzle-pg.test.mjs and
// drizzle-mysql.test.mjs. better-sqlite3 is a Node addon, so on Bun the
// SQLite examples run on bun:sqlite, as docs/drizzle.md's heading offers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OLD_SECRET, SECRET } from './helpers.mjs';
import { EXAMPLES, PAGES, example, pageBlocks, pageText, runExample, sqliteExample } from './fixtures/readme-examples.mjs';

const onBun = Boolean(process.versions.bun);
const BAD_ENVELOPE = 'v1:AAAAAAAAAAAAAAAAAAAAAA:AAAAAAAAAAAAAAAAAAAAAA:AAAA';
const MARK = '--- the SQLite example is done';
/** Runs the SQLite example, then `code` in the same module; returns the lines `code` printed. */
const afterSqlite = (name, code) => {
  const out = runExample(name, `${sqliteExample('sqlite')}\nconsole.log('${MARK}');\n${code}`);
  return out.slice(out.indexOf(MARK) + MARK.length).trim().split('\n');
};

test('docs: every ```js block of README.md, docs/*.md and CONTRIBUTING.md is run by a test', () => {
  assert.ok(PAGES.includes('README.md') && PAGES.includes('CONTRIBUTING.md') && PAGES.some((p) => p.startsWith('docs/')), `pages: ${PAGES}`);
  const blocks = PAGES.flatMap((page) => {
    const found = pageBlocks(page).filter((b) => b.lang === 'js');
    assert.equal(found.length, (pageText(page).match(/^\s*```js\s*$/gm) ?? []).length, `${page}: the block parser missed a \`\`\`js fence`);
    return found;
  });
  const key = ({ page, heading, nth }) => `${page} ${heading} #${nth}`;
  const listed = Object.values(EXAMPLES).map(key).sort();
  assert.deepEqual(blocks.map(key).sort(), listed, 'a js block that fixtures/readme-examples.mjs does not list, or a listed one that is gone');
  const files = new Set(readdirSync(new URL('.', import.meta.url)));
  for (const [id, { test: file }] of Object.entries(EXAMPLES)) {
    assert.ok(files.has(file), `${file} does not exist`);
    const runs = new RegExp(`[eE]xample\\('${id}'[,)]`); // example('id'), sqliteExample('id') or serverExample('id', …)
    assert.match(readFileSync(new URL(file, import.meta.url), 'utf8'), runs, `${file} does not run the example '${id}'`);
  }
});

test('README: the core API example runs and round-trips', () => {
  const code = example('core').replace("ring.decrypt(stored, 'tenant-2', 'users', 'email');", "try { ring.decrypt(stored, 'tenant-2', 'users', 'email'); } catch (e) { console.log(e.code); }");
  const out = runExample('core.cjs', `${code}\nconsole.log(ring.decrypt(stored, 'tenant-1', 'users', 'email'));`);
  assert.deepEqual(out.trim().split('\n'), ['ALE_AUTH_FAILED', 'alice@example.com']);
});

test('docs/tenant-keys.md: the fleet-count example runs: three values sealed, flushed, and counted on the data key', () => {
  const out = runExample('fleet-counts.mjs', sqliteExample('fleet-counts'), { env: { KEY_ENCRYPTION_KEY: OLD_SECRET } });
  assert.match(out, /\[ 'data 3', 'index 0' \]|\[\s*"data 3",\s*"index 0",?\s*\]/);
});

test('docs/tenant-keys.md: the tenant-key example runs: a value under the tenant key, then ALE_KEY_SHREDDED after the shred', () => {
  const out = runExample('tenant-keys.mjs', sqliteExample('tenant-keys'), { env: { KEY_ENCRYPTION_KEY: OLD_SECRET } });
  assert.deepEqual(out.trim().split('\n'), ['hello', 'ALE_KEY_SHREDDED']);
});

test('docs/drizzle.md: a key store declared in the schema and bound at start-up seals under the tenant key', () => {
  const out = runExample('declared-keys.mjs', `${sqliteExample('declared-keys')}
console.log(client.prepare('SELECT body FROM notes').get().body.slice(0, 3));
console.log((await keys.withTenant('acme', () => db.select().from(notes)))[0].body);`, { env: { KEY_ENCRYPTION_KEY: OLD_SECRET } });
  assert.deepEqual(out.trim().split('\n'), ['v2:', 'bound at start-up']);
});

test('README: the short Drizzle example runs and stores an envelope', () => {
  const out = runExample('quick-drizzle.mjs', sqliteExample('quick-drizzle'));
  assert.deepEqual(out.trim().split('\n'), ['a@b.c', 'v1:']);
});

test('docs/drizzle.md: the SQLite example runs', () => {
  const out = runExample('sqlite.mjs', sqliteExample('sqlite'));
  // the example's comment shows Node's console.log; Bun prints objects over several lines
  assert.equal(out.trim(), onBun ? 'a@b.c {\n  plan: "pro",\n}' : "a@b.c { plan: 'pro' }");
});

test('docs/drizzle.md: the same schema through node:sqlite behind sqlite-proxy', () => {
  const out = afterSqlite('sqlite-proxy.mjs', example('sqlite-proxy'));
  assert.deepEqual(out, ['b@c.d v1:']);
});

test('docs/drizzle.md: bad rows, read with readWithFailures', () => {
  const out = afterSqlite('bad-rows.mjs', `client.prepare("INSERT INTO users (id, tenant_id, email) VALUES (2, 'tenant-1', ?)").run('${BAD_ENVELOPE}');
${example('bad-rows')}
console.log(JSON.stringify({ emails: rows.map((r) => r.email), failures }));`);
  const { emails, failures } = JSON.parse(out.join('\n'));
  assert.deepEqual(emails, ['a@b.c', null]);
  assert.deepEqual(failures.map(({ key, column, code }) => ({ key, column, code })), [{ key: 2, column: 'email', code: 'ALE_AUTH_FAILED' }]);
  assert.ok(!failures[0].message.includes(BAD_ENVELOPE));
});

test('docs/drizzle.md: migratePlaintext encrypts the plaintext rows of every tenant', () => {
  const out = afterSqlite('migrate.mjs', `import { isEnvelope } from '@sveltycms/ale';
client.exec("INSERT INTO users (id, tenant_id, email) VALUES (2, 'tenant-1', 'b@c.d'), (3, 'tenant-2', 'c@d.e')");
${example('migrate')}
console.log(JSON.stringify(client.prepare('SELECT email FROM users ORDER BY id').all().map((r) => isEnvelope(r.email))));
for (const t of ['tenant-1', 'tenant-2']) {
  const rows = await withTenant(t, () => db.select().from(users).where(eq(users.tenantId, t)).orderBy(users.id));
  console.log(t, rows.map((r) => r.email).join(' '));
}`);
  assert.deepEqual(out, ['3 rows, 2 encrypted', '[true,true,true]', 'tenant-1 a@b.c b@c.d', 'tenant-2 c@d.e']);
});

test('docs/drizzle.md: legacyPlaintext serves an unmigrated row until its date, with a warning', () => {
  const block = example('legacy-plaintext');
  const until = /until: '([\d-]+)'/.exec(block)[1];
  const lines = afterSqlite('legacy.mjs', `client.exec("INSERT INTO users (id, tenant_id, email) VALUES (2, 'tenant-1', 'plain@old.row')");
process.on('warning', (w) => console.log('warning', w.code));
const email = ${block}
const legacyUsers = sqliteTable('users', { id: integer('id').primaryKey(), email });
try {
  const rows = await withTenant('tenant-1', () => db.select().from(legacyUsers).orderBy(legacyUsers.id));
  console.log(JSON.stringify(rows.map((r) => r.email)));
} catch (e) {
  console.log(e.code);
}
await new Promise((r) => setTimeout(r, 10)); // warnings are emitted on a later tick`);
  // the example's date is in docs/drizzle.md; after it, the same read must fail
  if (Date.now() < Date.parse(until)) assert.deepEqual(lines.sort(), ['["a@b.c","plain@old.row"]', 'warning ALE_LEGACY_PLAINTEXT']);
  else assert.deepEqual(lines, ['ALE_MALFORMED_ENVELOPE']);
});

test('docs/drizzle.md: matchBlindIndex finds a row indexed under the previous key', () => {
  const cwd = mkdtempSync(join(tmpdir(), 'ale-readme-'));
  try {
    // the SQLite example, run under the old key, leaves cms.db with one row
    runExample('sqlite-old.mjs', sqliteExample('sqlite'), { cwd, env: { ENCRYPTION_KEY: OLD_SECRET } });
    const block = example('match-blind-index');
    const column = /^\/\/\s+(emailIndex: .*)$/m.exec(block)[1]; // the column the block's comment describes
    const imports = sqliteExample('sqlite').split('\n').filter((l) => l.startsWith('import '));
    const out = runExample('match.mjs', `${imports.join('\n')}
import { KeyRing } from '@sveltycms/ale';
const users = sqliteTable('users', {
  id: integer('id').primaryKey(),
  email: encryptedText('email', { collection: 'users' }),
  ${column}
});
const db = drizzle(new Database('cms.db'));
const byEq = await withTenant('tenant-1', () => db.select().from(users).where(eq(users.emailIndex, 'a@b.c')));
${block}
console.log(byEq.length, JSON.stringify(rows.map((r) => r.email)));`, { cwd, env: { ENCRYPTION_KEY: SECRET, ENCRYPTION_KEY_PREVIOUS: OLD_SECRET } });
    // eq() hashes under the new primary key only: 0 rows; matchBlindIndex finds it
    assert.equal(out.trim(), '0 ["a@b.c"]');
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
});

test('docs/search.md: the example finds the value by its tokens and by the exact test', () => {
  assert.equal(runExample('search.mjs', example('search')).trim(), 'true true');
});

test('docs/search.md: the Drizzle example finds rows by contains, prefix and words, in exact pages, a page FTS5 drives newest first, and one through a prepared statement', () => {
  const out = runExample('search-drizzle.mjs', sqliteExample('search-drizzle'));
  // Bun prints strings in arrays with double quotes, Node with single ones
  assert.deepEqual(out.trim().replaceAll('"', "'").split('\n'), ["[ 'Jürgen Müller', 'MÜLLER GmbH' ]", "[ 'Anna Schmidt' ]", "[ 'Jürgen Müller' ]", "[ 'MÜLLER GmbH', 'Jürgen Müller' ]", "[ 'Jürgen Müller', 'MÜLLER GmbH' ]"]);
});

test('README: the ranges example finds rows over a bound and pages them in value order', () => {
  const out = runExample('ranges.mjs', sqliteExample('ranges'));
  assert.deepEqual(out.trim().split('\n'), ['[ 730.5, 990 ]', '[ 990, 730.5, 120 ]']);
});

test('docs/search.md: the ranges example finds dates and numbers in ranges, and pages them newest first', () => {
  const out = runExample('ranges-drizzle.mjs', sqliteExample('ranges-drizzle'));
  assert.deepEqual(out.trim().replaceAll('"', "'").split('\n'), ['[ 1961, 1989, 1942 ]', '2', "[ '1995-01-01', '1989-12-31' ]"]);
});

test('docs/sveltycms.md: the drop-in example runs', () => {
  const out = runExample('sveltycms.mjs', example('sveltycms'));
  assert.deepEqual(out.trim().split('\n'), ['true true', 'Hello 1', 'title ALE_AUTH_FAILED', 'null']);
});
