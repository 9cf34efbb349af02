// The tenant key store's facade and its memory: each tenant's keys, loaded
// from the key table into one ring of tenants before its queries run, kept
// fresh, and counted. Its rooms: options.ts, wrap.ts, loading.ts,
// freshness.ts, sealer.ts (what `keys` columns call), lifecycle.ts, admin.ts.
import { eq, sql } from 'drizzle-orm';
import * as native from '../../../index.js';
import type { KeyRing } from '../../../index.js';
import { codedError } from '../../shared/errors.js';
import { withTenant as inTenantScope } from '../scope.js';
import { useStore, type ScopeKeys } from '../key-stores.js';
import { clock, RECHECK_MAX_MS, startClock, TenantCache, type Entry } from './cache.js';
import { everyWhileAlive } from './timers.js';
import { keyShredded, notLoaded, reported, sealRefused } from './errors.js';
import { destroyRetired, listTenants, type KeyUse, type TenantPage } from './admin.js';
import { PendingCounts } from './counts.js';
import { INTERNALS, type StoreInternals } from './internals.js';
import { kekOf, type KekInput, type KekProvider } from './kek.js';
import { newKeyRow, unwrapRow } from './wrap.js';
import { makeSealer, type TenantSealer } from './sealer.js';
import { TenantReads } from './reads.js';
import { shredStored } from './loading.js';
import { ChangeCheck } from './freshness.js';
import { describeTenant, rewrap, rotate, shred, type TenantKeyInfo } from './lifecycle.js';
export type { TenantKeyInfo } from './lifecycle.js';
import { checkedDb, checkTenant, parseOptions, unbound, unboundStore, type StoreConfig, type TenantKeysOptions } from './options.js';
export type { TenantKeysOptions } from './options.js';
import { ensureKeyTable, touchedStamp, type KeyRow, type KeyTableSpec, type NewKeyRow, type Purpose } from './table.js';

// The query builders differ per dialect; the store only chains methods every dialect has.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = any;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyTable = any;

const SETTLED: Promise<void> = Promise.resolve(); // what load() returns for a tenant in memory

/**
 * The key store of one database. Values of a column with `keys: store` are
 * sealed under the tenant's active data key; every method that touches the
 * database is async, and the columns' synchronous hooks only read memory.
 */
export class TenantKeys implements ScopeKeys {
  /** The database and the KEK: given to tenantKeys(), or later to bind() (a store declared in a schema module). */
  #boundDb: AnyDb | undefined;
  #boundKek: KekProvider | undefined;
  readonly #spec: KeyTableSpec;
  /** The options, checked once (keys/options.ts). */
  readonly #config: StoreConfig;
  readonly #table: AnyTable;
  readonly #cache: TenantCache;
  /** Every loaded tenant's keys, in one native ring (or the JS backend's), which hands each call to the tenant's keys. */
  readonly #rings: KeyRing;
  /** Reads of tenants' rows under way (keys/reads.ts): concurrent loads of one tenant share one. */
  readonly #reads = new TenantReads(
    (tenant) => ({
      store: this[INTERNALS](),
      cache: this.#cache,
      config: this.#config,
      shredded: () => this.#shredded.has(tenant),
      markShredded: () => this.#markShredded(tenant),
      unwrap: (row) => unwrapRow(this.#kek, row),
      setKeys: (secrets, keyIds, indexKey) => this.#rings.setTenant(tenant, secrets, { keyIds, indexKey, ivLength: this.#config.ivLength, legacyFallbacks: false }),
      takeCount: (entry) => this.#takeCount(entry),
    }),
    (tenant) => this.#cache.get(tenant) !== undefined,
    (tenant) => this.#loadFailures.delete(tenant), // a success ends what a failed load left for the columns to throw
  );
  /** Tenants known to be shredded: kept apart from the bounded cache, so eviction cannot forget a shred. */
  readonly #shredded = new Set<string>();
  /** Clock time of the next change check (never when change checks are off), shared with the sealer. */
  readonly #times = { nextCheck: 0 };
  /** The change check (keys/freshness.ts). */
  readonly #changes: ChangeCheck;
  /** The error of each tenant's last failed load through withTenant(): what its columns throw until a load succeeds. */
  readonly #loadFailures = new Map<string, unknown>();
  /** Encryption counts taken from the entries, not written to the key table yet. */
  readonly #counts = new PendingCounts();

  /** What `keys` columns call: the tenant's ring from memory, or a coded error. */
  readonly sealer: TenantSealer;

