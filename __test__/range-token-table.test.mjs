// A range column's token table on MariaDB (rangeTokenTableSql): the pairs
// of the rows already there, then one pair for each token of each row's
// text through inserts, NULLs both ways, updates of the value, of the key
// and of other columns, rows written back unchanged, deletes (so that a
// deleted value leaves no token behind), its statements run again, and
// writes filtered by a range condition: a delete and an update of another
// column run, and an update of the value is refused whole. The range suite
// (range-drizzle.test.mjs) runs every query through such tables; this
// checks the table itself against the column's text, and with keys of
// other types: a string and a `serial`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import mysql from 'mysql2/promise';
import { eq, getTableName } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/mysql2';
import { alias, int, mysqlSchema, mysqlTable, primaryKey, serial, varchar } from 'drizzle-orm/mysql-core';
import * as mysqlMod from '@sveltycms/ale/drizzle/mysql';
import * as pgMod from '@sveltycms/ale/drizzle/pg';
import * as sqliteMod from '@sveltycms/ale/drizzle/sqlite';
import { mysqlDriver, oracleDrivers } from './fixtures/dialects.mjs';
import { ale, SECRET } from './helpers.mjs';
import { serverUrl } from './servers.mjs';

const on = { collection: 'measures', keyRing: new ale.KeyRing([SECRET]), tenant: 'acme' };
const NAME = 'token_table_rows';
const TOKENS = `${NAME}_amount_tokens`;
const table = mysqlTable(NAME, {
  id: int('id').primaryKey(),
  note: varchar('note', { length: 16 }),
  amount: mysqlMod.encryptedNumber('amount', on),
  amountRange: mysqlMod.rangeIndexColumn('amount_range', { ...on, type: 'number', field: 'amount', tokenTable: TOKENS }),
});

