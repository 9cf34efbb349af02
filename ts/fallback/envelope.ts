// The stored formats, as docs/format.md ("Envelope format") defines
// them: the text form `v1:<iv>:<tag>:<ciphertext>` (or
// `v2:<key id>:<iv>:<tag>:<ciphertext>`) in unpadded base64url, read
// strictly (one stored value has exactly one spelling), and the binary form
// (version, key id at v2, IV length, IV, tag, ciphertext).
import { engine, malformed, malformedBinary, unsupportedVersion } from './errors.js';

export const TAG_LENGTH = 16;
const PREFIX = 'v1:';
const PREFIX_V2 = 'v2:';
const BINARY_V1 = 1;
const BINARY_V2 = 2;
/** Bytes of a key id, and its base64url length. */
export const KEY_ID_LENGTH = 16;
const KEY_ID_CHARS = 22;

/** A text envelope's key id (v2), IV and tag, decoded, and its ciphertext still in base64url. */
export interface TextParts {
  keyId: Buffer | null;
  iv: Buffer;
  tag: Buffer;
  ciphertext: string;
}

/** A binary envelope's parts, as views of its bytes. */
export interface BinaryParts {
  keyId: Uint8Array | null;
  iv: Uint8Array;
  tag: Uint8Array;
  ciphertext: Uint8Array;
}

const fourParts = () => malformed("expected 4 parts separated by ':'");
const fiveParts = () => malformed("expected 5 parts separated by ':'");

/** The most digits a version number may have. */
const MAX_VERSION_DIGITS = 19;

/**
 * Checks only the version prefix: returns for `v1:` and `v2:`, throws what
 * parsing would for any other (`ALE_UNSUPPORTED_VERSION` for `v<digits>:`
 * of another version, `ALE_MALFORMED_ENVELOPE` for the rest).
 */
export function checkVersion(envelope: string): void {
  if (envelope.startsWith(PREFIX) || envelope.startsWith(PREFIX_V2)) return;
  const notEnvelope = () => malformed('the value does not start with v<digits>:');
  if (envelope.charCodeAt(0) !== 0x76 /* v */) throw notEnvelope();
  let end = 1;
  while (end < envelope.length && end <= MAX_VERSION_DIGITS + 1 && envelope.charCodeAt(end) >= 0x30 && envelope.charCodeAt(end) <= 0x39) end++;
  // Before the `:` is looked for, as the addon decides it on a long value's first characters (crates/core/src/envelope.rs).
  if (end > MAX_VERSION_DIGITS + 1) throw malformed(`the version number has more than ${MAX_VERSION_DIGITS} digits`);
  if (end === 1 || envelope.charCodeAt(end) !== 0x3a /* : */) throw notEnvelope();
  if (envelope.charCodeAt(1) === 0x30 && end > 2) throw malformed('the version number has a leading zero');
  throw unsupportedVersion(envelope.slice(1, end));
}

/** Splits and checks a text envelope; the ciphertext is checked by {@link decodeCiphertext}. */
export function parseText(envelope: string): TextParts {
  checkVersion(envelope);
  let start = PREFIX.length;
  let keyId: Buffer | null = null;
  if (envelope.startsWith(PREFIX_V2)) {
    const idEnd = envelope.indexOf(':', start);
    if (idEnd < 0) throw fiveParts();
    keyId = parseKeyId(envelope.slice(start, idEnd));
    start = idEnd + 1;
  }
  const parts = keyId ? fiveParts : fourParts;
  const ivEnd = envelope.indexOf(':', start);
  if (ivEnd < 0) throw parts();
  const tagEnd = envelope.indexOf(':', ivEnd + 1);
  if (tagEnd < 0) throw parts();
  const iv = envelope.slice(start, ivEnd);
  const tag = envelope.slice(ivEnd + 1, tagEnd);
  if (iv.length !== 22 && iv.length !== 16) throw malformed('the IV must be 22 or 16 base64url characters (16 or 12 bytes)');
  if (tag.length !== 22) throw malformed('the tag must be 22 base64url characters');
  const ivBytes = decodeCanonical(iv);
  if (!ivBytes) throw malformed('the IV is not canonical base64url');
  const tagBytes = decodeCanonical(tag);
  if (!tagBytes) throw malformed('the tag is not canonical base64url');
  return { keyId, iv: ivBytes, tag: tagBytes, ciphertext: envelope.slice(tagEnd + 1) };
}

/** A key id from its 22 base64url characters, read as strictly as an envelope's parts. */
export function parseKeyId(text: string): Buffer {
  if (text.length !== KEY_ID_CHARS) throw malformed('the key id must be 22 base64url characters');
  const id = decodeCanonical(text);
  if (!id) throw malformed('the key id is not canonical base64url');
  return id;
}

