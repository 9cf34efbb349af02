// The per-column codec: binds one column's values to tenant:collection:field,
// encrypts what is written and decrypts what is read, in text or binary
// storage, and the column mappers that run values through it.
import * as native from '../../index.js';
import type { KeyRing } from '../../index.js';
import { codedError } from '../shared/errors.js';
import { parseJson, stringifyJson } from '../shared/json.js';
import { AleColumnError, atColumn, columnFailure, failedRead } from './failures.js';
import { countLegacyRead, legacyDeadline } from './legacy.js';
import { useStore } from './key-stores.js';
import type { TenantKeys } from './keys/store.js';
import { processRing, type Sealer } from './process-ring.js';
import { currentTenant } from './scope.js';
import { binaryPlaintext, bytesOnly, isTextEnvelopeBytes, storageOf, storedBytes, textEnvelopeInBinary, textOnly, type Storage } from './storage.js';

/** A fixed tenant id, or a synchronous resolver called for every value. */
export type TenantSource = string | (() => string);

/** The options every encrypted column takes, whichever ring it seals with. */
export interface ColumnOptionsBase {
  /** collectionId in the AAD. */
  collection: string;
  /** fieldName in the AAD; defaults to the column name. */
  field?: string;
  /** Fixed tenant or a synchronous resolver; default: the withTenant() scope. */
  tenant?: TenantSource;
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

/** A column on a KeyRing of its own, or on the process-wide ring (no `keyRing`). */
export interface OnKeyRing {
  /**
   * Default: the process-wide ring: the one initKeyRing() set or, on first
   * use without one, the one initKeyRing() would read from the environment.
   */
  keyRing?: KeyRing;
  keys?: undefined;
}

/** A column under each tenant's own keys. */
export interface OnTenantKeys {
  /**
   * Seal values under each tenant's own data key from this store
   * (tenantKeys()), as v2 envelopes; v1 values still open through the
   * process-wide ring until convertToTenantKeys() moves them. The tenant's
   * keys must be loaded first: withTenant(tenantId, fn) does it, as does
   * keys.load(tenantId). Not with `keyRing`.
   */
  keys: TenantKeys;
  keyRing?: undefined;
}

/**
 * An encrypted column's options: `keyRing` or `keys`, not both (the type
 * says so, and the column refuses both at run time with ALE_INVALID_INPUT).
 */
export type EncryptedColumnOptions = ColumnOptionsBase & (OnKeyRing | OnTenantKeys);

/** Binds one column's values to tenant:collection:field. */
export interface FieldCodec {
  readonly column: string;
  readonly collection: string;
  readonly field: string;
  /** The tenant key store the column seals under, if it has `keys`. */
  readonly keys: TenantKeys | undefined;
  /** What the column seals with: the store's sealer, its keyRing, or the process-wide ring. */
  readonly sealer: Sealer;
  tenant(): string;
  /** The column's `tenant` when it is a fixed id: every value of the column is bound to it. */
  readonly fixedTenant: string | undefined;
  /**
   * The column's fixed tenant, or the scope's; undefined outside a scope,
   * and for a tenant function, which is the application's code and is not
   * called where tenant() is not needed.
   */
  tenantIfAny(): string | undefined;
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
    throw codedError('ALE_INVALID_CONTEXT', `encrypted column "${column}": options.collection (the collectionId) is required`);
  }
  const { collection, keyRing, keys } = options;
  if (keys !== undefined && keyRing !== undefined) {
    throw codedError('ALE_INVALID_INPUT', `encrypted column "${column}": give it keys (tenant keys) or keyRing, not both`);
  }
  if (keys !== undefined && typeof keys?.sealer?.encrypt !== 'function') {
    throw codedError('ALE_INVALID_INPUT', `encrypted column "${column}": options.keys must be the store tenantKeys() returned`);
  }
  // withTenant() loads the tenant's keys in every store a column names.
  if (keys !== undefined && typeof keys.keysFor === 'function') useStore(keys);
  const ring: Sealer = keys?.sealer ?? keyRing ?? processRing;
  storageOf(options, column);
  const field = options.field ?? column;
  const tenantOption = options.tenant;
  const where = { column, collection, field };
  const counterKey = `${collection}.${field}`;
  const legacyUntil = legacyDeadline(options.legacyPlaintext, column);

