// Encrypted column types, batch helpers and the tenant key store for drizzle-orm/pg-core.
import { customType, type ConvertCustomConfig, type PgCustomColumnBuilder } from 'drizzle-orm/pg-core';
import { dialect, type ColumnValues } from './dialect.js';
import { byteaText } from './pg-core/bytea.js';
import { pgTransact } from './pg-core/compare.js';
import { pgJobs } from './pg-core/jobs.js';
import { pgKeys } from './pg-core/keys.js';
import { pgSearch } from './pg-core/search.js';

export * from './index.js';

export { aleKeys, keyTable as aleKeysTable } from './pg-core/keys.js';
/** The GIN index of a searchIndexColumn, as SQL for a migration (drizzle-kit declares it too: `index(name).using('gin', column)`). */
export { searchIndexSql } from './pg-core/search.js';

declare module './dialect.js' {
  // This dialect's column builders, which the factory's columns are typed with.
  interface Builders<TName extends string, V extends ColumnValues> {
    pg: PgCustomColumnBuilder<ConvertCustomConfig<TName, V>>;
  }
}

const d = dialect<'pg'>(customType, { text: 'text', binary: 'bytea', index: 'char(43)', binaryText: byteaText }, pgTransact, pgKeys, pgSearch, pgJobs);

/** An encrypted string column (`text`; `bytea` with `storage: 'binary'`), bound to tenant:collection:field. */
export const encryptedText = d.encryptedText;
/** A JSON value of type T, encrypted as encryptedText (`text`; `bytea` with `storage: 'binary'`). */
export const encryptedJson = d.encryptedJson;
/** A keyed blind index (`char(43)`) beside an encrypted column; it reads back a StoredIndex, which writes back unchanged. */
export const blindIndexColumn = d.blindIndexColumn;
/** The search tokens (`bigint[]`) of an encrypted text column, for searchContains, searchPrefix and searchWords, served by a GIN index. */
export const searchIndexColumn = d.searchIndexColumn;
/** A number, encrypted as encryptedText encrypts its decimal text; reads back a number. */
export const encryptedNumber = d.encryptedNumber;
/** A bigint (signed 64-bit), encrypted as its decimal text; reads back a bigint. */
export const encryptedBigint = d.encryptedBigint;
/** A Date, encrypted as its ISO text; reads back a Date. */
export const encryptedDate = d.encryptedDate;
/** The range index of an encryptedNumber, encryptedBigint or encryptedDate column, for rangeGt … rangeBetween and orderedPage; found through its GIN index (searchIndexSql). */
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
