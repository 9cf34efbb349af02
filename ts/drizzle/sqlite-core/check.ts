// searchIndexCheck: whether the FTS5 table a search index column names and
// the triggers that keep it are in the database. A table that drizzle-kit
// rebuilds loses its triggers without a word, and from then on written
// rows are missing from the index and searches miss them (docs/search.md,
// "SQLite: a migration that rebuilds the table drops the triggers"); a
// check at start-up says so before a search does. It reads the schema
// (sqlite_master), and with `rows` asks FTS5 to compare its index with the
// rows.
import { getTableName, sql, type Column, type Table } from 'drizzle-orm';
import { text, sqliteTable } from 'drizzle-orm/sqlite-core';
import { searchColumnOf } from '../probe.js';

/** What is missing or wrong, with what to do about it. */
export interface SearchIndexProblem {
  code: 'ALE_SEARCH_FTS_MISSING' | 'ALE_SEARCH_FTS_COLUMN' | 'ALE_SEARCH_TRIGGER_MISSING' | 'ALE_SEARCH_INDEX_STALE';
  message: string;
}

export interface SearchIndexCheck {
  /** No problem found. */
  ok: boolean;
  problems: SearchIndexProblem[];
}

export interface SearchIndexCheckOptions {
  /**
   * Also compare the FTS5 index with the rows (FTS5's `integrity-check`
   * with rank 1): finds rows written while the triggers were gone. It reads
   * and re-tokenizes every row. Default false.
   */
  rows?: boolean;
}

/** Any Drizzle SQLite database, synchronous (bun:sqlite, better-sqlite3) or not (sqlite-proxy). */
interface SqliteDb {
  select(fields: Record<string, unknown>): { from(table: Table): { where(where: unknown): unknown } };
  run(query: unknown): unknown;
}

const schema = sqliteTable('sqlite_master', { type: text('type'), name: text('name'), tableName: text('tbl_name'), sql: text('sql') });

const EVENTS = ['INSERT', 'DELETE', 'UPDATE'] as const;

/**
 * Checks that search index column `column` (a searchIndexColumn with `fts`)
 * has its FTS5 table, that the table indexes the column, and that its table
 * has a trigger for each of INSERT, DELETE and UPDATE that writes the column
 * into that FTS5 table; with `rows`, that the index holds every row. It
 * changes nothing. The fix for each problem is in its message: for a table
 * made by searchIndexSql, run its statements again; for a table of your own
 * (the CMS's content search), make its triggers again and rebuild it.
 *
 *   const { ok, problems } = await searchIndexCheck(db, users.nameSearch);
 */
