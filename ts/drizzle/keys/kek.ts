// Key-encryption keys: what wraps each tenant's data and index keys before
// they are stored. A KEK is anything that implements KekProvider; a local
// one is a secret resolved exactly as ENCRYPTION_KEY is (docs/format.md,
// "Keys"), and a ring of them is `[current, ...previous]`.
import { createCipheriv, createDecipheriv, createHmac, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';
import { types } from 'node:util';
import { resolveSecret } from '../../fallback/keys.js';
import { codedError } from '../../shared/errors.js';

/**
 * What wraps and unwraps tenant keys. `id` names the key that wraps new
 * keys; each stored key records the id of the key that wrapped it, so that
 * `unwrap` can find it again after a rotation of the KEK.
 */
export interface KekProvider {
  /** The reference stored with every key this provider wraps now: 1 to 255 characters, what every key table stores. */
  readonly id: string;
  /** Whether it can unwrap a key stored with reference `ref`. */
  holds(ref: string): boolean;
  /**
   * Optional: where the key lives, such as a key service's address and
   * namespace. Two providers of one id and different locations are
   * different keys under one reference (the same transit key name on two
   * clusters): a ring of them, and so a rewrap() to one from the other,
   * is refused, since a key stored under the reference would be asked of
   * the wrong one and the rewrap would take it as moved already.
   */
  readonly location?: string;
  /** Wraps `key` (32 bytes) of `tenant` bound to `aad`; returns the text to store. */
  wrap(key: Uint8Array, aad: Uint8Array, tenant?: string): Promise<string>;
  /**
   * Unwraps what `wrap` returned under `ref`; rejects when it does not
   * authenticate (ALE_AUTH_FAILED), or with its own code when it cannot
   * try (a key service that does not answer: ALE_KEK_UNAVAILABLE). The
   * caller wipes the result.
   */
  unwrap(wrapped: string, ref: string, aad: Uint8Array, tenant?: string): Promise<Buffer>;
  /**
   * Optional: moves a key wrapped under an older version of this KEK to its
   * newest, without the key leaving the provider; null when it is newest
   * already. rewrap() calls it for keys already under this KEK.
   */
  rewrap?(wrapped: string, ref: string, aad: Uint8Array, tenant?: string): Promise<string | null>;
  /** Optional: destroys what this KEK holds for `tenant` alone (a KEK per tenant); shred() calls it. */
  destroy?(tenant: string): Promise<void>;
}

/** A KEK as tenantKeys takes it: a provider, a secret, or `[current, ...previous]`. */
export type KekInput = KekProvider | string | Uint8Array | Array<string | Uint8Array | KekProvider>;

const IV_BYTES = 12;
const TAG_BYTES = 16;
/** HMAC info of a local KEK's reference: the reference names the key without revealing it. */
const REF_INFO = 'sveltycms-ale-kek-reference';

/** One local KEK: AES-256-GCM over the key, `iv ‖ tag ‖ ciphertext` in base64url. */
function localProvider(secret: string | Uint8Array, label: string): KekProvider {
  const { key, fallbacks } = resolveSecret({ label, value: secret });
  // A passphrase's legacy keys decrypt old v1 values; a KEK never needs them.
  for (const [, legacy] of fallbacks) legacy.fill(0);
  const bytes = key[1];
  const id = `local:${createHmac('sha256', bytes).update(REF_INFO).digest('base64url').slice(0, 22)}`;
  const aes: KeyObject = createSecretKey(bytes);
  bytes.fill(0);
  return {
    id,
    holds: (ref) => ref === id,
    async wrap(plain, aad) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', aes, iv, { authTagLength: TAG_BYTES });
      cipher.setAAD(aad);
      const sealed = Buffer.concat([cipher.update(plain), cipher.final()]);
      return Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url');
    },
    async unwrap(wrapped, ref, aad) {
      if (ref !== id) throw codedError('ALE_INVALID_KEY', `the KEK ${JSON.stringify(ref)} is not this one`);
      const bytes = Buffer.from(wrapped, 'base64url');
      // Shorter than an IV and a tag (a damaged row), node:crypto would refuse the IV or the tag with its own code.
      const refused = () => codedError('ALE_AUTH_FAILED', 'the wrapped key did not authenticate');
      if (bytes.length < IV_BYTES + TAG_BYTES) throw refused();
      const decipher = createDecipheriv('aes-256-gcm', aes, bytes.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
      decipher.setAAD(aad);
      decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      const plain = decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES));
      try {
        decipher.final();
      } catch {
        plain.fill(0);
        throw refused();
      }
      return plain;
    },
  };
}

