// What every token index column shares (a searchIndexColumn, a
// rangeIndexColumn): options read alike, tokens bound to the encrypted
// column's collection and field, and a codec that re-indexing, conversion
// and the leakage report use without knowing which kind it is.
import { codedError, type CodedError } from '../shared/errors.js';
import { fieldCodec, type ColumnOptionsBase, type EncryptedColumnOptions, type FieldCodec, type OnKeyRing, type OnTenantKeys } from './codec.js';
import type { IndexSite } from './index-origin.js';
import type { TenantKeys } from './keys/store.js';
import type { RangeType } from './range/encoding.js';
import { processRingConfigured, processSearcher, ringSearcher, type Searcher } from './search/searcher.js';

/** The options every token index column takes: the encrypted column's collection and field, its ring or key store, and on SQLite its FTS5 table. */
export type IndexColumnOptions = Omit<ColumnOptionsBase, 'storage' | 'legacyPlaintext'> &
  (OnKeyRing | OnTenantKeys) & {
    /** SQLite: the FTS5 table over this column that searchIndexSql() creates; without it a query scans the column. */
    fts?: string;
  };

export interface IndexCodec {
  readonly column: string;
  readonly collection: string;
  readonly field: string;
  /** The SQLite FTS5 table that indexes the column, if any. */
  readonly fts: string | undefined;
  /** MySQL and MariaDB: the table of (token, row key) pairs that indexes a range column, if any (mysql-core/token-table.ts). */
  readonly tokenTable?: string | undefined;
  /** The tenant key store of a column with `keys`. */
  readonly keys: TenantKeys | undefined;
  /** The column's `tenant` when it is a fixed id: its tokens are bound to it, whatever the row says. */
  readonly fixedTenant: string | undefined;
  /** What the encrypted column it indexes holds: text, or a range type. */
  readonly source: 'text' | RangeType;
  /** Which index its tokens are of, and the tenant they are bound to now: what a StoredIndex read from it carries (index-origin.ts). */
  readonly site: IndexSite;
  /** The tokens of a value of the source column, given as its decrypted text (re-indexing, conversion). */
  tokensOfText(text: string, tenant: string): Buffer;
  /** Refuses decrypted text the source column `source` does not read (a range type's other forms), in its words: the source value's failure, checked apart from its tokens'. */
  checkSource(text: string, source: string): void;
  /** Names the key its tokens are written under now (a job's fingerprint holds it); null with `keys`, whose keys are each tenant's. */
  writingKey(): string | null;
  /** How many index keys a query of `tenant` looks up tokens of: more than one during a rotation of the search key or a conversion; undefined where they cannot be asked (not loaded, none set). */
  keysAsked(tenant: string): number | undefined;
}

/** The parts of an index codec that do not depend on its kind. */
export interface IndexBase {
  base: FieldCodec;
  searcher: Searcher;
  fts: string | undefined;
  where: { column: string; collection: string; field: string };
  writingKey: IndexCodec['writingKey'];
  keysAsked: IndexCodec['keysAsked'];
}

/** Reads the options every token index column takes; `what` names the column kind in errors. */
export function indexBase(name: string, options: IndexColumnOptions, what: string): IndexBase {
  for (const refused of ['storage', 'legacyPlaintext'] as const) {
    if ((options as EncryptedColumnOptions)?.[refused] !== undefined) {
      throw codedError('ALE_INVALID_INPUT', `${what} column "${name}": ${refused} applies to encrypted columns; an index holds tokens`);
    }
  }
  const base = fieldCodec(options?.field ?? name, options);
  const { fts } = options;
  if (fts !== undefined && (typeof fts !== 'string' || fts === '')) throw codedError('ALE_INVALID_INPUT', `${what} column "${name}": fts must name the FTS5 table`);
  const searcher: Searcher = options.keys?.sealer ?? (options.keyRing ? ringSearcher(options.keyRing) : processSearcher);
  // The words of a fixed text under the primary key: keyed and one-way, and
  // another primary gives others. A ring that cannot make them (no
  // process-wide ring set) fails the job here, before it records anything.
  // A tenant key store and a ring of tenants (size 0) hold no key of their
  // own: the keys are each tenant's, as in fingerprint.ts's primaryOf.
  const writingKey = () => (options.keys || options.keyRing?.size === 0 ? null : searcher.searchTokenText('ale job fingerprint', 'ale', 'ale_jobs', 'primary', {}));
  // One node's tokens under each index key a query asks, told apart by the
  // tokens (a ring's secrets may share one indexKey); a search query asks
  // the same keys, whatever its text and the column's indexes.
  const keysAsked = (tenant: string) => {
    if (searcher === processSearcher && !processRingConfigured()) return undefined;
    try {
      return new Set(searcher.rangeQueries(ONE_NODE, tenant, base.collection, base.field).map((set) => set.toString('base64'))).size;
    } catch (e) {
      if (KEYS_NOT_AT_HAND.has((e as CodedError)?.code)) return undefined;
      throw e;
    }
  };
  return { base, searcher, fts, where: { column: name, collection: base.collection, field: base.field }, writingKey, keysAsked };
}

/** Why a tenant's keys cannot be asked: not loaded, no ring or store to ask, a tenant id no key is bound to. */
const KEYS_NOT_AT_HAND = new Set(['ALE_KEY_NOT_LOADED', 'ALE_NOT_INITIALIZED', 'ALE_INVALID_KEY', 'ALE_INVALID_CONTEXT']);

/** A node of the range tree (range/tree.ts): its prefix of 4 bits, then its 8-byte code, 0. */
const ONE_NODE = Buffer.from([4, 0, 0, 0, 0, 0, 0, 0, 0]);
