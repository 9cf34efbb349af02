// The Drizzle contract on a real PostgreSQL server, through both drivers:
// node-postgres (`pg`) and postgres.js (`postgres`, the driver SveltyCMS
// uses). They pass bytea differently (pg sends a Buffer as a binary
// parameter; postgres.js infers type 17 from a Uint8Array and sends hex), so
// the binary-storage tests run through each.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import postgres from 'postgres';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { drizzle as drizzlePostgresJs } from 'drizzle-orm/postgres-js';
import { integer, numeric, pgTable, text } from 'drizzle-orm/pg-core';
import * as mod from '@sveltycms/ale/drizzle/pg';
import { defineTables, drizzleSuite, tableDdl, TABLES } from './drizzle-suite.mjs';
import { serverUrl } from './servers.mjs';
import { ale, SECRET } from './helpers.mjs';
import { serverExample } from './fixtures/readme-examples.mjs';

const url = serverUrl('PG_URL');
const ddl = tableDdl({ int: 'INTEGER', text: 'TEXT', envelope: 'TEXT', index: 'CHAR(43)', binary: 'BYTEA' });
const reset = async (query) => {
  await query(`DROP TABLE IF EXISTS ${TABLES.join(', ')}`);
  for (const stmt of ddl) await query(stmt);
};

const drivers = {
  'node-postgres': async () => {
    const pool = new pg.Pool({ connectionString: url, max: 4 });
    await pool.query('SELECT 1');
    return { db: drizzlePg(pool), reset: () => reset((q) => pool.query(q)), close: () => pool.end() };
  },
  'postgres.js': async () => {
    const client = postgres(url, { max: 4, onnotice: () => {} });
    await client`SELECT 1`;
    return { db: drizzlePostgresJs(client), reset: () => reset((q) => client.unsafe(q)), close: () => client.end() };
  },
};

if (url) {
  for (const [driver, connect] of Object.entries(drivers)) {
    drizzleSuite({
      name: `pg (${driver})`,
      mod,
      binaryType: 'bytea',
      schema: (m, rings) => defineTables(m, { table: pgTable, int: integer, text }, rings),
      connect,
    });
  }
}

if (url) {
  test("README: the PostgreSQL example runs (after the contract suite, on the suite's database)", async () => {
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    try {
      const ddl = 'CREATE TABLE users (id SERIAL PRIMARY KEY, tenant_id TEXT NOT NULL, email TEXT, profile TEXT)';
      const { rows, stored } = await serverExample('pg', { url, ddl, query: async (q) => (await pool.query(q)).rows });
      assert.deepEqual(rows, [{ id: 1, tenantId: 'tenant-1', email: 'a@b.c', profile: null }]);
      assert.equal(new ale.KeyRing([SECRET]).decrypt(stored[0], 'tenant-1', 'users', 'email'), 'a@b.c');
    } finally {
      await pool.end();
    }
  });
}

