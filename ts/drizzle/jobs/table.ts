// What a dialect gives the lease runner (leases.ts): its job table, the
// statements that create it and bring an older one up to date, and how to
// run one.
import type { SQL } from 'drizzle-orm';
import type { KeptTableSpec } from '../kept-tables.js';

/** Its upgrade adds the `fingerprint` column to a job table made before it. */
export interface JobTableSpec extends KeptTableSpec {
  /** The Drizzle table for `name`. */
  table(name: string): unknown;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  execute(db: any, statement: SQL): Promise<unknown>;
}
