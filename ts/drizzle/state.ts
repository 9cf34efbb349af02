// The Drizzle layer's per-process state, shared between the ESM and the
// CommonJS build.
import { AsyncLocalStorage } from 'node:async_hooks';
import { ColumnError, ReadFailure } from './errors.js';

/** A readWithFailures() or searchPage() read in progress: how many cells in it became AleReadFailures. */
export interface FailureScope {
  failed: number;
}

/**
 * What must exist once per process even when an app loads both the ESM and
 * the CommonJS build: the tenant and failure scopes, the legacy-read
 * counters, and the classes that `instanceof` tests across the two builds.
 * The first build loaded creates it; a change of its shape needs a new key.
 */
interface SharedState {
  tenantScope: AsyncLocalStorage<string>;
  failureScope: AsyncLocalStorage<FailureScope>;
  legacyReads: Map<string, number>;
  AleColumnError: typeof ColumnError;
  AleReadFailure: typeof ReadFailure;
}
export const state: SharedState = ((globalThis as { [key: symbol]: SharedState })[Symbol.for('@sveltycms/ale/drizzle-state@2')] ??= {
  tenantScope: new AsyncLocalStorage<string>(),
  failureScope: new AsyncLocalStorage<FailureScope>(),
  legacyReads: new Map(),
  AleColumnError: ColumnError,
  AleReadFailure: ReadFailure,
});
