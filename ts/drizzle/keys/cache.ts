// The loaded tenants: a bounded map with second-chance eviction, and a
// coarse clock the hot path reads instead of calling Date.now() per value.
import type { KeyRow } from './table.js';

/** One tenant in memory: the ids of its keys in the store's ring of tenants, or the fact that it was shredded. */
export interface Entry {
  /** False once shredded: the ring of tenants holds nothing for it. */
  loaded: boolean;
  /** The ids of its data keys, active first (none once shredded). */
  keyIds: readonly string[];
  /** Set by every use; cleared when eviction passes over it once. */
  used: boolean;
  /** Clock time after which a use re-reads the tenant's rows. */
  staleAt: number;
  /** The newest `updated_at` among the rows it was built from. */
  seen: number;
  /** Clock time when a read of the key table last found its keys (before that read began). */
  confirmedAt: number;
  /** Values sealed under its active key (the first of keyIds) since its count was last taken. */
  sealed: number;
  /** Clock time of the last re-read forced by a value naming a key it lacks. */
  missedAt?: number;
  /**
   * Set when a re-read found another active data key in the key table (a
   * rotation elsewhere) and could not unwrap it, with that failure's code
   * and message: the keys held here still open values, but nothing is
   * sealed under them (keys/sealer.ts), since the old active key may be
   * destroyed once no stored value needs it. Cleared by a read that
   * succeeds, or that finds the keys held here again.
   */
  sealRefused?: { code: string; message: string };
  /** The last re-read found the rows and could not unwrap their keys (a KEK outage): the keys held here are kept. */
  unwrapsFailed?: boolean;
  /**
   * For a tenant whose keys this process created: its rows as last read,
   * written back when a read finds none of them (loading.ts, `tenantRows`),
   * as after a rollback of the transaction that created them, since values
   * may be sealed under these keys meanwhile. No read can tell rows
   * committed from rows seen inside that transaction, so this lasts the
   * entry's life (gone with forget, eviction, close, or a shred seen here),
   * and a shred's tombstones must be kept (SECURITY.md, "Shredding").
   */
  madeHere?: readonly KeyRow[];
}

/**
 * The longest a process seals under keys it has not found in the key table
 * since: destroyRetired's default retiredForMs is above it (admin.ts), and
 * a process re-reads a tenant in use every recheckAfterMs (at most
 * RECHECK_MAX_MS), which leaves that read time to come back.
 */
export const SEAL_CONFIRMED_WITHIN_MS = 90_000;
/** The largest recheckAfterMs: a re-read starts this long after the last, at most, well before its keys stop sealing. */
export const RECHECK_MAX_MS = 60_000;

/**
 * Milliseconds, advanced by one unref'd timer every CLOCK_STEP ms, so a
 * freshness check is a comparison. Its error is at most one step. Each
 * step adds the larger of what the monotonic clock and the wall clock
 * moved: a wall clock set back (NTP, a restored VM) moves no deadline
 * into the future, and time spent suspended, which the monotonic clock
 * may leave out, still counts.
 */
export const clock = { now: Date.now() };
const CLOCK_STEP = 100;
let ticking: ReturnType<typeof setInterval> | undefined;
let last = { mono: performance.now(), wall: Date.now() };

function tick(): void {
  const now = { mono: performance.now(), wall: Date.now() };
  clock.now += Math.max(now.mono - last.mono, now.wall - last.wall, 0);
  last = now;
}

/** Starts the clock once per process; it never keeps the process alive. */
export function startClock(): void {
  if (ticking) return;
  tick();
  ticking = setInterval(tick, CLOCK_STEP);
  ticking.unref?.();
}

/**
 * At most `limit` entries. Adding one past the limit evicts the oldest entry
 * not used since eviction last passed it (second chance), so a busy tenant
 * stays. `evicted` is told, so that the tenant's keys leave the ring of
 * tenants (the addon wipes them there at once; the JS backend drops its
 * KeyObjects).
 */
export class TenantCache {
  readonly #entries = new Map<string, Entry>();

  constructor(
    readonly limit: number,
    private readonly evicted: (tenant: string, entry: Entry) => void,
  ) {}

  get size(): number {
    return this.#entries.size;
  }

  #version = 0;

  /**
   * Moves on whenever an entry may have stopped being usable: one was set,
   * deleted or evicted, or an entry's staleAt was moved earlier (expire).
   * The sealer's memo of its last tenant is valid while it stays.
   */
  get version(): number {
    return this.#version;
  }

  // The last tenant looked up and its entry: a request's values are all
  // one tenant's, and comparing a string is cheaper than a Map lookup on a
  // path that runs once per value. Cleared by every change of the map
  // (set also evicts).
  #lastTenant: string | undefined;
  #lastEntry: Entry | undefined;

  get(tenant: string): Entry | undefined {
    if (tenant === this.#lastTenant) return this.#lastEntry;
    const entry = this.#entries.get(tenant);
    if (entry !== undefined) {
      this.#lastTenant = tenant;
      this.#lastEntry = entry;
    }
    return entry;
  }

  /** Every entry, oldest first. */
  values(): IterableIterator<Entry> {
    return this.#entries.values();
  }

  /** Every tenant in memory, oldest first. */
  tenants(): IterableIterator<string> {
    return this.#entries.keys();
  }

  /** Makes `entry` stale from `at` on (earlier than it was). */
  expire(entry: Entry, at: number): void {
    entry.staleAt = at;
    this.#version++;
  }

  set(tenant: string, entry: Entry): void {
    this.#forgetLast();
    if (!this.#entries.delete(tenant)) this.#makeRoom();
    this.#entries.set(tenant, entry);
  }

  delete(tenant: string): void {
    this.#forgetLast();
    this.#entries.delete(tenant);
  }

  #forgetLast(): void {
    this.#version++;
    this.#lastTenant = undefined;
    this.#lastEntry = undefined;
  }

  #makeRoom(): void {
    // Each pass either evicts or clears one `used` bit, so this ends within 2 × size steps.
    while (this.#entries.size >= this.limit) {
      const [tenant, entry] = this.#entries.entries().next().value as [string, Entry];
      this.#entries.delete(tenant);
      if (entry.used) {
        entry.used = false;
        this.#entries.set(tenant, entry);
      } else {
        this.evicted(tenant, entry);
      }
    }
  }
}
