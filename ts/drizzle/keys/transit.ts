// A KEK held by a key service: the transit engine of OpenBao or HashiCorp
// Vault (the two share its HTTP API). The master key never leaves the
// service; tenant keys are sent to it to be wrapped and unwrapped, with the
// wrap's AAD as the engine's `associated_data`. The engine's ciphertext
// (`vault:v<version>:…`) is what the key table stores, so the engine's own
// key versions apply: a key wrapped under an older version opens until the
// engine's `min_decryption_version` retires it, and rewrap() moves it to the
// newest. It unwraps and wraps again: OpenBao 2.7.2's /rewrap refuses a
// ciphertext made with `associated_data` ("message authentication failed").
//
// Each request has a timeout, a bounded retry and a bounded answer; past
// those it fails with ALE_KEK_UNAVAILABLE. The token is sent in a header and
// appears in no message. Wraps and unwraps asked for together go out as one
// request. The bytes of requests and answers are transit-body.ts's.
import { createHash } from 'node:crypto';
import { codedError, type CodedError } from '../../shared/errors.js';
import { MAX_ID_CHARS, type KekProvider } from './kek.js';
import { ANSWER_CAP_TEXT, MAX_ITEMS, batchBody, parseAnswer, readCapped, resultsOf, wipeResult, type BatchItem } from './transit-body.js';

/** What every transitKek takes, with one transit key or a key per tenant. */
export interface TransitKekBase {
  /** The service's address, e.g. `https://bao.internal:8200`; undefined (an unset variable) is refused with ALE_INVALID_INPUT. */
  address: string | undefined;
  /** A token whose policy allows encrypt and decrypt on the key, read on keys/<name> (for rewrap), and with `keyPerTenant` creating keys and updating and deleting keys/<name>(/config). */
  token: string | undefined;
  /**
   * Where the transit engine is mounted. Default `transit`. Names joined by
   * single `/`, each as a key name may be (below).
   */
  mount?: string;
  /** Milliseconds one request may take before it counts as failed. Default 2,000. */
  timeoutMs?: number;
  /** Further attempts after a request that failed or timed out. Default 2. */
  retries?: number;
  /** An OpenBao or Vault Enterprise namespace, sent as X-Vault-Namespace. */
  namespace?: string;
  /**
   * The reference stored with every key this KEK wraps, 1 to 255
   * characters. Default `transit:<mount>/<key>` (or `<prefix>*`), which
   * names no address: give a KEK on another cluster or namespace with the
   * same mount and key name an id of its own, such as
   * `transit:eu-2:transit/cms`, before rewrap() moves keys to it. A ring
   * of two KEKs with one id at different addresses is refused.
   */
  id?: string;
}

/** One transit key for every tenant. */
export interface TransitOneKey {
  /**
   * The transit key that wraps every tenant's keys: letters, digits, `.`,
   * `_` and `-`, and not dots alone (`.` and `..` would step out of the
   * engine's path). Anything else is ALE_INVALID_INPUT when transitKek() is
   * called.
   */
  key: string;
  keyPerTenant?: undefined;
}

/** A transit key per tenant. */
export interface TransitKeyPerTenant {
  /**
   * A transit key per tenant instead, named this prefix followed by the
   * base64url SHA-256 of the tenant id. The service creates it on the
   * tenant's first wrap; shred() deletes it, so that a backup restored
   * later holds wrapped keys that nothing can open. The prefix is a key
   * name as above.
   */
  keyPerTenant: { prefix: string };
  key?: undefined;
}

/** transitKek's options: `key` or `keyPerTenant`, not both (the type says so, and transitKek() refuses both at run time). */
export type TransitKekOptions = TransitKekBase & (TransitOneKey | TransitKeyPerTenant);

/** Pause before the n-th retry: 100 ms, then 200 ms, 400 ms, … */
const backoff = (n: number) => new Promise((resolve) => setTimeout(resolve, 100 * 2 ** n));

/** An answer worth another attempt: the service is busy, sealed or failing. */
const retryable = (status: number) => status === 429 || status >= 500;

/** The engine's key version a ciphertext names (`vault:v3:…` → 3); 0 for anything else. */
const versionOf = (ciphertext: string) => Number(/^vault:v(\d+):/.exec(ciphertext)?.[1] ?? 0);

