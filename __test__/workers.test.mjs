// The addon in several worker_threads at once: IVs stay unique across all of
// them, the process-wide ring is shared, and workers can be terminated
// mid-work without crashing the process or leaking memory
// (fixtures/worker-churn.mjs, in a child process). Then the batch jobs'
// workers (options.workers) on PostgreSQL and MariaDB: a job's name is bound
// to its operation and parameters, a finished job is not silently run again,
// edited job ranges fail the job instead of skipping rows, and `written`
// counts only the updates that took, on every driver (fixtures/job-tables.mjs).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { ale, SECRET, OLD_SECRET } from './helpers.mjs';
import { openSqlite, SQLITE_DRIVERS } from '../bench/sqlite.mjs';
import { SERVERS, NAMES, ROWS, notesTable, refill, counts } from './fixtures/job-tables.mjs';

const script = new URL('./fixtures/iv-worker.mjs', import.meta.url);
const WORKERS = 4;
const PER_WORKER = 250_000;

const run = (workerData) =>
  new Promise((resolve, reject) => {
    const w = new Worker(script, { workerData });
    w.once('message', resolve);
    w.once('error', reject);
  });

test(`${WORKERS} workers × ${PER_WORKER.toLocaleString('en-US')} encryptions: no IV repeats`, { timeout: 120_000 }, async () => {
  ale.initKeyRing([SECRET]);
  const batches = await Promise.all(Array.from({ length: WORKERS }, () => run({ count: PER_WORKER })));
  const main = Array.from({ length: 50_000 }, () => ale.encrypt('payload', 't', 'c', 'f').slice(3, 19));
  const seen = new Set(main);
  let total = main.length;
  for (const ivs of batches) {
    assert.equal(ivs.length, PER_WORKER);
    for (const iv of ivs) seen.add(iv);
    total += ivs.length;
  }
  assert.ok(total >= 1_000_000);
  assert.equal(seen.size, total, `${total - seen.size} duplicate IVs`);
  console.log(`${total.toLocaleString('en-US')} IVs from ${WORKERS} workers and the main thread: 0 duplicates`);
});

test('workers terminated mid-encryption: no crash, no growing memory', () => {
  // In a child of its own: only there can Node force a collection
  // (--expose-gc), and under `bun test` this process's RSS holds every other
  // test file's memory too.
  const churn = fileURLToPath(new URL('./fixtures/worker-churn.mjs', import.meta.url));
  // A worker that does not stop when terminated hangs the child: bounded.
  const child = spawnSync(process.execPath, process.versions.bun ? [churn] : ['--expose-gc', churn], { encoding: 'utf8', timeout: 180_000 });
  assert.equal(child.signal, null, `the churn did not finish in 180 s (a terminated worker kept running): ${child.stderr}`);
  assert.equal(child.status, 0, child.stderr);
  const { rss, collected, alive } = JSON.parse(child.stdout);
  assert.equal(collected, true, 'the forced collection did not collect');
  assert.equal(alive, true, 'text and binary round trips on the main thread after the churn');
  const growthMiB = rss[1] - rss[0];
  console.log(`RSS after 6 rounds ${rss[0].toFixed(0)} MiB, after 30 rounds ${rss[1].toFixed(0)} MiB (full GC forced before each)`);
  assert.ok(growthMiB < 64, `RSS grew ${growthMiB.toFixed(0)} MiB over 24 rounds of 3 terminated workers`);
});

