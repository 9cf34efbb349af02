// drizzle-kit (a pinned dev dependency) against the package's search and
// range columns, run as an adopter runs it: its CLI on a drizzle.config.js
// in a project folder. On SQLite, PostgreSQL and MariaDB, `generate` writes
// the columns' types that docs/search.md ("Per dialect") gives, and
// PostgreSQL's GIN indexes; Drizzle's migrator then runs that migration and
// a custom one (`generate --custom`) holding the index statements, and
// search and range queries find their rows; a tenant key store declared in
// the schema module keys its tenants in the key table drizzle-kit made
// (`aleKeysTable`) once bound at start-up. Then `push`, which
// docs/search.md warns about, on SQLite and PostgreSQL: it leaves the
// indexes alone when the schema is written as the docs say (a
// `tablesFilter`, a declared GIN index), and breaks them, as the docs warn,
// when it is not; on SQLite a change that makes it rebuild the table drops
// the FTS5 triggers, which the statements run again restore. On MariaDB, where the docs say to use generate and
// migrate instead, push runs up to the data-loss question it asks, which
// lists the key table among the tables it would truncate. Run by
// scripts/test.mjs on Node 24 only: drizzle-kit is a Node tool.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ale, SECRET } from './helpers.mjs';
import { serverUrl } from './servers.mjs';

// The fixture is CommonJS because drizzle-kit requires the schema file;
// the check loads it, the package and Drizzle the same way, so that its
// tables, conditions and driver come from one copy of each module.
const require = createRequire(import.meta.url);
const FIXTURE = fileURLToPath(new URL('./fixtures/kit-schema.cjs', import.meta.url));
const { NAME, KEYS_TABLE, NOTES, names, people, keyStore, keyedTables, indexStatements } = require(FIXTURE);
// its CLI, which the package does not export: beside its main file
const KIT = join(dirname(require.resolve('drizzle-kit')), 'bin.cjs');
const keyRing = new ale.KeyRing([SECRET]);
/** The key store's KEK, given at start-up only: drizzle-kit never sees it. */
const KEK = 'kit-kek-0123456789-abcdefghijklmnop';

/**
 * A project folder for `dialect`: its schema.js (the fixture's table with
 * `options`), drizzle.config.js (`config` beside the dialect, schema and
 * out), and `kit(...args)`, which runs drizzle-kit's CLI there with no
 * terminal (a question it would ask is refused, and the timeout is a
 * backstop) and no secret in its environment: it loads the schema, and
 * the package with it, as `vite build` does, before any key is set. drizzle-kit's push prints an error and exits 0 all the same,
 * so `push` below reads what it printed.
 */
