// Ranges and order through Drizzle on every dialect and driver this
// runtime has: SQLite (node:sqlite behind sqlite-proxy and better-sqlite3
// under Node, bun:sqlite under Bun) with an FTS5 table, PostgreSQL
// (node-postgres, postgres.js) with a GIN index, MariaDB (mysql2) with a
// FULLTEXT index, and with token tables (rangeTokenTableSql) instead.
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
import { rangeSuite } from './range-suite.mjs';
import { serverUrl } from './servers.mjs';
import { inline, mysqlDriver, oracleDrivers, pgDrivers as pgDriversOn } from './fixtures/dialects.mjs';

const FIELDS = { amount: 'number', total: 'bigint', born: 'date' };
const ENCRYPTED = { number: 'encryptedNumber', bigint: 'encryptedBigint', date: 'encryptedDate' };

/** The range table of every dialect: an id, the tenant, and three encrypted columns with their range indexes (on FTS5 tables or token tables named after `fts` or `tokens`). */
const columns = (m, { ring, keys, fts, tokens }, { int, text }) => {
  const on = keys ? { keys } : ring ? { keyRing: ring } : {};
  const out = { id: int('id').primaryKey(), tenantId: text('tenant_id').notNull() };
  for (const [field, type] of Object.entries(FIELDS)) {
    out[field] = m[ENCRYPTED[type]](field, { collection: 'measures', ...on });
    out[`${field}Range`] = m.rangeIndexColumn(`${field}_range`, { type, collection: 'measures', field, ...on, fts: fts && `${fts}_${field}`, tokenTable: tokens && `${tokens}_${field}_tokens` });
  }
  return out;
};
const indexSql = (mod, table, name) => Object.keys(FIELDS).flatMap((f) => mod.searchIndexSql(table, table[`${f}Range`], `${name}_${f}`));

for (const driver of oracleDrivers('sqlite', SQLITE_DRIVERS)) {
  rangeSuite({
    name: `sqlite (${driver}, FTS5)`,
    mod: sqliteMod,
    table: (m, { ring, keys, name }) => sqliteTable(name, columns(m, { ring, keys, fts: name }, { int: sqliteInteger, text: sqliteText })),
    indexPlan: /VIRTUAL TABLE INDEX/,
    samples: true,
    async connect() {
      const dir = mkdtempSync(join(tmpdir(), 'ale-range-'));
      const s = await openSqlite(join(dir, 'range.db'), { driver });
      return {
        db: s.db,
        async reset(table) {
          const name = getTableName(table);
          for (const f of Object.keys(FIELDS)) s.exec(`DROP TABLE IF EXISTS ${name}_${f}`);
          s.exec(`DROP TABLE IF EXISTS ${name}`);
          s.exec(`CREATE TABLE ${name} (id INTEGER PRIMARY KEY, tenant_id TEXT NOT NULL, amount TEXT, amount_range TEXT, total TEXT, total_range TEXT, born TEXT, born_range TEXT)`);
          for (const stmt of indexSql(sqliteMod, table, name)) s.exec(stmt);
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
    rangeSuite({
      name: `pg (${driver}, GIN)`,
      mod: pgMod,
      workers: true,
      // SearchSql.ends: the rows at both ends of the primary key.
      ends: true,
      // SearchSql.spots: a large part's spots asked first.
      spots: true,
      table: (m, { ring, keys, name }) => pgTable(`${name}_${driver.replace(/\W/g, '')}`, columns(m, { ring, keys }, { int: pgInteger, text: pgText })),
      indexPlan: /Bitmap Index Scan on range_measures\w*_amount/,
      async connect() {
        const c = open();
        return {
          db: c.db,
          async reset(table) {
            const name = getTableName(table);
            await c.query(`DROP TABLE IF EXISTS ${name}`);
            await c.query(`CREATE TABLE ${name} (id INTEGER PRIMARY KEY, tenant_id TEXT NOT NULL, amount TEXT, amount_range BIGINT[], total TEXT, total_range BIGINT[], born TEXT, born_range BIGINT[])`);
            for (const stmt of indexSql(pgMod, table, name)) await c.query(stmt);
            await c.query(`ANALYZE ${name}`);
          },
          // The planner as it is (no enable_seqscan): a cover of at most 16 looked-up tokens is what keeps it on GIN. After
          // the suite's inserts, GIN's pending list is long and the planner costs the index above a scan of the table until
          // VACUUM merges it, as autovacuum would.
          explain: async (query, table) => {
            await c.query(`VACUUM ANALYZE ${getTableName(table)}`);
            const { sql: text, params } = query.toSQL();
            const rows = await c.query(`EXPLAIN ${inline(text, params, '$')}`);
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
  // FULLTEXT on the range columns, or a token table each.
  for (const tokens of [false, true]) {
    rangeSuite({
      name: `mysql (MariaDB, mysql2, ${tokens ? 'token tables' : 'FULLTEXT'})`,
      mod: mysqlMod,
      workers: true,
      ends: true,
      spots: true,
      // InnoDB's FULLTEXT index shows a committed change to other connections a moment late (docs/search.md, "Per dialect"); a B-tree does not.
      concurrentReads: tokens,
      table: (m, { ring, keys, name }) => mysqlTable(name, columns(m, { ring, keys, tokens: tokens ? name : undefined }, { int: mysqlInt, text: (n) => varchar(n, { length: 64 }) })),
      indexPlan: tokens ? /"table":"range_[a-z_]+_amount_tokens","type":"range","possible_keys":"[^"]*","key":"PRIMARY"/ : /"type":"fulltext"/,
      connect: () =>
        mysqlDriver(mysqlUrl, (table) => {
          const name = getTableName(table);
          return [
            // Token tables first, whichever suite made them: their foreign keys point to the table. Dropping it drops its triggers.
            ...Object.keys(FIELDS).map((f) => `DROP TABLE IF EXISTS ${name}_${f}_tokens`),
            `DROP TABLE IF EXISTS ${name}`,
            `CREATE TABLE ${name} (id INT PRIMARY KEY, tenant_id VARCHAR(64) NOT NULL, amount TEXT, amount_range MEDIUMTEXT, total TEXT, total_range MEDIUMTEXT, born TEXT, born_range MEDIUMTEXT)`,
            ...(tokens ? Object.keys(FIELDS).flatMap((f) => mysqlMod.rangeTokenTableSql(table, table[`${f}Range`])) : indexSql(mysqlMod, table, name)),
          ];
        }),
    });
  }
}
