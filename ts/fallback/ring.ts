// The JS backend's key ring: the keys of its secrets in the order the
// native ring tries them (each secret's key, primary first, then the legacy
// keys of every passphrase), AES-256-GCM from node:crypto, counted in
// counters.ts. Arguments arrive checked
// (index.ts reads them); what a value may be, and what each failure is, is
// the contract in docs/format.md.
//
// Keys are node:crypto KeyObjects, made when the ring is built; the derived
// bytes are wiped once wrapped, and every UTF-8 copy of a plaintext once
// used.
import { createCipheriv, createDecipheriv, createSecretKey, hkdfSync, webcrypto, type KeyObject } from 'node:crypto';
import { additionalDataOf, settle, toText, utf8 } from './bytes.js';
import { Counters, newCounters } from './counters.js';
import { nextIv } from './iv.js';
import { checkVersion, decodeCiphertext, parseBinary, parseText, TAG_LENGTH, textLength, writeBinary, writeText } from './envelope.js';
import { authFailed, engineFailure, invalidContext, invalidInput, invalidKey, keyNotLoaded, tooLarge, tooLargeToSeal } from './errors.js';
import { resolveSecret, type KeyKind, type Labelled, type Options } from './keys.js';
import { warnNearMisses } from './near-miss.js';

const ALGORITHM = 'aes-256-gcm';
const WEB_ALGORITHM = 'AES-GCM';
/** HKDF info of a secret's blind-index key, derived from its AES key. */
const INFO_BLIND_INDEX = 'sveltycms-blind-index';

/** One key of the ring. */
interface RingKey {
  aes: KeyObject;
  /** The id `v2` envelopes name it by; null in a `v1` ring. */
  id: Buffer | null;
  /** The secret it comes from: 0 = primary. */
  secret: number;
  kind: KeyKind;
  /** The blind-index key; null for legacy keys, which never index. */
  index: KeyObject | null;
}

/** Everything a ring is, in a form `worker_threads` can clone: KeyObjects and a SharedArrayBuffer. */
export interface SharedRing {
  keys: RingKey[];
  secrets: number;
  options: Options;
  counters: SharedArrayBuffer;
}

/** One entry of `stats()`. */
export interface KeyStats {
  index: number;
  secret: number;
  kind: KeyKind;
  legacy: boolean;
  encryptions: number;
  decryptions: number;
}

export class Ring {
  readonly #keys: RingKey[];
  readonly #secrets: number;
  readonly #options: Options;
  readonly #counters: Counters;
  /** The keys as WebCrypto keys, for the async calls; made on their first use. */
  #webKeys: webcrypto.CryptoKey[] | undefined;
  /** A ring of tenants: the keyed ring of each tenant (crates/core/src/tenants.rs, TenantRings). */
  #tenants: Map<string, Ring> | null = null;

  private constructor({ keys, secrets, options, counters }: SharedRing) {
    this.#keys = keys;
    this.#secrets = secrets;
    this.#options = options;
    this.#counters = new Counters(counters);
  }

  /** Builds a ring from `[primary, ...previous]`; `ALE_INVALID_KEY` when there is none or one does not resolve. */
  static build(secrets: Labelled[], options: Options): Ring {
    const keys: RingKey[] = [];
    const legacy: RingKey[] = [];
    const { indexKey, keyIds } = options;
    options = { ...options, indexKey: undefined };
    try {
      secrets.forEach((labelled, secret) => {
        const { key, fallbacks } = resolveSecret(labelled);
        const [kind, bytes] = key;
        const indexBytes = Buffer.from(hkdfSync('sha256', indexKey ?? bytes, Buffer.alloc(0), INFO_BLIND_INDEX, 32));
        keys.push({ aes: createSecretKey(bytes), id: null, secret, kind, index: createSecretKey(indexBytes) });
        if (options.legacyFallbacks) {
          for (const [legacyKind, legacyBytes] of fallbacks) legacy.push({ aes: createSecretKey(legacyBytes), id: null, secret, kind: legacyKind, index: null });
        }
        for (const b of [bytes, indexBytes, ...fallbacks.map(([, b]) => b)]) b.fill(0);
      });
    } finally {
      indexKey?.fill(0);
    }
    if (keys.length === 0) throw invalidKey('key ring', 'has no secret; pass at least one (the primary) or set ENCRYPTION_KEY');
    if (keyIds) {
      // A keyed ring names every key and has no legacy keys (crates/core/src/keys.rs, with_key_ids).
      if (keyIds.length !== keys.length) throw invalidInput('options.keyIds must give exactly one key id per secret');
      if (keyIds.some((id, i) => keyIds.slice(0, i).some((other) => other.equals(id)))) throw invalidInput('options.keyIds must be distinct');
      keys.forEach((key, i) => (key.id = keyIds[i]));
      legacy.length = 0;
    }
    warnNearMisses(secrets);
    const all = [...keys, ...legacy];
    return new Ring({ keys: all, secrets: keys.length, options, counters: newCounters(all.length) });
  }

