// orderedPage's narrowed parts and rungs on PostgreSQL (SearchSql.narrowed):
// asked with their exact cover for the rows' primary keys first, by a
// subquery that names the table and its own columns. A table in a schema
// keyed on the column, one keyed by primaryKey(), the first through
// drizzle's relational queries too (which alias the table), and a table
// without a schema whose ids follow its values: oldest first by key, and
// newest first, where fetch's first rows run against the page's order,
// narrowed by the rows at both ends of the key (SearchSql.ends), then by
// key. An alias() (a view or a subquery comes through the same kind of
// proxy, whose table the subquery could not name) and a table keyed by two
// columns are asked as any other range, coarse cover included. Bunched
// values (prices, each held by three rows) make the pages narrow; every
// page is checked against the plaintext order, on both drivers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { asc } from 'drizzle-orm';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { drizzle as drizzlePostgresJs } from 'drizzle-orm/postgres-js';
import { alias, integer, pgSchema, pgTable, primaryKey } from 'drizzle-orm/pg-core';
import { encryptedNumber, orderedPage, rangeGt, rangeIndexColumn, withTenant } from '@sveltycms/ale/drizzle/pg';
import { pgDrivers, oracleDrivers } from './fixtures/dialects.mjs';
import { ale, SECRET } from './helpers.mjs';
import { boundsOf } from '../dist/esm/drizzle/range/operators.js';
import { serverUrl } from './servers.mjs';

const ROWS = 3000;
const keyRing = new ale.KeyRing([SECRET]);
const columns = () => ({
  id: integer('id').primaryKey(),
  amount: encryptedNumber('amount', { collection: 'prices', keyRing }),
  amountRange: rangeIndexColumn('amount_range', { type: 'number', collection: 'prices', field: 'amount', keyRing }),
});
const inSchema = pgSchema('ale_narrowed').table('prices', columns());
// The same key declared as the table's primaryKey() of one column.
const { amount, amountRange } = columns();
const keyedApart = pgSchema('ale_narrowed').table('keyed', { id: integer('id').notNull(), amount, amountRange }, (t) => [primaryKey({ columns: [t.id] })]);
// A key of two columns: no key the subquery could select alone.
const twice = columns();
const paired = pgSchema('ale_narrowed').table('paired', { id: integer('id').notNull(), part: integer('part').notNull().default(0), amount: twice.amount, amountRange: twice.amountRange }, (t) => [primaryKey({ columns: [t.id, t.part] })]);
const plain = pgTable('ale_narrowed_prices', columns());
// Prices from 0.00 to 30.97, each held by three rows: in sorted order by
// id in `plain`, shuffled (a seeded Fisher-Yates) in `inSchema`.
const sorted = Array.from({ length: ROWS }, (_, i) => Math.round(Math.floor(i / 3) * 3.1) / 100);
const shuffled = [...sorted];
for (let i = ROWS - 1, seed = 7; i > 0; i--) {
  seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff;
  const j = seed % (i + 1);
  [shuffled[i], shuffled[j]] = [shuffled[j], shuffled[i]];
}
const KEYS_FIRST = '"id" = any(array(select "id" from ';
const KEY_ENDS = '"id" = any(array((select "id" from ';

