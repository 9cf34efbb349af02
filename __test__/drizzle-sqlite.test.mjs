// The Drizzle contract on real SQLite in WAL mode, through every driver
// SveltyCMS uses: node:sqlite behind drizzle-orm/sqlite-proxy and
// better-sqlite3 under Node, bun:sqlite under Bun.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import * as mod from '@sveltycms/ale/drizzle/sqlite';
import { openSqlite, SQLITE_DRIVERS } from '../bench/sqlite.mjs';
import { defineTables, drizzleSuite, tableDdl, TABLES } from './drizzle-suite.mjs';
import { ale, SECRET } from './helpers.mjs';

const ddl = tableDdl({ int: 'INTEGER', text: 'TEXT', envelope: 'TEXT', index: 'TEXT', binary: 'BLOB' });

for (const driver of SQLITE_DRIVERS) drizzleSuite({
  name: `sqlite (${driver}, WAL)`,
  mod,
  binaryType: 'blob',
  textInBlob: true,
  schema: (m, rings) => defineTables(m, { table: sqliteTable, int: integer, text }, rings),
  async connect() {
    const dir = mkdtempSync(join(tmpdir(), 'ale-sqlite-'));
    const s = await openSqlite(join(dir, 'test.db'), { driver });
    if (s.all('PRAGMA journal_mode')[0].journal_mode !== 'wal') throw new Error('WAL mode is not on');
    return {
      db: s.db,
      async reset() {
        for (const name of TABLES) s.exec(`DROP TABLE IF EXISTS ${name}`);
        for (const stmt of ddl) s.exec(stmt);
      },
      close() {
        s.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
});

test('a batch operation over a table whose TEXT primary key holds NULLs refuses with ALE_INVALID_INPUT before writing, instead of passing those rows', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ale-sqlite-'));
  const s = await openSqlite(join(dir, 'nulls.db'), { driver: SQLITE_DRIVERS[0] });
  try {
    // SQLite lets a primary key that is not an INTEGER one hold NULLs.
    s.exec("CREATE TABLE legacy (id TEXT PRIMARY KEY, body TEXT); INSERT INTO legacy VALUES (NULL, 'a'), (NULL, 'b'), ('k1', 'c')");
    const t = sqliteTable('legacy', { id: text('id').primaryKey(), body: mod.encryptedText('body', { collection: 'legacy', keyRing: new ale.KeyRing([SECRET]) }) });
    const e = await mod.migratePlaintext(s.db, { table: t, key: t.id, columns: [{ column: t.body }], tenant: 'acme', batchSize: 2 }).then(() => null, (error) => error);
    assert.equal(e?.code, 'ALE_INVALID_INPUT');
    assert.match(e.message, /key column "id" is NULL/);
    assert.deepEqual(s.all('SELECT body FROM legacy ORDER BY body').map((r) => r.body), ['a', 'b', 'c'], 'nothing written');
  } finally {
    s.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a key column that reads two rows with one key (a rounding mapper, here to tens) is refused before the batch is written, on every SQLite driver', async () => {
  const { customType } = await import('drizzle-orm/sqlite-core');
  const tens = customType({ dataType: () => 'integer', fromDriver: (v) => Math.floor(Number(v) / 10) * 10 });
  const keyRing = new ale.KeyRing([SECRET]);
  const notes = sqliteTable('rounded_notes', { id: tens('id').primaryKey(), body: mod.encryptedText('body', { collection: 'notes', keyRing }) });
  for (const driver of SQLITE_DRIVERS) {
    const s = await openSqlite(':memory:', { driver, wal: false });
    try {
      s.exec("CREATE TABLE rounded_notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO rounded_notes VALUES (11, 'a'), (12, 'b')");
      const e = await mod.migratePlaintext(s.db, { table: notes, key: notes.id, columns: [{ column: notes.body }], tenant: 'acme' }).catch((e) => e);
      assert.equal(e?.code, 'ALE_INVALID_INPUT', `${driver}: ${e?.stack ?? JSON.stringify(e)}`);
      assert.match(e.message, /read 10 after 10: the driver or the column rounds the keys \(or the key is not unique\)/);
      assert.deepEqual(s.all('SELECT body FROM rounded_notes ORDER BY id').map((r) => r.body), ['a', 'b'], 'nothing was written');
    } finally {
      s.close();
    }
  }
});

test("a row moved to another tenant between a batch's read and its write is not written: its value would be sealed for the tenant it left", async () => {
  const { drizzleDriver } = await import('../dist/esm/drizzle/batch.js');
  const { sqliteTransact } = await import('../dist/esm/drizzle/sqlite-core/compare.js');
  const dir = mkdtempSync(join(tmpdir(), 'ale-sqlite-'));
  const s = await openSqlite(join(dir, 'moved.db'), { driver: SQLITE_DRIVERS[0] });
  try {
    s.exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, tenant TEXT NOT NULL, body TEXT); INSERT INTO notes VALUES (1, 'acme', 'hello'), (2, 'acme', 'kept')");
    const ring = new ale.KeyRing([SECRET]);
    const t = sqliteTable('notes', { id: integer('id').primaryKey(), tenant: text('tenant').notNull(), body: mod.encryptedText('body', { collection: 'notes', keyRing: ring }) });
    const driver = drizzleDriver(s.db, t, t.id, [t.body], { column: t.tenant }, sqliteTransact);
    const rows = await driver.fetch(undefined, 10);
    assert.deepEqual(rows.map((r) => r.tenant), ['acme', 'acme']);
    s.exec("UPDATE notes SET tenant = 'globex' WHERE id = 1"); // the application moves a plaintext row meanwhile
    const sealed = rows.map((r) => ({ key: r.key, set: [[0, ring.encrypt(r.cells[0], r.tenant, 'notes', 'body')]], expect: [[0, r.cells[0]]] }));
    assert.equal(await driver.apply(sealed), 1, 'only the row still in its tenant');
    assert.deepEqual({ ...s.all('SELECT tenant, body FROM notes WHERE id = 1')[0] }, { tenant: 'globex', body: 'hello' }, 'the moved row keeps its plaintext, for the next run');
  } finally {
    s.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a key read as a Date (a timestamp key, which a Date rounds to the millisecond) is refused before the batch is written', async () => {
  const { exactKeys } = await import('../dist/esm/drizzle/batch-keys.js');
  const { integer: int, text: txt } = await import('drizzle-orm/sqlite-core');
  const t = sqliteTable('k', { seconds: int('seconds', { mode: 'timestamp' }), slug: txt('slug'), doc: txt('doc', { mode: 'json' }) });
  // a timestamp of microseconds that the column made a Date (PostgreSQL, MySQL): it does not map back
  const micros = { name: 'created_at', mapToDriverValue: (d) => d.toISOString() };
  assert.throws(() => exactKeys(undefined, [{ key: new Date(0) }], [{ rawKey: '1970-01-01 00:00:00.000123' }], micros), (e) => e.code === 'ALE_INVALID_INPUT' && /"created_at" reads .* as the Date/.test(e.message));
  // exact where it maps back to the stored value: SQLite's integer timestamps, a JSON text key
  exactKeys(undefined, [{ key: new Date(1000) }], [{ rawKey: 1 }], t.seconds);
  exactKeys(undefined, [{ key: 'abc' }], [{ rawKey: '"abc"' }], t.doc);
  assert.throws(() => exactKeys('b', [{ key: 'b' }], [{ rawKey: 'b' }], t.slug), (e) => e.code === 'ALE_INVALID_INPUT' && /not unique/.test(e.message), 'a text key equal to the last');
  const folds = { name: 'slug', mapToDriverValue: (v) => v };
  assert.throws(() => exactKeys(undefined, [{ key: 'b' }], [{ rawKey: 'B' }], folds), (e) => e.code === 'ALE_INVALID_INPUT' && /does not give the stored key back/.test(e.message), 'a mapper that lowers case');
  exactKeys(undefined, [{ key: Buffer.from('a') }, { key: 'x' }, { key: 2n }], [{ rawKey: Buffer.from('a') }, { rawKey: 'x' }, { rawKey: 2n }], t.slug);
});
