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
// Each request has a timeout and a bounded retry; past that bound it fails
// with ALE_KEK_UNAVAILABLE. The token is sent in a header and appears in no
// message. Wraps and unwraps asked for together go out as one request.
import { createHash } from 'node:crypto';
import { codedError, type CodedError } from '../../shared/json.js';
import type { KekProvider } from './kek.js';

export interface TransitKekOptions {
  /** The service's address, e.g. `https://bao.internal:8200`. */
  address: string;
  /** A token whose policy allows encrypt and decrypt on the key, read on keys/<name> (for rewrap), and with `keyPerTenant` creating keys and updating and deleting keys/<name>(/config). */
  token: string;
  /** Where the transit engine is mounted. Default `transit`. */
  mount?: string;
  /** The transit key that wraps every tenant's keys. */
  key?: string;
  /**
   * A transit key per tenant instead, named this prefix followed by the
   * base64url SHA-256 of the tenant id. The service creates it on the
   * tenant's first wrap; shred() deletes it, so that a backup restored
   * later holds wrapped keys that nothing can open.
   */
  keyPerTenant?: { prefix: string };
  /** Milliseconds one request may take before it counts as failed. Default 2,000. */
  timeoutMs?: number;
  /** Further attempts after a request that failed or timed out. Default 2. */
  retries?: number;
  /** An OpenBao or Vault Enterprise namespace, sent as X-Vault-Namespace. */
  namespace?: string;
}

/** Pause before the n-th retry: 100 ms, then 200 ms, 400 ms, … */
const backoff = (n: number) => new Promise((resolve) => setTimeout(resolve, 100 * 2 ** n));

/** An answer worth another attempt: the service is busy, sealed or failing. */
const retryable = (status: number) => status === 429 || status >= 500;

/** The engine's key version a ciphertext names (`vault:v3:…` → 3); 0 for anything else. */
const versionOf = (ciphertext: string) => Number(/^vault:v(\d+):/.exec(ciphertext)?.[1] ?? 0);

/** The `errors` of an error answer; none when it has none or is not JSON. */
function errorsOf(text: string): string[] {
  try {
    const errors = (JSON.parse(text) as { errors?: unknown }).errors;
    return Array.isArray(errors) ? errors.filter((e): e is string => typeof e === 'string') : [];
  } catch {
    return [];
  }
}

/** Key names may hold letters, digits, `-`, `_` and `.`; a prefix must too. */
const NAME = /^[A-Za-z0-9._-]+$/;

function unavailable(address: string, what: string): CodedError {
  return codedError('ALE_KEK_UNAVAILABLE', `the key service at ${address} ${what}; tenants already loaded keep working, and loading others fails until it answers`);
}

