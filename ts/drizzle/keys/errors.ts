// The tenant key store's coded errors. Messages name tenants and key ids,
// which are not secret, and never a key, a wrapped key or a value.
import { codedError, type CodedError, type ErrorCode } from '../../shared/errors.js';
import { describeDatabaseError, isDatabaseError } from '../database-errors.js';

/** A column that uses `keys` ran for a tenant whose keys are not in memory. */
export const keyNotLoaded = (tenant: string): CodedError =>
  codedError(
    'ALE_KEY_NOT_LOADED',
    `the keys of tenant ${JSON.stringify(tenant)} are not loaded: run the query inside withTenant(${JSON.stringify(tenant)}, () => ...), ` +
      `which loads them, or await keys.load(${JSON.stringify(tenant)}) first (keys being the store tenantKeys() returned)`,
  );

/**
 * A column that uses `keys` ran for a tenant whose last load, by
 * withTenant(), failed: the load's own error when it has an ALE_* code (the
 * KEK unreachable or refusing), else ALE_KEY_NOT_LOADED saying why.
 */
export const loadFailed = (tenant: string, cause: unknown): CodedError => {
  const known = packageError(cause);
  if (known) return known;
  const error = codedError('ALE_KEY_NOT_LOADED', `the keys of tenant ${JSON.stringify(tenant)} could not be loaded: ${describeDatabaseError(cause)}`);
  // A query's error is not attached: it holds the query's parameters, the wrapped keys of an insert among them. Another (a KEK provider's own) is.
  return isDatabaseError(cause) ? error : Object.assign(error, { cause });
};

/**
 * What the store's other operations reject with when the database fails
 * them: the package's own coded errors as they are, the database's as
 * ALE_KEY_TABLE_FAILED, in the driver's words and with its codes, but not
 * the query's parameters (wrapped keys, KEK references), nor the error.
 */
export const keyTableFailed = (cause: unknown): unknown =>
  packageError(cause) ??
  (isDatabaseError(cause) ? codedError('ALE_KEY_TABLE_FAILED', `a query of the tenant key store failed in the database: ${describeDatabaseError(cause)}`) : cause);

/** `run()`, whose database failures reject as ALE_KEY_TABLE_FAILED, without the query's parameters (errors.ts), and whose throws reject too. */
export const reported = <T>(run: () => Promise<T>): Promise<T> =>
  Promise.resolve()
    .then(run)
    .catch((e: unknown) => {
      throw keyTableFailed(e);
    });

/** `e` when it is an error of the package's own (an ALE_* code). */
function packageError(e: unknown): CodedError | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return e instanceof Error && typeof code === 'string' && code.startsWith('ALE_') ? (e as CodedError) : undefined;
}

/** What a column's use of a tenant not in memory throws: why its last load failed, if one did (`failures`, by tenant). */
export function notLoaded(tenant: string, failures: ReadonlyMap<string, unknown>): CodedError {
  if (!failures.has(tenant)) return keyNotLoaded(tenant);
  return loadFailed(tenant, failures.get(tenant));
}

/** A seal under keys not found in the key table for `ageMs`, too long. */
export const unconfirmed = (tenant: string, ageMs: number): CodedError =>
  codedError(
    'ALE_KEY_NOT_LOADED',
    `the keys of tenant ${JSON.stringify(tenant)} were last read from the key table ${Math.round(ageMs / 1000)} s ago, ` +
      'and another process may have retired and destroyed the active one since, so nothing is sealed under them until they are read again. ' +
      `Run the write inside withTenant(${JSON.stringify(tenant)}, () => ...) or after await keys.load(${JSON.stringify(tenant)}), which read them first`,
  );

/** A shred whose marks the key table does not show back: the store's database reads from elsewhere (a replica) than it writes to. */
export const shredUnseen = (tenant: string): CodedError =>
  codedError(
    'ALE_INVALID_INPUT',
    `shred of tenant ${JSON.stringify(tenant)}: the key table still shows a key of the tenant after every row was marked shredded, several times; ` +
      "are the store's reads sent to a replica that lags? Give tenantKeys the primary's connection, and run shred() again",
  );

/** The tenant's keys were destroyed. */
export const keyShredded = (tenant: string): CodedError =>
  codedError('ALE_KEY_SHREDDED', `tenant ${JSON.stringify(tenant)} was shredded: its keys are destroyed, and its values can no longer be read or written`);

/** A wrapped key names a KEK that the store was not given. */
export const kekNotHeld = (tenant: string, keyId: string, ref: string): CodedError =>
  codedError(
    'ALE_INVALID_KEY',
    `key ${keyId} of tenant ${JSON.stringify(tenant)} is wrapped under KEK ${JSON.stringify(ref)}, which this store does not hold; ` +
      'give tenantKeys every KEK still in use: { kek: [current, ...previous] }',
  );

/** A wrapped key that does not unwrap under the KEK it names. */
export const unwrapFailed = (tenant: string, keyId: string, ref: string): CodedError =>
  codedError(
    'ALE_AUTH_FAILED',
    `key ${keyId} of tenant ${JSON.stringify(tenant)} did not unwrap under KEK ${JSON.stringify(ref)}: the KEK is not the one that wrapped it, ` +
      'or the row was altered or copied from another tenant, key or purpose',
  );

/**
 * Rows whose encryption count is no number: the table lacks the column (an
 * earlier version made it, and ready() has not run), which Bun's SQLite
 * reads as its name instead of failing; rotation by count would be off.
 */
export const countsUnreadable = (tenant: string): CodedError =>
  codedError(
    'ALE_KEY_TABLE_FAILED',
    `the key table gave tenant ${JSON.stringify(tenant)}'s keys no encryption count: it lacks the "encryptions" column (made by an earlier version); run keys.ready(), which adds it`,
  );

/** Key rows that cannot make a usable set: no data key, or no index key. */
export const incompleteKeys = (tenant: string, missing: string): CodedError =>
  codedError('ALE_INVALID_KEY', `the key table holds no ${missing} for tenant ${JSON.stringify(tenant)}, yet other keys of it exist; restore the table from a backup`);

/**
 * A seal for a tenant whose new active key this process could not unwrap
 * (cache.ts, `sealRefused`), with the unwrap's message, which names no key.
 * Its code is ALE_INVALID_KEY for a KEK this store does not hold, else
 * ALE_KEK_UNAVAILABLE: an unwrap the key service refused comes back as
 * ALE_AUTH_FAILED, the code of a tampered value, which a seal is not.
 */
export function sealRefused(tenant: string, refused: { code: string; message: string }): CodedError {
  const code: ErrorCode = refused.code === 'ALE_INVALID_KEY' ? 'ALE_INVALID_KEY' : 'ALE_KEK_UNAVAILABLE';
  return codedError(
    code,
    `tenant ${JSON.stringify(tenant)} has a new active key in the key table (a rotation), whose keys this process could not unwrap, so nothing is sealed ` +
      `under its old one, which can be destroyed once no stored value needs it; values under the keys this process holds still open, and the keys are read again as they are used. The unwrap failed: ${refused.message}`,
  );
}
