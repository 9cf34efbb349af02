// A JS ring's counters: encryptions and decryptions per key, behind stats(),
// and the IV-budget warning's threshold. They live in a SharedArrayBuffer,
// so a ring shared with worker threads (the process-wide one) counts for
// all of them.

/** Encryptions under the primary at which the warning fires by default: 2^30, a quarter of the 2^32 budget. */
const DEFAULT_WARN_AT = 2n ** 30n;
const MAX_U64 = 2n ** 64n - 1n;
// Layout: the warning's threshold, whether it fired, then encryptions and
// decryptions of each key in decryption order.
const WARN_AT = 0;
const WARNED = 1;
const encryptionsOf = (key: number) => 2 + 2 * key;
const decryptionsOf = (key: number) => 3 + 2 * key;

/** The counters of a ring of `keys` keys, at zero, with the warning at its default threshold. */
export function newCounters(keys: number): SharedArrayBuffer {
  const counters = new BigUint64Array(new SharedArrayBuffer(8 * (2 + 2 * keys)));
  counters[WARN_AT] = DEFAULT_WARN_AT;
  return counters.buffer as SharedArrayBuffer;
}

export class Counters {
  readonly #c: BigUint64Array;
  /** Where the warning's threshold and flag live: these counters', or a ring of tenants' (warnAs). */
  #w: BigUint64Array;

  constructor(buffer: SharedArrayBuffer) {
    this.#c = new BigUint64Array(buffer);
    this.#w = this.#c;
  }

  /**
   * Warns by `ring`'s threshold and flag: a tenant's ring in a ring of
   * tenants, as the addon does (one warning for the ring of tenants, at its
   * threshold, when a tenant's primary reaches it; SECURITY.md, "Shredding:
   * what it covers and what it does not").
   */
  warnAs(ring: Counters): void {
    this.#w = ring.#c;
  }

  get buffer(): SharedArrayBuffer {
    return this.#c.buffer as SharedArrayBuffer;
  }

  encryptions(key: number): number {
    return Number(Atomics.load(this.#c, encryptionsOf(key)));
  }

  decryptions(key: number): number {
    return Number(Atomics.load(this.#c, decryptionsOf(key)));
  }

  countDecryption(key: number): void {
    Atomics.add(this.#c, decryptionsOf(key), 1n);
  }

  /** Counts an encryption under the primary and warns, once, when the count reaches the threshold. */
  countEncryption(): void {
    const count = Atomics.add(this.#c, encryptionsOf(0), 1n) + 1n;
    if (count >= Atomics.load(this.#w, WARN_AT) && Atomics.compareExchange(this.#w, WARNED, 0n, 1n) === 0n) {
      // Emitted after the encryption returns, as the addon does: a replaced
      // emitWarning that throws or encrypts again cannot touch this call.
      setImmediate(() =>
        process.emitWarning(
          `@sveltycms/ale: the primary key has encrypted ${count} values in this process; AES-GCM with random IVs allows 2^32 per key across all processes. Rotate ENCRYPTION_KEY soon.`,
          'AleWarning',
          'ALE_IV_BUDGET',
        ),
      );
    }
  }

  /** Sets the warning's threshold and re-arms it. `encryptions` is a positive integer. */
  setWarning(encryptions: number): void {
    Atomics.store(this.#c, WARN_AT, encryptions >= 2 ** 64 ? MAX_U64 : BigInt(encryptions));
    Atomics.store(this.#c, WARNED, 0n);
  }
}
