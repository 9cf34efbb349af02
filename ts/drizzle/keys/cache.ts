// The loaded tenants: a bounded map with second-chance eviction, and a
// coarse clock the hot path reads instead of calling Date.now() per value.
import type { KeyRing } from '../../../index.js';

/** One tenant in memory: its ring, or the fact that it was shredded. */
export interface Entry {
  /** The tenant's data keys (active first) with their ids, and its index key; undefined once shredded. */
  ring: KeyRing | undefined;
  /** The ids in `ring`, active first. */
  keyIds: string[];
  /** Set by every use; cleared when eviction passes over it once. */
  used: boolean;
  /** Clock time after which a use re-reads the tenant's rows. */
  staleAt: number;
  /** The newest `updated_at` among the rows it was built from. */
  seen: number;
  /** The settled load that made it, returned by load() while it is fresh. */
  ready: Promise<void>;
}

/**
 * Milliseconds, advanced by one unref'd timer every CLOCK_STEP ms, so a
 * freshness check is a comparison. Its error is at most one step.
 */
export const clock = { now: Date.now() };
const CLOCK_STEP = 100;
let ticking: ReturnType<typeof setInterval> | undefined;

/** Starts the clock once per process; it never keeps the process alive. */
export function startClock(): void {
  if (ticking) return;
  clock.now = Date.now();
  ticking = setInterval(() => (clock.now = Date.now()), CLOCK_STEP);
  ticking.unref?.();
}

/**
 * At most `limit` entries. Adding one past the limit evicts the oldest entry
 * not used since eviction last passed it (second chance), so a busy tenant
 * stays. An evicted ring is dropped: the addon wipes its keys when the
 * garbage collector frees it, the JS backend when it drops the KeyObjects.
 */
export class TenantCache {
  readonly #entries = new Map<string, Entry>();

  constructor(readonly limit: number) {}

  get size(): number {
    return this.#entries.size;
  }

  get(tenant: string): Entry | undefined {
    return this.#entries.get(tenant);
  }

  set(tenant: string, entry: Entry): void {
    if (!this.#entries.delete(tenant)) this.#makeRoom();
    this.#entries.set(tenant, entry);
  }

  delete(tenant: string): void {
    this.#entries.delete(tenant);
  }

  tenants(): IterableIterator<[string, Entry]> {
    return this.#entries.entries();
  }

  #makeRoom(): void {
    // Each pass either evicts or clears one `used` bit, so this ends within 2 × size steps.
    while (this.#entries.size >= this.limit) {
      const [tenant, entry] = this.#entries.entries().next().value as [string, Entry];
      this.#entries.delete(tenant);
      if (entry.used) {
        entry.used = false;
        this.#entries.set(tenant, entry);
      }
    }
  }
}
