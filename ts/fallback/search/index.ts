// A value's and a query's token sets, as crates/core/src/search/index.rs
// makes them: sorted, distinct, 8 bytes each, in one Buffer.
import { invalidInput } from '../errors.js';
import { MIN_CONTAINS, prefixes, queryPrefix, trigrams, WHITE_SPACE, words } from './grams.js';
import { normalize, type Folding } from './normalize.js';
import { TOKEN_LEN, type ColumnTokens } from './tokens.js';

export interface Indexes {
  contains: boolean;
  prefix: boolean;
  words: boolean;
}

export type QueryKind = 'contains' | 'prefix' | 'words';

/** `tokens` (8 bytes each) sorted as the core sorts them, repeats dropped. */
export function sortedSet(parts: Buffer[]): Buffer {
  const all = Buffer.concat(parts);
  const list: Buffer[] = [];
  for (let i = 0; i < all.length; i += TOKEN_LEN) list.push(all.subarray(i, i + TOKEN_LEN));
  list.sort(Buffer.compare);
  const out: Buffer[] = [];
  for (const t of list) if (out.length === 0 || !out[out.length - 1].equals(t)) out.push(t);
  return Buffer.concat(out);
}

export function valueTokens(column: ColumnTokens, value: string, indexes: Indexes, folding: Folding): Buffer {
  const text = normalize(value, folding);
  const parts: Buffer[] = [];
  if (indexes.contains) parts.push(column.tokens('contains', trigrams(text)));
  if (indexes.words) parts.push(column.tokens('word', words(text)));
  if (indexes.prefix) parts.push(column.tokens('prefix', words(text).flatMap(prefixes)));
  return sortedSet(parts);
}

const missing = (index: string) => invalidInput(`this query needs the column's ${index} index, which it does not keep`);

function contains(column: ColumnTokens, text: string, indexes: Indexes): Buffer {
  if (!indexes.contains) throw missing('contains');
  if (Array.from(text).length < MIN_CONTAINS) {
    throw invalidInput('a contains query needs at least 3 characters: a shorter one has no trigram to look up (use a prefix query)');
  }
  return column.tokens('contains', trigrams(text));
}

export function queryTokens(column: ColumnTokens, query: string, kind: QueryKind, indexes: Indexes, folding: Folding): Buffer {
  const parts: Buffer[] = [];
  if (kind === 'contains') {
    parts.push(contains(column, normalize(query, folding), indexes));
  } else if (kind === 'prefix') {
    const text = normalize(query, folding);
    const found = words(text);
    if (found.length === 1 && found[0].length === text.length && indexes.prefix) parts.push(column.tokens('prefix', [queryPrefix(found[0])]));
    else if (indexes.contains && Array.from(text).length >= MIN_CONTAINS) parts.push(contains(column, text, indexes));
    // Each word's prefix token ("J.", "anna s"), as in the core.
    else if (found.length > 0 && indexes.prefix) parts.push(column.tokens('prefix', found.map(queryPrefix)));
    else if (found.length > 0) throw missing('prefix');
    else throw invalidInput("a prefix query with no word (only spaces and punctuation) needs 3 characters or more and the column's contains index");
  } else {
    // Each term needs the index it looks up, as in the core (crates/core/src/search/index.rs).
    for (const raw of query.split(WHITE_SPACE).filter((t) => t !== '')) {
      const prefix = raw.endsWith('*');
      const found = words(normalize(prefix ? raw.slice(0, -1) : raw, folding));
      found.forEach((word, i) => {
        if (prefix && i + 1 === found.length) {
          if (!indexes.prefix) throw missing('prefix');
          parts.push(column.tokens('prefix', [queryPrefix(word)]));
        } else {
          if (!indexes.words) throw missing('words');
          parts.push(column.tokens('word', [word]));
        }
      });
    }
  }
  const set = sortedSet(parts);
  if (set.length === 0) throw invalidInput('the search query has no word to look up');
  return set;
}
