// The reads of tenants' rows under way in one store, at most one a tenant
// that counts: concurrent loads share it, and a forced read (a change seen,
// a rotation here) replaces it, whose older read then changes nothing and
// settles with the newer one. Each read is keys/reading.ts's.
import { loadFailed } from './errors.js';
import { readTenant, type TenantReader } from './reading.js';

export class TenantReads {
  readonly #pending = new Map<string, Promise<void>>();

  /**
   * @param reader what a read of `tenant` reaches of the store
   * @param held whether the store holds an entry for `tenant` (its keys, or a shred)
   * @param done told when the newest read of `tenant` succeeded
   */
  constructor(
    private readonly reader: (tenant: string) => TenantReader,
    private readonly held: (tenant: string) => boolean,
    private readonly done: (tenant: string) => void,
  ) {}

  /** Whether a read of `tenant` is under way. */
  has(tenant: string): boolean {
    return this.#pending.has(tenant);
  }

  /** Forgets the reads under way (the store closes): they change nothing, and their callers read again, which a closed store refuses. */
  clear(): void {
    this.#pending.clear();
  }

  /**
   * Reads the tenant's rows (creating its keys on first use) and replaces
   * its entry; shared by concurrent callers unless `force`. A read that a
   * forced one overtook changes nothing, and settles with the newer read:
   * its callers wait for keys that some read has put in memory.
   */
  refresh(tenant: string, force = false): Promise<void> {
    const pending = this.#pending.get(tenant);
    if (pending && !force) return pending;
    const read: Promise<void> = this.#read(tenant, () => this.#pending.get(tenant) === read)
      .then(() => {
        const newer = this.#pending.get(tenant);
        if (newer === read) return undefined;
        if (newer !== undefined) return newer;
        // Overtaken by a read that has ended already: it left keys (or a shred), or failed, and then this one reads again.
        return this.held(tenant) ? undefined : this.refresh(tenant);
      })
      .finally(() => {
        if (this.#pending.get(tenant) === read) this.#pending.delete(tenant);
      });
    this.#pending.set(tenant, read);
    return read;
  }

  /** One read of the tenant's rows into its entry; a database's error is coded without its parameters (errors.ts). */
  async #read(tenant: string, latest: () => boolean): Promise<void> {
    try {
      await readTenant(this.reader(tenant), tenant, latest);
    } catch (e) {
      throw loadFailed(tenant, e);
    }
    if (latest()) this.done(tenant);
  }
}
