// The schema module: encrypted columns, a blind index and a tenant key
// store, and no initKeyRing(). `vite build` imports it with no
// ENCRYPTION_KEY and no KEK set: the columns read the key on first use, and
// the store is declared here with neither database nor KEK, and bound to
// both at start-up (db.js).
import { sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { blindIndexColumn, encryptedJson, encryptedText, tenantKeys } from '@sveltycms/ale/drizzle/sqlite';

/** Each tenant's own keys, in the app's database (table ale_keys). */
export const keys = tenantKeys();

export const notes = sqliteTable('notes', {
  id: text('id').primaryKey(),
  tenantId: text('tenant_id').notNull(),
  title: encryptedText('title', { collection: 'notes' }),
  titleIndex: blindIndexColumn('title_index', { collection: 'notes', field: 'title' }),
  body: encryptedText('body', { collection: 'notes', storage: 'binary' }),
  meta: encryptedJson('meta', { collection: 'notes' }),
  secret: encryptedText('secret', { collection: 'notes', keys }),
});

export const DDL = 'CREATE TABLE IF NOT EXISTS notes (id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, title TEXT, title_index TEXT, body BLOB, meta TEXT, secret TEXT)';
