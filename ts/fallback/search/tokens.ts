// Grams to tokens, as crates/core/src/search/tokens.rs makes them: a
// column's AES-256 key by HKDF-SHA-256 from a secret's blind-index key and
// tenant:collection:field, and a token is the first 8 bytes of
// AES-CMAC(key, kind ‖ gram) (RFC 4493). One-block messages go through one
// AES-ECB call together; longer ones through AES-CBC from a zero IV, whose
// last block is the CBC-MAC.
import { createCipheriv, createHmac, hkdfSync, type KeyObject } from 'node:crypto';

export const TOKEN_LEN = 8;
export const KINDS = { contains: 0x63, prefix: 0x70, word: 0x77, range: 0x72 } as const;
export type Kind = keyof typeof KINDS;

const INFO = Buffer.from('sveltycms-search-v1\0');
/** The longest `info` node:crypto's hkdfSync takes; the core's HKDF takes any. */
const HKDF_SYNC_MAX_INFO = 1024;

/**
 * HKDF-SHA-256 with no salt, 32 bytes (RFC 5869): hkdfSync where it takes
 * `info`, else its two steps by HMAC, the same bytes: a context over about
 * 1 KB is one the addon serves too.
 */
function hkdf32(ikm: Uint8Array | KeyObject, info: Buffer): Buffer {
  if (info.length <= HKDF_SYNC_MAX_INFO) return Buffer.from(hkdfSync('sha256', ikm, Buffer.alloc(0), info, 32));
  const bytes = ikm instanceof Uint8Array ? ikm : ikm.export();
  const prk = createHmac('sha256', Buffer.alloc(32)).update(bytes).digest();
  if (bytes !== ikm) bytes.fill(0);
  const okm = createHmac('sha256', prk).update(info).update(Buffer.of(1)).digest();
  prk.fill(0);
  return okm;
}

/** Doubling in GF(2^128). */
function double(block: Buffer): Buffer {
  const out = Buffer.alloc(16);
  for (let i = 0; i < 16; i++) out[i] = ((block[i] << 1) | (i < 15 ? block[i + 1] >> 7 : 0)) & 0xff;
  if (block[0] & 0x80) out[15] ^= 0x87;
  return out;
}

export class ColumnTokens {
  readonly #key: Buffer;
  readonly #k1: Buffer;
  readonly #k2: Buffer;

  /** The tokens of the column `aad` (tenant:collection:field) under a secret's blind-index key. */
  constructor(indexKey: Uint8Array | KeyObject, aad: string) {
    this.#key = hkdf32(indexKey, Buffer.concat([INFO, Buffer.from(aad, 'utf8')]));
    const l = this.#ecb(Buffer.alloc(16));
    this.#k1 = double(l);
    this.#k2 = double(this.#k1);
    l.fill(0);
  }

  #ecb(blocks: Buffer): Buffer {
    const cipher = createCipheriv('aes-256-ecb', this.#key, null).setAutoPadding(false);
    return Buffer.concat([cipher.update(blocks), cipher.final()]);
  }

  /** The last block of a message: XORed with K1 when complete, else padded and XORed with K2. */
  #last(block: Buffer, used: number): void {
    const sub = used === 16 ? this.#k1 : this.#k2;
    if (used < 16) block[used] = 0x80;
    for (let i = 0; i < 16; i++) block[i] ^= sub[i];
  }

  /** The tokens of `grams` (text as UTF-8, or bytes), in order, as one Buffer of 8 bytes each. */
  tokens(kind: Kind, grams: readonly (string | Uint8Array)[]): Buffer {
    const out = Buffer.alloc(grams.length * TOKEN_LEN);
    const short: number[] = [];
    const blocks = Buffer.alloc(grams.length * 16);
    grams.forEach((gram, i) => {
      const bytes = typeof gram === 'string' ? Buffer.from(gram, 'utf8') : Buffer.from(gram);
      if (bytes.length < 16) {
        const block = blocks.subarray(short.length * 16, short.length * 16 + 16);
        block[0] = KINDS[kind];
        bytes.copy(block, 1);
        this.#last(block, bytes.length + 1);
        short.push(i);
      } else {
        this.#long(kind, bytes).copy(out, i * TOKEN_LEN);
      }
      bytes.fill(0);
    });
    if (short.length > 0) {
      const sealed = this.#ecb(blocks.subarray(0, short.length * 16));
      short.forEach((i, n) => sealed.copy(out, i * TOKEN_LEN, n * 16, n * 16 + TOKEN_LEN));
      sealed.fill(0);
    }
    blocks.fill(0);
    return out;
  }

  /** CMAC of `kind ‖ bytes` over more than one block. */
  #long(kind: Kind, bytes: Buffer): Buffer {
    const message = Buffer.concat([Buffer.from([KINDS[kind]]), bytes]);
    const padded = Buffer.alloc(Math.ceil(message.length / 16) * 16);
    message.copy(padded);
    this.#last(padded.subarray(padded.length - 16), message.length - (padded.length - 16));
    const cipher = createCipheriv('aes-256-cbc', this.#key, Buffer.alloc(16)).setAutoPadding(false);
    const chained = Buffer.concat([cipher.update(padded), cipher.final()]);
    const token = Buffer.from(chained.subarray(chained.length - 16, chained.length - 16 + TOKEN_LEN));
    message.fill(0);
    padded.fill(0);
    chained.fill(0);
    return token;
  }
}