/** The providers of each ring ringOf made, so that a ring of rings is one flat list. */
const members = new WeakMap<KekProvider, KekProvider[]>();

/** `[current, ...previous]`: wraps with the first, unwraps with whichever holds the reference. */
function ringOf(given: KekProvider[]): KekProvider {
  const providers = given.flatMap((p) => members.get(p) ?? [p]);
  for (const [i, p] of providers.entries()) {
    const other = providers.findIndex((q) => q.id === p.id && (q.location ?? '') !== (p.location ?? ''));
    if (other > i) {
      throw codedError(
        'ALE_INVALID_KEY',
        `two KEKs have the id ${JSON.stringify(p.id)}, one at ${p.location ?? 'this process'} and one at ${providers[other].location ?? 'this process'}: a key stored under it could be asked of the wrong one, and a rewrap would take keys under the old one as moved. Give the new one an id of its own (transitKek's options.id)`,
      );
    }
  }
  if (providers.length === 1) return providers[0];
  const holder = (ref: string) => providers.find((p) => p.holds(ref));
  const destroyers = providers.filter((p) => p.destroy);
  const ring: KekProvider = {
    id: providers[0].id,
    location: providers[0].location,
    holds: (ref) => holder(ref) !== undefined,
    wrap: (key, aad, tenant) => providers[0].wrap(key, aad, tenant),
    unwrap(wrapped, ref, aad, tenant) {
      const p = holder(ref);
      if (!p) return Promise.reject(codedError('ALE_INVALID_KEY', `no KEK of the ring is ${JSON.stringify(ref)}`));
      return p.unwrap(wrapped, ref, aad, tenant);
    },
    rewrap: (wrapped, ref, aad, tenant) => holder(ref)?.rewrap?.(wrapped, ref, aad, tenant) ?? Promise.resolve(null),
    destroy: destroyers.length === 0 ? undefined : async (tenant) => void (await Promise.all(destroyers.map((p) => p.destroy!(tenant)))),
  };
  members.set(ring, providers);
  return ring;
}

/** The longest KEK id: what MySQL's key table stores (`kek varchar(255)`), the same on every dialect. */
export const MAX_ID_CHARS = 255;

/**
 * A provider whose id every key table can store. Outside a strict sql_mode
 * MySQL would cut a longer one to fit, and no provider would then hold the
 * keys it wrapped; a non-string would be stored as no KEK at all.
 */
function withStorableId(provider: KekProvider): KekProvider {
  const id: unknown = provider.id;
  if (typeof id !== 'string' || id.length === 0 || id.length > MAX_ID_CHARS) {
    throw codedError('ALE_INVALID_KEY', `KEK #0: a KEK provider's id must be a string of 1 to ${MAX_ID_CHARS} characters, the reference stored with every key it wraps`);
  }
  return provider;
}

function isProvider(value: unknown): value is KekProvider {
  return typeof value === 'object' && value !== null && !types.isUint8Array(value) && typeof (value as KekProvider).wrap === 'function';
}

/**
 * A KEK from what tenantKeys was given: a provider as it is, a secret as a
 * local KEK, and an array as `[current, ...previous]`. A secret that does not
 * resolve is `ALE_INVALID_KEY`, named by position, never by value.
 */
export function kekOf(input: KekInput | undefined): KekProvider {
  if (input === undefined || input === null) {
    throw codedError('ALE_INVALID_KEY', 'tenantKeys: options.kek is required: a secret like ENCRYPTION_KEY (32 random bytes as hex or base64), [current, ...previous], or a KEK provider');
  }
  const list = Array.isArray(input) ? input : [input];
  if (list.length === 0) throw codedError('ALE_INVALID_KEY', 'tenantKeys: options.kek is an empty list');
  return ringOf(
    list.map((entry, i) => {
      // Only the current one's id is stored; a previous one is only asked whether it holds a key.
      if (isProvider(entry)) return i === 0 ? withStorableId(entry) : entry;
      if (typeof entry !== 'string' && !types.isUint8Array(entry)) throw codedError('ALE_INVALID_KEY', `KEK #${i}: must be a string, a 32-byte Uint8Array or a KEK provider`);
      return localProvider(entry, `KEK #${i}`);
    }),
  );
}

/** A local KEK ring, for callers that want the provider itself (to pass to rewrap, or to wrap in their own). */
export function localKek(secrets: string | Uint8Array | Array<string | Uint8Array>): KekProvider {
  return kekOf(secrets);
}
