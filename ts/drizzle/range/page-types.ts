// What orderedPage() (range/ordered.ts) takes and what it gives.
import type { Column } from 'drizzle-orm';
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
}
