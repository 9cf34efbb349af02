// The Drizzle contract on a real PostgreSQL server, through node-postgres.
import pg from 'pg';
import { drizzle } from 'drizzle-orm/node-postgres';
import { integer, pgTable, text } from 'drizzle-orm/pg-core';
import * as mod from '@sveltycms/ale/drizzle/pg';
import { defineTables, drizzleSuite, tableDdl } from './drizzle-suite.mjs';
import { serverUrl } from './servers.mjs';

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
