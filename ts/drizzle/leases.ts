// Several workers on one batch job (rotateKeys, convertToTenantKeys,
// migratePlaintext, convertStorage), in one process or many, on PostgreSQL
// or MySQL/MariaDB. The table's primary key is
// cut into ranges of about `rangeRows` rows, kept in a job table of the same
// database; a worker leases one range at a time (SELECT … FOR UPDATE SKIP
// LOCKED, so two workers never take one range), runs the ordinary batch loop
// over it, and records after every batch how far it got and that it is
// alive. A lease not renewed within `leaseMs` is taken over by another
// worker, from where the dead one got to. Writes stay compare-and-set, so a
// worker that lost its lease while busy cannot write a row twice. A job's
// ranges carry the fingerprint of its operation and parameters, and before
// a worker reports the job done it checks that the ranges still chain over
// the whole key space and were each walked to their end.
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { setTimeout as pause } from 'node:timers/promises';
import { and, asc, eq, gt, isNull, lt, lte, ne, or, sql, type SQL } from 'drizzle-orm';
import { codedError } from '../shared/errors.js';
import { checkChain, walkedTo, type Gap } from './jobs/chain.js';
import { fingerprint } from './jobs/fingerprint.js';
import type { JobTableSpec } from './jobs/table.js';
import { ensureTable } from './kept-tables.js';
import type { BatchDriver, LoopOptions, Plan, Progress } from './operations.js';
import { batchLoop, runBatches } from './operations.js';

/**
 * How a batch job runs as one of several workers.
 *
 * A job's name is bound to one operation and what it writes: the table, its
 * key, the columns, the tenant, the keyRing's primary key, the tenant key
 * store, and an index column's options and key (batchSize, onProgress and
 * these worker options may differ between workers). A run of another operation, or with other parameters, under a
 * name in use is refused with `ALE_INVALID_INPUT`, and so is a job made
 * before jobs recorded their parameters.
 *
 * A finished job (every range done) does not run again by itself: a worker
 * that finds it finished when it starts is refused with `ALE_INVALID_INPUT`,
 * since rows written after the job walked past them (plaintext, say) would
 * stay as they are while it reported `written: 0`, and telling whether any
 * such row is left would take a pass over the whole table. Give each run of
 * an operation its own name (`rotate-notes-2026-12`), or pass `restart:
 * true`, which makes that pass. Start the workers of one run before it can
 * finish: one that starts after the last range is done is refused the same
 * way.
 *
 * Before a worker reports the job done, it checks that the job's ranges
 * still chain over the whole primary key and that each was walked to its
 * end; a job table edited or damaged so that rows went unvisited fails with
 * `ALE_INVALID_INPUT`, saying how many ranges and rows.
 */
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
  /**
   * Run a finished job again, over the whole table: its ranges go back to
   * pending, and rows the operation still changes are written (the others
   * are skipped). An unfinished job is joined as without it, so every worker
   * of the new run may be given it; one that starts after that run finished
   * starts another. It does not change a job's parameters: that takes a new
   * name. Default false.
   */
  restart?: boolean;
}

/** What runJob is given: the loop's options, the worker options, and the table and key every batch operation names. */
export type JobOptions = LoopOptions & { workers?: LeaseOptions; table?: unknown; key?: unknown };

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
  fingerprint: string | null;
}

/** Keys travel through the job table as JSON: numbers and strings as they are, bigints as decimal strings. */
function keyText(key: unknown): string {
  if (typeof key === 'number' || typeof key === 'string') return JSON.stringify(key);
  if (typeof key === 'bigint') return JSON.stringify(key.toString());
  throw codedError('ALE_INVALID_INPUT', 'options.workers: the primary key must be a number, a bigint or a string to be cut into ranges');
}

/** A key read back from the job table (undefined for NULL), or a coded error for text keyText never writes. */
function keyOf(text: string | null): unknown {
  if (text === null) return undefined;
  let key: unknown;
  try {
    key = JSON.parse(text);
  } catch {
    key = undefined;
  }
  if (typeof key === 'number' || typeof key === 'string') return key;
  throw codedError('ALE_INVALID_INPUT', 'options.workers: the job table holds a key this package did not write there (it was edited); give the job a new name');
}