// The lease runner's tables, per dialect; each run starts from a fresh table of ROWS plaintext rows.
for (const [dialect, server] of Object.entries(SERVERS)) {
  if (!server.url) continue;
  describe(`several workers on one job: ${dialect}`, () => {
    let conn;
    let mod;
    let notes;
    before(async () => {
      ale.initKeyRing([SECRET]);
      conn = await Object.values(server.drivers)[0](server.url);
      mod = await import(`@sveltycms/ale/drizzle/${dialect}`);
      notes = await notesTable(dialect, mod);
    });
    after(async () => {
      for (const name of Object.values(NAMES)) await conn.run(`DROP TABLE IF EXISTS ${name}`);
      await conn.close();
    });
    const migrate = ({ workers, ...options } = {}) =>
      mod.migratePlaintext(conn.db, {
        table: notes,
        key: notes.id,
        columns: [{ column: notes.body }],
        tenant: { column: notes.tenantId },
        batchSize: 500,
        ...options,
        workers: { table: NAMES.jobs, rangeRows: 500, ...workers },
      });
    const plaintext = async () => (await counts(conn)).plain;
    /** A worker that stops with an error after its first batch: its ranges are cut, and its range's lease runs out soon after. */
    const interrupted = (job, batchSize = 500) =>
      assert.rejects(migrate({ batchSize, onProgress: () => { throw new Error('stopped after one batch'); }, workers: { job, leaseMs: 100 } }), /stopped after one batch/);

    test(`${dialect}: a finished job run again is refused (ALE_INVALID_INPUT) instead of reporting written: 0 over plaintext rows; restart: true walks the table again`, async () => {
      await refill(conn, server.ddl);
      const first = await migrate({ workers: { job: 'finished' } });
      assert.equal(first.written, ROWS);
      // rows written after the job walked past them, by an older version of the application, say
      await conn.run(`UPDATE ${NAMES.notes} SET body = 'written since' WHERE id <= 100`);
      const again = await migrate({ workers: { job: 'finished' } }).catch((e) => e);
      assert.equal(again?.code, 'ALE_INVALID_INPUT', `the rerun resolved: ${JSON.stringify(again)}`);
      assert.match(again.message, /job "finished" is finished/);
      assert.match(again.message, /new job name, or workers: \{ restart: true \}/);
      assert.equal(await plaintext(), 100, 'the refused run wrote nothing');
      const restarted = await migrate({ workers: { job: 'finished', restart: true } });
      assert.deepEqual([restarted.written, restarted.skipped], [100, ROWS - 100]);
      assert.equal(await plaintext(), 0);
    });

    test(`${dialect}: the job table the runner created has the columns, NOT NULL and primary key of its Drizzle table (${dialect}-core/jobs.ts)`, async () => {
      // the test before ran a job, which created the table from its DDL
      const { jobTable } = await import(`../dist/esm/drizzle/${dialect}-core/jobs.js`);
      const { getTableConfig } = await import(`drizzle-orm/${dialect}-core`);
      const config = getTableConfig(jobTable(NAMES.jobs));
      const primary = config.primaryKeys.flatMap((k) => k.columns.map((c) => c.name)).sort();
      assert.ok(primary.length > 0, 'the builders give a primary key');
      const expected = config.columns.map((c) => [c.name, c.notNull || c.primary || primary.includes(c.name)]).sort();
      const [columns, keyColumns] =
        dialect === 'pg'
          ? [
              `SELECT column_name AS name, is_nullable AS n FROM information_schema.columns WHERE table_name = '${NAMES.jobs}'`,
              `SELECT a.attname AS name FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey) WHERE i.indrelid = '${NAMES.jobs}'::regclass AND i.indisprimary`,
            ]
          : [
              `SELECT COLUMN_NAME AS name, IS_NULLABLE AS n FROM information_schema.COLUMNS WHERE TABLE_NAME = '${NAMES.jobs}' AND TABLE_SCHEMA = DATABASE()`,
              `SELECT COLUMN_NAME AS name FROM information_schema.KEY_COLUMN_USAGE WHERE TABLE_NAME = '${NAMES.jobs}' AND TABLE_SCHEMA = DATABASE() AND CONSTRAINT_NAME = 'PRIMARY'`,
            ];
      assert.deepEqual((await conn.run(columns)).map((c) => [c.name, c.n === 'NO']).sort(), expected, 'columns and NOT NULL');
      assert.deepEqual((await conn.run(keyColumns)).map((c) => c.name).sort(), primary, 'primary key');
    });

    test(`${dialect}: a job name is bound to its operation and parameters: another operation, tenant or keyRing under it is refused without a word of them; batchSize, leaseMs, the worker's name and a column's own collection, given or not, may differ`, async () => {
      await refill(conn, server.ddl);
      await interrupted('bound');
      const refused = async (run) => {
        const e = await run().catch((error) => error);
        assert.equal(e?.code, 'ALE_INVALID_INPUT', `not refused: ${JSON.stringify(e)}`);
        assert.match(e.message, /job "bound" was started by another operation or with other parameters/);
        return e;
      };
      const base = { table: notes, key: notes.id, columns: [{ column: notes.body }], tenant: { column: notes.tenantId }, workers: { job: 'bound', table: NAMES.jobs } };
      await refused(() => mod.rotateKeys(conn.db, { ...base, keyRing: new ale.KeyRing([SECRET, OLD_SECRET]) }));
      const tenant = await refused(() => migrate({ tenant: 'tenant-7f3a9c', workers: { job: 'bound' } }));
      assert.doesNotMatch(tenant.message, /7f3a9c/);
      await refused(() => migrate({ keyRing: new ale.KeyRing([OLD_SECRET]), workers: { job: 'bound' } }));
      assert.equal(await plaintext(), ROWS - 500, 'the refused runs wrote nothing');
      const resumed = await migrate({ batchSize: 250, columns: [{ column: notes.body, collection: 'notes', field: 'body' }], workers: { job: 'bound', leaseMs: 5_000, worker: 'a-second-worker' } });
      assert.equal(resumed.written, ROWS - 500);
      assert.equal(await plaintext(), 0);
    });

    if (dialect === 'pg') test("pg: a job name is bound to its table's schema: the job run on a table of that name in another schema is refused", async () => {
      const { pgSchema, integer, text } = await import('drizzle-orm/pg-core');
      const schemas = [`${NAMES.notes}_a`, `${NAMES.notes}_b`];
      const tables = schemas.map((name) => pgSchema(name).table('notes', { id: integer('id').primaryKey(), tenantId: text('tenant_id').notNull(), body: mod.encryptedText('body', { collection: 'notes' }) }));
      const run = (table, extra = {}) =>
        mod.migratePlaintext(conn.db, { table, key: table.id, columns: [{ column: table.body }], tenant: { column: table.tenantId }, batchSize: 500, ...extra, workers: { job: 'schemas', table: NAMES.jobs, rangeRows: 500, leaseMs: 100 } });
      try {
        await conn.run(`DROP TABLE IF EXISTS ${NAMES.jobs}`);
        for (const name of schemas) {
          await conn.run(`DROP SCHEMA IF EXISTS ${name} CASCADE`);
          await conn.run(`CREATE SCHEMA ${name}`);
          await conn.run(`CREATE TABLE ${name}.notes (id integer PRIMARY KEY, tenant_id text NOT NULL, body text)`);
          await conn.run(`INSERT INTO ${name}.notes SELECT i, 'acme', 'plain ' || i FROM generate_series(1, 1000) i`);
        }
        await assert.rejects(run(tables[0], { onProgress: () => { throw new Error('stopped after one batch'); } }), /stopped after one batch/);
        const e = await run(tables[1]).catch((error) => error);
        assert.equal(e?.code, 'ALE_INVALID_INPUT', `not refused: ${JSON.stringify(e)}`);
        assert.match(e.message, /other parameters/);
      } finally {
        for (const name of schemas) await conn.run(`DROP SCHEMA IF EXISTS ${name} CASCADE`);
        await conn.run(`DROP TABLE IF EXISTS ${NAMES.jobs}`);
      }
    });

    test(`${dialect}: edited job ranges fail the job with how many ranges are inconsistent and how many rows they leave, instead of reporting it done`, async () => {
      // Ranges of 500 rows: idx 0 to 5, and an empty one after the last row.
      await refill(conn, server.ddl);
      await interrupted('edited');
      await conn.run(`UPDATE ${NAMES.jobs} SET state = 'done' WHERE job = 'edited' AND idx IN (2, 3)`);
      await conn.run(`DELETE FROM ${NAMES.jobs} WHERE job = 'edited' AND idx = 4`);
      const e = await migrate({ workers: { job: 'edited' } }).catch((error) => error);
      assert.equal(e?.code, 'ALE_INVALID_INPUT', `the job was reported done: ${JSON.stringify(e)}`);
      assert.match(e.message, /job "edited" has 3 inconsistent ranges/);
      assert.match(e.message, /leave 1500 rows of the table unvisited/);
      assert.equal(await plaintext(), 1500, 'the rows it counts are the ones left as they were');

      // the first range marked done where its worker stopped, halfway, and a range whose end no longer meets the next one's start
      await refill(conn, server.ddl);
      await interrupted('short', 250);
      await conn.run(`UPDATE ${NAMES.jobs} SET state = 'done', done_upto = '250' WHERE job = 'short' AND idx = 0`);
      await conn.run(`UPDATE ${NAMES.jobs} SET end_key = '1800' WHERE job = 'short' AND idx = 3`);
      const short = await migrate({ workers: { job: 'short' } }).catch((error) => error);
      assert.equal(short?.code, 'ALE_INVALID_INPUT', `the job was reported done: ${JSON.stringify(short)}`);
      assert.match(short.message, /job "short" has 2 inconsistent ranges/);
      assert.match(short.message, /leave 450 rows of the table unvisited/);
      assert.equal(await plaintext(), 450);
    });

    test(`${dialect}: a job table made before the fingerprint column gets it, and a job it already held is refused, since its parameters cannot be checked`, async () => {
      await refill(conn, server.ddl);
      await conn.run(`DROP TABLE IF EXISTS ${NAMES.oldJobs}`);
      await conn.run(
        `CREATE TABLE ${NAMES.oldJobs} (job varchar(64) NOT NULL, idx ${server.ddl.int} NOT NULL, start_key text, end_key text, state varchar(16) NOT NULL, ` +
          'owner varchar(128), lease_until bigint NOT NULL, done_upto text, PRIMARY KEY (job, idx))',
      );
      await conn.run(`INSERT INTO ${NAMES.oldJobs} (job, idx, start_key, end_key, state, owner, lease_until, done_upto) VALUES ('before', 0, NULL, NULL, 'pending', NULL, 0, NULL)`);
      const e = await migrate({ workers: { job: 'before', table: NAMES.oldJobs } }).catch((error) => error);
      assert.equal(e?.code, 'ALE_INVALID_INPUT', `not refused: ${JSON.stringify(e)}`);
      assert.match(e.message, /job "before" was made before jobs recorded their parameters/);
      assert.equal(await plaintext(), ROWS);
      const next = await migrate({ workers: { job: 'after', table: NAMES.oldJobs } });
      assert.equal(next.written, ROWS);
      const [{ n }] = await conn.run(`SELECT count(*) AS n FROM ${NAMES.oldJobs} WHERE job = 'after' AND fingerprint IS NOT NULL`);
      assert.ok(Number(n) > 0);
    });
  });
}

