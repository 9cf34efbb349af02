// A page driven by the FTS5 table itself. A condition in `where()` asks for
// `rowid in (select rowid from fts where fts match …)`, and SQLite reads
// every match into a list before the first row, however common the query.
// Joined the other way, with the FTS5
// table first and the page in its rowid order, FTS5 hands out rowids in
// order and the query stops when the page is full (docs/search.md,
// "Queries at 100,000 rows"). The same join with the query as a placeholder
// is a statement to prepare once: building the query (and under Bun,
// compiling it) is a large part of a short page ("Prepared pages").
import { getTableName, sql, type Column, type Placeholder, type SQL, type Table } from 'drizzle-orm';
import { integer, sqliteTable } from 'drizzle-orm/sqlite-core';
import { codedError } from '../../shared/errors.js';
import { searchColumnOf } from '../probe.js';
import { ftsQueryOf, sqliteSearch } from './search.js';

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

/** searchHits() for a prepared statement: `match` holds a placeholder, which `matchOf(where)` fills per search. */
export interface SearchHitsPlaceholder extends SearchHits {
  /** The value of the placeholder for `where`, a condition searchContains, searchPrefix or searchWords made on this column. */
  matchOf(where: SQL): string;
}

/** The table, rowid, join and match of FTS5 table `fts` over table `searched`, matching `match`. */
function hitsOf(fts: string, searched: string, match: string | Placeholder): SearchHits {
  const table = ftsTable(fts);
  const ftsName = sql.identifier(fts);
  return {
    table,
    rowid: table.rowid,
    on: sql`${ftsName}.rowid = ${sql.identifier(searched)}.rowid`,
    match: sql`${ftsName} match ${match}`,
  };
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
  const query = ftsQueryOf(where);
  if (query === undefined) throw codedError('ALE_INVALID_INPUT', 'searchHits: give it the condition searchContains, searchPrefix or searchWords returned (before and()), on a SQLite search index column with `fts`');
  return hitsOf(query.fts, query.table, query.match);
}

/**
 * The FTS5 side of every search on `column` (a SQLite search index column
 * with `fts`), its query the placeholder `name`: build the page's statement
 * once, prepare it, and run it with each condition's query, `matchOf(where)`:
 *
 *   const hits = searchHitsPlaceholder(users.nameSearch);
 *   const byName = db.select({ id: users.id, name: users.name }).from(hits.table).innerJoin(users, hits.on)
 *     .where(hits.match).orderBy(hits.rowid).limit(sql.placeholder('limit')).offset(sql.placeholder('offset')).prepare();
 *   const where = searchContains(users.nameSearch, 'müll');
 *   const page = await searchPage((limit, offset) => byName.all({ match: hits.matchOf(where), limit, offset }), {
 *     limit: 20, matches: (row) => where.matches(row.name),
 *   });
 */
export function searchHitsPlaceholder(column: Column, name = 'match'): SearchHitsPlaceholder {
  const what = 'searchHitsPlaceholder';
  const { codec, sql: dialect } = searchColumnOf(column, what);
  // By its SQL type, which only SQLite's search columns have: the dialect
  // object of the other build (ESM or CommonJS) is another object.
  if (dialect.type !== sqliteSearch.type || codec.fts === undefined) throw codedError('ALE_INVALID_INPUT', `${what}: the column is not a SQLite search index column with an FTS5 table (\`fts\`)`);
  if (typeof name !== 'string' || name === '') throw codedError('ALE_INVALID_INPUT', `${what}: the placeholder's name must be a non-empty string`);
  const [fts, searched] = [codec.fts, getTableName(column.table as Table)];
  return {
    ...hitsOf(fts, searched, sql.placeholder(name)),
    matchOf(where) {
      const query = ftsQueryOf(where);
      // Another column's query would run against this statement's table and find that column's rows.
      if (query === undefined || query.fts !== fts || query.table !== searched || query.column !== column.name) {
        throw codedError('ALE_INVALID_INPUT', `${what}: matchOf takes the condition searchContains, searchPrefix or searchWords returned (before and()) on the statement's column`);
      }
      return query.match;
    },
  };
}
