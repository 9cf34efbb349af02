// The bytes of transit requests and answers. Keys travel as base64 inside
// JSON, and a JS string can never be wiped: so the base64 of a key is
// written straight into the request's bytes and read straight out of the
// answer's, and those bytes are wiped once used. The JSON around them is
// built and parsed as usual, with a run of 'A's where a key was.
//
// What stays out of reach: fetch copies a request body before sending it,
// and the runtime's network buffers hold both ways; neither can be wiped
// from here. With answers spelled as the engine spells them, no string made
// here holds anything of a key.

/**
 * The most an answer may hold. An item's answer is a key, a wrapped key or
 * an error, a few hundred bytes at most, so a batch of MAX_ITEMS fits many
 * times over; past the cap the answer is not the engine's, and reading it
 * whole would hold it all in memory until the timeout.
 */
export const ANSWER_CAP = 512 * 1024;
export const ANSWER_CAP_TEXT = '512 KiB';

/** The most items one request carries: a batch's answer stays far below ANSWER_CAP. */
export const MAX_ITEMS = 256;

/** One item of a batch_input: its plain fields, and a key sent as `plaintext`. */
export interface BatchItem {
  fields: Record<string, string>;
  plaintext?: Uint8Array;
}

const KEY = Buffer.from('"plaintext":"');
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const CODES = Buffer.from(ALPHABET);
const VALUES = new Int8Array(256).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) VALUES[ALPHABET.charCodeAt(i)] = i;
const PAD = 0x3d;
/** What stands in for a key in the JSON text: 'A', a base64 digit, so the text stays valid. */
const HOLE = 0x41;

const base64Length = (bytes: number) => 4 * Math.ceil(bytes / 3);

/** Standard base64 of `src`, padded, written into `dst` at `at`. */
function encodeInto(src: Uint8Array, dst: Buffer, at: number): void {
  let o = at;
  let i = 0;
  for (; i + 2 < src.length; i += 3) {
    dst[o++] = CODES[src[i] >> 2];
    dst[o++] = CODES[((src[i] & 3) << 4) | (src[i + 1] >> 4)];
    dst[o++] = CODES[((src[i + 1] & 15) << 2) | (src[i + 2] >> 6)];
    dst[o++] = CODES[src[i + 2] & 63];
  }
  const rest = src.length - i;
  if (rest === 0) return;
  dst[o++] = CODES[src[i] >> 2];
  if (rest === 1) {
    dst[o++] = CODES[(src[i] & 3) << 4];
    dst[o++] = PAD;
  } else {
    dst[o++] = CODES[((src[i] & 3) << 4) | (src[i + 1] >> 4)];
    dst[o++] = CODES[(src[i + 1] & 15) << 2];
  }
  dst[o] = PAD;
}

/** The bytes that standard, padded base64 in `src[start, end)` encodes; null when it is not that. */
function decodeRange(src: Buffer, start: number, end: number): Buffer | null {
  const length = end - start;
  if (length % 4 !== 0) return null;
  const pad = length === 0 ? 0 : src[end - 1] !== PAD ? 0 : src[end - 2] !== PAD ? 1 : 2;
  const out = Buffer.alloc((length / 4) * 3 - pad);
  let o = 0;
  let bits = 0;
  let count = 0;
  for (let i = start; i < end - pad; i++) {
    const v = VALUES[src[i]];
    if (v < 0) {
      out.fill(0);
      return null;
    }
    bits = (bits << 6) | v;
    if (++count === 4) {
      out[o++] = bits >> 16;
      out[o++] = (bits >> 8) & 255;
      out[o++] = bits & 255;
      bits = 0;
      count = 0;
    }
  }
  if (count === 2) out[o] = bits >> 4;
  if (count === 3) {
    out[o++] = bits >> 10;
    out[o] = (bits >> 2) & 255;
  }
  return out;
}

/** `{"batch_input":[...]}` as bytes, each item's key written in as base64; the caller wipes it after the request. */
export function batchBody(items: readonly BatchItem[]): Buffer {
  const input = items.map((item) => (item.plaintext === undefined ? item.fields : { ...item.fields, plaintext: 'A'.repeat(base64Length(item.plaintext.length)) }));
  const body = Buffer.from(JSON.stringify({ batch_input: input }), 'utf8');
  // Each item with a key has exactly one "plaintext":" in order: a quote inside a field's value is escaped, so the sequence appears nowhere else.
  let at = 0;
  for (const item of items) {
    if (item.plaintext === undefined) continue;
    at = body.indexOf(KEY, at) + KEY.length;
    encodeInto(item.plaintext, body, at);
  }
  return body;
}

/**
 * Reads an answer's body, aborting past ANSWER_CAP; null when it is larger.
 * The chunks are wiped once copied, and the caller wipes what it returns.
 */
export async function readCapped(res: Response, abort: () => void): Promise<Buffer | null> {
  if (Number(res.headers.get('content-length') ?? 0) > ANSWER_CAP) {
    abort();
    return null;
  }
  if (res.body === null) return Buffer.alloc(0);
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = res.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      total += value.byteLength;
      if (total > ANSWER_CAP) {
        abort();
        reader.cancel().catch(() => undefined);
        return null;
      }
    }
    return Buffer.concat(chunks, total);
  } finally {
    for (const chunk of chunks) chunk.fill(0);
  }
}

/** The `batch_results` of an answer's `data`, as given; none when it has none. */
export function resultsOf(data: unknown): unknown[] {
  const results = (data as { batch_results?: unknown } | null | undefined)?.batch_results;
  return Array.isArray(results) ? results : [];
}

/** Wipes a key that parseAnswer put into a result and that no caller took. */
export function wipeResult(result: unknown): void {
  const plaintext = (result as { plaintext?: unknown } | null | undefined)?.plaintext;
  if (Buffer.isBuffer(plaintext)) plaintext.fill(0);
}

/**
 * An answer's JSON, with each batch result's `plaintext` as bytes (a Buffer
 * the caller wipes; null where the answer's text was not plain base64), or
 * undefined when the body is not JSON of that shape. Wipes `bytes`.
 */
export function parseAnswer(bytes: Buffer): unknown {
  const keys: (Buffer | null)[] = [];
  let answer: unknown;
  try {
    if (bytes.length === 0) return {};
    for (let at = bytes.indexOf(KEY); at !== -1; at = bytes.indexOf(KEY, at)) {
      const start = at + KEY.length;
      const end = bytes.indexOf('"', start);
      if (end === -1) break;
      const key = decodeRange(bytes, start, end);
      if (key !== null) bytes.fill(HOLE, start, end);
      keys.push(key);
      at = end;
    }
    answer = JSON.parse(bytes.toString('utf8'));
  } catch {
    for (const key of keys) key?.fill(0);
    return undefined;
  } finally {
    bytes.fill(0);
  }
  const holders = resultsOf((answer as { data?: unknown } | null)?.data).filter((r): r is Record<string, unknown> => typeof (r as { plaintext?: unknown } | null)?.plaintext === 'string');
  if (keys.length === 0) {
    // No "plaintext":" as the engine writes it, so none was taken out; a plaintext spelled otherwise is not read.
    for (const r of holders) r.plaintext = null;
    return answer;
  }
  if (holders.length !== keys.length) {
    // A "plaintext" somewhere other than in a batch result: not an answer to a batch.
    for (const key of keys) key?.fill(0);
    return undefined;
  }
  holders.forEach((r, k) => (r.plaintext = keys[k]));
  return answer;
}
