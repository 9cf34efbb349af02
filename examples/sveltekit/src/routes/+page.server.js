import { eq } from 'drizzle-orm';
import { withTenant } from '@sveltycms/ale/drizzle/sqlite';
import { decryptDocumentFieldsSync, encryptDocumentFieldsSync } from '@sveltycms/ale/sveltycms';
import { database } from '#lib/server/db.js';
import { notes } from '#lib/server/schema.js';

const TENANT = 'tenant-1';

/** Writes a note through the encrypted columns, reads it back, and round-trips a document with the drop-in. */
export async function load({ url }) {
  const { db, driver } = await database();
  const id = url.searchParams.get('id') ?? crypto.randomUUID();
  const note = { id, tenantId: TENANT, title: 'Grüße ✓', body: 'a binary column', meta: { tags: ['x', 'y'], n: 1 } };
  await withTenant(TENANT, () => db.insert(notes).values(note));
  const [row] = await withTenant(TENANT, () => db.select().from(notes).where(eq(notes.id, id)));
  const ctx = { tenantId: TENANT, collectionId: 'posts' };
  const doc = encryptDocumentFieldsSync({ title: 'A post', body: { blocks: [1, 2] } }, ['title', 'body'], ctx);
  const sealed = doc.title.startsWith('v1:');
  decryptDocumentFieldsSync(doc, ['title', 'body'], ctx);
  return { driver, id, title: row.title, body: row.body, meta: row.meta, document: { sealed, title: doc.title, blocks: doc.body.blocks } };
}
