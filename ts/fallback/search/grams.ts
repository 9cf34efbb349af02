// The grams of normalized text, as crates/core/src/search/grams.rs cuts
// them: trigrams, words, word prefixes of up to MAX_PREFIX characters.
import { isWordChar } from './unicode.js';

export const MAX_PREFIX = 6;
export const MIN_CONTAINS = 3;

/** Unicode's White_Space characters, which separate the terms of a word query (Rust's split_whitespace; JS's \s differs at U+0085 and U+FEFF). */
export const WHITE_SPACE = /[\t\n\v\f\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/u;

const wordChar = (ch: string): boolean => isWordChar(ch.codePointAt(0) as number);

/** The words of `text`, in order, repeats included. */
export function words(text: string): string[] {
  const out: string[] = [];
  let word = '';
  for (const ch of text) {
    if (wordChar(ch)) word += ch;
    else if (word !== '') {
      out.push(word);
      word = '';
    }
  }
  if (word !== '') out.push(word);
  return out;
}

/** Every run of three characters of `text`, in order. */
export function trigrams(text: string): string[] {
  const chars = Array.from(text);
  const out: string[] = [];
  for (let i = 0; i + 3 <= chars.length; i++) out.push(chars[i] + chars[i + 1] + chars[i + 2]);
  return out;
}

/** The prefixes of `word` of one to MAX_PREFIX characters, shortest first. */
export function prefixes(word: string): string[] {
  const chars = Array.from(word).slice(0, MAX_PREFIX);
  return chars.map((_, i) => chars.slice(0, i + 1).join(''));
}

/** The prefix a "starts with" query looks up. */
export function queryPrefix(word: string): string {
  return Array.from(word).slice(0, MAX_PREFIX).join('');
}

/** Where `text` or one of its words starts, in UTF-16 units. */
export function wordStarts(text: string): number[] {
  const out: number[] = [];
  let before: string | undefined;
  let at = 0;
  for (const ch of text) {
    if (at === 0 || (wordChar(ch) && !(before !== undefined && wordChar(before)))) out.push(at);
    before = ch;
    at += ch.length;
  }
  return out;
}
