// The Sealer that `keys` columns call, synchronously: it finds the tenant's
// keys in memory (a memo of the last tenant, then the cache), seals and opens
// through the store's ring of tenants, reads v1 values through the
// process-wide ring while the store allows it, and turns what the ring
// cannot open into the caller's error. It never touches the database: what
// it needs from the store it is handed (SealerDeps).
import { randomBytes } from 'node:crypto';
import * as native from '../../../index.js';
import type { KeyRing } from '../../../index.js';
import { codedError } from '../../shared/errors.js';
import { processRing, type Sealer } from '../process-ring.js';
import { processRingConfigured, processSearcher, type Searcher } from '../search/searcher.js';
import { clock, SEAL_CONFIRMED_WITHIN_MS, type Entry, type TenantCache } from './cache.js';
import { keyShredded, sealRefused, unconfirmed } from './errors.js';

/** The least time between two re-reads of one tenant for values naming a key it lacks. */
const MISS_INTERVAL = 1_000;

/** What the sealer is handed by its store. */
export interface SealerDeps {
  cache: TenantCache;
  /** The store's ring of tenants. */
  rings: KeyRing;
  /** Clock time of the next change check, which the store moves on. */
  times: { nextCheck: number };
  /** Whether v1 values still open through the process-wide ring (tenantKeys' readV1). */
  readV1: boolean;
  /** The store's slow path: the tenant's entry (starting a background re-read or change check when due), or a coded error. */
  use(tenant: string): Entry;
  /** Reads the tenant's rows again, in the background. */
  refresh(tenant: string): Promise<void>;
}

/** What `keys` columns call: seal and open, and search tokens, under each tenant's keys. */
export type TenantSealer = Sealer & Searcher;

