// Builds a BatchDriver from Drizzle's dialect-neutral query builder. Values
// are read and written as raw SQL expressions, so the encrypted columns'
// own mappers (which would encrypt or decrypt) stay out of the way.
import { and, asc, eq, getTableColumns, gt, sql, type SQL } from 'drizzle-orm';
import { encryptPlaintext, reencryptUnderPrimary, requireRing, runBatches } from './core.js';
import type { BatchDriver, BatchOptions, CellUpdate, ColumnSpec, Progress } from './core.js';

type AnyColumn = Parameters<typeof asc>[0];
// The query builders differ per dialect; these helpers only chain methods
// every dialect has, so they take the builder loosely typed.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = any;

/** Runs `write` for every update inside one transaction, sync (SQLite) or async. */
export type Transact = (db: AnyDb, write: (tx: AnyDb, u: CellUpdate) => AnyDb, updates: CellUpdate[]) => Promise<void>;

export function keyOf(table: object, column: unknown): string {
  for (const [key, value] of Object.entries(getTableColumns(table as never))) if (value === column) return key;
  throw new TypeError('the column does not belong to the table');
}

export function drizzleDriver(db: AnyDb, table: object, key: unknown, specs: ColumnSpec[], options: BatchOptions, transact: Transact): BatchDriver {
  const keyCol = key as AnyColumn;
  const cols = specs.map((s) => s.column as AnyColumn);
  const names = specs.map((s) => keyOf(table, s.column));
  if (typeof options.tenant !== 'string' && !options.tenant?.column) {
    throw invalidTenant('options.tenant must be a tenant id, or { column } naming the column that holds it');
  }
  const tenantCol = typeof options.tenant === 'string' ? null : (options.tenant.column as AnyColumn);
  const fixedTenant = typeof options.tenant === 'string' ? options.tenant : null;
  const tenantOf = (r: Record<string, unknown>): string => {
    if (r.tenant === null || r.tenant === undefined) throw invalidTenant(`row ${String(r.key)}: the tenant column is NULL, so its values cannot be bound to a tenant`);
    return String(r.tenant);
  };
  const selection: Record<string, SQL | AnyColumn> = { key: keyCol };
  cols.forEach((c, i) => (selection[`c${i}`] = sql<string | null>`${c}`));
  if (tenantCol) selection.tenant = sql<string>`${tenantCol}`;

  return {
    async fetch(afterKey, limit) {
      const rows: Record<string, unknown>[] = await db
        .select(selection)
        .from(table)
        .where(afterKey === undefined ? undefined : gt(keyCol, afterKey))
        .orderBy(asc(keyCol))
        .limit(limit);
      return rows.map((r) => ({
        key: r.key,
        tenant: fixedTenant ?? tenantOf(r),
        cells: cols.map((_, i) => (r[`c${i}`] ?? null) as string | null),
      }));
    },
    apply(updates) {
      return transact(
        db,
        (tx, u) =>
          tx
            .update(table)
            .set({ [names[u.column]]: sql`${u.next}` })
            .where(and(eq(keyCol, u.key), sql`${cols[u.column]} = ${u.prev}`)),
        updates,
      );
    },
  };
}

function invalidTenant(message: string): Error {
  return Object.assign(new Error(message), { code: 'ALE_INVALID_CONTEXT' });
}

export interface MigrateOptions extends BatchOptions {
  /** The table to walk. */
  table: object;
  /** Its primary-key column: rows are visited in its order. */
  key: unknown;
  /** The encrypted columns to process. */
  columns: ColumnSpec[];
}

/** migratePlaintext and rotateKeys for one dialect, given how it runs a transaction. */
export function batchHelpers(transact: Transact) {
  const specsOf = (o: MigrateOptions) =>
    o.columns.map((c) => ({ collection: c.collection, field: c.field ?? (c.column as { name: string }).name }));
  return {
    /**
     * Encrypts the plaintext values of `columns`, batch by batch, each batch in
     * a transaction. Envelopes are never touched, so it is idempotent; it can
     * be killed and rerun at any point.
     */
    async migratePlaintext(db: AnyDb, options: MigrateOptions): Promise<Progress> {
      const driver = drizzleDriver(db, options.table, options.key, options.columns, options, transact);
      return runBatches(driver, specsOf(options), options, encryptPlaintext(options.keyRing));
    },
    /**
     * Re-encrypts under the primary key every value that only a previous key
     * of `keyRing` opens. Same batching and resume guarantees as migratePlaintext.
     */
    async rotateKeys(db: AnyDb, options: MigrateOptions): Promise<Progress> {
      const ring = requireRing(options.keyRing, 'rotateKeys');
      const driver = drizzleDriver(db, options.table, options.key, options.columns, options, transact);
      return runBatches(driver, specsOf(options), options, reencryptUnderPrimary(ring));
    },
  };
}

/** SQLite drivers (better-sqlite3, bun:sqlite) run transactions synchronously. */
export const syncTransact: Transact = async (db, write, updates) => {
  db.transaction((tx: AnyDb) => {
    for (const u of updates) write(tx, u).run();
  });
};

/** PostgreSQL and MySQL drivers run them asynchronously. */
export const asyncTransact: Transact = async (db, write, updates) => {
  await db.transaction(async (tx: AnyDb) => {
    for (const u of updates) await write(tx, u);
  });
};
