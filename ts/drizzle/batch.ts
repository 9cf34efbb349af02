// Builds a BatchDriver from Drizzle's dialect-neutral query builder. Values
// are read and written as raw SQL expressions, so the encrypted columns'
// own mappers (which would encrypt or decrypt) stay out of the way.
import { and, asc, eq, getTableColumns, getTableName, gt, isNull, lte, sql, type SQL } from 'drizzle-orm';
import type { KeyRing } from '../../index.js';
import { codedError } from '../shared/json.js';
import type { JobTableSpec } from './jobs/table.js';
import { runJob, type LeaseOptions } from './leases.js';
import { eachCell, encryptPlaintext, moveToOtherStorage, reencryptUnderPrimary, requireRing } from './operations.js';
import type { BatchDriver, Cell, CellSpec, LoopOptions, Progress, RowUpdate } from './operations.js';
import { columnInfo, type ColumnInfo } from './probe.js';

type AnyColumn = Parameters<typeof asc>[0];
// The query builders differ per dialect; these helpers only chain methods
// every dialect has, so they take the builder loosely typed.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = any;

/** Runs `write` for every update inside one transaction, sync (SQLite) or async. */
export type Transact = (db: AnyDb, write: (tx: AnyDb, u: RowUpdate) => AnyDb, updates: RowUpdate[]) => Promise<void>;

export function keyOf(table: object, column: unknown): string {
  for (const [key, value] of Object.entries(getTableColumns(table as never))) if (value === column) return key;
  throw new TypeError('the column does not belong to the table');
}

/**
 * Reads `columns` of `table` raw, by `key` order, with each row's tenant
 * (none when `tenant` is undefined), and writes RowUpdates by compare-and-set.
 */
export function drizzleDriver(db: AnyDb, table: object, key: unknown, columns: unknown[], tenant: BatchOptions['tenant'] | undefined, transact: Transact): BatchDriver {
  const keyCol = key as AnyColumn;
  const cols = columns.map((c) => c as AnyColumn);
  const names = columns.map((c) => keyOf(table, c));
  const tenantCol = tenant === undefined || typeof tenant === 'string' ? null : (tenant.column as AnyColumn);
  const fixedTenant = typeof tenant === 'string' ? tenant : undefined;
  const tenantOf = (r: Record<string, unknown>): string => {
    if (r.tenant === null || r.tenant === undefined) throw invalidTenant(`row ${String(r.key)}: the tenant column is NULL, so its values cannot be bound to a tenant`);
    return String(r.tenant);
  };
  const selection: Record<string, SQL | AnyColumn> = { key: keyCol };
  cols.forEach((c, i) => (selection[`c${i}`] = sql<Cell>`${c}`));
  if (tenantCol) selection.tenant = sql<string>`${tenantCol}`;
  const value = (v: Cell) => (v === null ? sql`null` : sql`${v}`);

  return {
    async fetch(afterKey, limit, upTo) {
      const rows: Record<string, unknown>[] = await db
        .select(selection)
        .from(table)
        .where(and(afterKey === undefined ? undefined : gt(keyCol, afterKey), upTo === undefined ? undefined : lte(keyCol, upTo)))
        .orderBy(asc(keyCol))
        .limit(limit);
      return rows.map((r) => ({
        key: r.key,
        tenant: tenantCol ? tenantOf(r) : fixedTenant,
        cells: cols.map((_, i) => (r[`c${i}`] ?? null) as Cell),
      }));
    },
    apply(updates) {
      return transact(
        db,
        (tx, u) =>
          tx
            .update(table)
            .set(Object.fromEntries(u.set.map(([i, v]) => [names[i], value(v)])))
            .where(and(eq(keyCol, u.key), ...u.expect.map(([i, v]) => (v === null ? isNull(cols[i]) : sql`${cols[i]} = ${v}`)))),
        updates,
      );
    },
    async keyAt(afterKey, offset) {
      const [row] = await db
        .select({ key: keyCol })
        .from(table)
        .where(afterKey === undefined ? undefined : gt(keyCol, afterKey))
        .orderBy(asc(keyCol))
        .limit(1)
        .offset(offset);
      return row?.key;
    },
  };
}