test('a token table is for MySQL and MariaDB, named, and made for a column of its table with a key of one column', () => {
  for (const mod of [sqliteMod, pgMod]) {
    assert.throws(() => mod.rangeIndexColumn('r', { ...on, type: 'number', tokenTable: 'r_tokens' }), { code: 'ALE_INVALID_INPUT', message: /tokenTable is for MySQL and MariaDB/ });
  }
  assert.doesNotThrow(() => mysqlMod.rangeIndexColumn('r', { ...on, type: 'number', tokenTable: 't'.repeat(61) }));
  for (const tokenTable of ['', 5, 't'.repeat(62)]) assert.throws(() => mysqlMod.rangeIndexColumn('r', { ...on, type: 'number', tokenTable }), { code: 'ALE_INVALID_INPUT', message: /tokenTable must (name|be at most 61)/ });
  const plain = mysqlTable('plain_range', { id: int('id').primaryKey(), amountRange: mysqlMod.rangeIndexColumn('amount_range', { ...on, type: 'number', field: 'amount' }) });
  assert.throws(() => mysqlMod.rangeTokenTableSql(plain, plain.amountRange), { code: 'ALE_INVALID_INPUT', message: /names no tokenTable/ });
  assert.throws(() => mysqlMod.rangeTokenTableSql(plain, table.amountRange), { code: 'ALE_INVALID_INPUT', message: /not a column of this table/ });
  const pair = mysqlTable('pair_key', { a: int('a'), b: int('b'), amountRange: mysqlMod.rangeIndexColumn('amount_range', { ...on, type: 'number', field: 'amount', tokenTable: 'pair_key_tokens' }) }, (t) => [primaryKey({ columns: [t.a, t.b] })]);
  assert.throws(() => mysqlMod.rangeTokenTableSql(pair, pair.amountRange), { code: 'ALE_INVALID_INPUT', message: /primary key of one column/ });
  const elsewhere = mysqlSchema('other').table('elsewhere', { id: int('id').primaryKey(), amountRange: mysqlMod.rangeIndexColumn('amount_range', { ...on, type: 'number', field: 'amount', tokenTable: 'elsewhere_tokens' }) });
  assert.throws(() => mysqlMod.rangeTokenTableSql(elsewhere, elsewhere.amountRange), { code: 'ALE_INVALID_INPUT', message: /connection's database/ });
  // A condition on an alias (as relational queries give) or on such a table, too.
  assert.throws(() => mysqlMod.rangeGt(alias(table, 'other').amountRange, 1), { code: 'ALE_INVALID_INPUT', message: /not an alias/ });
  assert.throws(() => mysqlMod.rangeGt(elsewhere.amountRange, 1), { code: 'ALE_INVALID_INPUT', message: /connection's database/ });
});

const url = serverUrl('MYSQL_URL');
// An account with an application's rights (no TRIGGER), as a start-up check runs: scripts/services.sh makes it.
const appUrl = url && serverUrl('MYSQL_APP_URL');
if (url && oracleDrivers('mysql', ['mysql2']).length > 0) {
  test("the triggers keep one pair for each token of each row's text, and none for a row gone", async () => {
    const pool = mysql.createPool({ uri: url, connectionLimit: 2 });
    const db = drizzle(pool);
    try {
      await pool.query(`DROP TABLE IF EXISTS ${TOKENS}`);
      await pool.query(`DROP TABLE IF EXISTS ${NAME}`);
      await pool.query(`CREATE TABLE ${NAME} (id INT PRIMARY KEY, note VARCHAR(16), amount TEXT, amount_range MEDIUMTEXT)`);
      const row = (id, amount) => ({ id, amount, amountRange: amount });
      // Rows before the table of tokens: its last statement pairs them.
      await db.insert(table).values([row(1, 10), row(2, -0.5), row(3, null)]);
      for (const stmt of mysqlMod.rangeTokenTableSql(table, table.amountRange)) await pool.query(stmt);
      /** Each row's tokens as its text holds them, and as the table of tokens pairs them with its key. */
      const both = async () => {
        const [rows] = await pool.query(`SELECT id, amount_range FROM ${NAME} ORDER BY id`);
        const [pairs] = await pool.query(`SELECT row_key, LOWER(HEX(token)) AS token FROM ${TOKENS} ORDER BY row_key, token`);
        const text = rows.filter((r) => r.amount_range).flatMap((r) => [...new Set(r.amount_range.split(' '))].sort().map((t) => `${r.id} ${t}`));
        return { text, pairs: pairs.map((p) => `${p.row_key} ${p.token}`) };
      };
      const check = async (what) => {
        const { text, pairs } = await both();
        assert.deepEqual(pairs, text, what);
        return pairs;
      };
      const keys = (pairs) => [...new Set(pairs.map((p) => Number(p.split(' ')[0])))];
      assert.deepEqual(keys(await check('the rows there before')), [1, 2], 'a NULL value has no tokens');
      await db.insert(table).values([row(4, 1e300), row(5, 10)]);
      assert.deepEqual(keys(await check('inserted')), [1, 2, 4, 5]);
      await db.update(table).set({ amount: 7, amountRange: 7 }).where(eq(table.id, 1));
      await check('a new value');
      const before = (await both()).pairs.filter((p) => p.startsWith('5 '));
      await db.update(table).set({ note: 'seen' }).where(eq(table.id, 5));
      // Read back and written again unchanged, as an app's save does with a StoredIndex.
      const [saved] = await db.select().from(table).where(eq(table.id, 5));
      await db.update(table).set(saved).where(eq(table.id, 5));
      assert.deepEqual((await check('another column, and the index written back')).filter((p) => p.startsWith('5 ')), before);
      await db.update(table).set({ id: 6 }).where(eq(table.id, 5));
      assert.deepEqual(keys(await check('a new key')), [1, 2, 4, 6]);
      await db.update(table).set({ amount: null, amountRange: null }).where(eq(table.id, 2));
      await db.delete(table).where(eq(table.id, 4));
      assert.deepEqual(keys(await check('a value set to NULL, and a row deleted')), [1, 6]);
      await db.update(table).set({ amount: 3, amountRange: 3 }).where(eq(table.id, 3));
      assert.deepEqual(keys(await check('a NULL value set')), [1, 3, 6]);
      const pairs = (await both()).pairs;
      for (const stmt of mysqlMod.rangeTokenTableSql(table, table.amountRange)) await pool.query(stmt);
      assert.deepEqual((await both()).pairs, pairs, 'the statements run again change nothing');
      // Through a query: the rows of 3, 7 and 10 only.
      const range = (lo, hi) => mysqlMod.withTenant('acme', async () => mysqlMod.rangeBetween(table.amountRange, lo, hi));
      const found = async (lo, hi) => (await db.select({ id: table.id, amount: table.amount }).from(table).where(await range(lo, hi))).map((r) => [r.id, r.amount]).sort();
      assert.deepEqual(await found(0, 100), [[1, 7], [3, 3], [6, 10]]);
      // Writes filtered by a range condition. An update of another column, and a delete: the foreign key deletes the pairs.
      await db.update(table).set({ note: 'small' }).where(await range(0, 5));
      assert.deepEqual((await db.select({ id: table.id }).from(table).where(eq(table.note, 'small'))).map((r) => r.id), [3]);
      await db.delete(table).where(await range(0, 5));
      assert.deepEqual(keys(await check('deleted through a range condition')), [1, 6]);
      // An update of the value: its trigger would write the pairs the statement reads, which MariaDB refuses (1442), all of it.
      await assert.rejects(db.update(table).set({ amount: 50, amountRange: 50 }).where(await range(0, 100)), (e) => (e.cause ?? e).errno === 1442);
      assert.deepEqual(await found(0, 100), [[1, 7], [6, 10]], 'nothing written');
      await check('nothing written');
      // TRUNCATE, which fires no trigger, is refused while the pairs point to the table.
      await assert.rejects(pool.query(`TRUNCATE TABLE ${NAME}`), (e) => e.errno === 1701);
      // A new key and a new value in one statement: the foreign key moves the pairs, then the trigger replaces them.
      await db.update(table).set({ id: 8, amount: 12, amountRange: 12 }).where(eq(table.id, 6));
      assert.deepEqual(keys(await check('a new key and a new value at once')), [1, 8]);
    } finally {
      await pool.query(`DROP TABLE IF EXISTS ${TOKENS}`);
      await pool.query(`DROP TABLE IF EXISTS ${NAME}`);
      await pool.end();
    }
  });

  test("rangeTokenTableCheck names what is missing (the table, its foreign key, each trigger) and, with rows, pairs out of step with the text; each message's fix makes it ok", async () => {
    const name = 'token_check_rows';
    const tokens = `${name}_tokens`;
    const t = mysqlTable(name, { id: int('id').primaryKey(), amountRange: mysqlMod.rangeIndexColumn('amount_range', { ...on, type: 'number', field: 'amount', tokenTable: tokens }) });
    const pool = mysql.createPool({ uri: url, connectionLimit: 2 });
    const db = drizzle(pool);
    const check = async (rows) => (await mysqlMod.rangeTokenTableCheck(db, t.amountRange, { rows })).problems;
    const codes = async (rows) => (await check(rows)).map((p) => p.code);
    const statements = () => mysqlMod.rangeTokenTableSql(t, t.amountRange);
    const make = async () => {
      for (const stmt of statements()) await pool.query(stmt);
    };
    const found = async () => (await mysqlMod.withTenant('acme', async () => db.select({ id: t.id }).from(t).where(mysqlMod.rangeGt(t.amountRange, 0)))).map((r) => r.id).sort();
    const drop = async () => {
      await pool.query(`DROP TABLE IF EXISTS ${tokens}`);
      await pool.query(`DROP TABLE IF EXISTS ${name}`);
      await pool.query(`DROP TABLE IF EXISTS ${name}_old`);
    };
    try {
      await drop();
      await pool.query(`CREATE TABLE ${name} (id INT PRIMARY KEY, amount_range MEDIUMTEXT)`);
      await db.insert(t).values([{ id: 1, amountRange: 5 }, { id: 2, amountRange: -3 }]);
      const none = await check(true);
      assert.deepEqual(none.map((p) => p.code), ['ALE_RANGE_TOKEN_TABLE_MISSING', 'ALE_RANGE_TRIGGER_MISSING', 'ALE_RANGE_TRIGGER_MISSING']);
      assert.match(none[0].message, /token table "token_check_rows_tokens" of column "amount_range" is missing.*run rangeTokenTableSql\(table, column\)'s statements/);
      assert.match(none[1].message, /no AFTER INSERT trigger on "token_check_rows"/);
      await make();
      assert.deepEqual(await check(true), []);
      assert.deepEqual(await mysqlMod.rangeTokenTableCheck(db, t.amountRange), { ok: true, problems: [] });

      // An application's account (no TRIGGER privilege) sees MariaDB's triggers without their statements: rangeTokenTableSql's own pass by their names.
      if (appUrl) {
        const appPool = mysql.createPool({ uri: appUrl, connectionLimit: 1 });
        try {
          const app = drizzle(appPool);
          const [[seen]] = await appPool.query('SELECT ACTION_STATEMENT AS body FROM information_schema.TRIGGERS WHERE TRIGGER_NAME = ?', [`${tokens}_ai`]);
          assert.equal(seen.body, null, "the statement is hidden from the application's account");
          assert.deepEqual(await mysqlMod.rangeTokenTableCheck(app, t.amountRange, { rows: true }), { ok: true, problems: [] });
          // The same insert trigger under another name: read, it passes; hidden, it is reported, with why.
          await pool.query(`DROP TRIGGER ${tokens}_ai`);
          await pool.query(statements()[2].replace(`\`${tokens}_ai\``, `\`${name}_mine_ai\``));
          assert.deepEqual(await check(false), []);
          const unread = (await mysqlMod.rangeTokenTableCheck(app, t.amountRange)).problems;
          assert.deepEqual(unread.map((p) => p.code), ['ALE_RANGE_TRIGGER_MISSING']);
          assert.match(unread[0].message, /no AFTER INSERT trigger.*this account has no TRIGGER privilege on "token_check_rows"/);
          await pool.query(`DROP TRIGGER ${name}_mine_ai`);
          await make();
        } finally {
          await appPool.end();
        }
      }
      // A trigger of rangeTokenTableSql's name on another table: the statements keep it (IF NOT EXISTS), so it must be dropped first.
      await pool.query(`DROP TRIGGER ${tokens}_ai`);
      await pool.query(`CREATE TABLE IF NOT EXISTS ${name}_old (id INT PRIMARY KEY)`);
      await pool.query(`CREATE TRIGGER ${tokens}_ai AFTER INSERT ON ${name}_old FOR EACH ROW SET @n = NEW.id`);
      await make();
      const taken = await check(false);
      assert.deepEqual(taken.map((p) => p.code), ['ALE_RANGE_TRIGGER_MISSING']);
      assert.match(taken[0].message, /drop trigger token_check_rows_tokens_ai first \(DROP TRIGGER `token_check_rows_tokens_ai`\), then run rangeTokenTableSql/);
      assert.doesNotMatch(taken[0].message, /TRIGGER privilege/, 'this account reads the triggers');
      // what the message says: that trigger dropped, then the statements
      await pool.query(`DROP TRIGGER ${tokens}_ai`);
      await make();
      assert.deepEqual(await check(true), []);
      await pool.query(`DROP TABLE ${name}_old`);
      // A connection with no database: nothing to look for, and said so.
      const nowhere = new URL(url);
      nowhere.pathname = '/';
      const bare = mysql.createPool({ uri: nowhere.href, connectionLimit: 1 });
      try {
        await assert.rejects(mysqlMod.rangeTokenTableCheck(drizzle(bare), t.amountRange), { code: 'ALE_INVALID_INPUT', message: /no database selected/ });
      } finally {
        await bare.end();
      }

      // A dump restored without its triggers: a row written then has no pairs, and range conditions miss it.
      await pool.query(`DROP TRIGGER ${tokens}_ai`);
      assert.deepEqual(await codes(false), ['ALE_RANGE_TRIGGER_MISSING']);
      await db.insert(t).values({ id: 3, amountRange: 9 });
      assert.deepEqual(await found(), [1], 'the row written without its pairs is missed');
      const missed = await check(true);
      assert.deepEqual(missed.map((p) => p.code), ['ALE_RANGE_TRIGGER_MISSING', 'ALE_RANGE_PAIRS_STALE']);
      assert.match(missed[1].message, /: [1-9]\d* tokens of the rows' text have no pair, and 0 pairs are no token/);
      await make();
      assert.deepEqual([await check(true), await found()], [[], [1, 3]], 'the statements again: the fill pairs the row');

      // The update trigger gone: a new value keeps its old value's pairs, and has none of its own.
      await pool.query(`DROP TRIGGER ${tokens}_au`);
      await db.update(t).set({ amountRange: -7 }).where(eq(t.id, 3));
      assert.deepEqual(await found(), [1, 3], 'found by its old value');
      const moved = await check(true);
      assert.deepEqual(moved.map((p) => p.code), ['ALE_RANGE_TRIGGER_MISSING', 'ALE_RANGE_PAIRS_STALE']);
      assert.match(moved[0].message, /no AFTER UPDATE trigger/);
      assert.match(moved[1].message, /: [1-9]\d* tokens .* no pair, and [1-9]\d* pairs are no token/);
      await make();
      const left = await check(true);
      assert.deepEqual(left.map((p) => p.code), ['ALE_RANGE_PAIRS_STALE'], 'the fill adds pairs and deletes none');
      assert.match(left[0].message, /: 0 tokens .* no pair, and [1-9]\d* pairs are no token/);
      // The message's fix: the pairs deleted and filled again in one transaction.
      const conn = await pool.getConnection();
      try {
        await conn.beginTransaction();
        await conn.query(`DELETE FROM ${tokens}`);
        await conn.query(statements().at(-1));
        await conn.commit();
      } finally {
        conn.release();
      }
      assert.deepEqual([await check(true), await found()], [[], [1]]);

      // Triggers that do not qualify: BEFORE INSERT, and AFTER INSERT naming the column only inside other names.
      await pool.query(`DROP TRIGGER ${tokens}_ai`);
      await pool.query(`CREATE TRIGGER ${tokens}_bi BEFORE INSERT ON ${name} FOR EACH ROW SET @n = (SELECT COUNT(*) FROM ${tokens}) + LENGTH(NEW.amount_range)`);
      await pool.query(`CREATE TRIGGER ${tokens}_other AFTER INSERT ON ${name} FOR EACH ROW SET @old_amount_range = (SELECT COUNT(*) FROM ${tokens}) + NEW.id, @amount_range2 = 1`);
      assert.deepEqual(await codes(false), ['ALE_RANGE_TRIGGER_MISSING']);
      await pool.query(`DROP TRIGGER ${tokens}_bi`);
      await pool.query(`DROP TRIGGER ${tokens}_other`);
      await make();
      assert.deepEqual(await check(false), []);
      // The insert trigger of rangeTokenTableSql's name, made BEFORE the insert: the statements keep it (IF NOT EXISTS), so the message says to drop it first.
      await pool.query(`DROP TRIGGER ${tokens}_ai`);
      await pool.query(`CREATE TRIGGER ${tokens}_ai BEFORE INSERT ON ${name} FOR EACH ROW SET @n = (SELECT COUNT(*) FROM ${tokens}) + LENGTH(NEW.amount_range)`);
      await make();
      const before = await check(false);
      assert.deepEqual(before.map((p) => p.code), ['ALE_RANGE_TRIGGER_MISSING'], 'the statements run again change nothing');
      const [, dropFirst] = /\((DROP TRIGGER `[^`]+`)\), then run rangeTokenTableSql/.exec(before[0].message) ?? [];
      assert.equal(dropFirst, `DROP TRIGGER \`${tokens}_ai\``);
      await pool.query(dropFirst);
      await make();
      assert.deepEqual(await check(true), [], 'the message followed');

      // A token table made without its foreign key: a deleted row's pairs would stay.
      await pool.query(`DROP TABLE ${tokens}`);
      await pool.query(`CREATE TABLE ${tokens} (token BINARY(8) NOT NULL, row_key INT NOT NULL, PRIMARY KEY (token, row_key)) ENGINE=InnoDB`);
      const loose = await check(false);
      assert.deepEqual(loose.map((p) => p.code), ['ALE_RANGE_TOKEN_FK_MISSING']);
      assert.match(loose[0].message, /drop "token_check_rows_tokens", then run rangeTokenTableSql/);
      await make();
      assert.deepEqual(await codes(false), ['ALE_RANGE_TOKEN_FK_MISSING'], 'CREATE TABLE IF NOT EXISTS keeps the table as it is');
      await pool.query(`DROP TABLE ${tokens}`);
      await make();
      assert.deepEqual(await check(true), []);

      // A column without a token table has nothing to check; a column that is not a range index is refused.
      const plain = mysqlTable(name, { id: int('id').primaryKey(), amountRange: mysqlMod.rangeIndexColumn('amount_range', { ...on, type: 'number', field: 'amount' }) });
      assert.deepEqual(await mysqlMod.rangeTokenTableCheck(db, plain.amountRange, { rows: true }), { ok: true, problems: [] });
      await assert.rejects(mysqlMod.rangeTokenTableCheck(db, t.id), { code: 'ALE_INVALID_INPUT' });
    } finally {
      await drop();
      await pool.end();
    }
  });

  test('a token table pairs keys of other types: a string, and a serial', async () => {
    const byText = mysqlTable('token_table_text_key', {
      id: varchar('id', { length: 36 }).primaryKey(),
      amountRange: mysqlMod.rangeIndexColumn('amount_range', { ...on, type: 'number', field: 'amount', tokenTable: 'token_table_text_key_tokens' }),
    });
    const bySerial = mysqlTable('token_table_serial_key', {
      id: serial('id').primaryKey(),
      amountRange: mysqlMod.rangeIndexColumn('amount_range', { ...on, type: 'number', field: 'amount', tokenTable: 'token_table_serial_key_tokens' }),
    });
    // Each table's key, its rows' keys, and the key the database gives a row inserted without one.
    const cases = [
      [byText, 'id VARCHAR(36) PRIMARY KEY', ['0b6f5c1e-7d3a-4c55-9a1e-2f4b8c9d0e11', 'b', 'ü-é']],
      // A serial's keys past 2^32, which an INT row_key would not hold (below 2^53: mysql2 reads them as numbers).
      [bySerial, 'id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY', [2 ** 40, 2 ** 40 + 1, 2 ** 52], 2 ** 52 + 1],
    ];
    const drops = (name) => [`DROP TABLE IF EXISTS ${name}_tokens`, `DROP TABLE IF EXISTS ${name}`];
    const c = mysqlDriver(url, (t) => {
      const [name, keyDdl] = [getTableName(t), cases.find(([x]) => x === t)[1]];
      return [...drops(name), `CREATE TABLE ${name} (${keyDdl}, amount_range MEDIUMTEXT)`, ...mysqlMod.rangeTokenTableSql(t, t.amountRange)];
    });
    try {
      for (const [t, , ids, given] of cases) {
        const name = getTableName(t);
        await c.reset(t);
        const values = [-2, 5, 9];
        await c.db.insert(t).values(ids.map((id, k) => ({ id, amountRange: values[k] })));
        if (given !== undefined) await c.db.insert(t).values({ amountRange: 7 });
        const [rows] = await c.pool.query(`SELECT CAST(id AS CHAR) AS id, amount_range FROM ${name}`);
        const [pairs] = await c.pool.query(`SELECT CAST(row_key AS CHAR) AS row_key, LOWER(HEX(token)) AS token FROM ${name}_tokens`);
        const text = rows.flatMap((r) => [...new Set(r.amount_range.split(' '))].map((w) => `${r.id} ${w}`)).sort();
        assert.deepEqual(pairs.map((p) => `${p.row_key} ${p.token}`).sort(), text, name);
        const above = [...ids.slice(1), ...(given === undefined ? [] : [given])];
        const found = await mysqlMod.withTenant('acme', async () => c.db.select({ id: t.id }).from(t).where(mysqlMod.rangeGt(t.amountRange, 0)));
        assert.deepEqual(found.map((r) => String(r.id)).sort(), above.map(String).sort(), name);
        await c.db.delete(t).where(eq(t.id, ids[1]));
        const [[{ left }]] = await c.pool.query(`SELECT COUNT(*) AS \`left\` FROM ${name}_tokens WHERE row_key = ?`, [ids[1]]);
        assert.equal(Number(left), 0, `${name}: a deleted row's pairs go with it`);
      }
    } finally {
      for (const stmt of cases.flatMap(([t]) => drops(getTableName(t)))) await c.pool.query(stmt);
      await c.close();
    }
  });
}