export function makeSealer(d: SealerDeps): TenantSealer {
  const { cache, rings, times, readV1, use, refresh } = d;
  // A shredded tenant's lookups (blind index, search and range tokens) are
  // computed under a random key, so they match nothing. They are computed,
  // rather than made up, so that a query is checked as any tenant's is: a
  // query refused for one tenant is refused for a shredded one too.
  let nowhereRing: KeyRing | undefined;
  const nowhere = (): KeyRing => (nowhereRing ??= new native.KeyRing([randomBytes(32)]));
  // The last tenant that passed the check, and the clock time until which
  // it passes again with three comparisons: the earlier of its staleAt and
  // the next change check, as long as the cache's version stays (every
  // change that could make the entry unusable moves it on, eviction's
  // passes included, so that a hot tenant gets its `used` bit back).
  let lastTenant: string | undefined;
  let lastEntry: Entry | undefined;
  let lastUntil = 0;
  let lastVersion = -1;
  /** The tenant's entry, or a throw unless it is loaded: the memo above (three comparisons), else a cache lookup and four comparisons when it is fresh and no check is due, else use(). */
  const check = (tenant: string): Entry => {
    if (tenant === lastTenant && lastUntil > clock.now && cache.version === lastVersion) return lastEntry as Entry;
    const entry = cache.get(tenant);
    if (entry !== undefined && entry.loaded && entry.staleAt > clock.now && times.nextCheck > clock.now) {
      entry.used = true;
      lastTenant = tenant;
      lastEntry = entry;
      lastUntil = Math.min(entry.staleAt, times.nextCheck);
      lastVersion = cache.version;
      return entry;
    }
    const used = use(tenant);
    if (!used.loaded) throw keyShredded(tenant);
    return used;
  };
  /** A v1 value predates the tenant keys: the process-wide ring reads it, once the tenant is known not to be shredded. */
  const legacyText = (stored: string) => typeof stored === 'string' && stored.charCodeAt(1) === 0x31 && stored.startsWith('v1:');
  const legacyBytes = (stored: Uint8Array) => stored[0] === 1;
  const v1Refused = () =>
    codedError('ALE_UNSUPPORTED_VERSION', 'the value is a v1 envelope under the process-wide key, and this store reads none (readV1: false); convertToTenantKeys() moves such values under the tenant key');
  /**
   * A loaded tenant whose ring lacks the key a value names: the value is
   * another tenant's (or forged), or under a key another process made
   * since this one read the tenant. Either way it does not open for this
   * tenant: ALE_AUTH_FAILED. A re-read picks up a new key, at most once a
   * MISS_INTERVAL per tenant: each forced re-read unwraps every key of the
   * tenant, and a caller that can make reads fail must not be able to aim
   * that load at the key service.
   */
  const missed = (e: unknown, tenant: string, field: string): unknown => {
    const entry = cache.get(tenant);
    if ((e as { code?: string })?.code !== 'ALE_KEY_NOT_LOADED' || !entry?.loaded) return e;
    if (!(clock.now - (entry.missedAt ?? -Infinity) < MISS_INTERVAL)) {
      entry.missedAt = clock.now;
      cache.expire(entry, 0);
      refresh(tenant).catch(() => undefined);
    }
    return codedError(
      'ALE_AUTH_FAILED',
      `the value of field "${field}" names a key that is not one of tenant "${tenant}"'s keys: it is another tenant's, or under a key made since this process read the tenant's keys (which it reads again)`,
    );
  };
  /** The tenant's entry for a seal: refused while another process's active key for it could not be unwrapped here (cache.ts, `sealRefused`). */
  const sealing = (tenant: string): Entry => {
    const entry = check(tenant);
    if (entry.sealRefused !== undefined) throw sealRefused(tenant, entry.sealRefused);
    // Keys not found in the key table for that long may have been retired
    // and destroyed elsewhere meanwhile (a process idle since, or a re-read
    // that does not come back): use() has started a re-read.
    const age = clock.now - entry.confirmedAt;
    if (age > SEAL_CONFIRMED_WITHIN_MS) {
      use(tenant);
      throw unconfirmed(tenant, age);
    }
    return entry;
  };
  /** Whether a blind index can be computed for the tenant: false once shredded (its lookups then match nothing). */
  const indexable = (tenant: string): boolean => use(tenant).loaded;
  return {
    // Counted before the seal: a seal that then fails counts too, which errs on the safe side.
    encrypt: (plaintext, t, c, f) => (sealing(t).sealed++, rings.encrypt(plaintext, t, c, f)),
    encryptBinary: (plaintext, t, c, f) => (sealing(t).sealed++, rings.encryptBinary(plaintext, t, c, f)),
    // decrypt and decryptBinary are written out rather than made by one
    // higher-order helper: closures of one literal share their call-site
    // feedback, and the two-target call that made cost V8 more than the
    // rest of the check (docs/performance.md, "Keys per tenant").
    decrypt: (stored, t, c, f) => {
      check(t);
      if (legacyText(stored)) {
        if (!readV1) throw v1Refused();
        return processRing.decrypt(stored, t, c, f);
      }
      try {
        return rings.decrypt(stored, t, c, f);
      } catch (e) {
        throw missed(e, t, f);
      }
    },
    decryptBinary: (stored, t, c, f) => {
      check(t);
      if (legacyBytes(stored)) {
        if (!readV1) throw v1Refused();
        return processRing.decryptBinary(stored, t, c, f);
      }
      try {
        return rings.decryptBinary(stored, t, c, f);
      } catch (e) {
        throw missed(e, t, f);
      }
    },
    blindIndex: (value, t, c, f) => (indexable(t) ? rings : nowhere()).blindIndex(value, t, c, f),
    blindIndexes: (value, t, c, f) => {
      if (!indexable(t)) return [nowhere().blindIndex(value, t, c, f)];
      // Rows not converted yet still hold the process-wide ring's index;
      // with no process-wide key configured, there are none. Any other
      // failure (a bad key) is thrown: skipping it would miss those rows.
      const out = [rings.blindIndex(value, t, c, f)];
      if (!readV1 || !processRingConfigured()) return out;
      out.push(...processRing.blindIndexes(value, t, c, f));
      return out;
    },
    // A shredded tenant's values are gone: nothing to index, and a query matches nothing.
    searchTokens: (value, t, c, f, options) => (check(t), rings.searchTokens(value, t, c, f, options)),
    searchTokenText: (value, t, c, f, options) => (check(t), rings.searchTokenText(value, t, c, f, options)),
    searchQueries: (query, kind, t, c, f, options) => {
      if (!indexable(t)) return [nowhere().searchQuery(query, kind, t, c, f, options)];
      const sets = [rings.searchQuery(query, kind, t, c, f, options)];
      // Rows not converted yet still hold the process-wide ring's tokens;
      // with no process-wide key configured, there are none. Any other
      // failure is thrown: skipping it would miss those rows.
      if (!readV1 || !processRingConfigured()) return sets;
      sets.push(...processSearcher.searchQueries(query, kind, t, c, f, options));
      return sets;
    },
    rangeTokens: (nodes, t, c, f) => (check(t), rings.rangeTokens(nodes, t, c, f)),
    rangeQueries: (nodes, t, c, f) => {
      if (!indexable(t)) return [nowhere().rangeTokens(nodes, t, c, f)];
      const sets = [rings.rangeTokens(nodes, t, c, f)];
      // As searchQueries: rows not converted yet hold the process-wide ring's tokens.
      if (!readV1 || !processRingConfigured()) return sets;
      sets.push(...processSearcher.rangeQueries(nodes, t, c, f));
      return sets;
    },
  };
}
