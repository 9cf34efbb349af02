// The v1 envelope written with node:crypto only: what a team would otherwise
// hand-write. It is the independent implementation the tests check the addon
// against, and the contender the benchmark times the addon against.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

export const INFO = 'sveltycms-field-at-rest';

/** HKDF-SHA-256(secret as UTF-8, no salt, info, 32 bytes). */
export function deriveKey(secret) {
  return Buffer.from(hkdfSync('sha256', Buffer.from(secret, 'utf8'), Buffer.alloc(0), INFO, 32));
}

export class NodeCryptoAle {
  #keys;

  /** @param {string[]} secrets [primary, ...previous] */
  constructor(secrets) {
    this.#keys = secrets.map(deriveKey);
  }

  encrypt(plaintext, tenantId, collectionId, fieldName) {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.#keys[0], iv);
    cipher.setAAD(Buffer.from(`${tenantId}:${collectionId}:${fieldName}`, 'utf8'));
    const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return `v1:${iv.toString('base64url')}:${cipher.getAuthTag().toString('base64url')}:${ct.toString('base64url')}`;
  }

  decrypt(envelope, tenantId, collectionId, fieldName) {
    const parts = envelope.split(':');
    if (parts.length !== 4 || parts[0] !== 'v1') throw new Error('malformed envelope');
    const iv = Buffer.from(parts[1], 'base64url');
    const tag = Buffer.from(parts[2], 'base64url');
    const ct = Buffer.from(parts[3], 'base64url');
    const aad = Buffer.from(`${tenantId}:${collectionId}:${fieldName}`, 'utf8');
    for (const key of this.#keys) {
      const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: 16 });
      decipher.setAAD(aad);
      decipher.setAuthTag(tag);
      try {
        return Buffer.concat([decipher.update(ct), decipher.final()]).toString('utf8');
      } catch {
        // try the next key
      }
    }
    throw new Error('authentication failed');
  }
}
