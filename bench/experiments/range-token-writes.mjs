// What a range column's token table costs a write on MariaDB (docs/search.md,
// "Token tables on MySQL and MariaDB"): one-row inserts, each its own
// transaction, into three tables of the same rows, interleaved, each side
// first in turn: plaintext with a B-tree index on the value, the encrypted
// value with its range column under FULLTEXT, and the same under a token
// table kept by triggers. Each table holds `--rows` rows first, so that
// the indexes are not empty. Afterwards every table holds the same ids,
// and the token table one pair for each token of each row's text.
//
//   node bench/experiments/range-token-writes.mjs [--rows 20000] [--rounds 30] [--per-round 50]
import { createRequire } from 'node:module';
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { double, int, mysqlTable } from 'drizzle-orm/mysql-core';
import { createPool } from 'mysql2/promise';
import { drizzle } from 'drizzle-orm/mysql2';
import * as m from '@sveltycms/ale/drizzle/mysql';
import { RANGE_CONTEXT, RANGE_SECRET, RANGE_VALUES } from '../range-data.mjs';
import { formatOverhead, median, overhead } from '../stats.mjs';

const { values: flags } = parseArgs({ options: { rows: { type: 'string', default: '20000' }, rounds: { type: 'string', default: '30' }, 'per-round': { type: 'string', default: '50' } } });
const [ROWS, ROUNDS, PER] = [Number(flags.rows), Number(flags.rounds), Number(flags['per-round'])];
if (!process.env.MYSQL_URL) throw new Error('MYSQL_URL is not set: eval "$(scripts/services.sh start)"');
const ale = createRequire(import.meta.url)('../../index.js');
const on = { ...RANGE_CONTEXT, keyRing: new ale.KeyRing([RANGE_SECRET]) };
const pool = createPool({ uri: process.env.MYSQL_URL, connectionLimit: 1 });
const db = drizzle(pool);
const encrypted = (name, tokenTable) => mysqlTable(name, { id: int('id').primaryKey(), amount: m.encryptedNumber('amount', on), amountRange: m.rangeIndexColumn('amount_range', { ...on, field: 'amount', type: 'number', tokenTable }) });
const sides = {
  plaintext: { table: mysqlTable('rw_plain', { id: int('id').primaryKey(), amount: double('amount') }), row: (r) => ({ id: r.id, amount: r.amount }) },
  FULLTEXT: { table: encrypted('rw_fulltext'), row: (r) => ({ id: r.id, amount: r.amount, amountRange: r.amount }) },
  'token table': { table: encrypted('rw_tokens', 'rw_tokens_pairs'), row: (r) => ({ id: r.id, amount: r.amount, amountRange: r.amount }) },
};
const names = Object.keys(sides);

try {
  for (const stmt of [
    'DROP TABLE IF EXISTS rw_tokens_pairs, rw_plain, rw_fulltext, rw_tokens',
    'CREATE TABLE rw_plain (id INT PRIMARY KEY, amount DOUBLE, KEY (amount))',
    'CREATE TABLE rw_fulltext (id INT PRIMARY KEY, amount TEXT, amount_range MEDIUMTEXT)',
    'CREATE TABLE rw_tokens (id INT PRIMARY KEY, amount TEXT, amount_range MEDIUMTEXT)',
    ...m.searchIndexSql(sides.FULLTEXT.table, sides.FULLTEXT.table.amountRange, 'rw_fulltext_amount'),
    ...m.rangeTokenTableSql(sides['token table'].table, sides['token table'].table.amountRange),
  ]) await pool.query(stmt);
  const data = RANGE_VALUES.measures(ROWS + ROUNDS * PER);
  for (let at = 0; at < ROWS; at += 500) for (const s of Object.values(sides)) await db.insert(s.table).values(data.slice(at, at + 500).map(s.row));
  const times = Object.fromEntries(names.map((n) => [n, []]));
  for (let r = 0; r < ROUNDS; r++) {
    for (let i = 0; i < PER; i++) {
      const r0 = data[ROWS + r * PER + i];
      for (let k = 0; k < names.length; k++) {
        const n = names[(k + r + i) % names.length];
        const t = process.hrtime.bigint();
        await db.insert(sides[n].table).values(sides[n].row(r0));
        times[n].push(Number(process.hrtime.bigint() - t));
      }
    }
  }
  // The writes took: every table has every id, and the pairs are the texts' tokens.
  const [[counts]] = await pool.query('SELECT (SELECT count(*) FROM rw_plain) p, (SELECT count(*) FROM rw_fulltext) f, (SELECT count(*) FROM rw_tokens) t');
  const [[pairs]] = await pool.query("SELECT (SELECT count(*) FROM rw_tokens_pairs) n, (SELECT SUM(LENGTH(amount_range) - LENGTH(REPLACE(amount_range, ' ', '')) + 1) FROM rw_tokens WHERE amount_range <> '') expected");
  const total = ROWS + ROUNDS * PER;
  if (counts.p !== total || counts.f !== total || counts.t !== total) throw new Error(`rows: ${JSON.stringify(counts)}, expected ${total} each`);
  if (Number(pairs.n) !== Number(pairs.expected)) throw new Error(`token table: ${pairs.n} pairs, the texts hold ${pairs.expected} tokens`);
  const [[{ v }]] = await pool.query('SELECT version() AS v');
  const [[{ pool: mb }]] = await pool.query('SELECT @@innodb_buffer_pool_size / 1048576 AS pool');
  console.log(`${cpus()[0].model}, ${cpus().length} cores; Node ${process.versions.node}, MariaDB ${v.split('-')[0]} (buffer pool ${Number(mb)} MB), ${ROWS.toLocaleString('en-US')} rows first, ${ROUNDS} rounds of ${PER} one-row inserts a side; ${pairs.n} pairs checked\n`);
  console.log('| side | median µs | against plaintext | against FULLTEXT |');
  console.log('| --- | --- | --- | --- |');
  for (const n of names) {
    const us = (median(times[n]) / 1000).toFixed(0);
    const vs = (base) => (n === base ? '' : formatOverhead(overhead(times[base], times[n])));
    console.log(`| ${n} | ${us} | ${vs('plaintext')} | ${n === 'plaintext' ? '' : vs('FULLTEXT')} |`);
  }
} finally {
  await pool.query('DROP TABLE IF EXISTS rw_tokens_pairs, rw_plain, rw_fulltext, rw_tokens');
  await pool.end();
}
