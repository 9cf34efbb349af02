// The Drizzle contract on a real MariaDB server, through mysql2.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import mysql from 'mysql2/promise';
import { drizzle } from 'drizzle-orm/mysql2';
import { bigint, int, mysqlTable, varchar } from 'drizzle-orm/mysql-core';
import * as mod from '@sveltycms/ale/drizzle/mysql';
import { defineTables, drizzleSuite, tableDdl, TABLES } from './drizzle-suite.mjs';
import { serverUrl } from './servers.mjs';
import { ale, SECRET } from './helpers.mjs';
import { serverExample } from './fixtures/readme-examples.mjs';

const url = serverUrl('MYSQL_URL');
const ddl = tableDdl({ int: 'INT', text: 'VARCHAR(64)', envelope: 'LONGTEXT', index: 'CHAR(43)', binary: 'LONGBLOB' });
const text = (name) => varchar(name, { length: 64 });

if (url) {
  drizzleSuite({
    name: 'mysql (MariaDB, mysql2)',
    mod,
    binaryType: 'longblob',
    schema: (m, rings) => defineTables(m, { table: mysqlTable, int, text }, rings),
    async connect() {
      const pool = mysql.createPool({ uri: url, connectionLimit: 4 });
      await pool.query('SELECT 1');
      return {
        db: drizzle(pool),
        async reset() {
          await pool.query(`DROP TABLE IF EXISTS ${TABLES.join(', ')}`);
          for (const stmt of ddl) await pool.query(stmt);
        },
        close: () => pool.end(),
      };
    },
  });
}

if (url) {
  test("README: the MySQL / MariaDB example runs (after the contract suite, on the suite's database)", async () => {
    const pool = mysql.createPool({ uri: url, connectionLimit: 1 });
    try {
      const ddl = 'CREATE TABLE users (id INT AUTO_INCREMENT PRIMARY KEY, tenant_id VARCHAR(64) NOT NULL, email LONGTEXT)';
      const { rows, stored } = await serverExample('mysql', { url, ddl, query: async (q) => (await pool.query(q))[0] });
      assert.deepEqual(rows, [{ id: 1, tenantId: 'tenant-1', email: 'a@b.c' }]);
      assert.equal(new ale.KeyRing([SECRET]).decrypt(stored[0], 'tenant-1', 'users', 'email'), 'a@b.c');
    } finally {
      await pool.end();
    }
  });
}

if (url) {
  test('migratePlaintext refuses a write the server cut to fit (sql_mode without STRICT_TRANS_TABLES), rolls the batch back and keeps the plaintext', async () => {
    const conn = await mysql.createConnection(url);
    try {
      // A table from before the package: its column is shorter than the envelopes; the session is not strict.
      await conn.query('DROP TABLE IF EXISTS ale_cut');
      await conn.query('CREATE TABLE ale_cut (id INT PRIMARY KEY, body VARCHAR(40)) ENGINE=InnoDB');
      await conn.query("INSERT INTO ale_cut VALUES (1, 'short'), (2, 'hello, this is a note')");
      await conn.query("SET SESSION sql_mode = ''");
      const cut = mysqlTable('ale_cut', { id: int('id').primaryKey(), body: mod.encryptedText('body', { collection: 'notes', keyRing: new ale.KeyRing([SECRET]) }) });
      const e = await mod.migratePlaintext(drizzle(conn), { table: cut, key: cut.id, columns: [{ column: cut.body }], tenant: 'acme' }).catch((e) => e);
      assert.equal(e?.code, 'ALE_BATCH_WRITE_FAILED', String(e?.stack ?? e));
      assert.match(e.message, /row 1 with 1 warning \(codes 1265\).*STRICT_TRANS_TABLES/);
      assert.ok(!e.message.includes('short') && !e.message.includes('hello'));
      const [rows] = await conn.query('SELECT id, body FROM ale_cut ORDER BY id');
      assert.deepEqual(rows.map((r) => r.body), ['short', 'hello, this is a note'], 'the batch was rolled back');
    } finally {
      await conn.query('DROP TABLE IF EXISTS ale_cut').catch(() => {});
      await conn.end();
    }
  });
}

