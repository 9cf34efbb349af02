// '@sveltycms/ale/drizzle': what every dialect shares.
export { withTenant, currentTenant, legacyPlaintextReads, fieldCodec, AleColumnError } from './core.js';
export type { EncryptedColumnOptions, FieldCodec, Progress, ColumnSpec, TenantSource, BatchOptions } from './core.js';