if (url) {
  test('a relation nested in db.query (JSON): a binary envelope and a legacy plaintext in bytea read; a range or search index (64-bit tokens, rounded) reads, and is refused where it would be written back; read at the top level it writes back as it is', async () => {
    const { and, eq, relations, sql } = await import('drizzle-orm');
    const keyRing = new ale.KeyRing([SECRET]);
    const customers = pgTable('ale_nested_customers', { id: integer('id').primaryKey() });
    const orders = pgTable('ale_nested_orders', {
      id: integer('id').primaryKey(),
      customerId: integer('customer_id').notNull(),
      total: mod.encryptedNumber('total', { collection: 'orders', keyRing, tenant: 'acme' }),
      totalRange: mod.rangeIndexColumn('total_range', { type: 'number', collection: 'orders', field: 'total', keyRing, tenant: 'acme' }),
      note: mod.encryptedText('note', { collection: 'orders', keyRing, tenant: 'acme' }),
      noteSearch: mod.searchIndexColumn('note_search', { collection: 'orders', field: 'note', keyRing, tenant: 'acme' }),
      // bytea reaches the driver as JSON text (`\\x…`), in a column that also reads legacy plaintext
      secret: mod.encryptedText('secret', { collection: 'orders', keyRing, tenant: 'acme', storage: 'binary', legacyPlaintext: true }),
    });
    const schema = {
      customers,
      orders,
      customerOrders: relations(customers, ({ many }) => ({ orders: many(orders) })),
      orderCustomer: relations(orders, ({ one }) => ({ customer: one(customers, { fields: [orders.customerId], references: [customers.id] }) })),
    };
    for (const [name, connect] of Object.entries(drivers)) {
      const { db: plainDb, close } = await connect();
      try {
        await plainDb.execute('DROP TABLE IF EXISTS ale_nested_orders, ale_nested_customers');
        await plainDb.execute('CREATE TABLE ale_nested_customers (id INTEGER PRIMARY KEY)');
        await plainDb.execute('CREATE TABLE ale_nested_orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL, total TEXT, total_range BIGINT[], note TEXT, note_search BIGINT[], secret BYTEA)');
        await plainDb.insert(customers).values({ id: 1 });
        await plainDb.insert(orders).values({ id: 1, customerId: 1, total: 512.5, totalRange: 512.5, note: 'express delivery', noteSearch: 'express delivery', secret: 'door code 4711' });
        // a legacy plaintext left in the bytea column, as UTF-8 bytes
        await plainDb.execute(sql`INSERT INTO ale_nested_orders (id, customer_id, secret) VALUES (2, 1, ${Buffer.from('gate code 0815')})`);
        const db = (name === 'node-postgres' ? drizzlePg : drizzlePostgresJs)(plainDb.$client, { schema });
        const found = async () => (await db.select({ id: orders.id }).from(orders).where(and(mod.rangeGte(orders.totalRange, 500), mod.searchWords(orders.noteSearch, 'delivery')))).map((r) => r.id);
        assert.deepEqual(await found(), [1]);
        const customer = await db.query.customers.findFirst({ with: { orders: true } });
        const [nested, legacy] = customer.orders.sort((a, b) => a.id - b.id);
        assert.deepEqual([nested.total, nested.note, nested.secret, legacy.secret], [512.5, 'express delivery', 'door code 4711', 'gate code 0815'], name);
        for (const column of ['totalRange', 'noteSearch']) {
          const e = await (async () => db.update(orders).set({ [column]: nested[column] }).where(eq(orders.id, 1)))().catch((e) => e);
          assert.equal(e?.code, 'ALE_INVALID_INPUT', `${name} ${column}: ${e?.stack ?? 'no error'}`);
          assert.match(e.message, /read through JSON \(a relation nested in db.query\), which rounds its 64-bit tokens/);
        }
        assert.deepEqual(await found(), [1], 'nothing was written');
        const [top] = await db.select().from(orders).where(eq(orders.id, 1));
        await db.update(orders).set({ totalRange: top.totalRange, noteSearch: top.noteSearch }).where(eq(orders.id, 1));
        assert.deepEqual(await found(), [1]);
      } finally {
        await plainDb.execute('DROP TABLE IF EXISTS ale_nested_orders, ale_nested_customers').catch(() => {});
        await close();
      }
    }
  });
}

if (url) {
  test('searchIndexSql names a pgSchema table with its schema: the GIN index lands on that table, not on one search_path finds first', async () => {
    const { pgSchema } = await import('drizzle-orm/pg-core');
    const keyRing = new ale.KeyRing([SECRET]);
    const cmsUsers = pgSchema('ale_cms').table('users', {
      id: integer('id').primaryKey(),
      name: mod.encryptedText('name', { collection: 'users', keyRing }),
      nameSearch: mod.searchIndexColumn('name_search', { collection: 'users', field: 'name', keyRing }),
    });
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    try {
      await pool.query('DROP SCHEMA IF EXISTS ale_cms CASCADE; CREATE SCHEMA ale_cms');
      await pool.query('CREATE TABLE ale_cms.users (id INTEGER PRIMARY KEY, name TEXT, name_search BIGINT[])');
      for (const stmt of mod.searchIndexSql(cmsUsers, cmsUsers.nameSearch, 'ale_cms_users_search')) await pool.query(stmt);
      const { rows } = await pool.query("SELECT schemaname, tablename FROM pg_indexes WHERE indexname = 'ale_cms_users_search'");
      assert.deepEqual(rows, [{ schemaname: 'ale_cms', tablename: 'users' }]);
    } finally {
      await pool.query('DROP SCHEMA IF EXISTS ale_cms CASCADE').catch(() => {});
      await pool.end();
    }
  });
}

