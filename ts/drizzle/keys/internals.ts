// The one way the store's administration (admin.ts) reaches the store's
// private state: a symbol-keyed method that TenantKeys defines and nothing
// else calls, so that the store's file keeps its fields private and the
// administration sits in a file of its own.
import type { SQL } from 'drizzle-orm';

export const INTERNALS = Symbol('@sveltycms/ale/tenant-keys-internals');

/** What the administration needs of a store. */
export interface StoreInternals {
  // The query builders differ per dialect; only methods every dialect has are chained.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  db: any;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  table: any;
  /** The stamp an updated key row gets (the database's clock, only ever up). */
  touched(): SQL;
  /** Reads the tenant's rows again into memory, now. */
  refresh(tenant: string): Promise<void>;
  /** The tenant id, checked as every method checks it, or a coded error. */
  checkTenant(tenant: unknown): string;
}
