// Search tokens as the text a search index column stores on SQLite (FTS5)
// and MySQL (FULLTEXT): each token's first 30 bits as 6 base32hex digits
// (0-9, a-v), one space between two, a word that repeats the one before
// left out. The addon writes the same text natively (KeyRing#searchTokenText,
// crates/core/src/search/words.rs, which says why 30 bits); the JS backend
// and the SQL of a query make it here. Range index columns store hexWords.
import { codedError } from './errors.js';

const DIGITS = Buffer.from('0123456789abcdefghijklmnopqrstuv', 'latin1');
/** Digits a word. */
export const WORD_LEN = 6;

/** The bits of the token at `at` of `tokens` that its word keeps: its first 30 (of its first 32, the last two dropped). */
const wordBits = (tokens: Buffer, at: number): number => tokens.readUInt32BE(at) >>> 2;

/** Writes the word of `bits` into `out` at `to`. */
function writeWord(bits: number, out: Buffer, to: number): void {
  for (let i = 0; i < WORD_LEN; i++) out[to + i] = DIGITS[(bits >>> (5 * (WORD_LEN - 1 - i))) & 31];
}

/** The word of each token of `tokens` (8 bytes each), in order, repeats kept. */
export function tokenWords(tokens: Buffer): string[] {
  const word = Buffer.allocUnsafe(WORD_LEN);
  const out: string[] = [];
  for (let at = 0; at < tokens.length; at += 8) {
    writeWord(wordBits(tokens, at), word, 0);
    out.push(word.toString('latin1'));
  }
  return out;
}

/**
 * Sorted tokens (8 bytes each) as the words a search index column stores.
 * Written as bytes and made a string once: a string built piece by piece is
 * a rope, which the driver then flattens (docs/performance.md, "Search
 * tokens, per value").
 */
export function wordText(tokens: Buffer): string {
  if (tokens.length % 8 !== 0) throw codedError('ALE_INTERNAL', `search tokens come 8 bytes each; got ${tokens.length} bytes`);
  if (tokens.length === 0) return '';
  const out = Buffer.allocUnsafe((tokens.length >> 3) * (WORD_LEN + 1) - 1);
  let at = 0;
  let last = -1;
  for (let i = 0; i < tokens.length; i += 8) {
    const bits = wordBits(tokens, i);
    if (bits === last) continue;
    if (last !== -1) out[at++] = 0x20;
    writeWord(bits, out, at);
    at += WORD_LEN;
    last = bits;
  }
  return out.toString('latin1', 0, at);
}
