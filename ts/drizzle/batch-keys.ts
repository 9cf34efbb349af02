// What a batch operation's key column must be, since the operations walk a
// table by it (`key > last`, by key order) and write each row by it
// (`key = k`, compare-and-set): one row per key, no NULL, and keys read
// exactly. Otherwise a run steps past rows, leaving them in plaintext or
// under an old key while it reports them done, or fetches the same rows for
// ever; so each is refused before anything is written.
import { isNull, sql, type SQLWrapper } from 'drizzle-orm';
import { codedError } from '../shared/errors.js';
import { keyText } from './errors.js';

// The query builders differ per dialect; only methods every dialect has are chained.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = any;

/** What Drizzle says of a column, and how it writes a value. */
export interface KeyColumn {
  name?: string;
  primary?: boolean;
  isUnique?: boolean;
  notNull?: boolean;
  mapToDriverValue?(value: unknown): unknown;
}

const refused = (column: string | undefined, what: string) =>
  codedError('ALE_INVALID_INPUT', `the key column "${column}" ${what}. Nothing of this batch was written`);

/**
 * Checks, once per run, what the schema does not promise: that no two rows
 * share a key (a column declared neither the primary key nor unique, as
 * `id` of a table whose key is `(tenant, id)`) and that none has a NULL
 * key (PostgreSQL sorts NULLs last, where the walk never reaches them). A
 * query over the whole table, by the key, for each that the schema leaves
 * open.
 */
export async function checkKeyColumn(db: AnyDb, table: object, column: unknown): Promise<void> {
  const c = column as KeyColumn;
  if (!c.primary && !c.isUnique) {
    const shared = await db
      .select({ key: column })
      .from(table)
      .groupBy(column)
      .having(sql`count(*) > 1`)
      .limit(1);
    if (shared.length > 0) {
      throw refused(
        c.name,
        `is not unique: ${keyText(shared[0].key)} is the key of several rows, and a batch operation walks the table by its key, one row per key, so it would pass some of them by. ` +
          "Give it the table's primary key when that is one column, or another unique column",
      );
    }
  }
  if (!c.notNull) {
    const nulls = await db.select({ one: sql`1` }).from(table).where(isNull(column as SQLWrapper)).limit(1);
    if (nulls.length > 0) throw nullKey(c.name);
  }
}

/** A row whose key is NULL: `key > NULL` matches nothing, and `key = NULL` neither. */
export const nullKey = (column: string | undefined) => refused(column, 'is NULL in a row, which a batch operation can neither step past nor write; give that row a key first');

/**
 * Refuses keys that the driver read inexactly or that repeat, before
 * anything of the batch is written:
 * - integers past 2^53 as JS numbers, as the key or as the driver gave it
 *   (mysql2 reads a BIGINT so unless told otherwise, and a
 *   bigint({ mode: 'bigint' }) column then makes the rounded number an
 *   exact-looking bigint);
 * - numeric keys that do not rise from the last (a DECIMAL or NUMERIC key
 *   read as a number), and a key equal to the last;
 * - keys the driver reads as objects other than bytes: a Date keeps
 *   milliseconds only, where PostgreSQL's timestamps and MySQL's
 *   datetime(6) hold microseconds, so `key > k` fetched the same row for
 *   ever and `key = k` wrote none;
 * - text keys the column's mapper changes.
 * Rounded, two rows read with one key, a write was aimed at another row
 * (the compare-and-set kept it from landing), and the walk fetched the same
 * rows for ever or stepped past one and left it in plaintext.
 */
export function exactKeys(after: unknown, rows: readonly { key: unknown }[], raw: readonly { rawKey?: unknown }[], keyColumn: KeyColumn): void {
  const column = keyColumn.name;
  // What the walk sends for a key (`key > k`, `key = k`) is the column's mapping of it back: it names the stored key only when that gives the stored value again.
  const backTo = (key: unknown) => String(keyColumn.mapToDriverValue ? keyColumn.mapToDriverValue(key) : key);
  const past = (k: unknown) => typeof k === 'number' && Number.isInteger(k) && !Number.isSafeInteger(k);
  const numeric = (k: unknown): k is number | bigint => typeof k === 'number' || typeof k === 'bigint';
  let last = after;
  for (const [i, { key }] of rows.entries()) {
    const rawKey = raw[i].rawKey;
    const object = (k: unknown) => typeof k === 'object' && k !== null && !(k instanceof Uint8Array);
    if (object(rawKey) || (object(key) && !(key instanceof Date))) {
      throw refused(column, 'read a value that is neither a number, a bigint, a string nor bytes, which does not hold the key exactly; give the batch a numeric or text key');
    }
    // A Date, or text the column's mapper changed, is exact when it maps back to the stored value (SQLite's integer
    // timestamps; a JSON text key): not a timestamp of microseconds read as a Date, nor text whose case a mapper folds.
    if ((key instanceof Date || (typeof key === 'string' && typeof rawKey === 'string' && key !== rawKey)) && backTo(key) !== String(rawKey)) {
      throw refused(
        column,
        `reads ${keyText(rawKey)} as ${key instanceof Date ? `the Date ${key.toISOString()}` : keyText(key)}, which does not give the stored key back (a Date keeps milliseconds, a timestamp column may hold microseconds; a mapper may fold case), ` +
          "so the walk cannot compare it with the stored ones: read it as a string (a timestamp column with { mode: 'string' }), or give the batch a key column whose values the mapper keeps",
      );
    }
    const rounded = past(key) || past(rawKey);
    if (rounded || (numeric(key) && numeric(last) && !(key > last)) || (typeof key === 'string' && key === last)) {
      throw refused(
        column,
        `read ${keyText(key)}${rounded ? ', past 2^53, which a JS number cannot hold exactly' : ` after ${keyText(last)}`}: the driver or the column rounds the keys (or the key is not unique), so a batch cannot say which row it writes. ` +
          "Read the key exactly, as a bigint or a string (mysql2: supportBigNumbers: true and bigNumberStrings: true, with the column declared bigint({ mode: 'bigint' }); " +
          "better-sqlite3: safeIntegers(); node:sqlite: readBigInts: true; bun:sqlite: safeIntegers: true; a decimal or numeric key in mode 'string')",
      );
    }
    last = key;
  }
}
