// Dialect-independent part of the Drizzle integration: tenant scope, the
// per-column codec that binds values to tenant:collection:field, and the
// batched, resumable loops behind plaintext migration and key rotation.
import { AsyncLocalStorage } from 'node:async_hooks';
import * as native from '../../index.js';
import type { KeyRing } from '../../index.js';
import { parseJson, stringifyJson } from '../shared/json.js';

/** A fixed tenant id, or a synchronous resolver called for every value. */
export type TenantSource = string | (() => string);

export interface EncryptedColumnOptions {
  /** collectionId in the AAD. */
  collection: string;
  /** fieldName in the AAD; defaults to the column name. */
  field?: string;
  /** Fixed tenant or a synchronous resolver; default: the withTenant() scope. */
  tenant?: TenantSource;
  /** Default: the process-wide ring from initKeyRing(). */
  keyRing?: KeyRing;
  /**
   * Read stored values that are not envelopes (`isEnvelope()` is false, the
   * rule migratePlaintext uses) as legacy plaintext instead of failing, count
   * them (see legacyPlaintextReads()) and emit a process warning
   * `ALE_LEGACY_PLAINTEXT` the first time each column serves one. With
   * `{ until }`, the mode ends at that date: later, such a value fails as
   * without the option (`ALE_MALFORMED_ENVELOPE`). Writes are always
   * encrypted. Default: false.
   */
  legacyPlaintext?: boolean | { until: Date | string };
}

/** An Error with an `ALE_*` code and, where known, where the bad value sits. */
class ColumnError extends Error {
  readonly code: string;
  readonly column: string;
  readonly collection: string;
  readonly table?: string;
  readonly rowKey?: unknown;

  constructor(cause: { code?: string; message: string }, where: { column: string; collection: string; table?: string; rowKey?: unknown }) {
    const at = [where.table && `table "${where.table}"`, `column "${where.column}"`, `collection "${where.collection}"`, where.rowKey !== undefined && `row ${JSON.stringify(where.rowKey)}`]
      .filter(Boolean)
      .join(', ');
    super(`${at}: ${cause.message}`, { cause });
    this.name = 'AleColumnError';
    this.code = cause.code ?? 'ALE_INVALID_INPUT';
    this.column = where.column;
    this.collection = where.collection;
    this.table = where.table;
    this.rowKey = where.rowKey;
  }
}

/** A cell that could not be decrypted inside readWithFailures(). */
class ReadFailure {
  constructor(readonly error: ColumnError) {}
}

/**
 * What must exist once per process even when an app loads both the ESM and
 * the CommonJS build: the tenant and failure scopes, the legacy-read
 * counters, and the classes that `instanceof` tests across the two builds.
 * The first build loaded creates it; a change of its shape needs a new key.
 */
interface SharedState {
  tenantScope: AsyncLocalStorage<string>;
  failureScope: AsyncLocalStorage<true>;
  legacyReads: Map<string, number>;
  AleColumnError: typeof ColumnError;
  AleReadFailure: typeof ReadFailure;
}
const state: SharedState = ((globalThis as { [key: symbol]: SharedState })[Symbol.for('@sveltycms/ale/drizzle-state')] ??= {
  tenantScope: new AsyncLocalStorage<string>(),
  failureScope: new AsyncLocalStorage<true>(),
  legacyReads: new Map(),
  AleColumnError: ColumnError,
  AleReadFailure: ReadFailure,
});

export const AleColumnError = state.AleColumnError;
export type AleColumnError = ColumnError;
export const AleReadFailure = state.AleReadFailure;
export type AleReadFailure = ReadFailure;

/** What withTenant() returns for `fn`'s result: a thenable (a lazy query) becomes a Promise of its result. */
export type InScope<T> = T extends PromiseLike<unknown> ? Promise<Awaited<T>> : T;

