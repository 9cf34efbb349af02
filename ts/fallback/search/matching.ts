// The exact test a decrypted value passes, as crates/core/src/search/matching.rs decides it.
import { WHITE_SPACE, words, wordStarts } from './grams.js';
import { normalize, type Folding } from './normalize.js';
import type { QueryKind } from './index.js';

export function matches(value: string, query: string, kind: QueryKind, folding: Folding): boolean {
  const text = normalize(value, folding);
  if (kind === 'contains') return text.includes(normalize(query, folding));
  if (kind === 'prefix') {
    const q = normalize(query, folding);
    return wordStarts(text).some((at) => text.startsWith(q, at));
  }
  const have = words(text);
  return query
    .split(WHITE_SPACE)
    .filter((t) => t !== '')
    .every((raw) => {
      const prefix = raw.endsWith('*');
      const wanted = words(normalize(prefix ? raw.slice(0, -1) : raw, folding));
      return wanted.every((w, i) => (prefix && i + 1 === wanted.length ? have.some((v) => v.startsWith(w)) : have.includes(w)));
    });
}
