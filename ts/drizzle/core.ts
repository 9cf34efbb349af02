// Dialect-independent part of the Drizzle integration: tenant scope, the
// per-column codec that binds values to tenant:collection:field, and the
// batched, resumable loops behind plaintext migration, key rotation and the
// conversion between text and binary storage.
import { AsyncLocalStorage } from 'node:async_hooks';
import * as native from '../../index.js';
import type { KeyRing } from '../../index.js';
import { codedError, parseJson, stringifyJson } from '../shared/json.js';

/** A fixed tenant id, or a synchronous resolver called for every value. */
export type TenantSource = string | (() => string);

/**
 * How a column stores its envelopes: 'text', the `v1:…` form in a text
 * column, or 'binary', the same parts as bytes in a blob/bytea/longblob
 * column (README, "Binary storage").
 */
export type Storage = 'text' | 'binary';

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
   *
   * A binary column applies the same rule to bytes: a stored value that is
   * not a binary envelope is legacy plaintext, its bytes read as UTF-8 (a
   * string, as SQLite may keep in a BLOB column, as it is). A text envelope
   * is never plaintext there: it fails with `ALE_MALFORMED_ENVELOPE`
   * (convertStorage() moves text envelopes into a binary column).
   */
  legacyPlaintext?: boolean | { until: Date | string };
  /**
   * 'text' (default): the `v1:…` envelope in a text column. 'binary': the
   * same envelope as bytes, 34 bytes over the plaintext (30 with a 12-byte
   * IV) instead of 4/3 of it plus 49, in a column of the dialect's byte type
   * (SQLite `blob`, PostgreSQL `bytea`, MySQL `longblob`). The row type does
   * not change: the column still reads and writes strings (or your JSON type).
   */
  storage?: Storage;
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
  /** `encrypt`, into a binary envelope. */
  encryptBinary(plaintext: string): Buffer;
  encryptBinary<T>(value: T, serialise: (value: T) => string): Buffer;
  /** `decrypt` of a binary column's stored value (bytes; a string only as legacy plaintext). */
  decryptBinary(stored: unknown): string;
  decryptBinary<T>(stored: unknown, parse: (text: string) => T): T;
  blindIndex(value: string): string;
  /** The blind index under every key of the column's ring, primary first (only the primary for the process-wide ring). */
  blindIndexes(value: string): string[];
}