function checked(options: LeaseOptions) {
  const invalid = (why: string) => codedError('ALE_INVALID_INPUT', `options.workers: ${why}`);
  if (typeof options?.job !== 'string' || options.job === '' || options.job.length > 64) throw invalid('job must be a name of 1 to 64 characters');
  const table = options.table ?? 'ale_jobs';
  if (!/^[a-z_][a-z0-9_]{0,47}$/.test(table)) throw invalid('table must be a plain lower-case SQL name');
  const leaseMs = options.leaseMs ?? 30_000;
  const rangeRows = options.rangeRows ?? 10_000;
  if (!Number.isInteger(leaseMs) || leaseMs < 100) throw invalid('leaseMs must be a whole number of at least 100');
  if (!Number.isInteger(rangeRows) || rangeRows < 1) throw invalid('rangeRows must be a positive integer');
  const restart = options.restart ?? false;
  if (typeof restart !== 'boolean') throw invalid('restart must be true or false');
  const worker = options.worker ?? `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  return { job: options.job, table, leaseMs, rangeRows, restart, worker: worker.slice(0, 128) };
}

/**
 * Runs `plan` over the job's ranges as one of its workers, until every range
 * is done (by this worker or others). Returns what this worker did.
 */
export async function runLeased(db: AnyDb, spec: JobTableSpec, driver: BatchDriver, options: JobOptions & { workers: LeaseOptions }, plan: Plan): Promise<Progress> {
  const o = checked(options.workers);
  if (!driver.keyAt) throw codedError('ALE_INVALID_INPUT', 'options.workers: this table cannot be cut into ranges');
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const jt = spec.table(o.table) as any;
  // Made before the fingerprint column, the table gets it.
  await ensureTable(db, spec, o.table, 'fingerprint');
  const ofJob = eq(jt.job, o.job);
  const print = fingerprint(plan.operation, options);
  const count = async (where: SQL | undefined): Promise<number> => Number((await db.select({ n: sql<number>`count(*)` }).from(jt).where(where))[0].n);
  const progress: Progress = { scanned: 0, written: 0, skipped: 0, nulls: 0, batches: 0, lastKey: undefined };

  // The ranges, cut once by whichever worker comes first; a second one that
  // cuts at the same time loses on the primary key and uses the first's.
  let cutHere = false;
  if ((await count(ofJob)) === 0) {
    // Each cut starts from the last one, so the index is read once over.
    const bounds: string[] = [];
    for (let key = await driver.keyAt(undefined, o.rangeRows - 1); key !== undefined; key = await driver.keyAt(key, o.rangeRows - 1)) bounds.push(keyText(key));
    const starts = [null, ...bounds];
    const rows = starts.map((startKey, idx) => ({ job: o.job, idx, startKey, endKey: bounds[idx] ?? null, state: 'pending', owner: null, leaseUntil: 0, doneUpto: null, fingerprint: print }));
    try {
      // All ranges or none: a job with only some of them would leave rows out. In chunks, for the drivers' parameter limits.
      await db.transaction(async (tx: AnyDb) => {
        for (let i = 0; i < rows.length; i += 1_000) await tx.insert(jt).values(rows.slice(i, i + 1_000));
      });
      cutHere = true;
    } catch (e) {
      if ((await count(ofJob)) === 0) throw e;
    }
  }

  // A name run with other parameters would resume from where another job got to, and skip what that one did.
  const [other]: RangeRow[] = await db.select().from(jt).where(and(ofJob, or(isNull(jt.fingerprint), ne(jt.fingerprint, print)))).limit(1);
  if (other) {
    throw codedError(
      'ALE_INVALID_INPUT',
      other.fingerprint === null
        ? `options.workers: job "${o.job}" was made before jobs recorded their parameters, so this run cannot be checked against it; give the job a new name`
        : `options.workers: job "${o.job}" was started by another operation or with other parameters (table, key, columns, tenant, keyRing or keys, or an index column's options or key); a job name runs one operation with one set of parameters, so give this run a new job name`,
    );
  }
  if (!cutHere && (await count(and(ofJob, ne(jt.state, 'done')))) === 0) {
    if (!o.restart) {
      throw codedError(
        'ALE_INVALID_INPUT',
        `options.workers: job "${o.job}" is finished (every range is done), and rows written since it walked past them would stay as they are; ` +
          'give this run a new job name, or workers: { restart: true } to walk the table again',
      );
    }
    await db.update(jt).set({ state: 'pending', owner: null, leaseUntil: 0, doneUpto: null }).where(and(ofJob, eq(jt.state, 'done')));
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
  /** Records how far this worker got (a key's JSON), if the range is still its own; false once another worker has taken it over. */
  const report = async (idx: number, doneUpto: string | null, state: 'leased' | 'done'): Promise<boolean> => {
    const mine = and(ofJob, eq(jt.idx, idx), eq(jt.owner, o.worker), eq(jt.state, 'leased'));
    await db.update(jt).set({ state, leaseUntil: Date.now() + o.leaseMs, doneUpto }).where(mine);
    const [r]: RangeRow[] = await db.select().from(jt).where(and(ofJob, eq(jt.idx, idx)));
    return r?.owner === o.worker && r.state === state;
  };

  for (;;) {
    const range = await claim();
    if (range === null) {
      if ((await count(and(ofJob, ne(jt.state, 'done')))) === 0) {
        await checkRanges(db, jt, ofJob, o.job, options);
        return progress;
      }
      // Ranges leased by others: wait for them to finish, or for a lease to run out.
      await pause(Math.min(1_000, o.leaseMs / 4));
      continue;
    }
    let lost = false;
    await batchLoop(
      { fetch: (after, limit) => driver.fetch(after, limit, keyOf(range.endKey)), apply: (u) => driver.apply(u) },
      { ...options, after: keyOf(range.doneUpto ?? range.startKey) },
      plan,
      progress,
      async (lastKey) => {
        lost = !(await report(range.idx, keyText(lastKey), 'leased'));
        return !lost;
      },
    );
    // Walked to its end: what the check of the ranges looks for.
    if (!lost) await report(range.idx, walkedTo(range.endKey), 'done');
  }
}

