// Whether a full-text index stops at a LIMIT (docs/search.md, "Ranges and
// order", "Sampled first, on SQLite"): 100,000 rows whose words are a word
// shared by a third of them, one shared by a hundredth and one of their own;
// each query asks for rows with any of three words, so every row matches,
// and keeps 257 by id. Either the way the range conditions ask today
// (`rowid IN (SELECT rowid FROM fts WHERE MATCH …)`, then ORDER BY id LIMIT
// 257), or with the LIMIT inside the subquery (a derived table on MariaDB,
// which refuses a LIMIT in an IN subquery), and on SQLite as orderedPage
// samples (the index's first 129 and last 128 rows, `UNION ALL`); the same
// for 200 terms, each of the 100 words that a hundredth of the rows hold
// twice (every row matches), and for 200 words that no row holds. Every query's row count is checked; the forms of a case run in
// turn within each of `--repeat` rounds; median and p95, in ms.
//
//   node bench/experiments/index-limit.mjs [--repeat 20] [--dialects sqlite,mysql]
// MariaDB comes from MYSQL_URL (eval "$(scripts/services.sh start)").
import { DatabaseSync } from 'node:sqlite';
import { parseArgs } from 'node:util';
import { nearestRank } from '../stats.mjs';

const { values: flags } = parseArgs({ options: { repeat: { type: 'string', default: '20' }, dialects: { type: 'string', default: 'sqlite,mysql' } } });
const REPEAT = Number(flags.repeat);
const ROWS = 100_000;
const words = (i) => `aaaa${i % 3}x bbbb${i % 100}x cccc${i}x`;
const every = ['aaaa0x', 'aaaa1x', 'aaaa2x'];
const hundredths = Array.from({ length: 200 }, (_, i) => `bbbb${i % 100}x`);
const nowhere = Array.from({ length: 200 }, (_, i) => `dddd${i}x`);
const cases = [
  ['every row (3 words)', every, 257],
  ['every row (200 terms, 100 words)', hundredths, 257],
  ['no row (200 words)', nowhere, 0],
];

/** Each form's row count checked, then the forms in turn, `REPEAT` rounds: `median / p95` of each. */
async function time(label, forms, expected) {
  for (const run of forms) {
    const got = await run();
    if (got !== expected) throw new Error(`${label}: ${got} rows, expected ${expected}`);
  }
  const times = forms.map(() => []);
  for (let i = 0; i < REPEAT; i++) {
    for (const [k, run] of forms.entries()) {
      const t0 = performance.now();
      await run();
      times[k].push(performance.now() - t0);
    }
  }
  return times.map((t) => `${nearestRank(t, 0.5).toFixed(2)} / ${nearestRank(t, 0.95).toFixed(2)}`);
}

const table = [];
if (flags.dialects.includes('sqlite')) {
  const db = new DatabaseSync(':memory:');
  db.exec(`CREATE TABLE t (id INTEGER PRIMARY KEY, c TEXT); CREATE VIRTUAL TABLE f USING fts5(c, content=t, content_rowid='rowid', detail=column, tokenize='ascii')`);
  const insert = db.prepare('INSERT INTO t (id, c) VALUES (?, ?)');
  db.exec('BEGIN');
  for (let i = 1; i <= ROWS; i++) insert.run(i, words(i));
  db.exec('COMMIT');
  db.exec(`INSERT INTO f(f) VALUES ('rebuild')`);
  db.exec(`INSERT INTO f(f) VALUES ('optimize')`);
  const version = db.prepare('select sqlite_version() as v').get().v;
  for (const [name, list, expected] of cases) {
    const match = `c : (${list.map((w) => `"${w}"`).join(' OR ')})`;
    const whole = db.prepare(`SELECT * FROM t WHERE rowid IN (SELECT rowid FROM f WHERE f MATCH ?) ORDER BY id LIMIT 257`);
    const limited = db.prepare(`SELECT * FROM t WHERE rowid IN (SELECT rowid FROM f WHERE f MATCH ? LIMIT 257) ORDER BY id LIMIT 257`);
    const end = (order, n) => `SELECT rowid FROM (SELECT rowid FROM f WHERE f MATCH ? ORDER BY rowid ${order} LIMIT ${n})`;
    const halves = db.prepare(`SELECT * FROM t WHERE rowid IN (${end('ASC', 129)} UNION ALL ${end('DESC', 128)}) ORDER BY id LIMIT 257`);
    const forms = [() => whole.all(match).length, () => limited.all(match).length, () => halves.all(match, match).length];
    table.push([`SQLite ${version} FTS5`, name, ...(await time(name, forms, expected))]);
  }
  db.close();
}
if (flags.dialects.includes('mysql')) {
  if (!process.env.MYSQL_URL) throw new Error('MYSQL_URL is not set: eval "$(scripts/services.sh start)"');
  const mysql = (await import('mysql2/promise')).default;
  const c = await mysql.createConnection(process.env.MYSQL_URL);
  try {
    await c.query('DROP TABLE IF EXISTS index_limit');
    await c.query('CREATE TABLE index_limit (id INT PRIMARY KEY, c TEXT, FULLTEXT KEY index_limit_c (c)) ENGINE=InnoDB');
    for (let at = 1; at <= ROWS; at += 1000) await c.query('INSERT INTO index_limit (id, c) VALUES ?', [Array.from({ length: 1000 }, (_, k) => [at + k, words(at + k)])]);
    await c.query('OPTIMIZE TABLE index_limit');
    const [[{ v }]] = await c.query('SELECT version() AS v');
    for (const [name, list, expected] of cases) {
      const match = `MATCH(c) AGAINST(? IN BOOLEAN MODE)`;
      const all = async (q) => (await c.query(q, [list.join(' ')]))[0].length;
      const whole = () => all(`SELECT * FROM index_limit WHERE ${match} ORDER BY id LIMIT 257`);
      const limited = () => all(`SELECT * FROM index_limit WHERE id IN (SELECT id FROM (SELECT id FROM index_limit WHERE ${match} LIMIT 257) s) ORDER BY id LIMIT 257`);
      table.push([`MariaDB ${v.split('-')[0]} FULLTEXT`, name, ...(await time(name, [whole, limited], expected)), '']);
    }
    await c.query('DROP TABLE index_limit');
  } finally {
    await c.end();
  }
}
console.log(`${process.versions.bun ? `Bun ${process.versions.bun}` : `Node ${process.version}`}, ${ROWS.toLocaleString('en')} rows, ${REPEAT} rounds, median / p95 in ms\n`);
console.log('| index | query | ORDER BY id LIMIT 257 | LIMIT 257 inside | first 129 and last 128 inside |\n| --- | --- | --- | --- | --- |');
for (const row of table) console.log(`| ${row.join(' | ')} |`);