/** The bytes of a text envelope's ciphertext part, which may be empty. */
export function decodeCiphertext(base64url: string): Buffer {
  if (base64url.length % 4 === 1) throw malformed('the ciphertext has an impossible base64url length');
  const bytes = decodeCanonical(base64url);
  if (bytes) return bytes;
  throw base64url.includes(':') ? malformed("the ciphertext holds a ':': too many parts") : malformed('the ciphertext is not canonical base64url');
}

/**
 * The bytes that `text` spells in unpadded base64url, or null when it is not
 * the one canonical spelling of any bytes (padding, white space, the
 * standard alphabet, another character, stray bits in the last one).
 * Node's decoder is lenient, so the check is that the bytes spell `text`
 * again.
 */
function decodeCanonical(text: string): Buffer | null {
  const bytes = Buffer.from(text, 'base64url');
  return bytes.toString('base64url') === text ? bytes : null;
}

/** `v1:<iv>:<tag>:<ciphertext>`, or `v2:<key id>:…` with a key id. */
export function writeText(keyId: Uint8Array | null, iv: Uint8Array, tag: Uint8Array, ciphertext: Uint8Array): string {
  const b64 = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64url');
  return engine(() => (keyId ? `${PREFIX_V2}${b64(keyId)}:` : PREFIX) + `${b64(iv)}:${b64(tag)}:${b64(ciphertext)}`);
}

/** Characters of the text envelope of `bytes` bytes of plaintext (unpadded base64url throughout). */
export const textLength = (ivLength: number, keyId: boolean, bytes: number): number => {
  const b64 = (n: number) => Math.ceil((4 * n) / 3);
  return PREFIX.length + (keyId ? KEY_ID_CHARS + 1 : 0) + b64(ivLength) + 1 + b64(TAG_LENGTH) + 1 + b64(bytes);
};

/** Bytes before a binary envelope's ciphertext: version, key id (v2), IV length, IV, tag. */
export const binaryHeaderLength = (ivLength: number, keyId: boolean): number => 2 + (keyId ? KEY_ID_LENGTH : 0) + ivLength + TAG_LENGTH;

/**
 * Splits and checks a binary envelope: `ALE_UNSUPPORTED_VERSION` for a first
 * byte from 0x03 to 0x1F (kept for later layouts), `ALE_MALFORMED_ENVELOPE`
 * for any other first byte but 0x01 and 0x02, one too short, or an IV
 * length other than 12 or 16.
 */
export function parseBinary(bytes: Uint8Array): BinaryParts {
  if (bytes.length === 0) throw malformedBinary('it is empty');
  const version = bytes[0];
  if (version >= 3 && version <= 0x1f) throw unsupportedVersion(version);
  if (version !== BINARY_V1 && version !== BINARY_V2) throw malformedBinary('its first byte is not a version (0x01 or 0x02)');
  let at = 1;
  let keyId: Uint8Array | null = null;
  if (version === BINARY_V2) {
    if (bytes.length < 1 + KEY_ID_LENGTH) throw malformedBinary('it ends inside its key id');
    keyId = bytes.subarray(1, 1 + KEY_ID_LENGTH);
    at += KEY_ID_LENGTH;
  }
  if (bytes.length < at + 1) throw malformedBinary('it ends after its version byte');
  const ivLength = bytes[at];
  if (ivLength !== 12 && ivLength !== 16) throw malformedBinary('its IV length byte is not 16 or 12');
  const header = binaryHeaderLength(ivLength, keyId !== null);
  if (bytes.length < header) throw malformedBinary('the binary envelope is shorter than its IV and tag');
  return { keyId, iv: bytes.subarray(at + 1, at + 1 + ivLength), tag: bytes.subarray(at + 1 + ivLength, header), ciphertext: bytes.subarray(header) };
}

/** A new Buffer holding the binary envelope of these parts. */
export function writeBinary(keyId: Uint8Array | null, iv: Uint8Array, tag: Uint8Array, ciphertext: Uint8Array): Buffer {
  const header = binaryHeaderLength(iv.length, keyId !== null);
  const out = engine(() => Buffer.allocUnsafe(header + ciphertext.length));
  let at = 1;
  out[0] = keyId ? BINARY_V2 : BINARY_V1;
  if (keyId) {
    out.set(keyId, 1);
    at += KEY_ID_LENGTH;
  }
  out[at] = iv.length;
  out.set(iv, at + 1);
  out.set(tag, at + 1 + iv.length);
  out.set(ciphertext, header);
  return out;
}

/** The binary form of a text envelope; fails as parsing the text would. */
export function textToBinary(envelope: string): Buffer {
  const { keyId, iv, tag, ciphertext } = parseText(envelope);
  return writeBinary(keyId, iv, tag, decodeCiphertext(ciphertext));
}

/** The text form of a binary envelope; fails as parsing the bytes would. */
export function binaryToText(bytes: Uint8Array): string {
  const { keyId, iv, tag, ciphertext } = parseBinary(bytes);
  return writeText(keyId, iv, tag, ciphertext);
}
