// The tenant-key contract on real SQLite files in WAL mode, through every
// driver SveltyCMS uses (node:sqlite behind sqlite-proxy and better-sqlite3
// under Node, bun:sqlite under Bun), and the backup test on a real file
// snapshot.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { eq } from 'drizzle-orm';
import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import * as mod from '@sveltycms/ale/drizzle/sqlite';
import { nodeSqliteProxy, openSqlite, SQLITE_DRIVERS } from '../bench/sqlite.mjs';
import { defineKeyedTables, keyedDdl, KEK, NEW_KEK, tenantKeysSuite } from './tenant-keys-suite.mjs';
import { ale, SECRET } from './helpers.mjs';
import { sqliteConnection } from './fixtures/connect.mjs';

const builders = { table: sqliteTable, int: integer, text };
const types = { int: 'INTEGER', text: 'TEXT', envelope: 'TEXT', index: 'TEXT', binary: 'BLOB' };

for (const driver of SQLITE_DRIVERS) {
  tenantKeysSuite({
    name: `sqlite (${driver}, WAL)`,
    mod,
    builders,
    types,
    connect: () => sqliteConnection(driver),
  });
}

test('backups: a snapshot taken before a shred opens the tenant while the old KEK exists, and not once only the new KEK is left', async () => {
  ale.initKeyRing([SECRET]);
  const dir = mkdtempSync(join(tmpdir(), 'ale-tk-backup-'));
  const live = join(dir, 'live.db');
  const backup = join(dir, 'backup.db');
  try {
    const s = await openSqlite(live);
    for (const stmt of keyedDdl(types)) s.exec(stmt);
    const keys = mod.tenantKeys(s.db, { kek: KEK, changeCheckEveryMs: 0 });
    await keys.ready();
    const { notes } = defineKeyedTables(mod, builders, keys);
    for (const tenant of ['acme', 'globex']) {
      await keys.withTenant(tenant, () => s.db.insert(notes).values({ id: tenant.length, tenantId: tenant, body: `${tenant} data`, bodyIndex: `${tenant} data` }));
    }
    // 1. the nightly backup: a consistent copy of the file
    s.exec(`VACUUM INTO '${backup}'`);
    // 2. acme leaves: shred, then rewrap every remaining key under a new KEK
    await keys.shred('acme');
    await keys.rewrap(NEW_KEK);
    s.close();

    const bodyOf = async (file, kek, tenant) => {
      const b = await openSqlite(file, { wal: false });
      try {
        const store = mod.tenantKeys(b.db, { kek, changeCheckEveryMs: 0 });
        const table = defineKeyedTables(mod, builders, store).notes;
        const rows = await store.withTenant(tenant, () => b.db.select({ body: table.body }).from(table).where(eq(table.tenantId, tenant)));
        return rows.map((r) => r.body);
      } catch (e) {
        return e.code;
      } finally {
        b.close();
      }
    };
    // the live database: acme is gone, globex opens under the new KEK alone
    assert.equal(await bodyOf(live, NEW_KEK, 'acme'), 'ALE_KEY_SHREDDED');
    assert.deepEqual(await bodyOf(live, NEW_KEK, 'globex'), ['globex data']);
    // 3. the backup, restored while the old KEK is still configured: acme opens
    const restored = join(dir, 'restored.db');
    copyFileSync(backup, restored);
    assert.deepEqual(await bodyOf(restored, [NEW_KEK, KEK], 'acme'), ['acme data']);
    // 4. the old KEK destroyed: with only the new one, the backup's acme does not open
    copyFileSync(backup, restored);
    assert.equal(await bodyOf(restored, NEW_KEK, 'acme'), 'ALE_INVALID_KEY');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a change check slower than changeCheckEveryMs: load() waits for one check, not until none is due', { skip: process.versions.bun && 'node:sqlite behind sqlite-proxy is the Node adapter' }, async () => {
  ale.initKeyRing([SECRET]);
  const { DatabaseSync } = await import('node:sqlite');
  const { drizzle } = await import('drizzle-orm/sqlite-proxy');
  const proxy = nodeSqliteProxy(new DatabaseSync(':memory:'));
  let latencyMs = 0;
  const db = drizzle(async (q, params, method) => (latencyMs > 0 && (await sleep(latencyMs)), proxy(q, params, method)));
  const keys = mod.tenantKeys(db, { kek: KEK, changeCheckEveryMs: 50, flushEveryMs: 0 });
  try {
    await keys.ready();
    await keys.load('acme');
    // Each query now takes twice the interval, so a check is due again the moment one ends.
    latencyMs = 100;
    await sleep(200);
    const started = Date.now();
    const outcome = await Promise.race([keys.load('acme').then(() => 'loaded'), sleep(5_000, 'still waiting', { ref: false })]);
    assert.equal(outcome, 'loaded', `after ${Date.now() - started} ms`);
    assert.equal(await keys.withTenant('acme', () => 'ran'), 'ran');
  } finally {
    latencyMs = 0;
    await keys.close();
  }
});

test("a key insert the database refuses: the column's error says why in the driver's words, and not the wrapped keys the insert sent", async () => {
  ale.initKeyRing([SECRET]);
  const conn = await sqliteConnection(SQLITE_DRIVERS[0]);
  const keys = mod.tenantKeys(conn.db, { kek: KEK, table: 'refusing_keys', changeCheckEveryMs: 0, flushEveryMs: 0 });
  try {
    await keys.ready();
    await conn.query("CREATE TRIGGER refuse BEFORE INSERT ON refusing_keys WHEN new.tenant <> 'globex' OR new.generation > 1 BEGIN SELECT RAISE(ABORT, 'inserts refused here'); END");
    const notes = defineKeyedTables(mod, builders, keys).notes;
    for (const stmt of keyedDdl(types)) await conn.query(stmt);
    const failed = await mod.withTenant('acme', () => conn.db.insert(notes).values({ id: 1, tenantId: 'acme', body: 'needs a key' })).then(() => null, (e) => e);
    assert.equal(failed?.code, 'ALE_KEY_NOT_LOADED');
    assert.match(failed.message, /inserts refused here/);
    // nor anything it wraps: no error of the chain is Drizzle's, whose message lists the parameters
    const clean = (error) => {
      for (let e = error; e; e = e.cause) assert.ok(!/params:|Failed query/.test(e.message), e.message);
    };
    clean(failed);
    // load() says the same
    const loadError = await keys.load('acme').then(() => null, (e) => e);
    assert.equal(loadError?.code, 'ALE_KEY_NOT_LOADED');
    clean(loadError);
    // and the store's other operations: globex loads (its first keys are let in), its rotation's insert is refused
    await keys.load('globex');
    const rotated = await keys.rotate('globex').then(() => null, (e) => e);
    assert.equal(rotated?.code, 'ALE_KEY_TABLE_FAILED');
    assert.match(rotated.message, /inserts refused here/);
    clean(rotated);
  } finally {
    await keys.close();
    conn.close();
  }
});

test('a driver of safe integers (bigints for INTEGER columns) loads, seals, opens and rotates tenant keys', async () => {
  ale.initKeyRing([SECRET]);
  const dir = mkdtempSync(join(tmpdir(), 'ale-tk-safe-'));
  const file = join(dir, 'safe.db');
  let close;
  let db;
  if (process.versions.bun) {
    const { Database } = await import('bun:sqlite');
    const { drizzle } = await import('drizzle-orm/bun-sqlite');
    const client = new Database(file, { safeIntegers: true });
    [db, close] = [drizzle(client), () => client.close()];
  } else {
    const { default: Database } = await import('better-sqlite3');
    const { drizzle } = await import('drizzle-orm/better-sqlite3');
    const client = new Database(file);
    client.defaultSafeIntegers(true);
    [db, close] = [drizzle(client), () => client.close()];
  }
  const keys = mod.tenantKeys(db, { kek: KEK, changeCheckEveryMs: 0, flushEveryMs: 0 });
  try {
    await keys.ready();
    await keys.load('acme');
    const sealed = keys.sealer.encrypt('x', 'acme', 'notes', 'body');
    const { keyId } = await keys.rotate('acme');
    assert.equal(keys.activeKeyId('acme'), keyId);
    assert.equal(keys.sealer.decrypt(sealed, 'acme', 'notes', 'body'), 'x');
    assert.deepEqual((await keys.describe('acme')).map((k) => k.generation).sort(), [1, 1, 2]);
  } finally {
    await keys.close();
    close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a key table made before the encryption counts, ready() not run: a load fails, on every driver (Bun reads the missing column as its name)', async () => {
  ale.initKeyRing([SECRET]);
  const conn = await sqliteConnection(SQLITE_DRIVERS[0]);
  const keys = mod.tenantKeys(conn.db, { kek: KEK, table: 'old_keys', changeCheckEveryMs: 0, flushEveryMs: 0 });
  try {
    await keys.ready();
    await keys.load('acme');
    keys.forget('acme');
    await conn.query('ALTER TABLE old_keys DROP COLUMN encryptions');
    const e = await keys.load('acme').then(() => null, (error) => error);
    assert.ok(['ALE_KEY_TABLE_FAILED', 'ALE_KEY_NOT_LOADED'].includes(e?.code), String(e));
    assert.match(e.message, /encryptions/);
  } finally {
    await keys.close();
    conn.close();
  }
});

test('ensureTable tries a CREATE again after 100 ms when it fails, also when the driver throws at once (bun:sqlite, better-sqlite3)', async () => {
  const { ensureTable } = await import('../dist/esm/drizzle/kept-tables.js');
  let calls = 0;
  const spec = {
    create: () => ['CREATE TABLE x (id INTEGER)'],
    upgrade: () => [],
    execute: () => {
      if (++calls === 1) throw new Error('database is locked');
      return [];
    },
  };
  const db = { select: () => ({ from: () => ({ limit: () => Promise.resolve([]) }) }) };
  await ensureTable(db, spec, 'x', 'id');
  assert.equal(calls, 2);
});

test("a KEK provider's own error (no ALE code) reaches the caller as it is, not relabelled a database failure", async () => {
  ale.initKeyRing([SECRET]);
  const conn = await sqliteConnection(SQLITE_DRIVERS[0]);
  const local = mod.localKek(KEK);
  let throttled = false;
  const kms = { ...local, id: local.id, holds: (ref) => local.holds(ref), unwrap: (...a) => local.unwrap(...a), wrap: (...a) => (throttled ? Promise.reject(Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' })) : local.wrap(...a)) };
  const keys = mod.tenantKeys(conn.db, { kek: kms, table: 'kms_keys', changeCheckEveryMs: 0, flushEveryMs: 0 });
  try {
    await keys.ready();
    await keys.load('acme');
    throttled = true;
    const e = await keys.rotate('acme').then(() => null, (error) => error);
    assert.deepEqual([e?.name, e?.message, e?.code], ['ThrottlingException', 'Rate exceeded', undefined]);
    const loadError = await keys.load('globex').then(() => null, (error) => error);
    assert.equal(loadError?.code, 'ALE_KEY_NOT_LOADED');
    assert.equal(loadError.cause?.name, 'ThrottlingException', 'kept as the cause');
  } finally {
    await keys.close();
    conn.close();
  }
});

test('close() then bind() to another database: a tenant shredded in the first is a live tenant of the second, read from its own rows', async () => {
  const [first, second] = await Promise.all([openSqlite(':memory:', { wal: false }), openSqlite(':memory:', { wal: false })]);
  const keys = mod.tenantKeys(undefined, { flushEveryMs: 0, changeCheckEveryMs: 0 });
  try {
    keys.bind(first.db, { kek: KEK });
    await keys.ready();
    await keys.shred('acme');
    await keys.close();
    keys.bind(second.db, { kek: KEK });
    await keys.ready();
    await keys.load('acme');
    assert.deepEqual((await keys.describe('acme')).map((k) => k.state), ['active', 'active']);
    assert.match(keys.activeKeyId('acme'), /^[A-Za-z0-9_-]{22}$/);
    // and back on the first, the tombstone is read again
    await keys.close();
    keys.bind(first.db, { kek: KEK });
    assert.equal((await keys.load('acme').then(() => keys.activeKeyId('acme')).catch((e) => e))?.code, 'ALE_KEY_SHREDDED');
  } finally {
    await keys.close().catch(() => undefined);
    first.close();
    second.close();
  }
});

test('key rows a process created are written back for as long as it holds the tenant, however late the read (the default recheckAfterMs); not once the tenant left memory', async () => {
  // The store's coarse clock (keys/cache.ts), moved on by hand: the test does not wait.
  const { clock } = await import('../dist/esm/drizzle/keys/cache.js');
  const s = await openSqlite(':memory:', { wal: false });
  const keys = mod.tenantKeys(s.db, { kek: KEK, changeCheckEveryMs: 0, flushEveryMs: 0 });
  const ids = () => s.all("SELECT key_id AS k FROM ale_keys WHERE tenant = 'acme' ORDER BY purpose").map((r) => r.k);
  try {
    await keys.ready();
    await keys.load('acme');
    const made = ids();
    s.exec("DELETE FROM ale_keys WHERE tenant = 'acme'");
    clock.now += 130_000; // past the 60 s re-read and the 90 s a key may seal unconfirmed
    await keys.load('acme');
    assert.deepEqual(ids(), made, 'written back');
    // as last read: what changed since (a flushed count; a retired key destroyed) is what comes back
    s.exec("UPDATE ale_keys SET encryptions = 999 WHERE tenant = 'acme' AND purpose = 'data'");
    clock.now += 61_000;
    await keys.load('acme');
    s.exec("DELETE FROM ale_keys WHERE tenant = 'acme'");
    clock.now += 61_000;
    await keys.load('acme');
    assert.deepEqual(s.all("SELECT encryptions AS n FROM ale_keys WHERE tenant = 'acme' AND purpose = 'data'").map((r) => Number(r.n)), [999]);
    keys.forget('acme');
    s.exec("DELETE FROM ale_keys WHERE tenant = 'acme'");
    await keys.load('acme');
    assert.equal(ids().filter((k) => made.includes(k)).length, 0, 'new keys once the tenant left memory');
  } finally {
    await keys.close();
    s.close();
  }
});

test('a store given no KEK (an unset variable) makes a column used through withTenant say so, ALE_NOT_INITIALIZED, not that the query needs withTenant', async () => {
  const s = await openSqlite(':memory:', { wal: false });
  for (const stmt of keyedDdl(types)) s.exec(stmt);
  const keys = mod.tenantKeys(s.db, { kek: process.env.ALE_TEST_NO_SUCH_VARIABLE });
  try {
    const notes = defineKeyedTables(mod, builders, keys).notes;
    const e = await mod.withTenant('acme', () => s.db.insert(notes).values({ id: 1, tenantId: 'acme', body: 'x' })).then(() => null, (err) => err);
    assert.equal(e?.code, 'ALE_NOT_INITIALIZED', String(e));
    assert.match(e.message, /this store has no KEK yet/);
  } finally {
    await keys.close();
    s.close();
  }
});