export function fieldCodec(column: string, options: EncryptedColumnOptions): FieldCodec {
  if (!options || typeof options.collection !== 'string') {
    throw Object.assign(new Error(`encrypted column "${column}": options.collection (the collectionId) is required`), { code: 'ALE_INVALID_CONTEXT' });
  }
  const { collection, keyRing } = options;
  storageOf(options, column);
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
  const legacyOpen = () => legacyUntil !== undefined && Date.now() < legacyUntil;
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

  // What each storage does with a key: hoisted, so that a call allocates no more than `wrap`'s closure.
  const sealText = (plaintext: string, t: string) => (keyRing ? keyRing.encrypt(plaintext, t, collection, field) : native.encrypt(plaintext, t, collection, field));
  const sealBytes = (plaintext: string, t: string) => (keyRing ? keyRing.encryptBinary(plaintext, t, collection, field) : native.encryptBinary(plaintext, t, collection, field));
  const openText = (stored: string, t: string) => (keyRing ? keyRing.decrypt(stored, t, collection, field) : native.decrypt(stored, t, collection, field));
  const openBytes = (stored: unknown, t: string) => {
    const bytes = bytesOnly(storedBytes(stored));
    try {
      return keyRing ? keyRing.decryptBinary(bytes, t, collection, field) : native.decryptBinary(bytes, t, collection, field);
    } catch (e) {
      // on the failure path only: say so when the bytes are a text envelope's
      if (isTextEnvelopeBytes(bytes)) throw textEnvelopeInBinary();
      throw e;
    }
  };
  const legacyText = (stored: string) => (isLegacy(stored) ? stored : undefined);
  const legacyBytes = (stored: unknown) => (legacyOpen() ? wrap(() => binaryPlaintext(storedBytes(stored))) : undefined);

  /**
   * Serves a stored value: its text when `legacy` says it is legacy
   * plaintext, else what `open` decrypts, parsed by `parse` when given. In a
   * readWithFailures() scope, a failure becomes an AleReadFailure cell.
   */
  function decryptWith<S>(stored: S, parse: ((text: string) => unknown) | undefined, legacy: (stored: S) => string | undefined, open: (stored: S, t: string) => string): unknown {
    try {
      let text = legacy(stored);
      if (text !== undefined) countLegacy();
      else {
        const t = tenant();
        text = wrap(() => open(stored, t));
      }
      const plaintext = text;
      return parse ? wrap(() => parse(plaintext)) : plaintext;
    } catch (e) {
      if (state.failureScope.getStore() && e instanceof AleColumnError) return new AleReadFailure(e);
      throw e;
    }
  }

  return {
    column,
    collection,
    field,
    tenant,
    encrypt(value: unknown, serialise?: (value: unknown) => string) {
      const t = tenant();
      return wrap(() => sealText(serialise ? serialise(value) : (value as string), t));
    },
    decrypt: function (stored: string, parse?: (text: string) => unknown) {
      return decryptWith(stored, parse, legacyText, openText);
    } as FieldCodec['decrypt'],
    encryptBinary(value: unknown, serialise?: (value: unknown) => string) {
      const t = tenant();
      return wrap(() => sealBytes(serialise ? serialise(value) : (value as string), t));
    },
    decryptBinary: function (stored: unknown, parse?: (text: string) => unknown) {
      return decryptWith(stored, parse, legacyBytes, openBytes);
    } as FieldCodec['decryptBinary'],
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

/** The storage option, checked: 'text' unless 'binary' is asked for. */
export function storageOf(options: { storage?: unknown }, column: string): Storage {
  const storage = options.storage ?? 'text';
  if (storage !== 'text' && storage !== 'binary') {
    throw codedError('ALE_INVALID_INPUT', `encrypted column "${column}": storage must be 'text' or 'binary'`);
  }
  return storage;
}

/** Strict UTF-8 that keeps a leading BOM: the plaintext exactly, or an error. */
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * What a binary column's driver hands back, as bytes or (SQLite keeps TEXT
 * in a BLOB column) a string. Buffer is a Uint8Array; bun:sqlite gives a
 * plain Uint8Array.
 */
function storedBytes(stored: unknown): Uint8Array | string {
  if (stored instanceof Uint8Array || typeof stored === 'string') return stored;
  const what = stored === null ? 'null' : typeof stored === 'object' ? (stored.constructor?.name ?? 'an object') : typeof stored;
  throw codedError('ALE_INVALID_INPUT', `the driver returned ${what} for a binary column, not a Buffer or Uint8Array`);
}

/** The bytes of a binary envelope; a string in a binary column is `ALE_MALFORMED_ENVELOPE`. */
function bytesOnly(value: Uint8Array | string): Uint8Array {
  if (typeof value !== 'string') return value;
  throw native.isEnvelope(value) ? textEnvelopeInBinary() : codedError('ALE_MALFORMED_ENVELOPE', 'the binary column holds text, not a binary envelope');
}

/** Whether `bytes` are the UTF-8 of a text envelope (`v1:…`), as a text column's bytes copied into a binary one are. */
function isTextEnvelopeBytes(bytes: Uint8Array): boolean {
  if (bytes[0] !== 0x76) return false; // 'v'
  try {
    return native.isEnvelope(utf8.decode(bytes));
  } catch {
    return false; // not UTF-8, so not a text envelope
  }
}

function textEnvelopeInBinary(): Error {
  return codedError('ALE_MALFORMED_ENVELOPE', 'the binary column holds a text envelope: convertStorage() moves text envelopes into a binary column');
}

/** Whether the core reads `bytes` as a binary envelope (the layout only; no key, nothing decrypted). */
function isBinaryEnvelope(bytes: Uint8Array): boolean {
  try {
    native.envelopeFromBytes(bytes);
    return true;
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === 'ALE_MALFORMED_ENVELOPE' || code === 'ALE_UNSUPPORTED_VERSION') return false;
    throw e;
  }
}

