// The tables the package keeps in the app's own database (the key table,
// the job table): created where they are missing, and brought up to date
// where an earlier version made them, safely while other processes start
// and run against the same database.
import { setTimeout as pause } from 'node:timers/promises';
import { sql, type SQL } from 'drizzle-orm';

/** What a dialect says of one such table. */
export interface KeptTableSpec {
  /** CREATE TABLE / CREATE INDEX statements, each safe to run again. */
  create(name: string): string[];
  /**
   * What brings a table made before a column existed up to date: ALTER
   * statements that either succeed or fail because the column is there
   * already (`duplicate column`), which is taken as done.
   */
  upgrade(name: string): string[];
  /** Runs one statement on `db`. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  execute(db: any, statement: SQL): unknown;
}

/**
 * Creates the table `name` where it is missing, then, unless it has
 * `column` (the newest its upgrade adds), runs its upgrade. Each CREATE is tried once more
 * after 100 ms: processes that start together race to create the table,
 * and PostgreSQL can fail the loser of CREATE … IF NOT EXISTS (a unique
 * violation in its catalog), whose second try finds it. Reading first keeps
 * an up-to-date table from taking an ALTER's lock, which PostgreSQL takes
 * (ACCESS EXCLUSIVE) even when IF NOT EXISTS finds the column, and which
 * would queue every query of the table, from every process, behind a long
 * reader such as pg_dump.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function ensureTable(db: any, spec: KeptTableSpec, name: string, column: string): Promise<void> {
  for (const statement of spec.create(name)) {
    // Promise.resolve().then: a synchronous driver (bun:sqlite, better-sqlite3) throws at once, and must be retried too.
    const run = () => Promise.resolve().then(() => spec.execute(db, sql.raw(statement)));
    await run().catch(() => pause(100).then(run));
  }
  // Qualified: SQLite takes a double-quoted name that is no column for a
  // string (Bun's build does), so `SELECT "col"` would answer without it.
  const [table, col] = [sql.identifier(name), sql.identifier(column)];
  const has = await db
    .select({ probe: sql`${table}.${col}` })
    .from(sql`${table}`)
    .limit(1)
    .then(
      () => true,
      () => false,
    );
  if (has) return;
  for (const statement of spec.upgrade(name)) {
    try {
      await spec.execute(db, sql.raw(statement));
    } catch (e) {
      if (!/duplicate column/i.test(`${(e as Error)?.message} ${(e as { cause?: Error })?.cause?.message}`)) throw e;
    }
  }
}
