// Search through Drizzle on every dialect and driver this runtime has:
// SQLite (node:sqlite behind sqlite-proxy and better-sqlite3 under Node,
// bun:sqlite under Bun) with an FTS5 table, PostgreSQL (node-postgres,
// postgres.js) with a GIN index, MariaDB (mysql2) with a FULLTEXT index.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getTableName, sql } from 'drizzle-orm';
import { integer as sqliteInteger, sqliteTable, text as sqliteText } from 'drizzle-orm/sqlite-core';
import { integer as pgInteger, pgTable, text as pgText } from 'drizzle-orm/pg-core';
import { int as mysqlInt, mysqlTable, varchar } from 'drizzle-orm/mysql-core';
import * as sqliteMod from '@sveltycms/ale/drizzle/sqlite';
import * as pgMod from '@sveltycms/ale/drizzle/pg';
import * as mysqlMod from '@sveltycms/ale/drizzle/mysql';
import { openSqlite, SQLITE_DRIVERS } from '../bench/sqlite.mjs';
import { searchSuite } from './search-suite.mjs';
import { ale } from './helpers.mjs';
import { serverUrl } from './servers.mjs';
import { inline, mysqlDriver, oracleDrivers, pgDrivers as pgDriversOn } from './fixtures/dialects.mjs';

