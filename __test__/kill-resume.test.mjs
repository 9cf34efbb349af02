// Kill -9 a migration, a rotation and a storage conversion (text to binary and
// back) midway, rerun them, and prove that every row ends as it should:
// encrypted under the primary key, or moved into the other column, readable,
// and equal to its original.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openSqlite, SQLITE_DRIVERS } from '../bench/sqlite.mjs';
import { tenantKeys } from '@sveltycms/ale/drizzle/sqlite';
import { ale, SECRET, OLD_SECRET } from './helpers.mjs';

const child = fileURLToPath(new URL('./fixtures/batch-child.mjs', import.meta.url));
const ROWS = 1500;
const BATCH = 50; // the child's batchSize

/**
 * Runs the child; with `killAfter`, the child stops itself once that batch is
 * committed, and is SIGKILLed while stopped: the kill lands at that point
 * every time, not at whatever point the child has reached.
 */
function runChild(driver, file, mode, killAfter) {
  return new Promise((resolve, reject) => {
    const args = [child, file, mode, ...(killAfter ? [String(killAfter)] : [])];
    const env = { ...process.env, ALE_TEST_SQLITE_DRIVER: driver };
    const p = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'], env });
    let out = '';
    p.stdout.on('data', (d) => {
      out += d;
      if (killAfter && out.includes(`paused after batch ${killAfter}\n`)) p.kill('SIGKILL');
    });
    p.on('error', reject);
    p.on('close', (code, signal) => resolve({ code, signal, out }));
  });
}

async function seed(mode) {
  const dir = mkdtempSync(join(tmpdir(), 'ale-kill-'));
  const file = join(dir, 'docs.db');
  const s = await openSqlite(file);
  s.exec('CREATE TABLE docs (id INTEGER PRIMARY KEY, tenant_id TEXT NOT NULL, body TEXT, body_bin BLOB)');
  const old = new ale.KeyRing([OLD_SECRET]);
  const insert = s.all.bind(s);
  const originals = new Map();
  s.exec('BEGIN');
  for (let id = 1; id <= ROWS; id++) {
    const tenant = `tenant-${id % 3}`;
    const body = id % 97 === 0 ? null : `document ${id} — ünïcödé ✓ ${'x'.repeat(id % 200)}`;
    originals.set(id, { tenant, body });
    const stored = body === null ? null : mode === 'migrate' ? body : old.encrypt(body, tenant, 'docs', 'body');
    insert(`INSERT INTO docs VALUES (${id}, '${tenant}', ${stored === null ? 'NULL' : `'${stored.replace(/'/g, "''")}'`}, NULL) RETURNING id`);
  }
  s.exec('COMMIT');
  s.close();
  return { dir, file, originals };
}

async function check(file, originals) {
  const s = await openSqlite(file);
  const primary = new ale.KeyRing([SECRET]);
  const rows = s.all('SELECT id, tenant_id, body FROM docs ORDER BY id');
  s.close();
  assert.equal(rows.length, ROWS);
  for (const r of rows) {
    const want = originals.get(r.id);
    if (want.body === null) {
      assert.equal(r.body, null);
      continue;
    }
    assert.equal(primary.decrypt(r.body, r.tenant_id, 'docs', 'body'), want.body, `row ${r.id}`);
  }
}

async function countUnderPrimary(file) {
  const s = await openSqlite(file);
  const rows = s.all('SELECT tenant_id, body FROM docs WHERE body IS NOT NULL');
  s.close();
  const ring = new ale.KeyRing([SECRET, OLD_SECRET]);
  return rows.filter((r) => ale.isEnvelope(r.body) && ring.keyIndex(r.body, r.tenant_id, 'docs', 'body') === 0).length;
}

/**
 * Seeds envelopes for a conversion: text envelopes in `body` ('to-binary') or
 * binary ones in `body_bin` ('to-text'), under the primary key, every
 * seventh with a 12-byte IV; NULLs as in seed().
 */