function invalidTenant(message: string): Error {
  return codedError('ALE_INVALID_CONTEXT', message);
}

/** One encrypted column to migrate or rotate. */
export interface ColumnSpec {
  /** The Drizzle column (an encryptedText/encryptedJson column of the table; its `storage` is followed). */
  column: unknown;
  collection: string;
  /** Default: the column's name. */
  field?: string;
}

export interface BatchOptions extends LoopOptions {
  /**
   * Run as one of several workers on this job (PostgreSQL, MySQL/MariaDB):
   * each takes leases on ranges of the primary key, kept in a job table of
   * the same database, and a range whose worker died is taken over.
   */
  workers?: LeaseOptions;
  /** Tenant of a row: a fixed id, or read from a column of the row. */
  tenant: string | { column: unknown };
  /** Default: the process-wide ring. */
  keyRing?: KeyRing;
}

export interface MigrateOptions extends BatchOptions {
  /** The table to walk. */
  table: object;
  /** Its primary-key column: rows are visited in its order. */
  key: unknown;
  /** The encrypted columns to process. */
  columns: ColumnSpec[];
}

/** One column to move into the other storage: from `from` into `to`, two encrypted columns of the table. */
export interface StoragePair {
  /** The column that holds the envelopes now (text or binary storage). */
  from: unknown;
  /** An empty column of the other storage, with the same collection and field (so the AAD matches). */
  to: unknown;
}

export interface ConvertOptions extends LoopOptions {
  /** As BatchOptions.workers. */
  workers?: LeaseOptions;
  /** The table to walk. */
  table: object;
  /** Its primary-key column: rows are visited in its order. */
  key: unknown;
  /** The columns to move. */
  columns: StoragePair[];
}

