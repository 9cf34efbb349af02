// Search tokens as the KeyRing and the package's functions give them
// (index.ts): arguments read as the addon reads them (src/api/search_args.rs),
// then the scheme (this folder).
import type { SearchOptions } from '../../../index.js';
import { invalidInput, readText } from '../errors.js';
import type { Ring } from '../ring.js';
import { queryTokens, valueTokens, type Indexes, type QueryKind } from './index.js';
import { matches } from './matching.js';
import { normalize, type Folding } from './normalize.js';
import { ColumnTokens } from './tokens.js';

interface Read {
  indexes: Indexes;
  folding: Folding;
  secret: number;
}

function readOptions(options: unknown): Read {
  const out: Read = { indexes: { contains: true, prefix: true, words: true }, folding: { accents: false }, secret: 0 };
  if (options === undefined || options === null) return out;
  const given = options as SearchOptions;
  for (const [name, set] of [
    ['contains', (b: boolean) => (out.indexes.contains = b)],
    ['prefix', (b: boolean) => (out.indexes.prefix = b)],
    ['words', (b: boolean) => (out.indexes.words = b)],
    ['accents', (b: boolean) => (out.folding.accents = b)],
  ] as const) {
    const value = given[name];
    if (value === undefined) continue;
    if (typeof value !== 'boolean') throw invalidInput(`options.${name} must be a boolean`);
    set(value);
  }
  out.secret = readSecret(options);
  return out;
}

/** `options.secret`, as src/api/search_options.rs reads it: 0 when absent. */
export function readSecret(options: unknown): number {
  if (options === undefined || options === null) return 0;
  const { secret } = options as { secret?: unknown };
  if (secret === undefined) return 0;
  if (typeof secret !== 'number' || !Number.isInteger(secret) || secret < 0 || secret >= 1024) {
    throw invalidInput("options.secret must be a secret's index: 0, 1, …");
  }
  return secret;
}

function readKind(kind: unknown): QueryKind {
  if (kind === 'contains' || kind === 'prefix' || kind === 'words') return kind;
  throw invalidInput("kind must be 'contains', 'prefix' or 'words'");
}

/**
 * A value's tokens. `args` reads the value and its column (`aad`); the
 * options are read before it, as the addon reads them, so that the same
 * bad call gets the same error first.
 */
export function searchTokensWith(ring: Ring, options: unknown, args: () => [string, string]): Buffer {
  const read = readOptions(options);
  const [value, aad] = args();
  return ring.withIndexKey(aad, read.secret, (key) => valueTokens(new ColumnTokens(key, aad), value, read.indexes, read.folding));
}

/** A query's tokens: the options, the kind, then what `args` reads (the query and its column), in the addon's order. */
export function searchQueryWith(ring: Ring, options: unknown, kind: unknown, args: () => [string, string]): Buffer {
  const read = readOptions(options);
  const k = readKind(kind);
  const [query, aad] = args();
  return ring.withIndexKey(aad, read.secret, (key) => queryTokens(new ColumnTokens(key, aad), query, k, read.indexes, read.folding));
}

const readAccents = (accents: unknown): boolean => {
  if (accents === undefined || accents === null) return false;
  if (typeof accents !== 'boolean') throw invalidInput('accents must be a boolean');
  return accents;
};

export function searchNormalize(text: string, accents?: boolean): string {
  return normalize(readText(text, 'text'), { accents: readAccents(accents) });
}

export function searchMatches(value: string, query: string, kind: 'contains' | 'prefix' | 'words', accents?: boolean): boolean {
  const [v, q, k] = [readText(value, 'value'), readText(query, 'query'), readKind(kind)];
  return matches(v, q, k, { accents: readAccents(accents) });
}
