// A range index column's codec (docs/search.md, "Ranges and order"): binds
// the column to tenant:collection:field, its type and its searcher, and
// gives a value's tokens (its path in the tree, and in the spot trees of
// its level: range/spots.ts) and a range's token sets (a cover, under every
// key stored tokens may be under).
import { codedError } from '../../shared/errors.js';
import { atColumn } from '../failures.js';
import { indexBase, type IndexCodec, type IndexColumnOptions } from '../index-codec.js';
import { indexSite } from '../index-origin.js';
import { checkValue, codeBounds, codeOf, RANGE_TYPES, valueOf, type RangeType, type RangeValue } from './encoding.js';
import { spotLevel, spotNodes, withSpots } from './spots.js';
import { cover, pathNodes } from './tree.js';

/** The options of a range index column: an index column's, and the type of the values it indexes. */
export type RangeIndexOptions<T extends RangeType = RangeType> = IndexColumnOptions & {
  /** What the encrypted column beside it holds: encryptedNumber ('number'), encryptedBigint ('bigint') or encryptedDate ('date'). */
  type: T;
  /**
   * MySQL and MariaDB: the table of (token, row key) pairs, under a B-tree,
   * that rangeTokenTableSql() creates and its triggers keep; queries then
   * ask it instead of the column's FULLTEXT index (docs/search.md, "Token
   * tables on MySQL and MariaDB").
   */
  tokenTable?: string;
};

/** A range's token sets, one of each per key stored tokens may be under: a row is a candidate under a key when it holds a token of its `include` and none of its `exclude`. */
export interface CoverSets {
  include: Buffer[];
  /** Empty Buffers when the cover is exact. */
  exclude: Buffer[];
}

export interface RangeCodec extends IndexCodec {
  readonly source: RangeType;
  readonly type: RangeType;
  /** The tokens of a value (checked against the type) under the primary key, in `tenant` (default: the column's, or the scope's). */
  tokens(value: unknown, tenant?: string): Buffer;
  /** A value's code: its place in the order (range/encoding.ts). */
  code(value: unknown): bigint;
  /** The first and last codes a value of the type can have. */
  readonly bounds: readonly [bigint, bigint];
  /** The token sets of the codes [lo, hi], looking up at most `max` tokens per key (SearchSql.coverLimit); with `spot`, of that level's spot tree (range/spots.ts): the range's rows of that level. */
  cover(lo: bigint, hi: bigint, max: number, spot?: number): CoverSets;
}

/** `spots`: whether values store their spots (range/spots.ts), which the dialect's orderedPage asks (SearchSql.spots); `tokenTables`: whether the dialect can ask a token table (SearchSql.tokenTables). */
export function rangeCodec(name: string, options: RangeIndexOptions, spots: boolean, tokenTables = false): RangeCodec {
  const { base, searcher, fts, where, writingKey, keysAsked } = indexBase(name, options, 'range index');
  const type = options?.type;
  if (!RANGE_TYPES.includes(type)) throw codedError('ALE_INVALID_INPUT', `range index column "${name}": type must be 'number', 'bigint' or 'date'`);
  const { tokenTable } = options;
  if (tokenTable !== undefined) {
    if (!tokenTables) throw codedError('ALE_INVALID_INPUT', `range index column "${name}": tokenTable is for MySQL and MariaDB`);
    if (typeof tokenTable !== 'string' || tokenTable === '') throw codedError('ALE_INVALID_INPUT', `range index column "${name}": tokenTable must name the table of tokens`);
    // MySQL's names stop at 64 characters, and the names of its triggers and its foreign key add 3.
    if (tokenTable.length > 61) throw codedError('ALE_INVALID_INPUT', `range index column "${name}": tokenTable must be at most 61 characters`);
  }
  const { collection, field } = base;
  const what = `range index column "${name}"`;
  const code = (value: unknown) => codeOf(type, checkValue(type, value, what));
  const tokensOfCode = (c: bigint, tenant?: string) => {
    const t = tenant ?? base.tenant();
    const nodes = pathNodes(c);
    let all: Buffer | undefined;
    try {
      return atColumn(
        where,
        () => {
          const tokens = searcher.rangeTokens(nodes, t, collection, field);
          const level = spots ? spotLevel(tokens) : 0;
          if (level === 0) return tokens;
          // One value in 16: its path again in each spot tree of its level, with the path in one sorted set.
          all = withSpots(nodes, level);
          return searcher.rangeTokens(all, t, collection, field);
        },
        t,
      );
    } finally {
      // The path is the value's code, as telling as the value.
      nodes.fill(0);
      all?.fill(0);
    }
  };
  return {
    column: name,
    collection,
    field,
    fts,
    tokenTable,
    keys: options.keys,
    fixedTenant: base.fixedTenant,
    source: type,
    type,
    site: indexSite(base, name, 'range index', type),
    tokens: (value, tenant) => tokensOfCode(code(value), tenant),
    writingKey,
    keysAsked,
    tokensOfText: (text, tenant) => tokensOfCode(codeOf(type, valueOf(type, text, what) as RangeValue), tenant),
    // As the source column's reads word it (range/mappers.ts).
    checkSource: (text, source) => void valueOf(type, text, `encrypted ${type} column "${source}"`),
    code,
    bounds: codeBounds(type),
    cover(lo, hi, max, spot) {
      const t = base.tenant();
      const plain = cover(lo, hi, max);
      const { include, exclude } = spot === undefined ? plain : { include: spotNodes(plain.include, spot), exclude: spotNodes(plain.exclude, spot) };
      if (spot !== undefined) [plain.include, plain.exclude].forEach((nodes) => nodes.fill(0));
      try {
        return atColumn(
          where,
          () => {
            const sets = { include: searcher.rangeQueries(include, t, collection, field), exclude: [] as Buffer[] };
            sets.exclude = exclude.length === 0 ? sets.include.map(() => Buffer.alloc(0)) : searcher.rangeQueries(exclude, t, collection, field);
            // Both asked the same keys in the same synchronous turn, so they pair up; if not, the condition would not be exact.
            if (sets.exclude.length !== sets.include.length) throw codedError('ALE_INTERNAL', 'range cover: the exclusion was made under other keys than the cover');
            return sets;
          },
          t,
        );
      } finally {
        include.fill(0);
        exclude.fill(0);
      }
    },
  };
}