/**
 * The `errors` of an error answer, as the engine gives every one; null when
 * the answer has no such list (not JSON, or from something other than the
 * engine, such as a proxy).
 */
function errorsOf(answer: unknown): string[] | null {
  const errors = (answer as { errors?: unknown } | null | undefined)?.errors;
  return Array.isArray(errors) ? errors.filter((e): e is string => typeof e === 'string') : null;
}

/** The `data` of a parsed answer; empty when it has none. */
const dataOf = (answer: unknown): Record<string, unknown> => {
  const data = (answer as { data?: unknown } | null | undefined)?.data;
  return typeof data === 'object' && data !== null ? (data as Record<string, unknown>) : {};
};

/**
 * A name in a request's path: letters, digits, `.`, `_` and `-`, and not
 * dots alone. `.` and `..` are steps that a URL resolves (a mount of
 * `../v1/sys/mounts` reaches another API); longer runs of dots are refused
 * with them, for one rule that is easy to state.
 */
const NAME = /^(?!\.+$)[A-Za-z0-9._-]+$/;
const isName = (value: unknown): value is string => typeof value === 'string' && NAME.test(value);

function unavailable(address: string, what: string): CodedError {
  return codedError('ALE_KEK_UNAVAILABLE', `the key service at ${address} ${what}; tenants already loaded keep working, and loading others fails until it answers`);
}

