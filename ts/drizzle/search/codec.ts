// A searchable column's codec (docs/search.md): binds the column to
// tenant:collection:field and its searcher (a KeyRing, the process-wide
// ring or a tenant key store), and gives a value's tokens, a query's token
// sets and the exact test a decrypted value passes.
import * as native from '../../../index.js';
import type { SearchOptions } from '../../../index.js';
import { codedError } from '../../shared/errors.js';
import { atColumn } from '../failures.js';
import { indexBase, type IndexCodec, type IndexColumnOptions } from '../index-codec.js';
import { indexSite } from '../index-origin.js';
import type { QueryKind } from './searcher.js';

/** Which indexes a searchable column keeps and how it folds text; all three indexes by default. */
export interface SearchIndexes {
  /** Trigrams, for `searchContains` (queries of 3 characters or more). Default true. */
  contains?: boolean;
  /** Word prefixes of up to 6 characters, for `searchPrefix` and `müll*` in `searchWords`. Default true. */
  prefix?: boolean;
  /** Whole words, for `searchWords`. Default true. */
  words?: boolean;
  /** Match without accents and other combining marks (`Muller` finds `Müller`). Default false. */
  accents?: boolean;
}

/**
 * The options of a search index column: the encrypted column's collection
 * and field (tokens are bound to them), its ring or key store, the indexes,
 * and on SQLite the FTS5 table that indexes the column (`fts`).
 */
export type SearchIndexOptions = IndexColumnOptions & SearchIndexes;

export interface SearchCodec extends IndexCodec {
  readonly source: 'text';
  /** The tokens of `value` under the primary key, in `tenant` (default: the column's, or the scope's). */
  tokens(value: string, tenant?: string): Buffer;
  /** The same tokens as words (wordText's text), made by the searcher. */
  tokenText(value: string, tenant?: string): string;
  /** The token sets of a query, one per key stored tokens may be under. */
  queries(query: string, kind: QueryKind): Buffer[];
  /** Whether a decrypted value answers the query: what removes the index's false positives. */
  matches(value: string, query: string, kind: QueryKind): boolean;
}

const INDEX_OPTIONS = ['contains', 'prefix', 'words', 'accents'] as const;

export function searchCodec(name: string, options: SearchIndexOptions): SearchCodec {
  const { base, searcher, fts, where, writingKey, keysAsked } = indexBase(name, options, 'search index');
  const search: SearchOptions = {};
  for (const key of INDEX_OPTIONS) {
    const value = options[key];
    if (value === undefined) continue;
    if (typeof value !== 'boolean') throw codedError('ALE_INVALID_INPUT', `search index column "${name}": ${key} must be a boolean`);
    search[key] = value;
  }
  if (search.contains === false && search.prefix === false && search.words === false) {
    throw codedError('ALE_INVALID_INPUT', `search index column "${name}": keep at least one of contains, prefix and words`);
  }
  const { collection, field } = base;
  const accents = search.accents ?? false;
  const kinds = (['contains', 'prefix', 'words'] as const).filter((k) => search[k] !== false);
  const tokens = (value: string, tenant?: string) => {
    const t = tenant ?? base.tenant();
    return atColumn(where, () => searcher.searchTokens(value, t, collection, field, search), t);
  };
  const tokenText = (value: string, tenant?: string) => {
    const t = tenant ?? base.tenant();
    return atColumn(where, () => searcher.searchTokenText(value, t, collection, field, search), t);
  };
  return {
    column: name,
    collection,
    field,
    fts,
    keys: options.keys,
    fixedTenant: base.fixedTenant,
    source: 'text',
    site: indexSite(base, name, 'search index', `${kinds.join(', ')}${accents ? ', accents folded' : ''}`),
    tokens,
    tokenText,
    tokensOfText: tokens,
    // Any text is an encryptedText column's.
    checkSource: () => undefined,
    writingKey,
    keysAsked,
    queries(query, kind) {
      const t = base.tenant();
      return atColumn(where, () => searcher.searchQueries(query, kind, t, collection, field, search), t);
    },
    matches: (value, query, kind) => native.searchMatches(value, query, kind, accents),
  };
}
