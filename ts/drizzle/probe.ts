// What a column says about itself. Drizzle gives no place to hang our data on
// a column, so each of our columns answers a probe symbol passed through its
// public mapToDriverValue: an encrypted column with its ColumnInfo, a
// blind-index column with its codec. The symbols come from Symbol.for, so a
// column of either build (ESM or CommonJS) answers the other's probe.
import type { FieldCodec } from './codec.js';
import type { TenantKeys } from './keys/store.js';
import type { Sealer } from './process-ring.js';
import type { Storage } from './storage.js';

/**
 * What an encrypted column says about itself when its mapToDriverValue is
 * asked with COLUMN_PROBE: the batch helpers learn each column's storage,
 * and convertStorage checks that two columns bind their values to the same
 * collection and field.
 */
export interface ColumnInfo {
  storage: Storage;
  kind: 'text' | 'json';
  collection: string;
  field: string;
  /** The tenant key store of a column with `keys`. */
  keys: TenantKeys | undefined;
  /** What the column seals with: the store's sealer, its keyRing, or the process-wide ring. */
  sealer: Sealer;
}
export const COLUMN_PROBE = Symbol.for('@sveltycms/ale/column-probe');

/**
 * Asked through a blind-index column's public `mapToDriverValue`, its
 * `toDriver` answers with its codec: that is how matchBlindIndex() finds the
 * column's ring and context.
 */
export const CODEC_PROBE = Symbol.for('@sveltycms/ale/codec-probe');

/** The column's answer to `probe`; undefined from a column whose mapper refuses it, which is not one of ours. */
function ask(column: unknown, probe: symbol): unknown {
  try {
    return (column as { mapToDriverValue?: (value: unknown) => unknown })?.mapToDriverValue?.(probe);
  } catch {
    return undefined;
  }
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
    throw Object.assign(new TypeError('matchBlindIndex: the column is not a blindIndexColumn'), { code: 'ALE_INVALID_INPUT' });
  }
  return codec as FieldCodec;
}
