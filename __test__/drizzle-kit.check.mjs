// drizzle-kit (a pinned dev dependency) against the package's columns,
// run as an adopter runs it: its CLI on a drizzle.config.js in a project
// folder (fixtures/kit-project.mjs).
// - On SQLite, PostgreSQL and MariaDB, `generate` writes the columns'
//   types that the docs give, and PostgreSQL's GIN indexes. Drizzle's
//   migrator runs that migration and a custom one (`generate --custom`)
//   holding the index statements; then search and range queries find
//   their rows, and a tenant key store declared in the schema module keys
//   its tenants in the key table drizzle-kit made (`aleKeysTable`).
// - `push` on SQLite and PostgreSQL leaves the indexes alone when the
//   schema is written as docs/search.md says (a `tablesFilter`, a declared
//   GIN index), and breaks them, as it warns, when it is not. On SQLite, a
//   change that makes drizzle-kit rebuild the table drops the FTS5
//   triggers, and the statements run again restore them.
// - On MariaDB, where the docs say to use generate and migrate instead,
//   push runs up to its data-loss question, which lists the key table
//   among the tables it would truncate.
// Run by scripts/test.mjs on Node 24 only: drizzle-kit is a Node tool.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { ale, eventually, SECRET } from './helpers.mjs';
import { serverUrl } from './servers.mjs';
import { KEK } from './tenant-keys-suite.mjs';
import { cleanUp, FIXTURE, generate, KIT_VERSION, project, push } from './fixtures/kit-project.mjs';

// The fixture is CommonJS because drizzle-kit requires the schema file;
// the check loads it, the package and Drizzle the same way, so that its
// tables, conditions and driver come from one copy of each module.
const require = createRequire(import.meta.url);
const { NAME, KEYS_TABLE, NOTES, names, people, keyStore, keyedTables, indexStatements } = require(FIXTURE);
const keyRing = new ale.KeyRing([SECRET]);
/** The ids of `rows`, in order. */
const idsOf = (rows) => rows.map((row) => row.id).sort((a, b) => a - b);

test('drizzle-kit is the version the docs were checked with', () => {
  assert.equal(KIT_VERSION, '0.31.11');
});

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
  const answer = async (where, value) => idsOf((await db.select().from(table).where(where)).filter((row) => where.matches(value(row))));
  const oracle = (keep) => idsOf(all.filter(keep));
  assert.deepEqual(idsOf(await db.select().from(table).where(matchBlindIndex(table.nameIndex, 'Anna Schmidt'))), oracle((row) => row.name === 'Anna Schmidt'));
  // MariaDB's FULLTEXT shows a commit a moment late: the answer may take a few tries
  const contains = searchContains(table.nameSearch, 'ülle');
  await eventually(() => answer(contains, (row) => row.name), oracle((row) => row.name.includes('ülle')), 'searchContains', dialect === 'mysql');
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
  try {
    await keys.ready();
    await withTenant('acme', () => db.insert(notes).values({ id: 1, body: 'hello acme', bodyIndex: 'hello acme' }));
    const found = await withTenant('acme', () => db.select().from(notes).where(matchBlindIndex(notes.bodyIndex, 'hello acme')));
    assert.deepEqual(found.map((row) => [row.id, row.body]), [[1, 'hello acme']]);
    assert.deepEqual((await db.select().from(aleKeys)).map((row) => [row.tenant, row.purpose]).sort(), [['acme', 'data'], ['acme', 'index']]);
    await keys.shred('acme');
    await assert.rejects(() => withTenant('acme', () => db.select().from(notes)), { code: 'ALE_KEY_SHREDDED' });
  } finally {
    await keys.close();
  }
}

