// How a store learns of changes other processes made to the key table: one
// query for the tenants whose rows changed since the last check, at most
// every `everyMs`, shared by concurrent callers. Rows are stamped by the
// database's clock (the key table's `now`), and the window is measured back
// from that same clock: no application clock, ours or a writer's, decides
// what is seen. The window spans the time since the last check (a
// monotonic clock: skew is an offset, not a rate) plus LOOKBACK for writes
// stamped before they committed.
import { gt, max, sql, type SQL } from 'drizzle-orm';
import { clock } from './cache.js';

/** How far before the last check's window a check looks, for writes stamped before they committed. */
const LOOKBACK = 60_000;

export interface ChangeCheckDeps {
  // The query builders differ per dialect; only methods every dialect has are chained.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  db(): any;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  table: any;
  /** The database's clock. */
  now: SQL;
  /** Milliseconds between checks. */
  everyMs: number;
  /** Where the clock time of the next check is kept, shared with the sealer. */
  times: { nextCheck: number };
  /** Told each tenant with changed rows and its newest stamp; resolves once it has dealt with it. */
  changed(tenant: string, newest: number): Promise<void> | undefined;
}

export class ChangeCheck {
  /** performance.now() when the last check was sent; undefined before the first, which reads every row. */
  #lastCheck: number | undefined;
  /** The check under way, if any. */
  #checking: Promise<void> | undefined;

  constructor(private readonly d: ChangeCheckDeps) {}

  /**
   * Runs a check (or joins the one under way); settles once the re-reads it
   * started have, and never rejects: a failed check leaves the entries as
   * they were, to be checked again.
   */
  run(): Promise<void> {
    if (this.#checking) return this.#checking;
    const { d } = this;
    d.times.nextCheck = clock.now + d.everyMs;
    const started = performance.now();
    const since = this.#lastCheck === undefined ? undefined : sql`${d.now} - ${Math.ceil(started - this.#lastCheck) + LOOKBACK}`;
    const t = d.table;
    const check = (async () => {
      const rows: { tenant: string; updatedAt: number | string | null }[] = await d
        .db()
        .select({ tenant: t.tenant, updatedAt: max(t.updatedAt) })
        .from(t)
        .where(since === undefined ? undefined : gt(t.updatedAt, since))
        .groupBy(t.tenant);
      this.#lastCheck = started;
      await Promise.all(rows.map(({ tenant, updatedAt }) => d.changed(tenant, Number(updatedAt))));
    })()
      .catch(() => undefined)
      .finally(() => (this.#checking = undefined));
    this.#checking = check;
    return check;
  }
}