if (url) {
  test("a NUMERIC key that the column reads as a rounded number (mode 'number'): the batch operations refuse before writing, in a walk and in a lease's ranges; in mode 'string' they write every row", { timeout: 30_000 }, async () => {
    const keyRing = new ale.KeyRing([SECRET]);
    const ids = ['12345678901.0000000001', '12345678901.0000000002', '12345678902.0000000001'];
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    const db = drizzlePg(pool);
    const table = (mode) =>
      pgTable('ale_numeric_keys', { id: numeric('id', { mode, precision: 30, scale: 10 }).primaryKey(), body: mod.encryptedText('body', { collection: 'notes', keyRing }) });
    const bodies = async () => (await pool.query('SELECT body FROM ale_numeric_keys ORDER BY id')).rows.map((r) => (ale.isEnvelope(r.body) ? ring(r.body) : `plain ${r.body}`));
    const ring = (body) => keyRing.decrypt(body, 'acme', 'notes', 'body');
    try {
      await pool.query('DROP TABLE IF EXISTS ale_numeric_keys');
      await pool.query('CREATE TABLE ale_numeric_keys (id NUMERIC(30, 10) PRIMARY KEY, body TEXT)');
      for (const [i, id] of ids.entries()) await pool.query('INSERT INTO ale_numeric_keys VALUES ($1, $2)', [id, `p${i}`]);
      const rounded = table('number');
      for (const extra of [{}, { workers: { job: 'numeric-keys', rangeRows: 1 } }]) {
        const e = await mod.migratePlaintext(db, { table: rounded, key: rounded.id, columns: [{ column: rounded.body }], tenant: 'acme', ...extra }).catch((e) => e);
        assert.equal(e?.code, 'ALE_INVALID_INPUT', `${JSON.stringify(extra)}: ${e?.stack ?? JSON.stringify(e)}`);
        assert.match(e.message, /read 12345678901 after 12345678901: the driver or the column rounds the keys \(or the key is not unique\)/);
        assert.deepEqual(await bodies(), ['plain p0', 'plain p1', 'plain p2'], 'nothing was written');
      }
      const exact = table('string');
      assert.equal((await mod.migratePlaintext(db, { table: exact, key: exact.id, columns: [{ column: exact.body }], tenant: 'acme' })).written, 3);
      assert.deepEqual(await bodies(), ['p0', 'p1', 'p2']);
    } finally {
      await pool.query('DROP TABLE IF EXISTS ale_numeric_keys').catch(() => {});
      await pool.end();
    }
  });
}

if (url) {
  test('a tenant column of type char(n) (read padded) is refused before a write, since no withTenant would open values sealed for the padded tenant', { timeout: 30_000 }, async () => {
    const keyRing = new ale.KeyRing([SECRET]);
    const { char } = await import('drizzle-orm/pg-core');
    const client = postgres(url, { max: 2, onnotice: () => {} });
    const db = drizzlePostgresJs(client);
    const t = pgTable('ale_char_tenants', { id: integer('id').primaryKey(), tenant: char('tenant', { length: 10 }).notNull(), body: mod.encryptedText('body', { collection: 'notes', keyRing }) });
    try {
      await client.unsafe('DROP TABLE IF EXISTS ale_char_tenants');
      await client.unsafe("CREATE TABLE ale_char_tenants (id INTEGER PRIMARY KEY, tenant CHAR(10) NOT NULL, body TEXT); INSERT INTO ale_char_tenants VALUES (1, 'acme', 'p1'), (2, 'globex', 'p2')");
      const e = await mod.migratePlaintext(db, { table: t, key: t.id, columns: [{ column: t.body }], tenant: { column: t.tenant } }).catch((error) => error);
      assert.equal(e?.code, 'ALE_INVALID_CONTEXT');
      assert.match(e.message, /trailing spaces \(a char\(n\) column pads its values\)/);
      assert.deepEqual((await client.unsafe('SELECT body FROM ale_char_tenants ORDER BY id')).map((r) => r.body), ['p1', 'p2'], 'nothing written');
    } finally {
      await client.unsafe('DROP TABLE IF EXISTS ale_char_tenants').catch(() => {});
      await client.end();
    }
  });
}

