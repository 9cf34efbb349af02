// searchIndexCheck: whether the FTS5 table a search or range index column
// names and the triggers that keep it are in the database. A table that
// drizzle-kit rebuilds loses its triggers without a word, and from then on
// written rows are missing from the index and searches and range
// conditions miss them (docs/search.md,
// "SQLite: a migration that rebuilds the table drops the triggers"); a
// check at start-up says so before a search does. It reads the schema
// (sqlite_master), and with `rows` asks FTS5 to compare its index with the
// rows.
import { getTableName, sql, type Column, type SQL, type Table } from 'drizzle-orm';
import { text, sqliteTable } from 'drizzle-orm/sqlite-core';
import { causes } from '../../shared/causes.js';
import { indexColumnOf } from '../probe.js';
import { mentions } from '../sql-names.js';
import { quoteName } from './search.js';

/** What is missing or wrong, with what to do about it. */
export interface SearchIndexProblem {
  code: 'ALE_SEARCH_TABLE_UNFIT' | 'ALE_SEARCH_FTS_MISSING' | 'ALE_SEARCH_FTS_COLUMN' | 'ALE_SEARCH_TRIGGER_MISSING' | 'ALE_SEARCH_INDEX_STALE' | 'ALE_SEARCH_ROWS_UNCHECKED';
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
  select(fields: Record<string, unknown>): { from(table: Table | SQL): { where(where: unknown): unknown } & PromiseLike<unknown> };
  run(query: unknown): unknown;
}

const schema = sqliteTable('sqlite_master', { type: text('type'), name: text('name'), tableName: text('tbl_name'), sql: text('sql') });

const EVENTS = ['INSERT', 'DELETE', 'UPDATE'] as const;

/**
 * Checks that index column `column` (a searchIndexColumn or
 * rangeIndexColumn with `fts`) has its FTS5 table, that the table indexes
 * the column, and that its table has a trigger for each of INSERT, DELETE
 * and UPDATE that writes the column into that FTS5 table; with `rows`, that the index holds every row. It
 * changes nothing. The fix for each problem is in its message: for a table
 * made by searchIndexSql, run its statements again; for a table of your own
 * (the CMS's content search), make its triggers again and rebuild it.
 *
 *   const { ok, problems } = await searchIndexCheck(db, users.nameSearch);
 */
