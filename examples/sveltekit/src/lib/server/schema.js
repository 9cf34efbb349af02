// The schema module: encrypted columns and no initKeyRing(). `vite build`
// imports it with no ENCRYPTION_KEY set; the columns read the key on first use.
import { sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { encryptedJson, encryptedText } from '@sveltycms/ale/drizzle/sqlite';

export const notes = sqliteTable('notes', {
  id: text('id').primaryKey(),
  tenantId: text('tenant_id').notNull(),
  title: encryptedText('title', { collection: 'notes' }),
  body: encryptedText('body', { collection: 'notes', storage: 'binary' }),
  meta: encryptedJson('meta', { collection: 'notes' }),
});

export const DDL = 'CREATE TABLE IF NOT EXISTS notes (id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, title TEXT, body BLOB, meta TEXT)';
