// The key table on PostgreSQL.
import { bigint, index, integer, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { sql } from 'drizzle-orm';
import { countColumn, createStatements, DEFAULT_TABLE, type KeyRow, type KeyTableSpec } from '../keys/table.js';

/** The key table named `name` (default `ale_keys`), for queries and for drizzle-kit. */
export function keyTable(name: string = DEFAULT_TABLE) {
  return pgTable(
    name,
    {
      keyId: text('key_id').primaryKey(),
      tenant: text('tenant').notNull(),
      purpose: text('purpose').$type<KeyRow['purpose']>().notNull(),
      generation: integer('generation').notNull(),
      state: text('state').$type<KeyRow['state']>().notNull(),
      wrappedKey: text('wrapped_key'),
      kek: text('kek'),
      createdAt: bigint('created_at', { mode: 'number' }).notNull(),
      updatedAt: bigint('updated_at', { mode: 'number' }).notNull(),
      encryptions: bigint('encryptions', { mode: 'number' }).notNull().default(0),
    },
    (t) => [uniqueIndex(`${name}_generation`).on(t.tenant, t.purpose, t.generation), index(`${name}_updated`).on(t.updatedAt)],
  );
}

export const pgKeys: KeyTableSpec = {
  // statement_timestamp(): the statement's start even inside a transaction (now() is the transaction's), and stable, so the comparison can use the updated_at index.
  now: sql`(extract(epoch from statement_timestamp()) * 1000)::bigint`,
  table: keyTable,
  create: (name) => createStatements(name, 'bigint'),
  upgrade: (name) => [countColumn(name, 'bigint', true)],
  execute: (db, statement) => db.execute(statement),
};

/** The default key table, for drizzle-kit: `export { aleKeys } from '@sveltycms/ale/drizzle/pg'` in your schema. */
export const aleKeys = keyTable();
