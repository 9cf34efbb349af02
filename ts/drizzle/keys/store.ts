// The tenant key store: each tenant's data keys and index key, wrapped by a
// KEK in a table of the app's own database, loaded into memory before a
// tenant's queries run, and the Sealer that `keys` columns call
// synchronously with them.
import { createHmac, randomBytes } from 'node:crypto';
import { and, eq, gt, lt, max, sql, type SQL } from 'drizzle-orm';
import * as native from '../../../index.js';
import type { KeyRing } from '../../../index.js';
import { codedError } from '../../shared/errors.js';
import { processRing, type Sealer } from '../process-ring.js';
import { withTenant as inTenantScope } from '../scope.js';
import { clock, startClock, TenantCache, type Entry } from './cache.js';
import { incompleteKeys, kekNotHeld, keyNotLoaded, keyShredded, unwrapFailed } from './errors.js';
import { destroyRetired, listTenants, type KeyUse, type TenantPage } from './admin.js';
import { PendingCounts } from './counts.js';
import { INTERNALS, type StoreInternals } from './internals.js';
import { kekOf, type KekInput, type KekProvider } from './kek.js';
import { checkedTableName, DEFAULT_TABLE, type KeyRow, type KeyTableSpec, type NewKeyRow, type Purpose } from './table.js';

// The query builders differ per dialect; the store only chains methods every dialect has.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = any;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyTable = any;

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
   * background on its next use by a column. Default 60,000.
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

/** One key of a tenant, as keys.describe() reports it. */
export interface TenantKeyInfo {
  keyId: string;
  purpose: Purpose;
  generation: number;
  state: KeyRow['state'];
  kek: string | null;
  createdAt: Date;
  updatedAt: Date;
  /** Encryptions under the key over every process, as far as they have flushed their counts. */
  encryptions: number;
  /** This process's encryptions under the key that are not in `encryptions` yet (flush() adds them). */
  pending: number;
}

const KEY_BYTES = 32;
/** What load() returns for a tenant in memory. */
const SETTLED: Promise<void> = Promise.resolve();
/** The least time between two re-reads of one tenant for values naming a key it lacks. */
const MISS_INTERVAL = 1_000;
/** How far before the last change check's window a change check looks, for writes stamped before they committed. */
const CHANGE_LOOKBACK = 60_000;
/** Versioned, so that a later wrap layout cannot be confused with this one. */
const WRAP_LABEL = 'sveltycms-ale/tenant-key/1';

/** The AAD of a wrapped key: it opens only in the row of its tenant, id and purpose. */
function wrapAad(tenant: string, keyId: string, purpose: Purpose): Buffer {
  return Buffer.from(JSON.stringify([WRAP_LABEL, tenant, keyId, purpose]), 'utf8');
}

/** The longest tenant id: what MySQL's key table indexes (191 characters of utf8mb4), the same on every dialect. */
const MAX_TENANT_CHARS = 191;

/** A UTF-16 code unit of a surrogate pair standing alone. */
const LONE_SURROGATE = /\p{Cs}/u;

function checkTenant(tenant: unknown): string {
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
function checkedDb(db: unknown): AnyDb {
  if (typeof (db as { select?: unknown })?.select !== 'function') throw codedError('ALE_INVALID_INPUT', 'tenantKeys: the database must be a Drizzle database (drizzle(...))');
  return db;
}

/** What a store declared without its database or KEK says until bind() gives it. */
function unbound(what: 'database' | 'KEK'): Error {
  return codedError(
    'ALE_NOT_INITIALIZED',
    `tenantKeys: this store has no ${what} yet. Give it at start-up with keys.bind(db, { kek }) (or pass both to tenantKeys(db, { kek }))`,
  );
}

function positive(value: number | undefined, fallback: number, name: string, zero = false): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < (zero ? 0 : 1)) {
    throw codedError('ALE_INVALID_INPUT', `tenantKeys: options.${name} must be a ${zero ? 'non-negative' : 'positive'} integer`);
  }
  return value;
}

/**
 * The key store of one database. Values of a column with `keys: store` are
 * sealed under the tenant's active data key; every method that touches the
 * database is async, and the columns' synchronous hooks only read memory.
 */
