// Text and binary storage: the option, and what a stored value of each may
// be. The rules here decide what is an envelope, what is legacy plaintext
// and what is an error, for reads (codec.ts) and for the batch operations
// (operations.ts) alike, so that the two never disagree.
import * as native from '../../index.js';
import { codedError } from '../shared/errors.js';

/**
 * How a column stores its envelopes: 'text', the `v1:…` form in a text
 * column, or 'binary', the same parts as bytes in a blob/bytea/longblob
 * column (docs/drizzle.md, "Binary storage").
 */
export type Storage = 'text' | 'binary';

/** The storage option, checked: 'text' unless 'binary' is asked for. */
export function storageOf(options: { storage?: unknown }, column: string): Storage {
  const storage = options.storage ?? 'text';
  if (storage !== 'text' && storage !== 'binary') {
    throw codedError('ALE_INVALID_INPUT', `encrypted column "${column}": storage must be 'text' or 'binary'`);
  }
  return storage;
}

/** Strict UTF-8 that keeps a leading BOM: the plaintext exactly, or an error. */
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * What a binary column's driver hands back, as bytes or (SQLite keeps TEXT
 * in a BLOB column) a string. PostgreSQL's `\x…` text of a bytea has
 * become bytes before this (SqlTypes.binaryText in dialect.ts). Buffer is
 * a Uint8Array; bun:sqlite gives a plain Uint8Array.
 */
export function storedBytes(stored: unknown): Uint8Array | string {
  if (stored instanceof Uint8Array || typeof stored === 'string') return stored;
  throw codedError('ALE_INVALID_INPUT', `the driver returned ${kindOf(stored)} for a binary column, not a Buffer or Uint8Array`);
}

/**
 * What a cell that is not what its column stores is, for a message: its
 * type or built-in class, never anything read from it (a jsonb cell is an
 * object whose `constructor` may be a value of the document).
 */
function kindOf(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (value instanceof Uint8Array) return 'bytes';
  if (typeof value === 'object') return `an object (${Object.prototype.toString.call(value).slice(8, -1)})`;
  return `a ${typeof value}`;
}

/** The bytes of a binary envelope; a string in a binary column is `ALE_MALFORMED_ENVELOPE`. */
export function bytesOnly(value: Uint8Array | string): Uint8Array {
  if (typeof value !== 'string') return value;
  throw native.isEnvelope(value) ? textEnvelopeInBinary() : codedError('ALE_MALFORMED_ENVELOPE', 'the binary column holds text, not a binary envelope');
}

/** A text column's cell; bytes (or anything else but text) there are `ALE_MALFORMED_ENVELOPE`, in reads and batch operations alike. */
export function textOnly(cell: unknown): string {
  if (typeof cell === 'string') return cell;
  throw codedError('ALE_MALFORMED_ENVELOPE', `the text column holds ${kindOf(cell)}, not a text envelope`);
}

/** Whether `bytes` are the UTF-8 of a text envelope (`v1:…` or `v2:…`), as a text column's bytes copied into a binary one are. */
export function isTextEnvelopeBytes(bytes: Uint8Array): boolean {
  if (bytes[0] !== 0x76) return false; // 'v'
  try {
    return native.isEnvelope(utf8.decode(bytes));
  } catch {
    return false; // not UTF-8, so not a text envelope
  }
}

export function textEnvelopeInBinary(): Error {
  return codedError('ALE_MALFORMED_ENVELOPE', 'the binary column holds a text envelope: convertStorage() moves text envelopes into a binary column');
}

/** Whether the core reads `bytes` as a binary envelope (the layout only; no key, nothing decrypted). */
function isBinaryEnvelope(bytes: Uint8Array): boolean {
  try {
    native.envelopeFromBytes(bytes);
    return true;
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === 'ALE_MALFORMED_ENVELOPE' || code === 'ALE_UNSUPPORTED_VERSION') return false;
    throw e;
  }
}

/**
 * The legacy-plaintext rule of a binary column, shared by reads and
 * migratePlaintext: undefined for a binary envelope; otherwise the value's
 * text (a string as it is, bytes as UTF-8). A text envelope, as a string or
 * as its UTF-8 bytes, is not plaintext (`ALE_MALFORMED_ENVELOPE`): encrypting
 * it again would bury it; convertStorage() moves it. Neither are bytes that
 * are not UTF-8.
 */
export function binaryPlaintext(value: Uint8Array | string): string | undefined {
  let text: string;
  if (typeof value === 'string') text = value;
  else if (isBinaryEnvelope(value)) return undefined;
  else {
    try {
      text = utf8.decode(value);
    } catch {
      throw codedError('ALE_MALFORMED_ENVELOPE', 'the binary column holds bytes that are neither a binary envelope nor UTF-8 text');
    }
  }
  if (native.isEnvelope(text)) throw textEnvelopeInBinary();
  return text;
}
