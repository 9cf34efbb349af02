// Re-encryption split across workers: rotateKeys and convertToTenantKeys as
// four worker processes on one table of PostgreSQL or MariaDB, with leases
// on ranges of the primary key. One worker is killed with SIGKILL halfway;
// the others take its range over once its lease runs out. A trigger counts
// the writes of every row: each value ends converted exactly once, equal to
// its original, and no row is left behind. scripts/test.mjs runs it once,
// on Node, as its own suite.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { createPool } from 'mysql2/promise';
import { rmSync, writeFileSync } from 'node:fs';
import { ale, SECRET, OLD_SECRET } from './helpers.mjs';
import { serverUrl } from './servers.mjs';
import { example } from './fixtures/readme-examples.mjs';

const worker = fileURLToPath(new URL('./fixtures/lease-worker.mjs', import.meta.url));
const ROWS = 200_000;
const WORKERS = 4;
const KEK = 'lease-kek-0123456789-abcdefghijklmnopq';
const TENANTS = ['acme', 'globex', 'initech'];

/** One worker; `kill` SIGKILLs it once it has committed that many batches. */
function startWorker(job, kill) {
  const p = spawn(process.execPath, [worker], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ALE_LEASE: JSON.stringify(job) } });
  let out = '';
  let batches = 0;
  p.stdout.on('data', (d) => {
    out += d;
    batches = (out.match(/^batch /gm) ?? []).length;
    if (kill && batches >= kill) p.kill('SIGKILL');
  });
  return new Promise((resolve) => p.on('close', (code, signal) => resolve({ code, signal, batches, done: /^done (.*)$/m.exec(out)?.[1] })));
}

/** Runs `fn` with a tenant key store on its own connection, closed afterwards (loaded keys stay in memory). */
async function withKeys(dialect, url, fn) {
  const mod = await import(`@sveltycms/ale/drizzle/${dialect}`);
  const { drizzle } = dialect === 'pg' ? await import('drizzle-orm/postgres-js') : await import('drizzle-orm/mysql2');
  const client = dialect === 'pg' ? postgres(url, { max: 2, onnotice: () => {} }) : createPool({ uri: url, connectionLimit: 2 });
  try {
    return await fn(mod.tenantKeys(drizzle(client), { kek: KEK, flushEveryMs: 0, changeCheckEveryMs: 0 }));
  } finally {
    await client.end();
  }
}

const dialects = {
  pg: {
    url: serverUrl('PG_URL'),
    connect(url) {
      const c = postgres(url, { max: 2, onnotice: () => {} });
      return {
        run: (q, params = []) => c.unsafe(q, params),
        close: () => c.end(),
        setup: [
          'CREATE TABLE lease_notes (id integer PRIMARY KEY, tenant_id text NOT NULL, body text, original text NOT NULL, writes integer NOT NULL DEFAULT 0)',
          'CREATE FUNCTION lease_notes_count() RETURNS trigger AS $$ BEGIN IF NEW.body IS DISTINCT FROM OLD.body THEN NEW.writes := OLD.writes + 1; END IF; RETURN NEW; END $$ LANGUAGE plpgsql',
          'CREATE TRIGGER lease_notes_count BEFORE UPDATE ON lease_notes FOR EACH ROW EXECUTE FUNCTION lease_notes_count()',
        ],
        teardown: ['DROP TABLE IF EXISTS lease_notes', 'DROP FUNCTION IF EXISTS lease_notes_count', 'DROP TABLE IF EXISTS ale_jobs', 'DROP TABLE IF EXISTS ale_keys'],
        insert: (rows) => c`INSERT INTO lease_notes ${c(rows, 'id', 'tenant_id', 'body', 'original')}`,
      };
    },
  },
  mysql: {
    url: serverUrl('MYSQL_URL'),
    connect(url) {
      const p = createPool({ uri: url, connectionLimit: 2 });
      return {
        run: async (q, params = []) => (await p.query(q, params))[0],
        close: () => p.end(),
        setup: [
          'CREATE TABLE lease_notes (id int PRIMARY KEY, tenant_id varchar(64) NOT NULL, body longtext, original text NOT NULL, writes int NOT NULL DEFAULT 0)',
          'CREATE TRIGGER lease_notes_count BEFORE UPDATE ON lease_notes FOR EACH ROW SET NEW.writes = OLD.writes + IF(NEW.body <=> OLD.body, 0, 1)',
        ],
        teardown: ['DROP TABLE IF EXISTS lease_notes', 'DROP TABLE IF EXISTS ale_jobs', 'DROP TABLE IF EXISTS ale_keys'],
        insert: (rows) => p.query('INSERT INTO lease_notes (id, tenant_id, body, original) VALUES ?', [rows.map((r) => [r.id, r.tenant_id, r.body, r.original])]),
      };
    },
  },
};