export async function searchIndexCheck(db: SqliteDb, column: Column, options: SearchIndexCheckOptions = {}): Promise<SearchIndexCheck> {
  const { codec } = searchColumnOf(column, 'searchIndexCheck');
  const fts = codec.fts;
  if (fts === undefined) return { ok: true, problems: [] }; // no FTS5 table: searches scan the column, which nothing can leave behind
  const table = getTableName(column.table as Table);
  const schemaRows = (await db.select({ type: schema.type, name: schema.name, sql: schema.sql }).from(schema).where(sql`lower(${schema.tableName}) in (lower(${table}), lower(${fts}))`)) as { type: string; name: string; sql: string | null }[];
  const fix = `run searchIndexSql(table, column, '${fts}') again, or for an FTS5 table of your own, make its triggers again and run INSERT INTO ${fts}(${fts}) VALUES ('rebuild') (docs/search.md, "Per dialect")`;
  const problems: SearchIndexProblem[] = [];
  const virtual = schemaRows.find((r) => r.type === 'table' && same(r.name, fts));
  if (virtual === undefined || !/\busing\s+fts5\s*\(/i.test(virtual.sql ?? '')) {
    problems.push({ code: 'ALE_SEARCH_FTS_MISSING', message: `searchIndexCheck: ${table}.${column.name} names the FTS5 table ${fts}, which the database does not have: ${fix}` });
    return { ok: false, problems };
  }
  const args = ftsArguments(virtual.sql ?? '');
  const content = args.find((a) => /^content\s*=/i.test(a));
  const contentTable = content === undefined ? undefined : unquote(content.slice(content.indexOf('=') + 1));
  if (!args.some((a) => same(unquote(a), column.name))) {
    problems.push({ code: 'ALE_SEARCH_FTS_COLUMN', message: `searchIndexCheck: the FTS5 table ${fts} has no column ${column.name}: ${fix}` });
  } else if (contentTable !== undefined && contentTable !== '' && !same(contentTable, table)) {
    problems.push({ code: 'ALE_SEARCH_FTS_COLUMN', message: `searchIndexCheck: the FTS5 table ${fts} reads its rows from ${contentTable}, not ${table}: ${fix}` });
  }
  const triggers = schemaRows.filter((r) => r.type === 'trigger' && r.sql !== null).map((r) => triggerOf(r.sql as string));
  for (const event of EVENTS) {
    if (!triggers.some((t) => t.event === event && (t.columns === undefined || t.columns.some((c) => same(c, column.name))) && mentions(t.body, fts) && mentions(t.body, column.name))) {
      problems.push({ code: 'ALE_SEARCH_TRIGGER_MISSING', message: `searchIndexCheck: no trigger on ${table} writes ${column.name} into ${fts} on ${event}, so ${event === 'INSERT' ? 'new rows are' : event === 'DELETE' ? 'deleted rows stay' : 'changed rows are'} ${event === 'DELETE' ? 'in the index' : 'missing from the index'}: ${fix}` });
    }
  }
  if (options.rows === true && problems.every((p) => p.code === 'ALE_SEARCH_TRIGGER_MISSING')) {
    try {
      const name = sql.identifier(fts);
      await db.run(sql`insert into ${name}(${name}, rank) values ('integrity-check', 1)`);
    } catch {
      // SQLite says only that the index is "malformed": what that means here is below.
      problems.push({ code: 'ALE_SEARCH_INDEX_STALE', message: `searchIndexCheck: the FTS5 table ${fts} does not index the rows of ${table} as they are (rows written, changed or deleted while its triggers were missing): ${fix}` });
    }
  }
  return { ok: problems.length === 0, problems };
}

/** Two SQLite names are one: identifiers are case-insensitive for ASCII. */
function same(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}

/** A name without the quotes SQLite accepts around it ("x", 'x', `x`, [x]), doubled quotes undone. */
function unquote(name: string): string {
  const s = name.trim();
  const open = s[0];
  const close = open === '[' ? ']' : open;
  if (s.length >= 2 && `"'\`[`.includes(open) && s.endsWith(close)) return s.slice(1, -1).replaceAll(close + close, close);
  return s;
}

/** The arguments of `CREATE VIRTUAL TABLE … USING fts5(…)`, split at the commas outside quotes. */
function ftsArguments(create: string): string[] {
  const inner = create.slice(create.indexOf('(') + 1, create.lastIndexOf(')'));
  const args: string[] = [];
  let [start, quote] = [0, ''];
  for (let i = 0; i < inner.length; i++) {
    const c = inner[i];
    if (quote !== '') {
      if (c === quote) quote = '';
    } else if (`"'\`[`.includes(c)) quote = c === '[' ? ']' : c;
    else if (c === ',') [args[args.length], start] = [inner.slice(start, i).trim(), i + 1];
  }
  args.push(inner.slice(start).trim());
  return args;
}

/** A trigger's event, its `UPDATE OF` columns if it lists them, and its body. */
function triggerOf(create: string): { event: string | undefined; columns: string[] | undefined; body: string } {
  const begin = create.search(/\bbegin\b/i);
  const head = begin < 0 ? create : create.slice(0, begin);
  const event = /\b(insert|delete|update)\b(?:\s+of\s+([\s\S]*?))?\s+on\s/i.exec(head);
  return {
    event: event?.[1].toUpperCase(),
    columns: event?.[2]?.split(',').map(unquote),
    body: begin < 0 ? '' : create.slice(begin),
  };
}

/** Whether `sqlText` names `name` as a whole identifier, quoted or not. */
function mentions(sqlText: string, name: string): boolean {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(^|[^\\w$])["\`\\[]?${escaped}["\`\\]]?($|[^\\w$])`, 'i').test(sqlText);
}
