// The one way the store's administration (admin.ts) reaches the store's
// private state: a symbol-keyed method that TenantKeys defines and nothing
// else calls, so that the store's file keeps its fields private and the
// administration sits in a file of its own.
import type { SQL } from 'drizzle-orm';
import type { KekProvider } from './kek.js';
import type { KeyRow, NewKeyRow, Purpose } from './table.js';

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
  /** The database's clock, for a row inserted now. */
  now: SQL;
  /** The KEK new keys are wrapped under (ALE_NOT_INITIALIZED before bind()). */
  kek(): KekProvider;
  /** The row's key, unwrapped by the store's KEK; the caller wipes it. */
  unwrap(row: KeyRow): Promise<Buffer>;
  /** Marks the tenant shredded in memory: its keys leave the ring at once. */
  markShredded(tenant: string): void;
  /** This process's encryptions under `keyId` of `tenant` not flushed yet. */
  pending(tenant: string, keyId: string): number;
  /** A fresh key, wrapped, as a row stamped by the database's clock. */
  newRow(tenant: string, purpose: Purpose, generation: number, state: KeyRow['state']): Promise<NewKeyRow>;
  /** Whether the tenant is known here to be shredded. */
  isShredded(tenant: string): boolean;
  /** The ids of the tenant's loaded data keys, active first; undefined when not loaded. */
  activeKeyIds(tenant: string): string[] | undefined;
}
