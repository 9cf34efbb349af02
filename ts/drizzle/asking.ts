// How a column is asked what it is: Drizzle gives no place to hang our data
// on a column, so each of our columns answers a probe symbol passed through
// its public mapToDriverValue (probe.ts says what each answers). The symbols
// come from Symbol.for, so a column of either build (ESM or CommonJS)
// answers the other's probe. It imports nothing, so that any floor can ask.

/** Asked with it, an encrypted column answers with its ColumnInfo (probe.ts). */
export const COLUMN_PROBE = Symbol.for('@sveltycms/ale/column-probe');

/**
 * Asked through a blind-index column's public `mapToDriverValue`, its
 * `toDriver` answers with its codec: that is how matchBlindIndex() finds the
 * column's ring and context.
 */
export const CODEC_PROBE = Symbol.for('@sveltycms/ale/codec-probe');

/** Asked with it, a search index column answers with its SearchColumn (probe.ts). */
export const SEARCH_PROBE = Symbol.for('@sveltycms/ale/search-probe');

/** The column's answer to `probe`; undefined from a column whose mapper refuses it, which is not one of ours. */
export function ask(column: unknown, probe: symbol): unknown {
  try {
    return (column as { mapToDriverValue?: (value: unknown) => unknown })?.mapToDriverValue?.(probe);
  } catch {
    return undefined;
  }
}
