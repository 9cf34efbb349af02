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
  const note = { id, tenantId: TENANT, title: 'Grüße ✓', titleIndex: 'Grüße ✓', body: 'a binary column', meta: { tags: ['x', 'y'], n: 1 }, secret: 'under the tenant key' };
  // withTenant loads the tenant's keys (the `secret` column has `keys`), then scopes the queries
  await withTenant(TENANT, () => db.insert(notes).values(note));
  const [row] = await withTenant(TENANT, () => db.select().from(notes).where(eq(notes.id, id)));
  const found = await withTenant(TENANT, () => db.select({ id: notes.id }).from(notes).where(eq(notes.titleIndex, 'Grüße ✓')));
  const ctx = { tenantId: TENANT, collectionId: 'posts' };
  const doc = encryptDocumentFieldsSync({ title: 'A post', body: { blocks: [1, 2] } }, ['title', 'body'], ctx);
  const sealed = doc.title.startsWith('v1:');
  decryptDocumentFieldsSync(doc, ['title', 'body'], ctx);
  // titleIndex is a StoredIndex: SvelteKit's serialiser (devalue) carries it; JSON.stringify leaves it out
  return { driver, id, title: row.title, titleIndex: row.titleIndex, found: found.length, body: row.body, meta: row.meta, secret: row.secret, document: { sealed, title: doc.title, blocks: doc.body.blocks } };
}
