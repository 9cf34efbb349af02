// orderedPage's narrowed parts and rungs on PostgreSQL (SearchSql.narrowed):
// asked with their exact cover, the rows' addresses collected first by a
// subquery that reads the table under the name the page's query gives it.
// A table in a schema and one without, and an alias() of the first, which
// is asked as it is (a view or a subquery comes through the same kind of
// proxy and has no ctid). Bunched values (prices, each held by three rows)
// make the pages narrow; every page is checked against the plaintext
// order, on both drivers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { asc } from 'drizzle-orm';
import { alias, integer, pgSchema, pgTable } from 'drizzle-orm/pg-core';
import { encryptedNumber, orderedPage, rangeGt, rangeIndexColumn, withTenant } from '@sveltycms/ale/drizzle/pg';
import { pgDrivers, oracleDrivers } from './fixtures/dialects.mjs';
import { ale, SECRET } from './helpers.mjs';
import { serverUrl } from './servers.mjs';

const ROWS = 3000;
const keyRing = new ale.KeyRing([SECRET]);
const columns = () => ({
  id: integer('id').primaryKey(),
  amount: encryptedNumber('amount', { collection: 'prices', keyRing }),
  amountRange: rangeIndexColumn('amount_range', { type: 'number', collection: 'prices', field: 'amount', keyRing }),
});
const inSchema = pgSchema('ale_narrowed').table('prices', columns());
const plain = pgTable('ale_narrowed_prices', columns());
// Prices from 0.00 to 30.97 in a scattered id order, each held by three rows.
const values = Array.from({ length: ROWS }, (_, i) => Math.round(((i * 7919) % 1000) * 3.1) / 100);
const ADDRESSES = '.ctid = any(array(select ';

/** The ids of the plaintext page: `ORDER BY amount [DESC], id LIMIT 20 OFFSET offset`, of the rows above `above`. */
function oracle(order, offset, above) {
  const sign = order === 'asc' ? 1 : -1;
  return values
    .map((v, i) => [v, i + 1])
    .filter(([v]) => above === undefined || v > above)
    .sort((x, y) => sign * (x[0] - y[0]) || x[1] - y[1])
    .slice(offset, offset + 20)
    .map(([, id]) => id);
}

const url = serverUrl('PG_URL');
const drivers = url === null ? {} : pgDrivers(url);
for (const driver of oracleDrivers('pg', Object.keys(drivers))) {
  test(`orderedPage's narrowed parts and rungs on PostgreSQL (${driver}): addresses first for a table in a schema or not, an alias asked as it is, pages equal the plaintext order`, async () => {
    const { db, query, end } = drivers[driver]();
    const drop = async () => {
      await query('DROP SCHEMA IF EXISTS ale_narrowed CASCADE');
      await query('DROP TABLE IF EXISTS ale_narrowed_prices');
    };
    try {
      await drop();
      await query('CREATE SCHEMA ale_narrowed');
      for (const name of ['ale_narrowed.prices', 'ale_narrowed_prices']) await query(`CREATE TABLE ${name} (id integer PRIMARY KEY, amount text, amount_range bigint[])`);
      await withTenant('acme', async () => {
        for (const t of [inSchema, plain]) {
          for (let at = 0; at < ROWS; at += 500) await db.insert(t).values(values.slice(at, at + 500).map((v, i) => ({ id: at + i + 1, amount: v, amountRange: v })));
        }
      });
      const cases = [
        ['a table in a schema', inSchema, 'from "ale_narrowed"."prices" where'],
        ['a table', plain, 'from "ale_narrowed_prices" where'],
        ['an alias', alias(inSchema, 'p'), undefined],
      ];
      for (const [name, table, from] of cases) {
        for (const order of ['asc', 'desc']) {
          // Without a bound the page narrows; above a value (ascending), it starts with the bound's rungs.
          for (const [offset, above] of [[0, undefined], [37, undefined], [0, 12.4]]) {
            const sent = [];
            const fetch = (where, limit, at) => {
              const q = db.select({ id: table.id, amount: table.amount }).from(table).where(where).orderBy(asc(table.id)).limit(limit).offset(at);
              sent.push(q.toSQL().sql);
              return q;
            };
            const bounded = above !== undefined && order === 'asc';
            // Two reads of the column: an alias hands out a new proxy at each, which orderedPage takes as the same column.
            const page = await withTenant('acme', () =>
              orderedPage(fetch, { column: table.amountRange, value: (r) => r.amount, order, limit: 20, offset, batch: 64, within: bounded ? rangeGt(table.amountRange, above) : undefined }),
            );
            const what = `${name}, ${order}, offset ${offset}${bounded ? `, above ${above}` : ''}`;
            assert.deepEqual(
              page.rows.map((r) => r.id),
              oracle(order, offset, bounded ? above : undefined),
              what,
            );
            const addressed = sent.filter((q) => q.includes(ADDRESSES));
            if (from === undefined) {
              assert.equal(addressed.length, 0, `${what}: an alias is asked as it is`);
              continue;
            }
            // 3,000 rows and a batch of 64: the page is found in a narrowed part or a rung.
            assert.ok(addressed.length > 0, `${what}: no part asked by address in ${page.queries} queries`);
            for (const q of addressed) {
              assert.ok(q.includes(from), `${what}: the subquery reads the table itself: ${q.slice(0, 200)}`);
              assert.ok(!q.includes(' and not '), `${what}: a part asked by address has an exact cover, no exclusion`);
            }
          }
        }
      }
    } finally {
      await drop();
      await end();
    }
  });
}
