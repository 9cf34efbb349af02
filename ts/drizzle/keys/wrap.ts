// A tenant key in and out of its row: made at random and wrapped by the
// KEK, bound by the wrap's AAD to its tenant, id and purpose
// (docs/format.md, "Wrapped tenant keys"), and unwrapped again.
import { randomBytes } from 'node:crypto';
import type { SQL } from 'drizzle-orm';
import { codedError } from '../../shared/errors.js';
import { kekNotHeld, unwrapFailed } from './errors.js';
import type { KekProvider } from './kek.js';
import type { KeyRow, NewKeyRow, Purpose } from './table.js';

const KEY_BYTES = 32;
/** Versioned, so that a later wrap layout cannot be confused with this one. */
const WRAP_LABEL = 'sveltycms-ale/tenant-key/1';

/** The AAD of a wrapped key: it opens only in the row of its tenant, id and purpose. */
export function wrapAad(tenant: string, keyId: string, purpose: Purpose): Buffer {
  return Buffer.from(JSON.stringify([WRAP_LABEL, tenant, keyId, purpose]), 'utf8');
}

/** A fresh random key, wrapped by `kek`, as a row stamped `now` (the database's clock). */
export async function newKeyRow(kek: KekProvider, now: SQL, tenant: string, purpose: Purpose, generation: number, state: KeyRow['state']): Promise<NewKeyRow> {
  const keyId = randomBytes(16).toString('base64url');
  const key = randomBytes(KEY_BYTES);
  let wrappedKey: string;
  try {
    wrappedKey = await kek.wrap(key, wrapAad(tenant, keyId, purpose), tenant);
  } finally {
    key.fill(0);
  }
  return { keyId, tenant, purpose, generation, state, wrappedKey, kek: kek.id, createdAt: now, updatedAt: now, encryptions: 0 };
}

/** The row's key, unwrapped by `kek` into a Buffer the caller wipes; a coded error naming the row otherwise. */
export async function unwrapRow(kek: KekProvider, row: KeyRow): Promise<Buffer> {
  const ref = row.kek ?? '';
  if (row.wrappedKey === null || !kek.holds(ref)) throw kekNotHeld(row.tenant, row.keyId, ref);
  try {
    const key = await kek.unwrap(row.wrappedKey, ref, wrapAad(row.tenant, row.keyId, row.purpose), row.tenant);
    if (key.length !== KEY_BYTES) {
      key.fill(0);
      throw codedError('ALE_AUTH_FAILED', 'the unwrapped key is not 32 bytes');
    }
    return key;
  } catch (e) {
    // A provider's own coded error (a key service that cannot be reached) says more than "did not unwrap".
    const code = (e as { code?: unknown })?.code;
    if (typeof code === 'string' && code !== 'ALE_AUTH_FAILED') throw e;
    throw unwrapFailed(row.tenant, row.keyId, ref);
  }
}