/**
 * Runs `fn` with `tenantId` as the tenant of every encrypted column that has
 * no `tenant` option. The scope follows `await`, so `fn` may be async.
 *
 * Drizzle queries are lazy: `withTenant(t, () => db.select().from(users))`
 * returns a query that only runs when awaited, after `fn` has returned. So a
 * thenable result is subscribed to inside the scope, which starts the query
 * there, and a promise of its result is returned.
 */
export function withTenant<T>(tenantId: string, fn: () => T): InScope<T> {
  if (typeof tenantId !== 'string' || tenantId === '' || tenantId.includes(':')) {
    throw Object.assign(new Error(`withTenant: the tenant id must be a non-empty string without ':'`), { code: 'ALE_INVALID_CONTEXT' });
  }
  return state.tenantScope.run(tenantId, () => startInScope(fn));
}

/**
 * Calls `fn`; when it returns a thenable (a lazy Drizzle query), subscribes
 * to it right away, so the query starts inside the caller's scope.
 */
function startInScope<T>(fn: () => T): InScope<T> {
  const result = fn();
  if (result !== null && typeof result === 'object' && typeof (result as { then?: unknown }).then === 'function') {
    const thenable = result as unknown as PromiseLike<unknown>;
    return new Promise((resolve, reject) => thenable.then(resolve, reject)) as InScope<T>;
  }
  return result as InScope<T>;
}

