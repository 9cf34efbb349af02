// What orderedPage() (range/ordered.ts) takes and what it gives.
import type { Column } from 'drizzle-orm';
import type { RowFailure } from '../failures.js';
import type { RangeValue } from './encoding.js';
import type { RangeCondition } from './operators.js';

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
  /** The property that names a row (such as `'id'`): a failure then says which row, as readWithFailures' does. Its value goes into the message: name a column that is not secret, such as the primary key. */
  key?: string;
  /** The table's name, for the failures' messages. */
  table?: string;
  /** The most rows one query may bring back to be sorted whole; past it, the range is narrowed or split. Default 256, or twice offset + limit when that is more; on PostgreSQL, 1,024 for a rung or a narrowed part. A batch given sets both. */
  batch?: number;
}

export interface OrderedPage<Row> {
  rows: Row[];
  /** Rows read, how many of them the exact test refused (candidates outside their range), and queries made. */
  read: number;
  refused: number;
  queries: number;
  /** Of `read`, the rows of spot samples (PostgreSQL and MariaDB: docs/search.md, "Spots first, on PostgreSQL and MariaDB"). */
  spots: number;
  /**
   * Rows read for this page with a cell that did not open (ALE_AUTH_FAILED,
   * ALE_MALFORMED_ENVELOPE, ALE_UNSUPPORTED_VERSION, ALE_ENVELOPE_TOO_LARGE)
   * or opened to text its column does not read (ALE_INVALID_JSON, or a
   * typed column's ALE_INVALID_INPUT), left out of the order, as searchPage's failures: each
   * names its column and code, and with `key` the row (once, though parts
   * may read it again); without `key`, one report a column and kind of
   * failure. The page is exact over the rows that open. Any other failure
   * (no tenant in scope, keys that did not load) fails the page.
   */
  failures: RowFailure[];
}
