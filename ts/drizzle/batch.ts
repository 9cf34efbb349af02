// Builds a BatchDriver from Drizzle's dialect-neutral query builder. Values
// are read and written as raw SQL expressions, so the encrypted columns'
// own mappers (which would encrypt or decrypt) stay out of the way.
import { and, asc, eq, getTableColumns, getTableName, gt, isNull, lte, sql, type Column, type SQL, type Table } from 'drizzle-orm';
import type { KeyRing } from '../../index.js';
import { codedError } from '../shared/errors.js';
import type { JobTableSpec } from './jobs/table.js';
import { runJob, type LeaseOptions } from './leases.js';
import { eachCell, encryptPlaintext, loadingTenants, moveToOtherStorage, reencryptUnderPrimary, requireRing } from './operations.js';
import type { BatchDriver, Cell, CellSpec, LoopOptions, Progress } from './operations.js';
import { columnInfo, searchColumn } from './probe.js';
import type { Transact } from './transactions.js';
import { checkKeyColumn, exactKeys, nullKey, type KeyColumn } from './batch-keys.js';
import { withoutParameters } from './write-failure.js';

type AnyColumn = Parameters<typeof asc>[0];
// The query builders differ per dialect; these helpers only chain methods
// every dialect has, so they take the builder loosely typed.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = any;

export function keyOf(table: object, column: unknown): string {
  const key = propertyOf(table, column);
  if (key === undefined) throw codedError('ALE_INVALID_INPUT', `column "${nameOf(column)}" does not belong to table "${tableName(table)}"`);
  return key;
}

/** The property of `table`'s columns that holds `column`; undefined when it is none of them. */
function propertyOf(table: object, column: unknown): string | undefined {
  tableName(table);
  for (const [key, value] of Object.entries(getTableColumns(table as never))) if (value === column) return key;
  return undefined;
}

/** A column's SQL name, for messages; whatever was passed when it is not a column. */
function nameOf(column: unknown): string {
  const name = (column as { name?: unknown })?.name;
  return typeof name === 'string' ? name : String(column);
}

/** The table's SQL name, or a coded error when `table` is not a Drizzle table. */
function tableName(table: unknown): string {
  try {
    const name = getTableName(table as never);
    if (typeof name === 'string') return name;
  } catch {
    // not a table: below
  }
  throw codedError('ALE_INVALID_INPUT', 'options.table must be a Drizzle table (sqliteTable, pgTable or mysqlTable)');
}

/**
 * One encrypted column of `table` as a batch operation (`what`) writes it:
 * its AAD and storage from the column itself, and the ring it seals with.
 * Anything that is not this package's encryptedText/encryptedJson column of
 * that table is refused before a row is read: encrypting, say, a tenant-id
 * column would break every query on it. A `collection` or `field` given
 * must be the column's own, since values written under any other AAD would
 * be unreadable, row after row.
 */
export function cellSpec(what: string, table: Table, column: Column, collection?: string, field?: string): CellSpec {
  const name = nameOf(column);
  const info = columnInfo(column);
  if (!info) {
    throw codedError(
      'ALE_INVALID_INPUT',
      `${what}: column "${name}" is not an encryptedText or encryptedJson column of @sveltycms/ale, so it is left as it is; list only encrypted columns`,
    );
  }
  keyOf(table, column);
  if ((collection !== undefined && collection !== info.collection) || (field !== undefined && field !== info.field)) {
    throw codedError(
      'ALE_INVALID_CONTEXT',
      `${what}: column "${name}" reads collection "${info.collection}", field "${info.field}", but was given collection "${collection ?? info.collection}", field "${field ?? info.field}"; ` +
        "leave both out to take the column's own",
    );
  }
  return { table: tableName(table), column: name, collection: info.collection, field: info.field, storage: info.storage, sealer: info.sealer, tenantKeys: info.keys !== undefined, json: info.kind === 'json', range: info.kind === 'text' || info.kind === 'json' ? undefined : info.kind };
}

/**
 * Reads `columns` of `table` raw, by `key` order, with each row's tenant
 * (none when `tenant` is undefined), and writes RowUpdates by compare-and-set;
 * a write the database fails is ALE_BATCH_WRITE_FAILED.
 */
