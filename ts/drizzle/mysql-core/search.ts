// Search tokens on MySQL and MariaDB: words of 16 hex digits in a
// `mediumtext` column (a 4 KB value's trigrams pass `text`'s 64 KB), found
// with MATCH … AGAINST in boolean mode, which needs the column's FULLTEXT
// index (searchIndexSql(); drizzle-kit cannot declare one).
import { sql, getTableName, type Column, type SQL, type Table } from 'drizzle-orm';
import { getTableConfig } from 'drizzle-orm/mysql-core';
import { hexWords } from '../../shared/hex-words.js';
import { tableKey, type KeyConfig } from '../range/table-key.js';
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
  ends: keyEnds,
  // Words without an operator are optional in boolean mode: a row with any
  // of them matches, unless it has a word marked `-`.
  any: (column, tokens, except) => sql`match(${column}) against(${[...allHex(tokens), ...allHex(except).map((t) => `-${t}`)].join(' ')} in boolean mode)`,
};

/**
 * Rows that hold a token of a set and none of its exclusion, tested in the
 * column's text, row by row: a token is 16 hex digits between spaces, so a
 * hit of `instr` is the whole token.
 */
function inText(own: SQL, include: Buffer[], exclude: Buffer[]): SQL {
  const any = (tokens: Buffer) => sql`(${sql.join(
    allHex(tokens).map((t) => sql`instr(${own}, ${t}) > 0`),
    sql` or `,
  )})`;
  const each = include.map((set, i) => (exclude[i].length === 0 ? any(set) : sql`(${any(set)} and not ${any(exclude[i])})`));
  return sql`(${sql.join(each, sql` or `)})`;
}

/**
 * A part's rows with the least and the greatest keys, up to `n` (half
 * each): `id in (select id from ((select id … order by id limit ⌈n/2⌉)
 * union all (… order by id desc limit ⌊n/2⌋)) as ale_ends)`, the nesting
 * MariaDB and MySQL need for a LIMIT under IN. Each half walks the primary
 * key from its end, testing each row's text (inText) with the coarse
 * cover, and stops at its LIMIT: FULLTEXT would find every row of the part
 * first, at about 5 µs a row, which is what the sample saves when the part
 * is most of the table (docs/search.md, "Newest first where the ids follow
 * the values"). For the tables range/table-key.ts can name.
 */
function keyEnds(column: Column): { coverLimit: number; where(include: Buffer[], exclude: Buffer[], n: number): SQL } | undefined {
  // mysql-core declares its columns apart from drizzle-orm's Column, which they are at run time.
  const at = tableKey(column, getTableConfig as unknown as (table: Table) => KeyConfig);
  if (at === undefined) return undefined;
  const { table, key, id, own } = at;
  const end = (test: SQL, order: SQL, limit: number) => sql`(select ${id} from ${table} where ${test} order by ${id} ${order} limit ${limit})`;
  return {
    // A walk tests each row it reads against every token of the cover and its exclusion.
    coverLimit: 16,
    where(include, exclude, n) {
      const test = inText(own, include, exclude);
      return sql`${key} in (select ${id} from (${end(test, sql`asc`, Math.ceil(n / 2))} union all ${end(test, sql`desc`, Math.floor(n / 2))}) as ale_ends)`;
    },
  };
}

/** The FULLTEXT index on search index column `column` of `table`, as SQL, for a migration. */
export function searchIndexSql(table: Table, column: Column, name: string): string[] {
  const q = (id: string) => `\`${id.replaceAll('`', '``')}\``;
  return [`ALTER TABLE ${q(getTableName(table))} ADD FULLTEXT INDEX ${q(name)} (${q(column.name)})`];
}
