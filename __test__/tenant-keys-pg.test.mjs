// The tenant-key contract on a real PostgreSQL server, through both drivers:
// postgres.js (the one SveltyCMS uses) and node-postgres.
import pg from 'pg';
import postgres from 'postgres';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { drizzle as drizzlePostgresJs } from 'drizzle-orm/postgres-js';
import { integer, pgTable, text } from 'drizzle-orm/pg-core';
import * as mod from '@sveltycms/ale/drizzle/pg';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KEK, tenantKeysSuite } from './tenant-keys-suite.mjs';
import { serverUrl } from './servers.mjs';

const url = serverUrl('PG_URL');
const drivers = {
  'postgres.js': async () => {
    const client = postgres(url, { max: 4, onnotice: () => {} });
    return { db: drizzlePostgresJs(client), query: (q) => client.unsafe(q), close: () => client.end() };
  },
  'node-postgres': async () => {
    const pool = new pg.Pool({ connectionString: url, max: 4 });
    return { db: drizzlePg(pool), query: async (q) => (await pool.query(q)).rows, close: () => pool.end() };
  },
};

if (url) {
  for (const [driver, connect] of Object.entries(drivers)) {
    tenantKeysSuite({
      name: `pg (${driver})`,
      mod,
      builders: { table: pgTable, int: integer, text },
      types: { int: 'INTEGER', text: 'TEXT', envelope: 'TEXT', index: 'CHAR(43)', binary: 'BYTEA' },
      connect: async () => ({ ...(await connect()), target: { dialect: 'pg', url } }),
    });
  }

  test("pg: a shred whose UPDATE waits on a row lock still takes the key a rotation stores meanwhile, which the UPDATE's snapshot does not hold", { timeout: 60_000 }, async () => {
    const table = `race_keys_${process.pid}`;
    // Three connections: the shredding store's, the rotating store's, and one that holds a lock.
    const [a, b, c] = [0, 1, 2].map(() => postgres(url, { max: 2, onnotice: () => {} }));
    const stores = [a, b].map((client) => mod.tenantKeys(drizzlePostgresJs(client), { kek: KEK, table, changeCheckEveryMs: 0, flushEveryMs: 0 }));
    const [shredding, rotating] = stores;
    let release;
    let locker;
    try {
      await c.unsafe(`DROP TABLE IF EXISTS ${table}`);
      await shredding.ready();
      await shredding.load('acme');
      await rotating.load('acme');
      const released = new Promise((r) => (release = r));
      let locked;
      const holding = new Promise((r) => (locked = r));
      locker = c.begin(async (tx) => {
        await tx.unsafe(`SELECT 1 FROM ${table} WHERE tenant = 'acme' AND purpose = 'data' FOR UPDATE`);
        locked();
        await released;
      });
      await holding;
      const waiting = async (n) => {
        for (let i = 0; i < 400; i++) {
          const [{ count }] = await c.unsafe(`SELECT count(*)::int AS count FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query ILIKE 'update "${table}"%'`);
          if (count >= n) return;
          await new Promise((r) => setTimeout(r, 25));
        }
        throw new Error(`${n} updates of ${table} never waited on the lock`);
      };
      const shred = shredding.shred('acme');
      await waiting(1);
      // The rotation stores its key, finds no shredded row (the shred has not committed), and waits to retire the old key.
      const rotation = rotating.rotate('acme').then(() => null, (e) => e);
      await waiting(2);
      release();
      await locker;
      await shred;
      assert.equal((await rotation)?.code, 'ALE_KEY_SHREDDED', 'the rotation took nothing');
      const [{ held }] = await c.unsafe(`SELECT count(*)::int AS held FROM ${table} WHERE tenant = 'acme' AND wrapped_key IS NOT NULL`);
      assert.equal(held, 0, 'no row of the shredded tenant holds a key');
    } finally {
      release?.();
      await locker?.catch(() => {});
      await Promise.all(stores.map((k) => k.close()));
      await c.unsafe(`DROP TABLE IF EXISTS ${table}`);
      await Promise.all([a, b, c].map((client) => client.end()));
    }
  });

  test('pg: ready() on an up-to-date key table takes no ALTER lock, so a long reader (a pg_dump) holds up nothing; a table made before the counts gets them', { timeout: 60_000 }, async () => {
    const table = `ready_keys_${process.pid}`;
    // The store's connection gives up on a lock after 2 s.
    const a = postgres(url, { max: 1, onnotice: () => {}, connection: { lock_timeout: '2s' } });
    const c = postgres(url, { max: 2, onnotice: () => {} });
    const store = () => mod.tenantKeys(drizzlePostgresJs(a), { kek: KEK, table, changeCheckEveryMs: 0, flushEveryMs: 0 });
    let release;
    let reader;
    try {
      await c.unsafe(`DROP TABLE IF EXISTS ${table}`);
      await store().ready();
      let reading;
      const holding = new Promise((r) => (reading = r));
      const released = new Promise((r) => (release = r));
      reader = c.begin(async (tx) => {
        await tx.unsafe(`SELECT count(*) FROM ${table}`); // ACCESS SHARE until the transaction ends, as pg_dump's
        reading();
        await released;
      });
      await holding;
      const outcome = await store().ready().then(() => 'ready', (e) => `refused: ${e?.cause?.code ?? e?.code} ${e?.message}`);
      assert.equal(outcome, 'ready', 'an ALTER would wait for the reader, and time out');
      release();
      await reader;
      await c.unsafe(`ALTER TABLE ${table} DROP COLUMN encryptions`);
      await store().ready();
      const [{ n }] = await c.unsafe(`SELECT count(*)::int AS n FROM information_schema.columns WHERE table_name = '${table}' AND column_name = 'encryptions'`);
      assert.equal(n, 1, 'the column is added to a table made before it');
    } finally {
      release?.();
      await reader?.catch(() => {});
      await c.unsafe(`DROP TABLE IF EXISTS ${table}`);
      await Promise.all([a, c].map((client) => client.end()));
    }
  });

  test('pg: on one connection (a pg.Client), a tenant’s first load inside a transaction that rolls back takes its key rows with it (though a re-read inside it found them); the next re-read writes them back, and what was sealed meanwhile opens', async () => {
    const [notes, keysTable] = [`rb_notes_${process.pid}`, `rb_keys_${process.pid}`];
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const db = drizzlePg(client);
    const store = mod.tenantKeys(db, { kek: KEK, table: keysTable, recheckAfterMs: 20, changeCheckEveryMs: 0 });
    try {
      await client.query(`CREATE TABLE ${notes} (id integer PRIMARY KEY, tenant_id text NOT NULL, body text)`);
      await store.ready();
      const t = pgTable(notes, { id: integer('id').primaryKey(), tenantId: text('tenant_id').notNull(), body: mod.encryptedText('body', { collection: 'notes', keys: store }) });
      await assert.rejects(db.transaction(async (tx) => {
        await mod.withTenant('newco', () => tx.insert(t).values({ id: 1, tenantId: 'newco', body: 'rolled back' }));
        // past recheckAfterMs: the next use re-reads the rows inside the transaction, and finds them there
        await new Promise((r) => setTimeout(r, 250));
        await mod.withTenant('newco', () => tx.insert(t).values({ id: 3, tenantId: 'newco', body: 'rolled back too' }));
        tx.rollback();
      }));
      assert.equal((await client.query(`SELECT count(*)::int AS n FROM ${keysTable}`)).rows[0].n, 0, 'the key rows rolled back');
      await mod.withTenant('newco', () => db.insert(t).values({ id: 2, tenantId: 'newco', body: 'sealed meanwhile' }));
      await new Promise((r) => setTimeout(r, 250)); // past recheckAfterMs, on the store's clock of 100 ms steps
      await store.load('newco');
      await store.close();
      // a new store, as after a restart: only the table's keys
      const fresh = mod.tenantKeys(db, { kek: KEK, table: keysTable, changeCheckEveryMs: 0 });
      const f = pgTable(notes, { id: integer('id').primaryKey(), tenantId: text('tenant_id').notNull(), body: mod.encryptedText('body', { collection: 'notes', keys: fresh }) });
      assert.deepEqual(await fresh.withTenant('newco', () => db.select({ body: f.body }).from(f)), [{ body: 'sealed meanwhile' }]);
      await fresh.close();
    } finally {
      await store.close().catch(() => undefined);
      await client.query(`DROP TABLE IF EXISTS ${notes}; DROP TABLE IF EXISTS ${keysTable}`);
      await client.end();
    }
  });
}
