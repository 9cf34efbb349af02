// The primary key of a range column's table, for the dialects' subqueries
// that ask the table for keys (SearchSql.narrowed, SearchSql.ends): which
// column it is, the names a subquery writes without a table, so that they
// are its own however the outer query names the table (drizzle's
// relational queries alias it), and the two walks of the key SearchSql.ends
// asks for.
import { sql, type Column, type SQL, type Table } from 'drizzle-orm';

/** What a dialect's getTableConfig() gives that this file reads. */
export interface KeyConfig {
  columns: Column[];
  primaryKeys: { columns: Column[] }[];
}

/** A table as a subquery names it: the table, its key column, the key's name and the range column's, without the table. */
export interface TableKey {
  table: Table;
  key: Column;
  id: SQL;
  rangeName: SQL;
}

/** Each table's primary key of one column, or null: getTableConfig runs the table's extra-config callback at every call. */
const KEYS = new WeakMap<Table, Column | null>();

/**
 * The key of `column`'s table, declared on a column or as primaryKey() of
 * one column, with `config`, the dialect's getTableConfig(). Undefined for
 * a key of several columns or none, and for a column of an alias(), a view
 * or a subquery: drizzle gives all three a proxy that looks alike, whose
 * table a subquery could not name. Also undefined when the key's or the
 * column's name came from its property and the db's `casing` could rename
 * it, which the subquery would not know. The declared key is trusted: one
 * the database does not keep unique and not null would let a subquery
 * bring more rows or fewer.
 */
export function tableKey(column: Column, config: (table: Table) => KeyConfig): TableKey | undefined {
  const table = column.table;
  // drizzle-orm's own registered symbol (table.js), which its types keep internal.
  if ((table as unknown as Record<symbol, unknown>)[Symbol.for('drizzle:IsAlias')] !== false) return undefined;
  let key = KEYS.get(table);
  if (key === undefined) {
    const { columns, primaryKeys } = config(table);
    const keys = [...columns.filter((c) => c.primary), ...primaryKeys.map((k) => (k.columns.length === 1 ? k.columns[0] : null))];
    key = keys.length === 1 ? keys[0] : null;
    KEYS.set(table, key);
  }
  // Only names either casing keeps.
  const named = (c: Column) => !c.keyAsName || /^[a-z0-9]+$/.test(c.name);
  if (key === null || !named(key) || !named(column)) return undefined;
  return { table, key, id: sql`${sql.identifier(key.name)}`, rangeName: sql`${sql.identifier(column.name)}` };
}

/**
 * The keys of up to `n` rows that pass `test`, half with the least keys and
 * half with the greatest: `(select id … order by id asc limit ⌈n/2⌉) union
 * all (select id … order by id desc limit ⌊n/2⌋)`, for the dialect to
 * wrap. Each half is meant to be a walk of the key from its end that stops
 * at its LIMIT, where the database takes the key's order for it.
 */
export function bothEnds({ table, id }: TableKey, test: SQL, n: number): SQL {
  const end = (order: SQL, limit: number) => sql`(select ${id} from ${table} where ${test} order by ${id} ${order} limit ${limit})`;
  return sql`${end(sql`asc`, Math.ceil(n / 2))} union all ${end(sql`desc`, Math.floor(n / 2))}`;
}
