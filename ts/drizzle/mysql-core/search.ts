// Search tokens on MySQL and MariaDB: words of 16 hex digits in a
// `mediumtext` column (a 4 KB value's trigrams pass `text`'s 64 KB), found
// with MATCH … AGAINST in boolean mode, which needs the column's FULLTEXT
// index (searchIndexSql(); drizzle-kit cannot declare one).
import { sql, getTableName, type Column, type Table } from 'drizzle-orm';
import { hexWords } from '../../shared/hex-words.js';
import { allHex, hexTokens, type SearchSql } from '../search/sql.js';

export const mysqlSearch: SearchSql = {
  type: 'mediumtext',
  store: hexWords,
  read: (stored) => String(stored),
  list: (stored) => (stored === '' ? [] : stored.split(' ')),
  where(column, sets) {
    const each = sets.map((set) => sql`match(${column}) against(${hexTokens(set).map((t) => `+${t}`).join(' ')} in boolean mode)`);
    return sql`(${sql.join(each, sql` or `)})`;
  },
  // Exact: an excluded word costs a lookup as an included one does.
  coverLimit: 1024,
  narrowBatch: 256,
  // Words without an operator are optional in boolean mode: a row with any
  // of them matches, unless it has a word marked `-`.
  any: (column, tokens, except) => sql`match(${column}) against(${[...allHex(tokens), ...allHex(except).map((t) => `-${t}`)].join(' ')} in boolean mode)`,
};

/** The FULLTEXT index on search index column `column` of `table`, as SQL, for a migration. */
export function searchIndexSql(table: Table, column: Column, name: string): string[] {
  const q = (id: string) => `\`${id.replaceAll('`', '``')}\``;
  return [`ALTER TABLE ${q(getTableName(table))} ADD FULLTEXT INDEX ${q(name)} (${q(column.name)})`];
}
