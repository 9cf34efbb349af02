// What a column says about itself when asked (asking.ts): an encrypted
// column answers with its ColumnInfo, a blind-index column with its codec,
// a search or range index column with its codec and its dialect's SQL.
import { codedError } from '../shared/errors.js';
import type { FieldCodec } from './codec.js';
import type { TenantKeys } from './keys/store.js';
import type { Sealer } from './process-ring.js';
import { ask, CODEC_PROBE, COLUMN_PROBE, SEARCH_PROBE } from './asking.js';
import type { RangeCodec } from './range/codec.js';
import type { RangeType } from './range/encoding.js';
import type { SearchCodec } from './search/codec.js';
import type { IndexCodec } from './index-codec.js';
import type { SearchSql } from './search/sql.js';
import type { Storage } from './storage.js';

export { CODEC_PROBE, COLUMN_PROBE, SEARCH_PROBE };

/**
 * What an encrypted column says about itself when its mapToDriverValue is
 * asked with COLUMN_PROBE: the batch helpers learn each column's storage,
 * and convertStorage checks that two columns bind their values to the same
 * collection and field.
 */
export interface ColumnInfo {
  storage: Storage;
  /** What it holds: text, JSON, or a range type (encryptedNumber, encryptedBigint, encryptedDate). */
  kind: 'text' | 'json' | RangeType;
  collection: string;
  field: string;
  /** The column's fixed tenant id, which binds all its values (its `tenant` option when that is a string). */
  tenant: string | undefined;
  /** The tenant key store of a column with `keys`. */
  keys: TenantKeys | undefined;
  /** What the column seals with: the store's sealer, its keyRing, or the process-wide ring. */
  sealer: Sealer;
}
/** The column's ColumnInfo, or undefined when it is not an encryptedText/encryptedJson column. */
export function columnInfo(column: unknown): ColumnInfo | undefined {
  const info = ask(column, COLUMN_PROBE);
  return typeof info === 'object' && info !== null && (info as ColumnInfo).storage !== undefined ? (info as ColumnInfo) : undefined;
}

/** The codec of a blindIndexColumn, or a coded TypeError. */
export function codecOf(column: unknown): FieldCodec {
  const codec = ask(column, CODEC_PROBE);
  if (typeof codec !== 'object' || codec === null || typeof (codec as FieldCodec).blindIndexes !== 'function') {
    throw codedError('ALE_INVALID_INPUT', 'matchBlindIndex: the column is not a blindIndexColumn');
  }
  return codec as FieldCodec;
}

/** What a token index column (search or range) answers: its codec, and how its dialect stores and finds tokens. */
export interface SearchColumn<C extends IndexCodec = IndexCodec> {
  codec: C;
  sql: SearchSql;
}

/** The SearchColumn of a searchIndexColumn or rangeIndexColumn, or undefined for any other column. */
export function searchColumn(column: unknown): SearchColumn | undefined {
  const answer = ask(column, SEARCH_PROBE) as SearchColumn | undefined;
  return typeof answer === 'object' && answer !== null && typeof answer.codec?.tokensOfText === 'function' ? answer : undefined;
}

/** The SearchColumn of any token index column, or a coded error naming `caller`. */
export function indexColumnOf(column: unknown, caller: string): SearchColumn {
  const answer = searchColumn(column);
  if (answer === undefined) throw codedError('ALE_INVALID_INPUT', `${caller}: the column is not a searchIndexColumn or rangeIndexColumn`);
  return answer;
}

/** The SearchColumn of a searchIndexColumn, or a coded error naming `caller`. */
export function searchColumnOf(column: unknown, caller: string): SearchColumn<SearchCodec> {
  const answer = searchColumn(column);
  if (answer?.codec.source !== 'text') throw codedError('ALE_INVALID_INPUT', `${caller}: the column is not a searchIndexColumn`);
  return answer as SearchColumn<SearchCodec>;
}

/** The SearchColumn of a rangeIndexColumn, or a coded error naming `caller`. */
export function rangeColumnOf(column: unknown, caller: string): SearchColumn<RangeCodec> {
  const answer = searchColumn(column);
  if (answer === undefined || answer.codec.source === 'text') throw codedError('ALE_INVALID_INPUT', `${caller}: the column is not a rangeIndexColumn`);
  return answer as SearchColumn<RangeCodec>;
}