/**
 * The legacy-plaintext rule of a binary column, shared by reads and
 * migratePlaintext: undefined for a binary envelope; otherwise the value's
 * text (a string as it is, bytes as UTF-8). A text envelope, as a string or
 * as its UTF-8 bytes, is not plaintext (`ALE_MALFORMED_ENVELOPE`): encrypting
 * it again would bury it; convertStorage() moves it. Neither are bytes that
 * are not UTF-8.
 */
export function binaryPlaintext(value: Uint8Array | string): string | undefined {
  let text: string;
  if (typeof value === 'string') text = value;
  else if (isBinaryEnvelope(value)) return undefined;
  else {
    try {
      text = utf8.decode(value);
    } catch {
      throw codedError('ALE_MALFORMED_ENVELOPE', 'the binary column holds bytes that are neither a binary envelope nor UTF-8 text');
    }
  }
  if (native.isEnvelope(text)) throw textEnvelopeInBinary();
  return text;
}

/** A column's mappers for its storage: strings through the codec. */
export function textMappers(codec: FieldCodec, storage: Storage) {
  return storage === 'binary'
    ? { toDriver: (value: string): Buffer => codec.encryptBinary(value), fromDriver: (stored: unknown): string => codec.decryptBinary(stored) }
    : { toDriver: (value: string): string => codec.encrypt(value), fromDriver: (stored: string): string => codec.decrypt(stored) };
}

/** JSON through the codec: serialised, then encrypted. JSON errors are coded and quote nothing of the value. */
export function jsonMappers<T>(codec: FieldCodec, storage: Storage) {
  return storage === 'binary'
    ? { toDriver: (value: T): Buffer => codec.encryptBinary(value, stringifyJson), fromDriver: (stored: unknown): T => codec.decryptBinary(stored, parseJson) as T }
    : { toDriver: (value: T): string => codec.encrypt(value, stringifyJson), fromDriver: (stored: string): T => codec.decrypt(stored, parseJson) as T };
}

/**
 * What an encrypted column says about itself when its mapToDriverValue is
 * asked with COLUMN_PROBE (of either build, hence Symbol.for): the batch
 * helpers learn each column's storage, and convertStorage checks that two
 * columns bind their values to the same collection and field.
 */
export interface ColumnInfo {
  storage: Storage;
  kind: 'text' | 'json';
  collection: string;
  field: string;
}
export const COLUMN_PROBE = Symbol.for('@sveltycms/ale/column-probe');

/** The column's ColumnInfo, or undefined when it is not an encryptedText/encryptedJson column. */
export function columnInfo(column: unknown): ColumnInfo | undefined {
  let info: unknown;
  try {
    info = (column as { mapToDriverValue?: (value: unknown) => unknown })?.mapToDriverValue?.(COLUMN_PROBE);
  } catch {
    return undefined; // a column whose mapper refuses the probe is not one of ours
  }
  return typeof info === 'object' && info !== null && (info as ColumnInfo).storage !== undefined ? (info as ColumnInfo) : undefined;
}

/** What a migration, rotation or conversion has done so far. */
export interface Progress {
  /** Rows read so far. */
  scanned: number;
  /** Values written (encrypted, re-encrypted, or moved into the other storage) so far. */
  written: number;
  /**
   * Values that needed nothing (already envelopes, or already under the
   * primary key). convertStorage: rows whose target column already holds a
   * value while the source does too; both are left as they are.
   */
  skipped: number;
  /** NULL values, left NULL. convertStorage: rows whose source is NULL (nothing to move, or moved already). */
  nulls: number;
  batches: number;
  /** The last row key handled; a rerun may start after it. */
  lastKey: unknown;
}

