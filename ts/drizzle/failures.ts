// Failures tied to a column, and to a row: AleColumnError says where a bad
// value sits, and readWithFailures() turns a read's failed cells into a list
// instead of one thrown error for the whole result.
import type { ColumnError, ReadFailure } from './errors.js';
import { startInScope } from './scope.js';
import { state, type FailureScope } from './state.js';

export const AleColumnError = state.AleColumnError;
export type AleColumnError = ColumnError;
export const AleReadFailure = state.AleReadFailure;
export type AleReadFailure = ReadFailure;

/** Where a failure happened, as AleColumnError reports it. */
export type Where = ConstructorParameters<typeof ColumnError>[1];

/**
 * Runs `op`; a failure becomes an AleColumnError saying where, and for which
 * `tenant` when one is given (an AleColumnError passes through as it is).
 * The tenant is added on the failure path only: a call that succeeds
 * allocates nothing for it.
 */
export function atColumn<T>(where: Where, op: () => T, tenant?: string): T {
  try {
    return op();
  } catch (e) {
    throw columnFailure(e, where, tenant);
  }
}

/**
 * What atColumn() throws for `e`, for a hot path that runs its operation
 * inline rather than in a closure made for each call.
 */
export function columnFailure(e: unknown, where: Where, tenant?: string): unknown {
  if (e instanceof AleColumnError) return e;
  return new AleColumnError(e as Error & { code?: string }, tenant === undefined ? where : { ...where, tenant });
}

/**
 * A read's failure: inside readWithFailures() or a page's batch, a column's
 * error becomes an AleReadFailure cell, counted in the scope (`parsed`: the
 * value opened, and its text is not the column's); anything else is thrown.
 */
export function failedRead(e: unknown, parsed = false): ReadFailure {
  const scope = state.failureScope.getStore();
  if (scope === undefined || !(e instanceof AleColumnError)) throw e;
  scope.failed++;
  return new AleReadFailure(e, parsed);
}

/**
 * Runs `query` (started at once if it is a lazy Drizzle query) in the scope
 * where a cell that fails to decrypt becomes an AleReadFailure, counted in
 * `scope`.
 */
export function inFailureScope<T>(query: () => T, scope: FailureScope): Promise<Awaited<T>> {
  return state.failureScope.run(scope, () => startInScope(query));
}

export interface RowFailure {
  /** The row's key (the `key` property given to readWithFailures), when known. */
  key: unknown;
  column: string;
  collection: string;
  code: string;
  message: string;
}

/**
 * Runs a read in which a cell that fails to decrypt (a truncated or garbled
 * envelope, a moved value) does not abort the whole result: the cell becomes
 * `null` and the failure is reported with the row's key, in a joined row or
 * a relational query's nested rows too; a row that is a failed cell itself
 * (a query mapped to one cell a row) comes back null. The key's value goes
 * into the message: name a column that is not secret, such as the primary
 * key.
 *
 *   const { rows, failures } = await readWithFailures(() => db.select().from(users), { key: 'id' });
 */
export async function readWithFailures<Row extends Record<string, unknown>>(
  query: () => PromiseLike<Row[]> | Row[],
  options: { key?: string; table?: string } = {},
): Promise<{ rows: Row[]; failures: RowFailure[] }> {
  const scope = { failed: 0 };
  const rows = await inFailureScope(query, scope);
  const failures: RowFailure[] = [];
  rows.forEach((row, i) => {
    for (const { failure, holder, name } of failedCells(row, scope.failed === 0 ? 1 : FAILURE_DEPTH)) {
      failures.push(rowFailure(failure, [holder, row], options));
      // A row that is a failure itself (a query mapped to one cell a row) is nulled in the result.
      if (holder === undefined) (rows as unknown[])[i] = null;
      else holder[name] = null;
    }
  });
  return { rows, failures };
}

/**
 * The report of `failed`: with `options.key`, the key of the first of
 * `holders` that has one (the objects that hold the cell: the row, a joined
 * table's part of it, a nested row), in the message too, with
 * `options.table`.
 */