if (url) {
  test('a BIGINT key past 2^53: read rounded (mysql2 by default) the batch operations refuse, naming the pool options; read exactly they write every row', { timeout: 30_000 }, async () => {
    const ring = new ale.KeyRing([SECRET]);
    const base = 2n ** 53n;
    const run = async (options, mode, batchSize, keys = [1n, 2n, 3n, 4n]) => {
      const conn = await mysql.createConnection({ uri: url, ...options });
      try {
        await conn.query('DROP TABLE IF EXISTS ale_big');
        await conn.query('CREATE TABLE ale_big (id BIGINT PRIMARY KEY, body LONGTEXT)');
        for (const i of keys) await conn.query('INSERT INTO ale_big VALUES (?, ?)', [String(base + i), `p${i}`]);
        const big = mysqlTable('ale_big', { id: bigint('id', { mode }).primaryKey(), body: mod.encryptedText('body', { collection: 'notes', keyRing: ring }) });
        const result = await mod.migratePlaintext(drizzle(conn), { table: big, key: big.id, columns: [{ column: big.body }], tenant: 'acme', batchSize }).catch((e) => e);
        const [rows] = await conn.query('SELECT CAST(id AS CHAR) AS id, body FROM ale_big ORDER BY id');
        return { result, rows: rows.map((r) => [r.id, ale.isEnvelope(r.body) ? ring.decrypt(r.body, 'acme', 'notes', 'body') : `plain ${r.body}`]) };
      } finally {
        await conn.query('DROP TABLE IF EXISTS ale_big').catch(() => {});
        await conn.end();
      }
    };
    const ids = [1n, 2n, 3n, 4n].map((i) => String(base + i));
    for (const [mode, batchSize, said] of [['number', 500, /read 9007199254740992, past 2\^53/], ['bigint', 500, /read 9007199254740992n, past 2\^53/], ['bigint', 1, /read 9007199254740992n, past 2\^53/]]) {
      const { result, rows } = await run({}, mode, batchSize);
      assert.equal(result?.code, 'ALE_INVALID_INPUT', `${mode}, batches of ${batchSize}: ${result?.stack ?? JSON.stringify(result, (_, v) => (typeof v === 'bigint' ? `${v}` : v))}`);
      assert.match(result.message, said);
      assert.match(result.message, /supportBigNumbers: true and bigNumberStrings: true/);
      // refused before the batch was written: every row keeps its plaintext
      assert.deepEqual(rows, ids.map((id, i) => [id, `plain p${i + 1}`]));
    }
    // One key alone, 2^53 + 3, read as 2^53 + 4 and made a bigint: nothing repeats, yet the walk would step past it in plaintext.
    const alone = await run({}, 'bigint', 500, [3n]);
    assert.equal(alone.result?.code, 'ALE_INVALID_INPUT', String(alone.result?.stack ?? JSON.stringify(alone.result, (_, v) => (typeof v === 'bigint' ? `${v}` : v))));
    assert.match(alone.result.message, /read 9007199254740996n, past 2\^53/);
    assert.deepEqual(alone.rows, [[String(base + 3n), 'plain p3']]);
    const exact = await run({ supportBigNumbers: true, bigNumberStrings: true }, 'bigint', 1);
    assert.equal(exact.result.written, 4);
    assert.deepEqual(exact.rows, ids.map((id, i) => [id, `p${i + 1}`]));
  });
}