export class TenantKeys {
  /** The database and the KEK: given to tenantKeys(), or later to bind() (a store declared in a schema module). */
  #boundDb: AnyDb | undefined;
  #boundKek: KekProvider | undefined;
  readonly #spec: KeyTableSpec;
  readonly #name: string;
  readonly #table: AnyTable;
  readonly #cache: TenantCache;
  /** Every loaded tenant's keys, in one native ring (or the JS backend's), which hands each call to the tenant's keys. */
  readonly #rings: KeyRing;
  readonly #recheckAfterMs: number;
  readonly #changeCheckEveryMs: number;
  readonly #ivLength: 12 | 16;
  /** Loads under way, so that concurrent loads of one tenant share one read. */
  readonly #pending = new Map<string, Promise<void>>();
  /** Tenants known to be shredded: kept apart from the bounded cache, so eviction cannot forget a shred. */
  readonly #shredded = new Set<string>();
  /** Keys a shredded tenant's blind-index lookups are computed under: random, so they match nothing. */
  readonly #nowhere = randomBytes(32);
  /** Clock time of the next change check; never when change checks are off. */
  #nextCheck: number;
  /** performance.now() when the last change check was sent; undefined before the first, which reads every row. */
  #lastCheck: number | undefined;
  /** The change check under way, if any. */
  #checking: Promise<void> | undefined;
  /** Encryption counts taken from the entries, not written to the key table yet. */
  readonly #counts = new PendingCounts();
  readonly #rotateAfterEncryptions: number;
  readonly #readV1: boolean;

  /** What `keys` columns call: the tenant's ring from memory, or a coded error. */
  readonly sealer: Sealer;

