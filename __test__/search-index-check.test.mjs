// searchIndexCheck on every SQLite driver of this runtime: it finds a
// missing FTS5 table, a table that does not index the column, each missing
// trigger (as after a table rebuild by drizzle-kit), a trigger that fires
// on updates of other columns only or misses a row whose key changes, and,
// with `rows`, rows the index
// missed; and it finds nothing once searchIndexSql's statements ran again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import * as m from '@sveltycms/ale/drizzle/sqlite';
import { openSqlite, SQLITE_DRIVERS } from '../bench/sqlite.mjs';
import { ale, SECRET } from './helpers.mjs';

const ring = new ale.KeyRing([SECRET]);
const on = { collection: 'users', tenant: 'acme', keyRing: ring, field: 'name' };
const users = sqliteTable('users', {
  id: integer('id').primaryKey(),
  name: m.encryptedText('name', on),
  nameSearch: m.searchIndexColumn('name_search', { ...on, fts: 'users_name_fts' }),
  bio: text('bio'),
});
const scores = sqliteTable('scores', {
  id: integer('id').primaryKey(),
  points: m.encryptedNumber('points', { ...on, field: 'points' }),
  pointsRange: m.rangeIndexColumn('points_range', { ...on, field: 'points', type: 'number', fts: 'scores_points_fts' }),
});
const scanned = sqliteTable('users', { id: integer('id').primaryKey(), nameSearch: m.searchIndexColumn('name_search', on) });
const CREATE = 'CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT, name_search TEXT, bio TEXT)';
const codes = (check) => check.problems.map((p) => p.code);

/** drizzle-kit's rebuild of `table` (made by `create`): a new table, the rows copied, the old one dropped, the new one renamed. */
function rebuild(s, create, table) {
  s.exec(create.replace(table, `__new_${table}`));
  s.exec(`INSERT INTO __new_${table} SELECT * FROM ${table}`);
  s.exec(`DROP TABLE ${table}`);
  s.exec(`ALTER TABLE __new_${table} RENAME TO ${table}`);
}