export async function searchIndexCheck(db: SqliteDb, column: Column, options: SearchIndexCheckOptions = {}): Promise<SearchIndexCheck> {
  const { codec } = indexColumnOf(column, 'searchIndexCheck');
  const fts = codec.fts;
  if (fts === undefined) return { ok: true, problems: [] }; // no FTS5 table: searches scan the column, which nothing can leave behind
  const table = getTableName(column.table as Table);
  const schemaRows = (await db.select({ type: schema.type, name: schema.name, sql: schema.sql }).from(schema).where(sql`lower(${schema.tableName}) in (lower(${table}), lower(${fts}))`)) as { type: string; name: string; sql: string | null }[];
  // searchIndexSql makes only what is missing under its names (IF NOT EXISTS): a wrong definition must go first.
  const fix = (drop: string) =>
    `${drop}run searchIndexSql(table, column, '${fts}') again; for an FTS5 table of your own, make its triggers again and run INSERT INTO ${quoteName(fts)}(${quoteName(fts)}) VALUES ('rebuild') (docs/search.md, "Per dialect")`;
  const problem = (code: SearchIndexProblem['code'], what: string, drop = '') => ({ code, message: `searchIndexCheck: ${what}: ${fix(drop)}` });
  const problems: SearchIndexProblem[] = [];
  // The table itself: FTS5 matches its rows by rowid, and its triggers read the column; without either, every write fails.
  const own = schemaRows.find((r) => r.type === 'table' && same(r.name, table));
  if (own === undefined) {
    problems.push({ code: 'ALE_SEARCH_TABLE_UNFIT', message: `searchIndexCheck: the database has no table ${table} (a view has no rowid to index): create it, with its column ${column.name}, before searchIndexSql's statements` });
    return { ok: false, problems };
  }
  const columns = await tableColumns(db, table);
  if (!columns.some((c) => same(c.name, column.name))) {
    problems.push({ code: 'ALE_SEARCH_TABLE_UNFIT', message: `searchIndexCheck: the table ${table} has no column ${column.name}: add it (ALTER TABLE ${quoteName(table)} ADD COLUMN ${quoteName(column.name)} TEXT) before searchIndexSql's statements; triggers made before it fail every write to the table` });
  }
  if (await withoutRowid(db, table)) {
    problems.push({ code: 'ALE_SEARCH_TABLE_UNFIT', message: `searchIndexCheck: the table ${table} is WITHOUT ROWID, and an FTS5 table indexes rows by rowid: give the column a table with a rowid, or leave out fts (a query then scans the column)` });
  }
  const virtual = schemaRows.find((r) => r.type === 'table' && same(r.name, fts));
  if (virtual === undefined || !/\busing\s+fts5\s*\(/i.test(virtual.sql ?? '')) {
    const what = virtual === undefined ? 'which the database does not have' : 'which is not an FTS5 table';
    problems.push(problem('ALE_SEARCH_FTS_MISSING', `${table}.${column.name} names the FTS5 table ${fts}, ${what}`, virtual === undefined ? '' : `drop ${fts}, then `));
    return { ok: false, problems };
  }
  const args = ftsArguments(virtual.sql ?? '');
  const content = args.find((a) => /^content\s*=/i.test(a));
  const contentTable = content === undefined ? undefined : unquote(content.slice(content.indexOf('=') + 1));
  const dropFts = `drop ${fts} first (DROP TABLE ${quoteName(fts)}), then `;
  const alias = rowidAlias(columns, await primaryKeyIndexed(db, table));
  // The rowid under any of its names: SQLite's three, and the table's INTEGER PRIMARY KEY.
  const isRowid = (name: string) => ROWID_NAMES.some((n) => same(name, n)) || (alias !== undefined && same(name, alias));
  // Queries match the table's rowid with the FTS5 table's: its content_rowid must be the rowid.
  const rowidArg = args.find((a) => /^content_rowid\s*=/i.test(a));
  const rowidColumn = rowidArg === undefined ? 'rowid' : unquote(rowidArg.slice(rowidArg.indexOf('=') + 1));
  if (!args.some((a) => same(unquote(a), column.name))) {
    problems.push(problem('ALE_SEARCH_FTS_COLUMN', `the FTS5 table ${fts} has no column ${column.name}`, dropFts));
  } else if (contentTable !== undefined && contentTable !== '' && !same(contentTable, table)) {
    problems.push(problem('ALE_SEARCH_FTS_COLUMN', `the FTS5 table ${fts} reads its rows from ${contentTable}, not ${table}`, dropFts));
  } else if (!isRowid(rowidColumn)) {
    problems.push(problem('ALE_SEARCH_FTS_COLUMN', `the FTS5 table ${fts} keys its rows by ${rowidColumn} (content_rowid), which is not the rowid of ${table}: searches would name other rows`, dropFts));
  }
  // Every query filters by column, and quotes each token: FTS5 refuses the first with detail=none, and the
  // second with detail=column when the tokenizer cuts a token into several (trigram), whatever the table holds.
  const detail = unquote(optionOf(args, 'detail') ?? 'full').toLowerCase();
  // The tokenizer and its arguments, quoted or not, trigram alone or wrapped (porter trigram).
  const tokenizer = (optionOf(args, 'tokenize') ?? '').replace(/["'`]/g, ' ').trim().toLowerCase().split(/\s+/);
  if (detail === 'none' || (detail !== 'full' && tokenizer.includes('trigram'))) {
    const why = detail === 'none' ? 'detail=none, on which FTS5 refuses the column filter of every query' : `tokenize='trigram' with detail=${detail}, on which FTS5 refuses a token of more than three characters`;
    problems.push(problem('ALE_SEARCH_FTS_COLUMN', `the FTS5 table ${fts} has ${why}: give it detail=full, or a tokenizer that keeps a word whole (unicode61, ascii)`, dropFts));
  }
  const triggers = schemaRows.filter((r) => r.type === 'trigger' && r.sql !== null).map((r) => ({ name: r.name, ...triggerOf(r.sql as string) }));
  // A trigger fires on a change of `name` when its UPDATE OF (if any) lists it and its WHEN (if any) looks at it;
  // for the column, which may be NULL, not by a comparison (`<>`, `=`, `<`…), which is NULL, not true, when a
  // side is: a change from or to NULL (what reindexSearch writes into a new column) would pass it by. IS and IS
  // NOT follow it. The rowid is never NULL.
  const firesOn = (t: Trigger, names: (name: string) => boolean, nullable: boolean) =>
    (t.columns === undefined || t.columns.some(names)) && (t.when === undefined || (whenNames(t.when).some(names) && !(nullable && comparedBlindToNull(t.when, names))));
  for (const event of EVENTS) {
    const on = triggers.filter((t) => t.event === event);
    // A BEFORE trigger on an insert sees no rowid yet, and one on an update writes even when a conflict
    // clause (OR IGNORE, a column's ON CONFLICT IGNORE) then leaves the row as it was; it must write the
    // column into the FTS5 table.
    const writes = (t: Trigger) => !(t.before && event !== 'DELETE') && mentions(t.body, fts) && mentions(t.body, column.name);
    const onColumn = on.some((t) => writes(t) && (event !== 'UPDATE' || firesOn(t, (n) => same(n, column.name), true)));
    // The index is by rowid: an update that changes the INTEGER PRIMARY KEY moves the row, which a trigger must follow
    // too (one that also fires on it, or another). Without such a key, only an explicit SET rowid moves it.
    const onMove = event !== 'UPDATE' || alias === undefined || on.some((t) => writes(t) && firesOn(t, isRowid, false));
    // A BEFORE trigger that writes into the FTS5 table on an insert or update is wrong beside an AFTER one too
    // (a BEFORE UPDATE that takes the old tokens out, as FTS4's docs show, takes them out of a row OR IGNORE keeps).
    const early = event === 'DELETE' ? [] : on.filter((t) => t.before && mentions(t.body, fts)).map((t) => t.name);
    if (early.length > 0) {
      // All of the event's triggers that write into it go: searchIndexSql makes the one it needs, and one left beside it writes twice.
      const writing = on.filter((t) => mentions(t.body, fts)).map((t) => t.name);
      const drop = `drop ${writing.join(', ')} first (DROP TRIGGER ${writing.map(quoteName).join('; DROP TRIGGER ')}), then `;
      problems.push(problem('ALE_SEARCH_TRIGGER_MISSING', `${early.join(', ')} on ${table} writes into ${fts} BEFORE an ${event}, where ${event === 'INSERT' ? 'the row has no rowid yet' : 'a conflict clause (OR IGNORE, ON CONFLICT IGNORE) may still leave the row as it was'}`, drop));
      continue;
    }
    if (onColumn && onMove) continue;
    const consequence = onColumn
      ? `on every UPDATE of ${alias}, so rows whose key changes keep their tokens under the old one`
      : `on every ${event}, so ${{ INSERT: 'new rows are missing from the index', DELETE: 'deleted rows stay in the index', UPDATE: 'changed rows keep their old tokens in the index' }[event]}`;
    const named = on.filter((t) => mentions(t.body, fts)).map((t) => t.name);
    const drop = named.length === 0 ? '' : `drop ${named.join(', ')} first (DROP TRIGGER ${named.map(quoteName).join('; DROP TRIGGER ')}), then `;
    problems.push(problem('ALE_SEARCH_TRIGGER_MISSING', `no trigger on ${table} writes ${column.name} into ${fts} ${consequence}`, drop));
  }
  if (options.rows === true && problems.every((p) => p.code === 'ALE_SEARCH_TRIGGER_MISSING')) {
    if (contentTable === undefined || contentTable === '') {
      // FTS5 compares its index with its content, which is then its own copy, or nothing: not the rows.
      problems.push({ code: 'ALE_SEARCH_ROWS_UNCHECKED', message: `searchIndexCheck: the FTS5 table ${fts} does not read its rows from ${table} (no content=${table}), so FTS5 cannot compare its index with them` });
    } else {
      try {
        const name = sql.identifier(fts);
        await db.run(sql`insert into ${name}(${name}, rank) values ('integrity-check', 1)`);
      } catch (e) {
        if (!isCorruptVtab(e)) throw e;
        problems.push(problem('ALE_SEARCH_INDEX_STALE', `the FTS5 table ${fts} does not index the rows of ${table} as they are (rows written, changed or deleted while its triggers were missing)`));
      }
    }
  }
  return { ok: problems.length === 0, problems };
}

/**
 * Whether `e`, or an error it wraps (Drizzle wraps the driver's), is
 * SQLITE_CORRUPT_VTAB: FTS5's answer to an index that does not match its
 * content. Anything else (a busy or read-only database, a missing
 * tokenizer) is not a finding about the index, and is thrown as it is.
 */
function isCorruptVtab(e: unknown): boolean {
  // better-sqlite3 and bun:sqlite name the code; node:sqlite gives its number (267)
  for (const err of causes(e)) if (err.code === 'SQLITE_CORRUPT_VTAB' || err.errcode === 267) return true;
  return false;
}

/** SQLite's names for the rowid, where no column has taken them. */
const ROWID_NAMES = ['rowid', '_rowid_', 'oid'];

interface TableColumn {
  name: string;
  type: string;
  pk: number;
}

/** The table's columns, as pragma_table_info gives them. */
async function tableColumns(db: SqliteDb, table: string): Promise<TableColumn[]> {
  return (await db.select({ name: sql<string>`name`, type: sql<string>`type`, pk: sql<number>`pk` }).from(sql`pragma_table_info(${table})`)) as TableColumn[];
}

/** Whether the table's primary key has an index of its own (pragma_index_list's origin 'pk'). */
async function primaryKeyIndexed(db: SqliteDb, table: string): Promise<boolean> {
  const pkIndexes = (await db.select({ origin: sql<string>`origin` }).from(sql`pragma_index_list(${table})`)) as { origin: string }[];
  return pkIndexes.some((i) => i.origin === 'pk');
}

/**
 * The table's INTEGER PRIMARY KEY column, the rowid's other name, if it has
 * one: a key of one column declared INTEGER with no index of its own (an
 * `INT PRIMARY KEY`, an `INTEGER PRIMARY KEY DESC` and a WITHOUT ROWID
 * table's key each have one, and are not the rowid).
 */
function rowidAlias(columns: TableColumn[], pkIndexed: boolean): string | undefined {
  const keys = columns.filter((c) => Number(c.pk) > 0);
  if (keys.length !== 1 || !same(keys[0].type, 'INTEGER')) return undefined;
  return pkIndexed ? undefined : keys[0].name;
}

/**
 * Whether the main schema's table is WITHOUT ROWID: it has no rowid to
 * read (by any SQLite version, where pragma_table_list is 3.37's).
 */
async function withoutRowid(db: SqliteDb, table: string): Promise<boolean> {
  try {
    // Under all three of its names: a column may have taken one (a WITHOUT ROWID table's key named rowid).
    await db.select({ a: sql`rowid`, b: sql`_rowid_`, c: sql`oid` }).from(sql`main.${sql.identifier(table)}`).where(sql`0`);
    return false;
  } catch (e) {
    for (const err of causes(e)) if (/no such column: (rowid|_rowid_|oid)\b/i.test(String(err.message))) return true;
    throw e;
  }
}

/** The value of FTS5 option `name` (`detail=column`) among its arguments, if given. */
function optionOf(args: string[], name: string): string | undefined {
  const arg = args.find((a) => new RegExp(`^${name}\\s*=`, 'i').test(a));
  return arg === undefined ? undefined : arg.slice(arg.indexOf('=') + 1);
}

/**
 * Whether a WHEN may miss a change of one of `names` from or to NULL: it has
 * an AND other than BETWEEN's (which narrows the change test), or puts
 * `old.x` or `new.x` (in parentheses, or as the argument of a function that
 * passes NULL on; not of coalesce, ifnull, quote, typeof or iif) on a side
 * of an operator that is NULL when a side is (`=`, `==`, `<>`, `!=`, `<`,
 * `<=`, `>`, `>=`, IN, LIKE, GLOB, BETWEEN). It reads the operators around
 * the column, not the WHEN's logic: some NULL-safe forms are flagged too.
 */
function comparedBlindToNull(when: string, names: (name: string) => boolean): boolean {
  // An AND other than BETWEEN's narrows the change test wherever it stands; not a word of a quoted name.
  const bare = when.replace(/"(?:[^"]|"")*"|`(?:[^`]|``)*`|\[[^\]]*\]/g, 'x');
  if (/\band\b/i.test(bare.replace(/\bbetween\b[\s\S]*?\band\b/gi, ' '))) return true;
  const op = String.raw`(?:==?|<>|!=|<=?|>=?|(?:not\s+)?(?:in|like|glob|between)\b)`;
  const after = new RegExp(`^\\s*${op}`, 'i');
  const before = /(?:==?|<>|!=|<=?|>=?|\b(?:in|like|glob|between|and))\s*$/i;
  for (const m of when.matchAll(new RegExp(String.raw`\b(?:old|new)\s*\.\s*(${NAME})`, 'gi'))) {
    if (!names(unquote(m[1]))) continue;
    // The parentheses opened right before the reference, which as many closing ones after it end.
    let head = when.slice(0, m.index);
    let tail = when.slice(m.index + m[0].length);
    let call = false;
    for (let open = /\(\s*$/.exec(head); open !== null && !call; open = /\(\s*$/.exec(head)) {
      head = head.slice(0, open.index);
      // The argument of a function that turns NULL into a value is compared safely; any other passes NULL on.
      if (/\b(?:coalesce|ifnull|quote|typeof|iif)\s*$/i.test(head)) call = true;
      const close = /^\s*\)/.exec(tail);
      if (close !== null) tail = tail.slice(close[0].length);
    }
    if (call) continue;
    if (after.test(tail) || before.test(head)) return true;
  }
  return false;
}

/** The names a WHEN clause reads from the row: `old.x`, `new.x` (quoted or not). */
function whenNames(when: string): string[] {
  return [...when.matchAll(/\b(?:old|new)\s*\.\s*("(?:[^"]|"")*"|`(?:[^`]|``)*`|\[[^\]]*\]|[A-Za-z_][A-Za-z0-9_$]*)/gi)].map((m) => unquote(m[1]));
}

/** Two SQLite names are one: SQLite folds the case of ASCII letters only. */
function same(a: string, b: string): boolean {
  const fold = (s: string) => s.replace(/[A-Z]/g, (c) => c.toLowerCase());
  return fold(a) === fold(b);
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
  const using = /\busing\s+fts5\s*\(/i.exec(create);
  const inner = create.slice((using?.index ?? 0) + (using?.[0].length ?? 0), create.lastIndexOf(')'));
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

interface Trigger {
  /** INSERT, DELETE or UPDATE; undefined when the statement could not be read. */
  event: string | undefined;
  before: boolean;
  /** The columns of `UPDATE OF`, if it lists them. */
  columns: string[] | undefined;
  /** The WHEN condition, if any. */
  when: string | undefined;
  body: string;
}

/** A name, quoted ("…", `…`, […]) or bare, at the start of `s`. */
const NAME = String.raw`(?:"(?:[^"]|"")*"|\x60(?:[^\x60]|\x60\x60)*\x60|\[[^\]]*\]|[\w$]+)`;
/** `CREATE TRIGGER [IF NOT EXISTS] [schema.]name`, then the timing and event up to ON, then the table, then WHEN and BEGIN. */
const TRIGGER = new RegExp(
  String.raw`^\s*create\s+(?:temp(?:orary)?\s+)?trigger\s+(?:if\s+not\s+exists\s+)?${NAME}(?:\s*\.\s*${NAME})?\s*(before|after|instead\s+of)?\s*(insert|delete|update)(?:\s+of\s+(${NAME}(?:\s*,\s*${NAME})*))?\s+on\s*${NAME}(?:\s*\.\s*${NAME})?(?:\s+for\s+each\s+row)?(?:\s+when\s+([\s\S]*?))?\s+begin\b`,
  'i',
);

/** SQL text without its comments, and with its string literals emptied (`''`): what its names and operators are. */
function codeOnly(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; ) {
    const two = text.slice(i, i + 2);
    if (two === '--' || two === '/*') {
      const end = two === '--' ? text.indexOf('\n', i) : text.indexOf('*/', i + 2);
      i = end === -1 ? text.length : end + (two === '--' ? 1 : 2);
      out += ' ';
    } else if (text[i] === "'") {
      let j = i + 1;
      while (j < text.length && !(text[j] === "'" && text[j + 1] !== "'")) j += text[j] === "'" ? 2 : 1;
      out += "''";
      i = j + 1;
    } else if (`"\`[`.includes(text[i])) {
      const close = text[i] === '[' ? ']' : text[i];
      let j = i + 1;
      while (j < text.length && !(text[j] === close && text[j + 1] !== close)) j += text[j] === close ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
    } else out += text[i++];
  }
  return out;
}

/** A trigger's timing, event, `UPDATE OF` columns, WHEN and body, from its CREATE statement. */
function triggerOf(create: string): Trigger {
  const m = TRIGGER.exec(create);
  if (m === null) return { event: undefined, before: false, columns: undefined, when: undefined, body: '' };
  return {
    event: m[2].toUpperCase(),
    // SQLite's default timing is BEFORE.
    before: m[1] === undefined || /^before$/i.test(m[1]),
    columns: m[3]?.split(',').map(unquote),
    when: m[4] === undefined ? undefined : codeOnly(m[4]),
    body: create.slice(m.index + m[0].length),
  };
}
