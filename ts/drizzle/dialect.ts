// One factory for the three dialect modules: the encrypted column types over
// a dialect's customType(), and the batch helpers over its transactions.
import { is, Placeholder, sql, type Column, type SQL } from 'drizzle-orm';
import { codedError } from '../shared/errors.js';
import { batchHelpers } from './batch.js';
import type { Transact } from './transactions.js';
import { fieldCodec, jsonMappers, textMappers, type ColumnOptionsBase, type EncryptedColumnOptions, type FieldCodec, type OnKeyRing, type OnTenantKeys } from './codec.js';
import { indexSite, originAt, roundedAt, storedFor, type IndexSite } from './index-origin.js';
import { tenantConversion } from './keys/convert.js';
import { TenantKeys, type TenantKeysOptions } from './keys/store.js';
import type { KeyTableSpec } from './keys/table.js';
import type { JobTableSpec } from './jobs/table.js';
import { CODEC_PROBE, codecOf, COLUMN_PROBE, SEARCH_PROBE, type ColumnInfo, type SearchColumn } from './probe.js';
import { rangeCodec, type RangeIndexOptions } from './range/codec.js';
import type { RangeType, RangeValues } from './range/encoding.js';
import { rangeMappers } from './range/mappers.js';
import { searchCodec, type SearchIndexOptions } from './search/codec.js';
import { leakageReporter } from './search/leakage.js';
import { searchReindexer } from './search/reindex.js';
import { storeWords, type SearchSql } from './search/sql.js';
import { storageOf, type Storage } from './storage.js';
import { StoredIndex } from './stored-index.js';

/** What a column hands the driver: a string for text storage, bytes (a Buffer) for binary. */
type DriverData<S extends Storage> = S extends 'binary' ? Uint8Array : string;
/**
 * The customType() config of a column holding T in storage S: each dialect
 * module types its column builders with it (sqlite.ts, pg.ts, mysql.ts), so
 * that this module imports no dialect's types.
 */
export type Values<T, S extends Storage> = { data: T; driverData: DriverData<S> };

/** The options of a blind-index column: an encrypted column's, without storage. */
export type BlindIndexOptions = Omit<ColumnOptionsBase, 'storage'> & (OnKeyRing | OnTenantKeys);

/**
 * The builder each dialect's customType() makes for a column `TName`
 * holding T in storage S, by dialect name: Drizzle infers row types from it.
 * Empty here; each dialect module adds its own entry (module augmentation),
 * so that an app that loads one dialect loads no other dialect's types.
 */
// eslint-disable-next-line @typescript-eslint/no-unused-vars
export interface Builders<TName extends string, V extends ColumnValues> {}
/** What a column's customType() config says of its values (Values below). */
export type ColumnValues = { data: unknown; driverData: unknown };
/** The builder of dialect `D` for a column `TName` holding T in storage S. */
export type BuilderOf<D extends string, TName extends string, T, S extends Storage> = D extends keyof Builders<TName, Values<T, S>> ? Builders<TName, Values<T, S>>[D] : never;

/** The SQL types a dialect declares: envelopes as text, as bytes, and blind indexes. */
export interface SqlTypes {
  text: string;
  binary: string;
  index: string;
  /**
   * The bytes of a binary cell that the driver hands over as text, where
   * the dialect has such a form (PostgreSQL's `\x…`); undefined for any
   * other text, which the column reads as text.
   */
  binaryText?: (text: string) => Uint8Array | undefined;
}

/** A column's value mappers; what the driver hands back depends on the driver, so it is checked at run time. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Mappers<T> = { toDriver: (value: T) => unknown; fromDriver: (stored: any) => T };

/** The part of a dialect's customType() the factory uses; `column()` below types each column's values. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type CustomType = (params: { dataType: () => string; toDriver: (value: any) => unknown; fromDriver: (stored: any) => unknown }) => (name: string) => unknown;

/**
 * The columns, batch helpers and tenant key store of one dialect, over its
 * `customType`; `keyTable` is its key table, `search` how it stores and finds
 * search tokens. The column builders come back untyped: each dialect module
 * gives them its own builder types.
 */