  /**
   * `db` and `options.kek` may be left out, and given to bind() at start-up:
   * a schema module declares the store with neither, so that importing it
   * (as `vite build` does, with no secrets set) needs no database and no KEK.
   */
  constructor(db: AnyDb | undefined, spec: KeyTableSpec, options: TenantKeysOptions = {}) {
    checkOptionNames(options);
    if (db !== undefined && db !== null) this.#boundDb = checkedDb(db);
    this.#spec = spec;
    this.#name = checkedTableName(options?.table ?? DEFAULT_TABLE);
    this.#table = spec.table(this.#name);
    if (options?.kek !== undefined) this.#boundKek = kekOf(options.kek);
    this.#cache = new TenantCache(positive(options.maxTenants, 10_000, 'maxTenants'), (tenant, entry) => {
      this.#takeCount(entry);
      this.#rings.deleteTenant(tenant);
    });
    this.#recheckAfterMs = positive(options.recheckAfterMs, 60_000, 'recheckAfterMs');
    this.#changeCheckEveryMs = positive(options.changeCheckEveryMs, 1_000, 'changeCheckEveryMs', true);
    this.#nextCheck = this.#changeCheckEveryMs > 0 ? 0 : Number.POSITIVE_INFINITY;
    if (options.ivLength !== undefined && options.ivLength !== 12 && options.ivLength !== 16) {
      throw codedError('ALE_INVALID_INPUT', 'tenantKeys: options.ivLength must be 12 or 16');
    }
    this.#ivLength = options.ivLength ?? 12;
    this.#rotateAfterEncryptions = positive(options.rotateAfterEncryptions, 2 ** 30, 'rotateAfterEncryptions', true);
    if (options.readV1 !== undefined && typeof options.readV1 !== 'boolean') throw codedError('ALE_INVALID_INPUT', 'tenantKeys: options.readV1 must be true or false');
    this.#readV1 = options.readV1 ?? true;
    const flushEveryMs = positive(options.flushEveryMs, 10_000, 'flushEveryMs', true);
    if (flushEveryMs > 0) {
      // Unref'd, and holding the store weakly: counts never keep a process
      // or a dropped store alive. A failed write stays pending for the next.
      const store = new WeakRef(this);
      const timer = setInterval(() => {
        const s = store.deref();
        if (s === undefined) clearInterval(timer);
        else s.flush().catch(() => undefined);
      }, flushEveryMs);
      timer.unref?.();
    }
    this.#rings = native.KeyRing.forTenants({ ivLength: this.#ivLength });
    startClock();
    this.sealer = this.#makeSealer();
  }

  /**
   * Gives a declared store its database and KEK, once, at start-up (each
   * only when tenantKeys() did not have it). Until then, every method that
   * reads the key table fails with ALE_NOT_INITIALIZED.
   */
  bind(db: unknown, options: { kek?: KekInput } = {}): this {
    if (db !== undefined && db !== null) {
      if (this.#boundDb !== undefined && this.#boundDb !== db) throw codedError('ALE_INVALID_INPUT', 'tenantKeys: this store is bound to another database already');
      this.#boundDb = checkedDb(db);
    }
    if (options?.kek !== undefined) {
      if (this.#boundKek !== undefined) throw codedError('ALE_INVALID_INPUT', 'tenantKeys: this store has a KEK already');
      this.#boundKek = kekOf(options.kek);
    }
    return this;
  }

  /** Whether the store has its database and its KEK. */
  get bound(): boolean {
    return this.#boundDb !== undefined && this.#boundKek !== undefined;
  }

  get #db(): AnyDb {
    if (this.#boundDb === undefined) throw unbound('database');
    return this.#boundDb;
  }

  get #kek(): KekProvider {
    if (this.#boundKek === undefined) throw unbound('KEK');
    return this.#boundKek;
  }

  /** The KEK reference new keys are wrapped under. */
  get kekId(): string {
    return this.#kek.id;
  }

  /** How many tenants are in memory. */
  get loadedTenants(): number {
    return this.#cache.size;
  }

  /** Creates the key table and its indexes when they are missing, and adds the columns a table made by an earlier version lacks. */
  async ready(): Promise<void> {
    for (const statement of this.#spec.create(this.#name)) await this.#spec.execute(this.#db, sql.raw(statement));
    for (const statement of this.#spec.upgrade(this.#name)) {
      try {
        await this.#spec.execute(this.#db, sql.raw(statement));
      } catch (e) {
        if (!/duplicate column/i.test(`${(e as Error)?.message} ${(e as { cause?: Error })?.cause?.message}`)) throw e;
      }
    }
  }

  /**
   * Adds this process's encryption counts to the key table (one UPDATE per
   * key with new encryptions), as it also does every flushEveryMs ms. Run it
   * before a process exits: counts not flushed are not in the fleet-wide
   * count. Counts whose write fails stay for the next flush.
   */
  flush(): Promise<void> {
    for (const entry of this.#cache.values()) this.#takeCount(entry);
    const t = this.#table;
    return this.#counts.flush((keyId, n) => this.#db.update(t).set({ encryptions: sql`${t.encryptions} + ${n}` }).where(eq(t.keyId, keyId)));
  }

  /**
   * Makes the tenant's keys usable by `keys` columns, creating them on the
   * tenant's first use. Resolves at once when they are in memory and fresh;
   * concurrent calls for one tenant share one read. A shredded tenant loads
   * as shredded: its values then fail with ALE_KEY_SHREDDED.
   */
  load(tenantId: string): Promise<void> {
    const entry = this.#cache.get(tenantId);
    if (entry !== undefined && entry.staleAt > clock.now) {
      entry.used = true;
      if (this.#nextCheck > clock.now) return SETTLED;
      // A change check is due: wait for it (and for the re-reads it starts),
      // so that work run through load() never uses keys older than the bound.
      return this.#checkChanges().then(() => this.load(tenantId));
    }
    return this.#refresh(checkTenant(tenantId));
  }

  /** Loads the tenant's keys, then runs `fn` in withTenant(tenantId) scope. */
  async withTenant<T>(tenantId: string, fn: () => T): Promise<Awaited<T>> {
    await this.load(tenantId);
    return (await inTenantScope(tenantId, fn)) as Awaited<T>;
  }

  /**
   * A new active data key for the tenant; the previous ones become
   * decrypt-only, so existing values keep opening. Run
   * convertToTenantKeys() to move them under the new key. The index key
   * stays: blind indexes keep matching.
   */
  async rotate(tenantId: string): Promise<{ keyId: string }> {
    checkTenant(tenantId);
    await this.#refresh(tenantId);
    if (this.#shredded.has(tenantId)) throw keyShredded(tenantId);
    const t = this.#table;
    const rows: KeyRow[] = await this.#db.select().from(t).where(and(eq(t.tenant, tenantId), eq(t.purpose, 'data')));
    let added: NewKeyRow;
    try {
      added = await this.#addGeneration(tenantId, rows);
    } catch (e) {
      // A concurrent rotate took this generation (the unique index): its key is the new one.
      await this.#refresh(tenantId, true);
      const theirs = this.#cache.get(tenantId);
      if (!theirs?.loaded || theirs.keyIds.split(',').length <= rows.length) throw e;
      return { keyId: this.activeKeyId(tenantId) };
    }
    await this.#retireBefore(added);
    await this.#refresh(tenantId, true);
    return { keyId: added.keyId };
  }

  /**
   * Stores the tenant's next data key, active. Rejects with the insert's
   * error when another process stored that generation first.
   */
  async #addGeneration(tenant: string, dataRows: KeyRow[]): Promise<NewKeyRow> {
    const generation = Math.max(0, ...dataRows.map((r) => Number(r.generation))) + 1;
    const row = await this.#newRow(tenant, 'data', generation, 'active');
    await this.#db.insert(this.#table).values(row);
    return row;
  }

  /** Makes the data keys older than `row` decrypt-only. */
  async #retireBefore(row: NewKeyRow): Promise<void> {
    const t = this.#table;
    await this.#db
      .update(t)
      .set({ state: 'decrypt-only', updatedAt: this.#touched() })
      .where(and(eq(t.tenant, row.tenant), eq(t.purpose, 'data'), eq(t.state, 'active'), lt(t.generation, row.generation)));
  }

  /**
   * Destroys every key of the tenant and leaves a tombstone: its rows stay,
   * with state 'shredded' and no key. Its values fail with ALE_KEY_SHREDDED
   * from now on, here at once and in other processes within the bound of
   * changeCheckEveryMs or recheckAfterMs;
   * its blind-index lookups match nothing. A backup taken before still
   * holds the wrapped keys: see rewrap(). With a KEK per tenant
   * (transitKek's keyPerTenant), the tenant's KEK is deleted too, and such
   * a backup opens nothing of the tenant.
   */
  async shred(tenantId: string): Promise<void> {
    checkTenant(tenantId);
    const t = this.#table;
    const now = this.#spec.now;
    for (let attempt = 0; ; attempt++) {
      const existing: KeyRow[] = await this.#db.select({ keyId: t.keyId }).from(t).where(eq(t.tenant, tenantId));
      if (existing.length > 0) {
        await this.#db.update(t).set({ state: 'shredded', wrappedKey: null, kek: null, updatedAt: this.#touched() }).where(eq(t.tenant, tenantId));
        break;
      }
      // Never used: a tombstone at generation 1, which also stops a later load from creating keys.
      try {
        await this.#db.insert(t).values(
          (['data', 'index'] as const).map((purpose) => ({
            keyId: randomBytes(16).toString('base64url'),
            tenant: tenantId,
            purpose,
            generation: 1,
            state: 'shredded',
            wrappedKey: null,
            kek: null,
            createdAt: now,
            updatedAt: now,
          })),
        );
        break;
      } catch (e) {
        // Another process created the tenant's keys meanwhile: shred those.
        if (attempt > 0) throw e;
      }
    }
    this.#markShredded(tenantId);
    // A KEK per tenant goes last, once no row can be unwrapped with it. If
    // the key service fails here, the tenant is shredded in the database and
    // its KEK remains: shred() again deletes it.
    await this.#kek.destroy?.(tenantId);
  }

  /**
   * Re-wraps every stored key under `newKek`, one row per key (data rows are
   * never touched), and makes it the KEK new keys are wrapped under; keys
   * under the previous KEK keep opening here. Safe to rerun: a key already
   * under `newKek` is skipped. Once every process runs with the new KEK
   * first, and the backups that still need the old one have expired,
   * destroy the old KEK: then a tenant shredded before the rewrap is gone
   * from those backups too.
   */
  async rewrap(newKek: KekInput): Promise<{ rewrapped: number; skipped: number }> {
    const next = kekOf(newKek);
    const t = this.#table;
    const rows: KeyRow[] = await this.#db.select().from(t).orderBy(t.keyId);
    let rewrapped = 0;
    let skipped = 0;
    for (const row of rows) {
      if (row.wrappedKey === null || row.kek === null) continue;
      const aad = wrapAad(row.tenant, row.keyId, row.purpose);
      let wrapped: string;
      if (row.kek === next.id) {
        // Under this KEK already: a key service may still move it to the KEK's newest version.
        const moved = next.rewrap ? await next.rewrap(row.wrappedKey, row.kek, aad, row.tenant) : null;
        if (moved === null) {
          skipped++;
          continue;
        }
        wrapped = moved;
      } else {
        const key = await this.#unwrap(row);
        try {
          wrapped = await next.wrap(key, aad, row.tenant);
        } finally {
          key.fill(0);
        }
      }
      await this.#db
        .update(t)
        .set({ wrappedKey: wrapped, kek: next.id, updatedAt: this.#touched() })
        .where(and(eq(t.keyId, row.keyId), eq(t.wrappedKey, row.wrappedKey)));
      rewrapped++;
    }
    this.#boundKek = kekOf([next, this.#kek]);
    return { rewrapped, skipped };
  }

  /** The tenant's keys as stored (no key material): ids, purposes, generations, states, KEK references. */
  async describe(tenantId: string): Promise<TenantKeyInfo[]> {
    checkTenant(tenantId);
    const t = this.#table;
    const rows: KeyRow[] = await this.#db.select().from(t).where(eq(t.tenant, tenantId)).orderBy(t.purpose, t.generation);
    const entry = this.#cache.get(tenantId);
    const active = entry?.loaded ? entry.keyIds.split(',')[0] : undefined;
    return rows.map((r) => ({
      keyId: r.keyId,
      purpose: r.purpose,
      generation: Number(r.generation),
      state: r.state,
      kek: r.kek,
      encryptions: Number(r.encryptions),
      pending: this.#counts.pending(r.keyId) + (r.keyId === active ? (entry?.sealed ?? 0) : 0),
      createdAt: new Date(Number(r.createdAt)),
      updatedAt: new Date(Number(r.updatedAt)),
    }));
  }

  /**
   * The id of the tenant's active data key, from memory: the key a v2 value
   * must name to need no conversion. ALE_KEY_NOT_LOADED or ALE_KEY_SHREDDED
   * as for a column.
   */
  activeKeyId(tenantId: string): string {
    const entry = this.#use(tenantId);
    if (!entry.loaded) throw keyShredded(tenantId);
    return entry.keyIds.split(',')[0];
  }

  /** A page of the key table's tenants, in id order: `{ after: page.next }` gives the next one. */
  tenants(options?: { after?: string; limit?: number }): Promise<TenantPage> {
    return listTenants(this[INTERNALS](), options);
  }

  /**
   * Destroys the tenant's decrypt-only data keys once no value in `uses`
   * (every table and `keys` column holding the tenant's values) is under
   * one; otherwise ALE_KEY_IN_USE and nothing changes. Run it after
   * convertToTenantKeys. See admin.ts, destroyRetired.
   */
  destroyRetired(tenantId: string, uses: KeyUse[]): Promise<{ destroyed: string[] }> {
    return destroyRetired(this[INTERNALS](), tenantId, uses, this);
  }

  /** What admin.ts reaches of the store (internals.ts). */
  [INTERNALS](): StoreInternals {
    return { db: this.#db, table: this.#table, touched: () => this.#touched(), refresh: (tenant) => this.#refresh(tenant, true), checkTenant };
  }

  /** Whether the tenant is known here to be shredded (after a load, a shred, or a re-read that found its tombstone). */
  isShredded(tenantId: string): boolean {
    return this.#shredded.has(tenantId);
  }

  /** Drops the tenant's keys from memory (not from the table). */
  forget(tenantId: string): void {
    this.#takeCount(this.#cache.get(tenantId));
    this.#cache.delete(tenantId);
    this.#rings.deleteTenant(tenantId);
  }

  /** Reads the tenant's rows (creating its keys on first use) and replaces its entry; shared by concurrent callers. */
  #refresh(tenant: string, force = false): Promise<void> {
    const pending = this.#pending.get(tenant);
    if (pending && !force) return pending;
    const read: Promise<void> = this.#read(tenant, () => this.#pending.get(tenant) === read).finally(() => {
      if (this.#pending.get(tenant) === read) this.#pending.delete(tenant);
    });
    this.#pending.set(tenant, read);
    return read;
  }

  /**
   * One read of the tenant's rows into its entry. `latest` says whether this
   * read is still the newest one for the tenant: an older read that ends
   * after a newer one, or a read that ends after a shred here, changes
   * nothing.
   */
  async #read(tenant: string, latest: () => boolean, mayRotate = true): Promise<void> {
    const t = this.#table;
    // Exactly this tenant's rows, whatever the column's collation compares as equal.
    const own = (rows: KeyRow[]) => rows.filter((r) => r.tenant === tenant);
    let rows = own(await this.#db.select().from(t).where(eq(t.tenant, tenant)));
    if (rows.length === 0) rows = own(await this.#create(tenant));
    const superseded = () => !latest() || this.#shredded.has(tenant);
    if (superseded()) return;
    const seen = Math.max(...rows.map((r) => Number(r.updatedAt)));
    if (rows.some((r) => r.state === 'shredded')) {
      this.#markShredded(tenant);
      return;
    }
    const data = rows.filter((r) => r.purpose === 'data' && r.state !== 'destroyed').sort((a, b) => b.generation - a.generation);
    const index = rows.find((r) => r.purpose === 'index');
    if (data.length === 0) throw incompleteKeys(tenant, 'data key');
    if (!index) throw incompleteKeys(tenant, 'index key');
    if (mayRotate && this.#rotateAfterEncryptions > 0 && data[0].state === 'active' && Number(data[0].encryptions) >= this.#rotateAfterEncryptions) {
      // The active key has sealed its share of values across the fleet: a
      // new one, then one more read. If the rotation fails (another process
      // rotated first, or the KEK or the table refused), that read finds
      // what there is, and the tenant's next read tries again.
      try {
        await this.#retireBefore(await this.#addGeneration(tenant, data));
      } catch {
        // as above
      }
      return this.#read(tenant, latest, false);
    }
    const keyIds = data.map((r) => r.keyId);
    const joined = keyIds.join();
    const current = this.#cache.get(tenant);
    const staleAt = clock.now + this.#recheckAfterMs;
    if (current?.loaded && current.keyIds === joined && current.staleAt > 0) {
      current.staleAt = staleAt;
      current.seen = seen;
      return;
    }
    const unwrapped = await Promise.allSettled([index, ...data].map((r) => this.#unwrap(r)));
    const keys = unwrapped.flatMap((u) => (u.status === 'fulfilled' ? [u.value] : []));
    try {
      // A shred that came while this read was unwrapping wins, even when it made the unwrap fail (a KEK per tenant, deleted).
      if (superseded()) return;
      const failed = unwrapped.find((u) => u.status === 'rejected');
      if (failed) throw (failed as PromiseRejectedResult).reason;
      const [indexKey, ...secrets] = keys;
      this.#rings.setTenant(tenant, secrets, { keyIds, indexKey, ivLength: this.#ivLength, legacyFallbacks: false });
    } finally {
      for (const key of keys) key.fill(0);
    }
    this.#takeCount(current);
    this.#cache.set(tenant, { loaded: true, keyIds: joined, used: true, staleAt, seen, sealed: 0, missedAt: current?.missedAt });
  }

  /**
   * The stamp an updated row gets: the database's clock, or one more than
   * the row had when that is not later (two writes in one millisecond, or a
   * row stamped ahead by an older version's clock). Every update moves a
   * row's stamp up, so a tenant's newest stamp changes with every change
   * and the change check cannot miss one.
   */
  #touched(): SQL {
    const { now } = this.#spec;
    const stamp = this.#table.updatedAt;
    return sql`CASE WHEN ${now} > ${stamp} THEN ${now} ELSE ${stamp} + 1 END`;
  }

  /** Moves what an entry has sealed into the pending counts of its active key. */
  #takeCount(entry: Entry | undefined): void {
    if (entry === undefined || entry.sealed === 0 || !entry.loaded) return;
    this.#counts.add(entry.keyIds.split(',')[0], entry.sealed);
    entry.sealed = 0;
  }

  /**
   * A tenant's first keys: a data key and an index key at generation 1, or
   * whatever a concurrent creator stored; read back, for the timestamps the
   * database gave them.
   */
  async #create(tenant: string): Promise<KeyRow[]> {
    const t = this.#table;
    const rows = await Promise.all((['data', 'index'] as const).map((purpose) => this.#newRow(tenant, purpose, 1, 'active')));
    const stored = () => this.#db.select().from(t).where(eq(t.tenant, tenant)) as Promise<KeyRow[]>;
    try {
      // One statement, so both rows exist or neither; the unique (tenant, purpose, generation) index lets one creator win.
      await this.#db.insert(t).values(rows);
    } catch (e) {
      const theirs = await stored();
      if (theirs.length === 0) throw e;
      return theirs;
    }
    return stored();
  }

  /** A fresh random key, wrapped, as a row. */
  async #newRow(tenant: string, purpose: Purpose, generation: number, state: KeyRow['state']): Promise<NewKeyRow> {
    const keyId = randomBytes(16).toString('base64url');
    const key = randomBytes(KEY_BYTES);
    let wrappedKey: string;
    try {
      wrappedKey = await this.#kek.wrap(key, wrapAad(tenant, keyId, purpose), tenant);
    } finally {
      key.fill(0);
    }
    const now = this.#spec.now;
    return { keyId, tenant, purpose, generation, state, wrappedKey, kek: this.#kek.id, createdAt: now, updatedAt: now, encryptions: 0 };
  }

  async #unwrap(row: KeyRow): Promise<Buffer> {
    const ref = row.kek ?? '';
    if (row.wrappedKey === null || !this.#kek.holds(ref)) throw kekNotHeld(row.tenant, row.keyId, ref);
    try {
      const key = await this.#kek.unwrap(row.wrappedKey, ref, wrapAad(row.tenant, row.keyId, row.purpose), row.tenant);
      if (key.length !== KEY_BYTES) {
        key.fill(0);
        throw codedError('ALE_AUTH_FAILED', 'the unwrapped key is not 32 bytes');
      }
      return key;
    } catch (e) {
      // A provider's own coded error (a key service that cannot be reached) says more than "did not unwrap".
      const code = (e as { code?: unknown })?.code;
      if (typeof code === 'string' && code !== 'ALE_AUTH_FAILED') throw e;
      throw unwrapFailed(row.tenant, row.keyId, ref);
    }
  }

  #markShredded(tenant: string): void {
    this.#shredded.add(tenant);
    this.#rings.deleteTenant(tenant);
    this.#takeCount(this.#cache.get(tenant));
    this.#cache.set(tenant, { loaded: false, keyIds: '', used: true, staleAt: Number.POSITIVE_INFINITY, seen: Number.NaN, sealed: 0 });
  }

  /** The tenant's entry for a synchronous use; starts a background re-read when it is stale, and a change check when one is due. */
  #use(tenant: string): Entry {
    const entry = this.#cache.get(tenant);
    if (entry === undefined) throw this.#shredded.has(tenant) ? keyShredded(tenant) : keyNotLoaded(tenant);
    entry.used = true;
    if (entry.staleAt <= clock.now) {
      entry.staleAt = clock.now + this.#recheckAfterMs;
      this.#refresh(tenant).catch(() => this.#cache.expire(entry, clock.now));
    }
    if (this.#nextCheck <= clock.now) void this.#checkChanges();
    return entry;
  }

  /**
   * One query for rows changed since the last check; the loaded tenants
   * among them are read again. Concurrent callers share one check; the
   * promise settles once those re-reads have, and never rejects (a failed
   * check leaves the entries as they were, to be checked again).
   */
  #checkChanges(): Promise<void> {
    if (this.#checking) return this.#checking;
    this.#nextCheck = clock.now + this.#changeCheckEveryMs;
    // Rows are stamped by the database's clock (the spec's `now`), and the
    // window is measured back from that same clock: no application clock,
    // ours or a writer's, decides what is seen. The window spans the time
    // since the last check (a monotonic clock: skew is an offset, not a
    // rate) plus CHANGE_LOOKBACK for writes stamped before they committed.
    const started = performance.now();
    const since = this.#lastCheck === undefined ? undefined : sql`${this.#spec.now} - ${Math.ceil(started - this.#lastCheck) + CHANGE_LOOKBACK}`;
    const t = this.#table;
    const check = (async () => {
      const changed: { tenant: string; updatedAt: number | string | null }[] = await this.#db
        .select({ tenant: t.tenant, updatedAt: max(t.updatedAt) })
        .from(t)
        .where(since === undefined ? undefined : gt(t.updatedAt, since))
        .groupBy(t.tenant);
      this.#lastCheck = started;
      const reads: Promise<void>[] = [];
      for (const { tenant, updatedAt } of changed) {
        const entry = this.#cache.get(tenant);
        // Any other newest stamp is a change, later or earlier: a row stamped by an older version's clock may lie ahead.
        if (entry?.loaded && Number(updatedAt) !== entry.seen) reads.push(this.#refresh(tenant, true).catch(() => this.#cache.expire(entry, clock.now)));
      }
      await Promise.all(reads);
    })()
      .catch(() => undefined)
      .finally(() => (this.#checking = undefined));
    this.#checking = check;
    return check;
  }

  #makeSealer(): Sealer {
    const cache = this.#cache;
    const rings = this.#rings;
    // The last tenant that passed the check, and the clock time until which
    // it passes again with three comparisons: the earlier of its staleAt and
    // the next change check, as long as the cache's version stays (every
    // change that could make the entry unusable moves it on, eviction's
    // passes included, so that a hot tenant gets its `used` bit back).
    let lastTenant: string | undefined;
    let lastEntry: Entry | undefined;
    let lastUntil = 0;
    let lastVersion = -1;
    /** The tenant's entry, or a throw unless it is loaded: the memo above (three comparisons), else a cache lookup and four comparisons when it is fresh and no check is due, else #use(). */
    const check = (tenant: string): Entry => {
      if (tenant === lastTenant && lastUntil > clock.now && cache.version === lastVersion) return lastEntry as Entry;
      const entry = cache.get(tenant);
      if (entry !== undefined && entry.loaded && entry.staleAt > clock.now && this.#nextCheck > clock.now) {
        entry.used = true;
        lastTenant = tenant;
        lastEntry = entry;
        lastUntil = Math.min(entry.staleAt, this.#nextCheck);
        lastVersion = cache.version;
        return entry;
      }
      const used = this.#use(tenant);
      if (!used.loaded) throw keyShredded(tenant);
      return used;
    };
    /** A v1 value predates the tenant keys: the process-wide ring reads it, once the tenant is known not to be shredded. */
    const readV1 = this.#readV1;
    const legacyText = (stored: string) => typeof stored === 'string' && stored.charCodeAt(1) === 0x31 && stored.startsWith('v1:');
    const legacyBytes = (stored: Uint8Array) => stored[0] === 1;
    const v1Refused = () =>
      codedError('ALE_UNSUPPORTED_VERSION', 'the value is a v1 envelope under the process-wide key, and this store reads none (readV1: false); convertToTenantKeys() moves such values under the tenant key');
    const nowhere = (value: string, t: string, c: string, f: string) =>
      createHmac('sha256', this.#nowhere).update(`${t}:${c}:${f}:`).update(value).digest('base64url');
    /**
     * A loaded tenant whose ring lacks the key a value names: the value is
     * another tenant's (or forged), or under a key another process made
     * since this one read the tenant. Either way it does not open for this
     * tenant: ALE_AUTH_FAILED. A re-read picks up a new key, at most once a
     * MISS_INTERVAL per tenant: each forced re-read unwraps every key of the
     * tenant, and a caller that can make reads fail must not be able to aim
     * that load at the key service.
     */
    const missed = (e: unknown, tenant: string, field: string): unknown => {
      const entry = cache.get(tenant);
      if ((e as { code?: string })?.code !== 'ALE_KEY_NOT_LOADED' || !entry?.loaded) return e;
      if (!(clock.now - (entry.missedAt ?? -Infinity) < MISS_INTERVAL)) {
        entry.missedAt = clock.now;
        cache.expire(entry, 0);
        this.#refresh(tenant).catch(() => undefined);
      }
      return codedError(
        'ALE_AUTH_FAILED',
        `the value of field "${field}" names a key that is not one of tenant "${tenant}"'s keys: it is another tenant's, or under a key made since this process read the tenant's keys (which it reads again)`,
      );
    };
    /** Whether a blind index can be computed for the tenant: false once shredded (its lookups then match nothing). */
    const indexable = (tenant: string): boolean => this.#use(tenant).loaded;
    return {
      // Counted before the seal: a seal that then fails counts too, which errs on the safe side.
      encrypt: (plaintext, t, c, f) => (check(t).sealed++, rings.encrypt(plaintext, t, c, f)),
      encryptBinary: (plaintext, t, c, f) => (check(t).sealed++, rings.encryptBinary(plaintext, t, c, f)),
      // decrypt and decryptBinary are written out rather than made by one
      // higher-order helper: closures of one literal share their call-site
      // feedback, and the two-target call that made cost V8 more than the
      // rest of the check (docs/performance.md, "Keys per tenant").
      decrypt: (stored, t, c, f) => {
        check(t);
        if (legacyText(stored)) {
          if (!readV1) throw v1Refused();
          return processRing.decrypt(stored, t, c, f);
        }
        try {
          return rings.decrypt(stored, t, c, f);
        } catch (e) {
          throw missed(e, t, f);
        }
      },
      decryptBinary: (stored, t, c, f) => {
        check(t);
        if (legacyBytes(stored)) {
          if (!readV1) throw v1Refused();
          return processRing.decryptBinary(stored, t, c, f);
        }
        try {
          return rings.decryptBinary(stored, t, c, f);
        } catch (e) {
          throw missed(e, t, f);
        }
      },
      blindIndex: (value, t, c, f) => (indexable(t) ? rings.blindIndex(value, t, c, f) : nowhere(value, t, c, f)),
      blindIndexes: (value, t, c, f) => {
        if (!indexable(t)) return [nowhere(value, t, c, f)];
        // Rows not converted yet still hold the process-wide ring's index.
        const out = [rings.blindIndex(value, t, c, f)];
        if (!readV1) return out;
        try {
          out.push(processRing.blindIndex(value, t, c, f));
        } catch {
          // no process-wide key configured: there are no v1-era indexes to match
        }
        return out;
      },
    };
  }
}
