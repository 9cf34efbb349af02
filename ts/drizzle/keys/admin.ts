// What an operator does with a key store beyond one tenant's keys: list the
// tenants page by page, and destroy a tenant's decrypt-only data keys once
// no value needs them. The store's methods of the same names call these.
import { and, eq, gt, inArray, sql, type Column, type SQL, type Table } from 'drizzle-orm';
import { codedError } from '../../shared/errors.js';
import { ask, COLUMN_PROBE } from '../asking.js';
import { SEAL_CONFIRMED_WITHIN_MS } from './cache.js';
import type { StoreInternals } from './internals.js';

/** One tenant of the key table, as keys.tenants() lists it. */
export interface TenantListing {
  tenant: string;
  /** Its keys were destroyed (keys.shred). */
  shredded: boolean;
}

/** A page of tenants, by id; `next` is the `after` of the next page, undefined on the last. */
export interface TenantPage {
  tenants: TenantListing[];
  next: string | undefined;
}

/** Where the values of a tenant under `keys` live: a table, how it names a row's tenant, and its encrypted columns with those keys. */
export interface KeyUse {
  table: Table;
  /**
   * encryptedText/encryptedJson columns of the table that have `keys:
   * store`. Every row is looked at, whatever its tenant column says: a
   * value is sealed under the tenant in scope, which the row need not name,
   * and key ids are random, so no other tenant's value names one.
   */
  columns: Column[];
}

const MAX_PAGE = 10_000;
/** How long a key must have been decrypt-only before destroyRetired takes it: longer than any process seals under keys it has not read again. */
const DEFAULT_RETIRED_FOR_MS = SEAL_CONFIRMED_WITHIN_MS + 30_000;

/** Up to `limit` tenants with an id after `after`, in id order (the key table's collation). */
export async function listTenants(s: StoreInternals, options: { after?: string; limit?: number } = {}): Promise<TenantPage> {
  const limit = options.limit ?? 100;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) throw codedError('ALE_INVALID_INPUT', `keys.tenants: limit must be a whole number from 1 to ${MAX_PAGE}`);
  if (options.after !== undefined) s.checkTenant(options.after);
  const t = s.table;
  const rows: { tenant: string; shredded: number | string }[] = await s.db
    .select({ tenant: t.tenant, shredded: sql<number>`max(case when ${t.state} = 'shredded' then 1 else 0 end)` })
    .from(t)
    .where(options.after === undefined ? undefined : gt(t.tenant, options.after))
    .groupBy(t.tenant)
    .orderBy(t.tenant)
    .limit(limit);
  const tenants = rows.map((r) => ({ tenant: r.tenant, shredded: Number(r.shredded) === 1 }));
  return { tenants, next: rows.length === limit ? tenants[tenants.length - 1].tenant : undefined };
}

/**
 * Destroys the tenant's decrypt-only data keys (left by rotations) that have
 * been so for `retiredForMs` (default 2 minutes: other processes seal under
 * a key until they see it retired), once no value in `uses` names one: their rows stay, as `destroyed` tombstones
 * with no key. A value still under one of them is refused with
 * ALE_KEY_IN_USE, naming the table and column and counting the values, and
 * nothing is destroyed: run convertToTenantKeys first. The check covers the
 * columns given, so give every column that holds the tenant's values.
 */
export async function destroyRetired(
  s: StoreInternals,
  tenantId: string,
  uses: KeyUse[],
  own: unknown,
  options: { retiredForMs?: number } = {},
): Promise<{ destroyed: string[]; waiting: string[] }> {
  const tenant = s.checkTenant(tenantId);
  if (!Array.isArray(uses) || uses.length === 0) {
    throw codedError('ALE_INVALID_INPUT', 'keys.destroyRetired: give the tables and keys columns that hold the tenant\'s values (uses), so that no value still needing a key loses it');
  }
  // Other processes seal under a key until they see it retired (SEAL_CONFIRMED_WITHIN_MS at the most, cache.ts):
  // a key retired more recently may still be getting values that the check below cannot see yet.
  const retiredForMs = options.retiredForMs ?? DEFAULT_RETIRED_FOR_MS;
  if (!Number.isInteger(retiredForMs) || retiredForMs < 0) throw codedError('ALE_INVALID_INPUT', 'keys.destroyRetired: options.retiredForMs must be a whole number of milliseconds');
  const t = s.table;
  const retired: { keyId: string; old: number | string | boolean }[] = await s.db
    .select({ keyId: t.keyId, old: sql<number>`case when ${t.updatedAt} <= ${s.now} - ${retiredForMs} then 1 else 0 end` })
    .from(t)
    .where(and(eq(t.tenant, tenant), eq(t.purpose, 'data'), eq(t.state, 'decrypt-only')));
  const ids = retired.filter((r) => Number(r.old) === 1).map((r) => r.keyId);
  const waiting = retired.filter((r) => Number(r.old) !== 1).map((r) => r.keyId);
  // Every column is checked first: a wrong one is refused whether or not a key is due.
  const checks = uses.flatMap((use) =>
    (use?.columns ?? []).map((column) => {
      const info = ask(column, COLUMN_PROBE) as { storage?: unknown; keys?: unknown } | undefined;
      const name = (column as { name?: string })?.name ?? String(column);
      if (typeof info !== 'object' || info === null || info.keys === undefined || info.keys !== own) {
        throw codedError('ALE_INVALID_INPUT', `keys.destroyRetired: column "${name}" is not an encrypted column with keys: this store`);
      }
      return { use, column, name, binary: info.storage === 'binary' };
    }),
  );
  if (ids.length === 0) return { destroyed: [], waiting };
  for (const { use, column, name, binary } of checks) {
    const cell = sql`${column}`;
    // The prefix that names a key, compared as it is (LIKE would read a key id's `_` as a wildcard).
    const named: SQL = binary
      ? sql`substr(${cell}, 1, 17) in ${ids.map((id) => Buffer.concat([Buffer.of(2), Buffer.from(id, 'base64url')]))}`
      : sql`substr(${cell}, 1, 26) in ${ids.map((id) => `v2:${id}:`)}`;
    const [{ n }] = await s.db.select({ n: sql<number>`count(*)` }).from(use.table).where(named);
    if (Number(n) > 0) {
      throw codedError(
        'ALE_KEY_IN_USE',
        `keys.destroyRetired: ${Number(n)} value(s) in column "${name}" are still under a decrypt-only key of tenant "${tenant}"; run convertToTenantKeys first, and nothing was destroyed`,
      );
    }
  }
  await s.db
    .update(t)
    .set({ state: 'destroyed', wrappedKey: null, kek: null, updatedAt: s.touched() })
    .where(and(eq(t.tenant, tenant), eq(t.state, 'decrypt-only'), inArray(t.keyId, ids)));
  await s.refresh(tenant);
  return { destroyed: ids, waiting };
}
