// The key table on MySQL and MariaDB. MySQL has no CREATE INDEX IF NOT
// EXISTS, so the indexes are part of CREATE TABLE IF NOT EXISTS.
import { bigint, customType, index, int, mysqlTable, text, uniqueIndex, varchar } from 'drizzle-orm/mysql-core';
import { sql } from 'drizzle-orm';
import { countColumn, DEFAULT_TABLE, type KeyRow, type KeyTableSpec } from '../keys/table.js';

// Bytes, compared as they are: a `_bin` collation of MariaDB still ignores
// trailing spaces. 764 bytes hold 191 characters of UTF-8 and fit the
// 767-byte index prefix of older servers.
const TENANT_TYPE = 'varbinary(764)';
const tenantColumn = customType<{ data: string; driverData: string | Uint8Array }>({
  dataType: () => TENANT_TYPE,
  fromDriver: (value) => (typeof value === 'string' ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('utf8')),
});

/** The key table named `name` (default `ale_keys`), for queries and for drizzle-kit. */
export function keyTable(name: string = DEFAULT_TABLE) {
  return mysqlTable(
    name,
    {
      keyId: varchar('key_id', { length: 22 }).primaryKey(),
      // 'Acme', 'acme' and 'acme ' are three tenants with three sets of keys, as in SQLite and PostgreSQL.
      tenant: tenantColumn('tenant').notNull(),
      purpose: varchar('purpose', { length: 16 }).$type<KeyRow['purpose']>().notNull(),
      generation: int('generation').notNull(),
      state: varchar('state', { length: 16 }).$type<KeyRow['state']>().notNull(),
      wrappedKey: text('wrapped_key'),
      kek: varchar('kek', { length: 255 }),
      createdAt: bigint('created_at', { mode: 'number' }).notNull(),
      updatedAt: bigint('updated_at', { mode: 'number' }).notNull(),
      encryptions: bigint('encryptions', { mode: 'number' }).notNull().default(0),
    },
    (t) => [uniqueIndex(`${name}_generation`).on(t.tenant, t.purpose, t.generation), index(`${name}_updated`).on(t.updatedAt)],
  );
}

export const mysqlKeys: KeyTableSpec = {
  // UTC_TIMESTAMP, not NOW(): the session's time zone plays no part.
  now: sql`(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(3)) DIV 1000)`,
  table: keyTable,
  create: (name) => [
    `CREATE TABLE IF NOT EXISTS ${name} (key_id varchar(22) NOT NULL PRIMARY KEY, tenant ${TENANT_TYPE} NOT NULL, purpose varchar(16) NOT NULL, ` +
      `generation int NOT NULL, state varchar(16) NOT NULL, wrapped_key text, kek varchar(255), created_at bigint NOT NULL, updated_at bigint NOT NULL, ` +
      `encryptions bigint NOT NULL DEFAULT 0, UNIQUE INDEX ${name}_generation (tenant, purpose, generation), INDEX ${name}_updated (updated_at))`,
  ],
  upgrade: (name) => [countColumn(name, 'bigint')],
  execute: (db, statement) => db.execute(statement),
};

/** The default key table, for drizzle-kit: `export { aleKeys } from '@sveltycms/ale/drizzle/mysql'` in your schema. */
export const aleKeys = keyTable();