  const tenant = (): string => {
    const t = typeof tenantOption === 'function' ? tenantOption() : (tenantOption ?? currentTenant());
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
  const tenantIfAny = (): string | undefined => (typeof tenantOption === 'function' ? undefined : (tenantOption ?? currentTenant()));
  // One rule for "is this an envelope?": the one migratePlaintext uses.
  const legacyOpen = () => legacyUntil !== undefined && Date.now() < legacyUntil;
  const isLegacy = (stored: string) => legacyUntil !== undefined && !native.isEnvelope(stored) && Date.now() < legacyUntil;

  // What each storage does with a key: hoisted, so that a call allocates nothing for them.
  const sealText = (plaintext: string, t: string) => ring.encrypt(plaintext, t, collection, field);
  const sealBytes = (plaintext: string, t: string) => ring.encryptBinary(plaintext, t, collection, field);
  const openText = (stored: string, t: string) => {
    try {
      return ring.decrypt(textOnly(stored), t, collection, field);
    } catch (e) {
      // on the failure path only: a value that is no envelope at all is most likely plaintext from before encryption
      if ((e as { code?: string })?.code === 'ALE_MALFORMED_ENVELOPE' && typeof stored === 'string' && !native.isEnvelope(stored)) throw plaintextFound(e as Error);
      throw e;
    }
  };
  const openBytes = (stored: unknown, t: string) => {
    const bytes = bytesOnly(storedBytes(stored));
    try {
      return ring.decryptBinary(bytes, t, collection, field);
    } catch (e) {
      // on the failure path only: say so when the bytes are a text envelope's
      if (isTextEnvelopeBytes(bytes)) throw textEnvelopeInBinary();
      throw e;
    }
  };
  // Only a string can be a text column's plaintext: a Buffer (a binary
  // envelope a table rebuild left in the column) or a number (an old
  // INTEGER cell) goes on to openText, which refuses it as migratePlaintext
  // does (textOnly); served as the value, it would be ciphertext or a
  // number typed as a string.
  const legacyText = (stored: string) => (typeof stored === 'string' && isLegacy(stored) ? stored : undefined);
  const legacyBytes = (stored: unknown) => (legacyOpen() ? atColumn(where, () => binaryPlaintext(storedBytes(stored))) : undefined);

  /**
   * Serves a stored value: its text when `legacy` says it is legacy
   * plaintext, else what `open` decrypts, parsed by `parse` when given. In a
   * readWithFailures() scope, a failure becomes an AleReadFailure cell.
   * Each step runs inline, not in a closure made per call: a read is one
   * cold call inside a query, and what it allocates and touches is what it
   * costs there (docs/performance.md, "The cold footprint").
   */
  function decryptWith<S>(stored: S, parse: ((text: string) => unknown) | undefined, legacy: (stored: S) => string | undefined, open: (stored: S, t: string) => string): unknown {
    try {
      let text = legacy(stored);
      if (text !== undefined) countLegacyRead(counterKey, column, collection);
      else {
        const t = tenant();
        try {
          text = open(stored, t);
        } catch (e) {
          throw columnFailure(e, where, t);
        }
      }
      if (!parse) return text;
      try {
        return parse(text);
      } catch (e) {
        return failedRead(columnFailure(e, where), true);
      }
    } catch (e) {
      return failedRead(e);
    }
  }

  /** Seals `value` (serialised first when `serialise` is given) with `seal`, inline as decryptWith. */
  function encryptWith<R>(value: unknown, serialise: ((value: unknown) => string) | undefined, seal: (plaintext: string, t: string) => R): R {
    const t = tenant();
    try {
      return seal(serialise ? serialise(value) : (value as string), t);
    } catch (e) {
      throw columnFailure(e, where, t);
    }
  }

  return {
    column,
    collection,
    field,
    keys,
    sealer: ring,
    tenant,
    fixedTenant: typeof tenantOption === 'string' ? tenantOption : undefined,
    tenantIfAny,
    encrypt(value: unknown, serialise?: (value: unknown) => string) {
      return encryptWith(value, serialise, sealText);
    },
    decrypt: function (stored: string, parse?: (text: string) => unknown) {
      return decryptWith(stored, parse, legacyText, openText);
    } as FieldCodec['decrypt'],
    encryptBinary(value: unknown, serialise?: (value: unknown) => string) {
      return encryptWith(value, serialise, sealBytes);
    },
    decryptBinary: function (stored: unknown, parse?: (text: string) => unknown) {
      return decryptWith(stored, parse, legacyBytes, openBytes);
    } as FieldCodec['decryptBinary'],
    blindIndex(value) {
      const t = tenant();
      return atColumn(where, () => ring.blindIndex(value, t, collection, field));
    },
    blindIndexes(value) {
      const t = tenant();
      return atColumn(where, () => ring.blindIndexes(value, t, collection, field));
    },
  };
}

/** ALE_MALFORMED_ENVELOPE for a stored value that is no envelope, saying what to do about plaintext. */
function plaintextFound(cause: Error): Error {
  const error = codedError(
    'ALE_MALFORMED_ENVELOPE',
    `${cause.message}. If the column holds values written before it was encrypted, migratePlaintext() encrypts them in place, and the column option legacyPlaintext: true reads them until then`,
  );
  return Object.assign(error, { cause });
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
    : { toDriver: (value: T): string => codec.encrypt(value, stringifyJson), fromDriver: (stored: string): T => codec.decrypt(stored, parseJsonText) as T };
}

/**
 * A text JSON column's plaintext parsed, but an empty one served as it is:
 * SveltyCMS's module leaves `''` unencrypted in a document and reads it as
 * itself, which only a legacyPlaintext read can meet (no JSON is empty, so
 * JSON.stringify never seals one).
 */
const parseJsonText = (text: string): unknown => (text === '' ? text : parseJson(text));
