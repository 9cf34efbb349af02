// The v1 envelope written with node:crypto only: what a team would otherwise
// hand-write. It is the contender the benchmark times the addon against, and
// one of the independent implementations the tests check the addon against.
// Keys resolve as SveltyCMS resolves ENCRYPTION_KEY, through the test oracle
// written from the reference (__test__/fixtures/sveltycms-reference.mjs).
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { resolveKeyMaterial } from '../__test__/fixtures/sveltycms-reference.mjs';

export class NodeCryptoAle {
  #keys;
  #ivLength;

  /**
   * @param {string[]} secrets [primary, ...previous]
   * @param {{ ivLength?: 12 | 16 }} [options] IV length of new envelopes (default 16)
   */
  constructor(secrets, { ivLength = 16 } = {}) {
    const resolved = secrets.map(resolveKeyMaterial);
    // The ring's decryption order: every secret's key, then the legacy keys.
    this.#keys = [...resolved.map((r) => r.key), ...resolved.flatMap((r) => r.fallbacks)];
    this.#ivLength = ivLength;
  }

  encrypt(plaintext, tenantId, collectionId, fieldName) {
    const iv = randomBytes(this.#ivLength);
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