test('reindexSearch refuses a server whose innodb_ft_min_token_size (read-only, set at start-up) would leave every 6-character search word out of FULLTEXT', async () => {
  const keyRing = new ale.KeyRing([SECRET]);
  const notes = mysqlTable('notes', {
    id: int('id').primaryKey(),
    body: mod.encryptedText('body', { collection: 'notes', keyRing }),
    bodySearch: mod.searchIndexColumn('body_search', { collection: 'notes', field: 'body', keyRing }),
  });
  const asked = [];
  // A server set so: what it answers to the one query the check sends, before any row is read.
  const server = (n) => ({ execute: async (q) => (asked.push(q), [[{ n }], []]) });
  const options = { table: notes, key: notes.id, columns: [{ source: notes.body, index: notes.bodySearch }], tenant: 'acme' };
  const e = await mod.reindexSearch(server(7), options).catch((e) => e);
  assert.equal(e?.code, 'ALE_INVALID_INPUT', String(e?.stack ?? e));
  assert.match(e.message, /innodb_ft_min_token_size is 7, .* no search would find a row. Set it to 6 or less/);
  assert.equal(asked.length, 1);
  // the serverless drivers' answer, an object with rows, is read too
  const serverless = { execute: async () => ({ rows: [{ n: 9 }] }) };
  assert.match((await mod.reindexSearch(serverless, options).catch((e) => e))?.message, /innodb_ft_min_token_size is 9/);
  // at 6 the check passes, and the run goes on to read the table (which this stand-in cannot)
  const passed = await mod.reindexSearch(server(6), options).catch((e) => e);
  assert.doesNotMatch(String(passed?.message), /innodb_ft_min_token_size/);
});

test('reindexSearch refuses a server whose innodb_ft_max_token_size (read-only, down to 10) would leave every 16-digit range word out of FULLTEXT, unless the range columns have token tables', async () => {
  const keyRing = new ale.KeyRing([SECRET]);
  const measures = mysqlTable('measures', {
    id: int('id').primaryKey(),
    body: mod.encryptedText('body', { collection: 'measures', keyRing }),
    bodySearch: mod.searchIndexColumn('body_search', { collection: 'measures', field: 'body', keyRing }),
    amount: mod.encryptedNumber('amount', { collection: 'measures', keyRing }),
    amountRange: mod.rangeIndexColumn('amount_range', { type: 'number', collection: 'measures', field: 'amount', keyRing }),
    amountTable: mod.rangeIndexColumn('amount_table', { type: 'number', collection: 'measures', field: 'amount', keyRing, tokenTable: 'measures_amount_tokens' }),
  });
  let asked = 0;
  const server = (x) => ({ execute: async () => (asked++, [[{ n: 3, x }], []]) });
  const run = (x, pairs) => mod.reindexSearch(server(x), { table: measures, key: measures.id, columns: pairs, tenant: 'acme' }).catch((e) => e);
  const [range, tabled, search] = [{ source: measures.amount, index: measures.amountRange }, { source: measures.amount, index: measures.amountTable }, { source: measures.body, index: measures.bodySearch }];
  const e = await run(12, [search, range]);
  assert.equal(e?.code, 'ALE_INVALID_INPUT', String(e?.stack ?? e));
  assert.match(e.message, /innodb_ft_max_token_size is 12, .* no range query would find a row. Set it to 16 or more/);
  // the search words (6 digits) and a token table's rows do not depend on it; at 16 range words are kept
  for (const [x, pairs] of [[12, [search]], [12, [tabled]], [16, [range]]]) assert.doesNotMatch(String((await run(x, pairs))?.message), /innodb_ft_max_token_size/);
  // columns that hold no FULLTEXT words (range columns with token tables) send no query to check
  asked = 0;
  await run(12, [tabled]);
  assert.equal(asked, 0);
});

test('searchIndexSql names a mysqlSchema table with its database', async () => {
  const { mysqlSchema } = await import('drizzle-orm/mysql-core');
  const keyRing = new ale.KeyRing([SECRET]);
  const users = mysqlSchema('cms').table('users', { id: int('id').primaryKey(), nameSearch: mod.searchIndexColumn('name_search', { collection: 'users', field: 'name', keyRing }) });
  assert.deepEqual(mod.searchIndexSql(users, users.nameSearch, 'users_search'), ['ALTER TABLE `cms`.`users` ADD FULLTEXT INDEX `users_search` (`name_search`)']);
});