// `written` on every driver: a tenant key store's load() runs between a batch's read and its write, so the
// application can change rows there, deterministically; their compare-and-set then changes nothing. The column
// compares text regardless of case where tables made before the package often do: citext on PostgreSQL, NOCASE on
// SQLite, the default collation on MySQL and MariaDB.
const insensitive = { pg: 'citext', mysql: 'longtext', sqlite: 'text COLLATE NOCASE' };
const writtenCases = [
  ...Object.entries(SERVERS).flatMap(([dialect, server]) =>
    server.url ? Object.entries(server.drivers).map(([driver, open]) => ({ dialect, driver, open: () => open(server.url), ddl: { ...server.ddl, envelope: insensitive[dialect] }, workers: true })) : [],
  ),
  ...SQLITE_DRIVERS.map((driver) => ({ dialect: 'sqlite', driver, open: () => sqliteConn(driver), ddl: { int: 'integer', text: 'text', envelope: insensitive.sqlite }, workers: false })),
];
for (const { dialect, driver, open, ddl, workers } of writtenCases) {
  test(`${dialect} (${driver}): written counts only the updates that took; rows the application changed between a batch's read and its write are left to it and not counted`, async () => {
    ale.initKeyRing([SECRET]);
    const conn = await open();
    try {
      const mod = await import(`@sveltycms/ale/drizzle/${dialect}`);
      await conn.run(`DROP TABLE IF EXISTS ${NAMES.keys}`);
      const keys = mod.tenantKeys(conn.db, { kek: 'workers-kek-0123456789-abcdefghijklmnop', table: NAMES.keys, flushEveryMs: 0, changeCheckEveryMs: 0 });
      await keys.ready();
      const notes = await notesTable(dialect, mod, keys);
      if (dialect === 'pg') await conn.run('CREATE EXTENSION IF NOT EXISTS citext');
      await refill(conn, ddl);
      const load = keys.load.bind(keys);
      let changed = false;
      keys.load = async (tenant) => {
        await load(tenant);
        if (changed) return;
        changed = true;
        await conn.run(`UPDATE ${NAMES.notes} SET body = 'changed by the application' WHERE id <= 100`);
        // Changes that only case or a trailing space tell apart: the column's collation compares text without them
        // (case at least), and the compare-and-set took these rows as unchanged and overwrote them.
        await conn.run(`UPDATE ${NAMES.notes} SET body = upper(body) WHERE id BETWEEN 101 AND 110`);
        await conn.run(`UPDATE ${NAMES.notes} SET body = ${dialect === 'mysql' ? "concat(body, ' ')" : "body || ' '"} WHERE id BETWEEN 111 AND 120`);
      };
      const run = (job) =>
        mod.migratePlaintext(conn.db, {
          table: notes,
          key: notes.id,
          columns: [{ column: notes.body }],
          tenant: { column: notes.tenantId },
          batchSize: 500,
          ...(workers ? { workers: { job, table: NAMES.jobs } } : {}),
        });
      const first = await run('count-1');
      assert.equal(first.written, ROWS - 120, `${first.written} written against ${ROWS - 120} rows unchanged`);
      assert.deepEqual(await counts(conn), { plain: 120, sealed: ROWS - 120 });
      const bodies = await conn.run(`SELECT id, body FROM ${NAMES.notes} WHERE id IN (1, 101, 111) ORDER BY id`);
      assert.deepEqual(bodies.map((r) => r.body), ['changed by the application', 'PLAIN 101', 'plain 111 '], "the application's writes stand");
      const second = await run('count-2');
      assert.deepEqual([second.written, second.skipped], [120, ROWS - 120]);
    } finally {
      for (const name of [NAMES.notes, NAMES.jobs, NAMES.keys]) await conn.run(`DROP TABLE IF EXISTS ${name}`);
      await conn.close();
    }
  });
}

