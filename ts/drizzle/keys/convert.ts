// The conversion to tenant keys: every value of a table's `keys` columns
// that is not under its tenant's active data key (a v1 value of the
// process-wide ring, or a v2 value under a decrypt-only key) is sealed again
// under it, and the blind indexes and search tokens beside them are
// recomputed under the tenant's index key. It runs on the batched, resumable loop of
// migratePlaintext and rotateKeys.
import * as native from '../../../index.js';
import { getTableName, type Column, type Table } from 'drizzle-orm';
import { codedError } from '../../shared/errors.js';
import { cellSpec, drizzleDriver, type ColumnSpec } from '../batch.js';
import type { Transact } from '../transactions.js';
import { atColumn } from '../failures.js';
import type { JobTableSpec } from '../jobs/table.js';
import { runJob, type LeaseOptions } from '../leases.js';
import { loadingTenants, type Cell, type LoopOptions, type Plan, type Progress, type RowUpdate } from '../operations.js';
import { codecOf, columnInfo, searchColumn, type SearchColumn } from '../probe.js';
import { bytesOnly, textOnly, type Storage } from '../storage.js';
import type { TenantKeys } from './store.js';

/** A blind-index or search index column and the encrypted column whose plaintext it indexes. */
export interface IndexSpec {
  /** A blindIndexColumn or searchIndexColumn with `keys`. */
  index: Column;
  /** One of the `columns` being converted. */
  source: Column;
}

export interface TenantConversionOptions extends LoopOptions {
  /** Run as one of several workers (PostgreSQL, MySQL/MariaDB): see rotateKeys' `workers`. */
  workers?: LeaseOptions;
  /** The table to walk. */
  table: Table;
  /** Its primary-key column: rows are visited in its order. */
  key: Column;
  /** Tenant of a row: a fixed id, or read from a column of the row. */
  tenant: string | { column: Column };
  /** The store the columns' `keys` option names. */
  keys: TenantKeys;
  /** The encrypted columns (with `keys`) to convert. */
  columns: ColumnSpec[];
  /** Blind-index and search index columns to recompute from their source's plaintext. */
  indexes?: IndexSpec[];
}

interface Cells {
  /** How many of the cells are encrypted columns; the indexes follow them. */
  columns: number;
  storage: Storage[];
  where: { table: string; column: string; collection: string }[];
  context: { collection: string; field: string }[];
  /** For each index: its column's position among the cells, and its source's; `search` for a search index column. */
  indexes: { at: number; source: number; collection: string; field: string; search?: SearchColumn }[];
}

/** Whether `cell` is a v2 value naming `keyId`: nothing to do for it. A malformed value is not, and its decryption says why. */
function underKey(cell: string | Uint8Array, storage: Storage, keyId: string): boolean {
  try {
    return native.envelopeKeyId(storage === 'text' ? textOnly(cell) : bytesOnly(cell)) === keyId;
  } catch {
    return false;
  }
}

function plan(keys: TenantKeys, cells: Cells): Plan {
  const sealer = keys.sealer;
  const planned: Plan = (row, progress) => {
    const t = row.tenant as string;
    if (keys.isShredded(t)) {
      progress.skipped += row.cells.filter((c) => c !== null).length;
      return [];
    }
    const active = keys.activeKeyId(t);
    const plaintexts = new Map<number, string>();
    const plaintextOf = (i: number, cell: string | Uint8Array): string => {
      const known = plaintexts.get(i);
      if (known !== undefined) return known;
      const { collection: c, field: f } = cells.context[i];
      const text = cells.storage[i] === 'binary' ? sealer.decryptBinary(bytesOnly(cell), t, c, f) : sealer.decrypt(textOnly(cell), t, c, f);
      plaintexts.set(i, text);
      return text;
    };
    const updates: RowUpdate[] = [];
    // Index updates first: each expects its source as read, which the source's own update changes.
    for (const { at, source, collection, field, search } of cells.indexes) {
      // A search index's tokens as the driver reads them back, in the form the column writes them.
      const stored = search && row.cells[at] !== null ? search.sql.read(row.cells[at]) : row.cells[at];
      const from = row.cells[source];
      if (from === null) continue;
      // A value that does not open, or that its column does not read, is its source column's failure; the tokens are the index column's.
      const text = atColumn({ ...cells.where[source], rowKey: row.key }, () => {
        const opened = plaintextOf(source, from);
        search?.codec.checkSource(opened, cells.where[source].column);
        return opened;
      });
      const next = atColumn({ ...cells.where[at], rowKey: row.key }, () =>
        search ? search.sql.store(search.codec.tokensOfText(text, t), search.codec) : sealer.blindIndex(text, t, collection, field),
      );
      if (next === stored) progress.skipped++;
      else updates.push({ key: row.key, set: [[at, next]], expect: [[at, stored], [source, from]] });
    }
    cells.storage.slice(0, cells.columns).forEach((storage, i) => {
      const cell = row.cells[i];
      if (cell === null) {
        progress.nulls++;
        return;
      }
      if (underKey(cell, storage, active)) {
        progress.skipped++;
        return;
      }
      const { collection: c, field: f } = cells.context[i];
      const next: Cell = atColumn({ ...cells.where[i], rowKey: row.key }, () => {
        const text = plaintextOf(i, cell);
        return storage === 'binary' ? sealer.encryptBinary(text, t, c, f) : sealer.encrypt(text, t, c, f);
      });
      updates.push({ key: row.key, set: [[i, next]], expect: [[i, cell]] });
    });
    return updates;
  };
  // a job of several workers is bound to the operation (leases.ts)
  planned.operation = 'convertToTenantKeys';
  return planned;
}