  /** A ring of tenants, holding none yet: every call goes to the ring of its context's tenant. */
  static forTenants(options: Options): Ring {
    const ring = new Ring({ keys: [], secrets: 0, options, counters: newCounters(0) });
    ring.#tenants = new Map();
    return ring;
  }

  /** Makes `ring` (keyed, with this ring's IV length) the ring of `tenant`; the checks of the addon, in its order. */
  setTenant(tenant: string, ring: Ring): void {
    const tenants = this.#tenantMap();
    if (tenant === '') throw invalidContext('tenantId', 'is empty');
    if (tenant.includes(':')) throw invalidContext('tenantId', "contains ':'");
    if (ring.#tenants || !ring.#keys[0]?.id) throw invalidInput("a tenant's ring must have key ids (options.keyIds)");
    if (ring.ivLength !== this.ivLength) throw invalidInput("a tenant's ring must have the IV length of the ring of tenants");
    ring.#counters.warnAs(this.#counters);
    tenants.set(tenant, ring);
  }

  deleteTenant(tenant: string): boolean {
    return this.#tenantMap().delete(tenant);
  }

  get tenantCount(): number {
    return this.#tenants?.size ?? 0;
  }

  #tenantMap(): Map<string, Ring> {
    if (!this.#tenants) throw invalidInput('this ring is not a ring of tenants (KeyRing.forTenants)');
    return this.#tenants;
  }

  /** For a ring of tenants, the ring of the tenant of `aad` (`tenant:collection:field`); null for any other ring. */
  #delegate(aad: string): Ring | null {
    if (!this.#tenants) return null;
    const ring = this.#tenants.get(aad.slice(0, aad.indexOf(':')));
    if (!ring) throw keyNotLoaded();
    return ring;
  }

  /** `#delegate` for a text envelope, after the checks the addon makes before it hands the value on: version, then length. */
  #delegateText(envelope: string, aad: string): Ring | null {
    if (!this.#tenants) return null;
    checkVersion(envelope);
    if (envelope.length > this.#options.maxEnvelopeLength) throw tooLarge(this.#options.maxEnvelopeLength);
    return this.#delegate(aad);
  }

  /** How many blind indexes a value has under `aad`: one per secret (the tenant's, in a ring of tenants). */
  indexCount(aad: string): number {
    return (this.#delegate(aad) ?? this).#secrets;
  }

  /** The ring `share()` described, in another thread: the same keys and the same counters. */
  static adopt(shared: SharedRing): Ring {
    return new Ring(shared);
  }

  share(): SharedRing {
    return { keys: this.#keys, secrets: this.#secrets, options: this.#options, counters: this.#counters.buffer };
  }

  /** Number of secrets (legacy keys not counted). */
  get secrets(): number {
    return this.#secrets;
  }

  get ivLength(): 12 | 16 {
    return this.#options.ivLength;
  }

  /** Encrypts under the primary key into a text envelope. */
  seal(text: string, aad: string): string {
    const tenant = this.#delegate(aad);
    if (tenant) return this.#readable(tenant.seal(text, aad));
    return this.#seal(text, aad, writeText, true);
  }

  /** Encrypts under the primary key into a binary envelope. */
  sealBinary(text: string, aad: string): Buffer {
    const tenant = this.#delegate(aad);
    if (tenant) return tenant.sealBinary(text, aad);
    return this.#seal(text, aad, writeBinary);
  }

  /** `seal` with the AEAD on WebCrypto, which runs off the main thread. */
  sealAsync(text: string, aad: string): Promise<string> {
    // A tenant this ring does not hold rejects the promise, as the addon's
    // job does; only argument errors throw.
    let tenant: Ring | null;
    try {
      tenant = this.#delegate(aad);
    } catch (e) {
      return Promise.reject(e);
    }
    if (tenant) return tenant.sealAsync(text, aad).then((envelope) => this.#readable(envelope));
    const plaintext = utf8(text);
    const id = this.#keys[0].id;
    try {
      this.#checkSealable(plaintext.length);
    } catch (e) {
      plaintext.fill(0);
      return Promise.reject(e);
    }
    const iv = nextIv(this.#options.ivLength);
    const params = { name: WEB_ALGORITHM, iv, additionalData: Buffer.from(aad, 'utf8'), tagLength: TAG_LENGTH * 8 };
    if (id) params.additionalData = Buffer.concat([id, params.additionalData]);
    const pending = webcrypto.subtle.encrypt(params, this.#webKey(0), plaintext);
    return settle(pending, plaintext).then((sealed) => {
      this.#counters.countEncryption();
      const split = sealed.length - TAG_LENGTH;
      return writeText(id, iv, sealed.subarray(split), sealed.subarray(0, split));
    });
  }

  /** Decrypts a text envelope. */
  open(envelope: string, aad: string): string {
    const tenant = this.#delegateText(envelope, aad);
    if (tenant) return tenant.open(envelope, aad);
    const { keyId, iv, tag, ciphertext } = this.#readText(envelope);
    return toText(this.#decrypt(keyId, iv, tag, ciphertext, aad)[1]);
  }

  /** Decrypts a binary envelope; `bytes` is not changed. */
  openBinary(bytes: Uint8Array, aad: string): string {
    const tenant = this.#delegate(aad);
    if (tenant) return tenant.openBinary(bytes, aad);
    const { keyId, iv, tag, ciphertext } = parseBinary(bytes);
    return toText(this.#decrypt(keyId, iv, tag, ciphertext, aad)[1]);
  }

  /** Which key opens a text envelope, in decryption order. */
  keyIndex(envelope: string, aad: string): number {
    const tenant = this.#delegateText(envelope, aad);
    if (tenant) return tenant.keyIndex(envelope, aad);
    const { keyId, iv, tag, ciphertext } = this.#readText(envelope);
    const [index, plaintext] = this.#decrypt(keyId, iv, tag, ciphertext, aad);
    plaintext.fill(0);
    return index;
  }

  /**
   * `open` with the AEAD on WebCrypto. Only a value longer than the ring's
   * maximum is refused before the promise exists (see `refuseOversized`);
   * every other failure rejects it.
   */
  async openAsync(envelope: string, aad: string): Promise<string> {
    const tenant = this.#delegateText(envelope, aad);
    if (tenant) return tenant.openAsync(envelope, aad);
    const { keyId, iv, tag, ciphertext } = this.#readText(envelope);
    const sealed = Buffer.concat([ciphertext, tag]);
    const additionalData = additionalDataOf(keyId, aad);
    for (const i of this.#candidates(keyId)) {
      let opened: ArrayBuffer;
      try {
        opened = await webcrypto.subtle.decrypt({ name: WEB_ALGORITHM, iv, additionalData, tagLength: TAG_LENGTH * 8 }, this.#webKey(i), sealed);
      } catch (e) {
        if ((e as Error | undefined)?.name === 'OperationError') continue; // the tag did not match this key
        throw engineFailure((e as Error | undefined)?.message ?? String(e));
      }
      this.#counters.countDecryption(i);
      return toText(Buffer.from(opened));
    }
    throw authFailed();
  }

  /**
   * Throws ALE_ENVELOPE_TOO_LARGE for a stored value longer than the ring's
   * maximum that starts as an envelope. Called before an async decryption,
   * so such a value is refused while the arguments are read, as the addon
   * refuses it before copying it; one refused by its first characters is
   * left to the promise, as the addon leaves it (every failure to parse
   * rejects).
   */
  refuseOversized(envelope: string): void {
    if (envelope.length <= this.#options.maxEnvelopeLength) return;
    try {
      checkVersion(envelope);
    } catch {
      return;
    }
    throw tooLarge(this.#options.maxEnvelopeLength);
  }

  /** `use` of secret `secret`'s blind-index key, the tenant's in a ring of tenants: for the blind index and a column's search tokens (index.ts). */
  withIndexKey<T>(aad: string, secret: number, use: (key: KeyObject) => T): T {
    const tenant = this.#delegate(aad);
    if (tenant) return tenant.withIndexKey(aad, secret, use);
    const key = this.#keys[secret]?.index;
    if (!key) throw invalidInput('no key at that index');
    return use(key);
  }

  stats(): KeyStats[] {
    return this.#keys.map(({ secret, kind }, index) => ({
      index,
      secret,
      kind,
      legacy: kind === 'legacy-sha256' || kind === 'legacy-base64',
      encryptions: this.#counters.encryptions(index),
      decryptions: this.#counters.decryptions(index),
    }));
  }

  /** Sets the warning's threshold and re-arms it. `encryptions` is a positive integer. */
  setIvBudgetWarning(encryptions: number): void {
    this.#counters.setWarning(encryptions);
  }

  /**
   * ALE_ENVELOPE_TOO_LARGE when the text envelope of `bytes` bytes of
   * plaintext would be longer than decryption reads: stored, it could never
   * be read again.
   */
  #checkSealable(bytes: number): void {
    const max = this.#options.maxEnvelopeLength;
    if (textLength(this.#options.ivLength, this.#keys[0].id !== null, bytes) > max) throw tooLargeToSeal(max);
  }

  /** A tenant's envelope, which this ring of tenants reads only within its own maximum too. */
  #readable(envelope: string): string {
    const max = this.#options.maxEnvelopeLength;
    if (envelope.length > max) throw tooLargeToSeal(max);
    return envelope;
  }

  /**
   * AES-256-GCM under the primary key with a fresh IV; the envelope is what
   * `write` makes of the parts. `text` (a text envelope) is checked against
   * the maximum length; a binary envelope has none.
   */
  #seal<T>(text: string, aad: string, write: (keyId: Uint8Array | null, iv: Uint8Array, tag: Uint8Array, ciphertext: Uint8Array) => T, textual = false): T {
    const plaintext = utf8(text);
    try {
      const { aes, id } = this.#keys[0];
      if (textual) this.#checkSealable(plaintext.length);
      const iv = nextIv(this.#options.ivLength);
      const cipher = createCipheriv(ALGORITHM, aes, iv, { authTagLength: TAG_LENGTH });
      cipher.setAAD(additionalDataOf(id, aad));
      const ciphertext = cipher.update(plaintext);
      cipher.final();
      this.#counters.countEncryption();
      return write(id, iv, cipher.getAuthTag(), ciphertext);
    } finally {
      plaintext.fill(0);
    }
  }

  /**
   * The keys to try, in order: for a `v2` value (`keyId`) the one it names
   * (`ALE_KEY_NOT_LOADED` when the ring has none), for a `v1` value every key
   * without an id.
   */
  #candidates(keyId: Uint8Array | null): number[] {
    const out: number[] = [];
    this.#keys.forEach(({ id }, i) => {
      if (keyId ? id !== null && id.equals(keyId) : id === null) out.push(i);
    });
    if (keyId && out.length === 0) throw keyNotLoaded();
    return out;
  }

  /** Tries the candidate keys in order; returns the index of the one that opened it and the plaintext, which the caller wipes. */
  #decrypt(keyId: Uint8Array | null, iv: Uint8Array, tag: Uint8Array, ciphertext: Uint8Array, aad: string): [number, Buffer] {
    const additional = additionalDataOf(keyId, aad);
    for (const i of this.#candidates(keyId)) {
      const decipher = createDecipheriv(ALGORITHM, this.#keys[i].aes, iv, { authTagLength: TAG_LENGTH });
      decipher.setAAD(additional);
      decipher.setAuthTag(tag);
      const plaintext = decipher.update(ciphertext);
      try {
        decipher.final();
      } catch {
        plaintext.fill(0); // unauthenticated: nothing of it may leave
        continue;
      }
      this.#counters.countDecryption(i);
      return [i, plaintext];
    }
    throw authFailed();
  }

  /** A text envelope's parts, with the checks in the addon's order: version, length, then the rest. */
  #readText(envelope: string): { keyId: Buffer | null; iv: Buffer; tag: Buffer; ciphertext: Buffer } {
    checkVersion(envelope);
    if (envelope.length > this.#options.maxEnvelopeLength) throw tooLarge(this.#options.maxEnvelopeLength);
    const { keyId, iv, tag, ciphertext } = parseText(envelope);
    return { keyId, iv, tag, ciphertext: decodeCiphertext(ciphertext) };
  }

  #webKey(i: number): webcrypto.CryptoKey {
    this.#webKeys ??= this.#keys.map(({ aes }) => aes.toCryptoKey({ name: WEB_ALGORITHM }, false, ['encrypt', 'decrypt']));
    return this.#webKeys[i];
  }
}
