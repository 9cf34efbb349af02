// orderedPage's narrowed parts on PostgreSQL (SearchSql.narrowed): the rows'
// addresses are collected in a subquery that reads the table under the
// name the page's query gives it, so a table in a schema and a drizzle
// alias() of it both work. Bunched values (prices) make the pages narrow;
// each page is checked against the plaintext order, on both drivers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { asc } from 'drizzle-orm';
import { alias, integer, pgSchema } from 'drizzle-orm/pg-core';
import { encryptedNumber, orderedPage, rangeIndexColumn, withTenant } from '@sveltycms/ale/drizzle/pg';
import { pgDrivers, oracleDrivers } from './fixtures/dialects.mjs';
import { ale, SECRET } from './helpers.mjs';
import { serverUrl } from './servers.mjs';

const ROWS = 3000;
const keyRing = new ale.KeyRing([SECRET]);
const schema = pgSchema('ale_narrowed');
const t = schema.table('prices', {
  id: integer('id').primaryKey(),
  amount: encryptedNumber('amount', { collection: 'prices', keyRing }),
  amountRange: rangeIndexColumn('amount_range', { type: 'number', collection: 'prices', field: 'amount', keyRing }),
});
// Prices from 0.00 to 92.97 in a scattered id order, some shared.
const values = Array.from({ length: ROWS }, (_, i) => Math.round(((i * 7919) % ROWS) * 3.1) / 100);

const url = serverUrl('PG_URL');
const drivers = url === null ? {} : pgDrivers(url);
for (const driver of oracleDrivers('pg', Object.keys(drivers))) {
  test(`orderedPage's narrowed parts on PostgreSQL (${driver}): a table in a schema and an alias of it, pages equal the plaintext order`, async () => {
    const { db, query, end } = drivers[driver]();
    try {
      await query('DROP SCHEMA IF EXISTS ale_narrowed CASCADE');
      await query('CREATE SCHEMA ale_narrowed');
      await query('CREATE TABLE ale_narrowed.prices (id integer PRIMARY KEY, amount text, amount_range bigint[])');
      await withTenant('acme', async () => {
        for (let at = 0; at < ROWS; at += 500) await db.insert(t).values(values.slice(at, at + 500).map((v, i) => ({ id: at + i + 1, amount: v, amountRange: v })));
      });
      for (const [name, table] of [['the table', t], ['an alias', alias(t, 'p')]]) {
        for (const order of ['asc', 'desc']) {
          for (const offset of [0, 37]) {
            let narrowed = 0;
            const fetch = (where, limit, at) => {
              const q = db.select({ id: table.id, amount: table.amount }).from(table).where(where).orderBy(asc(table.id)).limit(limit).offset(at);
              if (q.toSQL().sql.includes('.ctid = any(array(select ')) narrowed++;
              return q;
            };
            const page = await withTenant('acme', () => orderedPage(fetch, { column: table.amountRange, value: (r) => r.amount, order, limit: 20, offset, batch: 64 }));
            const sign = order === 'asc' ? 1 : -1;
            const want = values
              .map((v, i) => [v, i + 1])
              .sort((x, y) => sign * (x[0] - y[0]) || x[1] - y[1])
              .slice(offset, offset + 20)
              .map(([, id]) => id);
            assert.deepEqual(page.rows.map((r) => r.id), want, `${name}, ${order}, offset ${offset}`);
            // 3,000 rows and a batch of 64: the page is found in a narrowed part.
            assert.ok(narrowed > 0, `${name}, ${order}, offset ${offset}: no narrowed part in ${page.queries} queries`);
          }
        }
      }
    } finally {
      await query('DROP SCHEMA IF EXISTS ale_narrowed CASCADE');
      await end();
    }
  });
}
