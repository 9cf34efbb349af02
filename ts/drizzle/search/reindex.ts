// reindexSearch: writes each row's search tokens again from its decrypted
// text, under the primary key of the index column's ring, batch by batch,
// resumably, with `workers` on PostgreSQL and MySQL. It builds the index of
// rows written before the column existed, and finishes an online rotation
// of the search key: while it runs, a condition looks up the tokens of
// every key of the ring (searcher.ts), so queries stay exact throughout.
import type { Column, Table } from 'drizzle-orm';
import { codedError } from '../../shared/errors.js';
import { cellSpec, drizzleDriver, type BatchOptions } from '../batch.js';
import type { Transact } from '../transactions.js';
import { atColumn } from '../failures.js';
import type { JobTableSpec } from '../jobs/table.js';
import { runJob } from '../leases.js';
import { loadingTenants, type Cell, type Plan, type RowUpdate } from '../operations.js';
import { columnInfo, indexColumnOf } from '../probe.js';
import { bytesOnly, textOnly } from '../storage.js';

/** One index column (search or range) and the encrypted column it indexes. */
export interface SearchIndexPair {
  /** The encryptedText column: its values are decrypted to make the tokens. */
  source: Column;
  /** Its searchIndexColumn, with the same collection and field. */
  index: Column;
}

export interface ReindexOptions extends Omit<BatchOptions, 'keyRing'> {
  /** The table to walk. */
  table: Table;
  /** Its primary-key column: rows are visited in its order. */
  key: Column;
  /** The search index columns to write, each with its source. */
  columns: SearchIndexPair[];
}

/** reindexSearch for one dialect, given how it runs a transaction. */
export function searchReindexer(transact: Transact, jobs: JobTableSpec | undefined) {
  /**
   * Writes the search tokens of every row whose index column does not hold
   * its text's tokens under the primary key (a NULL text gets a NULL
   * index), by compare-and-set on both cells: a row the application
   * changed since it was read is left as the application wrote it.
   * Idempotent; done after two runs that report `written: 0` (a row read
   * before the first and saved after writes its old index back). Rows of a shredded
   * tenant are skipped. Rows still holding plaintext fail: run
   * migratePlaintext first.
   */
  return async function reindexSearch(db: unknown, options: ReindexOptions) {
    const what = 'reindexSearch';
    if (!Array.isArray(options?.columns) || options.columns.length === 0) throw codedError('ALE_INVALID_INPUT', `${what}: options.columns must list at least one { source, index } pair`);
    if (typeof options.tenant !== 'string' && !options.tenant?.column) {
      throw codedError('ALE_INVALID_CONTEXT', 'options.tenant must be a tenant id, or { column } naming the column that holds it');
    }
    const pairs = options.columns.map((pair) => {
      const { source, index } = pair ?? {};
      const spec = cellSpec(what, options.table, source);
      const { codec, sql } = indexColumnOf(index, what);
      const kind = columnInfo(source)?.kind;
      if (kind !== codec.source) {
        throw codedError('ALE_INVALID_INPUT', `${what}: column "${spec.column}" holds ${kind}, and the index "${codec.column}" indexes ${codec.source}: a search index is kept for an encryptedText column, a range index for the encrypted column of its type`);
      }
      if (codec.collection !== spec.collection || codec.field !== spec.field) {
        throw codedError(
          'ALE_INVALID_CONTEXT',
          `${what}: the index "${codec.column}" is bound to collection "${codec.collection}", field "${codec.field}", its source "${spec.column}" to collection "${spec.collection}", field "${spec.field}"; give the index the source's`,
        );
      }
      return { spec, codec, sql, stores: [columnInfo(source)?.keys, codec.keys], where: { table: spec.table, column: codec.column, collection: codec.collection } };
    });
    // Range columns with a token table hold no words in a FULLTEXT index.
    const kinds = { search: pairs.some((p) => p.codec.source === 'text'), range: pairs.some((p) => p.codec.source !== 'text' && p.codec.tokenTable === undefined) };
    if (kinds.search || kinds.range) for (const check of new Set(pairs.map((p) => p.sql.serverCheck))) await check?.(db, kinds);
    // The tenant key stores of the columns: each batch's tenants are loaded in them first.
    const stores = [...new Set(pairs.flatMap((p) => p.stores))].filter((k) => k !== undefined);
    let driver = drizzleDriver(db, options.table, options.key, options.columns.flatMap((c) => [c.source, c.index]), options.tenant, transact);
    if (stores.length > 0) driver = loadingTenants(driver, async (t) => void (await Promise.all(stores.map((k) => k.load(t)))));
    const plan: Plan = (row, progress) => {
      const updates: RowUpdate[] = [];
      pairs.forEach(({ spec, codec, sql, stores: own, where }, p) => {
        const [from, to] = [2 * p, 2 * p + 1];
        // A shredded tenant's values open no more, and its tokens match nothing: nothing to write.
        if (own.some((k) => k?.isShredded(row.tenant as string))) {
          progress.skipped++;
          return;
        }
        const cell = row.cells[from];
        const stored = row.cells[to] === null ? null : sql.read(row.cells[to]);
        const t = row.tenant as string;
        // A value that does not open, or that its column does not read, is its source column's failure; the tokens are the index column's.
        const text =
          cell === null
            ? null
            : atColumn({ ...where, column: spec.column, rowKey: row.key }, () => {
                const opened = spec.storage === 'binary' ? spec.sealer.decryptBinary(bytesOnly(cell), t, spec.collection, spec.field) : spec.sealer.decrypt(textOnly(cell), t, spec.collection, spec.field);
                codec.checkSource(opened, spec.column);
                return opened;
              });
        const next = text === null ? null : atColumn({ ...where, rowKey: row.key }, () => sql.store(codec.tokensOfText(text, t), codec));
        if (next === stored) {
          if (cell === null) progress.nulls++;
          else progress.skipped++;
          return;
        }
        updates.push({ key: row.key, set: [[to, next]], expect: [[from, cell], [to, stored as Cell]] });
      });
      return updates;
    };
    plan.operation = what;
    return runJob(db, jobs, driver, options, plan);
  };
}