function project(dialect, config, options = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'ale-kit-'));
  const write = (schemaOptions, more = {}) => {
    const [f, d] = [JSON.stringify(FIXTURE), JSON.stringify(dialect)];
    writeFileSync(
      join(dir, 'schema.js'),
      `const f = require(${f});\nexports.people = f.people(${d}, ${JSON.stringify(schemaOptions)});\nObject.assign(exports, f.keyedTables(${d}, f.keyStore(${d})));\n`,
    );
    const full = { dialect: dialect === 'pg' ? 'postgresql' : dialect, schema: './schema.js', out: './drizzle', ...config, ...more };
    writeFileSync(join(dir, 'drizzle.config.js'), `module.exports = ${JSON.stringify(full)};\n`);
  };
  write(options);
  return {
    dir,
    migrations: join(dir, 'drizzle'),
    /** Rewrites the schema and the config, as an adopter edits them between runs. */
    write,
    kit(...args) {
      const env = { ...process.env };
      delete env.ENCRYPTION_KEY;
      delete env.SECRET_ENCRYPTION_KEY;
      const r = spawnSync(process.execPath, [KIT, ...args, '--config', 'drizzle.config.js'], { cwd: dir, env, encoding: 'utf8', timeout: 120_000, stdio: ['ignore', 'pipe', 'pipe'] });
      return { status: r.status, out: `${r.stdout}${r.stderr}` };
    },
    /** The SQL files `generate` wrote, by name. */
    sql: () =>
      readdirSync(join(dir, 'drizzle'))
        .filter((f) => f.endsWith('.sql'))
        .sort()
        .map((f) => ({ file: join(dir, 'drizzle', f), text: readFileSync(join(dir, 'drizzle', f), 'utf8') })),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** After test `t`: its tables dropped, its connection closed and project `p` removed, even when the drop fails. */
function cleanUp(t, p, drop, end) {
  t.after(async () => {
    try {
      await drop();
    } finally {
      await end();
      p.remove();
    }
  });
}

/**
 * `drizzle-kit push --verbose` in `p`, which must apply its changes: no
 * error, and no question refused. Returns the statements it ran, which it
 * lists before it runs them.
 */
function push(p) {
  const { status, out } = p.kit('push', '--verbose');
  assert.equal(status, 0, out);
  assert.doesNotMatch(out, /error|data loss|TTY/i, out);
  const listed = /current statements:\n([\s\S]*?)\n\[✓\] Changes applied/.exec(out);
  assert.ok(listed, out);
  return listed[1].split('\n').filter((line) => line.trim() !== '');
}

/**
 * `generate`, then `generate --custom` filled with the index statements, as
 * docs/search.md tells adopters; returns the table's migration text.
 */
function generate(p, dialect) {
  const made = p.kit('generate');
  assert.equal(made.status, 0, made.out);
  const custom = p.kit('generate', '--custom', '--name', 'ale_indexes');
  assert.equal(custom.status, 0, custom.out);
  const [tableSql, customSql] = p.sql();
  assert.match(customSql.file, /_ale_indexes\.sql$/);
  writeFileSync(customSql.file, indexStatements(dialect, people(dialect)).join('\n--> statement-breakpoint\n'));
  return tableSql.text;
}

/**
 * Writes two rows through `db`, reads them back, and asks a blind index, a
 * search and a range query: what the candidates hold after the exact test
 * equals the answer over every row, decrypted, so far.
 */
async function queriesAnswer(db, dialect, ids) {
  const table = people(dialect, { keyRing });
  const { matchBlindIndex, searchContains, rangeGt } = require(`@sveltycms/ale/drizzle/${dialect}`);
  const rows = [
    { id: ids[0], name: 'Jürgen Müller', bio: 'Geboren in Köln', profile: { langs: ['de', 'tr'] }, total: -15.5 },
    { id: ids[1], name: 'Anna Schmidt', bio: '', profile: null, total: 730 },
  ];
  for (const row of rows) await db.insert(table).values({ ...row, nameIndex: row.name, nameSearch: row.name, totalRange: row.total });
  const all = await db.select().from(table);
  for (const row of rows) {
    const { bio, profile, total } = all.find((r) => r.id === row.id);
    assert.deepEqual({ bio, profile, total }, { bio: row.bio, profile: row.profile, total: row.total });
  }
  const answer = async (where, value) => (await db.select().from(table).where(where)).filter((row) => where.matches(value(row))).map((row) => row.id).sort((a, b) => a - b);
  const oracle = (keep) => all.filter(keep).map((row) => row.id).sort((a, b) => a - b);
  const byIndex = (await db.select().from(table).where(matchBlindIndex(table.nameIndex, 'Anna Schmidt'))).map((row) => row.id).sort((a, b) => a - b);
  assert.deepEqual(byIndex, oracle((row) => row.name === 'Anna Schmidt'));
  assert.deepEqual(await answer(searchContains(table.nameSearch, 'ülle'), (row) => row.name), oracle((row) => row.name.includes('ülle')));
  assert.deepEqual(await answer(rangeGt(table.totalRange, 0), (row) => row.total), oracle((row) => row.total > 0));
}

/**
 * The key store on the tables drizzle-kit made: bound to `db` at start-up,
 * it keeps a tenant's keys in its key table, a row under them reads back
 * and is found by its blind index, and a shred makes it unreadable.
 */
async function keyStoreWorks(db, dialect) {
  const { matchBlindIndex, withTenant } = require(`@sveltycms/ale/drizzle/${dialect}`);
  const keys = keyStore(dialect);
  const { aleKeys, notes } = keyedTables(dialect, keys);
  keys.bind(db, { kek: KEK });
  await keys.ready();
  await withTenant('acme', () => db.insert(notes).values({ id: 1, body: 'hello acme', bodyIndex: 'hello acme' }));
  const found = await withTenant('acme', () => db.select().from(notes).where(matchBlindIndex(notes.bodyIndex, 'hello acme')));
  assert.deepEqual(found.map((row) => [row.id, row.body]), [[1, 'hello acme']]);
  assert.deepEqual((await db.select().from(aleKeys)).map((row) => [row.tenant, row.purpose]).sort(), [['acme', 'data'], ['acme', 'index']]);
  await keys.shred('acme');
  await assert.rejects(() => withTenant('acme', () => db.select().from(notes)), { code: 'ALE_KEY_SHREDDED' });
}

test('SQLite: generate writes text columns, and the migrations with searchIndexSql make a table that searches', async (t) => {
  const { default: Database } = await import('better-sqlite3');
  const { drizzle } = require('drizzle-orm/better-sqlite3');
  const { migrate } = require('drizzle-orm/better-sqlite3/migrator');
  const p = project('sqlite', { dbCredentials: { url: './app.db' } });
  const sqlite = new Database(join(p.dir, 'app.db'));
  t.after(() => (sqlite.close(), p.remove()));
  const ddl = generate(p, 'sqlite');
  for (const column of ['name', 'name_index', 'profile', 'name_search', 'total', 'total_range']) assert.match(ddl, new RegExp(`\`${column}\` text,?\\n`));
  assert.match(ddl, /`bio` blob,\n/);
  const db = drizzle(sqlite);
  migrate(db, { migrationsFolder: p.migrations });
  await queriesAnswer(db, 'sqlite', [1, 2]);
  await keyStoreWorks(db, 'sqlite');
  const fts = () => sqlite.prepare("SELECT name FROM sqlite_master WHERE name LIKE 'kit_people_%' AND type IN ('table', 'trigger') ORDER BY name").pluck().all();
  const made = fts();
  assert.ok(made.includes(names.nameSearch) && made.includes(names.totalRange), made.join());

  // push, with the FTS5 tables filtered out as docs/search.md says: no
  // question, the new column added, the FTS5 tables and triggers kept
  const filtered = [names.nameSearch, names.totalRange].flatMap((fts) => [`!${fts}`, `!${fts}_*`]);
  p.write({ note: true }, { tablesFilter: filtered });
  assert.deepEqual(push(p), [`ALTER TABLE \`${NAME}\` ADD \`note\` text;`]);
  assert.equal(sqlite.prepare(`SELECT note FROM ${NAME}`).all().length, 2);
  assert.deepEqual(fts(), made);
  await queriesAnswer(db, 'sqlite', [3, 4]);

  // a change ALTER TABLE cannot make: drizzle-kit rebuilds the table (a new
  // one, the rows copied, the old one dropped, the new one renamed), and
  // the triggers go with the old one, silently; a row written then is
  // missing from the index, until the statements run again (docs/search.md)
  p.write({ note: 'default' }, { tablesFilter: filtered });
  assert.ok(push(p).includes(`DROP TABLE \`${NAME}\`;`));
  const triggers = made.filter((name) => /_(insert|delete|update)$/.test(name));
  assert.equal(triggers.length, 6);
  assert.deepEqual(
    fts(),
    made.filter((name) => !triggers.includes(name)),
  );
  const { searchContains } = require('@sveltycms/ale/drizzle/sqlite');
  const table = people('sqlite', { keyRing });
  await db.insert(table).values({ id: 5, name: 'Müller', nameSearch: 'Müller', total: 1, totalRange: 1 });
  const found = async () => (await db.select().from(table).where(searchContains(table.nameSearch, 'ülle'))).map((row) => row.id);
  assert.ok(!(await found()).includes(5), 'the row written after the rebuild is not in the index');
  for (const statement of indexStatements('sqlite', people('sqlite'))) sqlite.exec(statement);
  assert.deepEqual(fts(), made);
  assert.ok((await found()).includes(5));
  await queriesAnswer(db, 'sqlite', [6, 7]);

  // push --force without the filter, the docs' warning: it drops the first
  // FTS5 table and stops on its first shadow table, which went with it; the
  // triggers stay, and the next insert fails
  p.write({ note: 'default' });
  const forced = p.kit('push', '--force');
  assert.match(forced.out, new RegExp(`no such table: ${names.nameSearch}_data`), forced.out);
  const shadows = ['', '_config', '_data', '_docsize', '_idx'].map((end) => `${names.nameSearch}${end}`);
  assert.deepEqual(
    fts(),
    made.filter((name) => !shadows.includes(name)),
  );
  assert.throws(() => sqlite.prepare(`INSERT INTO ${NAME} (id, name_search, total_range) VALUES (10, '', '')`).run(), /no such table/);
  // the docs' remedy: the statements again make the FTS5 table anew, beside
  // the triggers, and fill it from every row already there
  for (const statement of indexStatements('sqlite', people('sqlite'))) sqlite.exec(statement);
  assert.deepEqual(fts(), made);
  await queriesAnswer(db, 'sqlite', [8, 9]);
});

const pgUrl = serverUrl('PG_URL');
if (pgUrl) test('PostgreSQL: generate writes bigint[] columns and their GIN indexes; push keeps declared indexes and drops undeclared ones', async (t) => {
  const { default: postgres } = await import('postgres');
  const { drizzle } = require('drizzle-orm/postgres-js');
  const { migrate } = require('drizzle-orm/postgres-js/migrator');
  const client = postgres(pgUrl, { max: 1, onnotice: () => {} });
  const drop = () => client.unsafe(`DROP TABLE IF EXISTS ${NAME}, ${NOTES}, ${KEYS_TABLE}; DROP SCHEMA IF EXISTS kit_drizzle CASCADE`);
  await drop();
  // tablesFilter: the test database holds the other suites' tables, which push would offer to drop
  const p = project('pg', { dbCredentials: { url: pgUrl }, tablesFilter: [NAME, NOTES, KEYS_TABLE] });
  cleanUp(t, p, drop, () => client.end());
  const ddl = generate(p, 'pg');
  for (const [column, type] of [
    ['name', 'text'],
    ['name_index', 'char\\(43\\)'],
    ['bio', '"bytea"'], // drizzle-kit quotes it, which PostgreSQL reads as the same type
    ['profile', 'text'],
  ]) {
    assert.match(ddl, new RegExp(`"${column}" ${type},\\n`));
  }
  for (const column of ['name_search', 'total_range']) assert.match(ddl, new RegExp(`"${column}" bigint\\[\\],?\\n`));
  for (const [index, column] of [
    [names.nameSearch, 'name_search'],
    [names.totalRange, 'total_range'],
  ]) {
    assert.match(ddl, new RegExp(`CREATE INDEX "${index}" ON "${NAME}" USING gin \\("${column}"\\)`));
  }
  const db = drizzle(client);
  await migrate(db, { migrationsFolder: p.migrations, migrationsSchema: 'kit_drizzle' });
  await queriesAnswer(db, 'pg', [1, 2]);
  await keyStoreWorks(db, 'pg');
  const indexes = async () => (await client`SELECT indexname FROM pg_indexes WHERE tablename = ${NAME} AND indexdef LIKE '%USING gin%' ORDER BY 1`).map((r) => r.indexname);
  const statistics = async () => (await client`SELECT attstattarget FROM pg_attribute WHERE attrelid = ${NAME}::regclass AND attname = 'name_search'`)[0].attstattarget;
  assert.deepEqual(await indexes(), [names.nameSearch, names.totalRange]);
  assert.equal(await statistics(), 10000);

  // push with the indexes declared: the new column added, the indexes and the statistics target kept
  p.write({ note: true });
  assert.deepEqual(push(p), [`ALTER TABLE "${NAME}" ADD COLUMN "note" text;`]);
  assert.equal((await client`SELECT count(note) AS n FROM ${client(NAME)}`)[0].n, '0');
  assert.deepEqual(await indexes(), [names.nameSearch, names.totalRange]);
  assert.equal(await statistics(), 10000);
  await queriesAnswer(db, 'pg', [3, 4]);

  // push with them left out of the schema, the docs' warning: both dropped, with no question
  p.write({ note: true, gin: false });
  assert.deepEqual(push(p), [`DROP INDEX "${names.nameSearch}";`, `DROP INDEX "${names.totalRange}";`]);
  assert.deepEqual(await indexes(), []);
});

const mysqlUrl = serverUrl('MYSQL_URL');
if (mysqlUrl) test('MariaDB: generate writes mediumtext columns, and the migrations with searchIndexSql and rangeTokenTableSql make a table that searches', async (t) => {
  const { default: mysql } = await import('mysql2/promise');
  const { drizzle } = require('drizzle-orm/mysql2');
  const { migrate } = require('drizzle-orm/mysql2/migrator');
  const pool = mysql.createPool({ uri: mysqlUrl, connectionLimit: 1 });
  const drop = async () => {
    for (const table of [names.tokenTable, NAME, NOTES, KEYS_TABLE, 'kit_migrations']) await pool.query(`DROP TABLE IF EXISTS ${table}`);
  };
  await drop();
  const p = project('mysql', { dbCredentials: { url: mysqlUrl } });
  cleanUp(t, p, drop, () => pool.end());
  const ddl = generate(p, 'mysql');
  for (const [column, type] of [
    ['name', 'longtext'],
    ['name_index', 'char\\(43\\)'],
    ['bio', 'longblob'],
    ['profile', 'longtext'],
  ]) {
    assert.match(ddl, new RegExp(`\`${column}\` ${type},\\n`));
  }
  for (const column of ['name_search', 'total_range']) assert.match(ddl, new RegExp(`\`${column}\` mediumtext,\\n`));
  const db = drizzle(pool);
  await migrate(db, { migrationsFolder: p.migrations, migrationsTable: 'kit_migrations' });
  await queriesAnswer(db, 'mysql', [1, 2]);
  await keyStoreWorks(db, 'mysql');
  const [fulltext] = await pool.query(`SELECT index_name FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = ? AND index_type = 'FULLTEXT'`, [NAME]);
  assert.deepEqual(
    fulltext.map((r) => r.index_name ?? r.INDEX_NAME),
    [names.nameSearch],
  );
  const [pairs] = await pool.query(`SELECT count(*) AS n FROM ${names.tokenTable}`);
  assert.ok(Number(pairs[0].n) > 0, 'the token table holds the rows’ pairs');

  // push, which docs/search.md says not to use on MariaDB: it reads
  // `int(11)` as a change of type, so the tables with rows would be
  // truncated, the key table among them (every tenant's keys); the
  // FULLTEXT index and the token table would go. It asks first, and with
  // no terminal the question is refused, so nothing is applied.
  p.write({}, { tablesFilter: [NAME, NOTES, KEYS_TABLE, names.tokenTable] });
  const { out } = p.kit('push', '--verbose');
  for (const statement of [`truncate table ${KEYS_TABLE};`, `DROP TABLE \`${names.tokenTable}\`;`, `DROP INDEX \`${names.nameSearch}\` ON \`${NAME}\`;`]) {
    assert.ok(out.split('\n').includes(statement), `push would run ${statement}\n${out}`);
  }
  assert.match(out, /THIS ACTION WILL CAUSE DATA LOSS[\s\S]*Interactive prompts require a TTY/, out);
  const [kept] = await pool.query(`SELECT (SELECT count(*) FROM ${KEYS_TABLE}) AS k, (SELECT count(*) FROM ${names.tokenTable}) AS t`);
  assert.deepEqual([Number(kept[0].k), Number(kept[0].t)], [2, Number(pairs[0].n)]);
});
