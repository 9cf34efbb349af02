import { json } from '@sveltejs/kit';
import { decryptFieldValueSync, encryptFieldValueSync } from '@sveltycms/ale/sveltycms';

/** GET /api/roundtrip?value=…: the value sealed with the drop-in and opened again. */
export function GET({ url }) {
  const value = url.searchParams.get('value') ?? '';
  const ctx = { tenantId: 'tenant-1', collectionId: 'api' };
  const stored = encryptFieldValueSync({ value }, ctx, 'payload');
  return json({ stored, back: decryptFieldValueSync(stored, ctx, 'payload') });
}