export function rowFailure(failed: ReadFailure, holders: unknown[], options: { key?: string; table?: string }): RowFailure {
  const e = failed.error;
  const { key: name } = options;
  const keyed = name ? holders.find((h): h is Record<string, unknown> => typeof h === 'object' && h !== null && Object.hasOwn(h, name)) : undefined;
  const key = keyed?.[name!];
  return { key, column: e.column, collection: e.collection, code: e.code, message: new AleColumnError(e.cause as Error, { ...e, table: options.table, rowKey: key }).message };
}

/**
 * The codes that belong to one stored value: a failed tag check, a cell that
 * is no envelope or one of a version this build cannot read, one over the
 * ring's maximum length, and JSON that does not parse; and whatever a value
 * that opened fails with when its text is read (ReadFailure.parsed). Any
 * other failure (no tenant in scope, keys that did not load) would fail
 * every row alike.
 */
const ONE_VALUE = new Set(['ALE_AUTH_FAILED', 'ALE_MALFORMED_ENVELOPE', 'ALE_UNSUPPORTED_VERSION', 'ALE_ENVELOPE_TOO_LARGE', 'ALE_INVALID_JSON']);

/**
 * The first failed cell of a candidate row read in `scope`, which a page
 * (searchPage, orderedPage) leaves out and reports: its own columns always
 * (a fetch may have read them in another scope), deeper only where the
 * scope counted a failure, since a walk reads every value below. A failure
 * that is not one value's is thrown, as it fails any read, rather than
 * turned into an empty page.
 */
export function candidateFailure(row: unknown, scope: FailureScope): FailedCell | undefined {
  const [failed] = failedCells(row, scope.failed === 0 ? 1 : FAILURE_DEPTH, 1);
  const error = failed?.failure.error;
  if (error !== undefined && !failed?.failure.parsed && !ONE_VALUE.has(error.code)) throw error;
  return failed;
}

/**
 * The rows a page read with a cell that did not open, left out of it, and
 * their reports: one a row with `key`, since a page that reads a row more
 * than once (orderedPage's parts and samples) reports it once; without it,
 * one a column, code and message, which say nothing that tells two rows apart.
 */
export class PageFailures {
  readonly #rows = new WeakSet<object>();
  readonly #reports = new Map<string, RowFailure>();

  /** Notes the failed rows of `rows`, read in `scope` (candidateFailure throws what is not one value's). */
  note(rows: unknown[], scope: FailureScope, options: { key?: string; table?: string }): void {
    for (const row of rows) {
      const cell = candidateFailure(row, scope);
      if (cell === undefined) continue;
      this.#rows.add(row as object);
      const report = rowFailure(cell.failure, [row, cell.holder], options);
      const id = `${report.column}\0${report.code}\0${report.key === undefined ? report.message : String(report.key)}`;
      if (!this.#reports.has(id)) this.#reports.set(id, report);
    }
  }

  has(row: unknown): boolean {
    return this.#rows.has(row as object);
  }

  list(): RowFailure[] {
    return [...this.#reports.values()];
  }
}

/** How deep a read's rows are looked into for failed cells: a joined row, a relational query's nested rows and their columns. */
export const FAILURE_DEPTH = 4;

/** A failed cell: the failure, the object that holds it and its name there (none for a row that is a failure itself). */
export type FailedCell = { failure: ReadFailure; holder: Record<string, unknown>; name: string } | { failure: ReadFailure; holder: undefined; name: undefined };

/**
 * The failed cells in `row`, looked for `levels` deep (1: its own
 * columns), at most `most` of them: in a joined table's part, a relational
 * query's nested rows. Not into a String object (a StoredIndex, whose
 * values are its characters), byte arrays or dates.
 */
export function failedCells(row: unknown, levels: number, most = Infinity): FailedCell[] {
  if (row instanceof AleReadFailure) return [{ failure: row, holder: undefined, name: undefined }];
  const found: FailedCell[] = [];
  const walk = (value: unknown, left: number): void => {
    if (left === 0 || value === null || typeof value !== 'object' || value instanceof String || ArrayBuffer.isView(value) || value instanceof Date) return;
    const holder = value as Record<string, unknown>;
    for (const name of Object.keys(holder)) {
      if (found.length === most) return;
      const inner = holder[name];
      if (inner instanceof AleReadFailure) found.push({ failure: inner, holder, name });
      else walk(inner, left - 1);
    }
  };
  walk(row, levels);
  return found;
}
