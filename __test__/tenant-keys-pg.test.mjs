// The tenant-key contract on a real PostgreSQL server, through both drivers:
// postgres.js (the one SveltyCMS uses) and node-postgres.
import pg from 'pg';
import postgres from 'postgres';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { drizzle as drizzlePostgresJs } from 'drizzle-orm/postgres-js';
import { integer, pgTable, text } from 'drizzle-orm/pg-core';
import * as mod from '@sveltycms/ale/drizzle/pg';
import { tenantKeysSuite } from './tenant-keys-suite.mjs';
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
}
