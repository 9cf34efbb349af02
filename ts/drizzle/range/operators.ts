// The range operators: a condition on a range index column that finds the
// candidate rows (every row in the range, and perhaps a few just outside
// it), and carries the exact test that removes the others once decrypted.
import { sql, type Column, type SQL } from 'drizzle-orm';
import { codedError } from '../../shared/errors.js';
import { rangeColumnOf } from '../probe.js';
import type { StoredIndex } from '../stored-index.js';
import type { RangeValue } from './encoding.js';
import { MAX_CODE, MIN_CODE } from './tree.js';

/** A range condition: use it in `where()`, and give searchPage() its `matches` as the exact test. */
export type RangeCondition = SQL & {
  /** Whether a decrypted value is in the range (false for null or undefined). */
  matches(value: RangeValue | null | undefined): boolean;
};

/** The values of a range index column: what its encrypted column holds (number, bigint or Date). */
export type ValueOf<C> = C extends { _: { data: infer D } } ? Exclude<D, StoredIndex | string> & RangeValue : RangeValue;

/**
 * What orderedPage() reads of a condition it is given as `within`: not
 * enumerable, so a logged condition shows no bound; under a Symbol.for key,
 * so that orderedPage of one build (ESM or CommonJS) reads the other's.
 */
const RANGE = Symbol.for('@sveltycms/ale/range-bounds');
interface Bounds {
  column: Column;
  lo: bigint;
  hi: bigint;
  /** Set when the condition asks for the range's spots of that level (orderedPage), not its rows. */
  spot?: number;
}

/** The column and codes of a condition made here, or undefined for any other value. */
export function boundsOf(condition: unknown): Bounds | undefined {
  return (condition as { [RANGE]?: Bounds } | null)?.[RANGE];
}

/** How orderedPage() asks for a part: `sample`, where the column's index has a sampler (SearchSql.sampler), at most that many of the index's rows for each key; `narrowed`, a part expected to hold few rows (SearchSql.narrowed); `ends`, at most that many rows from both ends of the table's key (SearchSql.ends, where the dialect has it); `spot`, the part's rows of that spot level (range/spots.ts). */
export interface PartOptions {
  sample?: number;
  narrowed?: boolean;
  ends?: number;
  spot?: number;
}

/**
 * The condition on `column` for codes [lo, hi]; an empty range finds no
 * row. With `part.sample`, `part.ends` or `part.spot`, a subset of the
 * range's rows.
 */
export function codeRange(column: Column, lo: bigint, hi: bigint, caller: string, part: PartOptions = {}): RangeCondition {
  const { codec, sql: dialect } = rangeColumnOf(column, caller);
  const matches = (value: RangeValue | null | undefined) => {
    if (value === null || value === undefined) return false;
    const code = codec.code(value);
    return lo <= code && code <= hi;
  };
  let where = sql`1 = 0`;
  if (lo <= hi) {
    const narrowed = part.narrowed === true ? dialect.narrowed?.(column) : undefined;
    const ends = part.ends === undefined ? undefined : dialect.ends?.(column);
    const { include, exclude } = codec.cover(lo, hi, (ends ?? narrowed)?.coverLimit ?? dialect.coverLimit, part.spot);
    const { sample } = part;
    const sampler = sample === undefined ? undefined : dialect.sampler?.(codec);
    // (`part.ends` is set whenever `ends` is; the test tells TypeScript.)
    if (ends !== undefined && part.ends !== undefined) where = ends.where(include, exclude, part.ends);
    else if (narrowed !== undefined) where = narrowed.where(include, exclude);
    else {
      const each = include.map((set, i) => (sampler !== undefined && sample !== undefined ? sampler(column, set, exclude[i], sample) : dialect.any(column, set, exclude[i], codec)));
      where = sql`(${sql.join(each, sql` or `)})`;
    }
  }
  Object.defineProperty(where, RANGE, { value: { column, lo, hi, spot: part.spot } satisfies Bounds });
  return Object.assign(where, { matches }) as RangeCondition;
}

const bound = (column: Column, value: unknown, caller: string): bigint => {
  if (value === null || value === undefined) throw codedError('ALE_INVALID_INPUT', `${caller}: the bound is ${value}; a range needs a value`);
  return rangeColumnOf(column, caller).codec.code(value);
};

/** Rows whose value is greater than `value`. */
export function rangeGt<C extends Column>(column: C, value: ValueOf<C>): RangeCondition {
  const c = bound(column, value, 'rangeGt');
  return c === MAX_CODE ? codeRange(column, 1n, 0n, 'rangeGt') : codeRange(column, c + 1n, MAX_CODE, 'rangeGt');
}

/** Rows whose value is `value` or greater. */
export function rangeGte<C extends Column>(column: C, value: ValueOf<C>): RangeCondition {
  return codeRange(column, bound(column, value, 'rangeGte'), MAX_CODE, 'rangeGte');
}

/** Rows whose value is less than `value`. */
export function rangeLt<C extends Column>(column: C, value: ValueOf<C>): RangeCondition {
  const c = bound(column, value, 'rangeLt');
  return c === MIN_CODE ? codeRange(column, 1n, 0n, 'rangeLt') : codeRange(column, MIN_CODE, c - 1n, 'rangeLt');
}

/** Rows whose value is `value` or less. */
export function rangeLte<C extends Column>(column: C, value: ValueOf<C>): RangeCondition {
  return codeRange(column, MIN_CODE, bound(column, value, 'rangeLte'), 'rangeLte');
}

/** Rows whose value is between `lo` and `hi`, both included (none when `lo` is above `hi`, as SQL's BETWEEN). */
export function rangeBetween<C extends Column>(column: C, lo: ValueOf<C>, hi: ValueOf<C>): RangeCondition {
  return codeRange(column, bound(column, lo, 'rangeBetween'), bound(column, hi, 'rangeBetween'), 'rangeBetween');
}