export function transitKek(options: TransitKekOptions): KekProvider {
  const { address, token, mount = 'transit', key, keyPerTenant, timeoutMs = 2_000, retries = 2, namespace, id: givenId } = options ?? ({} as TransitKekOptions);
  const invalid = (why: string) => codedError('ALE_INVALID_INPUT', `transitKek: ${why}`);
  const badAddress = () => invalid('options.address must be a URL such as http://127.0.0.1:8200');
  if (typeof address !== 'string') throw badAddress();
  let base: URL;
  try {
    base = new URL(address);
  } catch {
    throw badAddress();
  }
  if (typeof token !== 'string' || token.length === 0) throw invalid('options.token must be a non-empty string');
  if ((key === undefined) === (keyPerTenant === undefined)) throw invalid(`give options.key (one transit key) or options.keyPerTenant (a key per tenant): ${key === undefined ? 'neither was given' : 'not both'}`);
  const names = 'letters, digits, ".", "_" and "-", and not dots alone';
  if (key !== undefined && !isName(key)) throw invalid(`options.key may hold ${names}`);
  if (keyPerTenant !== undefined && !isName(keyPerTenant?.prefix)) throw invalid(`options.keyPerTenant.prefix may hold ${names}`);
  if (typeof mount !== 'string' || !mount.split('/').every(isName)) throw invalid(`options.mount must be names joined by single "/", such as "transit" or "team-a/transit"; each name may hold ${names}`);
  if (!(timeoutMs > 0) || !Number.isInteger(retries) || retries < 0) throw invalid('options.timeoutMs must be positive and options.retries a whole number');

  const where = base.origin;
  // A tenant's key name is the prefix (a name) and base64url digits (no "/", and never dots alone): whatever the tenant id, it stays one name.
  const nameOf = (tenant: string) => (key !== undefined ? key : keyPerTenant!.prefix + createHash('sha256').update(tenant, 'utf8').digest('base64url'));
  if (givenId !== undefined && (typeof givenId !== 'string' || givenId.length === 0 || givenId.length > MAX_ID_CHARS)) throw invalid(`options.id must be a string of 1 to ${MAX_ID_CHARS} characters`);
  const id = givenId ?? `transit:${mount}/${key ?? `${keyPerTenant!.prefix}*`}`;
  if (id.length > MAX_ID_CHARS) throw invalid(`options.mount and options.${key === undefined ? 'keyPerTenant.prefix' : 'key'} are too long: the reference stored with each key, "transit:<mount>/<key>", may hold ${MAX_ID_CHARS} characters`);
  const headers: Record<string, string> = { 'X-Vault-Token': token, 'Content-Type': 'application/json' };
  if (namespace) headers['X-Vault-Namespace'] = namespace;

  /** One call, retried; the answer's `data`, or null when the transit key does not exist. */
  async function call(method: string, path: string, body?: Buffer): Promise<Record<string, unknown> | null> {
    const url = new URL(`/v1/${mount}/${path}`, base);
    const what = path.split('/')[0];
    let last = 'did not answer';
    for (let attempt = 0; attempt <= retries; attempt++) {
      if (attempt > 0) await backoff(attempt - 1);
      const abort = new AbortController();
      let timedOut = false;
      const timer = setTimeout(() => ((timedOut = true), abort.abort()), timeoutMs);
      let res: Response;
      let bytes: Buffer | null;
      try {
        // Redirects are not followed: the token (and a key being wrapped) would go to wherever they point.
        res = await fetch(url, { method, headers, redirect: 'manual', body, signal: abort.signal });
        bytes = await readCapped(res, () => abort.abort());
      } catch {
        last = timedOut ? `did not answer within ${timeoutMs} ms` : 'could not be reached';
        continue;
      } finally {
        clearTimeout(timer);
      }
      // Not retried: a service that answers this much would answer it again.
      if (bytes === null) throw unavailable(where, `answered with more than ${ANSWER_CAP_TEXT}, the most an answer may hold, and the rest was not read: check that options.address is the key service's`);
      const answer = parseAnswer(bytes);
      if (res.ok) {
        if (answer !== undefined) return dataOf(answer);
        last = 'answered with something other than JSON';
        continue;
      }
      // A batch in which some items failed: HTTP 400 with a result per item, each the engine's verdict on its own item.
      if (res.status === 400 && resultsOf(dataOf(answer)).length > 0) return dataOf(answer);
      resultsOf(dataOf(answer)).forEach(wipeResult);
      if (retryable(res.status)) {
        last = `answered HTTP ${res.status}`;
        continue;
      }
      if (res.status >= 300 && res.status < 400) throw unavailable(where, `answered with a redirect (HTTP ${res.status}), which is not followed: give the address of the active node`);
      if (res.status === 401 || res.status === 403) throw unavailable(where, `refused the request (HTTP ${res.status}): check the token and that its policy allows ${what} on ${mount}`);
      const errors = errorsOf(answer);
      // The transit key does not exist (deleted by shred, or never made): the engine's 404 with an empty `errors`, or its 400 that says so.
      // A 404 without that body comes from something else (a proxy, a wrong address) and says nothing about the key.
      if ((res.status === 404 && errors?.length === 0) || (res.status === 400 && errors?.some((e) => /no existing key|key not found|not found$/i.test(e)))) return null;
      if (res.status === 404) throw unavailable(where, `has no such path (HTTP 404): check options.address, options.mount ("${mount}") and the namespace`);
      // 400: the engine refused the input (the wrong key, altered associated data).
      throw codedError('ALE_AUTH_FAILED', `the key service refused to ${what} (HTTP ${res.status})`);
    }
    throw unavailable(where, `${last} (${retries + 1} attempts)`);
  }

  const b64 = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');

  type Result = Record<string, unknown> | null;
  interface Queued {
    item: BatchItem;
    done: (result: Result | Error) => void;
  }

  /**
   * Encrypts and decrypts asked for in one turn of the event loop, for one
   * transit key, go out as one request (the engine's batch_input), of
   * MAX_ITEMS at most: a tenant's load wraps or unwraps its data and index
   * keys at once, so it makes one call, which concurrent loads of the tenant
   * share; with one transit key for every tenant, the loads of all tenants
   * in that turn share it too. Each answer is the item's result; null when
   * the transit key does not exist.
   */
  const queued = new Map<string, Queued[]>();
  function batched(path: string, item: BatchItem): Promise<Result> {
    return new Promise((resolve, reject) => {
      let items = queued.get(path);
      if (items === undefined) {
        queued.set(path, (items = []));
        queueMicrotask(() => {
          const batch = queued.get(path)!;
          queued.delete(path);
          for (let i = 0; i < batch.length; i += MAX_ITEMS) {
            const part = batch.slice(i, i + MAX_ITEMS);
            send(path, part).catch((e) => part.forEach((q) => q.done(e as Error)));
          }
        });
      }
      items.push({ item, done: (r) => (item.plaintext?.fill(0), r instanceof Error ? reject(r) : resolve(r)) });
    });
  }

  /**
   * Sends one batch and gives each item its result. Without a result per
   * item, a refusal (HTTP 400) is of the batch as a whole, which an engine
   * answers when one item fails: the batch goes again in halves, down to
   * single items, so that an item fails for itself alone and one bad row
   * does not fail every tenant loaded in the same turn.
   */
  async function send(path: string, batch: Queued[]): Promise<void> {
    const body = batchBody(batch.map((q) => q.item));
    let data: Record<string, unknown> | null;
    try {
      data = await call('POST', path, body);
    } catch (e) {
      if (batch.length > 1 && (e as CodedError)?.code === 'ALE_AUTH_FAILED') return halves(path, batch);
      for (const q of batch) q.done(e as Error);
      return;
    } finally {
      body.fill(0);
    }
    if (data === null) {
      for (const q of batch) q.done(null);
      return;
    }
    const results = resultsOf(data);
    if (results.length !== batch.length && batch.length > 1) {
      results.forEach(wipeResult);
      return halves(path, batch);
    }
    const refused = () => codedError('ALE_AUTH_FAILED', `the key service refused to ${path.split('/')[0]} a key`);
    results.forEach((r, k) => {
      const error = (r as { error?: unknown } | null)?.error;
      const failed = typeof r !== 'object' || r === null || (typeof error === 'string' && error !== '');
      if (failed || k >= batch.length) wipeResult(r);
      if (k < batch.length) batch[k].done(failed ? refused() : (r as Record<string, unknown>));
    });
    for (let k = results.length; k < batch.length; k++) batch[k].done(refused());
  }

  const halves = async (path: string, batch: Queued[]): Promise<void> => {
    const half = Math.ceil(batch.length / 2);
    await Promise.all([send(path, batch.slice(0, half)), send(path, batch.slice(half))]);
  };

  async function wrap(plain: Uint8Array, aad: Uint8Array, tenant = ''): Promise<string> {
    // A copy, wiped once answered: the batch is sent later, and sent again in halves if refused.
    const data = await batched(`encrypt/${nameOf(tenant)}`, { fields: { associated_data: b64(aad) }, plaintext: new Uint8Array(plain) });
    const ciphertext = data?.ciphertext;
    if (typeof ciphertext !== 'string') throw unavailable(where, 'answered an encrypt without a ciphertext');
    return ciphertext;
  }

  async function unwrap(wrapped: string, ref: string, aad: Uint8Array, tenant = ''): Promise<Buffer> {
    if (ref !== id) throw codedError('ALE_INVALID_KEY', `the KEK ${JSON.stringify(ref)} is not this one`);
    // A transit key deleted by shred answers as missing (null): the key does not unwrap.
    const data = await batched(`decrypt/${nameOf(tenant)}`, { fields: { ciphertext: wrapped, associated_data: b64(aad) } });
    // Bytes read from the answer's bytes (transit-body.ts), never a string.
    const plaintext = data?.plaintext;
    if (!Buffer.isBuffer(plaintext)) throw codedError('ALE_AUTH_FAILED', 'the key service did not unwrap the key');
    return plaintext;
  }

  return {
    id,
    // Not secret: errors name the origin already. The path under it is the id's.
    location: `${where}${namespace ? ` (namespace ${namespace})` : ''}`,
    holds: (ref) => ref === id,
    wrap,
    unwrap,
    async rewrap(wrapped, ref, aad, tenant = '') {
      if (ref !== id) return null;
      const info = await call('GET', `keys/${nameOf(tenant)}`);
      if (!(versionOf(wrapped) < Number(info?.latest_version ?? 0))) return null;
      const key = await unwrap(wrapped, ref, aad, tenant);
      try {
        return await wrap(key, aad, tenant);
      } finally {
        key.fill(0);
      }
    },
    destroy:
      keyPerTenant === undefined
        ? undefined
        : async (tenant) => {
            // Resolves only on the engine's word that the key is gone: it answered the deletion, or said the key does not exist.
            const name = nameOf(tenant);
            if ((await call('POST', `keys/${name}/config`, Buffer.from('{"deletion_allowed":true}'))) === null) return;
            await call('DELETE', `keys/${name}`);
          },
  };
}
