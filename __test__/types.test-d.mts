// Type tests, checked by `tsc -p tsconfig.typetest.json` (part of npm test).
// Each `Expect<Equal<…>>` and `@ts-expect-error` is an assertion.
import { integer, sqliteTable } from 'drizzle-orm/sqlite-core';
import { pgTable, serial } from 'drizzle-orm/pg-core';
import { int, mysqlTable } from 'drizzle-orm/mysql-core';
import { sql, type SQL } from 'drizzle-orm';
import type { BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import type { MySql2Database } from 'drizzle-orm/mysql2';
import * as sqlite from '@sveltycms/ale/drizzle/sqlite';
import * as pg from '@sveltycms/ale/drizzle/pg';
import * as mysql from '@sveltycms/ale/drizzle/mysql';
import * as drizzle from '@sveltycms/ale/drizzle';
import { withTenant, matchBlindIndex } from '@sveltycms/ale/drizzle';
import { KeyRing, encrypt, backend } from '@sveltycms/ale';
import * as dropIn from '@sveltycms/ale/sveltycms';

type Equal<X, Y> = (<T>() => T extends X ? 1 : 2) extends <T>() => T extends Y ? 1 : 2 ? true : false;
type Expect<T extends true> = T;

const opts = { collection: 'users' };
const s = sqliteTable('s', { id: integer('id').primaryKey(), doc: sqlite.encryptedJson<{ a: number }>('doc', opts), email: sqlite.encryptedText('email', opts).notNull(), idx: sqlite.blindIndexColumn('idx', opts) });
const p = pgTable('p', { id: serial('id').primaryKey(), doc: pg.encryptedJson<{ a: number }>('doc', opts), idx: pg.blindIndexColumn('idx', opts) });
const m = mysqlTable('m', { id: int('id').primaryKey(), doc: mysql.encryptedJson<{ a: number }>('doc', opts), email: mysql.encryptedText('email', opts), idx: mysql.blindIndexColumn('idx', opts).notNull() });
// storage: 'binary' changes what the driver gets (bytes), not the row types
const bin = { collection: 'users', storage: 'binary' } as const;
const sb = sqliteTable('sb', { id: integer('id').primaryKey(), email: sqlite.encryptedText('email', { collection: 'users', storage: 'binary' }), doc: sqlite.encryptedJson<{ a: number }>('doc', bin).notNull() });
// Drizzle's own idiom for a JSON column's type works on ours too
const st = sqliteTable('st', { id: integer('id').primaryKey(), doc: sqlite.encryptedJson('doc', opts).$type<{ a: number }>() });
const pb = pgTable('pb', { id: serial('id').primaryKey(), email: pg.encryptedText('email', bin).notNull(), doc: pg.encryptedJson<{ a: number }>('doc', bin) });
const mb = mysqlTable('mb', { id: int('id').primaryKey(), email: mysql.encryptedText('email', bin), emailText: mysql.encryptedText('email_text', { collection: 'users', storage: 'text' }) });
declare const mysqlDb: Parameters<typeof mysql.convertStorage>[0];
const converted = mysql.convertStorage(mysqlDb, { table: mb, key: mb.id, columns: [{ from: mb.emailText, to: mb.email }], batchSize: 100 });

// withTenant starts a lazy query in the scope and returns a Promise of its rows.
declare const sdb: BetterSQLite3Database;
declare const pdb: NodePgDatabase;
const sRows = withTenant('t', () => sdb.select().from(s));
const pRows = withTenant('t', () => pdb.select({ doc: p.doc }).from(p).where(matchBlindIndex(p.idx, 'a@b.c')));
const asyncResult = withTenant('t', async () => 1);

export type Tests = [
  Expect<Equal<(typeof st.$inferSelect)['doc'], { a: number } | null>>,
  Expect<Equal<(typeof s.$inferSelect)['doc'], { a: number } | null>>,
  Expect<Equal<(typeof s.$inferSelect)['email'], string>>,
  Expect<Equal<(typeof p.$inferSelect)['doc'], { a: number } | null>>,
  Expect<Equal<(typeof p.$inferSelect)['idx'], string | drizzle.StoredIndex | null>>,
  Expect<Equal<(typeof m.$inferSelect)['doc'], { a: number } | null>>,
  Expect<Equal<(typeof m.$inferInsert)['email'], string | null | undefined>>,
  Expect<Equal<ReturnType<KeyRing['encrypt']>, string>>,
  Expect<Equal<ReturnType<KeyRing['decryptAsync']>, Promise<string>>>,
  Expect<Equal<ReturnType<typeof encrypt>, string>>,
  Expect<Equal<typeof backend, 'native' | 'js'>>,
  Expect<Equal<ReturnType<typeof withTenant<number>>, Promise<number>>>,
  Expect<Equal<typeof sRows, Promise<(typeof s.$inferSelect)[]>>>,
  Expect<Equal<typeof pRows, Promise<{ doc: { a: number } | null }[]>>>,
  Expect<Equal<typeof asyncResult, Promise<number>>>,
  Expect<Equal<(typeof s.$inferSelect)['idx'], string | drizzle.StoredIndex | null>>,
  Expect<Equal<(typeof m.$inferSelect)['idx'], string | drizzle.StoredIndex>>,
  Expect<Equal<ReturnType<typeof matchBlindIndex>, SQL>>,
  // every dialect module re-exports the shared API unchanged
  Expect<Equal<typeof sqlite.withTenant, typeof drizzle.withTenant>>,
  Expect<Equal<typeof pg.matchBlindIndex, typeof drizzle.matchBlindIndex>>,
  Expect<Equal<typeof mysql.readWithFailures, typeof drizzle.readWithFailures>>,
  Expect<Equal<typeof sqlite.AleColumnError, typeof drizzle.AleColumnError>>,
  Expect<Equal<sqlite.MigrateOptions, drizzle.MigrateOptions>>,
  // binary storage: the same row types; bytes to the driver
  Expect<Equal<(typeof sb.$inferSelect)['email'], string | null>>,
  Expect<Equal<(typeof sb.$inferSelect)['doc'], { a: number }>>,
  Expect<Equal<(typeof sb.$inferInsert)['email'], string | null | undefined>>,
  Expect<Equal<(typeof pb.$inferSelect)['email'], string>>,
  Expect<Equal<(typeof pb.$inferSelect)['doc'], { a: number } | null>>,
  Expect<Equal<(typeof mb.$inferSelect)['email'], string | null>>,
  Expect<Equal<(typeof sb.email)['_']['driverParam'], Uint8Array>>,
  Expect<Equal<(typeof mb.emailText)['_']['driverParam'], string>>,
  Expect<Equal<(typeof s.email)['_']['driverParam'], string>>,
  Expect<Equal<typeof converted, Promise<drizzle.Progress>>>,
  Expect<Equal<drizzle.Storage, 'text' | 'binary'>>,
];

// @ts-expect-error collection is required
sqlite.encryptedText('email', {});
// @ts-expect-error the tenant resolver must return a string
pg.encryptedText('email', { collection: 'c', tenant: () => 42 });
// @ts-expect-error a JSON column of { a: number } does not take a string
s.$inferInsert.doc = 'text';
// @ts-expect-error the query has been started: what withTenant returns is a Promise, not a query builder
void withTenant('t', () => sdb.select().from(s)).where;
// @ts-expect-error a blind index matches a string
matchBlindIndex(p.idx, 42);
// @ts-expect-error legacyPlaintext ends at a date
sqlite.encryptedText('email', { collection: 'c', legacyPlaintext: { until: 5 } });
// @ts-expect-error storage is 'text' or 'binary'
sqlite.encryptedText('email', { collection: 'c', storage: 'base64' });
// @ts-expect-error a blind index is stored as text
pg.blindIndexColumn('idx', { collection: 'c', storage: 'binary' });
// @ts-expect-error convertStorage moves { from, to } pairs
mysql.convertStorage(mysqlDb, { table: mb, key: mb.id, columns: [{ column: mb.email }] });
// @ts-expect-error rotateKeys needs the ring to rotate to
void mysql.rotateKeys(mysqlDb, { table: mb, key: mb.id, columns: [{ column: mb.email }], tenant: 't' });
void mysql.rotateKeys(mysqlDb, { table: mb, key: mb.id, columns: [{ column: mb.email }], tenant: 't', keyRing: new KeyRing(['k']) });

// The tenant-key API: options with a shape, exclusive pairs as unions.
declare const keys: drizzle.TenantKeys;
const declaredKeys = sqlite.tenantKeys();
const boundKeys = sqlite.tenantKeys(sdb, { kek: 'k'.repeat(32), recheckAfterMs: 30_000, changeCheckEveryMs: 500, flushEveryMs: 0, rotateAfterEncryptions: 2 ** 20, readV1: false });
const keyed = sqliteTable('k', { id: integer('id').primaryKey(), tenantId: integer('tenant_id'), body: sqlite.encryptedText('body', { collection: 'c', keys }), idx: sqlite.blindIndexColumn('idx', { collection: 'c', field: 'body', keys }) });
const kek = drizzle.transitKek({ address: process.env.BAO_ADDR, token: process.env.BAO_TOKEN, keyPerTenant: { prefix: 'cms-' } });
export type TenantKeyTests = [
  Expect<Equal<typeof declaredKeys, drizzle.TenantKeys>>,
  Expect<Equal<typeof boundKeys, drizzle.TenantKeys>>,
  Expect<Equal<ReturnType<drizzle.TenantKeys['bind']>, drizzle.TenantKeys>>,
  Expect<Equal<(typeof keyed.$inferSelect)['body'], string | null>>,
  Expect<Equal<ReturnType<typeof keys.tenants>, Promise<drizzle.TenantPage>>>,
  Expect<Equal<typeof kek, drizzle.KekProvider>>,
];
// @ts-expect-error keys or keyRing, not both
sqlite.encryptedText('body', { collection: 'c', keys, keyRing: new KeyRing(['k'.repeat(32)]) });
// @ts-expect-error keys or keyRing, not both, on a blind index too
pg.blindIndexColumn('idx', { collection: 'c', keys, keyRing: new KeyRing(['k'.repeat(32)]) });
// @ts-expect-error durations are named in milliseconds: recheckAfterMs
sqlite.tenantKeys(sdb, { recheckAfter: 30_000 });
// @ts-expect-error a count is named as a count: rotateAfterEncryptions
sqlite.tenantKeys({ rotateAfter: 10 });
// @ts-expect-error key or keyPerTenant, not both
drizzle.transitKek({ address: 'http://127.0.0.1:8200', token: 't', key: 'cms', keyPerTenant: { prefix: 'cms-' } });
// @ts-expect-error key or keyPerTenant: one of them
drizzle.transitKek({ address: 'http://127.0.0.1:8200', token: 't' });
// @ts-expect-error the batch helpers take Drizzle columns, not names
sqlite.migratePlaintext(sdb, { table: keyed, key: keyed.id, columns: [{ column: 'body' }], tenant: { column: keyed.tenantId } });
// @ts-expect-error the tenant comes from a Drizzle column
sqlite.convertToTenantKeys(sdb, { table: keyed, key: keyed.id, columns: [{ column: keyed.body }], tenant: { column: 'tenant_id' }, keys });
// @ts-expect-error destroyRetired checks tables and their columns
void keys.destroyRetired('acme', [{ table: 'k', columns: [] }]);

// Search: the search index column reads back a StoredIndex; conditions are SQL with their exact test; pages keep the row type.
const searchable = sqliteTable('sr', { id: integer('id').primaryKey(), name: sqlite.encryptedText('name', opts), nameSearch: sqlite.searchIndexColumn('name_search', { collection: 'users', field: 'name', fts: 'sr_fts' }) });
const pgSearchable = pgTable('psr', { id: serial('id').primaryKey(), nameSearch: pg.searchIndexColumn('name_search', { collection: 'users', field: 'name', keys, accents: true }) });
const condition = drizzle.searchContains(searchable.nameSearch, 'müll');
const page = drizzle.searchPage((limit, offset) => sdb.select().from(searchable).where(condition).limit(limit).offset(offset), { limit: 20, matches: (row) => condition.matches(row.name) });
// SQLite: the page FTS5 drives keeps the selected row type.
const hits = sqlite.searchHits(condition);
const driven = drizzle.searchPage((limit, offset) => sdb.select({ id: searchable.id, name: searchable.name }).from(hits.table).innerJoin(searchable, hits.on).where(hits.match).orderBy(hits.rowid).limit(limit).offset(offset), { limit: 20, matches: (row) => condition.matches(row.name) });
// And through a statement prepared once, its query a placeholder that matchOf fills.
const placed = sqlite.searchHitsPlaceholder(searchable.nameSearch, 'q');
const byName = sdb.select({ id: searchable.id, name: searchable.name }).from(placed.table).innerJoin(searchable, placed.on).where(placed.match).orderBy(placed.rowid).limit(sql.placeholder('limit')).offset(sql.placeholder('offset')).prepare();
const preparedPage = drizzle.searchPage((limit, offset) => byName.all({ q: placed.matchOf(condition), limit, offset }), { limit: 20, matches: (row) => condition.matches(row.name), key: 'id', table: 'searchable' });
// SQLite: the start-up check of a column's FTS5 table and triggers.
const checked = sqlite.searchIndexCheck(sdb, searchable.nameSearch, { rows: true });
// @ts-expect-error hits of one condition have no matchOf
void hits.matchOf;
export type SearchTests = [
  Expect<Equal<Awaited<typeof page>['failures'], drizzle.SearchPageFailure[]>>,
  Expect<Equal<drizzle.SearchPageFailure, drizzle.RowFailure>>,
  Expect<Equal<typeof checked, Promise<sqlite.SearchIndexCheck>>>,
  Expect<Equal<typeof preparedPage, Promise<drizzle.SearchPage<{ id: number; name: string | null }>>>>,
  Expect<Equal<ReturnType<typeof placed.matchOf>, string>>,
  Expect<Equal<typeof driven, Promise<drizzle.SearchPage<{ id: number; name: string | null }>>>>,
  Expect<Equal<typeof hits.match extends SQL ? true : false, true>>,
  Expect<Equal<(typeof searchable.$inferSelect)['nameSearch'], string | drizzle.StoredIndex | null>>,
  Expect<Equal<(typeof pgSearchable.$inferInsert)['nameSearch'], string | drizzle.StoredIndex | null | undefined>>,
  Expect<Equal<typeof condition extends SQL ? true : false, true>>,
  Expect<Equal<ReturnType<typeof condition.matches>, boolean>>,
  Expect<Equal<typeof page, Promise<drizzle.SearchPage<typeof searchable.$inferSelect>>>>,
  Expect<Equal<typeof sqlite.searchWords, typeof drizzle.searchWords>>,
  Expect<Equal<ReturnType<typeof pg.searchLeakage>, Promise<drizzle.LeakageReport[]>>>,
  Expect<Equal<ReturnType<typeof mysql.reindexSearch>, Promise<drizzle.Progress>>>,
];
// @ts-expect-error a search index holds tokens: storage applies to encrypted columns
sqlite.searchIndexColumn('s', { collection: 'c', storage: 'binary' });
// @ts-expect-error the indexes are switched with booleans
pg.searchIndexColumn('s', { collection: 'c', contains: 'yes' });
// @ts-expect-error keys or keyRing, not both, on a search index too
mysql.searchIndexColumn('s', { collection: 'c', keys, keyRing: new KeyRing(['k'.repeat(32)]) });
// @ts-expect-error searchPage needs the exact test
void drizzle.searchPage(async () => [], { limit: 20 });
// @ts-expect-error reindexSearch pairs an index with its source column
void sqlite.reindexSearch(sdb, { table: searchable, key: searchable.id, tenant: 'acme', columns: [{ index: searchable.nameSearch }] });

// Ranges: typed columns read back their JS types; a range index takes its type's values; conditions are SQL with their exact test.
const measured = sqliteTable('ms', {
  id: integer('id').primaryKey(),
  amount: sqlite.encryptedNumber('amount', opts),
  amountRange: sqlite.rangeIndexColumn('amount_range', { collection: 'users', field: 'amount', type: 'number', fts: 'ms_amount' }),
  total: sqlite.encryptedBigint('total', opts).notNull(),
  born: sqlite.encryptedDate('born', bin),
  bornRange: sqlite.rangeIndexColumn('born_range', { collection: 'users', field: 'born', type: 'date' }),
});
const pgMeasured = pgTable('pms', { id: serial('id').primaryKey(), totalRange: pg.rangeIndexColumn('total_range', { collection: 'users', field: 'total', type: 'bigint', keys }) });
// MySQL: a range column with a token table, and its start-up check through mysql2.
declare const m2: MySql2Database;
const tokened = mysqlTable('mms', { id: int('id').primaryKey(), totalRange: mysql.rangeIndexColumn('total_range', { collection: 'users', field: 'total', type: 'number', tokenTable: 'mms_total_tokens' }) });
const tokenChecked = mysql.rangeTokenTableCheck(m2, tokened.totalRange, { rows: true });
const before1970 = drizzle.rangeLt(measured.bornRange, new Date(0));
const ordered = drizzle.orderedPage((where, limit, offset) => sdb.select().from(measured).where(where).limit(limit).offset(offset), { column: measured.amountRange, value: (row) => row.amount, order: 'desc', limit: 20, within: drizzle.rangeGte(measured.amountRange, 0) });
export type RangeTests = [
  Expect<Equal<(typeof measured.$inferSelect)['amount'], number | null>>,
  Expect<Equal<(typeof measured.$inferSelect)['total'], bigint>>,
  Expect<Equal<(typeof measured.$inferSelect)['born'], Date | null>>,
  Expect<Equal<(typeof measured.$inferSelect)['amountRange'], number | drizzle.StoredIndex | null>>,
  Expect<Equal<(typeof pgMeasured.$inferInsert)['totalRange'], bigint | drizzle.StoredIndex | null | undefined>>,
  Expect<Equal<typeof before1970 extends SQL ? true : false, true>>,
  Expect<Equal<Parameters<typeof before1970.matches>[0], drizzle.RangeValue | null | undefined>>,
  Expect<Equal<typeof ordered, Promise<drizzle.OrderedPage<typeof measured.$inferSelect>>>>,
  Expect<Equal<typeof sqlite.rangeBetween, typeof drizzle.rangeBetween>>,
  Expect<Equal<typeof tokenChecked, Promise<mysql.RangeTokenTableCheck>>>,
];
// @ts-expect-error a number column's range takes numbers
void drizzle.rangeGt(measured.amountRange, '5');
// @ts-expect-error a date column's range takes Dates
void drizzle.rangeBetween(measured.bornRange, 0, 1);
// @ts-expect-error the type is one of number, bigint and date
sqlite.rangeIndexColumn('r', { collection: 'c', type: 'float' });
// @ts-expect-error a range index holds tokens: storage applies to encrypted columns
pg.rangeIndexColumn('r', { collection: 'c', type: 'number', storage: 'binary' });
// @ts-expect-error orderedPage needs the row's value
void drizzle.orderedPage(async () => [], { column: measured.amountRange, limit: 20 });

// The drop-in's document helpers change fields in place: a sealed field may be an envelope, an opened one any JSON value.
const sealedDoc = dropIn.encryptDocumentFieldsSync({ body: { blocks: ['x'] }, n: 1, views: 3 }, ['body', 'n'], { tenantId: 't', collectionId: 'posts' });
const openedDoc = dropIn.decryptDocumentFieldsSync({ body: 'v1:…', n: 1, title: 'x' }, ['body'], { tenantId: 't', collectionId: 'posts' });
const names: string[] = ['title'];
const openedAny = dropIn.decryptDocumentFieldsSync({ body: 'v1:…', title: 'x' }, names, { tenantId: 't', collectionId: 'posts' });
type _DropIn = [
  Expect<Equal<typeof sealedDoc.n, number | string>>,
  Expect<Equal<typeof sealedDoc.views, number>>, // not named: left as it is
  Expect<Equal<typeof openedDoc.body, unknown>>,
  Expect<Equal<typeof openedDoc.n, number>>,
  Expect<Equal<typeof openedDoc.title, string>>, // not named: left as it is
  // names typed string may be any field
  Expect<Equal<typeof openedAny.title, unknown>>,
  Expect<Equal<Awaited<ReturnType<typeof dropIn.encryptDocumentFieldsStrict<{ n: number }>>>['n'], number | string>>,
];
// @ts-expect-error a sealed field may be an envelope string
const blocks: string[] = sealedDoc.body.blocks;
void blocks;
