// How PostgreSQL plans an ordered page's first query (docs/search.md,
// "Ranges at 100,000 rows"): the rows of the piece at one end of the type's
// values, `ORDER BY id LIMIT 257`. It reads them from the GIN index and
// sorts them, or it walks the primary key and filters until 257 match; which
// one depends on the row count ANALYZE's sample guesses and on
// random_page_cost. This re-runs ANALYZE `--samples` times and prints, for
// each direction, the plan and EXPLAIN ANALYZE's execution time.
//
// It reads the encrypted table bench/range-queries.mjs leaves behind, loaded
// with its default rows and values, where the first page reads its rows in
// one query after its spot census (with fewer rows or `--values prices` it
// takes more, and this stops):
//   node bench/range-queries.mjs --dialects pg --queries 1
//   node bench/experiments/pg-plans.mjs [--samples 10] [--random-page-cost 4]
// (4 is PostgreSQL's default; the bench sets 1.1.)
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { asc } from 'drizzle-orm';
import { integer, pgTable } from 'drizzle-orm/pg-core';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { encryptedNumber, orderedPage, rangeIndexColumn } from '@sveltycms/ale/drizzle/pg';
import { boundsOf } from '../../dist/esm/drizzle/range/operators.js';
import { RANGE_CONTEXT, RANGE_SECRET } from '../range-data.mjs';

const { values: flags } = parseArgs({ options: { samples: { type: 'string', default: '10' }, 'random-page-cost': { type: 'string', default: '4' } } });
if (!process.env.PG_URL) throw new Error('PG_URL is not set: eval "$(scripts/services.sh start)"');
const ale = createRequire(import.meta.url)('../../index.js');
// range-queries.mjs's key and column, so that the tokens are the table's.
const on = { ...RANGE_CONTEXT, keyRing: new ale.KeyRing([RANGE_SECRET]) };
const enc = pgTable('rq_enc', { id: integer('id').primaryKey(), amount: encryptedNumber('amount', on), amountRange: rangeIndexColumn('amount_range', { ...on, field: 'amount', type: 'number' }) });
// One connection: ANALYZE and each EXPLAIN run in turn.
const client = postgres(process.env.PG_URL, { max: 1, onnotice: () => {}, connection: { random_page_cost: flags['random-page-cost'] } });
const db = drizzle(client);
try {
  const queries = {};
  for (const order of ['asc', 'desc']) {
    // The page's queries other than its spot samples (the census, asked first): the first page's rows are one query.
    const parts = [];
    await orderedPage(
      (where, limit, offset) => {
        const query = db.select({ id: enc.id, amount: enc.amount }).from(enc).where(where).orderBy(asc(enc.id)).limit(limit).offset(offset);
        if (boundsOf(where).spot === undefined) parts.push(query.toSQL());
        return query;
      },
      { column: enc.amountRange, value: (r) => r.amount, order, limit: 20 },
    );
    if (parts.length !== 1) throw new Error(`the first page ${order} read its rows in ${parts.length} queries, not the one this reads`);
    queries[order] = { text: parts[0].sql, params: parts[0].params };
  }
  /** A plan's nodes, depth first: type, index, estimated and actual rows. */
  const nodes = (n) => [`${n['Node Type']}${n['Index Name'] ? ` on ${n['Index Name']}` : ''} (${n['Plan Rows']} rows guessed, ${n['Actual Rows']} read)`, ...(n.Plans ?? []).flatMap(nodes)];
  const walks = { asc: 0, desc: 0 };
  console.log(`random_page_cost ${flags['random-page-cost']}, ${flags.samples} ANALYZE samples\n`);
  for (let i = 0; i < Number(flags.samples); i++) {
    await client.unsafe('ANALYZE rq_enc');
    for (const [order, { text, params }] of Object.entries(queries)) {
      const [{ 'QUERY PLAN': [plan] }] = await client.unsafe(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, params);
      const shown = nodes(plan.Plan);
      if (shown.some((s) => s.includes('_pkey'))) walks[order]++;
      console.log(`${order.padEnd(4)} ${plan['Execution Time'].toFixed(1).padStart(5)} ms  ${shown.join(' > ')}`);
    }
  }
  console.log(`\nprimary-key walks: ${walks.asc} of ${flags.samples} ascending, ${walks.desc} of ${flags.samples} descending`);
} finally {
  await client.end();
}
