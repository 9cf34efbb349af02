// Encrypted column types, batch helpers and the tenant key store for drizzle-orm/sqlite-core.
import { customType, type ConvertCustomConfig, type SQLiteCustomColumnBuilder } from 'drizzle-orm/sqlite-core';
import { dialect, type ColumnValues } from './dialect.js';
import { sqliteTransact } from './sqlite-core/compare.js';
import { sqliteKeys } from './sqlite-core/keys.js';
import { sqliteSearch } from './sqlite-core/search.js';

export * from './index.js';

export { aleKeys, keyTable as aleKeysTable } from './sqlite-core/keys.js';
/** The FTS5 table, triggers and first fill that index a searchIndexColumn with `fts`, for a migration (each statement can run again). */
export { searchIndexSql } from './sqlite-core/search.js';
/** Whether a searchIndexColumn's FTS5 table and the triggers that keep it are there (a table drizzle-kit rebuilt has lost its triggers); with `rows`, whether the index holds every row. */
export { searchIndexCheck, type SearchIndexCheck, type SearchIndexCheckOptions, type SearchIndexProblem } from './sqlite-core/check.js';
/** The FTS5 side of a search condition, for pages in rowid order that FTS5 drives and stops early; with a placeholder, for a prepared statement. */
export { searchHits, searchHitsPlaceholder, type SearchHits, type SearchHitsPlaceholder } from './sqlite-core/hits.js';

declare module './dialect.js' {
  // This dialect's column builders, which the factory's columns are typed with.
  interface Builders<TName extends string, V extends ColumnValues> {
    sqlite: SQLiteCustomColumnBuilder<ConvertCustomConfig<TName, V>>;
  }
}

const d = dialect<'sqlite'>(customType, { text: 'text', binary: 'blob', index: 'text' }, sqliteTransact, sqliteKeys, sqliteSearch);

/** An encrypted string column (`text`; `blob` with `storage: 'binary'`), bound to tenant:collection:field. */
export const encryptedText = d.encryptedText;
/** A JSON value of type T, encrypted as encryptedText (`text`; `blob` with `storage: 'binary'`). */
export const encryptedJson = d.encryptedJson;
/** A keyed blind index (`text`) beside an encrypted column; it reads back a StoredIndex, which writes back unchanged. */
export const blindIndexColumn = d.blindIndexColumn;
/** The search tokens (`text`) of an encrypted text column, for searchContains, searchPrefix and searchWords; with `fts`, found through that FTS5 table. */
export const searchIndexColumn = d.searchIndexColumn;
/** A number, encrypted as encryptedText encrypts its decimal text; reads back a number. */
export const encryptedNumber = d.encryptedNumber;
/** A bigint (signed 64-bit), encrypted as its decimal text; reads back a bigint. */
export const encryptedBigint = d.encryptedBigint;
/** A Date, encrypted as its ISO text; reads back a Date. */
export const encryptedDate = d.encryptedDate;
/** The range index of an encryptedNumber, encryptedBigint or encryptedDate column, for rangeGt … rangeBetween and orderedPage; on SQLite with `fts`, found through that FTS5 table. */
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
