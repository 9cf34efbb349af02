// One factory for the three dialect modules: the encrypted column types over
// a dialect's customType(), and the batch helpers over its transactions.
import { sql, type Column, type SQL } from 'drizzle-orm';
import type { ConvertCustomConfig as MySqlConfig, MySqlCustomColumnBuilder } from 'drizzle-orm/mysql-core';
import type { ConvertCustomConfig as PgConfig, PgCustomColumnBuilder } from 'drizzle-orm/pg-core';
import type { ConvertCustomConfig as SQLiteConfig, SQLiteCustomColumnBuilder } from 'drizzle-orm/sqlite-core';
import { batchHelpers, type Transact } from './batch.js';
import { fieldCodec, jsonCodec, type EncryptedColumnOptions, type FieldCodec } from './core.js';

type Values<T> = { data: T; driverData: string };

/** What each dialect's customType() builds for a column `TName` holding T; Drizzle infers row types from it. */
export interface ColumnBuilders<TName extends string, T> {
  sqlite: SQLiteCustomColumnBuilder<SQLiteConfig<TName, Values<T>>>;
  pg: PgCustomColumnBuilder<PgConfig<TName, Values<T>>>;
  mysql: MySqlCustomColumnBuilder<MySqlConfig<TName, Values<T>>>;
}
export type Dialect = keyof ColumnBuilders<string, unknown>;

/** The part of a dialect's customType() the factory uses; `column()` below types each column's values. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type CustomType = (params: { dataType: () => string; toDriver: (value: any) => string; fromDriver: (stored: any) => unknown }) => (name: string) => unknown;

/**
 * Asked through a blind-index column's public `mapToDriverValue`, its
 * `toDriver` answers with its codec: that is how matchBlindIndex() finds the
 * column's ring and context (of either build, hence Symbol.for).
 */
const CODEC_PROBE = Symbol.for('@sveltycms/ale/codec-probe');

/**
 * The columns and batch helpers of one dialect. `D` names the dialect whose
 * `customType` is passed, so that the column builders keep Drizzle's types.
 */
export function dialect<D extends Dialect>(customType: CustomType, sqlType: { text: string; index: string }, transact: Transact) {
  const column = <T, TName extends string>(name: TName, type: string, toDriver: (value: T) => string, fromDriver: (stored: string) => T) =>
    customType({ dataType: () => type, toDriver, fromDriver })(name) as ColumnBuilders<TName, T>[D];
  return {
    /** A string column stored as an envelope bound to tenant:collection:field. */
    encryptedText<TName extends string>(name: TName, options: EncryptedColumnOptions) {
      const codec = fieldCodec(name, options);
      return column<string, TName>(name, sqlType.text, (value) => codec.encrypt(value), (stored) => codec.decrypt(stored));
    },
    /** A value of type T, serialised as JSON and then encrypted. */
    encryptedJson<T, TName extends string = string>(name: TName, options: EncryptedColumnOptions) {
      const json = jsonCodec<T>(fieldCodec(name, options));
      return column<T, TName>(name, sqlType.text, json.toDriver, json.fromDriver);
    },
    /**
     * A keyed blind index kept beside an encrypted column: write the same
     * plaintext to both, then `where(eq(table.emailIndex, 'a@b.c'))` finds the
     * row without decrypting anything (the comparison value is hashed the same
     * way, under the primary key). During a key rotation, use
     * `matchBlindIndex(table.emailIndex, 'a@b.c')`, which also matches indexes
     * written under a previous key. Use the encrypted column's collection and field.
     */
    blindIndexColumn<TName extends string>(name: TName, options: EncryptedColumnOptions) {
      const codec = fieldCodec(options.field ?? name, options);
      const toDriver = (value: string) => ((value as unknown) === CODEC_PROBE ? (codec as unknown as string) : codec.blindIndex(value));
      return column<string, TName>(name, sqlType.index, toDriver, (stored) => stored);
    },
    ...batchHelpers(transact),
  };
}

/**
 * A condition matching `value`'s blind index under every key of the column's
 * ring (primary and previous), in the current tenant scope:
 *
 *   db.select().from(users).where(matchBlindIndex(users.emailIndex, 'a@x.com'))
 *
 * The indexes are bound as they are: `inArray(users.emailIndex, ring.blindIndexes(…))`
 * would pass each through the column, which hashes it again and matches
 * nothing. A column on the process-wide ring (no `keyRing` option) matches its
 * primary key's index only.
 */
export function matchBlindIndex(column: Column, value: string): SQL {
  return sql`${column} in ${codecOf(column).blindIndexes(value)}`;
}

function codecOf(column: Column): FieldCodec {
  let codec: unknown;
  try {
    codec = column.mapToDriverValue(CODEC_PROBE);
  } catch {
    // not a blind-index column: reported below
  }
  if (typeof codec !== 'object' || codec === null || typeof (codec as FieldCodec).blindIndexes !== 'function') {
    throw Object.assign(new TypeError('matchBlindIndex: the column is not a blindIndexColumn'), { code: 'ALE_INVALID_INPUT' });
  }
  return codec as FieldCodec;
}