/** The tenant of the current withTenant() scope, if any. */
export function currentTenant(): string | undefined {
  return state.tenantScope.getStore();
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
 * `null` and the failure is reported with the row's key.
 *
 *   const { rows, failures } = await readWithFailures(() => db.select().from(users), { key: 'id' });
 */
export async function readWithFailures<Row extends Record<string, unknown>>(
  query: () => PromiseLike<Row[]> | Row[],
  options: { key?: string; table?: string } = {},
): Promise<{ rows: Row[]; failures: RowFailure[] }> {
  const rows = await state.failureScope.run(true, () => startInScope(query));
  const failures: RowFailure[] = [];
  for (const row of rows) {
    for (const [name, value] of Object.entries(row)) {
      if (!(value instanceof AleReadFailure)) continue;
      const e = value.error;
      const key = options.key ? row[options.key] : undefined;
      failures.push({ key, column: e.column, collection: e.collection, code: e.code, message: new AleColumnError(e.cause as Error, { ...e, table: options.table, rowKey: key }).message });
      (row as Record<string, unknown>)[name] = null;
    }
  }
  return { rows, failures };
}

/** How many legacy plaintext values each `collection.field` has read (legacyPlaintext: true). */
export function legacyPlaintextReads(): Record<string, number> {
  return Object.fromEntries(state.legacyReads);
}

/** Until when a column reads legacy plaintext (ms since the epoch), or undefined when it does not. */
function legacyDeadline(option: EncryptedColumnOptions['legacyPlaintext'], column: string): number | undefined {
  if (!option) return undefined;
  if (option === true) return Infinity;
  const until = new Date(option.until).getTime();
  if (Number.isNaN(until)) {
    throw Object.assign(new Error(`encrypted column "${column}": legacyPlaintext.until must be a Date or a date string`), { code: 'ALE_INVALID_INPUT' });
  }
  return until;
}

/** Binds one column's values to tenant:collection:field. */
export interface FieldCodec {
  readonly column: string;
  readonly collection: string;
  readonly field: string;
  tenant(): string;
  /** Encrypts `value`, serialised first by `serialise` when given. */
  encrypt(plaintext: string): string;
  encrypt<T>(value: T, serialise: (value: T) => string): string;
  /** Decrypts `stored`, then parses the plaintext with `parse` when given. */
  decrypt(stored: string): string;
  decrypt<T>(stored: string, parse: (text: string) => T): T;
  blindIndex(value: string): string;
  /** The blind index under every key of the column's ring, primary first (only the primary for the process-wide ring). */
  blindIndexes(value: string): string[];
}

export function fieldCodec(column: string, options: EncryptedColumnOptions): FieldCodec {
  if (!options || typeof options.collection !== 'string') {
    throw Object.assign(new Error(`encrypted column "${column}": options.collection (the collectionId) is required`), { code: 'ALE_INVALID_CONTEXT' });
  }
  const { collection, keyRing } = options;
  const field = options.field ?? column;
  const tenantOption = options.tenant;
  const where = { column, collection };
  const counterKey = `${collection}.${field}`;
  const legacyUntil = legacyDeadline(options.legacyPlaintext, column);

  const tenant = (): string => {
    const t = typeof tenantOption === 'function' ? tenantOption() : (tenantOption ?? state.tenantScope.getStore());
    if (typeof t !== 'string' || t === '') {
      throw new AleColumnError(
        {
          code: 'ALE_INVALID_CONTEXT',
          message:
            'no tenant is in scope, so the value cannot be bound to one. Run the query inside ' +
            'withTenant(tenantId, () => ...), or give the column a tenant: { tenant: "main" } for a ' +
            'single-tenant deployment, or { tenant: () => currentTenantId() }.',
        },
        where,
      );
    }
    return t;
  };
  const wrap = <T>(op: () => T): T => {
    try {
      return op();
    } catch (e) {
      if (e instanceof AleColumnError) throw e;
      throw new AleColumnError(e as Error & { code?: string }, where);
    }
  };
  // One rule for "is this an envelope?": the one migratePlaintext uses.
  const isLegacy = (stored: string) => legacyUntil !== undefined && !native.isEnvelope(stored) && Date.now() < legacyUntil;
  const countLegacy = () => {
    const reads = (state.legacyReads.get(counterKey) ?? 0) + 1;
    state.legacyReads.set(counterKey, reads);
    if (reads === 1) {
      process.emitWarning(
        `column "${column}" (collection "${collection}") served a value that is not an envelope as legacy plaintext. ` +
          'Until migratePlaintext() has encrypted every value and legacyPlaintext is removed, anyone who can write ' +
          'to the table can make this column serve any text. Counts: legacyPlaintextReads().',
        { type: 'AleWarning', code: 'ALE_LEGACY_PLAINTEXT' },
      );
    }
  };

  return {
    column,
    collection,
    field,
    tenant,
    encrypt(value: unknown, serialise?: (value: unknown) => string) {
      const t = tenant();
      return wrap(() => {
        const plaintext = serialise ? serialise(value) : (value as string);
        return keyRing ? keyRing.encrypt(plaintext, t, collection, field) : native.encrypt(plaintext, t, collection, field);
      });
    },
    decrypt: function (stored: string, parse?: (text: string) => unknown) {
      try {
        let text: string;
        if (isLegacy(stored)) {
          countLegacy();
          text = stored;
        } else {
          const t = tenant();
          text = wrap(() => (keyRing ? keyRing.decrypt(stored, t, collection, field) : native.decrypt(stored, t, collection, field)));
        }
        return parse ? wrap(() => parse(text)) : text;
      } catch (e) {
        if (state.failureScope.getStore() && e instanceof AleColumnError) return new AleReadFailure(e);
        throw e;
      }
    } as FieldCodec['decrypt'],
    blindIndex(value) {
      const t = tenant();
      return wrap(() => (keyRing ? keyRing.blindIndex(value, t, collection, field) : native.blindIndex(value, t, collection, field)));
    },
    blindIndexes(value) {
      const t = tenant();
      return wrap(() => (keyRing ? keyRing.blindIndexes(value, t, collection, field) : [native.blindIndex(value, t, collection, field)]));
    },
  };
}

/** JSON through the codec: serialised, then encrypted. JSON errors are coded and quote nothing of the value. */
export function jsonCodec<T>(codec: FieldCodec) {
  return {
    toDriver: (value: T): string => codec.encrypt(value, stringifyJson),
    fromDriver: (stored: string): T => codec.decrypt(stored, parseJson) as T,
  };
}

/** What a migration or rotation has done so far. */
export interface Progress {
  /** Rows read so far. */
  scanned: number;
  /** Values written (encrypted or re-encrypted) so far. */
  written: number;
  /** Values that needed nothing (already envelopes, or already under the primary key). */
  skipped: number;
  /** NULL values, left NULL. */
  nulls: number;
  batches: number;
  /** The last row key handled; a rerun may start after it. */
  lastKey: unknown;
}

/** One encrypted column to migrate or rotate. */
export interface ColumnSpec {
  /** The Drizzle column (an encryptedText/encryptedJson column of the table). */
  column: unknown;
  collection: string;
  /** Default: the column's name. */
  field?: string;
}

export interface BatchOptions {
  /** Rows per transaction. Default 500. */
  batchSize?: number;
  /** Tenant of a row: a fixed id, or read from a column of the row. */
  tenant: string | { column: unknown };
  /** Default: the process-wide ring. */
  keyRing?: KeyRing;
  /** Called after every committed batch. */
  onProgress?: (progress: Progress) => void;
}

/** A change to one cell: set `next` where the cell still holds `prev`. */
export interface CellUpdate {
  key: unknown;
  column: number;
  prev: string;
  next: string;
}

/**
 * What a dialect supplies: read a batch of raw rows after a key, and write a
 * batch of compare-and-set updates in one transaction.
 */
export interface BatchDriver {
  fetch(afterKey: unknown, limit: number): Promise<{ key: unknown; tenant: string; cells: (string | null)[] }[]>;
  apply(updates: CellUpdate[]): Promise<void>;
}

type Decide = (cell: string, ctx: [string, string, string]) => string | null;

/**
 * The shared loop: keyset pagination over the table by primary key, one
 * transaction per batch, compare-and-set writes. Safe to kill and rerun:
 * rows already done are skipped by `decide`, and a row changed by someone
 * else since it was read is left alone (the compare fails).
 */
export async function runBatches(driver: BatchDriver, specs: { collection: string; field: string }[], options: BatchOptions, decide: Decide): Promise<Progress> {
  const batchSize = options.batchSize ?? 500;
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new TypeError('batchSize must be a positive integer');
  const progress: Progress = { scanned: 0, written: 0, skipped: 0, nulls: 0, batches: 0, lastKey: undefined };
  let after: unknown = undefined;
  for (;;) {
    const rows = await driver.fetch(after, batchSize);
    if (rows.length === 0) break;
    const updates: CellUpdate[] = [];
    for (const row of rows) {
      row.cells.forEach((cell, i) => {
        if (cell === null) {
          progress.nulls++;
          return;
        }
        const next = decide(cell, [row.tenant, specs[i].collection, specs[i].field]);
        if (next === null) progress.skipped++;
        else updates.push({ key: row.key, column: i, prev: cell, next });
      });
    }
    await driver.apply(updates);
    progress.scanned += rows.length;
    progress.written += updates.length;
    progress.batches++;
    progress.lastKey = after = rows[rows.length - 1].key;
    options.onProgress?.({ ...progress });
  }
  return progress;
}

/** Encrypt what is not yet an envelope; leave envelopes untouched. */
export function encryptPlaintext(ring: KeyRing | undefined): Decide {
  return (cell, [t, c, f]) => {
    if (native.isEnvelope(cell)) return null;
    return ring ? ring.encrypt(cell, t, c, f) : native.encrypt(cell, t, c, f);
  };
}

/** Re-encrypt envelopes that only a previous key opens. Plaintext is an error. */
export function reencryptUnderPrimary(ring: KeyRing): Decide {
  return (cell, [t, c, f]) => {
    if (ring.keyIndex(cell, t, c, f) === 0) return null;
    return ring.encrypt(ring.decrypt(cell, t, c, f), t, c, f);
  };
}

/** The ring a helper needs to tell keys apart: the one given, or a coded error. */
export function requireRing(ring: KeyRing | undefined, what: string): KeyRing {
  if (ring) return ring;
  throw Object.assign(new Error(`${what} needs { keyRing }: a KeyRing of [primary, ...previous] to tell which key each value is under`), {
    code: 'ALE_NOT_INITIALIZED',
  });
}
