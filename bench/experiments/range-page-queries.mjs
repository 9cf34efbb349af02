// Where an ordered page's time goes on PostgreSQL and MariaDB
// (docs/search.md, "Where a page's time goes, query by query"): each query
// of a few pages, what it asked (its range's width in hex digits of the
// tree, the spot level for a spot sample, the LIMIT) and what it cost;
// then, for the first page ascending, checked against the plaintext
// B-tree's first page first, each of its queries alone, the page, and the
// B-tree's page, in an order that rotates each round, so that a page's
// time can be set against its queries' and the B-tree's in one run.
//
// With --side, the first page's queries are also asked of another index: a
// table of (token, row id) pairs under a B-tree primary key, built from the
// range column, joined back to the rows; each answer is checked against the
// column index's first, and timed in the same rotation (docs/search.md, "A
// B-tree of tokens instead of FULLTEXT"). The table is dropped at the end.
//
// It reads the tables bench/range-queries.mjs leaves behind, loaded with its
// default rows and values:
//   node bench/range-queries.mjs --dialects pg,mysql --queries 1
//   node bench/experiments/range-page-queries.mjs [--dialects pg,mysql] [--pages 6] [--rounds 30] [--side]
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { asc } from 'drizzle-orm';
import { boundsOf } from '../../dist/esm/drizzle/range/operators.js';
import { RANGE_CONTEXT, RANGE_SECRET } from '../range-data.mjs';
import { nearestRank, seededRandom } from '../stats.mjs';

const { values: flags } = parseArgs({ options: { dialects: { type: 'string', default: 'pg,mysql' }, pages: { type: 'string', default: '6' }, rounds: { type: 'string', default: '30' }, side: { type: 'boolean', default: false } } });
const ale = createRequire(import.meta.url)('../../index.js');
// range-queries.mjs's key and column, so that the tokens are the table's.
const on = { ...RANGE_CONTEXT, keyRing: new ale.KeyRing([RANGE_SECRET]) };
const FIRST_PAGE = (dir) => `SELECT id FROM rq_plain WHERE amount IS NOT NULL ORDER BY amount ${dir}, id LIMIT 20`;

