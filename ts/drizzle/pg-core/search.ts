// Search tokens on PostgreSQL: a `bigint[]` column (each token as a signed
// 64-bit integer), found with `@>` (contains every element), which a GIN
// index serves: `index('…').using('gin', t.nameSearch)` in drizzle-kit, or
// searchIndexSql().
import { sql, getTableName, type Column, type SQL, type Table } from 'drizzle-orm';
import { getTableConfig } from 'drizzle-orm/pg-core';
import { searchColumn } from '../probe.js';
import { bothEnds, tableKey, type KeyConfig } from '../range/table-key.js';
import { EXACT_COVER_MAX } from '../range/tree.js';
import { cappedTokens, type EndsQuery, type NarrowedQuery, type SearchSql } from '../search/sql.js';

/** Tokens as a bigint[] literal. */
function arrayLiteral(tokens: Buffer): string {
  let out = '{';
  for (let at = 0; at < tokens.length; at += 8) out += (at === 0 ? '' : ',') + tokens.readBigInt64BE(at).toString();
  return out + '}';
}

export const pgSearch: SearchSql = {
  type: 'bigint[]',
  store: arrayLiteral,
  // Both drivers hand back an array of strings.
  read: (stored) => (Array.isArray(stored) ? `{${stored.join(',')}}` : String(stored)),
  // Except through JSON: drizzle's relational queries nest a relation's
  // columns in json_build_array, and the drivers parse its bigints as JS
  // numbers, rounded past 2^53.
  exact: (stored) => !Array.isArray(stored) || typeof stored[0] !== 'number' || stored.every((token) => Number.isSafeInteger(token)),
  list: (stored) => (stored === '{}' ? [] : stored.slice(1, -1).split(',')),
  where(column, sets) {
    const each = sets.map((set) => sql`${column} @> ${arrayLiteral(cappedTokens(set))}::bigint[]`);
    return sql`(${sql.join(each, sql` or `)})`;
  },
  // docs/search.md, "Ranges at 100,000 rows": the planner's choice, measured.
  coverLimit: 16,
  narrowBatch: 1024,
  narrowed: keysFirst,
  ends: keyEnds,
  spots: true,
  any: (column, tokens, except) => overlap(column, tokens, except),
};

/**
 * `&&`, overlap: any element in common, which GIN serves; the exclusion is
 * a filter on the rows it finds. `column` as a Column, or as SQL naming it.
 */
function overlap(column: Column | SQL, tokens: Buffer, except: Buffer): SQL {
  return except.length === 0 ? sql`${column} && ${arrayLiteral(tokens)}::bigint[]` : sql`(${column} && ${arrayLiteral(tokens)}::bigint[] and not ${column} && ${arrayLiteral(except)}::bigint[])`;
}

/** The key of `column`'s table for a subquery (range/table-key.ts). */
const keyed = (column: Column) => tableKey(column, getTableConfig as (table: Table) => KeyConfig);

/** `include` less `exclude` (one set under each key), on the column as the subquery names it. */
const anyOf = (rangeName: SQL, include: Buffer[], exclude: Buffer[]) =>
  sql.join(
    include.map((set, i) => overlap(rangeName, set, exclude[i])),
    sql` or `,
  );

/**
 * A narrowed part's exact cover, asked for the rows' primary keys first:
 * `id = any(array(select id … where cover))`. A query with `ORDER BY id
 * LIMIT n` and the condition as it is may be planned as a walk of the
 * primary key that stops at n matches, which reads the whole table when
 * the planner guesses many rows where there are few: it multiplies a
 * coarse cover's and its exclusion's shares as if they were independent,
 * and gives each token outside its common list one share. The subquery has
 * no LIMIT to plan for, and with the exact cover it asks the GIN index; the
 * outer query finds those rows by key (docs/search.md, "Narrowed parts on
 * PostgreSQL").
 *
 * The subquery names its columns without a table; the outer query names
 * the key as a column, which drizzle renders under that name. Tables that
 * tableKey() cannot name are asked as any other range, coarse cover
 * included.
 */
function keysFirst(column: Column): NarrowedQuery | undefined {
  const at = keyed(column);
  if (at === undefined) return undefined;
  const { table, key, id, rangeName } = at;
  return {
    coverLimit: EXACT_COVER_MAX,
    where: (include, exclude) => sql`${key} = any(array(select ${id} from ${table} where ${anyOf(rangeName, include, exclude)}))`,
  };
}

/**
 * A part's rows with the least and the greatest keys, up to `n` (half
 * each): `id = any(array((select id … order by id limit ⌈n/2⌉) union all
 * (… order by id desc limit ⌊n/2⌋)))` (bothEnds). Where the planner walks
 * the primary key for each half, the walk stops at its LIMIT, as the first
 * rows of a part in fetch's order do, so a part whose rows are most of the
 * table costs what the sample holds; where it guesses the part small, it
 * may take the GIN index and sort, which costs what the part holds. When
 * the ids grow with the values and a page goes newest first, the sample of
 * fetch's first rows holds the oldest, and this one's second half the
 * page's end (docs/search.md, "Newest first where the ids follow the
 * values"). The same tables as keysFirst; the coarse cover, which a walk
 * tests on each row it reads.
 */
function keyEnds(column: Column): EndsQuery | undefined {
  const at = keyed(column);
  if (at === undefined) return undefined;
  return {
    coverLimit: pgSearch.coverLimit,
    where: (include, exclude, n) => sql`${at.key} = any(array(${bothEnds(at, anyOf(at.rangeName, include, exclude), n)}))`,
  };
}

/**
 * The GIN index on search index column `column` of `table`, and for a
 * text search index the column's statistics target, as SQL for a migration
 * written by hand. Each statement can run again, and the index may already
 * be there: declared in the schema (`index(name).using('gin', …)`), it is
 * in drizzle-kit's migration of the table, before this one. PostgreSQL
 * matches the name alone, so any index under it stays as it is. The
 * planner guesses how many rows hold a token from the column's most common
 * elements; at the default target it guesses alike for every token outside
 * them, and too high for a rare one, then walks the primary key to fill a
 * page (`ORDER BY id LIMIT 20`) instead of asking the index. The largest
 * target gives it the frequencies to tell (docs/search.md, "Queries at
 * 100,000 rows"); it takes effect at the next ANALYZE.
 */
export function searchIndexSql(table: Table, column: Column, name: string): string[] {
  const q = (id: string) => `"${id.replaceAll('"', '""')}"`;
  // A table of a pgSchema is named with its schema: unqualified, search_path would pick the table (or none).
  const { schema } = getTableConfig(table as Parameters<typeof getTableConfig>[0]);
  const [t, c] = [(schema === undefined ? '' : `${q(schema)}.`) + q(getTableName(table)), q(column.name)];
  const index = `CREATE INDEX IF NOT EXISTS ${q(name)} ON ${t} USING gin (${c})`;
  // A range index keeps the default target: the planner weighs each token
  // a query asks for against every common element the statistics keep, so
  // at the largest target planning a range query cost more than running it
  // (docs/search.md, "How the index works"). Its tokens are not rare the way
  // a word's are: the nodes near the top are in most rows.
  if (searchColumn(column)?.codec.source !== 'text') return [index];
  return [index, `ALTER TABLE ${t} ALTER COLUMN ${c} SET STATISTICS 10000`];
}
