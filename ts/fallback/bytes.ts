// The bytes a ring handles around the cipher: the AEAD's additional data,
// the UTF-8 of a plaintext and back, and WebCrypto's results, each copy of
// a plaintext wiped once used (crates/core does the same in scratch.rs).
import { isUtf8 } from 'node:buffer';
import { engine, engineFailure, notUtf8 } from './errors.js';

/** The AEAD's additional data: a `v2` value's key id, then `tenant:collection:field`. */
export function additionalDataOf(keyId: Uint8Array | null, aad: string): Buffer {
  const context = Buffer.from(aad, 'utf8');
  return keyId ? Buffer.concat([keyId, context]) : context;
}

/** The UTF-8 bytes of a well-formed string, in a Buffer the caller wipes. */
export function utf8(text: string): Buffer {
  return engine(() => Buffer.from(text, 'utf8'));
}

/** Authentic plaintext bytes as a string; refused when they are not UTF-8. The bytes are wiped either way. */
export function toText(bytes: Buffer): string {
  try {
    if (!isUtf8(bytes)) throw notUtf8();
    return engine(() => bytes.toString('utf8'));
  } finally {
    bytes.fill(0);
  }
}

/** The WebCrypto result as a Buffer; `plaintext` is wiped once the operation has finished with it. */
export async function settle(pending: Promise<ArrayBuffer>, plaintext: Buffer): Promise<Buffer> {
  try {
    return Buffer.from(await pending);
  } catch (e) {
    throw engineFailure((e as Error | undefined)?.message ?? String(e));
  } finally {
    plaintext.fill(0);
  }
}
