// Range and ordered queries at scale (docs/search.md, "Ranges at 100,000
// rows"): numbers in a plaintext table with a B-tree index and in an
// encrypted one with a range index column, on each dialect; the values are
// the range tests' mix (negatives, fractions, extremes, shared values,
// NULLs) or, with `--values prices`, prices bunched as real amounts are
// (bench/range-data.mjs); with `--ids values`, ids follow the values, as a
// creation date's do, so a descending page is newest first. Three
// queries, each against the plaintext way of asking it, median and p95: a
// BETWEEN of about 100 rows, every row of it; a first page of 20 rows in
// value order (ascending or descending, ORDER BY x LIMIT 20); and the 20
// after a value at a random rank (WHERE x > v ORDER BY x LIMIT 20, or <
// and DESC). The plaintext side is asked twice: as raw SQL through the
// driver, and through Drizzle as an application asks it, selecting the id
// and the value as the encrypted side does (the search bench's way); the
// three take turns going first. Every answer is checked against the raw
// plaintext one. Also the index's size per row.
//
//   node bench/range-queries.mjs [--rows 100000] [--queries 200] [--dialects sqlite,pg,mysql,mysql-tokens]
//                                [--values measures|prices] [--ids insertion|values] [--random-page-cost 1.1]
//   bun bench/range-queries.mjs …
// PostgreSQL and MariaDB come from PG_URL and MYSQL_URL (eval "$(scripts/services.sh start)").
// PostgreSQL's connections set random_page_cost (docs/search.md, "Ranges at 100,000 rows").
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { asc, between, desc, gt, isNotNull, lt } from 'drizzle-orm';
import { idsFollowingValues, RANGE_CONTEXT, RANGE_SECRET, RANGE_VALUES } from './range-data.mjs';
import { openSqlite } from './sqlite.mjs';
import { nearestRank, seededRandom } from './stats.mjs';

const { values: flags } = parseArgs({ options: { rows: { type: 'string', default: '100000' }, queries: { type: 'string', default: '200' }, dialects: { type: 'string', default: 'sqlite,pg,mysql,mysql-tokens' }, 'random-page-cost': { type: 'string', default: '1.1' }, values: { type: 'string', default: 'measures' }, ids: { type: 'string', default: 'insertion' } } });
const ROWS = Number(flags.rows);
const QUERIES = Number(flags.queries);
const ale = createRequire(import.meta.url)('../index.js');
const runtime = process.versions.bun ? `Bun ${process.versions.bun}` : `Node ${process.version}`;
const on = { ...RANGE_CONTEXT, keyRing: new ale.KeyRing([RANGE_SECRET]) };

// The plaintext side's B-trees, one per direction of `ORDER BY amount …, id`:
// with (amount, id) alone, MariaDB sorts the rows of a descending page
// (filesort) where it reads an ascending one off the index, which would
// flatter the encrypted side (docs/search.md, "Ranges at 100,000 rows").
const PLAIN_INDEXES = ['CREATE INDEX rq_plain_amount ON rq_plain (amount, id)', 'CREATE INDEX rq_plain_amount_desc ON rq_plain (amount DESC, id)'];

