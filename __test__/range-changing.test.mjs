// orderedPage when rows change between its queries. A page is several
// queries, and it narrows a part of the range from what one query showed
// (a sample); a writer that deletes rows before the next query can make
// the narrowed part hold fewer rows than the sample promised. The page
// must then go on with the rest of the part, not skip it: here a writer
// deletes the first rows of the page's order right after the first query
// that brings back a full sample, and the page must equal the plaintext
// order of the rows that remain (docs/search.md, "Ranges and order").
// On each SQLite driver of this runtime, with an FTS5 table (its parts are
// sampled first) and without one (they are read and narrowed). With FTS5,
// also where 200 rows share the page's first value and the writer deletes
// 190 of them. (Without FTS5 such a page is the first query's rows, read
// before the writer came, which a page may return.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { asc, inArray } from 'drizzle-orm';
import { integer, sqliteTable } from 'drizzle-orm/sqlite-core';
import { encryptedNumber, orderedPage, rangeIndexColumn, searchIndexSql, withTenant } from '@sveltycms/ale/drizzle/sqlite';
import { openSqlite, SQLITE_DRIVERS } from '../bench/sqlite.mjs';
import { seededRandom } from '../bench/stats.mjs';
import { ale, SECRET } from './helpers.mjs';

const ROWS = 300;
const DELETED = 40;
const keyRing = new ale.KeyRing([SECRET]);
const on = { collection: 'measures', keyRing, tenant: 'acme' };
const table = (fts) =>
  sqliteTable('changing', {
    id: integer('id').primaryKey(),
    amount: encryptedNumber('amount', on),
    amountRange: rangeIndexColumn('amount_range', { ...on, type: 'number', field: 'amount', fts }),
  });

// Distinct values in an order unrelated to the ids, so that a part's first rows in id order are a sample of its values.
const random = seededRandom(5);
const values = Array.from({ length: ROWS }, (_, i) => (i + 1) * 1.5);
for (let i = ROWS - 1; i > 0; i--) {
  const j = Math.floor(random() * (i + 1));
  [values[i], values[j]] = [values[j], values[i]];
}
const distinct = values.map((amount, i) => ({ id: i + 1, amount }));
// Twice as many rows, a third of them holding the type's first value and a
// third its last, the rest ±1e300 and a little more, distinct: in the tree's
// end pieces with them, so that a part at the page's end holds more rows
// than its sample takes, the sample's first rows of the page are all of the
// range's near end, and other values follow in the same part.
const tied = Array.from({ length: 2 * ROWS }, (_, i) => ({
  id: i + 1,
  amount: i % 3 === 0 ? -Number.MAX_VALUE : i % 3 === 1 ? Number.MAX_VALUE : (i % 2 ? 1 : -1) * 1e300 * (1 + i / 1000),
}));
const byValue = (order) => (x, y) => (order === 'asc' ? x.amount - y.amount : y.amount - x.amount) || x.id - y.id;
const SETS = [
  { name: 'distinct values', rows: distinct, gone: (sorted) => sorted.slice(0, DELETED) },
  // 190 of the 200 rows of the page's first value
  { name: '200 rows of the first value', rows: tied, gone: (sorted) => sorted.slice(0, 200).filter((_, i) => i % 20 !== 0), fts: true },
];

for (const driver of SQLITE_DRIVERS) {
  for (const [fts, { name, rows, gone: goneOf }] of [undefined, 'changing_fts'].flatMap((fts) => SETS.filter((set) => fts || !set.fts).map((set) => [fts, set]))) {
    test(`orderedPage goes on past a narrowed part that a writer emptied (${driver}, ${fts ? 'FTS5' : 'no FTS5'}, ${name})`, async () => {
      const t = table(fts);
      const dir = mkdtempSync(join(tmpdir(), 'ale-range-changing-'));
      const s = await openSqlite(join(dir, 'changing.db'), { driver });
      try {
        for (const order of ['asc', 'desc']) {
          s.exec('DROP TABLE IF EXISTS changing_fts');
          s.exec('DROP TABLE IF EXISTS changing');
          s.exec('CREATE TABLE changing (id INTEGER PRIMARY KEY, amount TEXT, amount_range TEXT)');
          if (fts) for (const stmt of searchIndexSql(t, t.amountRange, fts)) s.exec(stmt);
          await s.db.insert(t).values(rows.map((r) => ({ ...r, amountRange: r.amount })));
          const sorted = [...rows].sort(byValue(order));
          const gone = goneOf(sorted).map((r) => r.id);
          const remain = sorted.filter((r) => !gone.includes(r.id));
          let deleted = false;
          const fetch = async (where, limit, offset) => {
            const found = await s.db.select({ id: t.id, amount: t.amount }).from(t).where(where).orderBy(asc(t.id)).limit(limit).offset(offset);
            // A full answer is a sample of a larger part: the writer deletes right after it.
            if (!deleted && found.length === limit && limit > 20) {
              deleted = true;
              await s.db.delete(t).where(inArray(t.id, gone));
            }
            return found;
          };
          const page = await withTenant('acme', () => orderedPage(fetch, { column: t.amountRange, value: (r) => r.amount, order, limit: 20 }));
          assert.ok(deleted, `${order}: the writer ran (a query brought back a full sample)`);
          assert.deepEqual(
            page.rows.map((r) => r.id),
            remain.slice(0, 20).map((r) => r.id),
            `${order}: the page is the first 20 of the rows that remain`,
          );
        }
      } finally {
        s.close();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
}
