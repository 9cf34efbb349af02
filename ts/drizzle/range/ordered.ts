// Exact order over a range index: the database cannot sort what it cannot
// read, so the package narrows the range. It asks for the rows of a range;
// if they are few (at most `batch`), it decrypts and sorts them; if not, it
// narrows the range to where the page must lie, or splits it where the tree
// branches and walks the pieces in order, until the page is full. What comes back equals `ORDER BY value, <fetch's
// order> LIMIT … OFFSET …` on the plaintext (docs/search.md, "Ranges and order").
import type { Column, SQL } from 'drizzle-orm';
import { codedError } from '../../shared/errors.js';
import { rangeColumnOf } from '../probe.js';
import type { RangeValue } from './encoding.js';
import { boundsOf, codeRange, type RangeCondition } from './operators.js';
import { MAX_CODE, MIN_CODE, split } from './tree.js';

export interface OrderedPageOptions<Row> {
  /** The rangeIndexColumn to order by. */
  column: Column;
  /** The decrypted value of a row, e.g. `(row) => row.amount`; rows whose value is null are left out. */
  value: (row: Row) => RangeValue | null | undefined;
  /** Ascending (default) or descending. Ties keep the order `fetch` gives. */
  order?: 'asc' | 'desc';
  /** Rows per page. */
  limit: number;
  /** Rows to skip first, in this order. Default 0. */
  offset?: number;
  /** Only rows in this range: a condition from rangeGt() … rangeBetween() on the same column. */
  within?: RangeCondition;
  /** The most rows one query may bring back to be sorted whole; past it, the range is narrowed or split. Default 256, or twice offset + limit when that is more. */
  batch?: number;
}

export interface OrderedPage<Row> {
  rows: Row[];
  /** Rows read, how many of them the exact test refused (candidates outside their range), and queries made. */
  read: number;
  refused: number;
  queries: number;
}

/**
 * A page of rows in the order of a range column's values:
 *
 *   const page = await orderedPage(
 *     (where, limit, offset) => db.select().from(orders).where(where).orderBy(orders.id).limit(limit).offset(offset),
 *     { column: orders.totalRange, value: (row) => row.total, order: 'desc', limit: 20 },
 *   );
 *
 * `fetch(where, limit, offset)` runs the caller's query with `where` (add
 * the caller's own conditions with `and()`), a total order (ending with the
 * primary key: it breaks ties), and that limit and offset.
 */
export async function orderedPage<Row>(fetch: (where: SQL, limit: number, offset: number) => Promise<Row[]> | PromiseLike<Row[]>, options: OrderedPageOptions<Row>): Promise<OrderedPage<Row>> {
  const what = 'orderedPage';
  const { column, value, limit } = options ?? ({} as OrderedPageOptions<Row>);
  const { codec } = rangeColumnOf(column, what);
  if (typeof fetch !== 'function') throw codedError('ALE_INVALID_INPUT', `${what}: fetch must run the query, e.g. (where, limit, offset) => db.select().from(t).where(where).orderBy(t.id).limit(limit).offset(offset)`);
  if (typeof value !== 'function') throw codedError('ALE_INVALID_INPUT', `${what}: options.value must give a row's decrypted value, e.g. (row) => row.amount`);
  if (!Number.isInteger(limit) || limit < 1) throw codedError('ALE_INVALID_INPUT', `${what}: options.limit must be a positive integer`);
  const offset = options.offset ?? 0;
  const batch = options.batch ?? Math.max(256, 2 * (offset + (Number.isInteger(limit) ? limit : 0)));
  if (!Number.isInteger(offset) || offset < 0) throw codedError('ALE_INVALID_INPUT', `${what}: options.offset must be a whole number`);
  if (!Number.isInteger(batch) || batch < 1) throw codedError('ALE_INVALID_INPUT', `${what}: options.batch must be a positive integer`);
  if (options.order !== undefined && options.order !== 'asc' && options.order !== 'desc') throw codedError('ALE_INVALID_INPUT', `${what}: options.order must be 'asc' or 'desc'`);
  const descending = options.order === 'desc';
  let [lo, hi] = [MIN_CODE, MAX_CODE];
  if (options.within !== undefined) {
    const bounds = boundsOf(options.within);
    if (bounds === undefined || bounds.column !== column) throw codedError('ALE_INVALID_INPUT', `${what}: options.within must be a range condition on the same column`);
    [lo, hi] = [bounds.lo, bounds.hi];
  }
  const need = offset + limit;
  const page: OrderedPage<Row> = { rows: [], read: 0, refused: 0, queries: 0 };
  const found: Row[] = [];
  /** The rows of `rows` whose code is in [a, b], with their codes. */
  const exact = (rows: Row[], a: bigint, b: bigint, count = true) => {
    if (count) page.read += rows.length;
    const kept: [bigint, Row][] = [];
    for (const row of rows) {
      const v = value(row);
      const code = v === null || v === undefined ? undefined : codec.code(v);
      if (code !== undefined && a <= code && code <= b) kept.push([code, row]);
      else if (count) page.refused++;
    }
    return kept;
  };
  const ask = async (a: bigint, b: bigint, n: number, at: number) => {
    page.queries++;
    const rows = await fetch(codeRange(column, a, b, what), n, at);
    if (!Array.isArray(rows)) throw codedError('ALE_INVALID_INPUT', `${what}: fetch must resolve to the rows of the query`);
    return rows;
  };
  const walk = async (a: bigint, b: bigint): Promise<void> => {
    const rows = await ask(a, b, batch + 1, 0);
    if (rows.length <= batch) {
      // Few enough: sort them whole. The sort is stable, so ties keep fetch's order.
      const kept = exact(rows, a, b).sort(([x], [y]) => (x === y ? 0 : (x < y) !== descending ? -1 : 1));
      for (const [, row] of kept) if (found.length < need) found.push(row);
      return;
    }
    // Too many to sort whole: only counted as read.
    page.read += rows.length;
    if (a === b) {
      // One value held by more rows than a batch: they are equal, so fetch's order is theirs.
      for (let at = 0; found.length < need; at += batch) {
        const more = await ask(a, b, batch, at);
        for (const [, row] of exact(more, a, b)) if (found.length < need) found.push(row);
        if (more.length < batch) return;
      }
      return;
    }
    // The rows just read are a sample of the range. When `want` of them are
    // in it, the page's rows are all at or before the `want`-th of them in
    // this order (at least `want` rows are), so the range narrows to there:
    // a few queries for a large table, as a selection would.
    const want = need - found.length;
    const codes = exact(rows, a, b, false).map(([code]) => code);
    codes.sort((x, y) => (x === y ? 0 : (x < y) !== descending ? -1 : 1));
    if (codes.length >= want) {
      const edge = codes[want - 1];
      if (descending ? edge > a : edge < b) return walk(descending ? edge : a, descending ? b : edge);
      // The edge is the range's far end, a value many rows share: the rows before it, then that value.
      await (descending ? walk(a + 1n, b) : walk(a, b - 1n));
      if (found.length < need) await walk(edge, edge);
      return;
    }
    // Else along the tree: each piece is a child node's part of the range.
    const pieces = split(a, b);
    if (descending) pieces.reverse();
    for (const [x, y] of pieces) {
      if (found.length >= need) return;
      await walk(x, y);
    }
  };
  if (lo <= hi) await walk(lo, hi);
  page.rows = found.slice(offset, need);
  return page;
}
