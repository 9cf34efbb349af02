// Search and range tokens on MySQL and MariaDB: words (6 digits a search
// token, 16 hex digits a range token) in a `mediumtext` column (at 7 bytes
// a token, a value of about 8 KB passes `text`'s 64 KB), found
// with MATCH … AGAINST in boolean mode, which needs the column's FULLTEXT
// index (searchIndexSql(); drizzle-kit cannot declare one).
import { sql, getTableName, type Column, type Table } from 'drizzle-orm';
import { getTableConfig } from 'drizzle-orm/mysql-core';
import { codedError } from '../../shared/errors.js';
import { tokenWords, WORD_LEN } from '../../shared/search-words.js';
import { bothEnds, tableKey, type KeyConfig } from '../range/table-key.js';
import { allHex, inText, cappedTokens, storeWords, type EndsQuery, type SearchSql } from '../search/sql.js';
import { quoteId } from './names.js';
import { inTokenTable } from './token-table.js';

export const mysqlSearch: SearchSql = {
  type: 'mediumtext',
  store: storeWords,
  read: (stored) => String(stored),
  serverCheck: wordsKept,
  list: (stored) => (stored === '' ? [] : stored.split(' ')),
  where(column, sets) {
    const each = sets.map((set) => sql`match(${column}) against(${tokenWords(cappedTokens(set)).map((t) => `+${t}`).join(' ')} in boolean mode)`);
    return sql`(${sql.join(each, sql` or `)})`;
  },
  // Exact: an excluded word costs a lookup as an included one does.
  coverLimit: 1024,
  narrowBatch: 256,
  ends: keyEnds,
  spots: true,
  tokenTables: true,
  // A range column with a token table asks it (token-table.ts). Words
  // without an operator are optional in boolean mode: a row with any of
  // them matches, unless it has a word marked `-`.
  any: (column, tokens, except, codec) =>
    codec.tokenTable !== undefined ? inTokenTable(column, codec.tokenTable, tokens, except) : sql`match(${column}) against(${[...allHex(tokens), ...allHex(except).map((t) => `-${t}`)].join(' ')} in boolean mode)`,
};

/** A range token's word: 16 hex digits (allHex). */
const RANGE_WORD_LEN = 16;

/**
 * InnoDB's FULLTEXT index leaves out words shorter than
 * innodb_ft_min_token_size (3 by default, up to 16) and longer than
 * innodb_ft_max_token_size (84 by default, down to 10), with no error: past
 * 6 for the first, every search word, and under 16 for the second, every
 * range word, and with them every query, finds nothing. Both are read-only,
 * set at start-up.
 */
async function wordsKept(db: unknown, kinds: { search: boolean; range: boolean }): Promise<void> {
  const result = await (db as { execute(q: unknown): Promise<unknown> }).execute(sql`select @@innodb_ft_min_token_size as n, @@innodb_ft_max_token_size as x`);
  // mysql2 answers [rows, fields]; the serverless drivers an object with rows. Neither form read: nothing to check by.
  const rows = (Array.isArray(result) ? result[0] : (result as { rows?: unknown } | null)?.rows) as Array<{ n?: unknown; x?: unknown }> | undefined;
  const [min, max] = [Number(Array.isArray(rows) ? rows[0]?.n : undefined), Number(Array.isArray(rows) ? rows[0]?.x : undefined)];
  const fix = 'in the server\'s configuration, restart it, and rebuild the FULLTEXT indexes (docs/search.md, "Words of 30 bits")';
  if (kinds.search && min > WORD_LEN) {
    throw codedError(
      'ALE_INVALID_INPUT',
      `the server's innodb_ft_min_token_size is ${min}, so its FULLTEXT indexes leave out words shorter, and every search token is a word of ${WORD_LEN} characters: ` +
        `no search would find a row. Set it to ${WORD_LEN} or less (the default is 3) ${fix}`,
    );
  }
  if (kinds.range && max < RANGE_WORD_LEN) {
    throw codedError(
      'ALE_INVALID_INPUT',
      `the server's innodb_ft_max_token_size is ${max}, so its FULLTEXT indexes leave out words longer, and every range token is a word of ${RANGE_WORD_LEN} characters: ` +
        `no range query would find a row. Set it to ${RANGE_WORD_LEN} or more (the default is 84) ${fix}, or give the range columns a token table (tokenTable)`,
    );
  }
}

/**
 * A part's rows with the least and the greatest keys, up to `n` (half
 * each): `id in (select id from ((select id … order by id limit ⌈n/2⌉)
 * union all (… order by id desc limit ⌊n/2⌋)) as ale_ends)` (bothEnds),
 * nested so because MariaDB and MySQL refuse a LIMIT directly under IN
 * (checked on MariaDB only). Each half walks the primary key from its end,
 * testing each row's text (inText) with the coarse cover, and stops at its
 * LIMIT, where FULLTEXT would find every row of the part first: a part that
 * is most of the table costs what the sample holds (docs/search.md, "Newest
 * first where the ids follow the values"). For the tables tableKey() can
 * name.
 */
function keyEnds(column: Column): EndsQuery | undefined {
  // mysql-core declares its columns apart from drizzle-orm's Column, which they are at run time.
  const at = tableKey(column, getTableConfig as unknown as (table: Table) => KeyConfig);
  if (at === undefined) return undefined;
  return {
    // A walk tests each row it reads against every token of the cover and its exclusion: as few as PostgreSQL's.
    coverLimit: 16,
    where: (include, exclude, n) => {
      const test = sql.join(
        include.map((set, i) => inText(at.rangeName, set, exclude[i])),
        sql` or `,
      );
      return sql`${at.key} in (select ${at.id} from (${bothEnds(at, sql`(${test})`, n)}) as ale_ends)`;
    },
  };
}

/** The FULLTEXT index on search index column `column` of `table`, as SQL, for a migration. */
export function searchIndexSql(table: Table, column: Column, name: string): string[] {
  // A table of a mysqlSchema (another database) is named with it, as drizzle's own queries name it.
  const { schema } = getTableConfig(table as Parameters<typeof getTableConfig>[0]);
  const named = (schema === undefined ? '' : `${quoteId(schema)}.`) + quoteId(getTableName(table));
  return [`ALTER TABLE ${named} ADD FULLTEXT INDEX ${quoteId(name)} (${quoteId(column.name)})`];
}
