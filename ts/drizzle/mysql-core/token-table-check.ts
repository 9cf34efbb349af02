// rangeTokenTableCheck: whether the token table a range index column names,
// its foreign key and the two triggers that write it are in the database.
// A dump restored without its triggers (mysqldump --skip-triggers), or a
// table made again from its schema alone, writes rows with no pairs, and
// range conditions then miss those rows without a word (docs/search.md,
// "Token tables on MySQL and MariaDB"); a check at start-up says so first.
// It reads information_schema, and with `rows` compares the pairs with the
// column's text.
import { getTableName, sql, type Column, type SQL, type Table } from 'drizzle-orm';
import { codedError } from '../../shared/errors.js';
import { rangeColumnOf } from '../probe.js';
import { mentions } from '../sql-names.js';
import { quoteId } from './names.js';
import { keyOf, tokensOf } from './token-table.js';

/** What is missing or wrong, with what to do about it. */
export interface RangeTokenTableProblem {
  code: 'ALE_RANGE_TOKEN_TABLE_MISSING' | 'ALE_RANGE_TOKEN_FK_MISSING' | 'ALE_RANGE_TRIGGER_MISSING' | 'ALE_RANGE_PAIRS_STALE';
  message: string;
}

export interface RangeTokenTableCheck {
  /** No problem found. */
  ok: boolean;
  problems: RangeTokenTableProblem[];
}

export interface RangeTokenTableCheckOptions {
  /**
   * Also compare the pairs with the column's text, row by row: finds rows
   * written or changed while a trigger was gone. It reads every row and
   * every pair. Default false.
   */
  rows?: boolean;
}

/** A Drizzle MySQL database on mysql2 (drizzle-orm/mysql2), whose execute() resolves to [rows, fields]. */
interface MySqlDb {
  execute(query: SQL): Promise<unknown>;
}

async function rowsOf<Row>(db: MySqlDb, query: SQL): Promise<Row[]> {
  const result = await db.execute(query);
  if (!Array.isArray(result) || !Array.isArray(result[0])) throw codedError('ALE_INVALID_INPUT', "rangeTokenTableCheck: the database's execute() did not give mysql2's [rows, fields]: pass a drizzle-orm/mysql2 database");
  return result[0] as Row[];
}

async function countOf(db: MySqlDb, query: SQL): Promise<number> {
  const [row] = await rowsOf<{ n: number | string | bigint }>(db, query);
  return Number(row?.n ?? 0);
}

const EVENTS = ['INSERT', 'UPDATE'] as const;

/** Whether the connection's account holds the TRIGGER privilege on `table`: globally, on the database, or on the table (roles aside). */
async function holdsTrigger(db: MySqlDb, table: string): Promise<boolean> {
  // information_schema names a grantee 'user'@'host'; CURRENT_USER() gives user@host, and a user name may hold an @.
  const grantee = sql`(SELECT CONCAT('''', LEFT(u, LENGTH(u) - LENGTH(SUBSTRING_INDEX(u, '@', -1)) - 1), '''@''', SUBSTRING_INDEX(u, '@', -1), '''') FROM (SELECT CURRENT_USER() AS u) AS me)`;
  const held = await countOf(
    db,
    sql`SELECT (SELECT COUNT(*) FROM information_schema.USER_PRIVILEGES WHERE GRANTEE = ${grantee} AND PRIVILEGE_TYPE = 'TRIGGER')
             + (SELECT COUNT(*) FROM information_schema.SCHEMA_PRIVILEGES WHERE GRANTEE = ${grantee} AND TABLE_SCHEMA = DATABASE() AND PRIVILEGE_TYPE = 'TRIGGER')
             + (SELECT COUNT(*) FROM information_schema.TABLE_PRIVILEGES WHERE GRANTEE = ${grantee} AND TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ${table} AND PRIVILEGE_TYPE = 'TRIGGER') AS n`,
  );
  return held > 0;
}

/**
 * Checks that range index column `column` (a rangeIndexColumn with
 * `tokenTable`) has its token table, with the foreign key that deletes a
 * row's pairs with the row, and that its table has an AFTER INSERT and an
 * AFTER UPDATE trigger that write the column's pairs; with `rows`, that
 * the pairs are the tokens of each row's text. It changes nothing. The fix
 * for each problem is in its message. A column without `tokenTable` (its
 * tokens under FULLTEXT, which the database keeps) has nothing to check.
 * The server shows triggers in full only to an account with the TRIGGER
 * privilege (a migration's); to others, a missing trigger's report says so.
 *
 *   const { ok, problems } = await rangeTokenTableCheck(db, orders.totalRange);
 */
