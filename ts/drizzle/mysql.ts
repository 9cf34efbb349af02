// Encrypted column types, batch helpers and the tenant key store for drizzle-orm/mysql-core.
import { customType, type ConvertCustomConfig, type MySqlCustomColumnBuilder } from 'drizzle-orm/mysql-core';
import { dialect, type ColumnValues } from './dialect.js';
import { mysqlTransact } from './mysql-core/transact.js';
import { mysqlJobs } from './mysql-core/jobs.js';
import { mysqlKeys } from './mysql-core/keys.js';
import { mysqlSearch } from './mysql-core/search.js';

export * from './index.js';

export { aleKeys, keyTable as aleKeysTable } from './mysql-core/keys.js';
/** The FULLTEXT index a searchIndexColumn needs, as SQL for a migration (drizzle-kit cannot declare it). */
export { searchIndexSql } from './mysql-core/search.js';
/** The token table a rangeIndexColumn with `tokenTable` asks, with the triggers that keep it, as SQL for a migration. */
export { rangeTokenTableSql } from './mysql-core/token-table.js';
/** Whether that token table, its foreign key and its triggers are there (and with `rows`, its pairs in step with the rows): a start-up check. */
export { rangeTokenTableCheck, type RangeTokenTableCheck, type RangeTokenTableCheckOptions, type RangeTokenTableProblem } from './mysql-core/token-table-check.js';

declare module './dialect.js' {
  // This dialect's column builders, which the factory's columns are typed with.
  interface Builders<TName extends string, V extends ColumnValues> {
    mysql: MySqlCustomColumnBuilder<ConvertCustomConfig<TName, V>>;
  }
}

const d = dialect<'mysql'>(customType, { text: 'longtext', binary: 'longblob', index: 'char(43)' }, mysqlTransact, mysqlKeys, mysqlSearch, mysqlJobs);

/** An encrypted string column (`longtext`; `longblob` with `storage: 'binary'`), bound to tenant:collection:field. */
export const encryptedText = d.encryptedText;
/** A JSON value of type T, encrypted as encryptedText (`longtext`; `longblob` with `storage: 'binary'`). */
export const encryptedJson = d.encryptedJson;
/** A keyed blind index (`char(43)`) beside an encrypted column; it reads back a StoredIndex, which writes back unchanged. */
export const blindIndexColumn = d.blindIndexColumn;
/** The search tokens (`mediumtext`) of an encrypted text column, for searchContains, searchPrefix and searchWords, through its FULLTEXT index. */
export const searchIndexColumn = d.searchIndexColumn;
/** A number, encrypted as encryptedText encrypts its decimal text; reads back a number. */
export const encryptedNumber = d.encryptedNumber;
/** A bigint (signed 64-bit), encrypted as its decimal text; reads back a bigint. */
export const encryptedBigint = d.encryptedBigint;
/** A Date, encrypted as its ISO text; reads back a Date. */
export const encryptedDate = d.encryptedDate;
/** The range index of an encryptedNumber, encryptedBigint or encryptedDate column, for rangeGt … rangeBetween and orderedPage; found through its FULLTEXT index (searchIndexSql). */
export const rangeIndexColumn = d.rangeIndexColumn;
/** Encrypts the plaintext values of `options.columns` in place, batch by batch, resumably (docs/drizzle.md, "Migrating existing plaintext"). */
export const migratePlaintext = d.migratePlaintext;
/** Re-encrypts under the primary key of `options.keyRing` every value only a previous key opens; resumable. */
export const rotateKeys = d.rotateKeys;
/** Moves envelopes between a text and a binary column of one collection and field, without decrypting; resumable. */
export const convertStorage = d.convertStorage;
/** Moves every value of `keys` columns (and their blind indexes) under each tenant's active data key; resumable. */
export const convertToTenantKeys = d.convertToTenantKeys;
/** Writes each row's search tokens again from its text, under the primary key; resumable: builds an index, and finishes a rotation of the search key. */
export const reindexSearch = d.reindexSearch;
/** What a search index column's tokens show an observer of the database, per tenant, measured on the rows, with warnings past documented thresholds. */
export const searchLeakage = d.searchLeakage;
/** The tenant key store: `tenantKeys(db, { kek })`, or `tenantKeys()` in a schema module bound with `keys.bind(db, { kek })` at start-up. */
export const tenantKeys = d.tenantKeys;
