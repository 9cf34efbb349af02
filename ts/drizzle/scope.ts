// The tenant scope: withTenant() sets the tenant that encrypted columns bind
// their values to, for everything `fn` runs, across `await`.
import { codedError } from '../shared/errors.js';
import { state } from './state.js';

/** What withTenant() returns for `fn`'s result: a thenable (a lazy query) becomes a Promise of its result. */
export type InScope<T> = T extends PromiseLike<unknown> ? Promise<Awaited<T>> : T;

/**
 * Runs `fn` with `tenantId` as the tenant of every encrypted column that has
 * no `tenant` option. The scope follows `await`, so `fn` may be async.
 *
 * Drizzle queries are lazy: `withTenant(t, () => db.select().from(users))`
 * returns a query that only runs when awaited, after `fn` has returned. So a
 * thenable result is subscribed to inside the scope, which starts the query
 * there, and a promise of its result is returned.
 */
export function withTenant<T>(tenantId: string, fn: () => T): InScope<T> {
  if (typeof tenantId !== 'string' || tenantId === '' || tenantId.includes(':') || /\p{Cs}/u.test(tenantId)) {
    throw codedError('ALE_INVALID_CONTEXT', "withTenant: the tenant id must be a non-empty string without ':', of well-formed UTF-16 (no lone surrogate)");
  }
  return state.tenantScope.run(tenantId, () => startInScope(fn));
}

/**
 * Calls `fn`; when it returns a thenable (a lazy Drizzle query), subscribes
 * to it right away, so the query starts inside the caller's scope.
 */
export function startInScope<T>(fn: () => T): InScope<T> {
  const result = fn();
  if (result !== null && typeof result === 'object' && typeof (result as { then?: unknown }).then === 'function') {
    const thenable = result as unknown as PromiseLike<unknown>;
    return new Promise((resolve, reject) => thenable.then(resolve, reject)) as InScope<T>;
  }
  return result as InScope<T>;
}

/** The tenant of the current withTenant() scope, if any. */
export function currentTenant(): string | undefined {
  return state.tenantScope.getStore();
}