/** Each dialect's table and connection, as range-queries.mjs makes them; `plain(sql)` runs a plaintext query. */
const DIALECTS = {
  async pg() {
    if (!process.env.PG_URL) throw new Error('PG_URL is not set: eval "$(scripts/services.sh start)"');
    const { integer, pgTable } = await import('drizzle-orm/pg-core');
    const { default: postgres } = await import('postgres');
    const { drizzle } = await import('drizzle-orm/postgres-js');
    const m = await import('@sveltycms/ale/drizzle/pg');
    const client = postgres(process.env.PG_URL, { max: 2, onnotice: () => {}, connection: { random_page_cost: '1.1' } });
    const enc = pgTable('rq_enc', { id: integer('id').primaryKey(), amount: m.encryptedNumber('amount', on), amountRange: m.rangeIndexColumn('amount_range', { ...on, field: 'amount', type: 'number' }) });
    const side = {
      build: ['DROP TABLE IF EXISTS rq_side', 'CREATE TABLE rq_side AS SELECT unnest(amount_range) AS token, id FROM rq_enc', 'ALTER TABLE rq_side ADD PRIMARY KEY (token, id)', 'ANALYZE rq_side'],
      // The column's query has one array of tokens, `amount_range && $n`.
      tokens(params) {
        const arrays = params.filter((p) => typeof p === 'string' && p.startsWith('{'));
        if (arrays.length !== 1) throw new Error(`PostgreSQL: expected one array of tokens, got ${arrays.length}`);
        return arrays[0];
      },
      query: (tokens, limit, offset) => ['SELECT e.id, e.amount FROM rq_enc e WHERE e.id IN (SELECT id FROM rq_side WHERE token = any($1::bigint[]) ORDER BY id LIMIT $2) ORDER BY e.id LIMIT $3 OFFSET $4', [tokens, limit + offset, limit, offset]],
    };
    return { name: 'PostgreSQL', m, db: drizzle(client), enc, side, plain: (text, params) => client.unsafe(text, params), close: () => client.end() };
  },
  async mysql() {
    if (!process.env.MYSQL_URL) throw new Error('MYSQL_URL is not set: eval "$(scripts/services.sh start)"');
    const { int, mysqlTable } = await import('drizzle-orm/mysql-core');
    const { createPool } = await import('mysql2/promise');
    const { drizzle } = await import('drizzle-orm/mysql2');
    const m = await import('@sveltycms/ale/drizzle/mysql');
    const pool = createPool({ uri: process.env.MYSQL_URL, connectionLimit: 2 });
    const enc = mysqlTable('rq_enc', { id: int('id').primaryKey(), amount: m.encryptedNumber('amount', on), amountRange: m.rangeIndexColumn('amount_range', { ...on, field: 'amount', type: 'number' }) });
    const side = {
      // The table's tokens are the column's words, as unsigned integers; JSON_TABLE cuts the text into them.
      build: [
        'DROP TABLE IF EXISTS rq_side',
        'CREATE TABLE rq_side (token BIGINT UNSIGNED NOT NULL, id INT NOT NULL, PRIMARY KEY (token, id)) ENGINE=InnoDB',
        `INSERT INTO rq_side (token, id) SELECT CAST(CONV(w.t, 16, 10) AS UNSIGNED), e.id FROM rq_enc e,
           JSON_TABLE(CONCAT('["', REPLACE(e.amount_range, ' ', '","'), '"]'), '$[*]' COLUMNS (t CHAR(16) PATH '$')) w
           WHERE e.amount_range <> ''`,
        'ANALYZE TABLE rq_side',
      ],
      // The column's query has one MATCH … AGAINST of words, none of them excluded.
      tokens(params) {
        const words = params.filter((p) => typeof p === 'string');
        if (words.length !== 1 || !/^[0-9a-f]{16}( [0-9a-f]{16})*$/.test(words[0])) throw new Error('MariaDB: expected one list of words with no operator');
        return words[0].split(' ').map((w) => BigInt(`0x${w}`).toString());
      },
      // As quoted strings: an unquoted literal past 2^63 is a DECIMAL, and MariaDB 10.11 then scans the whole key instead of its ranges.
      query: (tokens, limit, offset) => [`SELECT e.id, e.amount FROM rq_side s STRAIGHT_JOIN rq_enc e ON e.id = s.id WHERE s.token IN (${tokens.map(() => '?').join(',')}) ORDER BY s.id LIMIT ? OFFSET ?`, [...tokens, limit, offset]],
    };
    return { name: 'MariaDB', m, db: drizzle(pool), enc, side, plain: async (text, params) => (await pool.query(text, params))[0], close: () => pool.end() };
  },
};

const ms = (ns) => (ns / 1e6).toFixed(2);

/** The side table built, and each of `asked`'s queries through it as a side, once its rows are checked against the column's. */
async function sideQueries(d, asked, run) {
  const t = process.hrtime.bigint();
  for (const text of d.side.build) await d.plain(text);
  console.log(`  (token, id) table built in ${ms(Number(process.hrtime.bigint() - t))} ms`);
  const rows = (list) => JSON.stringify(list.map((r) => [r.id, r.amount]));
  const sides = [];
  for (const [k, q] of asked.entries()) {
    // Both read raw: the column's query as Drizzle renders it, so that the envelopes compare as stored.
    const column = run(q.where, q.limit, q.offset).toSQL();
    const [text, params] = d.side.query(d.side.tokens(column.params), q.limit, q.offset);
    if (rows(await d.plain(text, params)) !== rows(await d.plain(column.sql, column.params))) throw new Error(`${d.name}: query ${k + 1} through the side table differs from the column's`);
    sides.push([`query ${k + 1} via (token, id) B-tree`, () => d.plain(text, params)]);
  }
  return sides;
}

