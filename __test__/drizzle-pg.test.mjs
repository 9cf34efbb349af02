// The Drizzle contract on a real PostgreSQL server, through node-postgres.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { drizzle } from 'drizzle-orm/node-postgres';
import { integer, pgTable, text } from 'drizzle-orm/pg-core';
import * as mod from '@sveltycms/ale/drizzle/pg';
import { defineTables, drizzleSuite, tableDdl } from './drizzle-suite.mjs';
import { serverUrl } from './servers.mjs';
import { ale, SECRET } from './helpers.mjs';
import { serverExample } from './fixtures/readme-examples.mjs';

const url = serverUrl('PG_URL');
const ddl = tableDdl({ int: 'INTEGER', text: 'TEXT', envelope: 'TEXT', index: 'CHAR(43)' });

if (url) {
  drizzleSuite({
    name: 'pg (node-postgres)',
    mod,
    schema: (m, rings) => defineTables(m, { table: pgTable, int: integer, text }, rings),
    async connect() {
      const pool = new pg.Pool({ connectionString: url, max: 4 });
      await pool.query('SELECT 1');
      return {
        db: drizzle(pool),
        async reset() {
          await pool.query('DROP TABLE IF EXISTS users, posts, legacy_users, rotating_users');
          for (const stmt of ddl) await pool.query(stmt);
        },
        close: () => pool.end(),
      };
    },
  });
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
