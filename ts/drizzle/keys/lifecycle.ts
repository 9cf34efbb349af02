// A tenant's keys over their life, beyond loading them: shredding them,
// re-wrapping every key under a new KEK, and describing them. The store's
// methods of the same names call these, through internals.ts.
import { randomBytes } from 'node:crypto';
import { and, eq, isNotNull, lt } from 'drizzle-orm';
import { keyShredded, shredUnseen } from './errors.js';
import type { KekProvider } from './kek.js';
import type { StoreInternals } from './internals.js';
import type { KeyRow, NewKeyRow, Purpose } from './table.js';
import { wrapAad } from './wrap.js';

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
export async function shred(s: StoreInternals, tenantId: string): Promise<void> {
  s.checkTenant(tenantId);
  const t = s.table;
  const now = s.now;
  for (let attempt = 0; ; attempt++) {
    const existing: KeyRow[] = await s.db.select({ keyId: t.keyId }).from(t).where(eq(t.tenant, tenantId));
    if (existing.length > 0) break;
    // Never used: a tombstone at generation 1, which also stops a later load from creating keys.
    try {
      await s.db.insert(t).values(
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
  await destroyKeys(s, tenantId);
}

/** How many times destroyKeys marks the rows before it gives up. */
const SHRED_PASSES = 5;

/**
 * Marks every row of the tenant shredded, with no key, and its keys leave
 * memory here; then its KEK goes, where it has one of its own.
 */
async function destroyKeys(s: StoreInternals, tenant: string): Promise<void> {
  const t = s.table;
  // Again until no row holds a key: a row that another process inserts
  // while the UPDATE runs (a rotation's new key) may not be among the rows
  // the UPDATE reads (on PostgreSQL, those of the moment it began), and the
  // rotation, which looks for a shred after its insert, may have looked
  // before this UPDATE committed.
  for (let pass = 1; ; pass++) {
    await s.db.update(t).set({ state: 'shredded', wrappedKey: null, kek: null, updatedAt: s.touched() }).where(eq(t.tenant, tenant));
    const held: { tenant: string }[] = await s.db.select({ tenant: t.tenant }).from(t).where(and(eq(t.tenant, tenant), isNotNull(t.wrappedKey)));
    if (!held.some((r) => r.tenant === tenant)) break;
    // Each pass takes what the rows hold: a row that still holds a key after several is read from somewhere the UPDATE does not write.
    if (pass === SHRED_PASSES) throw shredUnseen(tenant);
  }
  s.markShredded(tenant);
  // A KEK per tenant goes last, once no row can be unwrapped with it. If
  // the key service fails here, the tenant is shredded in the database and
  // its KEK remains: shred() again deletes it.
  await s.kek().destroy?.(tenant);
}

/**
 * Re-wraps every stored key under `next`, one row per key (data rows are
 * never touched); the store then makes it the KEK new keys are wrapped
 * under, and keys under the previous KEK keep opening there. Safe to rerun: a key already
 * under `newKek` is skipped. A process still on the old KEK alone wraps the
 * keys it makes under it meanwhile, so once every process runs with the
 * new KEK first, rerun until a run reports `rewrapped: 0`; then, once the
 * backups that still need the old KEK have expired, destroy it: a tenant
 * shredded before the rewrap is gone from those backups too.
 */
export async function rewrap(s: StoreInternals, next: KekProvider): Promise<{ rewrapped: number; skipped: number }> {
  const t = s.table;
  const rows: KeyRow[] = await s.db.select().from(t).orderBy(t.keyId);
  // What the row holds now: a shred or another rewrap may have changed it since it was read.
  const held = async (row: KeyRow) => {
    const [now]: { wrappedKey: string | null }[] = await s.db.select({ wrappedKey: t.wrappedKey }).from(t).where(eq(t.keyId, row.keyId));
    return now?.wrappedKey ?? null;
  };
  let rewrapped = 0;
  let skipped = 0;
  for (const row of rows) {
    if (row.wrappedKey === null || row.kek === null) continue;
    let wrapped: string | null;
    try {
      wrapped = await wrappedUnder(s, next, row, row.wrappedKey);
    } catch (e) {
      // A key shredded since the read (its KEK per tenant deleted) is not
      // this run's to move; any other failure stops the run, which is safe
      // to rerun.
      if ((await held(row)) !== row.wrappedKey) continue;
      throw e;
    }
    if (wrapped === null) {
      skipped++;
      continue;
    }
    await s.db
      .update(t)
      .set({ wrappedKey: wrapped, kek: next.id, updatedAt: s.touched() })
      .where(and(eq(t.keyId, row.keyId), eq(t.wrappedKey, row.wrappedKey)));
    // Counted when the row holds it now, since not every driver says how
    // many rows an UPDATE changed.
    if ((await held(row)) === wrapped) rewrapped++;
  }
  return { rewrapped, skipped };
}

/** The row's key wrapped under `next`, or null when it is under `next` already and the key service has nothing newer. */
async function wrappedUnder(s: StoreInternals, next: KekProvider, row: KeyRow, wrappedKey: string): Promise<string | null> {
  const aad = wrapAad(row.tenant, row.keyId, row.purpose);
  // Under this KEK already: a key service may still move it to the KEK's newest version.
  if (row.kek === next.id) return next.rewrap ? next.rewrap(wrappedKey, row.kek, aad, row.tenant) : null;
  const key = await s.unwrap(row);
  try {
    return await next.wrap(key, aad, row.tenant);
  } finally {
    key.fill(0);
  }
}

/** The tenant's keys as stored (no key material): ids, purposes, generations, states, KEK references. */
export async function describeTenant(s: StoreInternals, tenantId: string): Promise<TenantKeyInfo[]> {
  s.checkTenant(tenantId);
  const t = s.table;
  const rows: KeyRow[] = await s.db.select().from(t).where(eq(t.tenant, tenantId)).orderBy(t.purpose, t.generation);
  return rows.map((r) => ({
    keyId: r.keyId,
    purpose: r.purpose,
    generation: Number(r.generation),
    state: r.state,
    kek: r.kek,
    encryptions: Number(r.encryptions),
    pending: s.pending(tenantId, r.keyId),
    createdAt: new Date(Number(r.createdAt)),
    updatedAt: new Date(Number(r.updatedAt)),
  }));
}


/**
 * A new active data key for the tenant; the previous ones become
 * decrypt-only, so existing values keep opening. Run convertToTenantKeys()
 * to move them under the new key. The index key stays: blind indexes keep
 * matching. Two processes rotating at once make one new key.
 */
export async function rotate(s: StoreInternals, tenantId: string): Promise<{ keyId: string }> {
  s.checkTenant(tenantId);
  await s.refresh(tenantId);
  if (s.isShredded(tenantId)) throw keyShredded(tenantId);
  const t = s.table;
  const rows: KeyRow[] = await s.db.select().from(t).where(and(eq(t.tenant, tenantId), eq(t.purpose, 'data')));
  let added: NewKeyRow;
  try {
    added = await addGeneration(s, tenantId, rows);
  } catch (e) {
    // A concurrent rotate took this generation (the unique index): its key is the new one.
    await s.refresh(tenantId);
    const theirs = s.activeKeyIds(tenantId);
    // Their active key is new only if it is none of the rows read before (destroyed keys among them).
    if (theirs === undefined || rows.some((r) => r.keyId === theirs[0])) throw e;
    return { keyId: theirs[0] };
  }
  await retireBefore(s, added);
  await s.refresh(tenantId);
  // A shred that committed after the rotation looked for one took its key (destroyKeys).
  if (s.isShredded(tenantId)) throw keyShredded(tenantId);
  return { keyId: added.keyId };
}

/**
 * Stores the tenant's next data key, active. Rejects with the insert's
 * error when another process stored that generation first, and with
 * ALE_KEY_SHREDDED when the tenant was shredded meanwhile.
 */
export async function addGeneration(s: StoreInternals, tenant: string, dataRows: KeyRow[]): Promise<NewKeyRow> {
  const generation = Math.max(0, ...dataRows.map((r) => Number(r.generation))) + 1;
  const row = await s.newRow(tenant, 'data', generation, 'active');
  const t = s.table;
  await s.db.insert(t).values(row);
  // A shred that marked the tenant's rows before this one existed left it
  // holding a key: it goes the way of the others, and so does a KEK per
  // tenant that the wrap made again after the shred deleted it. A shred
  // that commits after this read finds the row itself (destroyKeys).
  const states: { tenant: string }[] = await s.db.select({ tenant: t.tenant }).from(t).where(and(eq(t.tenant, tenant), eq(t.state, 'shredded')));
  if (states.some((r) => r.tenant === tenant)) {
    await destroyKeys(s, tenant);
    throw keyShredded(tenant);
  }
  return row;
}

/** Makes the data keys older than `row` decrypt-only. */
export async function retireBefore(s: StoreInternals, row: NewKeyRow): Promise<void> {
  const t = s.table;
  await s.db
    .update(t)
    .set({ state: 'decrypt-only', updatedAt: s.touched() })
    .where(and(eq(t.tenant, row.tenant), eq(t.purpose, 'data'), eq(t.state, 'active'), lt(t.generation, row.generation)));
}