export function drizzleDriver(db: AnyDb, table: object, key: unknown, columns: unknown[], tenant: BatchOptions['tenant'] | undefined, transact: Transact): BatchDriver {
  for (const c of columns) tenantAgrees(c, tenant);
  const keyCol = key as AnyColumn;
  const cols = columns.map((c) => c as AnyColumn);
  const names = columns.map((c) => keyOf(table, c));
  const tenantCol = tenant === undefined || typeof tenant === 'string' ? null : (tenant.column as AnyColumn);
  // Any other key or tenant column would fail in the key checks or the SQL, uncoded.
  for (const [option, column] of [['key', keyCol], ['tenant.column', tenantCol]] as const) {
    if (column !== null && propertyOf(table, column) === undefined) throw codedError('ALE_INVALID_INPUT', `options.${option} must be a column of table "${tableName(table)}"`);
  }
  const fixedTenant = typeof tenant === 'string' ? tenant : undefined;
  const tenantOf = (r: Record<string, unknown>): string => {
    if (r.tenant === null || r.tenant === undefined) throw invalidTenant(`row ${String(r.key)}: the tenant column is NULL, so its values cannot be bound to a tenant`);
    // A char(n) column pads its values: sealed under "acme      ", no read under "acme" would open them.
    if (typeof r.tenant === 'string' && r.tenant !== r.tenant.trimEnd()) {
      throw invalidTenant(`row ${String(r.key)}: the tenant column reads ${JSON.stringify(r.tenant)}, with trailing spaces (a char(n) column pads its values), which withTenant's tenant would not match; give the column a varchar or text type`);
    }
    return String(r.tenant);
  };
  // A NULL key the checks let through (SQLite lets a primary key that is
  // not an INTEGER one hold them, and sorts them first) is refused too.
  const rowKey = (r: Record<string, unknown>): unknown => {
    if (r.key === null || r.key === undefined) throw nullKey((key as { name?: string }).name);
    return r.key;
  };
  // The key as the driver gives it too: a BIGINT it rounded to a JS number
  // would look exact once the column made it a bigint (exactKeys). Under a
  // name of its own: a proxy that reads rows as objects keeps one column of
  // each name.
  const selection: Record<string, SQL | SQL.Aliased | AnyColumn> = { key: keyCol, rawKey: sql`${keyCol}`.as('ale_raw_key') };
  cols.forEach((c, i) => (selection[`c${i}`] = sql<Cell>`${c}`));
  if (tenantCol) selection.tenant = sql<string>`${tenantCol}`;
  const value = (v: Cell) => (v === null ? sql`null` : sql`${v}`);
  const { run, same } = transact;
  // The key column's checks that read the table (batch-keys.ts), once.
  let keyCheck: Promise<void> | undefined;
  const keyChecked = () => (keyCheck ??= checkKeyColumn(db, table, keyCol));
  // Each fetched row's tenant as read: its write expects it still, since its values were bound to it (a row moved to
  // another tenant meanwhile would hold values sealed for the old one).
  let tenantsRead = new Map<unknown, Cell>();

  // A failed write's error would list its parameters: coded instead (write-failure.ts).
  return withoutParameters({
    async fetch(afterKey, limit, upTo) {
      await keyChecked();
      const rows: Record<string, unknown>[] = await db
        .select(selection)
        .from(table)
        .where(and(afterKey === undefined ? undefined : gt(keyCol, afterKey), upTo === undefined ? undefined : lte(keyCol, upTo)))
        .orderBy(asc(keyCol))
        .limit(limit);
      const fetched = rows.map((r) => ({
        key: rowKey(r),
        tenant: tenantCol ? tenantOf(r) : fixedTenant,
        cells: cols.map((_, i) => (r[`c${i}`] ?? null) as Cell),
      }));
      exactKeys(afterKey, fetched, rows, keyCol as KeyColumn);
      if (tenantCol) tenantsRead = new Map(fetched.map((f, i) => [f.key, rows[i].tenant as Cell]));
      return fetched;
    },
    apply(updates) {
      return run(
        db,
        (tx, u) =>
          tx
            .update(table)
            .set(Object.fromEntries(u.set.map(([i, v]) => [names[i], value(v)])))
            .where(
              and(
                eq(keyCol, u.key),
                ...u.expect.map(([i, v]) => (v === null ? isNull(cols[i]) : same(cols[i], v))),
                tenantCol ? same(tenantCol, tenantsRead.get(u.key) as Cell) : undefined,
              ),
            ),
        updates,
      );
    },
    async keyAt(afterKey, offset) {
      await keyChecked();
      const rows = await db
        .select({ key: keyCol, rawKey: selection.rawKey })
        .from(table)
        .where(afterKey === undefined ? undefined : gt(keyCol, afterKey))
        .orderBy(asc(keyCol))
        .limit(1)
        .offset(offset);
      // A bound read inexactly would cut the same range again and again.
      exactKeys(afterKey, rows, rows, keyCol as KeyColumn);
      return rows[0]?.key;
    },
  });
}