/** One encrypted column to migrate or rotate. */
export interface ColumnSpec {
  /** The Drizzle column (an encryptedText/encryptedJson column of the table; its `storage` is followed). */
  column: unknown;
  collection: string;
  /** Default: the column's name. */
  field?: string;
}

/** How a batch loop runs. */
export interface LoopOptions {
  /** Rows per transaction. Default 500. */
  batchSize?: number;
  /** Called after every committed batch. */
  onProgress?: (progress: Progress) => void;
}

export interface BatchOptions extends LoopOptions {
  /** Tenant of a row: a fixed id, or read from a column of the row. */
  tenant: string | { column: unknown };
  /** Default: the process-wide ring. */
  keyRing?: KeyRing;
}

/** A stored value as a batch reads it: text, bytes (a binary column), or NULL. */
export type Cell = string | Uint8Array | null;

/**
 * A compare-and-set on one row: set the `set` cells (by index into the
 * columns read) where every `expect` cell still holds what was read (NULL:
 * still NULL). A row changed by someone else since is left alone.
 */
export interface RowUpdate {
  key: unknown;
  set: [column: number, value: Cell][];
  expect: [column: number, value: Cell][];
}

export interface FetchedRow {
  key: unknown;
  /** Undefined where the helper needs no tenant (convertStorage). */
  tenant: string | undefined;
  cells: Cell[];
}

/**
 * What a dialect supplies: read a batch of raw rows after a key, and write a
 * batch of compare-and-set updates in one transaction.
 */
export interface BatchDriver {
  fetch(afterKey: unknown, limit: number): Promise<FetchedRow[]>;
  apply(updates: RowUpdate[]): Promise<void>;
}

/** The updates one row needs; what it leaves alone is counted in `progress`. */
export type Plan = (row: FetchedRow, progress: Progress) => RowUpdate[];

/**
 * The shared loop: keyset pagination over the table by primary key, one
 * transaction per batch, compare-and-set writes. Safe to kill and rerun:
 * rows already done are skipped by the plan, and a row changed by someone
 * else since it was read is left alone (the compare fails).
 */
export async function runBatches(driver: BatchDriver, options: LoopOptions, plan: Plan): Promise<Progress> {
  const batchSize = options.batchSize ?? 500;
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new TypeError('batchSize must be a positive integer');
  const progress: Progress = { scanned: 0, written: 0, skipped: 0, nulls: 0, batches: 0, lastKey: undefined };
  let after: unknown = undefined;
  for (;;) {
    const rows = await driver.fetch(after, batchSize);
    if (rows.length === 0) break;
    const updates = rows.flatMap((row) => plan(row, progress));
    await driver.apply(updates);
    progress.scanned += rows.length;
    progress.written += updates.length;
    progress.batches++;
    progress.lastKey = after = rows[rows.length - 1].key;
    options.onProgress?.({ ...progress });
  }
  return progress;
}

/** Where a cell sits: for the AAD, its storage, and an error's message. */
export interface CellSpec {
  table: string;
  column: string;
  collection: string;
  field: string;
  storage: Storage;
}

/** What to write into a non-NULL cell, or null when it needs nothing. */
type Decide = (cell: string | Uint8Array, tenant: string, spec: CellSpec) => string | Uint8Array | null;

/** A plan that decides every non-NULL cell on its own (migratePlaintext, rotateKeys). */
export function eachCell(specs: CellSpec[], decide: Decide): Plan {
  return (row, progress) => {
    const updates: RowUpdate[] = [];
    row.cells.forEach((cell, i) => {
      if (cell === null) {
        progress.nulls++;
        return;
      }
      const next = atCell(specs[i], row.key, () => decide(cell, row.tenant as string, specs[i]));
      if (next === null) progress.skipped++;
      else updates.push({ key: row.key, set: [[i, next]], expect: [[i, cell]] });
    });
    return updates;
  };
}

