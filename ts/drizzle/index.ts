// '@sveltycms/ale/drizzle': what every dialect shares; each dialect module re-exports all of it.
export { withTenant, currentTenant } from './scope.js';
export { legacyPlaintextReads } from './legacy.js';
export { readWithFailures, AleColumnError, AleReadFailure } from './failures.js';
export { fieldCodec } from './codec.js';
export type { InScope } from './scope.js';
export type { RowFailure } from './failures.js';
export type { EncryptedColumnOptions, FieldCodec, TenantSource } from './codec.js';
export type { Storage } from './storage.js';
export type { Progress, LoopOptions } from './operations.js';
export type { MigrateOptions, ConvertOptions, StoragePair, ColumnSpec, BatchOptions } from './batch.js';
export { matchBlindIndex } from './dialect.js';
export { localKek } from './keys/kek.js';
export { TenantKeys } from './keys/store.js';
export type { KekProvider, KekInput } from './keys/kek.js';
export type { TenantKeysOptions, TenantKeyInfo } from './keys/store.js';
export type { TenantConversionOptions, IndexSpec } from './keys/convert.js';
export type { KeyRow } from './keys/table.js';
