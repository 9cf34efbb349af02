// Encryption counts kept fleet-wide: four app processes seal values for one
// tenant against one PostgreSQL or MariaDB database, each flushing its
// counts to the key table in batches. Once they have flushed, the stored
// count is the sum of theirs, and the first read of the tenant's rows past
// the threshold rotates its key.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { drizzle as drizzlePostgresJs } from 'drizzle-orm/postgres-js';
import { createPool } from 'mysql2/promise';
import { drizzle as drizzleMysql } from 'drizzle-orm/mysql2';
import * as pgMod from '@sveltycms/ale/drizzle/pg';
import * as mysqlMod from '@sveltycms/ale/drizzle/mysql';
import { KEK } from './tenant-keys-suite.mjs';
import { serverUrl } from './servers.mjs';

const writer = fileURLToPath(new URL('./fixtures/count-writer.mjs', import.meta.url));
const PROCESSES = 4;
const VALUES = 2_500;
const TABLE = 'fleet_keys';

/** Runs one writer; resolves with how many values it sealed. */
function write(job) {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [writer], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ALE_COUNT: JSON.stringify(job) } });
    let out = '';
    p.stdout.on('data', (d) => (out += d));
    p.on('error', reject);
    p.on('close', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop()).sealed) : reject(new Error(`a writer exited with ${code}: ${out}`))));
  });
}

const dialects = {
  pg: { url: serverUrl('PG_URL'), mod: pgMod, connect: (url) => { const c = postgres(url, { max: 2, onnotice: () => {} }); return { db: drizzlePostgresJs(c), close: () => c.end(), run: (q) => c.unsafe(q) }; } },
  mysql: { url: serverUrl('MYSQL_URL'), mod: mysqlMod, connect: (url) => { const p = createPool({ uri: url, connectionLimit: 2 }); return { db: drizzleMysql(p), close: () => p.end(), run: (q) => p.query(q) }; } },
};

for (const [dialect, { url, mod, connect }] of Object.entries(dialects)) {
  if (!url) continue;
  describe(`fleet-wide encryption counts: ${dialect}`, () => {
    let conn;
    before(async () => {
      conn = connect(url);
      await conn.run(`DROP TABLE IF EXISTS ${TABLE}`);
    });
    after(async () => {
      await conn.run(`DROP TABLE IF EXISTS ${TABLE}`);
      await conn.close();
    });

    test(`${PROCESSES} processes × ${VALUES.toLocaleString('en-US')} values: the stored count is their sum once they have flushed, and the key rotates at the threshold`, { timeout: 120_000 }, async () => {
      const keys = mod.tenantKeys(conn.db, { kek: KEK, table: TABLE, changeCheckEveryMs: 0, flushEveryMs: 0 });
      await keys.ready();
      await keys.load('acme');
      const first = keys.activeKeyId('acme');
      const sealed = await Promise.all(Array.from({ length: PROCESSES }, () => write({ dialect, url, kek: KEK, table: TABLE, tenant: 'acme', values: VALUES })));
      const total = sealed.reduce((a, b) => a + b, 0);
      assert.equal(total, PROCESSES * VALUES);
      const countOf = async (store, keyId) => (await store.describe('acme')).find((k) => k.keyId === keyId).encryptions;
      assert.equal(await countOf(keys, first), total, 'the stored count is the sum of every process');
      // the index key seals nothing
      assert.equal((await keys.describe('acme')).find((k) => k.purpose === 'index').encryptions, 0);
      // below the threshold nothing happens; at it, the first read of the rows rotates
      const below = mod.tenantKeys(conn.db, { kek: KEK, table: TABLE, changeCheckEveryMs: 0, flushEveryMs: 0, rotateAfterEncryptions: total + 1 });
      await below.load('acme');
      assert.equal(below.activeKeyId('acme'), first);
      const at = mod.tenantKeys(conn.db, { kek: KEK, table: TABLE, changeCheckEveryMs: 0, flushEveryMs: 0, rotateAfterEncryptions: total });
      await at.load('acme');
      const second = at.activeKeyId('acme');
      assert.notEqual(second, first, 'rotated at the threshold');
      const described = await at.describe('acme');
      assert.deepEqual(
        described.filter((k) => k.purpose === 'data').map((k) => [k.generation, k.state, k.encryptions]),
        [[1, 'decrypt-only', total], [2, 'active', 0]],
      );
      // a value sealed before the rotation still opens
      const old = keys.sealer.encrypt('before', 'acme', 'notes', 'body');
      assert.equal(at.sealer.decrypt(old, 'acme', 'notes', 'body'), 'before');
      // this process's own count goes to the new key
      at.sealer.encrypt('after', 'acme', 'notes', 'body');
      await at.flush();
      assert.equal(await countOf(at, second), 1);
    });
  });
}
