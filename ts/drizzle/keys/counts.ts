// Encryptions per key, counted in memory as values are sealed and added to
// the key table's `encryptions` column in batches, so that the table holds
// each key's count over every process that uses it, with no write on the
// path that seals a value. AES-GCM with random IVs allows about 2^32
// encryptions per key in all (NIST SP 800-38D); the store rotates a key
// whose stored count passes its threshold.

/** Counts not written yet, by key id. */
export class PendingCounts {
  readonly #pending = new Map<string, number>();
  /** The flush under way: flushes run one at a time, so no count is written twice. */
  #flushing: Promise<void> = Promise.resolve();

  add(keyId: string, n: number): void {
    if (n > 0) this.#pending.set(keyId, (this.#pending.get(keyId) ?? 0) + n);
  }

  /** The count not written yet for `keyId`. */
  pending(keyId: string): number {
    return this.#pending.get(keyId) ?? 0;
  }

  get size(): number {
    return this.#pending.size;
  }

  /** Drops every pending count (a closed store's, whose write failed). */
  clear(): void {
    this.#pending.clear();
  }

  /**
   * Writes every pending count with `write(keyId, n)` (an increment), one
   * key after another. A count whose write fails stays pending, with those
   * after it, and the flush rejects with the failure.
   */
  flush(write: (keyId: string, n: number) => Promise<unknown>): Promise<void> {
    const run = async () => {
      const batch = [...this.#pending];
      this.#pending.clear();
      for (let i = 0; i < batch.length; i++) {
        try {
          await write(batch[i][0], batch[i][1]);
        } catch (e) {
          for (const [keyId, n] of batch.slice(i)) this.add(keyId, n);
          throw e;
        }
      }
    };
    const next = this.#flushing.then(run, run);
    this.#flushing = next.catch(() => undefined);
    return next;
  }
}
