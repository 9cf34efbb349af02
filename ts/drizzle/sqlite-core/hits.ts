// A page driven by the FTS5 table itself. A condition in `where()` asks for
// `rowid in (select rowid from fts where fts match …)`, and SQLite reads
// every match into a list before the first row, however common the query.
// Joined the other way, with the FTS5
// table first and the page in its rowid order, FTS5 hands out rowids in
// order and the query stops when the page is full (docs/search.md,
// "Queries at 100,000 rows").
import { sql, type SQL } from 'drizzle-orm';
import { integer, sqliteTable } from 'drizzle-orm/sqlite-core';
import { codedError } from '../../shared/errors.js';
import { ftsQueryOf } from './search.js';

/** A search's FTS5 table as a Drizzle table, for `from()`; `rowid` is the searched row's rowid. */
function ftsTable(name: string) {
  return sqliteTable(name, { rowid: integer('rowid') });
}
type FtsTable = ReturnType<typeof ftsTable>;

export interface SearchHits {
  /** The FTS5 table, for `from()`. */
  readonly table: FtsTable;
  /** The searched row's rowid: `orderBy(hits.rowid)` or `desc(hits.rowid)` keeps the order FTS5 reads in. */
  readonly rowid: FtsTable['rowid'];
  /** The join to the searched table: `innerJoin(users, hits.on)`. */
  readonly on: SQL;
  /** The search, on the FTS5 table: `where(hits.match)`, with any other conditions beside it. */
  readonly match: SQL;
}

/**
 * The FTS5 side of a search condition on a column with `fts`, for pages in
 * rowid order (an INTEGER PRIMARY KEY is the rowid):
 *
 *   const where = searchContains(users.nameSearch, 'müll');
 *   const hits = searchHits(where);
 *   const page = await searchPage(
 *     (limit, offset) => db.select({ id: users.id, name: users.name }).from(hits.table).innerJoin(users, hits.on)
 *       .where(hits.match).orderBy(hits.rowid).limit(limit).offset(offset),
 *     { limit: 20, matches: (row) => where.matches(row.name) },
 *   );
 *
 * Another order needs every match anyway: use `where` itself there.
 */
export function searchHits(where: SQL): SearchHits {
  const query = where === null || typeof where !== 'object' ? undefined : ftsQueryOf(where);
  if (query === undefined) throw codedError('ALE_INVALID_INPUT', 'searchHits: give it the condition searchContains, searchPrefix or searchWords returned (before and()), on a SQLite search index column with `fts`');
  const table = ftsTable(query.fts);
  const fts = sql.identifier(query.fts);
  return {
    table,
    rowid: table.rowid,
    on: sql`${fts}.rowid = ${sql.identifier(query.table)}.rowid`,
    match: sql`${fts} match ${query.match}`,
  };
}