test('SQLite: generate and migrate make tables that search and key; push keeps filtered FTS5 tables, loses the triggers when it rebuilds the table, and breaks them with --force; the statements again restore them', async (t) => {
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
  const reindex = () => {
    for (const statement of indexStatements('sqlite', people('sqlite'))) sqlite.exec(statement);
  };
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

  // a change SQLite's ALTER TABLE cannot make (an existing column's
  // default): drizzle-kit rebuilds the table (a new one, the rows copied,
  // the old one dropped, the new one renamed), in the migration generate
  // writes and in push, and the triggers go with the old table, silently;
  // a row written then is missing from the index until the statements run
  // again (docs/search.md)
  assert.equal(p.kit('generate').status, 0); // the column, as a migration: the snapshot the next one is made from
  p.write({ note: 'default' }, { tablesFilter: filtered });
  assert.equal(p.kit('generate').status, 0);
  const rebuild = p.sql().at(-1).text;
  for (const step of [`CREATE TABLE \`__new_${NAME}\``, `DROP TABLE \`${NAME}\`;`, `ALTER TABLE \`__new_${NAME}\` RENAME TO \`${NAME}\`;`]) assert.ok(rebuild.includes(step), rebuild);
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
  const found = async () => idsOf(await db.select().from(table).where(searchContains(table.nameSearch, 'ülle')));
  assert.deepEqual(await found(), [1, 3], 'the rows copied keep their entries; the row written after the rebuild has none');
  reindex();
  assert.deepEqual(fts(), made);
  assert.deepEqual(await found(), [1, 3, 5]);
  await queriesAnswer(db, 'sqlite', [6, 7]);

  // push --force without the filter, the docs' warning: it drops the first
  // FTS5 table and stops on its first shadow table, which went with it; the
  // triggers stay, and the next insert fails. The schema keeps the default,
  // so push sees no change but the FTS5 tables.
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
  reindex();
  assert.deepEqual(fts(), made);
  await queriesAnswer(db, 'sqlite', [8, 9]);
});

const pgUrl = serverUrl('PG_URL');
if (pgUrl) test('PostgreSQL: generate and migrate make tables that search and key, with the GIN indexes declared; push keeps declared indexes and drops undeclared ones', async (t) => {
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

  // push with the indexes declared: the new column added, the indexes and
  // the statistics target kept
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
if (mysqlUrl) test('MariaDB: generate and migrate make tables that search and key, with FULLTEXT and a token table; push would truncate the key table, and asks first', async (t) => {
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
  const fulltext = async () => {
    const [rows] = await pool.query(`SELECT index_name FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = ? AND index_type = 'FULLTEXT'`, [NAME]);
    return rows.map((r) => r.index_name ?? r.INDEX_NAME);
  };
  assert.deepEqual(await fulltext(), [names.nameSearch]);
  const [pairs] = await pool.query(`SELECT count(*) AS n FROM ${names.tokenTable}`);
  assert.ok(Number(pairs[0].n) > 0, 'the token table holds the rows’ pairs');

  // push, which docs/search.md says not to use on MariaDB: it reads
  // `int(11)` as a change of type, so the tables with rows would be
  // truncated, the key table among them (every tenant's keys); the
  // FULLTEXT index and the token table would go. It asks first (not with
  // --force, which this never passes). With no terminal the question
  // fails, and drizzle-kit prints the error and applies nothing; a version
  // that went on without an answer would apply it all, to the tables the
  // filter names and no others.
  p.write({}, { tablesFilter: [NAME, NOTES, KEYS_TABLE, names.tokenTable] });
  const { out } = p.kit('push', '--verbose');
  assert.doesNotMatch(out, /Changes applied/, out);
  for (const statement of [`truncate table ${KEYS_TABLE};`, `DROP TABLE \`${names.tokenTable}\`;`, `DROP INDEX \`${names.nameSearch}\` ON \`${NAME}\`;`]) {
    assert.ok(out.split('\n').includes(statement), `push would run ${statement}\n${out}`);
  }
  assert.match(out, /THIS ACTION WILL CAUSE DATA LOSS[\s\S]*Interactive prompts require a TTY/, out);
  const [kept] = await pool.query(`SELECT (SELECT count(*) FROM ${KEYS_TABLE}) AS k, (SELECT count(*) FROM ${names.tokenTable}) AS t`);
  assert.deepEqual([Number(kept[0].k), Number(kept[0].t)], [2, Number(pairs[0].n)]);
  assert.deepEqual(await fulltext(), [names.nameSearch]);
});