/** A SQLite database in a temporary file, removed when closed. */
async function sqliteConn(driver) {
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const dir = mkdtempSync(join(tmpdir(), 'ale-workers-'));
  const s = await openSqlite(join(dir, 'jobs.db'), { driver });
  return {
    db: s.db,
    run: async (q) => (/^\s*select/i.test(q) ? s.all(q) : (s.exec(q), [])),
    close: async () => {
      s.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

// The compare-and-set compares text by characters on MySQL and MariaDB (mysql-core/compare.ts): in a latin1 column,
// where a comparison of bytes would set UTF-8 against latin1 and never match, and in a binary one.
test('mysql: migratePlaintext seals non-ASCII plaintext in a latin1 column and in a binary one, trailing spaces kept', { skip: !SERVERS.mysql.url && 'no MYSQL_URL' }, async () => {
  ale.initKeyRing([SECRET]);
  const conn = await SERVERS.mysql.drivers.mysql2(SERVERS.mysql.url);
  try {
    const mod = await import('@sveltycms/ale/drizzle/mysql');
    const { int, mysqlTable, varchar } = await import('drizzle-orm/mysql-core');
    const texts = ['Müll', 'Straße ', 'café', 'plain'];
    for (const [type, storage] of [['longtext CHARACTER SET latin1', 'text'], ['longblob', 'binary']]) {
      await conn.run(`DROP TABLE IF EXISTS ${NAMES.notes}`);
      await conn.run(`CREATE TABLE ${NAMES.notes} (id int PRIMARY KEY, tenant_id varchar(64) NOT NULL, body ${type})`);
      await conn.run(`INSERT INTO ${NAMES.notes} (id, tenant_id, body) VALUES ${texts.map((t, i) => `(${i + 1}, 'acme', '${t}')`).join(', ')}`);
      const notes = mysqlTable(NAMES.notes, { id: int('id').primaryKey(), tenantId: varchar('tenant_id', { length: 64 }).notNull(), body: mod.encryptedText('body', { collection: 'notes', storage }) });
      const done = await mod.migratePlaintext(conn.db, { table: notes, key: notes.id, columns: [{ column: notes.body }], tenant: 'acme' });
      assert.equal(done.written, texts.length, `${type}: ${done.written} written`);
      const read = await mod.withTenant('acme', () => conn.db.select({ body: notes.body }).from(notes).orderBy(notes.id));
      assert.deepEqual(read.map((r) => r.body), texts, `${type}: each value as it was`);
    }
  } finally {
    await conn.run(`DROP TABLE IF EXISTS ${NAMES.notes}`);
    await conn.close();
  }
});
