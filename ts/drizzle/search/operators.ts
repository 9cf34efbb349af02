// The search operators: a condition on a search index column that finds
// the candidate rows (every row that answers, and perhaps a few that do
// not), and carries the exact test that removes the others once decrypted.
import type { Column, SQL } from 'drizzle-orm';
import { codedError } from '../../shared/errors.js';
import { searchColumnOf } from '../probe.js';
import type { QueryKind } from './searcher.js';

/** A search condition: use it in `where()`, and give searchPage() its `matches` as the exact test. */
export type SearchCondition = SQL & {
  readonly query: string;
  readonly kind: QueryKind;
  /** Whether a decrypted value answers the query (false for null or undefined). */
  matches(value: string | null | undefined): boolean;
};

function condition(column: Column, query: string, kind: QueryKind, caller: string): SearchCondition {
  const { codec, sql } = searchColumnOf(column, caller);
  const sets = codec.queries(query, kind);
  if (sets.length === 0 || sets.some((set) => set.length === 0)) throw codedError('ALE_INVALID_INPUT', `${caller}: the column's ring gave no tokens to look up`);
  const where = sql.where(column, sets, codec);
  const matches = (value: string | null | undefined) => typeof value === 'string' && codec.matches(value, query, kind);
  // Not enumerable: a condition that is logged or inspected shows no search term.
  Object.defineProperty(where, 'query', { value: query });
  return Object.assign(where, { kind, matches }) as SearchCondition;
}

/** Rows whose value contains `query` (3 characters or more), on the normalized form. */
export function searchContains(column: Column, query: string): SearchCondition {
  return condition(column, query, 'contains', 'searchContains');
}

/** Rows whose value, or a word of it, starts with `query`. */
export function searchPrefix(column: Column, query: string): SearchCondition {
  return condition(column, query, 'prefix', 'searchPrefix');
}

/** Rows that hold every word of `query` as a word; `müll*` is a word prefix. */
export function searchWords(column: Column, query: string): SearchCondition {
  return condition(column, query, 'words', 'searchWords');
}
