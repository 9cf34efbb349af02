// '@sveltycms/ale/drizzle': what every dialect shares.
export { withTenant, currentTenant, legacyPlaintextReads, readWithFailures, fieldCodec, AleColumnError, AleReadFailure } from './core.js';
export type { EncryptedColumnOptions, FieldCodec, Progress, ColumnSpec, TenantSource, BatchOptions, RowFailure } from './core.js';