/** A fresh database on `driver`, closed and removed after `body`. */
async function withDb(driver, body) {
  const dir = mkdtempSync(join(tmpdir(), 'ale-index-check-'));
  const s = await openSqlite(join(dir, 'users.db'), { driver });
  try {
    return await body(s);
  } finally {
    s.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

for (const driver of SQLITE_DRIVERS) {
  test(`searchIndexCheck (${driver}): a table rebuilt as drizzle-kit does loses its triggers, which the check names, and the rows written since; searchIndexSql again puts both right`, async () => {
    await withDb(driver, async (s) => {
      s.exec(CREATE);
      const none = await m.searchIndexCheck(s.db, users.nameSearch);
      assert.deepEqual(codes(none), ['ALE_SEARCH_FTS_MISSING']);
      assert.match(none.problems[0].message, /users_name_fts.*searchIndexSql/);
      for (const stmt of m.searchIndexSql(users, users.nameSearch, 'users_name_fts')) s.exec(stmt);
      await s.db.insert(users).values({ id: 1, name: 'Jane Müller', nameSearch: 'Jane Müller' });
      assert.deepEqual(await m.searchIndexCheck(s.db, users.nameSearch, { rows: true }), { ok: true, problems: [] });

      rebuild(s, CREATE, 'users');
      const rebuilt = await m.searchIndexCheck(s.db, users.nameSearch, { rows: true });
      assert.equal(rebuilt.ok, false);
      assert.deepEqual(codes(rebuilt), ['ALE_SEARCH_TRIGGER_MISSING', 'ALE_SEARCH_TRIGGER_MISSING', 'ALE_SEARCH_TRIGGER_MISSING']);
      assert.deepEqual(rebuilt.problems.map((p) => /on every (INSERT|DELETE|UPDATE)/.exec(p.message)?.[1]), ['INSERT', 'DELETE', 'UPDATE']);

      await s.db.insert(users).values({ id: 2, name: 'Otto Müller', nameSearch: 'Otto Müller' });
      const found = async () => (await s.db.select({ id: users.id }).from(users).where(m.searchWords(users.nameSearch, 'müller'))).map((r) => r.id);
      assert.deepEqual(await found(), [1], 'the row written without triggers is missed');
      assert.deepEqual(codes(await m.searchIndexCheck(s.db, users.nameSearch, { rows: true })).at(-1), 'ALE_SEARCH_INDEX_STALE');

      for (const stmt of m.searchIndexSql(users, users.nameSearch, 'users_name_fts')) s.exec(stmt);
      assert.deepEqual(await m.searchIndexCheck(s.db, users.nameSearch, { rows: true }), { ok: true, problems: [] });
      assert.deepEqual(await found(), [1, 2]);
    });
  });

  test(`searchIndexCheck (${driver}): a range index column's FTS5 table and triggers too: a rebuild's missing triggers and the rows range conditions then miss, until searchIndexSql runs again`, async () => {
    await withDb(driver, async (s) => {
      const create = 'CREATE TABLE scores (id INTEGER PRIMARY KEY, points TEXT, points_range TEXT)';
      s.exec(create);
      for (const stmt of m.searchIndexSql(scores, scores.pointsRange, 'scores_points_fts')) s.exec(stmt);
      await s.db.insert(scores).values({ id: 1, points: 5, pointsRange: 5 });
      assert.deepEqual(await m.searchIndexCheck(s.db, scores.pointsRange, { rows: true }), { ok: true, problems: [] });
      rebuild(s, create, 'scores');
      assert.deepEqual(codes(await m.searchIndexCheck(s.db, scores.pointsRange)), ['ALE_SEARCH_TRIGGER_MISSING', 'ALE_SEARCH_TRIGGER_MISSING', 'ALE_SEARCH_TRIGGER_MISSING']);
      await s.db.insert(scores).values({ id: 2, points: 9, pointsRange: 9 });
      const found = async () => (await s.db.select({ id: scores.id }).from(scores).where(m.rangeGt(scores.pointsRange, 0))).map((r) => r.id);
      assert.deepEqual(await found(), [1], 'the row written without triggers is missed');
      assert.deepEqual(codes(await m.searchIndexCheck(s.db, scores.pointsRange, { rows: true })).at(-1), 'ALE_SEARCH_INDEX_STALE');
      for (const stmt of m.searchIndexSql(scores, scores.pointsRange, 'scores_points_fts')) s.exec(stmt);
      assert.deepEqual(await m.searchIndexCheck(s.db, scores.pointsRange, { rows: true }), { ok: true, problems: [] });
      assert.deepEqual(await found(), [1, 2]);
      // a column that is no index is refused
      await assert.rejects(m.searchIndexCheck(s.db, scores.points), { code: 'ALE_INVALID_INPUT', message: /not a searchIndexColumn or rangeIndexColumn/ });
    });
  });

  test(`searchIndexCheck (${driver}): an FTS5 table of the application's own, with its triggers, passes; one without the column, or whose update trigger ignores it, does not`, async () => {
    await withDb(driver, async (s) => {
      s.exec(CREATE);
      s.exec("CREATE VIRTUAL TABLE users_name_fts USING fts5(bio, \"name_search\", content='users', content_rowid='id')");
      // names as written in a migration, in another case: SQLite's names are one whatever the case
      s.exec('CREATE TRIGGER users_ai AFTER INSERT ON Users BEGIN INSERT INTO users_name_fts(rowid, bio, name_search) VALUES (new.id, new.bio, new.name_search); END');
      s.exec("CREATE TRIGGER users_ad AFTER DELETE ON users BEGIN INSERT INTO users_name_fts(users_name_fts, rowid, bio, name_search) VALUES ('delete', old.id, old.bio, old.name_search); END");
      const update = (of) => `CREATE TRIGGER users_au AFTER UPDATE${of} ON users BEGIN
        INSERT INTO users_name_fts(users_name_fts, rowid, bio, name_search) VALUES ('delete', old.id, old.bio, old.name_search);
        INSERT INTO users_name_fts(rowid, bio, name_search) VALUES (new.id, new.bio, new.name_search); END`;
      s.exec(update(' OF "ID", bio, "name_search"'));
      await s.db.insert(users).values({ id: 1, name: 'Jane', nameSearch: 'Jane', bio: 'editor' });
      assert.deepEqual(await m.searchIndexCheck(s.db, users.nameSearch, { rows: true }), { ok: true, problems: [] });

      // An UPDATE OF without the INTEGER PRIMARY KEY misses a row that moves: its tokens stay at the old rowid.
      s.exec('DROP TRIGGER users_au');
      s.exec(update(' OF bio, "name_search"'));
      const moved = await m.searchIndexCheck(s.db, users.nameSearch);
      assert.deepEqual(codes(moved), ['ALE_SEARCH_TRIGGER_MISSING']);
      assert.match(moved.problems[0].message, /on every UPDATE of id, so rows whose key changes keep their tokens under the old one/);
      s.exec('UPDATE users SET id = 100 WHERE id = 1');
      assert.deepEqual(codes(await m.searchIndexCheck(s.db, users.nameSearch, { rows: true })), ['ALE_SEARCH_TRIGGER_MISSING', 'ALE_SEARCH_INDEX_STALE'], 'what it said would happen did');
      s.exec('UPDATE users SET id = 1 WHERE id = 100');

      s.exec('DROP TRIGGER users_au');
      s.exec(update(' OF bio'));
      const check = await m.searchIndexCheck(s.db, users.nameSearch);
      assert.deepEqual(codes(check), ['ALE_SEARCH_TRIGGER_MISSING']);
      assert.match(check.problems[0].message, /on every UPDATE/);
      // a trigger on deletes that copies the column elsewhere keeps no index
      s.exec('DROP TRIGGER users_ad');
      s.exec('CREATE TABLE removed (name_search TEXT)');
      s.exec('CREATE TRIGGER users_ad AFTER DELETE ON users BEGIN INSERT INTO removed(name_search) VALUES (old.name_search); END');
      assert.deepEqual((await m.searchIndexCheck(s.db, users.nameSearch)).problems.map((p) => /on every (INSERT|DELETE|UPDATE)/.exec(p.message)?.[1]), ['DELETE', 'UPDATE']);

      s.exec('DROP TABLE users_name_fts');
      s.exec("CREATE VIRTUAL TABLE users_name_fts USING fts5(bio, content='users', content_rowid='id')");
      const noColumn = await m.searchIndexCheck(s.db, users.nameSearch);
      assert.equal(codes(noColumn)[0], 'ALE_SEARCH_FTS_COLUMN');
      assert.match(noColumn.problems[0].message, /DROP TABLE "users_name_fts"/);
      s.exec('DROP TABLE users_name_fts');
      s.exec("CREATE VIRTUAL TABLE users_name_fts USING fts5(NAME_SEARCH, content='people', content_rowid='id')");
      assert.match((await m.searchIndexCheck(s.db, users.nameSearch)).problems[0].message, /reads its rows from people, not users/);
      // keyed by a column that is not the rowid: queries match rowids, and would name other rows
      s.exec('DROP TABLE users_name_fts');
      s.exec("CREATE VIRTUAL TABLE users_name_fts USING fts5(name_search, content='users', content_rowid='bio')");
      const keyed = await m.searchIndexCheck(s.db, users.nameSearch);
      assert.equal(codes(keyed)[0], 'ALE_SEARCH_FTS_COLUMN');
      assert.match(keyed.problems[0].message, /keys its rows by bio \(content_rowid\), which is not the rowid of users/);
      // what the message says to do puts it right
      s.exec('DROP TABLE users_name_fts');
      for (const stmt of m.searchIndexSql(users, users.nameSearch, 'users_name_fts')) s.exec(stmt);
      assert.deepEqual(await m.searchIndexCheck(s.db, users.nameSearch, { rows: true }), { ok: true, problems: [] });
    });
  });
}

test('searchIndexCheck: a trigger counts by its timing, event, UPDATE OF and WHEN, not by words in its name; a column name in another case is the same column; rows: true says when FTS5 cannot compare with the rows', async () => {
  await withDb(SQLITE_DRIVERS[0], async (s) => {
    s.exec(CREATE);
    // no content=: FTS5 keeps its own copy, which is all integrity-check can compare with
    s.exec('CREATE VIRTUAL TABLE users_name_fts USING fts5(Name_Search)');
    const write = (into) => `INSERT INTO users_name_fts(rowid, name_search) VALUES (${into}.id, ${into}.name_search)`;
    s.exec(`CREATE TRIGGER "sync update on users" AFTER INSERT ON users BEGIN ${write('new')}; END`);
    s.exec("CREATE TRIGGER users_ad AFTER DELETE ON users BEGIN INSERT INTO users_name_fts(users_name_fts, rowid, name_search) VALUES ('delete', old.id, old.name_search); END");
    s.exec(`CREATE TRIGGER users_au AFTER UPDATE ON users WHEN old.bio IS NOT new.bio BEGIN ${write('new')}; END`);
    const events = async () => (await m.searchIndexCheck(s.db, users.nameSearch)).problems.map((p) => /on every (INSERT|DELETE|UPDATE)|BEFORE an (INSERT|UPDATE)/.exec(p.message)?.slice(1).find(Boolean));
    assert.deepEqual(await events(), ['UPDATE'], 'a WHEN that leaves the column out skips its changes');
    s.exec('DROP TRIGGER users_au');
    s.exec(`CREATE TRIGGER users_au AFTER UPDATE ON users WHEN old.name_search IS NOT new.name_search BEGIN ${write('new')}; END`);
    assert.deepEqual(await events(), ['UPDATE'], 'a WHEN that leaves the key out skips a row that moves');
    for (const key of ['rowid', 'ID']) {
      s.exec('DROP TRIGGER users_au');
      s.exec(`CREATE TRIGGER users_au AFTER UPDATE ON users WHEN old.${key} IS NOT new.${key} OR old.name_search IS NOT new.name_search BEGIN ${write('new')}; END`);
      assert.deepEqual(await events(), [], key);
    }
    s.exec('DROP TRIGGER "sync update on users"');
    s.exec(`CREATE TRIGGER users_bi BEFORE INSERT ON users BEGIN ${write('new')}; END`);
    const before = await m.searchIndexCheck(s.db, users.nameSearch, { rows: true });
    assert.deepEqual(codes(before), ['ALE_SEARCH_TRIGGER_MISSING', 'ALE_SEARCH_ROWS_UNCHECKED'], 'before an insert there is no rowid yet');
    assert.match(before.problems[0].message, /users_bi on users writes into users_name_fts BEFORE an INSERT, where the row has no rowid yet.*DROP TRIGGER "users_bi"/);
    // with no timing, SQLite's trigger is a BEFORE one
    s.exec('DROP TRIGGER users_bi');
    s.exec(`CREATE TRIGGER users_i INSERT ON users BEGIN ${write('new')}; END`);
    assert.deepEqual(await events(), ['INSERT'], 'a trigger with no timing is BEFORE');
    s.exec('DROP TRIGGER users_i');
    s.exec(`CREATE TRIGGER users_ai AFTER INSERT ON users BEGIN ${write('new')}; END`);
    // a BEFORE UPDATE trigger writes even when a conflict clause (OR IGNORE) then leaves the row as it was
    s.exec('DROP TRIGGER users_au');
    s.exec(`CREATE TRIGGER users_bu BEFORE UPDATE ON users WHEN old.rowid IS NOT new.rowid OR old.name_search IS NOT new.name_search BEGIN ${write('new')}; END`);
    assert.deepEqual(await events(), ['UPDATE'], 'BEFORE UPDATE');
    // and beside an AFTER one, a BEFORE UPDATE that takes the old tokens out takes them out of a row OR IGNORE keeps
    s.exec(`CREATE TRIGGER users_au AFTER UPDATE ON users WHEN old.rowid IS NOT new.rowid OR old.name_search IS NOT new.name_search BEGIN ${write('new')}; END`);
    const pair = await m.searchIndexCheck(s.db, users.nameSearch);
    assert.deepEqual(pair.problems.map((p) => /users_bu on users writes into users_name_fts BEFORE an UPDATE/.test(p.message)), [true]);
    // both go: the one searchIndexSql makes beside an AFTER one left would write every update twice
    assert.match(pair.problems[0].message, /drop users_bu, users_au first/);
    s.exec('DROP TRIGGER users_au');
    s.exec('DROP TRIGGER users_bu');
    // a WHEN that compares the column (<>, =, <…) is NULL, not true, on a change from or to NULL; the key is never NULL
    for (const [when, missed] of [
      ['old.name_search <> new.name_search', ['UPDATE']],
      ['NOT (new.name_search = old.name_search)', ['UPDATE']],
      ['old.name_search != new.name_search', ['UPDATE']],
      ['old.name_search < new.name_search OR old.name_search > new.name_search', ['UPDATE']],
      ['new.bio <> new.name_search', ['UPDATE']],
      ['(new.name_search) <> (old.name_search)', ['UPDATE']],
      ['new.name_search NOT IN (old.name_search)', ['UPDATE']],
      ['new.name_search NOT LIKE old.name_search', ['UPDATE']],
      ['old."name_search" IS NOT new."name_search"', []],
      ["coalesce(old.name_search, '') <> coalesce(new.name_search, '')", []],
      ['new.name_search IS NOT old.name_search AND new.bio > 0', ['UPDATE']],
      ['lower(old.name_search) <> lower(new.name_search)', ['UPDATE']],
      ["old.name_search IS NOT new.name_search -- and the tokens, 'say'\n", []],
      ["new.bio IS NOT old.bio /* new.name_search */", ['UPDATE']],
      ['quote(old.name_search) <> quote(new.name_search)', []],
      ['typeof(old.name_search) <> typeof(new.name_search) OR old.name_search IS NOT new.name_search', []],
      ['(old.name_search IS NOT new.name_search) = 1', []],
      ['old.name_search IS NOT new.name_search AND new.name_search IS NOT NULL', ['UPDATE']],
      ['old.bio BETWEEN 1 AND new.name_search', ['UPDATE']],
    ]) {
      for (const key of ['old.rowid IS NOT new.rowid', 'old.id <> new.id']) {
        s.exec('DROP TRIGGER IF EXISTS users_au');
        s.exec(`CREATE TRIGGER users_au AFTER UPDATE ON users WHEN ${key} OR ${when} BEGIN ${write('new')}; END`);
        assert.deepEqual(await events(), missed, `${key} OR ${when}`);
      }
    }
  });
});

test('searchIndexCheck: a table without the column or without a rowid, and an FTS5 table of your own whose options FTS5 refuses every query on, are named; searchIndexSql fails before it makes anything there', async () => {
  await withDb(SQLITE_DRIVERS[0], async (s) => {
    // the column not added yet: searchIndexSql stops before its triggers, and none is left to fail the writes
    // (while another statement of the connection is under way, as an iterator leaves one)
    const triggers = () => s.all("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'users_name_fts%'");
    s.exec('CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT, bio TEXT)');
    assert.throws(() => { for (const stmt of m.searchIndexSql(users, users.nameSearch, 'users_name_fts')) s.exec(stmt); }, /name_search/);
    assert.deepEqual(triggers(), []);
    s.exec("INSERT INTO users (id, name, bio) VALUES (1, 'x', 'y')");
    assert.equal(codes(await m.searchIndexCheck(s.db, users.nameSearch))[0], 'ALE_SEARCH_TABLE_UNFIT');
    s.exec('DROP TABLE users');
    s.exec('DROP TABLE users_name_fts');
    s.exec('CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT, name_search TEXT, bio TEXT) WITHOUT ROWID');
    assert.throws(() => { for (const stmt of m.searchIndexSql(users, users.nameSearch, 'users_name_fts')) s.exec(stmt); }, /rowid/);
    assert.deepEqual(triggers(), []);
    const unfit = await m.searchIndexCheck(s.db, users.nameSearch);
    assert.equal(codes(unfit)[0], 'ALE_SEARCH_TABLE_UNFIT');
    assert.match(unfit.problems[0].message, /WITHOUT ROWID/);
    s.exec('DROP TABLE users');
    s.exec('DROP TABLE users_name_fts');
    // the table, not its text: a comment after the definition
    s.exec('CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT, name_search TEXT, bio TEXT) WITHOUT ROWID /* (v2) */');
    assert.deepEqual(codes(await m.searchIndexCheck(s.db, users.nameSearch)), ['ALE_SEARCH_TABLE_UNFIT', 'ALE_SEARCH_FTS_MISSING']);
    s.exec('DROP TABLE users');
    // run while a statement of the connection is under way: nothing in searchIndexSql waits for it to finish
    s.exec(CREATE);
    s.exec("INSERT INTO users (id, name) VALUES (1, 'a'), (2, 'b')");
    const reading = s.client.prepare('SELECT id FROM users').iterate();
    reading.next();
    for (const stmt of m.searchIndexSql(users, users.nameSearch, 'users_name_fts')) s.exec(stmt);
    reading.return?.();
    assert.deepEqual(codes(await m.searchIndexCheck(s.db, users.nameSearch)), []);
    s.exec('DROP TABLE users_name_fts');
    s.exec('DROP TABLE users');
    // searchIndexSql's own triggers on a column whose quoted name holds the word "and"
    s.exec('CREATE TABLE "brand and type" (id INTEGER PRIMARY KEY, "brand and type" TEXT)');
    const branded = sqliteTable('brand and type', { id: integer('id').primaryKey(), search: m.searchIndexColumn('brand and type', { ...on, fts: 'brand_fts' }) });
    for (const stmt of m.searchIndexSql(branded, branded.search, 'brand_fts')) s.exec(stmt);
    assert.deepEqual(codes(await m.searchIndexCheck(s.db, branded.search)), []);
    // no table, or a view, under the column's table name
    assert.deepEqual(codes(await m.searchIndexCheck(s.db, users.nameSearch)), ['ALE_SEARCH_TABLE_UNFIT']);
    s.exec('CREATE VIEW users AS SELECT 1 AS id, 2 AS name_search');
    assert.deepEqual(codes(await m.searchIndexCheck(s.db, users.nameSearch)), ['ALE_SEARCH_TABLE_UNFIT']);
    s.exec('DROP VIEW users');
    // WITHOUT ROWID whose key took the name rowid
    s.exec('CREATE TABLE users (rowid TEXT PRIMARY KEY, name TEXT, name_search TEXT, bio TEXT) WITHOUT ROWID');
    assert.equal(codes(await m.searchIndexCheck(s.db, users.nameSearch))[0], 'ALE_SEARCH_TABLE_UNFIT');
    s.exec('DROP TABLE users');
    // the main schema's table: one of the name in an attached database is another table
    s.exec(CREATE);
    s.exec("ATTACH ':memory:' AS archive");
    s.exec('CREATE TABLE archive.users (id TEXT PRIMARY KEY, name TEXT) WITHOUT ROWID');
    assert.deepEqual(codes(await m.searchIndexCheck(s.db, users.nameSearch)), ['ALE_SEARCH_FTS_MISSING']);
    s.exec('DETACH archive');
    s.exec('DROP TABLE users');
    s.exec(CREATE);
    // a table of the FTS5 table's name that is FTS4: the statements stop before the triggers
    s.exec('CREATE VIRTUAL TABLE users_name_fts USING fts4(name_search, content=users)');
    assert.throws(() => { for (const stmt of m.searchIndexSql(users, users.nameSearch, 'users_name_fts')) s.exec(stmt); });
    assert.deepEqual(triggers(), []);
    s.exec('DROP TABLE users_name_fts');
    // an FTS5 table of one's own, with triggers that keep it: its detail and tokenizer decide whether FTS5 takes the queries
    for (const [options, refused] of [
      ["tokenize='trigram'", false],
      ["tokenize='trigram', detail=column", true],
      ["tokenize = 'porter trigram', detail = 'column'", true],
      ['detail=none', true],
      ['detail=column', false],
    ]) {
      s.exec('DROP TABLE IF EXISTS users_name_fts');
      s.exec(`CREATE VIRTUAL TABLE users_name_fts USING fts5(name_search, content=users, content_rowid=id, ${options})`);
      for (const stmt of m.searchIndexSql(users, users.nameSearch, 'users_name_fts')) s.exec(stmt);
      await m.withTenant('acme', () => s.db.insert(users).values({ name: 'Jürgen Müller', nameSearch: 'Jürgen Müller' }));
      const where = m.searchWords(users.nameSearch, 'müller');
      const found = await m.withTenant('acme', async () => s.db.select({ id: users.id }).from(users).where(where)).then((r) => r.length, (e) => e);
      assert.equal(found instanceof Error, refused, `${options}: ${found}`);
      const check = await m.searchIndexCheck(s.db, users.nameSearch);
      assert.deepEqual(codes(check), refused ? ['ALE_SEARCH_FTS_COLUMN'] : [], options);
      s.exec('DELETE FROM users');
    }
  });
});

test('searchIndexCheck: a column without `fts` has nothing to check (searches scan it); anything but a searchIndexColumn is refused', async () => {
  await withDb(SQLITE_DRIVERS[0], async (s) => {
    s.exec(CREATE);
    assert.deepEqual(await m.searchIndexCheck(s.db, scanned.nameSearch), { ok: true, problems: [] });
    await assert.rejects(m.searchIndexCheck(s.db, users.bio), (e) => e.code === 'ALE_INVALID_INPUT');
  });
});

test("searchIndexCheck: the rowid under its names (content_rowid in another case or quoted, _rowid_ in a WHEN), an INT PRIMARY KEY that is no rowid, a TEXT key with no alias, and a key change followed by a trigger of its own", async () => {
  const ddl = (key) => `CREATE TABLE users (id ${key}, name TEXT, name_search TEXT, bio TEXT)`;
  const triggers = (rowid, update) => [
    `CREATE TRIGGER users_ai AFTER INSERT ON users BEGIN INSERT INTO users_name_fts(rowid, name_search) VALUES (new.${rowid}, new.name_search); END`,
    `CREATE TRIGGER users_ad AFTER DELETE ON users BEGIN INSERT INTO users_name_fts(users_name_fts, rowid, name_search) VALUES ('delete', old.${rowid}, old.name_search); END`,
    ...update.map(
      ([name, head]) =>
        `CREATE TRIGGER ${name} AFTER UPDATE${head.startsWith(' OF') ? `${head} ON users` : ` ON users${head}`} BEGIN INSERT INTO users_name_fts(users_name_fts, rowid, name_search) VALUES ('delete', old.${rowid}, old.name_search); INSERT INTO users_name_fts(rowid, name_search) VALUES (new.${rowid}, new.name_search); END`,
    ),
  ];
  const check = async (key, contentRowid, update) =>
    withDb(SQLITE_DRIVERS[0], async (s) => {
      s.exec(ddl(key));
      s.exec(`CREATE VIRTUAL TABLE users_name_fts USING fts5(name_search, content='users'${contentRowid === undefined ? '' : `, content_rowid=${contentRowid}`})`);
      for (const stmt of triggers(contentRowid === undefined ? 'rowid' : 'id', update)) s.exec(stmt);
      return (await m.searchIndexCheck(s.db, users.nameSearch)).problems.map((p) => p.code);
    });
  const both = [['users_au', ' OF id, name_search']];
  assert.deepEqual(await check('INTEGER PRIMARY KEY', "'ID'", both), [], 'content_rowid names the key in another case');
  assert.deepEqual(await check('integer primary key autoincrement', '"id"', both), [], 'quoted, and with autoincrement');
  assert.deepEqual(await check('INTEGER PRIMARY KEY', "'id'", [['users_au', ' OF name_search'], ['users_moved', ' OF id']]), [], 'the key change followed by a trigger of its own');
  assert.deepEqual(await check('INTEGER PRIMARY KEY', undefined, [['users_au', ' WHEN old._rowid_ IS NOT new._rowid_ OR old.name_search IS NOT new.name_search']]), [], '_rowid_ in a WHEN');
  assert.deepEqual(await check('INT PRIMARY KEY', "'id'", both), ['ALE_SEARCH_FTS_COLUMN'], 'INT PRIMARY KEY is no rowid');
  assert.deepEqual(await check('INTEGER PRIMARY KEY DESC', "'id'", both), ['ALE_SEARCH_FTS_COLUMN'], 'nor is INTEGER PRIMARY KEY DESC');
  // a TEXT key has no alias: the rowid moves only by SET rowid, and a WHEN on the column alone keeps the index as an UPDATE OF it does
  assert.deepEqual(await check('TEXT PRIMARY KEY', undefined, [['users_au', ' WHEN old.name_search IS NOT new.name_search']]), []);
  assert.deepEqual(await check('TEXT PRIMARY KEY', undefined, [['users_au', ' OF name_search']]), []);
});
