// Search and range tokens on SQLite: words in a `text` column (6 digits a
// search token, 16 hex digits a range token), found through the column's
// FTS5 table when it has one (searchIndexSql() makes it, with the triggers
// that keep it), else by scanning the column.
import { sql, getTableName, type Column, type SQL, type Table } from 'drizzle-orm';
import { tokenWords } from '../../shared/search-words.js';
import { allHex, inText, cappedTokens, storeWords, type SearchSql } from '../search/sql.js';

export const sqliteSearch: SearchSql = {
  type: 'text',
  store: storeWords,
  read: (stored) => String(stored),
  list: (stored) => (stored === '' ? [] : stored.split(' ')),
  where(column, sets, codec) {
    if (codec.fts !== undefined) {
      // FTS5's query language: each set's tokens ANDed, the sets ORed, in
      // this column only (the FTS5 table may index other columns too, as
      // the CMS's content search does). Tokens and the column are quoted: a
      // bare word could read as a keyword.
      const where = ftsMatch(column, codec.fts, sets.map((set) => `(${tokenWords(cappedTokens(set)).map((t) => `"${t}"`).join(' AND ')})`).join(' OR '));
      Object.defineProperty(where.sql, FTS_QUERY, { value: where.query });
      return where.sql;
    }
    // Every word is 6 digits between spaces, so a hit of `instr` is a whole word.
    const each = sets.map((set) => sql`(${sql.join(tokenWords(cappedTokens(set)).map((t) => sql`instr(${column}, ${t}) > 0`), sql` and `)})`);
    return sql`(${sql.join(each, sql` or `)})`;
  },
  // Exact: an excluded token costs a lookup (or a scan) as an included one does.
  coverLimit: 1024,
  narrowBatch: 256,
  spots: false,
  any(column, tokens, except, codec) {
    if (codec.fts !== undefined) return ftsMatch(column, codec.fts, anyToken(tokens, except)).sql;
    return inText(column, tokens, except);
  },
  // FTS5 yields a query's rows one at a time in rowid order, either way, and
  // stops at the LIMIT. Half from each end: when ids follow the values (a
  // creation date), one of the two halves is the page's end. Without FTS5
  // the column is scanned, and the table may have no rowid: no sample.
  sampler(codec) {
    const { fts } = codec;
    if (fts === undefined) return undefined;
    return (column, tokens, except, n) => {
      const [table, index] = [sql.identifier(getTableName(column.table as Table)), sql.identifier(fts)];
      const match = ftsQueryText(column, anyToken(tokens, except));
      const end = (order: SQL, limit: number) => sql`select rowid from (select rowid from ${index} where ${index} match ${match} order by rowid ${order} limit ${limit})`;
      return sql`${table}.rowid in (${end(sql`asc`, Math.ceil(n / 2))} union all ${end(sql`desc`, Math.floor(n / 2))})`;
    };
  },
};

/** FTS5's query for rows with any of `tokens` and none of `except`. */
function anyToken(tokens: Buffer, except: Buffer): string {
  const [hex, out] = [allHex(tokens), allHex(except)];
  const either = (list: string[]) => `(${list.map((t) => `"${t}"`).join(' OR ')})`;
  return out.length === 0 ? either(hex) : `${either(hex)} NOT ${either(out)}`;
}

/** What a search condition on a column with `fts` asks that FTS5 table: searchHits() drives a page from it. */
export interface FtsQuery {
  /** The FTS5 table's name. */
  readonly fts: string;
  /** The searched table's name. */
  readonly table: string;
  /** The search index column's name. */
  readonly column: string;
  /** The FTS5 query, in the indexed column only. */
  readonly match: string;
}

/**
 * Where a condition keeps its FTS5 query: a property of the condition under
 * a Symbol.for key, so that searchHits of one build (ESM or CommonJS) reads
 * the conditions of the other, as the column probes are (asking.ts).
 */
const FTS_QUERY = Symbol.for('@sveltycms/ale/fts-query');

/** The FTS5 table and query of a condition on a column with `fts`, if `where` is one (anything else, null included, is not). */
export function ftsQueryOf(where: unknown): FtsQuery | undefined {
  return typeof where === 'object' && where !== null ? (where as { [FTS_QUERY]?: FtsQuery })[FTS_QUERY] : undefined;
}

