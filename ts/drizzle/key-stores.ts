// The key stores withTenant() loads a tenant's keys from: every store a
// `keys` column names, or whose own withTenant() was called. Held weakly,
// and shared by the ESM and the CommonJS build, as the tenant scope is,
// under a key of its own, apart from state.ts's.

/** What withTenant() asks of a key store. */
export interface ScopeKeys {
  /**
   * The load of the tenant's keys, or undefined when there is nothing to
   * wait for. It never rejects: a failed load is what the store's columns
   * then throw for the tenant, in place of ALE_KEY_NOT_LOADED.
   */
  keysFor(tenantId: string): Promise<void> | undefined;
}

interface Registry {
  refs: Set<WeakRef<ScopeKeys>>;
  seen: WeakSet<ScopeKeys>;
}

const registry: Registry = ((globalThis as { [key: symbol]: Registry })[Symbol.for('@sveltycms/ale/drizzle-key-stores')] ??= {
  refs: new Set(),
  seen: new WeakSet(),
});

/** Adds `store` to the stores withTenant() loads from (once), and lets go of stores collected since. */
export function useStore(store: ScopeKeys): void {
  if (registry.seen.has(store)) return;
  for (const ref of registry.refs) if (ref.deref() === undefined) registry.refs.delete(ref);
  registry.seen.add(store);
  registry.refs.add(new WeakRef(store));
}

/** The loads withTenant(tenantId) waits for: one per store whose keys of the tenant are not in memory and fresh. */
export function keyLoads(tenantId: string): Promise<void>[] {
  const loads: Promise<void>[] = [];
  for (const ref of registry.refs) {
    const store = ref.deref();
    if (store === undefined) {
      registry.refs.delete(ref);
      continue;
    }
    const load = store.keysFor(tenantId);
    if (load !== undefined) loads.push(load);
  }
  return loads;
}