export function dialect<D extends string>(customType: CustomType, sqlType: SqlTypes, transact: Transact, keyTable: KeyTableSpec, search: SearchSql, jobs?: JobTableSpec) {
  const column = <T>(name: string, type: string, toDriver: Mappers<T>['toDriver'], fromDriver: Mappers<T>['fromDriver']): unknown =>
    customType({ dataType: () => type, toDriver, fromDriver })(name);
  /** An encrypted column: its mappers, and its ColumnInfo when asked with COLUMN_PROBE. */
  const encrypted = <T>(name: string, info: ColumnInfo, mappers: Mappers<T>) => {
    const toDriver = (value: T) => ((value as unknown) === COLUMN_PROBE ? info : mappers.toDriver(value));
    if (info.storage !== 'binary') return column<T>(name, sqlType.text, toDriver, mappers.fromDriver);
    const { binaryText } = sqlType;
    const fromDriver = binaryText === undefined ? mappers.fromDriver : (stored: unknown) => mappers.fromDriver(typeof stored === 'string' ? (binaryText(stored) ?? stored) : stored);
    return column<T>(name, sqlType.binary, toDriver, fromDriver);
  };
  const infoOf = (codec: FieldCodec, storage: Storage, kind: ColumnInfo['kind']): ColumnInfo => ({ storage, kind, collection: codec.collection, field: codec.field, tenant: codec.fixedTenant, keys: codec.keys, sealer: codec.sealer });
  /** A search or range index column's fromDriver: a StoredIndex of where it was read, refused on writing when the driver rounded its tokens. */
  const readIndex = (site: IndexSite) => (stored: unknown) => new StoredIndex(search.read(stored), search.exact?.(stored) === false ? roundedAt(site) : originAt(site));
  const typed = <T extends RangeType>(name: string, options: EncryptedColumnOptions, type: T) => {
    const codec = fieldCodec(name, options);
    const storage = storageOf(options, name);
    return encrypted<RangeValues[T]>(name, infoOf(codec, storage, type), rangeMappers(codec, storage, type));
  };
  return {
    /**
     * A string column stored as an envelope bound to tenant:collection:field:
     * text by default, bytes with `storage: 'binary'`.
     */
    encryptedText<TName extends string, S extends Storage = 'text'>(name: TName, options: EncryptedColumnOptions & { storage?: S }): BuilderOf<D, TName, string, S> {
      const codec = fieldCodec(name, options);
      const storage = storageOf(options, name);
      return encrypted<string>(name, infoOf(codec, storage, 'text'), textMappers(codec, storage)) as BuilderOf<D, TName, string, S>;
    },
    /**
     * A value of type T, serialised as JSON and then encrypted; `storage` as
     * for encryptedText. (With T given, TypeScript cannot infer S, so the
     * driver type is `string | Uint8Array`; the row type is T either way.)
     */
    encryptedJson<T, TName extends string = string, S extends Storage = Storage>(name: TName, options: EncryptedColumnOptions & { storage?: S }): BuilderOf<D, TName, T, S> {
      const codec = fieldCodec(name, options);
      const storage = storageOf(options, name);
      return encrypted<T>(name, infoOf(codec, storage, 'json'), jsonMappers<T>(codec, storage)) as BuilderOf<D, TName, T, S>;
    },
    /** A number (finite), encrypted as its decimal text; `storage` as for encryptedText. Index it with a rangeIndexColumn of type 'number'. */
    encryptedNumber<TName extends string, S extends Storage = 'text'>(name: TName, options: EncryptedColumnOptions & { storage?: S }): BuilderOf<D, TName, number, S> {
      return typed(name, options, 'number') as BuilderOf<D, TName, number, S>;
    },
    /** A bigint (signed 64-bit), encrypted as its decimal text; `storage` as for encryptedText. Index it with a rangeIndexColumn of type 'bigint'. */
    encryptedBigint<TName extends string, S extends Storage = 'text'>(name: TName, options: EncryptedColumnOptions & { storage?: S }): BuilderOf<D, TName, bigint, S> {
      return typed(name, options, 'bigint') as BuilderOf<D, TName, bigint, S>;
    },
    /** A Date (a date or a timestamp, to the millisecond), encrypted as its ISO text; `storage` as for encryptedText. Index it with a rangeIndexColumn of type 'date'. */
    encryptedDate<TName extends string, S extends Storage = 'text'>(name: TName, options: EncryptedColumnOptions & { storage?: S }): BuilderOf<D, TName, Date, S> {
      return typed(name, options, 'date') as BuilderOf<D, TName, Date, S>;
    },
    /**
     * A keyed blind index kept beside an encrypted column: write the same
     * plaintext to both, then `where(eq(table.emailIndex, 'a@b.c'))` finds the
     * row without decrypting anything (the comparison value is hashed the same
     * way, under the primary key). During a key rotation, use
     * `matchBlindIndex(table.emailIndex, 'a@b.c')`, which also matches indexes
     * written under a previous key. Use the encrypted column's collection and field.
     *
     * A row read back holds a StoredIndex in this column, not a string:
     * `db.update(t).set({ ...row, name })` writes it back unchanged, so a
     * saved document keeps matching its lookups. Write a string to index a
     * new plaintext.
     */
    blindIndexColumn<TName extends string>(name: TName, options: BlindIndexOptions): BuilderOf<D, TName, string | StoredIndex, 'text'> {
      if ((options as EncryptedColumnOptions)?.storage !== undefined) {
        throw codedError('ALE_INVALID_INPUT', `blind index column "${name}": a blind index is stored as text; storage applies to encrypted columns`);
      }
      const codec = fieldCodec(options.field ?? name, options);
      const site = indexSite(codec, name, 'blind index');
      // A StoredIndex read back from a row goes back as it is: hashing it again would break the row's lookups.
      const toDriver = (value: string | StoredIndex) => ((value as unknown) === CODEC_PROBE ? codec : (storedFor(value, site) ?? codec.blindIndex(value as string)));
      return column<string | StoredIndex>(name, sqlType.index, toDriver, (stored: string) => new StoredIndex(stored, originAt(site))) as BuilderOf<D, TName, string | StoredIndex, 'text'>;
    },
    /**
     * The search tokens of an encrypted text column, kept beside it as a
     * blind index is: write the same plaintext to both, then find rows with
     * searchContains(), searchPrefix() and searchWords(), and take exact
     * pages with searchPage() (docs/search.md). Use the encrypted column's
     * collection and field. Like a blind index, a row read back holds a
     * StoredIndex here, which writes back unchanged.
     */
    searchIndexColumn<TName extends string>(name: TName, options: SearchIndexOptions): BuilderOf<D, TName, string | StoredIndex, 'text'> {
      const codec = searchCodec(name, options);
      const answer: SearchColumn = { codec, sql: search };
      // Where the column stores words (FTS5, FULLTEXT), the addon writes them with the tokens (searchTokenText, wordText's text): no Buffer, no loop over its bytes here.
      const tokensOf = search.store === storeWords ? (value: string) => codec.tokenText(value) : (value: string) => search.store(codec.tokens(value), codec);
      const toDriver = (value: string | StoredIndex) => ((value as unknown) === SEARCH_PROBE ? answer : (storedFor(value, codec.site) ?? tokensOf(value as string)));
      return column<string | StoredIndex>(name, search.type, toDriver, readIndex(codec.site)) as BuilderOf<D, TName, string | StoredIndex, 'text'>;
    },
    /**
     * The range index of an encryptedNumber, encryptedBigint or
     * encryptedDate column, kept beside it as a search index is: write the
     * same value to both, then find rows with rangeGt() … rangeBetween()
     * and order them exactly with orderedPage() (docs/search.md, "Ranges
     * and order"). `type` is the encrypted column's. A row read back holds a
     * StoredIndex here, which writes back unchanged.
     */
    rangeIndexColumn<TName extends string, T extends RangeType>(name: TName, options: RangeIndexOptions<T>): BuilderOf<D, TName, RangeValues[T] | StoredIndex, 'text'> {
      const codec = rangeCodec(name, options, search.spots, search.tokenTables === true);
      const answer: SearchColumn = { codec, sql: search };
      const toDriver = (value: RangeValues[T] | StoredIndex) => ((value as unknown) === SEARCH_PROBE ? answer : (storedFor(value, codec.site) ?? search.store(codec.tokens(value), codec)));
      return column<RangeValues[T] | StoredIndex>(name, search.type, toDriver, readIndex(codec.site)) as BuilderOf<D, TName, RangeValues[T] | StoredIndex, 'text'>;
    },
    ...batchHelpers(transact, jobs),
    reindexSearch: searchReindexer(transact, jobs),
    searchLeakage: leakageReporter(transact),
    convertToTenantKeys: tenantConversion(transact, jobs),
    /**
     * The tenant key store of `db`: each tenant's data and index keys, wrapped
     * by `options.kek`, in the key table (default `ale_keys`; `await
     * keys.ready()` creates it). Columns opt in with `keys: store`.
     *
     * In a schema module, declare it with neither: `tenantKeys()` or
     * `tenantKeys({ table })`; importing the schema then needs no database
     * and no secret (`vite build`), and `drizzle(client, { schema })` is not
     * circular. Give both at start-up: `keys.bind(db, { kek })`.
     */
    tenantKeys: tenantKeysFactory(keyTable),
  };
}

