// Search tokens on PostgreSQL: a `bigint[]` column (each token as a signed
// 64-bit integer), found with `@>` (contains every element), which a GIN
// index serves: `index('…').using('gin', t.nameSearch)` in drizzle-kit, or
// searchIndexSql().
import { sql, getTableName, type Column, type Table } from 'drizzle-orm';
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
};

/** The GIN index on search index column `column` of `table`, as SQL, for a migration written by hand. */
export function searchIndexSql(table: Table, column: Column, name: string): string[] {
  const q = (id: string) => `"${id.replaceAll('"', '""')}"`;
  return [`CREATE INDEX ${q(name)} ON ${q(getTableName(table))} USING gin (${q(column.name)})`];
}
