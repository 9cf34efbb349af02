// Exact pages over candidates: the database returns the rows a search
// condition finds, in the caller's order; the rows the exact test refuses
// are dropped, and more candidates are read until the page is full or none
// remain. What comes back equals the plaintext answer, page by page, over
// the rows that open in the tenant's context (the others are reported).
import { codedError } from '../../shared/errors.js';
import { candidateFailure, inFailureScope, rowFailure, type RowFailure } from '../failures.js';

export interface SearchPageOptions<Row> {
  /** Rows per page. */
  limit: number;
  /** Matching rows to skip first (the candidates before them are read and tested). Default 0. */
  offset?: number;
  /** Where the previous page stopped (its `cursor`): continues without reading earlier candidates again. Not with `offset`. */
  cursor?: number;
  /** The exact test: whether a decrypted row answers, e.g. `(row) => where.matches(row.name)`. */
  matches: (row: Row) => boolean;
  /** The property that names a row (such as `'id'`): a failure then says which row, as readWithFailures' does. Its value goes into the message: name a column that is not secret, such as the primary key. */
  key?: string;
  /** The table's name, for the failures' messages. */
  table?: string;
}

export interface SearchPage<Row> {
  rows: Row[];
  /**
   * The candidate position after this page: pass it as `cursor` for the
   * next page. Undefined when the page read the last candidate; a page that
   * fills on the last row of a batch cannot tell, and gives one (the next
   * page is then empty). A count of candidates, like OFFSET: rows written
   * or deleted before it between two pages shift it.
   */
  cursor: number | undefined;
  /** Candidates read and how many of them the exact test refused (the index's false positives). */
  read: number;
  refused: number;
  /**
   * Candidates of this page (past the matches `offset` skips, as with
   * `cursor`) with a cell that did not open, left out of the page. Most
   * failed authentication in this tenant's context (ALE_AUTH_FAILED): on
   * SQLite and MySQL a row of another tenant (in a table queried without a
   * tenant filter) is a candidate by a chance of its 30-bit words;
   * otherwise a value altered or moved, or, with `keys`, written under a key
   * this process has not loaded yet. A cell that is no envelope
   * (ALE_MALFORMED_ENVELOPE), one of a version this build cannot read
   * (ALE_UNSUPPORTED_VERSION), one over the ring's maximum length, or one
   * that opens to text its column does not read (JSON that does not parse,
   * a typed column's other forms) is left out too. Each names its column and code
   * (and the row's key, with the `key` option), never an encrypted value.
   * A failure that is not one value's (no tenant in scope, keys that did
   * not load) fails the page, as it fails any read.
   */
  failures: SearchPageFailure[];
}

/** A candidate left out of a page because a cell of it did not open: readWithFailures' report (`key` is undefined without the `key` option). */
export type SearchPageFailure = RowFailure;

/** The first batch of candidates: the page and room for a few false positives. */
const FIRST_BATCH = (limit: number) => limit + 8;
/** The largest batch: false positives are rare, and a batch is decrypted whole. */
const MAX_BATCH = 1_000;

/**
 * A page of `limit` rows that answer, in the order `fetch` gives them.
 * `fetch(limit, offset)` runs the caller's query with the search condition,
 * its order (make it total, such as ending with the primary key, so that
 * pages neither skip nor repeat rows) and that limit and offset; its rows
 * may come at once (a prepared statement of a synchronous driver) or in a
 * Promise:
 *
 *   const where = searchContains(users.nameSearch, 'müll');
 *   const page = await searchPage(
 *     (limit, offset) => db.select().from(users).where(where).orderBy(users.id).limit(limit).offset(offset),
 *     { limit: 20, matches: (row) => where.matches(row.name) },
 *   );
 */
export async function searchPage<Row>(fetch: (limit: number, offset: number) => Row[] | Promise<Row[]> | PromiseLike<Row[]>, options: SearchPageOptions<Row>): Promise<SearchPage<Row>> {
  const { limit, matches } = options ?? ({} as SearchPageOptions<Row>);
  if (typeof fetch !== 'function') throw codedError('ALE_INVALID_INPUT', 'searchPage: fetch must be a function (limit, offset) => rows');
  if (!Number.isInteger(limit) || limit < 1) throw codedError('ALE_INVALID_INPUT', 'searchPage: options.limit must be a positive integer');
  if (typeof matches !== 'function') throw codedError('ALE_INVALID_INPUT', 'searchPage: options.matches must be the exact test, e.g. (row) => where.matches(row.name)');
  if (options.offset !== undefined && options.cursor !== undefined) throw codedError('ALE_INVALID_INPUT', 'searchPage: give offset or cursor, not both');
  for (const name of ['offset', 'cursor'] as const) {
    const n = options[name];
    if (n !== undefined && (!Number.isInteger(n) || n < 0)) throw codedError('ALE_INVALID_INPUT', `searchPage: options.${name} must be a whole number`);
  }
  let skip = options.offset ?? 0;
  let position = options.cursor ?? 0;
  let batch = FIRST_BATCH(limit);
  const page: SearchPage<Row> = { rows: [], cursor: undefined, read: 0, refused: 0, failures: [] };
  for (;;) {
    // In readWithFailures' scope: a cell that does not decrypt comes back as
    // an AleReadFailure instead of failing the whole batch, so that one
    // foreign or damaged candidate cannot stop a search.
    const scope = { failed: 0 };
    const rows = await inFailureScope(() => fetch(batch, position), scope);
    if (!Array.isArray(rows)) throw codedError('ALE_INVALID_INPUT', 'searchPage: fetch must resolve to the rows of the query');
    for (let i = 0; i < rows.length; i++) {
      page.read++;
      const failed = candidateFailure(rows[i], scope);
      if (failed !== undefined) {
        // Before the last match that `offset` skips, the failure is an earlier page's, which reported it.
        // The candidate left out is the row, so its key names it, else the part that holds the cell.
        if (skip === 0) page.failures.push(rowFailure(failed.failure, [rows[i], failed.holder], options));
        continue;
      }
      if (!matches(rows[i])) {
        page.refused++;
        continue;
      }
      if (skip > 0) {
        skip--;
        continue;
      }
      page.rows.push(rows[i]);
      if (page.rows.length === limit) {
        // Full: the next page starts after this row, unless it was the last one there is.
        const next = position + i + 1;
        page.cursor = i + 1 < rows.length || rows.length === batch ? next : undefined;
        return page;
      }
    }
    position += rows.length;
    if (rows.length < batch) return page;
    // Skipping or many refused: read more at a time.
    batch = Math.min(MAX_BATCH, batch * 2);
  }
}
