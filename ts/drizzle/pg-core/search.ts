// Search tokens on PostgreSQL: a `bigint[]` column (each token as a signed
// 64-bit integer), found with `@>` (contains every element), which a GIN
// index serves: `index('…').using('gin', t.nameSearch)` in drizzle-kit, or
// searchIndexSql().
import { sql, getTableName, type Column, type SQL, type Table } from 'drizzle-orm';
import { searchColumn } from '../probe.js';
import { EXACT_COVER_MAX } from '../range/tree.js';
import { hexTokens, type SearchSql } from '../search/sql.js';

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
  list: (stored) => (stored === '{}' ? [] : stored.slice(1, -1).split(',')),
  where(column, sets) {
    const each = sets.map((set) => sql`${column} @> ${arrayLiteral(Buffer.from(hexTokens(set).join(''), 'hex'))}::bigint[]`);
    return sql`(${sql.join(each, sql` or `)})`;
  },
  // docs/search.md, "Ranges at 100,000 rows": the planner's choice, measured.
  coverLimit: 16,
  narrowBatch: 1024,
  narrowed: { coverLimit: EXACT_COVER_MAX, where: addressesFirst },
  // `&&`, overlap: any element in common, which GIN serves; the exclusion
  // is a filter on the rows it finds.
  any: (column, tokens, except) =>
    except.length === 0 ? sql`${column} && ${arrayLiteral(tokens)}::bigint[]` : sql`(${column} && ${arrayLiteral(tokens)}::bigint[] and not ${column} && ${arrayLiteral(except)}::bigint[])`,
};

/**
 * A narrowed part's condition as the rows' addresses, collected first:
 * `ctid = any(array(select ctid … where condition))`. A query with `ORDER
 * BY id LIMIT n` and the condition as it is may be planned as a walk of
 * the primary key that stops at n matches, which reads the whole table
 * when the planner guesses many rows where there are few: it multiplies a
 * coarse cover's and its exclusion's shares as if they were independent,
 * and gives each token outside its common list one share. The subquery has
 * no LIMIT to plan for, and with the exact cover it asks the GIN index; the
 * outer query reads those rows by address (docs/search.md, "Narrowed parts
 * on PostgreSQL"). The column's qualifier names the same table inside the
 * subquery as outside, so its condition is the subquery's own.
 *
 * Only for a column of a table as drizzle declares it: a column of an
 * alias(), a view or a subquery comes through a proxy that looks alike for
 * all three, and a view or a subquery has no ctid, so those are asked as
 * they are. A ctid is unique within one table: on a partitioned table the
 * outer query may also read rows of other partitions at the same address,
 * which the exact test refuses: checking the condition again there cost
 * as much as the rest of the query (same section of docs/search.md).
 */
function addressesFirst(column: Column, condition: SQL): SQL {
  // drizzle-orm's own registered symbol (table.js), which its types keep internal.
  if ((column.table as unknown as Record<symbol, unknown>)[Symbol.for('drizzle:IsAlias')] !== false) return condition;
  const table = column.table;
  return sql`${table}.ctid = any(array(select ${table}.ctid from ${table} where ${condition}))`;
}

/**
 * The GIN index on search index column `column` of `table`, and for a
 * text search index the column's statistics target, as SQL for a migration written by hand. The
 * planner guesses how many rows hold a token from the column's most common
 * elements; at the default target it guesses alike for every token outside
 * them, and too high for a rare one, then walks the primary key to fill a
 * page (`ORDER BY id LIMIT 20`) instead of asking the index. The largest
 * target gives it the frequencies to tell (docs/search.md, "Queries at
 * 100,000 rows"); it takes effect at the next ANALYZE.
 */
export function searchIndexSql(table: Table, column: Column, name: string): string[] {
  const q = (id: string) => `"${id.replaceAll('"', '""')}"`;
  const [t, c] = [q(getTableName(table)), q(column.name)];
  const index = `CREATE INDEX ${q(name)} ON ${t} USING gin (${c})`;
  // A range index keeps the default target: the planner weighs each token
  // a query asks for against every common element the statistics keep, so
  // at the largest target planning a range query cost more than running it
  // (docs/search.md, "How the index works"). Its tokens are not rare the way
  // a word's are: the nodes near the top are in most rows.
  if (searchColumn(column)?.codec.source !== 'text') return [index];
  return [index, `ALTER TABLE ${t} ALTER COLUMN ${c} SET STATISTICS 10000`];
}
