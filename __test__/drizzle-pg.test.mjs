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
import { integer, pgTable, text } from 'drizzle-orm/pg-core';
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