/** A column converted under a store that is not its own would no longer open through it. */
const notThisStore = (name: string) =>
  codedError('ALE_INVALID_INPUT', `convertToTenantKeys: column "${name}" does not have keys: options.keys; give it that store first, so that it reads what the conversion writes`);

/** convertToTenantKeys for one dialect, given how it runs a transaction. */
export function tenantConversion(transact: Transact, jobs: JobTableSpec | undefined) {
  /**
   * Moves every value of `columns` under its tenant's active data key, and
   * recomputes `indexes` under the tenant's index key, batch by batch, each
   * batch in a transaction, by compare-and-set. Idempotent and safe to kill
   * and rerun: a value already under the active key is skipped. Rows of a
   * shredded tenant are skipped. Run it after adding `keys` to the columns,
   * and after each rotate(). Done after two runs that report `written: 0`:
   * a row read before the first and saved after writes its old index back.
   */
  return async function convertToTenantKeys(db: unknown, options: TenantConversionOptions): Promise<Progress> {
    const { table, key, columns, keys } = options;
    const indexes = options.indexes ?? [];
    if (!Array.isArray(columns) || columns.length === 0) throw codedError('ALE_INVALID_INPUT', 'convertToTenantKeys: options.columns must list at least one encrypted column');
    if (typeof options.tenant !== 'string' && !options.tenant?.column) {
      throw codedError('ALE_INVALID_CONTEXT', 'options.tenant must be a tenant id, or { column } naming the column that holds it');
    }
    const tableName = getTableName(table as never);
    const cells: Cells = { columns: columns.length, storage: [], where: [], context: [], indexes: [] };
    for (const spec of columns) {
      const cell = cellSpec('convertToTenantKeys', table, spec?.column, spec?.collection, spec?.field);
      if (columnInfo(spec.column)?.keys !== keys) throw notThisStore(cell.column);
      cells.storage.push(cell.storage);
      cells.where.push({ table: tableName, column: cell.column, collection: cell.collection });
      cells.context.push({ collection: cell.collection, field: cell.field });
    }
    indexes.forEach(({ index, source }, j) => {
      const search = searchColumn(index);
      const codec = search?.codec ?? codecOf(index);
      // An index of the wrong kind for its source would fail part-way, after some batches are written.
      const kind = columnInfo(source)?.kind;
      if (search !== undefined && kind !== search.codec.source) {
        throw codedError('ALE_INVALID_INPUT', `convertToTenantKeys: the index "${search.codec.column}" indexes ${search.codec.source}, and its source holds ${kind}`);
      }
      if (codec.keys !== keys) throw notThisStore((index as { name: string }).name);
      const at = columns.length + j;
      const from = columns.findIndex((c) => c.column === source);
      if (from < 0) throw codedError('ALE_INVALID_INPUT', `convertToTenantKeys: the source of index "${(index as { name: string }).name}" must be one of options.columns`);
      // A search or range index paired with another column would be filled with that column's tokens, and its searches would miss every row.
      // Not a blind index: one may hash a value under a field of its own (a derived value), and its lookups use that same field.
      const bound = cells.context[from];
      if (search !== undefined && (bound.collection !== codec.collection || bound.field !== codec.field)) {
        throw codedError(
          'ALE_INVALID_CONTEXT',
          `convertToTenantKeys: the index "${search.codec.column}" is bound to collection "${codec.collection}", field "${codec.field}", its source to collection "${bound.collection}", field "${bound.field}"; pair it with its own source`,
        );
      }
      cells.storage.push('text');
      cells.where.push({ table: tableName, column: (index as { name: string }).name, collection: codec.collection });
      cells.context.push({ collection: codec.collection, field: codec.field });
      cells.indexes.push({ at, source: from, collection: codec.collection, field: codec.field, search });
    });
    const driver = drizzleDriver(db, table, key, [...columns.map((c) => c.column), ...indexes.map((i) => i.index)], options.tenant, transact);
    return runJob(db, jobs, loadingTenants(driver, (t) => keys.load(t)), options, plan(keys, cells));
  };
}
