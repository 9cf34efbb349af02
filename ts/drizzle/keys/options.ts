// The options of a tenant key store, checked once, and the tenant ids it
// takes: what every other part of the store relies on having been checked.
import { codedError } from '../../shared/errors.js';
import type { KekInput } from './kek.js';
import { RECHECK_MAX_MS, SEAL_CONFIRMED_WITHIN_MS } from './cache.js';
import { checkedTableName, DEFAULT_TABLE } from './table.js';

// The query builders differ per dialect; the store only chains methods every dialect has.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = any;

export interface TenantKeysOptions {
  /**
   * The KEK: a secret resolved like ENCRYPTION_KEY, `[current, ...previous]`,
   * or a KEK provider. May be left out and given to bind() at start-up.
   */
  kek?: KekInput;
  /** The key table's name. Default `ale_keys`. */
  table?: string;
  /** Tenants kept in memory at once; past it, the least recently used is dropped. Default 10,000. */
  maxTenants?: number;
  /**
   * Milliseconds after which a loaded tenant's rows are read again: on its
   * next load() or withTenant(), which wait for the read, or in the
   * background on its next use by a column. Default and largest 60,000:
   * keys not found again in the table for 90,000 ms seal nothing.
   */
  recheckAfterMs?: number;
  /**
   * Milliseconds between change checks: one query for the key rows changed
   * since the last, which re-reads the loaded tenants they belong to; run by
   * the next load() after the interval (which waits for it), or in the
   * background by the next use. 0 turns it off. Default 1,000.
   */
  changeCheckEveryMs?: number;
  /** IV length of the values sealed under tenant keys. Default 12 (v2 values are read by this package only). */
  ivLength?: 12 | 16;
  /**
   * Milliseconds between writes of this process's encryption counts to the
   * key table (flush()); 0 leaves them to flush() alone. Default 10,000.
   */
  flushEveryMs?: number;
  /**
   * A tenant's active data key is rotated by the first read of its rows
   * after its fleet-wide count (the key table's, as flushed) reaches this;
   * 0 turns it off. Default 2^30, a quarter of the 2^32 encryptions NIST
   * SP 800-38D allows one key with random IVs, which leaves room for the
   * counts not flushed yet.
   */
  rotateAfterEncryptions?: number;
  /**
   * Whether `keys` columns still read v1 values (sealed by the process-wide
   * ring before the column had `keys`) through the process-wide ring, and
   * match their v1-era blind indexes. Default true, so that a column keeps
   * reading while convertToTenantKeys() runs. Once it has run on every
   * column, set false: a v1 value then fails with ALE_UNSUPPORTED_VERSION,
   * and the process-wide key no longer opens anything in these columns.
   */
  readV1?: boolean;
}

/** The longest tenant id: what MySQL's key table indexes (191 characters of utf8mb4), the same on every dialect. */
const MAX_TENANT_CHARS = 191;

/** A UTF-16 code unit of a surrogate pair standing alone. */
const LONE_SURROGATE = /\p{Cs}/u;

export function checkTenant(tenant: unknown): string {
  if (typeof tenant !== 'string' || tenant === '' || tenant.includes(':') || tenant.length > MAX_TENANT_CHARS) {
    throw codedError('ALE_INVALID_CONTEXT', `tenantKeys: the tenant id must be a non-empty string without ":", of at most ${MAX_TENANT_CHARS} characters`);
  }
  // The drivers store a lone surrogate as U+FFFD, so 'victim\uD800' would name the rows of 'victim\uFFFD'.
  if (LONE_SURROGATE.test(tenant)) throw codedError('ALE_INVALID_CONTEXT', 'tenantKeys: the tenant id is not well-formed UTF-16 (it holds a lone surrogate)');
  return tenant;
}

/** Every option tenantKeys takes; and the names the unpublished versions used, renamed once (CHANGELOG.md). */
const OPTION_NAMES = new Set(['kek', 'table', 'maxTenants', 'recheckAfterMs', 'changeCheckEveryMs', 'ivLength', 'flushEveryMs', 'rotateAfterEncryptions', 'readV1']);
const RENAMED: Record<string, string> = { recheckAfter: 'recheckAfterMs', changeCheckEvery: 'changeCheckEveryMs', flushEvery: 'flushEveryMs', rotateAfter: 'rotateAfterEncryptions' };