/** The search table of every dialect: an id, the tenant, and two encrypted columns with their search tokens, on `ring`, on a tenant key store (`keys`), or on the process-wide ring (neither). */
const columns = (m, { ring, keys, fts }, { int, text }) => {
  const on = keys ? { keys } : ring ? { keyRing: ring } : {};
  return {
    id: int('id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    name: m.encryptedText('name', { collection: 'people', ...on }),
    nameSearch: m.searchIndexColumn('name_search', { collection: 'people', field: 'name', ...on, fts: fts && `${fts}_name` }),
    city: m.encryptedText('city', { collection: 'people', ...on }),
    citySearch: m.searchIndexColumn('city_search', { collection: 'people', field: 'city', ...on, accents: true, fts: fts && `${fts}_city` }),
  };
};

for (const driver of oracleDrivers('sqlite', SQLITE_DRIVERS)) {
  searchSuite({
    name: `sqlite (${driver}, FTS5)`,
    mod: sqliteMod,
    table: (m, { ring, keys, name, scan }) => sqliteTable(name, columns(m, { ring, keys, fts: scan ? undefined : name }, { int: sqliteInteger, text: sqliteText })),
    indexPlan: /VIRTUAL TABLE INDEX/,
    async connect() {
      const dir = mkdtempSync(join(tmpdir(), 'ale-search-'));
      const s = await openSqlite(join(dir, 'search.db'), { driver });
      return {
        db: s.db,
        async reset(table) {
          const name = getTableName(table);
          s.exec(`CREATE TABLE ${name} (id INTEGER PRIMARY KEY, tenant_id TEXT NOT NULL, name TEXT, name_search TEXT, city TEXT, city_search TEXT)`);
          // the name column's statements twice: each can run again
          for (const round of [1, 2]) for (const stmt of sqliteMod.searchIndexSql(table, table.nameSearch, `${name}_name`)) s.exec(stmt);
          for (const stmt of sqliteMod.searchIndexSql(table, table.citySearch, `${name}_city`)) s.exec(stmt);
        },
        explain: async (query) => {
          const { sql: text, params } = query.toSQL();
          return JSON.stringify(await s.db.all(sql.raw(`EXPLAIN QUERY PLAN ${inline(text, params)}`)));
        },
        close() {
          s.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  });
}

const pgUrl = serverUrl('PG_URL');
if (pgUrl) {
  const pgDrivers = pgDriversOn(pgUrl);
  for (const driver of oracleDrivers('pg', Object.keys(pgDrivers))) {
    const open = pgDrivers[driver];
    searchSuite({
      name: `pg (${driver}, GIN)`,
      mod: pgMod,
      table: (m, { ring, keys, name }) => pgTable(`${name}_${driver.replace(/\W/g, '')}`, columns(m, { ring, keys }, { int: pgInteger, text: pgText })),
      indexPlan: /Bitmap Index Scan on search_people\w*_name/,
      async connect() {
        const c = open();
        return {
          db: c.db,
          async reset(table) {
            const name = getTableName(table);
            await c.query(`DROP TABLE IF EXISTS ${name}`);
            await c.query(`CREATE TABLE ${name} (id INTEGER PRIMARY KEY, tenant_id TEXT NOT NULL, name TEXT, name_search BIGINT[], city TEXT, city_search BIGINT[])`);
            // the name column's statements twice: each can run again
            for (const round of [1, 2]) for (const stmt of pgMod.searchIndexSql(table, table.nameSearch, `${name}_name`)) await c.query(stmt);
            for (const stmt of pgMod.searchIndexSql(table, table.citySearch, `${name}_city`)) await c.query(stmt);
            await c.query(`ANALYZE ${name}`);
          },
          explain: async (query) => {
            const { sql: text, params } = query.toSQL();
            // enable_seqscan off: on a table this small the planner may scan; the plan still shows the index can serve the query
            await c.query('SET enable_seqscan = off');
            const rows = await c.query(`EXPLAIN ${inline(text, params, '$')}`);
            await c.query('SET enable_seqscan = on');
            return rows.map((r) => r['QUERY PLAN']).join('\n');
          },
          close: () => c.end(),
        };
      },
    });
  }
}

const mysqlUrl = serverUrl('MYSQL_URL');
if (mysqlUrl && oracleDrivers('mysql', ['mysql2']).length > 0) {
  searchSuite({
    name: 'mysql (MariaDB, mysql2, FULLTEXT)',
    mod: mysqlMod,
    // InnoDB's FULLTEXT index is not transactional for readers: a query that runs while a commit
    // rewrites a row's indexed column, or a moment after, can miss that row (docs/search.md, "Per dialect").
    concurrentReads: false,
    table: (m, { ring, keys, name }) => mysqlTable(name, columns(m, { ring, keys }, { int: mysqlInt, text: (n) => varchar(n, { length: 64 }) })),
    indexPlan: /"type":"fulltext"/,
    async connect() {
      const c = mysqlDriver(mysqlUrl, (table) => {
        const name = getTableName(table);
        return [
          `DROP TABLE IF EXISTS ${name}`,
          `CREATE TABLE ${name} (id INT PRIMARY KEY, tenant_id VARCHAR(64) NOT NULL, name LONGTEXT, name_search MEDIUMTEXT, city LONGTEXT, city_search MEDIUMTEXT)`,
          ...mysqlMod.searchIndexSql(table, table.nameSearch, `${name}_name`),
          ...mysqlMod.searchIndexSql(table, table.citySearch, `${name}_city`),
        ];
      });
      return {
        ...c,
        // Rows holding tokens in `column`, and those of them its FULLTEXT index shows: every
        // word starts with one of the 32 digits, so one of these prefixes finds any row that has one.
        async shown(table, column) {
          const [name, col] = [getTableName(table), column.name];
          const [[held]] = await c.pool.query(`SELECT COUNT(*) AS n FROM ${name} WHERE ${col} <> ''`);
          const [[found]] = await c.pool.query(`SELECT COUNT(*) AS n FROM ${name} WHERE MATCH(${col}) AGAINST('${[...'0123456789abcdefghijklmnopqrstuv'].map((d) => `${d}*`).join(' ')}' IN BOOLEAN MODE)`);
          return { held: Number(held.n), shown: Number(found.n) };
        },
      };
    },
  });
}

test("a ring of tenants as a column's keyRing: once a tenant's key rotates, search and range conditions still find the rows indexed under its previous secret", async () => {
  const ring = ale.KeyRing.forTenants();
  const [older, newer] = [[randomBytes(32), randomBytes(16).toString('base64url')], [randomBytes(32), randomBytes(16).toString('base64url')]];
  ring.setTenant('acme', [older[0]], { keyIds: [older[1]] });
  const on = { collection: 'orders', tenant: 'acme', keyRing: ring };
  const orders = sqliteTable('orders', {
    id: sqliteInteger('id').primaryKey(),
    note: sqliteMod.encryptedText('note', on),
    noteSearch: sqliteMod.searchIndexColumn('note_search', { ...on, field: 'note' }),
    total: sqliteMod.encryptedNumber('total', on),
    totalRange: sqliteMod.rangeIndexColumn('total_range', { ...on, field: 'total', type: 'number' }),
  });
  const s = await openSqlite(':memory:', { wal: false });
  try {
    s.exec('CREATE TABLE orders (id INTEGER PRIMARY KEY, note TEXT, note_search TEXT, total TEXT, total_range TEXT)');
    await s.db.insert(orders).values({ id: 1, note: 'express delivery', noteSearch: 'express delivery', total: 512, totalRange: 512 });
    ring.setTenant('acme', [newer[0], older[0]], { keyIds: [newer[1], older[1]] });
    await s.db.insert(orders).values({ id: 2, note: 'express mail', noteSearch: 'express mail', total: 640, totalRange: 640 });
    const ids = async (where) => (await s.db.select({ id: orders.id }).from(orders).where(where).orderBy(orders.id)).map((r) => r.id);
    assert.deepEqual(await ids(sqliteMod.searchWords(orders.noteSearch, 'express')), [1, 2]);
    assert.deepEqual(await ids(sqliteMod.searchPrefix(orders.noteSearch, 'deliv')), [1]);
    assert.deepEqual(await ids(sqliteMod.rangeGte(orders.totalRange, 500)), [1, 2]);
  } finally {
    s.close();
  }
});
