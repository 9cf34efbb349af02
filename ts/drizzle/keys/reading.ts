// One read of a tenant's rows into memory: rotate the active key when the
// fleet has sealed its share under it, unwrap what changed, and put the
// tenant's keys in the store's ring of tenants. reads.ts starts reads and
// keeps one per tenant under way.
import { clock, type Entry, type TenantCache } from './cache.js';
import type { StoreInternals } from './internals.js';
import { addGeneration, retireBefore } from './lifecycle.js';
import { dueForRotation, stateOf, tenantRows } from './loading.js';
import type { StoreConfig } from './options.js';
import type { KeyRow } from './table.js';

/** What a read of one tenant reaches of the store. */
export interface TenantReader {
  store: StoreInternals;
  cache: TenantCache;
  config: StoreConfig;
  /** Whether the tenant is known here to be shredded. */
  shredded(): boolean;
  markShredded(): void;
  unwrap(row: KeyRow): Promise<Buffer>;
  /** Puts the tenant's data keys (active first) and index key in the ring of tenants. */
  setKeys(secrets: Buffer[], keyIds: string[], indexKey: Buffer): void;
  /** Moves what an entry has sealed into the pending counts. */
  takeCount(entry: Entry | undefined): void;
}

/**
 * Reads the tenant's rows into its entry. `latest` says whether this read
 * is still the newest one for the tenant: an older read that ends after a
 * newer one, or a read that ends after a shred here, changes nothing.
 */
export async function readTenant(r: TenantReader, tenant: string, latest: () => boolean, mayRotate = true): Promise<void> {
  // What the rows say holds from before they were read.
  const confirmedAt = clock.now;
  const held = r.cache.get(tenant)?.madeHere;
  const { rows, created } = await tenantRows(r.store, tenant, held);
  // Nothing a read finds ends the watch over rows this process made: the
  // read may run inside the transaction that made them (one connection) and
  // see them before a rollback. It ends with the entry (cache.ts). What is
  // kept is the rows as this read found them, so that a write-back restores
  // the table as last read: a key destroyed since stays destroyed, a rewrap
  // keeps its KEK, a rotation its new key, the counts their flushes.
  const madeHere = created || held ? rows : undefined;
  const superseded = () => !latest() || r.shredded();
  if (superseded()) return;
  const state = stateOf(tenant, rows);
  if (state === 'shredded') {
    r.markShredded();
    return;
  }
  const { data, index, seen } = state;
  if (mayRotate && dueForRotation(data[0], r.config.rotateAfterEncryptions)) {
    // The active key has sealed its share of values across the fleet: a
    // new one, then one more read. If the rotation fails (another process
    // rotated first, or the KEK or the table refused), that read finds
    // what there is, and the tenant's next read tries again.
    try {
      await retireBefore(r.store, await addGeneration(r.store, tenant, data));
    } catch {
      // as above
    }
    return readTenant(r, tenant, latest, false);
  }
  const keyIds = data.map((row) => row.keyId);
  const current = r.cache.get(tenant);
  // The active key held here is still the table's: it may seal on, whatever
  // becomes of the unwraps below (keys retired or destroyed elsewhere, a KEK
  // outage).
  if (current?.loaded && current.keyIds[0] === keyIds[0]) current.confirmedAt = Math.max(current.confirmedAt, confirmedAt);
  const staleAt = clock.now + r.config.recheckAfterMs;
  const same = current?.loaded && current.keyIds.length === keyIds.length && current.keyIds.every((id, i) => id === keyIds[i]);
  if (current !== undefined && same && current.staleAt > 0) {
    current.staleAt = staleAt;
    current.seen = seen;
    current.madeHere = madeHere;
    delete current.sealRefused;
    delete current.unwrapsFailed;
    return;
  }
  const unwrapped = await Promise.allSettled([index, ...data].map((row) => r.unwrap(row)));
  const keys = unwrapped.flatMap((u) => (u.status === 'fulfilled' ? [u.value] : []));
  try {
    // A shred that came while this read was unwrapping wins, even when it made the unwrap fail (a KEK per tenant, deleted).
    if (superseded()) return;
    const failed = unwrapped.find((u) => u.status === 'rejected');
    if (failed) {
      const reason = (failed as PromiseRejectedResult).reason as { code?: unknown; message?: unknown } | undefined;
      // A tenant with nothing loaded here has nothing to open with (nor one
      // forgotten or evicted while this read unwrapped): the load fails.
      if (!current?.loaded || r.cache.get(tenant) !== current) throw reason;
      // The rows were read, and only their keys did not unwrap (a KEK
      // outage, most likely, after another process rotated or destroyed a
      // key): the keys held here keep opening values, so the read ends
      // without error, and the entry is fresh until recheckAfterMs, when
      // it is read again and the unwraps tried once more (sooner when a
      // change check still sees the change: its stamp is kept as it was).
      // With another active key in the table, it seals none meanwhile
      // (cache.ts, `sealRefused`).
      if (current.keyIds[0] !== keyIds[0]) current.sealRefused = { code: String(reason?.code), message: String(reason?.message ?? reason) };
      current.unwrapsFailed = true;
      current.madeHere = madeHere;
      current.staleAt = staleAt;
      return;
    }
    const [indexKey, ...secrets] = keys;
    r.setKeys(secrets, keyIds, indexKey);
  } finally {
    for (const key of keys) key.fill(0);
  }
  r.takeCount(current);
  r.cache.set(tenant, { loaded: true, keyIds, used: true, staleAt, seen, confirmedAt, sealed: 0, missedAt: current?.missedAt, madeHere });
}
