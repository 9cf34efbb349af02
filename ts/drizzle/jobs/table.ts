// What a dialect gives the lease runner (leases.ts): its job table, the
// statements that create it, and how to run one.
import type { SQL } from 'drizzle-orm';

export interface JobTableSpec {
  /** The Drizzle table for `name`. */
  table(name: string): unknown;
  /** CREATE TABLE statements, each safe to run again. */
  create(name: string): string[];
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  execute(db: any, statement: SQL): Promise<unknown>;
}
