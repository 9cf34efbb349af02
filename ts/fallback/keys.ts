// From configured secrets to AES-256 keys, by the rules of docs/format.md,
// "Keys", and the ring's options. The native addon applies the same
// rules in crates/core/src/secret.rs and src/secrets.rs; the differential
// test (__test__/backends.test.mjs) holds the two to one result.
//
// Every derived key is returned in a Buffer that the caller wipes once it
// has made a KeyObject of it.
import { createHash, hkdfSync } from 'node:crypto';
import { types } from 'node:util';
import { parseKeyId } from './envelope.js';
import { invalidInput, invalidKey, isArray } from './errors.js';

export type KeyKind = 'hex' | 'base64' | 'base64url' | 'bytes' | 'passphrase' | 'legacy-sha256' | 'legacy-base64';

/** How a ring writes and what it reads (`RingOptions` in index.d.ts). */
export interface Options {
  ivLength: 12 | 16;
  legacyFallbacks: boolean;
  maxEnvelopeLength: number;
  /** One per secret: the keys' ids, which make the ring write and read `v2` envelopes. */
  keyIds?: Buffer[];
  /** The secret every key derives its blind-index key from; wiped once the ring is built. */
  indexKey?: Buffer;
}

export const DEFAULT_OPTIONS: Readonly<Options> = { ivLength: 16, legacyFallbacks: true, maxEnvelopeLength: 2 ** 27 };

/** A configured secret and the name errors give it ("secret #1", "ENCRYPTION_KEY"). */
export interface Labelled {
  label: string;
  value: string | Uint8Array;
  /** ENCRYPTION_KEY_PREVIOUS as written beside its trimmed entries (env.ts): given no near-miss warning. */
  asWritten?: true;
}

/** The keys one secret stands for: the key that encrypts, then its decrypt-only legacy keys in the order they are tried. */
export interface Resolved {
  key: [KeyKind, Buffer];
  fallbacks: [KeyKind, Buffer][];
}

const KEY_LENGTH = 32;
const MIN_SECRET_CHARS = 32;
const PASSPHRASE_SALT = 'sveltycms-aes-gcm-v1';
const INFO_FIELD_AT_REST = 'sveltycms-field-at-rest';

const HEX = /^[0-9a-fA-F]{64}$/;
const STANDARD = /^[A-Za-z0-9+/]+={0,2}$/;
const URL_SAFE = /^[A-Za-z0-9_-]+={0,2}$/;

/** Resolves one secret. The value never appears in an error, only the label. */
export function resolveSecret({ label, value }: Labelled): Resolved {
  if (typeof value !== 'string') {
    if (value.length !== KEY_LENGTH) {
      throw invalidKey(label, 'is a byte array that is not 32 bytes long; a raw AES-256 key is exactly 32 bytes');
    }
    return { key: ['bytes', Buffer.from(value)], fallbacks: [] };
  }
  const text = value;
  if (text.length < MIN_SECRET_CHARS) {
    throw invalidKey(label, 'is shorter than 32 characters; generate one with `openssl rand -base64 32` (or `openssl rand -hex 32`)');
  }
  const raw = rawKind(text);
  if (raw === 'hex') return { key: ['hex', Buffer.from(text, 'hex')], fallbacks: [] };
  if (raw !== undefined) return { key: [raw, base64Prefix(text) as Buffer], fallbacks: [] };

  const utf8 = Buffer.from(text, 'utf8');
  const key = Buffer.from(hkdfSync('sha256', utf8, PASSPHRASE_SALT, INFO_FIELD_AT_REST, KEY_LENGTH));
  const candidates: [KeyKind, Buffer][] = [['legacy-sha256', createHash('sha256').update(utf8).digest()]];
  utf8.fill(0);
  const legacyBase64 = text.length >= 44 ? base64Prefix(text) : null;
  if (legacyBase64) candidates.push(['legacy-base64', legacyBase64]);
  const fallbacks: [KeyKind, Buffer][] = [];
  for (const [kind, candidate] of candidates) {
    if (!candidate.equals(key) && fallbacks.every(([, k]) => !k.equals(candidate))) fallbacks.push([kind, candidate]);
    else candidate.fill(0);
  }
  return { key: ['passphrase', key], fallbacks };
}

/** How `text` resolves (crates/core/src/secret.rs, `kind`): a raw-key rule, a passphrase, or undefined when too short to be a secret. */
export function textKind(text: string): 'hex' | 'base64' | 'base64url' | 'passphrase' | undefined {
  return text.length < MIN_SECRET_CHARS ? undefined : (rawKind(text) ?? 'passphrase');
}

/** `text` without the ASCII white space around it, as `ENCRYPTION_KEY_PREVIOUS`'s entries are trimmed. */
export function trimAsciiSpace(text: string): string {
  return text.replace(/^[ \t\n\f\r]+|[ \t\n\f\r]+$/g, '');
}

/** The raw-key rule a secret of at least 32 characters matches (hex, strict base64, base64url), or undefined for a passphrase. */
export function rawKind(text: string): 'hex' | 'base64' | 'base64url' | undefined {
  if (HEX.test(text)) return 'hex';
  const decodesToKey = () => {
    const decoded = lenientBase64(text);
    decoded.fill(0);
    return decoded.length >= KEY_LENGTH;
  };
  if (text.length >= 44 && STANDARD.test(text) && decodesToKey()) return 'base64';
  if (text.length >= 43 && URL_SAFE.test(text) && /[-_]/.test(text) && decodesToKey()) return 'base64url';
  return undefined;
}

