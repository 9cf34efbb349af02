// The tenant scope: withTenant() loads the tenant's keys where columns need
// them, then runs `fn` with the tenant that encrypted columns bind their
// values to, across `await`.
import { codedError } from '../shared/errors.js';
import { keyLoads } from './key-stores.js';
import { state } from './state.js';

/**
 * Runs `fn` with `tenantId` as the tenant of every encrypted column that has
 * no `tenant` option, and returns a Promise of its result. The scope
 * follows `await`, so `fn` may be async.
 *
 * First it loads the tenant's keys in every key store a `keys` column names
 * (single-flight: concurrent calls share one read; at once when they are in
 * memory and fresh), so a query inside works on every column, with or
 * without `keys`. `fn` runs once they are loaded.
 *
 * Drizzle queries are lazy: `withTenant(t, () => db.select().from(users))`
 * returns a query that only runs when awaited, after `fn` has returned. So a
 * thenable result is subscribed to inside the scope, which starts the query
 * there.
 */
export function withTenant<T>(tenantId: string, fn: () => T): Promise<Awaited<T>> {
  if (typeof tenantId !== 'string' || tenantId === '' || tenantId.includes(':') || /\p{Cs}/u.test(tenantId)) {
    return Promise.reject(codedError('ALE_INVALID_CONTEXT', "withTenant: the tenant id must be a non-empty string without ':', of well-formed UTF-16 (no lone surrogate)"));
  }
  const run = () => state.tenantScope.run(tenantId, () => startInScope(fn));
  let loads: Promise<void>[];
  try {
    loads = keyLoads(tenantId);
  } catch (error) {
    // a tenant id a store refuses (longer than its key table holds)
    return Promise.reject(error);
  }
  // The loads never reject: a store that fails to load (its database down
  // or closed, its KEK unreachable) fails only a query that needs its keys,
  // and then with the load's error (ScopeKeys.keysFor).
  return loads.length === 0 ? run() : Promise.all(loads).then(run);
}

/**
 * Calls `fn` and returns a Promise of its result; when it returns a thenable
 * (a lazy Drizzle query), subscribes to it right away, so the query starts
 * inside the caller's scope. A throw from `fn` rejects the Promise.
 */
export function startInScope<T>(fn: () => T): Promise<Awaited<T>> {
  try {
    const result = fn();
    if (result !== null && typeof result === 'object' && typeof (result as { then?: unknown }).then === 'function') {
      const thenable = result as unknown as PromiseLike<Awaited<T>>;
      return new Promise((resolve, reject) => thenable.then(resolve, reject));
    }
    return Promise.resolve(result as Awaited<T>);
  } catch (error) {
    return Promise.reject(error);
  }
}

/** The tenant of the current withTenant() scope, if any. */
export function currentTenant(): string | undefined {
  return state.tenantScope.getStore();
}
