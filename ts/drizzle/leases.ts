// Several workers on one batch job (rotateKeys, convertToTenantKeys,
// migratePlaintext, convertStorage), in one process or many, on PostgreSQL
// or MySQL/MariaDB. The table's primary key is
// cut into ranges of about `rangeRows` rows, kept in a job table of the same
// database; a worker leases one range at a time (SELECT … FOR UPDATE SKIP
// LOCKED, so two workers never take one range), runs the ordinary batch loop
// over it, and records after every batch how far it got and that it is
// alive. A lease not renewed within `leaseMs` is taken over by another
// worker, from where the dead one got to. Writes stay compare-and-set, so a
// worker that lost its lease while busy cannot write a row twice.
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { and, asc, eq, lt, ne, or, sql } from 'drizzle-orm';
import { codedError } from '../shared/json.js';
import type { JobTableSpec } from './jobs/table.js';
import type { BatchDriver, LoopOptions, Plan, Progress } from './operations.js';
import { batchLoop, runBatches } from './operations.js';

export interface LeaseOptions {
  /** The job's name: workers given the same name share its ranges. At most 64 characters. */
  job: string;
  /** The job table. Default `ale_jobs`. */
  table?: string;
  /** How long a range stays a worker's without a word from it, in ms. Default 30,000. */
  leaseMs?: number;
  /** Rows per range. Default 10,000. */
  rangeRows?: number;
  /** This worker's name in the job table. Default host, pid and a random part. */
  worker?: string;
}


// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = any;

/** One range of the job table. */
interface RangeRow {
  job: string;
  idx: number;
  startKey: string | null;
  endKey: string | null;
  state: 'pending' | 'leased' | 'done';
  owner: string | null;
  leaseUntil: number;
  doneUpto: string | null;
}