/** The first 32 bytes of the lenient base64 decoding of `text`, when it gives that many. */
function base64Prefix(text: string): Buffer | null {
  const decoded = lenientBase64(text);
  const key = decoded.length >= KEY_LENGTH ? Buffer.from(decoded.subarray(0, KEY_LENGTH)) : null;
  decoded.fill(0);
  return key;
}

/**
 * Base64 decoded as Node's `Buffer.from(text, 'base64')` decodes it, which
 * is what SveltyCMS called: both alphabets, every other character skipped,
 * `=` ends the input, and only the low byte of each UTF-16 code unit looked
 * at. Written out rather than delegated, so every runtime decodes alike.
 */
function lenientBase64(text: string): Buffer {
  const out = Buffer.alloc(Math.floor((text.length * 3) / 4) + 3);
  let acc = 0;
  let bits = 0;
  let length = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i) & 0xff;
    let sextet: number;
    if (c >= 0x41 && c <= 0x5a) sextet = c - 0x41; // A-Z
    else if (c >= 0x61 && c <= 0x7a) sextet = c - 0x61 + 26; // a-z
    else if (c >= 0x30 && c <= 0x39) sextet = c - 0x30 + 52; // 0-9
    else if (c === 0x2b || c === 0x2d) sextet = 62; // + -
    else if (c === 0x2f || c === 0x5f) sextet = 63; // / _
    else if (c === 0x3d) break; // =
    else continue;
    acc = ((acc << 6) | sextet) & 0xffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[length++] = (acc >> bits) & 0xff;
    }
  }
  acc = 0;
  return out.subarray(0, length);
}

/** `{ ivLength?, legacyFallbacks?, maxEnvelopeLength?, keyIds?, indexKey? }`; undefined or null means the defaults. */
export function readOptions(options: unknown): Options {
  const out: Options = { ...DEFAULT_OPTIONS };
  if (options === undefined || options === null) return out;
  if (typeof options !== 'object') throw invalidInput('options must be an object');
  const { ivLength, legacyFallbacks, maxEnvelopeLength, keyIds, indexKey } = options as Record<string, unknown>;
  if (ivLength !== undefined) {
    if (ivLength !== 12 && ivLength !== 16) throw invalidInput('options.ivLength must be 12 or 16');
    out.ivLength = ivLength;
  }
  if (legacyFallbacks !== undefined) {
    if (typeof legacyFallbacks !== 'boolean') throw invalidInput('options.legacyFallbacks must be a boolean');
    out.legacyFallbacks = legacyFallbacks;
  }
  if (maxEnvelopeLength !== undefined) {
    if (typeof maxEnvelopeLength !== 'number' || !Number.isInteger(maxEnvelopeLength) || maxEnvelopeLength < 1 || maxEnvelopeLength >= 2 ** 53) {
      throw invalidInput('options.maxEnvelopeLength must be a positive integer');
    }
    out.maxEnvelopeLength = maxEnvelopeLength;
  }
  // null is refused as the addon refuses it, and a hole in keyIds too: map()
  // would pass it over and leave the primary with no id.
  if (keyIds !== undefined) {
    const bad = () => invalidInput('options.keyIds must be an array of key ids, 22 base64url characters each');
    if (!isArray(keyIds)) throw bad();
    out.keyIds = Array.from(keyIds, (id: unknown) => {
      if (typeof id !== 'string') throw bad();
      try {
        return parseKeyId(id);
      } catch {
        throw bad();
      }
    });
  }
  if (indexKey !== undefined) {
    if (!types.isUint8Array(indexKey) || indexKey.length !== 32) throw invalidInput('options.indexKey must be a 32-byte Uint8Array');
    out.indexKey = Buffer.from(indexKey);
  }
  return out;
}

/** `"secret #0 (primary)"`, `"secret #2"`. */
const positionLabel = (i: number): string => (i === 0 ? 'secret #0 (primary)' : `secret #${i}`);

/** `[primary, ...previous]` from an array of strings and 32-byte `Uint8Array`s (Buffers included). */
export function readSecrets(secrets: unknown): Labelled[] {
  if (!isArray(secrets)) {
    throw invalidKey('secrets', 'must be an array of strings or 32-byte Uint8Arrays: [primary, ...previous]');
  }
  const length = secrets.length;
  const labelled: Labelled[] = [];
  for (let i = 0; i < length; i++) {
    const label = positionLabel(i);
    const value: unknown = secrets[i];
    if (types.isUint8Array(value)) labelled.push({ label, value });
    else if (value === undefined) throw invalidKey(label, 'is undefined: is the environment variable it comes from set? (initKeyRing() with no argument reads ENCRYPTION_KEY itself)');
    else if (typeof value !== 'string') throw invalidKey(label, 'must be a string or a 32-byte Uint8Array');
    else if (!value.isWellFormed()) throw invalidKey(label, 'contains a lone UTF-16 surrogate');
    else labelled.push({ label, value });
  }
  return labelled;
}
