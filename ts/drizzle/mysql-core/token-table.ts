// A range column's token table on MySQL and MariaDB: one row for each
// (token, row key) pair of the column, under a B-tree primary key, written
// by triggers from the column's text and deleted with the row by a foreign
// key. InnoDB's FULLTEXT costs time for every row a query matches before
// the ORDER BY and LIMIT; the B-tree gives a token's keys for the price of
// its index entries, and the rows are then read by key (docs/search.md,
// "Token tables on MySQL and MariaDB"). The table shows what the column
// shows: which rows share a token.
import { getTableName, sql, type Column, type SQL, type Table } from 'drizzle-orm';
import { getTableConfig } from 'drizzle-orm/mysql-core';
import { codedError } from '../../shared/errors.js';
import { rangeColumnOf } from '../probe.js';
import { tableKey, type KeyConfig, type TableKey } from '../range/table-key.js';
import { quoteId } from './names.js';

/** The key of `column`'s table, which the token table's rows point to. */
export function keyOf(column: Column, what: string): TableKey {
  // mysql-core declares its columns apart from drizzle-orm's Column, which they are at run time.
  const at = tableKey(column, getTableConfig as unknown as (table: Table) => KeyConfig);
  if (at === undefined) throw codedError('ALE_INVALID_INPUT', `${what}: a token table needs its table's primary key of one column, named in the schema (not an alias, as relational queries give)`);
  // The token table is named without a database, as the connection's.
  if (getTableConfig(at.table as Parameters<typeof getTableConfig>[0]).schema !== undefined) throw codedError('ALE_INVALID_INPUT', `${what}: a token table needs its table in the connection's database (no mysqlSchema)`);
  return at;
}

/**
 * The rows whose keys the token table `tokenTable` pairs with one of
 * `tokens` and with none of `except`: `key in (select row_key … where token
 * in (…))`, which MariaDB answers by reading the pairs' keys first and the
 * rows by key.
 */
export function inTokenTable(column: Column, tokenTable: string, tokens: Buffer, except: Buffer): SQL {
  const { key } = keyOf(column, 'range condition');
  const keysOf = (set: Buffer) => {
    const list: SQL[] = [];
    // Each token its 8 bytes, a parameter mysql2 writes as a hex literal.
    for (let at = 0; at < set.length; at += 8) list.push(sql`${set.subarray(at, at + 8)}`);
    return list.length === 0 ? undefined : sql`(select row_key from ${sql.identifier(tokenTable)} where token in (${sql.join(list, sql`, `)}))`;
  };
  const found = keysOf(tokens);
  if (found === undefined) return sql`false`;
  const out = keysOf(except);
  return out === undefined ? sql`${key} in ${found}` : sql`(${key} in ${found} and ${key} not in ${out})`;
}

/** The tokens of `row`'s text column `text` (16 hex digits a token, one space between two) as rows `w.hex`, cut with JSON_TABLE. */
export function tokensOf(row: string, text: string): string {
  return `JSON_TABLE(CONCAT('["', REPLACE(${row}.${text}, ' ', '","'), '"]'), '$[*]' COLUMNS (hex CHAR(16) PATH '$')) AS w`;
}

/**
 * The token table of range index column `column` of `table` (its
 * `tokenTable` option), as SQL for a migration: the table, with a foreign
 * key to the table's key that deletes a row's pairs with the row (and
 * moves them with its key), the triggers that write a row's pairs when
 * its text is written, and the pairs of the rows already there. Each
 * statement can run again. The triggers cut the column's text (16 hex
 * digits a token, one space between two) with JSON_TABLE: MariaDB 10.6 or
 * later (tested on 10.11); MySQL 8.0.29 or later by its syntax (CREATE
 * TRIGGER IF NOT EXISTS), not tested. Where the binary log is on, creating
 * a trigger needs the SUPER privilege or log_bin_trust_function_creators.
 */
export function rangeTokenTableSql(table: Table, column: Column): string[] {
  const what = 'rangeTokenTableSql';
  const { codec } = rangeColumnOf(column, what);
  if (codec.tokenTable === undefined) throw codedError('ALE_INVALID_INPUT', `${what}: column "${column.name}" names no tokenTable`);
  if (column.table !== table) throw codedError('ALE_INVALID_INPUT', `${what}: column "${column.name}" is not a column of this table`);
  const { key } = keyOf(column, what);
  const [name, pairs, text, id] = [quoteId(getTableName(table)), quoteId(codec.tokenTable), quoteId(column.name), quoteId(key.name)];
  // `serial` is MySQL's shorthand for an unsigned bigint that counts itself; the pairs hold the number.
  const keyType = key.getSQLType() === 'serial' ? 'bigint unsigned' : key.getSQLType();
  const named = (suffix: string) => quoteId(`${codec.tokenTable}_${suffix}`);
  // A row's pairs: each token its 8 bytes, cut from its text. A pair there
  // already (the same token twice in a text, or a row the triggers wrote
  // before the first fill read it) is left as it is.
  const pairsOf = (row: string, from = '') =>
    `INSERT INTO ${pairs} (token, row_key) SELECT UNHEX(w.hex), ${row}.${id} FROM ${from}${tokensOf(row, text)} WHERE ${row}.${text} <> '' ON DUPLICATE KEY UPDATE ${pairs}.row_key = ${pairs}.row_key`;
  return [
    // The foreign key, not a trigger, deletes a row's pairs: a statement whose WHERE reads the pairs (a range condition) may
    // not run a trigger that writes them (MySQL's error 1442), and a cascade from another table fires no trigger.
    // The key named: MySQL's own name for it (the table's and `_ibfk_1`) could pass 64 characters.
    `CREATE TABLE IF NOT EXISTS ${pairs} (token BINARY(8) NOT NULL, row_key ${keyType} NOT NULL, PRIMARY KEY (token, row_key), KEY (row_key),
       CONSTRAINT ${named('fk')} FOREIGN KEY (row_key) REFERENCES ${name} (${id}) ON DELETE CASCADE ON UPDATE CASCADE) ENGINE=InnoDB`,
    // The update trigger first: a row inserted once the insert trigger is there gets its text's pairs kept from then on.
    // By the time it runs, the foreign key has moved the pairs to a new key.
    `CREATE TRIGGER IF NOT EXISTS ${named('au')} AFTER UPDATE ON ${name} FOR EACH ROW BEGIN
       IF NOT (OLD.${text} <=> NEW.${text}) THEN
         DELETE FROM ${pairs} WHERE row_key = NEW.${id};
         ${pairsOf('NEW')};
       END IF;
     END`,
    `CREATE TRIGGER IF NOT EXISTS ${named('ai')} AFTER INSERT ON ${name} FOR EACH ROW ${pairsOf('NEW')}`,
    pairsOf(name, `${name}, `),
  ];
}
