// Encrypted column types for drizzle-orm/pg-core.
import { customType } from 'drizzle-orm/pg-core';
import { fieldCodec, jsonCodec, type EncryptedColumnOptions } from './core.js';
import { batchHelpers, asyncTransact } from './batch.js';

export { withTenant, currentTenant, legacyPlaintextReads, readWithFailures, AleColumnError, AleReadFailure } from './core.js';
export type { EncryptedColumnOptions, Progress, ColumnSpec, TenantSource, RowFailure } from './core.js';
export type { MigrateOptions } from './batch.js';

/** A string column stored as a v1 envelope bound to tenant:collection:field. SQL type 'text'. */
export function encryptedText<TName extends string>(name: TName, options: EncryptedColumnOptions) {
  const codec = fieldCodec(name, options);
  return customType<{ data: string; driverData: string }>({
    dataType: () => 'text',
    toDriver: (value) => codec.encrypt(value),
    fromDriver: (stored) => codec.decrypt(stored),
  })(name);
}

/** A value of type T, serialised as JSON and then encrypted. SQL type 'text'. */
export function encryptedJson<T, TName extends string = string>(name: TName, options: EncryptedColumnOptions) {
  const json = jsonCodec<T>(fieldCodec(name, options));
  return customType<{ data: T; driverData: string }>({
    dataType: () => 'text',
    toDriver: json.toDriver,
    fromDriver: json.fromDriver,
  })(name);
}

/**
 * A keyed blind index kept beside an encrypted column: write the same
 * plaintext to both, then `where(eq(table.emailIndex, 'a@b.c'))` finds the row
 * without decrypting anything (the comparison value is hashed the same way).
 * Use the encrypted column's collection and field. SQL type 'char(43)'.
 */
export function blindIndexColumn<TName extends string>(name: TName, options: EncryptedColumnOptions) {
  const codec = fieldCodec(options.field ?? name, options);
  return customType<{ data: string; driverData: string }>({
    dataType: () => 'char(43)',
    toDriver: (value) => codec.blindIndex(value),
    fromDriver: (stored) => stored,
  })(name);
}

export const { migratePlaintext, rotateKeys } = batchHelpers(asyncTransact);
