// The job table of several workers (options.workers) on MySQL and MariaDB.
import { bigint, int, mysqlTable, primaryKey, text, varchar } from 'drizzle-orm/mysql-core';
import type { JobTableSpec } from '../jobs/table.js';

export function jobTable(name: string) {
  return mysqlTable(
    name,
    {
      job: varchar('job', { length: 64 }).notNull(),
      idx: int('idx').notNull(),
      startKey: text('start_key'),
      endKey: text('end_key'),
      state: varchar('state', { length: 16 }).notNull(),
      owner: varchar('owner', { length: 128 }),
      leaseUntil: bigint('lease_until', { mode: 'number' }).notNull(),
      doneUpto: text('done_upto'),
      /** The job's operation and parameters, hashed (jobs/fingerprint.ts), on every range of it. */
      fingerprint: varchar('fingerprint', { length: 64 }),
    },
    (t) => [primaryKey({ columns: [t.job, t.idx] })],
  );
}

export const mysqlJobs: JobTableSpec = {
  table: jobTable,
  create: (name) => [
    `CREATE TABLE IF NOT EXISTS ${name} (job varchar(64) NOT NULL, idx int NOT NULL, start_key text, end_key text, state varchar(16) NOT NULL, ` +
      `owner varchar(128), lease_until bigint NOT NULL, done_upto text, fingerprint varchar(64), PRIMARY KEY (job, idx))`,
  ],
  upgrade: (name) => [`ALTER TABLE ${name} ADD COLUMN fingerprint varchar(64)`],
  execute: (db, statement) => db.execute(statement),
};