for (const name of flags.dialects.split(',')) {
  const d = await DIALECTS[name]();
  try {
    const run = (where, limit, offset = 0) => d.db.select({ id: d.enc.id, amount: d.enc.amount }).from(d.enc).where(where).orderBy(asc(d.enc.id)).limit(limit).offset(offset);
    /** A page, with each query it made: what it asked, the rows it got and its time. */
    const traced = async (order, within) => {
      const asked = [];
      const t0 = process.hrtime.bigint();
      const page = await d.m.orderedPage(
        async (where, limit, offset) => {
          const t = process.hrtime.bigint();
          const rows = await run(where, limit, offset);
          const { lo, hi, spot } = boundsOf(where);
          asked.push({ where, limit, offset, spot, digits: (hi - lo).toString(16).length, rows: rows.length, ns: Number(process.hrtime.bigint() - t) });
          return rows;
        },
        { column: d.enc.amountRange, value: (r) => r.amount, order, limit: 20, within },
      );
      return { page, asked, ns: Number(process.hrtime.bigint() - t0) };
    };
    const values = (await d.plain('SELECT amount FROM rq_plain WHERE amount IS NOT NULL ORDER BY id LIMIT 1000')).map((r) => r.amount);
    if (values.length === 0) throw new Error('rq_plain is empty: run node bench/range-queries.mjs --dialects pg,mysql --queries 1 first');
    const rand = seededRandom(7);
    console.log(`\n${d.name}: each query of ${flags.pages} pages (width: the range's hex digits; spot: a spot sample of that level)`);
    for (let i = 0; i < Number(flags.pages); i++) {
      const order = i % 2 ? 'desc' : 'asc';
      const after = i >= Number(flags.pages) / 2 ? values[Math.floor(rand() * values.length)] : undefined;
      const within = after === undefined ? undefined : order === 'asc' ? d.m.rangeGt(d.enc.amountRange, after) : d.m.rangeLt(d.enc.amountRange, after);
      const { page, asked, ns } = await traced(order, within);
      console.log(`  ${after === undefined ? 'first 20' : `20 after ${after}`} ${order}: ${ms(ns)} ms, ${page.queries} queries, ${page.read} rows read`);
      for (const q of asked) console.log(`    width ${String(q.digits).padStart(2)}${q.spot ? `, spot ${q.spot}` : '        '}, limit ${String(q.limit).padStart(4)}: ${String(q.rows).padStart(4)} rows, ${ms(q.ns)} ms`);
    }
    // The first page ascending, its queries one at a time, the page untraced, and the B-tree's, in turns.
    const { page, asked } = await traced('asc');
    const ids = (rows) => rows.map((r) => r.id).join(',');
    if (ids(page.rows) !== ids(await d.plain(FIRST_PAGE('ASC')))) throw new Error(`${d.name}: the encrypted first page differs from the plaintext one`);
    const untraced = () => d.m.orderedPage(run, { column: d.enc.amountRange, value: (r) => r.amount, order: 'asc', limit: 20 });
    const sides = [...asked.map((q, k) => [`query ${k + 1}${q.spot ? ` (spot ${q.spot})` : ''}, ${q.rows} rows`, () => run(q.where, q.limit, q.offset)]), ['the page', untraced], ['B-tree first page', () => d.plain(FIRST_PAGE('ASC'))]];
    if (flags.side) sides.push(...(await sideQueries(d, asked, run)));
    const times = sides.map(() => []);
    for (let r = 0; r < Number(flags.rounds); r++) {
      // Each side first in one round of every sides.length, so none always runs right after another.
      for (let i = 0; i < sides.length; i++) {
        const k = (i + r) % sides.length;
        const t = process.hrtime.bigint();
        await sides[k][1]();
        times[k].push(Number(process.hrtime.bigint() - t));
      }
    }
    console.log(`  the first page ascending (equal to the B-tree's), ${flags.rounds} rounds in turns: median / p95`);
    for (const [k, [label]] of sides.entries()) console.log(`    ${label.padEnd(30)} ${ms(nearestRank(times[k], 0.5))} / ${ms(nearestRank(times[k], 0.95))} ms`);
  } finally {
    if (flags.side) await d.plain('DROP TABLE IF EXISTS rq_side');
    await d.close();
  }
}
