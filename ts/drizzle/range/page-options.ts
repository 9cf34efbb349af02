// What orderedPage() (range/ordered.ts) reads from its arguments, each
// checked before any query: the column and its dialect, the value, the
// page's size and order, its batches, and the codes of its `within` range.
import type { SQL } from 'drizzle-orm';
import { codedError } from '../../shared/errors.js';
import { rangeColumnOf } from '../probe.js';
import { boundsOf } from './operators.js';
import type { OrderedPageOptions } from './page-types.js';
import { MAX_CODE, MIN_CODE } from './tree.js';

const what = 'orderedPage';

/** The options of orderedPage, checked, with the column's codec and dialect; ALE_INVALID_INPUT for any that is not one. */
export function pageOptions<Row>(fetch: (where: SQL, limit: number, offset: number) => unknown, options: OrderedPageOptions<Row>) {
  const { column, value, limit } = options ?? ({} as OrderedPageOptions<Row>);
  const { codec, sql: dialect } = rangeColumnOf(column, what);
  if (typeof fetch !== 'function') throw codedError('ALE_INVALID_INPUT', `${what}: fetch must run the query, e.g. (where, limit, offset) => db.select().from(t).where(where).orderBy(t.id).limit(limit).offset(offset)`);
  if (typeof value !== 'function') throw codedError('ALE_INVALID_INPUT', `${what}: options.value must give a row's decrypted value, e.g. (row) => row.amount`);
  // Safe integers: offset + limit, twice it and the sample's size must stay exact.
  if (!Number.isSafeInteger(limit) || limit < 1) throw codedError('ALE_INVALID_INPUT', `${what}: options.limit must be a positive integer`);
  const offset = options.offset ?? 0;
  if (!Number.isSafeInteger(offset) || offset < 0) throw codedError('ALE_INVALID_INPUT', `${what}: options.offset must be a whole number`);
  if (!Number.isSafeInteger(2 * (offset + limit))) throw codedError('ALE_INVALID_INPUT', `${what}: options.offset + options.limit must stay below 2^52`);
  const batch = options.batch ?? Math.max(256, 2 * (offset + limit));
  if (!Number.isSafeInteger(batch) || batch < 1) throw codedError('ALE_INVALID_INPUT', `${what}: options.batch must be a positive integer`);
  // A narrowed range's or a rung's: the dialect's when larger (PostgreSQL's planner, SearchSql.narrowBatch).
  const narrowBatch = options.batch ?? Math.max(dialect.narrowBatch, batch);
  if (options.order !== undefined && options.order !== 'asc' && options.order !== 'desc') throw codedError('ALE_INVALID_INPUT', `${what}: options.order must be 'asc' or 'desc'`);
  const descending = options.order === 'desc';
  return { column, value, limit, offset, batch, narrowBatch, descending, codec, dialect };
}

/** The codes of the page's `within` range: the whole type's without one. */
export function withinOf<Row>(options: OrderedPageOptions<Row>, codec: ReturnType<typeof rangeColumnOf>['codec']): [bigint, bigint] {
  if (options.within === undefined) return [MIN_CODE, MAX_CODE];
  const bounds = boundsOf(options.within);
  // The same column by its codec: drizzle's alias() hands out a new proxy of a column at each read.
  if (bounds === undefined || rangeColumnOf(bounds.column, what).codec !== codec) throw codedError('ALE_INVALID_INPUT', `${what}: options.within must be a range condition on the same column`);
  return [bounds.lo, bounds.hi];
}