/** Keys travel through the job table as JSON: numbers and strings as they are, bigints as decimal strings. */
function keyText(key: unknown): string {
  if (typeof key === 'number' || typeof key === 'string') return JSON.stringify(key);
  if (typeof key === 'bigint') return JSON.stringify(key.toString());
  throw codedError('ALE_INVALID_INPUT', 'options.workers: the primary key must be a number, a bigint or a string to be cut into ranges');
}
const keyOf = (text: string | null): unknown => (text === null ? undefined : JSON.parse(text));

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function checked(options: LeaseOptions) {
  const invalid = (why: string) => codedError('ALE_INVALID_INPUT', `options.workers: ${why}`);
  if (typeof options?.job !== 'string' || options.job === '' || options.job.length > 64) throw invalid('job must be a name of 1 to 64 characters');
  const table = options.table ?? 'ale_jobs';
  if (!/^[a-z_][a-z0-9_]{0,47}$/.test(table)) throw invalid('table must be a plain lower-case SQL name');
  const leaseMs = options.leaseMs ?? 30_000;
  const rangeRows = options.rangeRows ?? 10_000;
  if (!Number.isInteger(leaseMs) || leaseMs < 100) throw invalid('leaseMs must be a whole number of at least 100');
  if (!Number.isInteger(rangeRows) || rangeRows < 1) throw invalid('rangeRows must be a positive integer');
  const worker = options.worker ?? `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  return { job: options.job, table, leaseMs, rangeRows, worker: worker.slice(0, 128) };
}

/**
 * Runs `plan` over the job's ranges as one of its workers, until every range
 * is done (by this worker or others). Returns what this worker did.
 */
export async function runLeased(db: AnyDb, spec: JobTableSpec, driver: BatchDriver, options: LoopOptions & { workers: LeaseOptions }, plan: Plan): Promise<Progress> {
  const o = checked(options.workers);
  if (!driver.keyAt) throw codedError('ALE_INVALID_INPUT', 'options.workers: this table cannot be cut into ranges');
  for (const statement of spec.create(o.table)) {
    // Workers starting together race to create the table; PostgreSQL can fail
    // the loser of CREATE TABLE IF NOT EXISTS, whose second try finds it.
    await spec.execute(db, sql.raw(statement)).catch(() => pause(100).then(() => spec.execute(db, sql.raw(statement))));
  }
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const jt = spec.table(o.table) as any;
  const ofJob = eq(jt.job, o.job);
  const progress: Progress = { scanned: 0, written: 0, skipped: 0, nulls: 0, batches: 0, lastKey: undefined };

  // The ranges, cut once by whichever worker comes first; a second one that
  // cuts at the same time loses on the primary key and uses the first's.
  const [{ n }] = await db.select({ n: sql<number>`count(*)` }).from(jt).where(ofJob);
  if (Number(n) === 0) {
    // Each cut starts from the last one, so the index is read once over.
    const bounds: string[] = [];
    for (let key = await driver.keyAt(undefined, o.rangeRows - 1); key !== undefined; key = await driver.keyAt(key, o.rangeRows - 1)) bounds.push(keyText(key));
    const starts = [null, ...bounds];
    const rows = starts.map((startKey, idx) => ({ job: o.job, idx, startKey, endKey: bounds[idx] ?? null, state: 'pending', owner: null, leaseUntil: 0, doneUpto: null }));
    try {
      // All ranges or none: a job with only some of them would leave rows out. In chunks, for the drivers' parameter limits.
      await db.transaction(async (tx: AnyDb) => {
        for (let i = 0; i < rows.length; i += 1_000) await tx.insert(jt).values(rows.slice(i, i + 1_000));
      });
    } catch (e) {
      const [{ n: now }] = await db.select({ n: sql<number>`count(*)` }).from(jt).where(ofJob);
      if (Number(now) === 0) throw e;
    }
  }

  const claim = (): Promise<RangeRow | null> =>
    db.transaction(async (tx: AnyDb) => {
      const now = Date.now();
      const [r]: RangeRow[] = await tx
        .select()
        .from(jt)
        .where(and(ofJob, or(eq(jt.state, 'pending'), and(eq(jt.state, 'leased'), lt(jt.leaseUntil, now)))))
        .orderBy(asc(jt.idx))
        .limit(1)
        .for('update', { skipLocked: true });
      if (!r) return null;
      await tx.update(jt).set({ state: 'leased', owner: o.worker, leaseUntil: now + o.leaseMs }).where(and(ofJob, eq(jt.idx, r.idx)));
      return r;
    });
  /** Records how far this worker got, if the range is still its own; false once another worker has taken it over. */
  const report = async (idx: number, doneUpto: unknown, state: 'leased' | 'done'): Promise<boolean> => {
    const mine = and(ofJob, eq(jt.idx, idx), eq(jt.owner, o.worker), eq(jt.state, 'leased'));
    await db.update(jt).set({ state, leaseUntil: Date.now() + o.leaseMs, doneUpto: doneUpto === undefined ? null : keyText(doneUpto) }).where(mine);
    const [r]: RangeRow[] = await db.select().from(jt).where(and(ofJob, eq(jt.idx, idx)));
    return r?.owner === o.worker && r.state === state;
  };

  for (;;) {
    const range = await claim();
    if (range === null) {
      const [{ n: open }] = await db.select({ n: sql<number>`count(*)` }).from(jt).where(and(ofJob, ne(jt.state, 'done')));
      if (Number(open) === 0) return progress;
      // Ranges leased by others: wait for them to finish, or for a lease to run out.
      await pause(Math.min(1_000, o.leaseMs / 4));
      continue;
    }
    let lost = false;
    let last = keyOf(range.doneUpto ?? range.startKey);
    await batchLoop(
      { fetch: (after, limit) => driver.fetch(after, limit, keyOf(range.endKey)), apply: (u) => driver.apply(u) },
      { ...options, after: last },
      plan,
      progress,
      async (lastKey) => {
        last = lastKey;
        lost = !(await report(range.idx, lastKey, 'leased'));
        return !lost;
      },
    );
    if (!lost) await report(range.idx, last, 'done');
  }
}

/**
 * A batch job as one worker of many when `options.workers` is given, else
 * as the single loop. SQLite (`jobs` undefined) keeps its single writer.
 */
export function runJob(db: AnyDb, jobs: JobTableSpec | undefined, driver: BatchDriver, options: LoopOptions & { workers?: LeaseOptions }, plan: Plan): Promise<Progress> {
  if (options.workers === undefined) return runBatches(driver, options, plan);
  if (jobs === undefined) {
    return Promise.reject(codedError('ALE_INVALID_INPUT', 'options.workers: SQLite has one writer at a time; run a single worker (no options.workers) there'));
  }
  return runLeased(db, jobs, driver, options as LoopOptions & { workers: LeaseOptions }, plan);
}