export function transitKek(options: TransitKekOptions): KekProvider {
  const { address, token, mount = 'transit', key, keyPerTenant, timeoutMs = 2_000, retries = 2, namespace } = options ?? ({} as TransitKekOptions);
  const invalid = (why: string) => codedError('ALE_INVALID_INPUT', `transitKek: ${why}`);
  let base: URL;
  try {
    base = new URL(address);
  } catch {
    throw invalid('options.address must be a URL such as http://127.0.0.1:8200');
  }
  if (typeof token !== 'string' || token.length === 0) throw invalid('options.token must be a non-empty string');
  if ((key === undefined) === (keyPerTenant === undefined)) throw invalid('give options.key (one transit key) or options.keyPerTenant (a key per tenant), not both');
  if (key !== undefined && !NAME.test(key)) throw invalid('options.key may hold letters, digits, ".", "_" and "-" only');
  if (keyPerTenant !== undefined && !NAME.test(keyPerTenant.prefix ?? '')) throw invalid('options.keyPerTenant.prefix may hold letters, digits, ".", "_" and "-" only');
  if (!mount.split('/').every((part) => NAME.test(part))) throw invalid('options.mount must be a path of names such as "transit"');
  if (!(timeoutMs > 0) || !Number.isInteger(retries) || retries < 0) throw invalid('options.timeoutMs must be positive and options.retries a whole number');

  const where = base.origin;
  const nameOf = (tenant: string) => (key !== undefined ? key : keyPerTenant!.prefix + createHash('sha256').update(tenant, 'utf8').digest('base64url'));
  const id = `transit:${mount}/${key ?? `${keyPerTenant!.prefix}*`}`;
  const headers: Record<string, string> = { 'X-Vault-Token': token, 'Content-Type': 'application/json' };
  if (namespace) headers['X-Vault-Namespace'] = namespace;

  /** One call, retried; the parsed `data` of the answer, or null when the transit key does not exist. */
  async function call(method: string, path: string, body?: object): Promise<Record<string, unknown> | null> {
    const url = new URL(`/v1/${mount}/${path}`, base);
    const what = path.split('/')[0];
    let last = 'did not answer';
    for (let attempt = 0; attempt <= retries; attempt++) {
      if (attempt > 0) await backoff(attempt - 1);
      let res: Response;
      let text: string;
      try {
        // Redirects are not followed: the token (and a key being wrapped) would go to wherever they point.
        res = await fetch(url, { method, headers, redirect: 'manual', body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(timeoutMs) });
        text = await res.text();
      } catch (e) {
        last = (e as Error)?.name === 'TimeoutError' ? `did not answer within ${timeoutMs} ms` : 'could not be reached';
        continue;
      }
      if (res.ok) {
        try {
          return text ? ((JSON.parse(text) as { data?: Record<string, unknown> }).data ?? {}) : {};
        } catch {
          last = 'answered with something other than JSON';
          continue;
        }
      }
      if (retryable(res.status)) {
        last = `answered HTTP ${res.status}`;
        continue;
      }
      if (res.status >= 300 && res.status < 400) throw unavailable(where, `answered with a redirect (HTTP ${res.status}), which is not followed: give the address of the active node`);
      if (res.status === 401 || res.status === 403) throw unavailable(where, `refused the request (HTTP ${res.status}): check the token and that its policy allows ${what} on ${mount}`);
      const errors = errorsOf(text);
      // The transit key does not exist (deleted by shred, or never made): a 404 without errors, or a 400 that says so.
      if ((res.status === 404 && errors.length === 0) || (res.status === 400 && errors.some((e) => /no existing key|key not found|not found$/i.test(e)))) return null;
      if (res.status === 404) throw unavailable(where, `has no such path (HTTP 404): check options.mount ("${mount}") and the namespace`);
      // 400: the engine refused the input (the wrong key, altered associated data).
      throw codedError('ALE_AUTH_FAILED', `the key service refused to ${what} (HTTP ${res.status})`);
    }
    throw unavailable(where, `${last} (${retries + 1} attempts)`);
  }

  const b64 = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');

  /**
   * Encrypts and decrypts asked for in one turn of the event loop, for one
   * transit key, go out as one request (the engine's batch_input): a
   * tenant's load wraps or unwraps its data and index keys at once, so it
   * makes one call, which concurrent loads of the tenant share. Each answer
   * is the item's result; null when the transit key does not exist.
   */
  const queued = new Map<string, { input: Record<string, string>; done: (result: Record<string, unknown> | null | Error) => void }[]>();
  function batched(path: string, input: Record<string, string>): Promise<Record<string, unknown> | null> {
    return new Promise((resolve, reject) => {
      let items = queued.get(path);
      if (items === undefined) {
        queued.set(path, (items = []));
        queueMicrotask(() => {
          const batch = queued.get(path)!;
          queued.delete(path);
          call('POST', path, { batch_input: batch.map((i) => i.input) }).then(
            (data) => {
              const results = data === null ? [] : (data.batch_results as Record<string, unknown>[] | undefined);
              batch.forEach((item, k) => {
                const r = data === null ? null : results?.[k];
                item.done(r === undefined || (r !== null && typeof r.error === 'string' && r.error !== '') ? codedError('ALE_AUTH_FAILED', `the key service refused to ${path.split('/')[0]} a key`) : r);
              });
            },
            (e) => batch.forEach((item) => item.done(e as Error)),
          );
        });
      }
      items.push({ input, done: (r) => (r instanceof Error ? reject(r) : resolve(r)) });
    });
  }

  async function wrap(plain: Uint8Array, aad: Uint8Array, tenant = ''): Promise<string> {
    const data = await batched(`encrypt/${nameOf(tenant)}`, { plaintext: b64(plain), associated_data: b64(aad) });
    const ciphertext = data?.ciphertext;
    if (typeof ciphertext !== 'string') throw unavailable(where, 'answered an encrypt without a ciphertext');
    return ciphertext;
  }

  async function unwrap(wrapped: string, ref: string, aad: Uint8Array, tenant = ''): Promise<Buffer> {
    if (ref !== id) throw codedError('ALE_INVALID_KEY', `the KEK ${JSON.stringify(ref)} is not this one`);
    // A transit key deleted by shred answers as missing (null): the key does not unwrap.
    const data = await batched(`decrypt/${nameOf(tenant)}`, { ciphertext: wrapped, associated_data: b64(aad) });
    const plaintext = data?.plaintext;
    if (typeof plaintext !== 'string') throw codedError('ALE_AUTH_FAILED', 'the key service did not unwrap the key');
    return Buffer.from(plaintext, 'base64');
  }

  return {
    id,
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
            const name = nameOf(tenant);
            if ((await call('POST', `keys/${name}/config`, { deletion_allowed: true })) === null) return;
            await call('DELETE', `keys/${name}`);
          },
  };
}
