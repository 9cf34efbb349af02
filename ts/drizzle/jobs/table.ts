// What a dialect gives the lease runner (leases.ts): its job table, the
// statements that create it and bring an older one up to date, and how to
// run one.
import type { SQL } from 'drizzle-orm';

export interface JobTableSpec {
  /** The Drizzle table for `name`. */
  table(name: string): unknown;
  /** CREATE TABLE statements, each safe to run again. */
  create(name: string): string[];
  /**
   * What brings a job table made before the `fingerprint` column up to
   * date: ALTER statements that either succeed or fail because the column
   * is there already (`duplicate column`), which the lease runner takes as
   * done.
   */
  upgrade(name: string): string[];
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  execute(db: any, statement: SQL): Promise<unknown>;
}