/**
 * A column with a fixed tenant binds every value to it, whatever the row
 * says; a batch that bound its rows to another tenant would write values no
 * read opens (migratePlaintext counted them written, and a rerun found only
 * envelopes), or tokens no query looks up (an index column), so it is
 * refused before a row is read.
 */
function tenantAgrees(column: unknown, tenant: BatchOptions['tenant'] | undefined): void {
  const fixed = columnInfo(column)?.tenant ?? searchColumn(column)?.codec.fixedTenant;
  if (fixed === undefined || tenant === undefined || tenant === fixed) return;
  throw invalidTenant(
    `column "${nameOf(column)}" binds every value to tenant ${JSON.stringify(fixed)}, but the batch was given ${typeof tenant === 'string' ? `tenant ${JSON.stringify(tenant)}` : 'a tenant column'}, ` +
      `under which no read of the column would open them (nor a query find its tokens); give tenant: ${JSON.stringify(fixed)}`,
  );
}

function invalidTenant(message: string): Error {
  return codedError('ALE_INVALID_CONTEXT', message);
}

/** One encrypted column to migrate or rotate. */
export interface ColumnSpec {
  /** An encryptedText/encryptedJson column of the table: its collection, field and `storage` are followed. */
  column: Column;
  /** The column's own collection; optional, and refused when it differs. */
  collection?: string;
  /** The column's own field; optional, and refused when it differs. */
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
  tenant: string | { column: Column };
  /**
   * migratePlaintext: the ring to seal under instead of each column's own
   * (its keyRing, or the process-wide ring); refused for a column with
   * `keys`. rotateKeys: `[primary, ...previous]`, required.
   */
  keyRing?: KeyRing;
}

export interface MigrateOptions extends BatchOptions {
  /** The table to walk. */
  table: Table;
  /** Its primary-key column: rows are visited in its order. */
  key: Column;
  /** The encrypted columns to process. */
  columns: ColumnSpec[];
}

/** rotateKeys' options: the ring to rotate to, `[primary, ...previous]`, is required. */
export interface RotateOptions extends MigrateOptions {
  keyRing: KeyRing;
}

/** One column to move into the other storage: from `from` into `to`, two encrypted columns of the table. */
export interface StoragePair {
  /** The column that holds the envelopes now (text or binary storage). */
  from: Column;
  /** An empty column of the other storage, with the same collection and field (so the AAD matches). */
  to: Column;
}

export interface ConvertOptions extends LoopOptions {
  /** As BatchOptions.workers. */
  workers?: LeaseOptions;
  /** The table to walk. */
  table: Table;
  /** Its primary-key column: rows are visited in its order. */
  key: Column;
  /** The columns to move. */
  columns: StoragePair[];
}