export async function rangeTokenTableCheck(db: MySqlDb, column: Column, options: RangeTokenTableCheckOptions = {}): Promise<RangeTokenTableCheck> {
  const what = 'rangeTokenTableCheck';
  const { codec } = rangeColumnOf(column, what);
  const tokenTable = codec.tokenTable;
  if (tokenTable === undefined) return { ok: true, problems: [] };
  const { key } = keyOf(column, what);
  const table = getTableName(column.table as Table);
  // information_schema is read for the connection's database, where the token table is made.
  const [{ schema }] = await rowsOf<{ schema: string | null }>(db, sql`SELECT DATABASE() AS \`schema\``);
  if (schema === null) throw codedError('ALE_INVALID_INPUT', `${what}: the connection has no database selected (name one in its URL), so there is no token table to look for`);
  const rerun = `run rangeTokenTableSql(table, column)'s statements (each can run again; the last one pairs the rows already there)`;
  const problems: RangeTokenTableProblem[] = [];

  const there = await countOf(db, sql`SELECT COUNT(*) AS n FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ${tokenTable}`);
  if (there === 0) problems.push({ code: 'ALE_RANGE_TOKEN_TABLE_MISSING', message: `${what}: token table "${tokenTable}" of column "${column.name}" is missing: range conditions on the column fail; ${rerun}` });
  else {
    const cascades = await countOf(
      db,
      sql`SELECT COUNT(*) AS n FROM information_schema.KEY_COLUMN_USAGE k JOIN information_schema.REFERENTIAL_CONSTRAINTS r
            ON r.CONSTRAINT_SCHEMA = k.CONSTRAINT_SCHEMA AND r.CONSTRAINT_NAME = k.CONSTRAINT_NAME AND r.TABLE_NAME = k.TABLE_NAME
          WHERE k.TABLE_SCHEMA = DATABASE() AND k.TABLE_NAME = ${tokenTable} AND k.COLUMN_NAME = 'row_key'
            AND k.REFERENCED_TABLE_SCHEMA = DATABASE() AND k.REFERENCED_TABLE_NAME = ${table} AND k.REFERENCED_COLUMN_NAME = ${key.name} AND r.DELETE_RULE = 'CASCADE' AND r.UPDATE_RULE = 'CASCADE'`,
    );
    // CREATE TABLE IF NOT EXISTS keeps a table as it is: the table must go first.
    if (cascades === 0) problems.push({ code: 'ALE_RANGE_TOKEN_FK_MISSING', message: `${what}: token table "${tokenTable}" has no foreign key from row_key to "${table}"."${key.name}" that deletes and moves a row's pairs with it: a deleted row's tokens stay behind; drop "${tokenTable}", then ${rerun}` });
  }

  // The table's triggers, and any trigger with one of rangeTokenTableSql's names, on whatever table (a name is the schema's).
  const own = { INSERT: `${tokenTable}_ai`, UPDATE: `${tokenTable}_au` };
  const triggers = await rowsOf<{ name: string; on: string; events: string; timing: string; body: string | null }>(
    db,
    sql`SELECT TRIGGER_NAME AS name, EVENT_OBJECT_TABLE AS \`on\`, EVENT_MANIPULATION AS events, ACTION_TIMING AS timing, ACTION_STATEMENT AS body
        FROM information_schema.TRIGGERS WHERE EVENT_OBJECT_SCHEMA = DATABASE() AND (EVENT_OBJECT_TABLE = ${table} OR TRIGGER_NAME IN (${own.INSERT}, ${own.UPDATE}))`,
  );
  // Without the TRIGGER privilege an account is shown a trigger with no statement (MariaDB) or no trigger at all (MySQL 8):
  // rangeTokenTableSql's own are then known by their names where the server shows them, and a report says why. Asked
  // only once a trigger is missing.
  let canRead: boolean | undefined;
  for (const event of EVENTS) {
    // AFTER: the pairs need the row's key, which an AUTO_INCREMENT key has only once the row is written.
    const keeps = (t: (typeof triggers)[number]) =>
      t.on === table && t.events.split(',').includes(event) && t.timing === 'AFTER' && (t.body === null ? t.name === own[event] : mentions(t.body, tokenTable) && mentions(t.body, column.name));
    if (triggers.some(keeps)) continue;
    const consequence = event === 'INSERT' ? 'rows inserted from then on have no pairs, and range conditions miss them' : "rows changed from then on keep their old value's pairs, and range conditions miss them or find them by their old value";
    // CREATE TRIGGER IF NOT EXISTS keeps a trigger of that name as it is: it must go first.
    const taken = triggers.find((t) => t.name === own[event]);
    const drop = taken === undefined ? '' : `drop trigger ${taken.name} first (DROP TRIGGER ${quoteId(taken.name)}), then `;
    canRead ??= await holdsTrigger(db, table);
    const unread = canRead
      ? ''
      : ` (this account has no TRIGGER privilege on "${table}", so the server hides its triggers, or their statements, from it: check as the migration's account; { rows: true } finds rows already written without pairs)`;
    problems.push({ code: 'ALE_RANGE_TRIGGER_MISSING', message: `${what}: no AFTER ${event} trigger on "${table}" writes column "${column.name}"'s pairs into "${tokenTable}", so ${consequence}; ${drop}${rerun}, then check with { rows: true }${unread}` });
  }

  if (options.rows && there > 0) {
    const [name, pairs, text, id] = [quoteId(table), quoteId(tokenTable), quoteId(column.name), quoteId(key.name)];
    const missing = await countOf(db, sql.raw(`SELECT COUNT(*) AS n FROM ${name} AS t, ${tokensOf('t', text)} WHERE t.${text} <> '' AND NOT EXISTS (SELECT 1 FROM ${pairs} AS p WHERE p.token = UNHEX(w.hex) AND p.row_key = t.${id})`));
    // 16 hex digits with no space in a text of 16-digit tokens one space apart: one of its tokens.
    const extra = await countOf(db, sql.raw(`SELECT COUNT(*) AS n FROM ${pairs} AS p LEFT JOIN ${name} AS t ON t.${id} = p.row_key WHERE t.${text} IS NULL OR LOCATE(LOWER(HEX(p.token)), t.${text}) = 0`));
    if (missing + extra > 0) {
      problems.push({
        code: 'ALE_RANGE_PAIRS_STALE',
        message:
          `${what}: token table "${tokenTable}" is out of step with column "${column.name}": ${missing} tokens of the rows' text have no pair, and ${extra} pairs are no token of their row's text; ` +
          `range conditions can miss rows, or find rows by an old value's pairs. In one transaction, delete its pairs (DELETE FROM ${pairs}) and run rangeTokenTableSql's last statement (the fill), while the table is quiet: writes wait for it`,
      });
    }
  }
  return { ok: problems.length === 0, problems };
}