/**
 * Before the job is reported done: its ranges still chain over the whole
 * key space, and each was walked to its end. Otherwise rows were skipped,
 * and the error says how many ranges are wrong and how many rows they leave
 * out.
 */
async function checkRanges(db: AnyDb, jt: AnyDb, ofJob: SQL, job: string, options: JobOptions): Promise<void> {
  const { inconsistent, gaps } = checkChain(await db.select().from(jt).where(ofJob));
  if (inconsistent === 0) return;
  const left = await rowsIn(db, options, gaps);
  throw codedError(
    'ALE_INVALID_INPUT',
    `options.workers: job "${job}" has ${inconsistent} inconsistent range${inconsistent === 1 ? '' : 's'} in its job table (missing, not starting where the one before ends, ` +
      `or marked done short of its end: edited or damaged)${left === undefined ? '' : `, which leave ${left} row${left === 1 ? '' : 's'} of the table unvisited`}; ` +
      'give the job a new name to walk the table again',
  );
}

/** Rows of the job's table in `gaps`, by one count over the primary key each; undefined when a key of the job table does not read. */
async function rowsIn(db: AnyDb, { table, key }: JobOptions, gaps: Gap[]): Promise<number | undefined> {
  if (table === undefined || key === undefined) return undefined;
  let rows = 0;
  for (const gap of gaps) {
    let after: unknown, upTo: unknown;
    try {
      [after, upTo] = [keyOf(gap.after), keyOf(gap.upTo)];
    } catch {
      return undefined;
    }
    const where = and(after === undefined ? undefined : gt(key as never, after), upTo === undefined ? undefined : lte(key as never, upTo));
    const [{ n }] = await db.select({ n: sql<number>`count(*)` }).from(table).where(where);
    rows += Number(n);
  }
  return rows;
}

/**
 * A batch job as one worker of many when `options.workers` is given, else
 * as the single loop. SQLite (`jobs` undefined) keeps its single writer.
 */
export function runJob(db: AnyDb, jobs: JobTableSpec | undefined, driver: BatchDriver, options: JobOptions, plan: Plan): Promise<Progress> {
  if (options.workers === undefined) return runBatches(driver, options, plan);
  if (jobs === undefined) {
    return Promise.reject(codedError('ALE_INVALID_INPUT', 'options.workers: SQLite has one writer at a time; run a single worker (no options.workers) there'));
  }
  return runLeased(db, jobs, driver, options as JobOptions & { workers: LeaseOptions }, plan);
}
