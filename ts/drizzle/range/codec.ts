// A range index column's codec (docs/search.md, "Ranges and order"): binds
// the column to tenant:collection:field, its type and its searcher, and
// gives a value's tokens (its path in the tree) and a range's token sets
// (a cover, under every key stored tokens may be under).
import { codedError } from '../../shared/errors.js';
import { atColumn } from '../failures.js';
import { indexBase, type IndexCodec, type IndexColumnOptions } from '../search/index-codec.js';
import { checkValue, codeOf, RANGE_TYPES, valueOf, type RangeType, type RangeValue } from './encoding.js';
import { coverNodes, pathNodes } from './tree.js';

/** The options of a range index column: an index column's, and the type of the values it indexes. */
export type RangeIndexOptions<T extends RangeType = RangeType> = IndexColumnOptions & {
  /** What the encrypted column beside it holds: encryptedNumber ('number'), encryptedBigint ('bigint') or encryptedDate ('date'). */
  type: T;
};

/**
 * The most nodes a range's cover asks for, per key. An exact cover can
 * take a few hundred; past this, the deepest nodes give way to their
 * parents, which bring in a few values beyond each end of the range for
 * the exact test to remove (docs/search.md gives the figures).
 */
export const MAX_COVER = 64;

export interface RangeCodec extends IndexCodec {
  readonly source: RangeType;
  readonly type: RangeType;
  /** The tokens of a value (checked against the type) under the primary key, in `tenant` (default: the column's, or the scope's). */
  tokens(value: unknown, tenant?: string): Buffer;
  /** A value's code: its place in the order (range/encoding.ts). */
  code(value: unknown): bigint;
  /** The token sets of the codes [lo, hi], one per key stored tokens may be under: a row is a candidate when it holds any token of any set. */
  cover(lo: bigint, hi: bigint, max?: number): Buffer[];
}

export function rangeCodec(name: string, options: RangeIndexOptions): RangeCodec {
  const { base, searcher, fts, where } = indexBase(name, options, 'range index');
  const type = options?.type;
  if (!RANGE_TYPES.includes(type)) throw codedError('ALE_INVALID_INPUT', `range index column "${name}": type must be 'number', 'bigint' or 'date'`);
  const { collection, field } = base;
  const what = `range index column "${name}"`;
  const code = (value: unknown) => codeOf(type, checkValue(type, value, what));
  const tokensOfCode = (c: bigint, tenant?: string) => {
    const t = tenant ?? base.tenant();
    const nodes = pathNodes(c);
    try {
      return atColumn(where, () => searcher.rangeTokens(nodes, t, collection, field), t);
    } finally {
      // The path is the value's code, as telling as the value.
      nodes.fill(0);
    }
  };
  return {
    column: name,
    collection,
    field,
    fts,
    keys: options.keys,
    source: type,
    type,
    tokens: (value, tenant) => tokensOfCode(code(value), tenant),
    tokensOfText: (text, tenant) => tokensOfCode(codeOf(type, valueOf(type, text, what) as RangeValue), tenant),
    code,
    cover(lo, hi, max = MAX_COVER) {
      const t = base.tenant();
      const nodes = coverNodes(lo, hi, max);
      try {
        return atColumn(where, () => searcher.rangeQueries(nodes, t, collection, field), t);
      } finally {
        nodes.fill(0);
      }
    },
  };
}