async function seedEnvelopes(mode) {
  const dir = mkdtempSync(join(tmpdir(), 'ale-kill-'));
  const file = join(dir, 'docs.db');
  const s = await openSqlite(file);
  s.exec('CREATE TABLE docs (id INTEGER PRIMARY KEY, tenant_id TEXT NOT NULL, body TEXT, body_bin BLOB)');
  const rings = [new ale.KeyRing([SECRET]), new ale.KeyRing([SECRET], { ivLength: 12 })];
  const originals = new Map();
  s.exec('BEGIN');
  for (let id = 1; id <= ROWS; id++) {
    const tenant = `tenant-${id % 3}`;
    const body = id % 97 === 0 ? null : `document ${id} — ünïcödé ✓ ${'x'.repeat(id % 200)}`;
    const text = body === null ? null : rings[id % 7 === 0 ? 1 : 0].encrypt(body, tenant, 'docs', 'body');
    originals.set(id, { tenant, body, text });
    const [bodyText, bodyBin] = text === null ? ['NULL', 'NULL'] : mode === 'to-binary' ? [`'${text}'`, 'NULL'] : ['NULL', `X'${ale.envelopeToBytes(text).toString('hex')}'`];
    s.exec(`INSERT INTO docs VALUES (${id}, '${tenant}', ${bodyText}, ${bodyBin})`);
  }
  s.exec('COMMIT');
  s.close();
  return { dir, file, originals };
}

/** The rows as [source, target] for a conversion's direction. */
async function cellsOf(file, mode) {
  const s = await openSqlite(file);
  const rows = s.all('SELECT id, tenant_id, body, body_bin FROM docs ORDER BY id');
  s.close();
  return rows.map((r) => ({ id: r.id, tenant: r.tenant_id, source: mode === 'to-binary' ? r.body : r.body_bin, target: mode === 'to-binary' ? r.body_bin : r.body }));
}

