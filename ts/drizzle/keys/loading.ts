// Reading a tenant's rows from the key table: creating its first keys when
// it has none (or writing back those this process created and lost to a
// rollback), telling what the rows say (shredded, or which data keys and
// which index key), and when the active key is due for rotation. The store
// unwraps what this finds and puts it in memory.
import { and, eq, sql } from 'drizzle-orm';
import { countsUnreadable, incompleteKeys } from './errors.js';
import type { StoreInternals } from './internals.js';
import type { KeyRow } from './table.js';

/**
 * The tenant's rows, exactly its own whatever the column's collation
 * compares as equal, and whether this call wrote them. When it has none:
 * `madeHere`, the rows of a tenant whose keys this process created, as it
 * last read them (cache.ts, Entry), written back; else its first keys (a
 * data key and an index key), created.
 */
export async function tenantRows(s: StoreInternals, tenant: string, madeHere?: readonly KeyRow[]): Promise<{ rows: KeyRow[]; created: boolean }> {
  const t = s.table;
  const own = (rows: KeyRow[]) => rows.filter((r) => r.tenant === tenant);
  const stored = async () => own(await s.db.select().from(t).where(eq(t.tenant, tenant)));
  const rows = await stored();
  if (rows.length > 0) return { rows, created: false };
  // The rows of a tenant whose keys this process created are gone: the
  // transaction they were made in may have rolled back (the store's db was
  // the app's one connection). Values may be sealed under their keys since,
  // so the rows are written back as last read; new keys would leave those
  // values unreadable.
  const fresh = madeHere?.length
    ? madeHere.map((row) => ({ ...row, updatedAt: s.now }))
    : await Promise.all((['data', 'index'] as const).map((purpose) => s.newRow(tenant, purpose, 1, 'active')));
  try {
    // One statement, so both rows exist or neither; the unique (tenant, purpose, generation) index lets one creator win.
    await s.db.insert(t).values(fresh);
  } catch (e) {
    const theirs = await stored();
    if (theirs.length === 0) throw e;
    return { rows: theirs, created: false };
  }
  // read back, for the timestamps the database gave them
  return { rows: await stored(), created: true };
}

/** Whether the tenant's rows say it is shredded: one query, no key service. */
export async function shredStored(s: StoreInternals, tenant: string): Promise<boolean> {
  const t = s.table;
  return (await s.db.select({ one: sql`1` }).from(t).where(and(eq(t.tenant, tenant), eq(t.state, 'shredded'))).limit(1)).length > 0;
}

/** What a tenant's rows say: shredded, or its usable data keys (active first), its index key and its newest stamp. */
export function stateOf(tenant: string, rows: KeyRow[]): 'shredded' | { data: KeyRow[]; index: KeyRow; seen: number } {
  if (rows.some((r) => r.state === 'shredded')) return 'shredded';
  if (rows.some((r) => !Number.isFinite(Number(r.encryptions)))) throw countsUnreadable(tenant);
  // Number(): a driver of safe integers (bun:sqlite's safeIntegers, better-sqlite3's) reads bigints.
  const data = rows.filter((r) => r.purpose === 'data' && r.state !== 'destroyed').sort((a, b) => Number(b.generation) - Number(a.generation));
  const index = rows.find((r) => r.purpose === 'index');
  if (data.length === 0) throw incompleteKeys(tenant, 'data key');
  if (!index) throw incompleteKeys(tenant, 'index key');
  return { data, index, seen: Math.max(...rows.map((r) => Number(r.updatedAt))) };
}

/** Whether the active data key has sealed its share of values across the fleet (0: never). */
export function dueForRotation(active: KeyRow, rotateAfterEncryptions: number): boolean {
  return rotateAfterEncryptions > 0 && active.state === 'active' && Number(active.encryptions) >= rotateAfterEncryptions;
}
