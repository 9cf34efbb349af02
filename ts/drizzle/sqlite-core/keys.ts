// The key table on SQLite, for every driver the package supports.
import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { sql } from 'drizzle-orm';
import { countColumn, createStatements, DEFAULT_TABLE, type KeyRow, type KeyTableSpec } from '../keys/table.js';

/** The key table named `name` (default `ale_keys`), for queries and for drizzle-kit. */
export function keyTable(name: string = DEFAULT_TABLE) {
  return sqliteTable(
    name,
    {
      keyId: text('key_id').primaryKey(),
      tenant: text('tenant').notNull(),
      purpose: text('purpose').$type<KeyRow['purpose']>().notNull(),
      generation: integer('generation').notNull(),
      state: text('state').$type<KeyRow['state']>().notNull(),
      wrappedKey: text('wrapped_key'),
      kek: text('kek'),
      createdAt: integer('created_at').notNull(),
      updatedAt: integer('updated_at').notNull(),
      encryptions: integer('encryptions').notNull().default(0),
    },
    (t) => [uniqueIndex(`${name}_generation`).on(t.tenant, t.purpose, t.generation), index(`${name}_updated`).on(t.updatedAt)],
  );
}

export const sqliteKeys: KeyTableSpec = {
  // SQLite's clock is the host's, which every process on one database file shares.
  now: sql`CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)`,
  table: keyTable,
  create: (name) => createStatements(name, 'integer'),
  upgrade: (name) => [countColumn(name, 'integer')],
  execute: (db, statement) => db.run(statement),
};

/** The default key table, for drizzle-kit: `export { aleKeys } from '@sveltycms/ale/drizzle/sqlite'` in your schema. */
export const aleKeys = keyTable();
