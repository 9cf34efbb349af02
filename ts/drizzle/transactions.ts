// How a batch's writes run: one transaction per batch, each UPDATE's
// changed rows counted from whatever its driver hands back.
import { sql, type asc, type SQL } from 'drizzle-orm';
import { codedError } from '../shared/errors.js';
import type { Cell, RowUpdate } from './operations.js';

type AnyColumn = Parameters<typeof asc>[0];
// The query builders differ per dialect; transactions only use what every
// dialect has, so they take the builder loosely typed.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = any;

/**
 * Runs `write` for every update inside one transaction, sync (SQLite) or
 * async, and resolves to how many of them changed their row.
 */
export type RunTransaction = (db: AnyDb, write: (tx: AnyDb, u: RowUpdate) => AnyDb, updates: RowUpdate[]) => Promise<number>;

/**
 * How a dialect writes a batch: `run` its transaction, and `same`, the
 * compare-and-set's test that a cell still holds what was read, as the
 * value read (the column's collation may take other text for it: the
 * dialects' compare.ts).
 */
export interface Transact {
  readonly run: RunTransaction;
  readonly same: (column: AnyColumn, value: Cell) => SQL;
}

/**
 * How many rows an UPDATE changed, from the result its driver gives back:
 * postgres.js `count`, node-postgres (and Neon) `rowCount`, mysql2's
 * ResultSetHeader (first of the pair) and PGlite `affectedRows`, libsql and
 * PlanetScale `rowsAffected`, better-sqlite3 and bun:sqlite `changes`, D1
 * `meta.changes`. Undefined when it says none of these: sqlite-proxy hands
 * back whatever the proxy returns, often rows alone.
 */
function rowsChanged(result: unknown): number | undefined {
  const r = (Array.isArray(result) && typeof (result as { count?: unknown }).count !== 'number' ? result[0] : result) as Record<string, unknown> | null | undefined;
  for (const n of [r?.count, r?.rowCount, r?.affectedRows, r?.rowsAffected, r?.changes, (r?.meta as { changes?: unknown } | undefined)?.changes]) {
    if (typeof n === 'number') return n;
    if (typeof n === 'bigint') return Number(n);
  }
  return undefined;
}

/** A driver that does not say how many rows an UPDATE changed: written would be a guess, so the batch is rolled back. */
const noCount = () =>
  codedError(
    'ALE_INVALID_INPUT',
    "the database driver does not say how many rows an UPDATE changed (no count, rowCount, affectedRows, rowsAffected or changes in its result), so a batch's writes cannot be counted",
  );

/** PostgreSQL and MySQL drivers, and SQLite behind sqlite-proxy, run them asynchronously. */
export const asyncTransaction: RunTransaction = (db, write, updates) => transactCounting(db, write, updates, () => Promise.reject(noCount()));

/** asyncTransaction, asking `unsaid` for the count of an UPDATE whose result holds none. */
async function transactCounting(db: AnyDb, write: Parameters<RunTransaction>[1], updates: RowUpdate[], unsaid: (tx: AnyDb) => Promise<number>): Promise<number> {
  let written = 0;
  await db.transaction(async (tx: AnyDb) => {
    for (const u of updates) written += rowsChanged(await write(tx, u)) ?? (await unsaid(tx));
  });
  return written;
}

/**
 * SQLite: better-sqlite3 and bun:sqlite run transactions synchronously;
 * node:sqlite behind drizzle-orm/sqlite-proxy (an `async` database) does
 * not, and its proxy may hand back no count: SQLite's changes() then says
 * what the connection's last UPDATE changed, which inside the transaction
 * is this one.
 */
export const sqliteTransaction: RunTransaction = async (db, write, updates) => {
  if (db.resultKind === 'async') return transactCounting(db, write, updates, sqliteChanges);
  let written = 0;
  db.transaction((tx: AnyDb) => {
    for (const u of updates) {
      const n = rowsChanged(write(tx, u).run());
      if (n === undefined) throw noCount();
      written += n;
    }
  });
  return written;
};

/** changes() on the transaction's connection, a row of one value (an array or an object, as the proxy hands rows back). */
async function sqliteChanges(tx: AnyDb): Promise<number> {
  const row = await tx.get(sql`select changes()`);
  const n = Number(row === null || typeof row !== 'object' ? undefined : Object.values(row)[0]);
  if (!Number.isInteger(n)) throw noCount();
  return n;
}