/** migratePlaintext, rotateKeys and convertStorage for one dialect, given how it runs a transaction. */
export function batchHelpers(transact: Transact, jobs: JobTableSpec | undefined) {
  const specOf = (table: object, column: unknown, collection: string, field: string | undefined): CellSpec => {
    const name = (column as { name: string }).name;
    const info = columnInfo(column);
    // An encrypted column reads with its own collection and field: values
    // written under any other AAD would be unreadable, row after row.
    if (info && (info.collection !== collection || info.field !== (field ?? name))) {
      throw codedError(
        'ALE_INVALID_CONTEXT',
        `column "${name}" reads collection "${info.collection}", field "${info.field}", but the migration was given collection "${collection}", field "${field ?? name}"`,
      );
    }
    return { table: getTableName(table as never), column: name, collection, field: field ?? name, storage: info?.storage ?? 'text' };
  };
  const driverFor = (db: AnyDb, o: MigrateOptions) => {
    if (typeof o.tenant !== 'string' && !o.tenant?.column) {
      throw invalidTenant('options.tenant must be a tenant id, or { column } naming the column that holds it');
    }
    return drizzleDriver(db, o.table, o.key, o.columns.map((c) => c.column), o.tenant, transact);
  };
  const specsOf = (o: MigrateOptions) => o.columns.map((c) => specOf(o.table, c.column, c.collection, c.field));
  return {
    /**
     * Encrypts the plaintext values of `columns`, batch by batch, each batch in
     * a transaction. Envelopes are never touched, so it is idempotent; it can
     * be killed and rerun at any point. A binary column gets binary envelopes.
     */
    async migratePlaintext(db: AnyDb, options: MigrateOptions): Promise<Progress> {
      const driver = driverFor(db, options);
      return runJob(db, jobs, driver, options, eachCell(specsOf(options), encryptPlaintext(options.keyRing)));
    },
    /**
     * Re-encrypts under the primary key every value that only a previous key
     * of `keyRing` opens. Same batching and resume guarantees as migratePlaintext.
     */
    async rotateKeys(db: AnyDb, options: MigrateOptions): Promise<Progress> {
      const ring = requireRing(options.keyRing, 'rotateKeys');
      const driver = driverFor(db, options);
      return runJob(db, jobs, driver, options, eachCell(specsOf(options), reencryptUnderPrimary(ring)));
    },
    /**
     * Moves each `from` column's envelopes into its `to` column, of the other
     * storage (text into binary, or back), and sets `from` NULL, one row at a
     * time by compare-and-set, one transaction per batch. Needs no key and
     * no tenant: nothing is decrypted (envelopeToBytes / envelopeFromBytes).
     * Idempotent and safe to kill and rerun: a moved row has a NULL source.
     * A row whose target already holds a value is left alone (`skipped`).
     * Done when a run reports `written: 0, skipped: 0`; then drop `from`.
     */
    async convertStorage(db: AnyDb, options: ConvertOptions): Promise<Progress> {
      const { table, key, columns } = options;
      if (!Array.isArray(columns) || columns.length === 0) throw codedError('ALE_INVALID_INPUT', 'convertStorage: options.columns must list at least one { from, to } pair');
      const pairs = columns.map(({ from, to }) => {
        const [source, target] = [checkedInfo(table, from, 'from'), checkedInfo(table, to, 'to')];
        const names = `"${(from as { name: string }).name}" → "${(to as { name: string }).name}"`;
        if (source.storage === target.storage) throw codedError('ALE_INVALID_INPUT', `convertStorage ${names}: both columns have storage '${source.storage}'`);
        if (source.kind !== target.kind) throw codedError('ALE_INVALID_INPUT', `convertStorage ${names}: one column is encryptedText, the other encryptedJson`);
        if (source.collection !== target.collection || source.field !== target.field) {
          throw codedError(
            'ALE_INVALID_CONTEXT',
            `convertStorage ${names}: the source binds values to collection "${source.collection}", field "${source.field}", the target to collection "${target.collection}", field "${target.field}"; ` +
              `give the target { collection: "${source.collection}", field: "${source.field}" } so that the moved values still open`,
          );
        }
        return { from: specOf(table, from, source.collection, source.field), to: specOf(table, to, target.collection, target.field) };
      });
      const driver = drizzleDriver(db, table, key, columns.flatMap((c) => [c.from, c.to]), undefined, transact);
      return runJob(db, jobs, driver, options, moveToOtherStorage(pairs));
    },
  };
}

/** The ColumnInfo of an encrypted column of `table`, or a coded error. */
function checkedInfo(table: object, column: unknown, role: string): ColumnInfo {
  const info = columnInfo(column);
  if (!info) throw codedError('ALE_INVALID_INPUT', `convertStorage: the "${role}" column is not an encryptedText or encryptedJson column`);
  try {
    keyOf(table, column);
  } catch {
    throw codedError('ALE_INVALID_INPUT', `convertStorage: the "${role}" column does not belong to the table`);
  }
  return info;
}

/** PostgreSQL and MySQL drivers, and SQLite behind sqlite-proxy, run them asynchronously. */
export const asyncTransact: Transact = async (db, write, updates) => {
  await db.transaction(async (tx: AnyDb) => {
    for (const u of updates) await write(tx, u);
  });
};

/**
 * SQLite: better-sqlite3 and bun:sqlite run transactions synchronously;
 * node:sqlite behind drizzle-orm/sqlite-proxy (an `async` database) does not.
 */
export const sqliteTransact: Transact = async (db, write, updates) => {
  if (db.resultKind === 'async') return asyncTransact(db, write, updates);
  db.transaction((tx: AnyDb) => {
    for (const u of updates) write(tx, u).run();
  });
};