/** Runs `op` for one cell; a failure becomes an AleColumnError naming the table, column and row. */
function atCell<T>(spec: CellSpec, key: unknown, op: () => T): T {
  try {
    return op();
  } catch (e) {
    if (e instanceof AleColumnError) throw e;
    throw new AleColumnError(e as Error & { code?: string }, { table: spec.table, column: spec.column, collection: spec.collection, rowKey: key });
  }
}

/** A text column's cell; bytes there are `ALE_MALFORMED_ENVELOPE`. */
function textOnly(cell: string | Uint8Array): string {
  if (typeof cell === 'string') return cell;
  throw codedError('ALE_MALFORMED_ENVELOPE', 'the text column holds bytes, not a text envelope');
}

/**
 * Encrypt what is not yet an envelope; leave envelopes untouched. A binary
 * column follows binaryPlaintext(), the rule its reads follow.
 */
export function encryptPlaintext(ring: KeyRing | undefined): Decide {
  return (cell, t, { collection: c, field: f, storage }) => {
    if (storage === 'binary') {
      const text = binaryPlaintext(cell);
      if (text === undefined) return null;
      return ring ? ring.encryptBinary(text, t, c, f) : native.encryptBinary(text, t, c, f);
    }
    if (native.isEnvelope(cell)) return null;
    const text = textOnly(cell);
    return ring ? ring.encrypt(text, t, c, f) : native.encrypt(text, t, c, f);
  };
}

/** Re-encrypt envelopes that only a previous key opens. Plaintext is an error. */
export function reencryptUnderPrimary(ring: KeyRing): Decide {
  return (cell, t, { collection: c, field: f, storage }) => {
    if (storage === 'binary') {
      const bytes = bytesOnly(cell);
      if (ring.keyIndex(native.envelopeFromBytes(bytes), t, c, f) === 0) return null;
      return ring.encryptBinary(ring.decryptBinary(bytes, t, c, f), t, c, f);
    }
    const text = textOnly(cell);
    if (ring.keyIndex(text, t, c, f) === 0) return null;
    return ring.encrypt(ring.decrypt(text, t, c, f), t, c, f);
  };
}

/**
 * convertStorage's plan. Pair i reads its source at cell 2i and its target
 * at cell 2i + 1; a source value moves into a NULL target in the target's
 * storage and the source becomes NULL, in one compare-and-set. The move is
 * lossless and needs no key (envelopeToBytes, envelopeFromBytes): nothing
 * is decrypted. A target that already holds a value is left alone, and so
 * is its source.
 */
export function moveToOtherStorage(pairs: { from: CellSpec; to: CellSpec }[]): Plan {
  return (row, progress) => {
    const updates: RowUpdate[] = [];
    pairs.forEach(({ from, to }, i) => {
      const source = row.cells[2 * i];
      const target = row.cells[2 * i + 1];
      if (source === null) progress.nulls++;
      else if (target !== null) progress.skipped++;
      else {
        const next = atCell(from, row.key, () => (to.storage === 'binary' ? native.envelopeToBytes(textOnly(source)) : native.envelopeFromBytes(bytesOnly(source))));
        updates.push({ key: row.key, set: [[2 * i + 1, next], [2 * i, null]], expect: [[2 * i, source], [2 * i + 1, null]] });
      }
    });
    return updates;
  };
}

/** The ring a helper needs to tell keys apart: the one given, or a coded error. */
export function requireRing(ring: KeyRing | undefined, what: string): KeyRing {
  if (ring) return ring;
  throw Object.assign(new Error(`${what} needs { keyRing }: a KeyRing of [primary, ...previous] to tell which key each value is under`), {
    code: 'ALE_NOT_INITIALIZED',
  });
}