/** The ids of the plaintext page of `values` (by id): `ORDER BY amount [DESC], id LIMIT 20 OFFSET offset`, of the rows above `above`. */
function oracle(values, order, offset, above) {
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
  test(`orderedPage's narrowed parts and rungs on PostgreSQL (${driver}): keys first for tables keyed by one column, through relational queries too, newest first from both ends of the key where ids follow the values, as any other range for an alias or a key of two columns, pages equal the plaintext order`, async () => {
    const { db, query, end } = drivers[driver]();
    const drop = async () => {
      await query('DROP SCHEMA IF EXISTS ale_narrowed CASCADE');
      await query('DROP TABLE IF EXISTS ale_narrowed_prices');
    };
    try {
      await drop();
      await query('CREATE SCHEMA ale_narrowed');
      for (const name of ['ale_narrowed.prices', 'ale_narrowed.keyed', 'ale_narrowed_prices']) await query(`CREATE TABLE ${name} (id integer PRIMARY KEY, amount text, amount_range bigint[])`);
      await query('CREATE TABLE ale_narrowed.paired (id integer NOT NULL, part integer NOT NULL DEFAULT 0, amount text, amount_range bigint[], PRIMARY KEY (id, part))');
      await withTenant('acme', async () => {
        for (const [t, values] of [[inSchema, shuffled], [keyedApart, shuffled], [paired, shuffled], [plain, sorted]]) {
          for (let at = 0; at < ROWS; at += 500) await db.insert(t).values(values.slice(at, at + 500).map((v, i) => ({ id: at + i + 1, amount: v, amountRange: v })));
        }
      });
      // The relational API: `prices` is read as "ale_narrowed"."prices" "prices".
      const relational = (driver === 'postgres.js' ? drizzlePostgresJs : drizzlePg)(db.$client, { schema: { prices: inSchema } });
      const select = (table) => (where, limit, at) => db.select({ id: table.id, amount: table.amount }).from(table).where(where).orderBy(asc(table.id)).limit(limit).offset(at);
      // [name, table, its values by id, fetch's query, how its narrowed parts are asked: by key from the table of that name, or 'coarse']
      const cases = [
        ['a table in a schema', inSchema, shuffled, select(inSchema), '"ale_narrowed"."prices"'],
        ['a relational query', inSchema, shuffled, (where, limit, offset) => relational.query.prices.findMany({ columns: { id: true, amount: true }, where, limit, offset, orderBy: (t, { asc: up }) => [up(t.id)] }), '"ale_narrowed"."prices"'],
        ['a table keyed by primaryKey()', keyedApart, shuffled, select(keyedApart), '"ale_narrowed"."keyed"'],
        ['an alias', alias(inSchema, 'p'), shuffled, undefined, 'coarse'],
        ['a table keyed by two columns', paired, shuffled, select(paired), 'coarse'],
        ['a table whose ids follow its values', plain, sorted, select(plain), '"ale_narrowed_prices"'],
      ];
      let endsAsked = 0;
      for (const [name, table, values, query, how] of cases) {
        for (const order of ['asc', 'desc']) {
          // Without a bound the page narrows; above a value (ascending), it starts with the bound's rungs.
          for (const [offset, above] of [[0, undefined], [37, undefined], [0, 12.4]]) {
            const sent = [];
            const fetch = (where, limit, at) => {
              const q = (query ?? select(table))(where, limit, at);
              // A query for the range's spots (SearchSql.spots) is told apart: it samples, where the others read parts.
              sent.push({ ...q.toSQL(), spot: boundsOf(where).spot !== undefined });
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
              oracle(values, order, offset, bounded ? above : undefined),
              what,
            );
            // The range's spots are asked by key too; the parts' queries, below, are the others.
            assert.ok(sent.filter((q) => q.spot).every((q) => q.sql.includes(KEYS_FIRST)) || how === 'coarse', `${what}: spots asked by key`);
            const parts = sent.filter((q) => !q.spot);
            const keyed = parts.filter((q) => q.sql.includes(KEYS_FIRST));
            if (values === sorted && order === 'desc') {
              // Newest first, fetch's first rows are the oldest: the part's rows at both ends of the key (SearchSql.ends) narrow it, and the narrowed part is asked by key.
              // Unless the range's spots narrowed the part first (SearchSql.spots; then the part is asked by key too).
              const ends = parts.findIndex((q) => q.sql.includes(`${KEY_ENDS}${how} where "amount_range" && `));
              if (ends > 0) {
                assert.match(parts[ends].sql, / order by "id" asc limit \$\d+\) union all \(select "id" from .* order by "id" desc limit \$\d+\)\)\)/, `${what}: the sample's halves`);
                assert.ok(parts.slice(ends + 1).length > 0 && parts.slice(ends + 1).every((q) => q.sql.includes(KEYS_FIRST)), `${what}: after that sample, parts asked by key`);
                endsAsked++;
              } else assert.ok(sent.some((q) => q.spot) && parts.at(-1).sql.includes(KEYS_FIRST), `${what}: neither spots nor a sample from both ends of the key`);
              // The spots, the sample, the one from both ends, the part it narrows to, and the pieces near the type's end that hold nothing; the narrowings from fetch's sample alone keep nearly all of the part.
              assert.ok(page.queries <= 7, `${what}: ${page.queries} queries`);
              continue;
            }
            if (how === 'coarse') {
              assert.equal(keyed.length, 0, `${what}: asked as any other range`);
              // Its cover stays coarse: at most 16 tokens looked up (pgSearch.coverLimit); the exclusion's are a filter.
              let looked = 0;
              for (const q of sent) {
                for (const [, not, n] of q.sql.matchAll(/(not )?(?:"\w+"\.)*"amount_range" && \$(\d+)/g)) {
                  if (not !== undefined) continue;
                  looked++;
                  assert.ok(String(q.params[Number(n) - 1]).split(',').length <= 16, `${what}: more than 16 tokens looked up`);
                }
              }
              assert.equal(looked, page.queries, `${what}: one lookup a query`);
              continue;
            }
            // 3,000 rows and a batch of 64: the page is found in a narrowed part or a rung (ids in the page's order: the narrowing keeps the page).
            assert.ok(keyed.length > 0, `${what}: no part asked by key in ${page.queries} queries`);
            for (const q of keyed) {
              assert.ok(q.sql.includes(`${KEYS_FIRST}${how} where "amount_range" && `), `${what}: the subquery reads the table itself: ${q.sql.slice(0, 300)}`);
              assert.ok(!q.sql.includes(' and not '), `${what}: a part asked by key has an exact cover, no exclusion`);
            }
            // Once a part is narrowed, what follows is inside it (its pieces included), asked the same way.
            const first = parts.findIndex((q) => q.sql.includes(KEYS_FIRST));
            assert.ok(parts.slice(first).every((q) => q.sql.includes(KEYS_FIRST)), `${what}: a query after a narrowed part is not asked by key`);
          }
        }
      }
      // The data and the key are fixed, so which pages the spots narrow first is too: some are left to that sample.
      assert.ok(endsAsked > 0, 'no page took the sample from both ends of the key');
    } finally {
      try {
        await drop();
      } finally {
        await end();
      }
    }
  });
}
