// The range bench's data and key (bench/range-queries.mjs, and the
// experiments that read the tables it leaves): the values it loads, and the
// secret and context its encrypted columns use, so that a reader derives
// the same tokens.
import { measures } from '../__test__/fixtures/measures.mjs';
import { seededRandom } from './stats.mjs';

export const RANGE_SECRET = 'bench-secret-0123456789-abcdefghijklmnop';
/** The encrypted columns' collection and tenant (the field is the column's). */
export const RANGE_CONTEXT = { collection: 'measures', tenant: 'acme' };

/**
 * The values, rows of { id, amount }: `measures`, the range tests' mix
 * (__test__/fixtures/measures.mjs), which puts about 1.5% of the rows in
 * the tree's two end pieces (±Number.MAX_VALUE and ±1e300); or `prices`,
 * every row a price from 0.00 to 10,000.00, bunched in a node of the tree's
 * first depths as real amounts are (docs/search.md, "Ranges at 100,000 rows").
 */
export const RANGE_VALUES = {
  measures: (rows) => measures(rows, { seed: 41 }),
  prices: (rows) => {
    const price = seededRandom(41);
    return Array.from({ length: rows }, (_, i) => ({ id: i + 1, amount: Math.round(price() * 1e6) / 100 }));
  },
};

/**
 * `rows` renumbered in value order (ties as they were, NULLs last), as a
 * creation date's ids are: a page newest first then reads the rows fetch,
 * ordered by id, gives last (docs/search.md, "Newest first where the ids
 * follow the values").
 */
export function idsFollowingValues(rows) {
  const order = [...rows].sort((x, y) => (x.amount === null) - (y.amount === null) || x.amount - y.amount || x.id - y.id);
  return order.map((r, i) => ({ id: i + 1, amount: r.amount }));
}
