// A range index column on SQLite without an FTS5 table: its conditions scan
// the column with instr(), and orderedPage reads its parts without sampling
// them (docs/search.md, "Sampled first, on SQLite"), so it works on a table
// without a rowid too. Pages on each SQLite driver of this runtime against
// the plaintext order, and no query that names a rowid.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { asc } from 'drizzle-orm';
import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { encryptedNumber, orderedPage, rangeGt, rangeIndexColumn, withTenant } from '@sveltycms/ale/drizzle/sqlite';
import { openSqlite, SQLITE_DRIVERS } from '../bench/sqlite.mjs';
import { ale, SECRET } from './helpers.mjs';
import { measures } from './fixtures/measures.mjs';

const ROWS = 400;
const keyRing = new ale.KeyRing([SECRET]);
const t = sqliteTable('scan_measures', {
  id: integer('id').primaryKey(),
  amount: encryptedNumber('amount', { collection: 'measures', keyRing }),
  amountRange: rangeIndexColumn('amount_range', { type: 'number', collection: 'measures', field: 'amount', keyRing }),
});

for (const driver of SQLITE_DRIVERS) {
  test(`orderedPage over a range column without FTS5, on a table without a rowid (${driver}): pages equal the plaintext order, and no query names a rowid`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ale-range-scan-'));
    const s = await openSqlite(join(dir, 'scan.db'), { driver });
    try {
      s.exec('CREATE TABLE scan_measures (id INTEGER PRIMARY KEY, amount TEXT, amount_range TEXT) WITHOUT ROWID');
      const rows = measures(ROWS, { seed: 11 }).filter((r) => r.amount !== null);
      await withTenant('acme', () => s.db.insert(t).values(rows.map((r) => ({ id: r.id, amount: r.amount, amountRange: r.amount }))));
      const sent = [];
      const fetch = (where, limit, offset) => {
        const query = s.db.select({ id: t.id, amount: t.amount }).from(t).where(where).orderBy(asc(t.id)).limit(limit).offset(offset);
        sent.push(query.toSQL().sql);
        return query;
      };
      const key = (v) => (Object.is(v, -0) ? 0 : v);
      for (const order of ['asc', 'desc']) {
        const sorted = [...rows].sort((a, b) => (order === 'asc' ? key(a.amount) - key(b.amount) : key(b.amount) - key(a.amount)) || a.id - b.id);
        for (const [offset, batch] of [[0, undefined], [37, undefined], [5, 8]]) {
          const page = await withTenant('acme', () => orderedPage(fetch, { column: t.amountRange, value: (row) => row.amount, order, limit: 20, offset, batch }));
          assert.deepEqual(page.rows.map((r) => r.id), sorted.slice(offset, offset + 20).map((r) => r.id), `${order}, offset ${offset}, batch ${batch}`);
        }
      }
      // From a bound inside the values: the rungs, then the pieces.
      const middle = [...rows].sort((a, b) => key(a.amount) - key(b.amount) || a.id - b.id)[ROWS / 4].amount;
      const within = await withTenant('acme', async () => rangeGt(t.amountRange, middle));
      const after = rows.filter((r) => key(r.amount) > key(middle)).sort((a, b) => key(a.amount) - key(b.amount) || a.id - b.id);
      const page = await withTenant('acme', () => orderedPage(fetch, { column: t.amountRange, value: (row) => row.amount, limit: 20, within }));
      assert.deepEqual(page.rows.map((r) => r.id), after.slice(0, 20).map((r) => r.id));
      assert.ok(sent.length > 0);
      for (const text of sent) assert.doesNotMatch(text, /rowid/i, 'a query of a column without FTS5 names a rowid');
    } finally {
      s.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