/** migratePlaintext, rotateKeys and convertStorage for one dialect, given how it runs a transaction. */
export function batchHelpers(transact: Transact, jobs: JobTableSpec | undefined) {
  const driverFor = (db: AnyDb, o: MigrateOptions) => {
    if (typeof o.tenant !== 'string' && !o.tenant?.column) {
      throw invalidTenant('options.tenant must be a tenant id, or { column } naming the column that holds it');
    }
    return drizzleDriver(db, o.table, o.key, o.columns.map((c) => c.column), o.tenant, transact);
  };
  const specsOf = (what: string, o: MigrateOptions) => {
    if (!Array.isArray(o?.columns) || o.columns.length === 0) throw codedError('ALE_INVALID_INPUT', `${what}: options.columns must list at least one encrypted column`);
    tableName(o.table);
    return o.columns.map((c) => cellSpec(what, o.table, c?.column, c?.collection, c?.field));
  };
  return {
    /**
     * Encrypts the plaintext values of `columns`, batch by batch, each batch in
     * a transaction, with each column's own ring: a column with `keys` under
     * its tenant's active data key (the tenants of each batch are loaded
     * first), any other under its keyRing or the process-wide ring.
     * Envelopes are never touched, so it is idempotent; it can be killed and
     * rerun at any point. A binary column gets binary envelopes.
     */
    async migratePlaintext(db: AnyDb, options: MigrateOptions): Promise<Progress> {
      const specs = specsOf('migratePlaintext', options);
      const keyed = specs.find((s) => s.tenantKeys);
      if (keyed && options.keyRing !== undefined) {
        throw codedError('ALE_INVALID_INPUT', `migratePlaintext: column "${keyed.column}" has keys, so its values are sealed under each tenant's data key; leave out options.keyRing`);
      }
      const stores = [...new Set(options.columns.map((c) => columnInfo(c.column)?.keys).filter((k) => k !== undefined))];
      let driver = driverFor(db, options);
      if (stores.length > 0) driver = loadingTenants(driver, async (t) => void (await Promise.all(stores.map((k) => k.load(t)))));
      return runJob(db, jobs, driver, options, eachCell(specs, encryptPlaintext(options.keyRing)));
    },
    /**
     * Re-encrypts under the primary key every value that only a previous key
     * of `keyRing` opens. Same batching and resume guarantees as
     * migratePlaintext. A column with `keys` is refused: its tenant keys
     * rotate with keys.rotate(), and convertToTenantKeys moves its values.
     */
    async rotateKeys(db: AnyDb, options: RotateOptions): Promise<Progress> {
      const specs = specsOf('rotateKeys', options);
      const keyed = specs.find((s) => s.tenantKeys);
      if (keyed) {
        throw codedError(
          'ALE_INVALID_INPUT',
          `rotateKeys: column "${keyed.column}" has keys: rotate a tenant's data key with keys.rotate(tenant), then move its values under the new key with convertToTenantKeys`,
        );
      }
      const ring = requireRing(options.keyRing, 'rotateKeys');
      const driver = driverFor(db, options);
      return runJob(db, jobs, driver, options, eachCell(specs, reencryptUnderPrimary(ring)));
    },
    /**
     * Moves each `from` column's envelopes into its `to` column, of the other
     * storage (text into binary, or back), and sets `from` NULL, one row at a
     * time by compare-and-set, one transaction per batch. Needs no key and
     * no tenant: nothing is decrypted (envelopeToBytes / envelopeFromBytes).
     * Idempotent and safe to kill and rerun: a moved row has a NULL source.
     * A row whose target already holds a value is left alone (`skipped`).
     * A v1 value bound for a column with `keys` is refused: it is under the
     * process-wide key, and convertToTenantKeys moves it under the tenant's.
     * Done when a run reports `written: 0, skipped: 0`; then drop `from`.
     */
    async convertStorage(db: AnyDb, options: ConvertOptions): Promise<Progress> {
      const { table, key, columns } = options;
      if (!Array.isArray(columns) || columns.length === 0) throw codedError('ALE_INVALID_INPUT', 'convertStorage: options.columns must list at least one { from, to } pair');
      const pairs = columns.map((pair) => {
        const { from, to } = pair ?? {};
        const [source, target] = [cellSpec('convertStorage', table, from), cellSpec('convertStorage', table, to)];
        const names = `"${source.column}" → "${target.column}"`;
        if (source.storage === target.storage) throw codedError('ALE_INVALID_INPUT', `convertStorage ${names}: both columns have storage '${source.storage}'`);
        if (columnInfo(from)?.kind !== columnInfo(to)?.kind) throw codedError('ALE_INVALID_INPUT', `convertStorage ${names}: one column is encryptedText, the other encryptedJson`);
        // Nothing is decrypted, so a value opens in the target only under the ring it was sealed with.
        if (source.sealer !== target.sealer) throw codedError('ALE_INVALID_INPUT', `convertStorage ${names}: the columns seal under different keys (keys or keyRing differ); give both the same`);
        if (source.collection !== target.collection || source.field !== target.field) {
          throw codedError(
            'ALE_INVALID_CONTEXT',
            `convertStorage ${names}: the source binds values to collection "${source.collection}", field "${source.field}", the target to collection "${target.collection}", field "${target.field}"; ` +
              `give the target { collection: "${source.collection}", field: "${source.field}" } so that the moved values still open`,
          );
        }
        return { from: source, to: target };
      });
      const driver = drizzleDriver(db, table, key, columns.flatMap((c) => [c.from, c.to]), undefined, transact);
      return runJob(db, jobs, driver, options, moveToOtherStorage(pairs));
    },
  };
}