/** The dialects: tables, DDL, the plaintext queries (rows of { id }), and the index's size. */
const DIALECTS = {
  async sqlite() {
    const { integer, real, sqliteTable } = await import('drizzle-orm/sqlite-core');
    const m = await import('@sveltycms/ale/drizzle/sqlite');
    const dir = mkdtempSync(join(tmpdir(), 'ale-range-q-'));
    const s = await openSqlite(join(dir, 'q.db'));
    const enc = sqliteTable('rq_enc', { id: integer('id').primaryKey(), amount: m.encryptedNumber('amount', on), amountRange: m.rangeIndexColumn('amount_range', { ...on, field: 'amount', type: 'number', fts: 'rq_enc_fts' }) });
    const plain = sqliteTable('rq_plain', { id: integer('id').primaryKey(), amount: real('amount') });
    for (const stmt of ['CREATE TABLE rq_plain (id INTEGER PRIMARY KEY, amount REAL)', 'CREATE TABLE rq_enc (id INTEGER PRIMARY KEY, amount TEXT, amount_range TEXT)']) s.exec(stmt);
    for (const stmt of m.searchIndexSql(enc, enc.amountRange, 'rq_enc_fts')) s.exec(stmt);
    return {
      name: `SQLite ${s.sqliteVersion} (${s.driver})`,
      m,
      db: s.db,
      enc,
      plain,
      afterLoad: () => PLAIN_INDEXES.forEach((stmt) => s.exec(stmt)),
      between: (lo, hi) => s.all(`SELECT id FROM rq_plain WHERE amount BETWEEN ${lo} AND ${hi} ORDER BY id`),
      first: (dir) => s.all(`SELECT id FROM rq_plain WHERE amount IS NOT NULL ORDER BY amount ${dir}, id LIMIT 20`),
      after: (dir, v) => s.all(`SELECT id FROM rq_plain WHERE amount ${dir === 'ASC' ? '>' : '<'} ? ORDER BY amount ${dir}, id LIMIT 20`, v),
      indexBytes: () => Number(s.all('SELECT SUM(length(amount_range)) AS n FROM rq_enc')[0].n) + Number(s.all('SELECT SUM(length(block)) AS n FROM rq_enc_fts_data')[0].n),
      close: () => {
        s.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
  async pg() {
    if (!process.env.PG_URL) throw new Error('PG_URL is not set: eval "$(scripts/services.sh start)"');
    const { doublePrecision, integer, pgTable } = await import('drizzle-orm/pg-core');
    const { default: postgres } = await import('postgres');
    const { drizzle } = await import('drizzle-orm/postgres-js');
    const m = await import('@sveltycms/ale/drizzle/pg');
    const client = postgres(process.env.PG_URL, { max: 2, onnotice: () => {}, connection: { random_page_cost: flags['random-page-cost'] } });
    const enc = pgTable('rq_enc', { id: integer('id').primaryKey(), amount: m.encryptedNumber('amount', on), amountRange: m.rangeIndexColumn('amount_range', { ...on, field: 'amount', type: 'number' }) });
    const plain = pgTable('rq_plain', { id: integer('id').primaryKey(), amount: doublePrecision('amount') });
    for (const stmt of ['DROP TABLE IF EXISTS rq_plain, rq_enc', 'CREATE TABLE rq_plain (id integer PRIMARY KEY, amount double precision)', 'CREATE TABLE rq_enc (id integer PRIMARY KEY, amount text, amount_range bigint[])']) await client.unsafe(stmt);
    const [{ version }] = await client`select current_setting('server_version') as version`;
    return {
      name: `PostgreSQL ${version} (postgres.js, random_page_cost ${flags['random-page-cost']})`,
      m,
      db: drizzle(client),
      enc,
      plain,
      afterLoad: async () => {
        for (const stmt of m.searchIndexSql(enc, enc.amountRange, 'rq_enc_amount')) await client.unsafe(stmt);
        for (const stmt of PLAIN_INDEXES) await client.unsafe(stmt);
        await client.unsafe('ANALYZE rq_plain; ANALYZE rq_enc');
      },
      between: (lo, hi) => client`SELECT id FROM rq_plain WHERE amount BETWEEN ${lo} AND ${hi} ORDER BY id`,
      first: (dir) => client.unsafe(`SELECT id FROM rq_plain WHERE amount IS NOT NULL ORDER BY amount ${dir}, id LIMIT 20`),
      after: (dir, v) => client.unsafe(`SELECT id FROM rq_plain WHERE amount ${dir === 'ASC' ? '>' : '<'} $1 ORDER BY amount ${dir}, id LIMIT 20`, [v]),
      indexBytes: async () => Number((await client`SELECT (SELECT sum(pg_column_size(amount_range)) FROM rq_enc) + pg_relation_size('rq_enc_amount') AS n`)[0].n),
      close: () => client.end(),
    };
  },
  mysql: () => mysqlDialect(false),
  // The range column with a token table instead of FULLTEXT (rangeTokenTableSql).
  'mysql-tokens': () => mysqlDialect(true),
};

/** MariaDB, its range column found through FULLTEXT, or through a token table with `tokens`. */
async function mysqlDialect(tokens) {
  if (!process.env.MYSQL_URL) throw new Error('MYSQL_URL is not set: eval "$(scripts/services.sh start)"');
  const { double, int, mysqlTable } = await import('drizzle-orm/mysql-core');
  const { createPool } = await import('mysql2/promise');
  const { drizzle } = await import('drizzle-orm/mysql2');
  const m = await import('@sveltycms/ale/drizzle/mysql');
  const pool = createPool({ uri: process.env.MYSQL_URL, connectionLimit: 2 });
  const enc = mysqlTable('rq_enc', { id: int('id').primaryKey(), amount: m.encryptedNumber('amount', on), amountRange: m.rangeIndexColumn('amount_range', { ...on, field: 'amount', type: 'number', tokenTable: tokens ? 'rq_enc_amount_tokens' : undefined }) });
  const plain = mysqlTable('rq_plain', { id: int('id').primaryKey(), amount: double('amount') });
  for (const stmt of ['DROP TABLE IF EXISTS rq_enc_amount_tokens, rq_plain, rq_enc', 'CREATE TABLE rq_plain (id INT PRIMARY KEY, amount DOUBLE)', 'CREATE TABLE rq_enc (id INT PRIMARY KEY, amount TEXT, amount_range MEDIUMTEXT)']) await pool.query(stmt);
  const [[{ v }]] = await pool.query('SELECT version() AS v');
  const rows = async (q, params) => (await pool.query(q, params))[0];
  return {
    name: `MariaDB ${v.split('-')[0]} (mysql2${tokens ? ', token table' : ''})`,
    m,
    db: drizzle(pool),
    enc,
    plain,
    afterLoad: async () => {
      const ddl = tokens ? [...m.rangeTokenTableSql(enc, enc.amountRange), 'ANALYZE TABLE rq_enc_amount_tokens'] : m.searchIndexSql(enc, enc.amountRange, 'rq_enc_amount');
      for (const stmt of ddl) await pool.query(stmt);
      for (const stmt of PLAIN_INDEXES) await pool.query(stmt);
    },
    between: (lo, hi) => rows('SELECT id FROM rq_plain WHERE amount BETWEEN ? AND ? ORDER BY id', [lo, hi]),
    first: (dir) => rows(`SELECT id FROM rq_plain WHERE amount IS NOT NULL ORDER BY amount ${dir}, id LIMIT 20`),
    after: (dir, v) => rows(`SELECT id FROM rq_plain WHERE amount ${dir === 'ASC' ? '>' : '<'} ? ORDER BY amount ${dir}, id LIMIT 20`, [v]),
    // The column's text, and the token table's data and indexes as InnoDB counts them (pages, after ANALYZE).
    indexBytes: async () =>
      Number((await rows('SELECT SUM(LENGTH(amount_range)) AS n FROM rq_enc'))[0].n) +
      (tokens ? Number((await rows("SELECT data_length + index_length AS n FROM information_schema.tables WHERE table_schema = database() AND table_name = 'rq_enc_amount_tokens'"))[0].n) : 0),
    close: () => pool.end(),
  };
}

if (!RANGE_VALUES[flags.values]) throw new Error(`--values must be one of ${Object.keys(RANGE_VALUES).join(', ')}`);
if (flags.ids !== 'insertion' && flags.ids !== 'values') throw new Error('--ids must be insertion (the order the values were made in) or values');
const data = flags.ids === 'values' ? idsFollowingValues(RANGE_VALUES[flags.values](ROWS)) : RANGE_VALUES[flags.values](ROWS);
const present = data.filter((r) => r.amount !== null).sort((a, b) => a.amount - b.amount || a.id - b.id);
const rand = seededRandom(9);
const ms = (x) => `${(x / 1e6).toFixed(2)} ms`;
const ids = (rows) => JSON.stringify(rows.map((r) => r.id));

console.log(`${runtime}, ${ROWS.toLocaleString('en-US')} rows of ${flags.values}${flags.ids === 'values' ? ' (ids in value order)' : ''}, ${QUERIES} queries of each kind\n`);
console.log('| dialect | query | encrypted median / p95 | B-tree, raw SQL: median / p95 (encrypted ÷) | B-tree, through Drizzle: median / p95 (encrypted ÷) | queries per answer | index per row |');
console.log('| --- | --- | --- | --- | --- | --- | --- |');
for (const name of flags.dialects.split(',')) {
  const d = await DIALECTS[name]();
  try {
    const t0 = Date.now();
    for (let at = 0; at < data.length; at += 500) {
      const batch = data.slice(at, at + 500);
      await d.db.insert(d.plain).values(batch.map((r) => ({ id: r.id, amount: r.amount })));
      await d.db.insert(d.enc).values(batch.map((r) => ({ id: r.id, amount: r.amount, amountRange: r.amount })));
    }
    await d.afterLoad();
    const loadS = (Date.now() - t0) / 1000;
    const perRow = (await d.indexBytes()) / ROWS;
    const select = () => d.db.select({ id: d.enc.id, amount: d.enc.amount }).from(d.enc);
    /** The plaintext rows of `where` through Drizzle, in value order `dir` (then id), at most `limit`. */
    const plainDrizzle = (where, dir, limit) => {
      const q = d.db.select({ id: d.plain.id, amount: d.plain.amount }).from(d.plain).where(where);
      return dir === undefined ? q.orderBy(asc(d.plain.id)) : q.orderBy(dir === 'asc' ? asc(d.plain.amount) : desc(d.plain.amount), asc(d.plain.id)).limit(limit);
    };
    /** 20 rows in value order, in the direction `dir`, within `within` if given. */
    const ordered = (dir, within) => d.m.orderedPage((where, limit, offset) => select().where(where).orderBy(asc(d.enc.id)).limit(limit).offset(offset), { column: d.enc.amountRange, value: (r) => r.amount, order: dir, limit: 20, within });
    const kinds = {
      // About 100 rows around a random rank.
      between: async () => {
        const from = Math.floor(rand() * (present.length - 100));
        const [lo, hi] = [present[from].amount, present[from + 99].amount];
        return {
          // The condition is made inside the timing: its cover and tokens are part of the query's cost.
          encrypted: async () => {
            const where = d.m.rangeBetween(d.enc.amountRange, lo, hi);
            return (await select().where(where).orderBy(asc(d.enc.id))).filter((r) => where.matches(r.amount));
          },
          plaintext: () => d.between(lo, hi),
          drizzle: () => plainDrizzle(between(d.plain.amount, lo, hi)),
          queries: () => 1,
        };
      },
      'order by, first 20': async () => {
        const dir = rand() < 0.5 ? 'asc' : 'desc';
        let page;
        return {
          encrypted: async () => {
            page = await ordered(dir);
            return page.rows;
          },
          plaintext: () => d.first(dir.toUpperCase()),
          drizzle: () => plainDrizzle(isNotNull(d.plain.amount), dir, 20),
          queries: () => page.queries,
        };
      },
      // The next page after a value at a random rank (keyset paging): a page
      // inside the values, where the first pages above sit at the ends.
      'order by, 20 after a value': async () => {
        const dir = rand() < 0.5 ? 'asc' : 'desc';
        const v = present[Math.floor(rand() * present.length)].amount;
        let page;
        return {
          encrypted: async () => {
            const within = dir === 'asc' ? d.m.rangeGt(d.enc.amountRange, v) : d.m.rangeLt(d.enc.amountRange, v);
            page = await ordered(dir, within);
            return page.rows;
          },
          plaintext: () => d.after(dir.toUpperCase(), v),
          drizzle: () => plainDrizzle(dir === 'asc' ? gt(d.plain.amount, v) : lt(d.plain.amount, v), dir, 20),
          queries: () => page.queries,
        };
      },
    };
    for (const [kind, make] of Object.entries(kinds)) {
      const times = { encrypted: [], plaintext: [], drizzle: [] };
      let queries = 0;
      for (let i = 0; i < QUERIES; i++) {
        const q = await make();
        const got = {};
        // Each side goes first on every third query.
        const sides = ['encrypted', 'plaintext', 'drizzle'];
        for (let k = 0; k < sides.length; k++) {
          const side = sides[(i + k) % sides.length];
          const a = process.hrtime.bigint();
          got[side] = await q[side]();
          times[side].push(Number(process.hrtime.bigint() - a));
        }
        if (ids(got.encrypted) !== ids(got.plaintext)) throw new Error(`${name} ${kind}: the encrypted answer differs from the plaintext one`);
        if (ids(got.drizzle) !== ids(got.plaintext)) throw new Error(`${name} ${kind}: the plaintext answer through Drizzle differs from the raw one`);
        queries += q.queries();
      }
      const cell = (side) => `${ms(nearestRank(times[side], 0.5))} / ${ms(nearestRank(times[side], 0.95))}`;
      const ratio = (side) => (nearestRank(times.encrypted, 0.5) / nearestRank(times[side], 0.5)).toFixed(1);
      console.log(`| ${d.name} | ${kind} | ${cell('encrypted')} | ${cell('plaintext')} (${ratio('plaintext')}×) | ${cell('drizzle')} (${ratio('drizzle')}×) | ${(queries / QUERIES).toFixed(1)} | ${kind === 'between' ? `${perRow.toFixed(0)} B (load ${loadS.toFixed(0)} s)` : ''} |`);
    }
  } finally {
    await d.close();
  }
}