for (const [dialect, { url, connect }] of Object.entries(dialects)) {
  if (!url) continue;
  describe(`several workers on one table: ${dialect}`, () => {
    let conn;
    before(async () => {
      conn = connect(url);
    });
    after(async () => {
      for (const q of conn.teardown) await conn.run(q);
      await conn.close();
    });

    for (const mode of ['rotate', 'to-tenant-keys']) {
      test(`${mode}: ${ROWS.toLocaleString('en-US')} rows, ${WORKERS} worker processes, one killed with SIGKILL halfway: every row converted exactly once, equal to its original`, { timeout: 600_000 }, async () => {
        for (const q of conn.teardown) await conn.run(q);
        for (const q of conn.setup) await conn.run(q);
        // v1 values: under the previous key before a rotation; under the process-wide key before tenant keys
        const old = new ale.KeyRing([mode === 'rotate' ? OLD_SECRET : SECRET]);
        for (let start = 0; start < ROWS; start += 5_000) {
          const rows = [];
          for (let id = start + 1; id <= Math.min(ROWS, start + 5_000); id++) {
            const tenant = TENANTS[id % TENANTS.length];
            const original = `note ${id} of ${tenant}`;
            rows.push({ id, tenant_id: tenant, body: old.encrypt(original, tenant, 'notes', 'body'), original });
          }
          await conn.insert(rows);
        }
        const job = { dialect, url, job: `${mode}-notes`, leaseMs: 2_000, rangeRows: 10_000, kek: KEK, mode };
        if (mode === 'to-tenant-keys') await withKeys(dialect, url, (keys) => keys.ready());
        // the worker killed halfway through its share
        const share = Math.ceil(ROWS / WORKERS / 500);
        const results = await Promise.all(Array.from({ length: WORKERS }, (_, i) => startWorker(job, i === 0 ? Math.ceil(share / 2) : 0)));
        assert.equal(results[0].signal, 'SIGKILL', 'the first worker was killed');
        for (const r of results.slice(1)) assert.equal(r.code, 0, `a surviving worker failed: ${JSON.stringify(r)}`);
        const written = results.slice(1).reduce((sum, r) => sum + JSON.parse(r.done).written, 0);
        assert.ok(written > 0 && written <= ROWS);

        const [{ n, once, again }] = await conn.run('SELECT count(*) AS n, sum(CASE WHEN writes = 1 THEN 1 ELSE 0 END) AS once, sum(CASE WHEN writes > 1 THEN 1 ELSE 0 END) AS again FROM lease_notes');
        assert.deepEqual([Number(n), Number(once), Number(again)], [ROWS, ROWS, 0], 'every row written exactly once');
        const [{ left }] = await conn.run("SELECT count(*) AS \"left\" FROM lease_notes WHERE body IS NULL");
        assert.equal(Number(left), 0);
        // each value equals its original, read with the new keys only
        const rows = await conn.run('SELECT id, tenant_id, body, original FROM lease_notes');
        let open;
        if (mode === 'rotate') {
          const ring = new ale.KeyRing([SECRET], { legacyFallbacks: false });
          open = (r) => ring.decrypt(r.body, r.tenant_id, 'notes', 'body');
        } else {
          const keys = await withKeys(dialect, url, async (k) => {
            for (const t of TENANTS) await k.load(t);
            return k;
          });
          open = (r) => {
            assert.ok(r.body.startsWith('v2:'), `row ${r.id} is not under its tenant key`);
            return keys.sealer.decrypt(r.body, r.tenant_id, 'notes', 'body');
          };
        }
        let wrong = 0;
        for (const r of rows) if (open(r) !== r.original) wrong++;
        assert.equal(wrong, 0);
        const [{ open: ranges }] = await conn.run("SELECT count(*) AS open FROM ale_jobs WHERE state <> 'done'");
        assert.equal(Number(ranges), 0, 'every range is done');
      });
    }
  });
}

const pgUrl = dialects.pg.url;
if (pgUrl) {
  test("docs/tenant-keys.md: the several-workers example, run as two processes at once, re-encrypts every row under the primary key", { timeout: 120_000 }, async () => {
    const c = postgres(pgUrl, { max: 2, onnotice: () => {} });
    try {
      await c.unsafe('DROP TABLE IF EXISTS notes');
      await c.unsafe('DROP TABLE IF EXISTS ale_jobs');
      await c.unsafe('CREATE TABLE notes (id integer PRIMARY KEY, tenant_id text NOT NULL, body text)');
      const old = new ale.KeyRing([OLD_SECRET]);
      const rows = Array.from({ length: 3_000 }, (_, i) => ({ id: i + 1, tenant_id: TENANTS[i % 3], body: old.encrypt(`note ${i + 1}`, TENANTS[i % 3], 'notes', 'body') }));
      await c`INSERT INTO notes ${c(rows, 'id', 'tenant_id', 'body')}`;
      const file = fileURLToPath(new URL(`./.readme-several-workers-${process.pid}.mjs`, import.meta.url));
      writeFileSync(file, example('several-workers'));
      try {
        const env = { ...process.env, DATABASE_URL: pgUrl, ENCRYPTION_KEY: SECRET, ENCRYPTION_KEY_PREVIOUS: OLD_SECRET };
        const run = () =>
          new Promise((resolve, reject) => {
            const p = spawn(process.execPath, [file], { stdio: ['ignore', 'pipe', 'inherit'], env });
            let out = '';
            p.stdout.on('data', (d) => (out += d));
            p.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`exit ${code}: ${out}`))));
          });
        const outs = await Promise.all([run(), run()]);
        const written = outs.map((o) => Number(/re-encrypted (\d+) values/.exec(o)?.[1]));
        assert.equal(written[0] + written[1], rows.length, `the two workers split the rows: ${written}`);
      } finally {
        rmSync(file, { force: true });
      }
      const ring = new ale.KeyRing([SECRET], { legacyFallbacks: false });
      const stored = await c.unsafe('SELECT id, tenant_id, body FROM notes ORDER BY id');
      assert.deepEqual(stored.map((r) => ring.decrypt(r.body, r.tenant_id, 'notes', 'body')), rows.map((r) => `note ${r.id}`));
    } finally {
      await c.unsafe('DROP TABLE IF EXISTS notes');
      await c.unsafe('DROP TABLE IF EXISTS ale_jobs');
      await c.end();
    }
  });
}