/** tenantKeys(db, options), or tenantKeys(options) for a store declared before its database exists. */
function tenantKeysFactory(keyTable: KeyTableSpec) {
  function tenantKeys(options?: TenantKeysOptions): TenantKeys;
  function tenantKeys(db: { select: unknown } | undefined, options?: TenantKeysOptions): TenantKeys;
  function tenantKeys(first?: unknown, second?: TenantKeysOptions): TenantKeys {
    // A Drizzle database has select(); an options object does not.
    const declared = second === undefined && (first === undefined || typeof (first as { select?: unknown })?.select !== 'function');
    if (declared && first !== undefined && (typeof first !== 'object' || first === null)) {
      throw codedError('ALE_INVALID_INPUT', 'tenantKeys: pass a Drizzle database and options, or options alone');
    }
    return declared ? new TenantKeys(undefined, keyTable, first as TenantKeysOptions | undefined) : new TenantKeys(first, keyTable, second);
  }
  return tenantKeys;
}

/**
 * A condition matching `value`'s blind index under every key of the column's
 * ring (primary and previous), in the current tenant scope:
 *
 *   db.select().from(users).where(matchBlindIndex(users.emailIndex, 'a@x.com'))
 *
 * The indexes are bound as they are: `inArray(users.emailIndex, ring.blindIndexes(…))`
 * would pass each through the column, which hashes it again and matches
 * nothing. A column on the process-wide ring (no `keyRing` option) matches
 * under each of its secrets (`blindIndexes`).
 */
export function matchBlindIndex(column: Column, value: string | StoredIndex): SQL {
  const codec = codecOf(column);
  if (is(value, Placeholder)) {
    // Its indexes are made now, under the tenant in scope; a placeholder's value comes only when the statement runs.
    throw codedError('ALE_INVALID_INPUT', `matchBlindIndex(${column.name}): a placeholder's value reaches the database unhashed when a prepared statement runs; build the condition with the value at each call`);
  }
  // As `eq` does through the column: a StoredIndex of another tenant or index would match nothing here, and throws.
  const stored = storedFor(value, indexSite(codec, column.name, 'blind index'));
  if (stored !== undefined) return sql`${column} = ${stored}`;
  return sql`${column} in ${codec.blindIndexes(value as string)}`;
}