for (const driver of SQLITE_DRIVERS) describe(`kill -9 and resume (${driver})`, () => {
  for (const mode of ['migrate', 'rotate']) {
    test(`${mode}: killed after batch 4, rerun, every row correct and under the primary key`, async () => {
      const { dir, file, originals } = await seed(mode);
      try {
        const killed = await runChild(driver, file, mode, 4);
        assert.equal(killed.signal, 'SIGKILL', killed.out);
        assert.match(killed.out, /paused after batch 4\n$/);
        const partial = await countUnderPrimary(file);
        const nonNull = [...originals.values()].filter((o) => o.body !== null).length;
        const inFourBatches = [...originals].filter(([id, o]) => id <= 4 * BATCH && o.body !== null).length;
        assert.equal(partial, inFourBatches, 'exactly the first 4 batches were done when the child was killed');
        const resumed = await runChild(driver, file, mode);
        assert.equal(resumed.code, 0, resumed.out);
        const done = JSON.parse(resumed.out.split('done ')[1]);
        assert.equal(done.written, nonNull - partial, 'the rerun rewrote only what was left');
        await check(file, originals);
        assert.equal(await countUnderPrimary(file), nonNull);
        console.log(`${mode}: killed with ${partial}/${nonNull} done; the rerun wrote ${done.written} and skipped ${done.skipped}`);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }

  for (const mode of ['to-binary', 'to-text']) {
    test(`convertStorage ${mode}: killed after batch 4, rerun, every value moved exactly once, losslessly`, async () => {
      const { dir, file, originals } = await seedEnvelopes(mode);
      try {
        const killed = await runChild(driver, file, mode, 4);
        assert.equal(killed.signal, 'SIGKILL', killed.out);
        assert.match(killed.out, /paused after batch 4\n$/);
        const nonNull = [...originals.values()].filter((o) => o.body !== null).length;
        const inFourBatches = [...originals].filter(([id, o]) => id <= 4 * BATCH && o.body !== null).length;
        const atKill = await cellsOf(file, mode);
        const moved = atKill.filter((r) => r.target !== null);
        assert.equal(moved.length, inFourBatches, 'exactly the first 4 batches were moved when the child was killed');
        assert.ok(moved.every((r) => r.id <= 4 * BATCH && r.source === null), 'a moved value left its source NULL, in the same transaction');
        assert.ok(atKill.every((r) => r.id <= 4 * BATCH || r.target === null), 'nothing after batch 4 was touched');
        const resumed = await runChild(driver, file, mode);
        assert.equal(resumed.code, 0, resumed.out);
        const done = JSON.parse(resumed.out.split('done ')[1]);
        assert.equal(done.written, nonNull - inFourBatches, 'the rerun moved only what was left');
        assert.equal(done.nulls, ROWS - done.written, 'every other row had a NULL source: moved before, or NULL from the start');
        const primary = new ale.KeyRing([SECRET]);
        const rows = await cellsOf(file, mode);
        assert.equal(rows.length, ROWS);
        for (const r of rows) {
          const want = originals.get(r.id);
          assert.equal(r.source, null, `row ${r.id}`);
          if (want.body === null) {
            assert.equal(r.target, null, `row ${r.id}`);
            continue;
          }
          if (mode === 'to-binary') {
            assert.ok(r.target instanceof Uint8Array, `row ${r.id}`);
            assert.equal(ale.envelopeFromBytes(r.target), want.text, `row ${r.id}: the same envelope`);
            assert.equal(primary.decryptBinary(r.target, r.tenant, 'docs', 'body'), want.body, `row ${r.id}`);
          } else {
            assert.equal(r.target, want.text, `row ${r.id}: the same envelope`);
            assert.equal(primary.decrypt(r.target, r.tenant, 'docs', 'body'), want.body, `row ${r.id}`);
          }
        }
        const again = await runChild(driver, file, mode);
        assert.deepEqual(JSON.parse(again.out.split('done ')[1]).written, 0);
        console.log(`convertStorage ${mode}: killed with ${inFourBatches}/${nonNull} moved; the rerun moved ${done.written}`);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }

  test('convertToTenantKeys: killed after batch 4, rerun, every value under its tenant key exactly once, equal to its original', async () => {
    const { dir, file, originals } = await seedEnvelopes('to-binary');
    const underTenantKeys = async () => (await cellsOf(file, 'to-binary')).filter((r) => r.source?.startsWith('v2:'));
    try {
      const killed = await runChild(driver, file, 'to-tenant-keys', 4);
      assert.equal(killed.signal, 'SIGKILL', killed.out);
      const nonNull = [...originals.values()].filter((o) => o.body !== null).length;
      const inFourBatches = [...originals].filter(([id, o]) => id <= 4 * BATCH && o.body !== null).length;
      const atKill = await underTenantKeys();
      assert.equal(atKill.length, inFourBatches, 'exactly the first 4 batches were converted when the child was killed');
      assert.ok(atKill.every((r) => r.id <= 4 * BATCH));
      const resumed = await runChild(driver, file, 'to-tenant-keys');
      assert.equal(resumed.code, 0, resumed.out);
      const done = JSON.parse(resumed.out.split('done ')[1]);
      assert.equal(done.written, nonNull - inFourBatches, 'the rerun converted only what was left');
      const s = await openSqlite(file, { wal: false });
      try {
        const keys = tenantKeys(s.db, { kek: 'kill-resume-kek-0123456789-abcdefghijkl' });
        for (const tenant of ['tenant-0', 'tenant-1', 'tenant-2']) await keys.load(tenant);
        const rows = await cellsOf(file, 'to-binary');
        assert.equal(rows.length, ROWS);
        for (const r of rows) {
          const want = originals.get(r.id);
          if (want.body === null) {
            assert.equal(r.source, null);
            continue;
          }
          assert.ok(r.source.startsWith(`v2:${keys.activeKeyId(r.tenant)}:`), `row ${r.id}`);
          assert.equal(keys.sealer.decrypt(r.source, r.tenant, 'docs', 'body'), want.body, `row ${r.id}`);
        }
      } finally {
        s.close();
      }
      const again = await runChild(driver, file, 'to-tenant-keys');
      assert.equal(JSON.parse(again.out.split('done ')[1]).written, 0);
      console.log(`convertToTenantKeys: killed with ${inFourBatches}/${nonNull} converted; the rerun converted ${done.written}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
