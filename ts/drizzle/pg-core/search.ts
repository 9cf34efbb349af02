// Search tokens on PostgreSQL: a `bigint[]` column (each token as a signed
// 64-bit integer), found with `@>` (contains every element), which a GIN
// index serves: `index('…').using('gin', t.nameSearch)` in drizzle-kit, or
// searchIndexSql().
import { sql, getTableName, type Column, type SQL, type Table } from 'drizzle-orm';
import { getTableConfig, type PgTable } from 'drizzle-orm/pg-core';
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
  narrowed: keysFirst,
  any: (column, tokens, except) => overlap(column, tokens, except),
};

/**
 * `&&`, overlap: any element in common, which GIN serves; the exclusion is
 * a filter on the rows it finds. `column` as a Column, or as SQL naming it.
 */
function overlap(column: Column | SQL, tokens: Buffer, except: Buffer): SQL {
  return except.length === 0 ? sql`${column} && ${arrayLiteral(tokens)}::bigint[]` : sql`(${column} && ${arrayLiteral(tokens)}::bigint[] and not ${column} && ${arrayLiteral(except)}::bigint[])`;
}

/** Each table's primary key of one column, or null: getTableConfig runs the table's extra-config callback at every call. */
const KEYS = new WeakMap<PgTable, Column | null>();

/** The column of `table`'s primary key, declared on the column or as primaryKey() of one column; undefined for none or several. */
function keyOf(table: PgTable): Column | undefined {
  let key = KEYS.get(table);
  if (key === undefined) {
    const { columns, primaryKeys } = getTableConfig(table);
    const keys = [...columns.filter((c) => c.primary), ...primaryKeys.map((k) => (k.columns.length === 1 ? k.columns[0] : null))];
    key = keys.length === 1 ? keys[0] : null;
    KEYS.set(table, key);
  }
  return key ?? undefined;
}

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
 * The subquery names its columns without a table, so they are its own
 * however the outer query names the table (drizzle's relational queries
 * alias it); the outer query names the key as a column, which drizzle
 * renders under that name. For a table as drizzle declares it, with a
 * primary key of one column: a column of an alias(), a view or a subquery
 * comes through a proxy that looks alike for all three, whose table the
 * subquery could not name, so those, and tables keyed otherwise, are asked
 * as any other range, coarse cover included. The declared key is trusted:
 * a key that the database does not keep unique and not null would let the
 * subquery bring more rows or fewer.
 */
function keysFirst(column: Column): { coverLimit: number; where(include: Buffer[], exclude: Buffer[]): SQL } | undefined {
  const table = column.table as PgTable;
  // drizzle-orm's own registered symbol (table.js), which its types keep internal.
  if ((table as unknown as Record<symbol, unknown>)[Symbol.for('drizzle:IsAlias')] !== false) return undefined;
  const key = keyOf(table);
  // A name drizzle took from the property may be renamed by the db's `casing`, which the subquery would not know: only one either casing keeps.
  const named = (c: Column) => !c.keyAsName || /^[a-z0-9]+$/.test(c.name);
  if (key === undefined || !named(key) || !named(column)) return undefined;
  const own = sql`${sql.identifier(column.name)}`;
  return {
    coverLimit: EXACT_COVER_MAX,
    where: (include, exclude) =>
      sql`${key} = any(array(select ${sql.identifier(key.name)} from ${table} where ${sql.join(
        include.map((set, i) => overlap(own, set, exclude[i])),
        sql` or `,
      )}))`,
  };
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