/** `query` in `column` only, in FTS5's query language. */
function ftsQueryText(column: Column, query: string): string {
  return `"${column.name.replaceAll('"', '""')}" : (${query})`;
}

/** The rows of `column`'s table that FTS5 table `fts` finds for `query`, in this column only. */
function ftsMatch(column: Column, fts: string, query: string): { sql: SQL; query: FtsQuery } {
  const match = ftsQueryText(column, query);
  const [table, searched] = [sql.identifier(fts), getTableName(column.table as Table)];
  return {
    sql: sql`${sql.identifier(searched)}.rowid in (select rowid from ${table} where ${table} match ${match})`,
    query: { fts, table: searched, column: column.name, match },
  };
}

/** A name as a quoted SQLite identifier. */
export function quoteName(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * The statements that give search index column `column` of `table` an FTS5
 * table named `fts`, kept by triggers, and fill it from the rows already
 * there, in a migration (drizzle-kit cannot declare a virtual table or a
 * trigger). Each can run again: what is there under the names stays,
 * whatever its definition, so a run after drizzle-kit dropped the FTS5
 * table (`push`) or the triggers (a table it rebuilt) makes what is
 * missing anew and refills the index (docs/search.md); to change a
 * definition, drop first. The
 * last one, FTS5's `optimize`, is worth running again after many writes.
 * The FTS5 table holds no text, only the tokens' doclists (`content=` the
 * table itself), without positions (`detail=column`: a token query needs
 * none, and the column filter of every query needs the column). The
 * second statement writes nothing: it copies no row of the column and
 * rowid into the FTS5 table, and so fails before the triggers are made on
 * a table that does not have the column yet or has no rowid (WITHOUT
 * ROWID), or where a table of the FTS5 table's name is no FTS5 table,
 * where they would fail every write to the table. Not an UPDATE of
 * no row, which would fail on the triggers of a dropped FTS5 table that
 * this very run restores, nor a temporary table, whose DROP fails while
 * another statement of the connection is under way.
 */
export function searchIndexSql(table: Table, column: Column, fts: string): string[] {
  const [t, c, f] = [quoteName(getTableName(table)), quoteName(column.name), quoteName(fts)];
  const trigger = (what: string) => quoteName(`${fts}_${what}`);
  return [
    `CREATE VIRTUAL TABLE IF NOT EXISTS ${f} USING fts5(${c}, content=${t}, content_rowid='rowid', detail=column, tokenize='ascii')`,
    // The column by its table's name too: a bare "name" that names no column is a string to an SQLite built with DQS (Bun's).
    // FTS5's hidden columns (the table's own name, rank) too: a table of that name that is not FTS5 (FTS4, a plain one) fails here.
    `INSERT INTO ${f}(${f}, rank, rowid, ${c}) SELECT NULL, NULL, ${t}.rowid, ${t}.${c} FROM ${t} LIMIT 0`,
    `CREATE TRIGGER IF NOT EXISTS ${trigger('insert')} AFTER INSERT ON ${t} BEGIN INSERT INTO ${f}(rowid, ${c}) VALUES (new.rowid, new.${c}); END`,
    `CREATE TRIGGER IF NOT EXISTS ${trigger('delete')} AFTER DELETE ON ${t} BEGIN INSERT INTO ${f}(${f}, rowid, ${c}) VALUES ('delete', old.rowid, old.${c}); END`,
    // On any update that moves the row or changes its tokens: a changed rowid too, or the index would point at the old one.
    `CREATE TRIGGER IF NOT EXISTS ${trigger('update')} AFTER UPDATE ON ${t} WHEN old.rowid IS NOT new.rowid OR old.${c} IS NOT new.${c} BEGIN INSERT INTO ${f}(${f}, rowid, ${c}) VALUES ('delete', old.rowid, old.${c}); INSERT INTO ${f}(rowid, ${c}) VALUES (new.rowid, new.${c}); END`,
    `INSERT INTO ${f}(${f}) VALUES ('rebuild')`,
    // A rebuild leaves the index in many segments, which each query then
    // reads and merges: merged into one, lookups are faster (docs/search.md,
    // "SQLite: merge the FTS5 index").
    `INSERT INTO ${f}(${f}) VALUES ('optimize')`,
  ];
}