/** An option tenantKeys does not know is refused: a misspelt or renamed one would otherwise leave its default in force, silently. */
function checkOptionNames(options: object): void {
  if (options === null || typeof options !== 'object') throw codedError('ALE_INVALID_INPUT', 'tenantKeys: options must be an object');
  for (const name of Object.keys(options)) {
    if (!OPTION_NAMES.has(name)) {
      const now = RENAMED[name];
      throw codedError('ALE_INVALID_INPUT', `tenantKeys: unknown option "${name}"${now ? `; it is called ${now} now` : ''}`);
    }
  }
}

/** A Drizzle database, as far as can be told: it has select(). */
export function checkedDb(db: unknown): AnyDb {
  if (typeof (db as { select?: unknown })?.select !== 'function') throw codedError('ALE_INVALID_INPUT', 'tenantKeys: the database must be a Drizzle database (drizzle(...))');
  return db;
}

/** What a store declared without its database or KEK says until bind() gives it. */
export function unbound(what: 'database' | 'KEK'): Error {
  return codedError(
    'ALE_NOT_INITIALIZED',
    `tenantKeys: this store has no ${what} yet. Give it at start-up with keys.bind(db, { kek }) (or pass both to tenantKeys(db, { kek }))`,
  );
}

/** unbound() for a store that has its database (then it lacks its KEK) or has not. */
export function unboundStore(hasDatabase: boolean): Error {
  return unbound(hasDatabase ? 'KEK' : 'database');
}

function positive(value: number | undefined, fallback: number, name: string, zero = false): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < (zero ? 0 : 1)) {
    throw codedError('ALE_INVALID_INPUT', `tenantKeys: options.${name} must be a ${zero ? 'non-negative' : 'positive'} integer`);
  }
  return value;
}

/** recheckAfterMs: at most RECHECK_MAX_MS, since keys not read again for SEAL_CONFIRMED_WITHIN_MS seal nothing (cache.ts). */
function recheckAfter(value: number | undefined): number {
  const ms = positive(value, RECHECK_MAX_MS, 'recheckAfterMs');
  if (ms > RECHECK_MAX_MS) {
    throw codedError(
      'ALE_INVALID_INPUT',
      `tenantKeys: options.recheckAfterMs may be at most ${RECHECK_MAX_MS}: keys not found again in the key table for ${SEAL_CONFIRMED_WITHIN_MS} ms seal nothing, since another process may have retired and destroyed them`,
    );
  }
  return ms;
}

/** The options of a store, checked and with their defaults: the one shape the store's parts read. */
export interface StoreConfig {
  table: string;
  maxTenants: number;
  recheckAfterMs: number;
  /** 0: no change checks. */
  changeCheckEveryMs: number;
  ivLength: 12 | 16;
  /** 0: counts are written by flush() alone. */
  flushEveryMs: number;
  /** 0: no rotation by count. */
  rotateAfterEncryptions: number;
  readV1: boolean;
}

/** Checks `options` once, with a coded error naming the option, and fills in the defaults. */
export function parseOptions(options: TenantKeysOptions): StoreConfig {
  checkOptionNames(options);
  if (options.ivLength !== undefined && options.ivLength !== 12 && options.ivLength !== 16) {
    throw codedError('ALE_INVALID_INPUT', 'tenantKeys: options.ivLength must be 12 or 16');
  }
  if (options.readV1 !== undefined && typeof options.readV1 !== 'boolean') throw codedError('ALE_INVALID_INPUT', 'tenantKeys: options.readV1 must be true or false');
  return {
    table: checkedTableName(options.table ?? DEFAULT_TABLE),
    maxTenants: positive(options.maxTenants, 10_000, 'maxTenants'),
    recheckAfterMs: recheckAfter(options.recheckAfterMs),
    changeCheckEveryMs: positive(options.changeCheckEveryMs, 1_000, 'changeCheckEveryMs', true),
    ivLength: options.ivLength ?? 12,
    flushEveryMs: positive(options.flushEveryMs, 10_000, 'flushEveryMs', true),
    // A quarter of the 2^32 encryptions NIST SP 800-38D allows one key with random IVs, leaving room for counts not flushed yet.
    rotateAfterEncryptions: positive(options.rotateAfterEncryptions, 2 ** 30, 'rotateAfterEncryptions', true),
    readV1: options.readV1 ?? true,
  };
}