if (url) {
  test("a timestamp key of microseconds, which the column reads as a Date: refused before a write (the walk fetched one row for ever); in mode 'string' every row is written", { timeout: 30_000 }, async () => {
    const keyRing = new ale.KeyRing([SECRET]);
    const { timestamp } = await import('drizzle-orm/pg-core');
    const client = postgres(url, { max: 2, onnotice: () => {} });
    const db = drizzlePostgresJs(client);
    const table = (mode) => pgTable('ale_time_keys', { at: timestamp('at', { precision: 6, mode }).primaryKey(), body: mod.encryptedText('body', { collection: 'notes', keyRing }) });
    try {
      await client.unsafe('DROP TABLE IF EXISTS ale_time_keys');
      await client.unsafe("CREATE TABLE ale_time_keys (at TIMESTAMP(6) PRIMARY KEY, body TEXT); INSERT INTO ale_time_keys VALUES ('2026-01-01 00:00:00.123456', 'a'), ('2026-01-01 00:00:00.123789', 'b')");
      const dates = table('date');
      const e = await mod.migratePlaintext(db, { table: dates, key: dates.at, columns: [{ column: dates.body }], tenant: 'acme', batchSize: 1 }).catch((error) => error);
      assert.equal(e?.code, 'ALE_INVALID_INPUT', String(e));
      assert.match(e.message, /does not give the stored key back/);
      const strings = table('string');
      assert.equal((await mod.migratePlaintext(db, { table: strings, key: strings.at, columns: [{ column: strings.body }], tenant: 'acme', batchSize: 1 })).written, 2);
    } finally {
      await client.unsafe('DROP TABLE IF EXISTS ale_time_keys').catch(() => {});
      await client.end();
    }
  });

  test("a NULL cell is not the '' a batch read: the application's NULL is kept", { timeout: 30_000 }, async () => {
    const { drizzleDriver } = await import('../dist/esm/drizzle/batch.js');
    const { pgTransact } = await import('../dist/esm/drizzle/pg-core/compare.js');
    const keyRing = new ale.KeyRing([SECRET]);
    const client = postgres(url, { max: 2, onnotice: () => {} });
    const db = drizzlePostgresJs(client);
    const t = pgTable('ale_empty_cells', { id: integer('id').primaryKey(), body: mod.encryptedText('body', { collection: 'notes', keyRing }) });
    try {
      await client.unsafe("DROP TABLE IF EXISTS ale_empty_cells; CREATE TABLE ale_empty_cells (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO ale_empty_cells VALUES (1, '')");
      const driver = drizzleDriver(db, t, t.id, [t.body], 'acme', pgTransact);
      const [row] = await driver.fetch(undefined, 10);
      assert.equal(row.cells[0], '');
      await client.unsafe('UPDATE ale_empty_cells SET body = NULL');
      assert.equal(await driver.apply([{ key: row.key, set: [[0, keyRing.encrypt('', 'acme', 'notes', 'body')]], expect: [[0, '']] }]), 0);
      assert.deepEqual((await client.unsafe('SELECT body FROM ale_empty_cells')).map((r) => r.body), [null]);
    } finally {
      await client.unsafe('DROP TABLE IF EXISTS ale_empty_cells').catch(() => {});
      await client.end();
    }
  });
}