  /**
   * `db` and `options.kek` may be left out, and given to bind() at start-up:
   * a schema module declares the store with neither, so that importing it
   * (as `vite build` does, with no secrets set) needs no database and no KEK.
   */
  constructor(db: AnyDb | undefined, spec: KeyTableSpec, options: TenantKeysOptions = {}) {
    const config = parseOptions(options);
    if (db !== undefined && db !== null) this.#boundDb = checkedDb(db);
    this.#spec = spec;
    this.#config = config;
    this.#table = spec.table(config.table);
    if (options?.kek !== undefined) this.#boundKek = kekOf(options.kek);
    this.#cache = new TenantCache(config.maxTenants, (tenant, entry) => {
      this.#takeCount(entry);
      this.#rings.deleteTenant(tenant);
    });
    this.#times.nextCheck = this.#config.changeCheckEveryMs > 0 ? 0 : Number.POSITIVE_INFINITY;
    this.#changes = new ChangeCheck({
      db: () => this.#db,
      table: this.#table,
      now: spec.now,
      everyMs: this.#config.changeCheckEveryMs,
      times: this.#times,
      changed: (tenant, newest) => {
        const entry = this.#cache.get(tenant);
        // Any other newest stamp is a change, later or earlier: a row stamped by an older version's clock may lie ahead.
        if (!entry?.loaded || newest === entry.seen) return undefined;
        // A tenant whose last re-read could not unwrap its keys (a KEK outage) is read again in the background, one
        // read at a time, so that the check, and every load that waits for it, does not wait on the key service; it
        // seals nothing under a superseded key meanwhile. A shred is not left to that read: the check waits for a
        // look at the tenant's rows alone, so the bound on seeing a shred holds (SECURITY.md).
        if (entry.unwrapsFailed) {
          if (!this.#reads.has(tenant)) void this.#reads.refresh(tenant, true).catch(() => undefined);
          return shredStored(this[INTERNALS](), tenant).then((gone) => void (gone && this.#markShredded(tenant)));
        }
        return this.#reads.refresh(tenant, true).catch(() => this.#cache.expire(entry, clock.now));
      },
    });
    // A failed write of the counts stays pending for the next.
    if (config.flushEveryMs > 0) everyWhileAlive(this, config.flushEveryMs, (s) => s.bound && s.flush().catch(() => undefined));
    this.#rings = native.KeyRing.forTenants({ ivLength: this.#config.ivLength });
    startClock();
    this.sealer = makeSealer({
      cache: this.#cache,
      rings: this.#rings,
      times: this.#times,
      readV1: config.readV1,
      use: (tenant) => this.#use(tenant),
      refresh: (tenant) => this.#reads.refresh(tenant),
    });
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
  ready(): Promise<void> {
    return reported(() => ensureKeyTable(this.#spec, this.#db, this.#config.table));
  }

  /**
   * Adds this process's encryption counts to the key table (one UPDATE per
   * key with new encryptions), as it also does every flushEveryMs ms. Run it
   * before a process exits: counts not flushed are not in the fleet-wide
   * count. Counts whose write fails stay for the next flush.
   */
  flush(): Promise<void> {
    return reported(() => this.#writeCounts(() => this.#db));
  }

  #writeCounts(db: () => AnyDb): Promise<void> {
    for (const entry of this.#cache.values()) this.#takeCount(entry);
    const t = this.#table;
    return this.#counts.flush((keyId, n) => db().update(t).set({ encryptions: sql`${t.encryptions} + ${n}` }).where(eq(t.keyId, keyId)));
  }

  /**
   * Makes the tenant's keys usable by `keys` columns, creating them on the
   * tenant's first use. Resolves at once when they are in memory and fresh
   * (read within recheckAfterMs: a re-read in the background moves staleAt
   * on at once, confirmedAt when done); concurrent calls for one tenant
   * share one read. A shredded tenant loads as shredded (ALE_KEY_SHREDDED).
   */
  load(tenantId: string): Promise<void> {
    return this.#load(tenantId, false);
  }

  /** load(), once `checked` after a change check it waited for. */
  #load(tenantId: string, checked: boolean): Promise<void> {
    const entry = this.#cache.get(tenantId);
    // An entry whose seals are refused (another active key it could not unwrap) seals nothing under unconfirmed keys: its
    // staleAt alone says when to read again, so that a KEK outage does not make every load wait for the service's retries.
    if (entry !== undefined && entry.staleAt > clock.now && (clock.now - entry.confirmedAt < RECHECK_MAX_MS || entry.sealRefused !== undefined)) {
      entry.used = true;
      if (checked || this.#times.nextCheck > clock.now) return SETTLED;
      // A change check is due: wait for it (and for the re-reads it starts),
      // so that work run through load() never uses keys older than the bound.
      // One check, not until none is due: a check slower than everyMs is
      // due again when it ends, and load() would wait for ever.
      return this.#changes.run().then(() => this.#load(tenantId, true));
    }
    return this.#reads.refresh(checkTenant(tenantId));
  }

  /** withTenant() itself (`@sveltycms/ale/drizzle`), with this store among those it loads from even before a column names it. */
  withTenant<T>(tenantId: string, fn: () => T): Promise<Awaited<T>> {
    useStore(this);
    // Unbound, withTenant() skips the store: its load says why (ALE_NOT_INITIALIZED).
    return this.bound ? inTenantScope(tenantId, fn) : Promise.resolve(tenantId).then((t) => this.load(t)).then(() => inTenantScope(tenantId, fn));
  }

  /** For withTenant() (key-stores.ts): the load of the tenant's keys; undefined when they are in memory and fresh, or the store is not bound. */
  keysFor(tenantId: string): Promise<void> | undefined {
    if (!this.bound) return undefined;
    const load = this.load(tenantId);
    if (load === SETTLED) return undefined;
    const failures = this.#loadFailures;
    failures.delete(tenantId);
    return load.catch((e) => {
      // Keys in memory that could not be checked are not used by work run
      // through withTenant(): its columns throw why (SECURITY.md, shredding).
      this.forget(tenantId);
      failures.set(tenantId, e);
      // Bounded as the tenants in memory are: the oldest failure goes first.
      if (failures.size > this.#config.maxTenants) failures.delete(failures.keys().next().value as string);
    });
  }

  /**
   * The store's last use, before its database closes: writes the counts not
   * flushed yet, forgets every key in memory, idles the flush timer, unbinds
   * the database and the KEK (bind() again to reuse it) and leaves
   * withTenant()'s stores. It closes even when the write fails, and then
   * rejects with the write's error: those counts are lost.
   */
  async close(): Promise<void> {
    // Unbound first (withTenant(), the timers and loads skip or refuse it until bind()), so that no key comes in while the
    // counts are written; forgotten, so that their seals are in those counts, and reads under way change nothing (#reads).
    const db = this.#boundDb;
    this.#boundDb = this.#boundKek = undefined;
    for (const tenant of [...this.#cache.tenants()]) this.forget(tenant);
    this.#reads.clear();
    this.#loadFailures.clear();
    this.#shredded.clear(); // a load reads each tombstone again, from the database bind() gives
    try {
      if (db !== undefined) await reported(() => this.#writeCounts(() => db));
    } finally {
      this.#counts.clear();
    }
  }

  /**
   * A new active data key; the previous ones become decrypt-only, so
   * existing values keep opening (keys/lifecycle.ts, rotate). Run
   * convertToTenantKeys() to move them under the new key.
   */
  rotate(tenantId: string): Promise<{ keyId: string }> {
    return reported(() => rotate(this[INTERNALS](), tenantId));
  }

  /**
   * Destroys every key of the tenant and leaves a tombstone (keys/lifecycle.ts,
   * shred): its values fail with ALE_KEY_SHREDDED here at once, and in other
   * processes within the bound SECURITY.md states; with a KEK per tenant, the
   * tenant's KEK is deleted too.
   */
  shred(tenantId: string): Promise<void> {
    return reported(() => shred(this[INTERNALS](), tenantId));
  }

  /** Re-wraps every stored key under `newKek`, the KEK new keys are then wrapped under (keys/lifecycle.ts); safe to rerun. */
  async rewrap(newKek: KekInput): Promise<{ rewrapped: number; skipped: number }> {
    const next = kekOf(newKek);
    const current = this.#kek;
    // This store opens what the run has moved from its first row on, and
    // still wraps new keys under the current KEK until the run is done; a
    // run that fails leaves it so. A new KEK of this one's id elsewhere is
    // refused here, before any row (ringOf).
    const during = kekOf([current, next]);
    this.#boundKek = during;
    const done = await reported(() => rewrap(this[INTERNALS](), next));
    // Unless the store was closed (or bound anew) meanwhile.
    if (this.#boundKek === during) this.#boundKek = kekOf([next, current]);
    return done;
  }

  /** The tenant's keys as stored (no key material): ids, purposes, generations, states, KEK references, counts. */
  describe(tenantId: string): Promise<TenantKeyInfo[]> {
    return reported(() => describeTenant(this[INTERNALS](), tenantId));
  }

  /** The id of the tenant's active data key, from memory (ALE_KEY_NOT_LOADED, ALE_KEY_SHREDDED, or a refused seal's error, as for a column): what a v2 value names when it needs no conversion. */
  activeKeyId(tenantId: string): string {
    const entry = this.#use(tenantId);
    if (!entry.loaded) throw keyShredded(tenantId);
    if (entry.sealRefused !== undefined) throw sealRefused(tenantId, entry.sealRefused); // as a seal would
    return entry.keyIds[0];
  }

  /** A page of the key table's tenants, in id order: `{ after: page.next }` gives the next one. */
  tenants(options?: { after?: string; limit?: number }): Promise<TenantPage> {
    return reported(() => listTenants(this[INTERNALS](), options));
  }

  /** Destroys the tenant's decrypt-only data keys once no value in `uses` needs them, else ALE_KEY_IN_USE (keys/admin.ts). */
  destroyRetired(tenantId: string, uses: KeyUse[], options?: { retiredForMs?: number }): Promise<{ destroyed: string[]; waiting: string[] }> {
    return reported(() => destroyRetired(this[INTERNALS](), tenantId, uses, this, options));
  }

  /** What admin.ts reaches of the store (internals.ts). */
  [INTERNALS](): StoreInternals {
    return {
      db: this.#db,
      table: this.#table,
      touched: () => touchedStamp(this.#table, this.#spec.now),
      refresh: (tenant) => this.#reads.refresh(tenant, true),
      checkTenant,
      now: this.#spec.now,
      kek: () => this.#kek,
      unwrap: (row) => unwrapRow(this.#kek, row),
      markShredded: (tenant) => this.#markShredded(tenant),
      newRow: (tenant, purpose, generation, state) => this.#newRow(tenant, purpose, generation, state),
      isShredded: (tenant) => this.#shredded.has(tenant),
      activeKeyIds: (tenant) => {
        const entry = this.#cache.get(tenant);
        return entry?.loaded ? [...entry.keyIds] : undefined;
      },
      pending: (tenant, keyId) => {
        const entry = this.#cache.get(tenant);
        const active = entry?.loaded ? entry.keyIds[0] : undefined;
        return this.#counts.pending(keyId) + (keyId === active ? (entry?.sealed ?? 0) : 0);
      },
    };
  }

  /** Whether the tenant is known here to be shredded (after a load, a shred, or a re-read that found its tombstone). */
  isShredded(tenantId: string): boolean {
    return this.#shredded.has(tenantId);
  }

  /** Drops the tenant's keys from memory (not from the table). */
  forget(tenantId: string): void {
    this.#takeCount(this.#cache.get(tenantId));
    this.#cache.delete(tenantId);
    this.#loadFailures.delete(tenantId);
    this.#rings.deleteTenant(tenantId);
  }

  /** Moves what an entry has sealed into the pending counts of its active key. */
  #takeCount(entry: Entry | undefined): void {
    if (entry === undefined || entry.sealed === 0 || !entry.loaded) return;
    this.#counts.add(entry.keyIds[0], entry.sealed);
    entry.sealed = 0;
  }

  /** A fresh random key, wrapped, as a row stamped by the database's clock. */
  #newRow(tenant: string, purpose: Purpose, generation: number, state: KeyRow['state']): Promise<NewKeyRow> {
    return newKeyRow(this.#kek, this.#spec.now, tenant, purpose, generation, state);
  }

  #markShredded(tenant: string): void {
    this.#shredded.add(tenant);
    this.#rings.deleteTenant(tenant);
    this.#takeCount(this.#cache.get(tenant));
    this.#cache.set(tenant, { loaded: false, keyIds: [], used: true, staleAt: Number.POSITIVE_INFINITY, seen: Number.NaN, confirmedAt: Number.POSITIVE_INFINITY, sealed: 0 });
  }

  /** The tenant's entry for a synchronous use; starts a background re-read when it is stale, and a change check when one is due. */
  #use(tenant: string): Entry {
    const entry = this.#cache.get(tenant);
    if (entry === undefined) throw this.#shredded.has(tenant) ? keyShredded(tenant) : this.bound ? notLoaded(tenant, this.#loadFailures) : unboundStore(this.#boundDb !== undefined);
    entry.used = true;
    if (entry.staleAt <= clock.now) {
      entry.staleAt = clock.now + this.#config.recheckAfterMs;
      this.#reads.refresh(tenant).catch(() => this.#cache.expire(entry, clock.now));
    }
    if (this.#times.nextCheck <= clock.now) void this.#changes.run();
    return entry;
  }
}
