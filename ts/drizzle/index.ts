// '@sveltycms/ale/drizzle': what every dialect shares; each dialect module re-exports all of it.
export { withTenant, currentTenant, legacyPlaintextReads, readWithFailures, fieldCodec, AleColumnError, AleReadFailure } from './core.js';
export type { EncryptedColumnOptions, FieldCodec, InScope, Progress, ColumnSpec, TenantSource, BatchOptions, LoopOptions, RowFailure, Storage } from './core.js';
export type { MigrateOptions, ConvertOptions, StoragePair } from './batch.js';
export { matchBlindIndex } from './dialect.js';
