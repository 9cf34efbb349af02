// What makes a searchable column's tokens (docs/search.md): a KeyRing, the
// process-wide ring, or a tenant key store. Each gives a value's tokens
// under its primary key, and a query's tokens under every key that may have
// made a stored value's: while a re-index runs, rows hold the tokens of the
// previous key or of the new one, and a query looks for both.
import * as native from '../../../index.js';
import type { KeyRing, SearchOptions } from '../../../index.js';
import type { CodedError } from '../../shared/errors.js';
import { onProcessRing } from '../process-ring.js';

export type QueryKind = 'contains' | 'prefix' | 'words';

export interface Searcher {
  /** The tokens a value stores: sorted, distinct, 8 bytes each. */
  searchTokens(value: string, tenantId: string, collectionId: string, fieldName: string, options: SearchOptions): Buffer;
  /** The same tokens as words (6 base32hex digits each), one space between two: what FTS5 and FULLTEXT index. */
  searchTokenText(value: string, tenantId: string, collectionId: string, fieldName: string, options: SearchOptions): string;
  /** One token set per key a stored value's tokens may be under, primary first: a value matches when it holds every token of one set. */
  searchQueries(query: string, kind: QueryKind, tenantId: string, collectionId: string, fieldName: string, options: SearchOptions): Buffer[];
  /** The range tokens of tree nodes (range/tree.ts) under the primary key: a value's path. */
  rangeTokens(nodes: Buffer, tenantId: string, collectionId: string, fieldName: string): Buffer;
  /** The range tokens of tree nodes under every key a stored value's may be under, primary first: a query's cover. */
  rangeQueries(nodes: Buffer, tenantId: string, collectionId: string, fieldName: string): Buffer[];
}

/**
 * A KeyRing's tokens: every secret of the ring, primary first. A ring of
 * tenants has no count of its own (its size is 0), and each tenant's ring
 * may hold previous secrets: asked until it refuses, as the process-wide
 * ring is.
 */
export function ringSearcher(ring: KeyRing): Searcher {
  const every = (make: (secret: number) => Buffer) => (ring.size > 0 ? Array.from({ length: ring.size }, (_, secret) => make(secret)) : untilRefused(make));
  return {
    searchTokens: (value, t, c, f, options) => ring.searchTokens(value, t, c, f, options),
    searchTokenText: (value, t, c, f, options) => ring.searchTokenText(value, t, c, f, options),
    searchQueries: (query, kind, t, c, f, options) => every((secret) => ring.searchQuery(query, kind, t, c, f, { ...options, secret })),
    rangeTokens: (nodes, t, c, f) => ring.rangeTokens(nodes, t, c, f),
    rangeQueries: (nodes, t, c, f) => every((secret) => ring.rangeTokens(nodes, t, c, f, { secret })),
  };
}

/**
 * Whether the process-wide ring is set, or can be from the environment
 * (ENCRYPTION_KEY or SECRET_ENCRYPTION_KEY): where it cannot, no value was
 * ever written under it, and there are no tokens of it to look up.
 */
export function processRingConfigured(): boolean {
  return native.isKeyRingInitialized() || Boolean(process.env.ENCRYPTION_KEY || process.env.SECRET_ENCRYPTION_KEY);
}

/**
 * The process-wide ring's tokens, with the ring read from the environment on
 * first use as the columns do (process-ring.ts). Its previous secrets
 * (ENCRYPTION_KEY_PREVIOUS) are queried too; the functions give no count of
 * them, so the loop stops at the first index the ring refuses.
 */
export const processSearcher: Searcher = {
  searchTokens: (value, t, c, f, options) => onProcessRing(() => native.searchTokens(value, t, c, f, options)),
  searchTokenText: (value, t, c, f, options) => onProcessRing(() => native.searchTokenText(value, t, c, f, options)),
  searchQueries: (query, kind, t, c, f, options) => everySecret((secret) => native.searchQuery(query, kind, t, c, f, { ...options, secret })),
  rangeTokens: (nodes, t, c, f) => onProcessRing(() => native.rangeTokens(nodes, t, c, f)),
  rangeQueries: (nodes, t, c, f) => everySecret((secret) => native.rangeTokens(nodes, t, c, f, { secret })),
};

/** `make(secret)` for the process-wide ring's primary, then each previous secret. */
function everySecret(make: (secret: number) => Buffer): Buffer[] {
  return untilRefused((secret) => (secret === 0 ? onProcessRing(() => make(0)) : make(secret)));
}

/** `make(secret)` for the primary, then each previous secret, until an index past the last. */
function untilRefused(make: (secret: number) => Buffer): Buffer[] {
  const sets = [make(0)];
  // A ring holds at most a handful of secrets; an index past the last is ALE_INVALID_INPUT.
  for (let secret = 1; ; secret++) {
    try {
      sets.push(make(secret));
    } catch (e) {
      if ((e as CodedError)?.code === 'ALE_INVALID_INPUT') return sets;
      throw e;
    }
  }
}
