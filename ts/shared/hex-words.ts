// Range tokens as the text a range index column stores on SQLite (FTS5)
// and MySQL (FULLTEXT, and the token tables' triggers, which cut it): 16
// lowercase hex digits a token, one space between two. Search index
// columns store shorter words (search-words.ts).
import { codedError } from './errors.js';

const HEX_DIGITS = Buffer.from('0123456789abcdef', 'latin1');

/**
 * Tokens as words of 16 hex digits, separated by spaces: what a range
 * index column stores on SQLite and MySQL. Written as bytes and made a
 * string once: a string built piece by piece is a rope of two pieces a
 * token, which the driver then flattens (docs/performance.md, "Search
 * tokens, per value").
 */
export function hexWords(tokens: Buffer): string {
  if (tokens.length % 8 !== 0) throw codedError('ALE_INTERNAL', `range tokens come 8 bytes each; got ${tokens.length} bytes`);
  if (tokens.length === 0) return '';
  const out = Buffer.allocUnsafe((tokens.length >> 3) * 17 - 1);
  let at = 0;
  for (let i = 0; i < tokens.length; i++) {
    if (i !== 0 && (i & 7) === 0) out[at++] = 0x20;
    const byte = tokens[i];
    out[at++] = HEX_DIGITS[byte >> 4];
    out[at++] = HEX_DIGITS[byte & 15];
  }
  return out.toString('latin1', 0, at);
}
