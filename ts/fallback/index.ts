// The JavaScript backend: the addon's API (index.d.ts, generated from
// src/api/) on node:crypto, for platforms where no native binary
// loads. The package entry (main.cjs) picks it; nothing here loads the addon.
//
// Like src/api/, this file only reads arguments, in the addon's order
// (`this`, then tenant, collection and field, then the value), and hands them
// to the ring (ring.ts). The contract both backends keep is docs/format.md
// ("Keys" and "Envelope format"); __test__/backends.test.mjs compares
// them.
import { createHmac } from 'node:crypto';
import { getEnvironmentData, setEnvironmentData } from 'node:worker_threads';
import type { KeyRing as NativeKeyRing, KeyStats, RangeOptions, RingOptions, SearchOptions } from '../../index.js';
import { binaryToText, decodeCiphertext, parseBinary, parseText, textToBinary } from './envelope.js';
import { types } from 'node:util';
import { invalidContext, invalidInput, isArray, notInitialized, readBytes, readString, readText } from './errors.js';
import { secretsFromEnv } from './env.js';
import { readOptions, readSecrets } from './keys.js';
import { Ring, type SharedRing } from './ring.js';
import { utf8 } from './bytes.js';
import { readSecret, searchMatches, searchNormalize, searchQueryWith, searchTokensWith } from './search/api.js';
import { rangeTokensWith } from './search/range.js';
import { wordText } from '../shared/search-words.js';

/** The AAD, `tenant:collection:field`: each part a well-formed, non-empty string without ':'. */
function readContext(tenantId: unknown, collectionId: unknown, fieldName: unknown): string {
  const parts: [string, string][] = [
    ['tenantId', readText(tenantId, 'tenantId')],
    ['collectionId', readText(collectionId, 'collectionId')],
    ['fieldName', readText(fieldName, 'fieldName')],
  ];
  for (const [part, value] of parts) {
    if (value === '') throw invalidContext(part, 'is empty');
    if (value.includes(':')) throw invalidContext(part, "contains ':'");
  }
  return parts.map(([, value]) => value).join(':');
}

/** A tenant id argument: a well-formed string (its content is checked where the addon checks it). */
function readTenant(value: unknown): string {
  if (typeof value !== 'string' || !value.isWellFormed()) throw invalidContext('tenantId', 'is not a string');
  return value;
}

// The options are read before the secrets, as the addon reads them.
const ringFromSecrets = (secrets: unknown, options: unknown): Ring => {
  const read = readOptions(options);
  try {
    return Ring.build(readSecrets(secrets), read);
  } finally {
    read.indexKey?.fill(0); // Ring.build wipes it too; this covers a refusal of the secrets first
  }
};

const ringFromEnv = (vars: unknown, options: unknown): Ring => {
  const read = readOptions(options);
  return Ring.build(secretsFromEnv(vars, read.keyIds !== undefined), read);
};

/**
 * The arguments of a call, in the order the addon reads them: tenant,
 * collection and field first, then the value (with `read`, naming it
 * `what`). Returns `[value, aad]`.
 */
function args<V>(t: unknown, c: unknown, f: unknown, value: unknown, read: (v: unknown, what: string) => V, what: string): [V, string] {
  const aad = readContext(t, c, f);
  return [read(value, what), aad];
}

/** A search query and its column: the query read first, as src/api/search.rs reads it. */
function queryArgs(t: unknown, c: unknown, f: unknown, query: unknown): [string, string] {
  const text = readText(query, 'query');
  return [text, readContext(t, c, f)];
}

// Each operation once, for a ring given (a KeyRing's or the process-wide one).
const encryptWith = (ring: Ring, p: unknown, t: unknown, c: unknown, f: unknown): string => ring.seal(...args(t, c, f, p, readText, 'plaintext'));
const decryptWith = (ring: Ring, e: unknown, t: unknown, c: unknown, f: unknown): string => ring.open(...args(t, c, f, e, readString, 'envelope'));
const encryptBinaryWith = (ring: Ring, p: unknown, t: unknown, c: unknown, f: unknown): Buffer => ring.sealBinary(...args(t, c, f, p, readText, 'plaintext'));
const decryptBinaryWith = (ring: Ring, e: unknown, t: unknown, c: unknown, f: unknown): string =>
  ring.openBinary(...args(t, c, f, e, readBytes, 'envelope'));
/** HMAC-SHA-256 over `tenant:collection:field:value` with secret `secret`'s blind-index key, as base64url. */
const blindIndexWith = (ring: Ring, v: unknown, t: unknown, c: unknown, f: unknown, secret: number): string => {
  const [value, aad] = args(t, c, f, v, readText, 'value');
  return ring.withIndexKey(aad, secret, (key) => {
    const bytes = utf8(value);
    try {
      return createHmac('sha256', key).update(aad).update(':').update(bytes).digest('base64url');
    } finally {
      bytes.fill(0);
    }
  });
};

/** `value`'s blind index under each of `ring`'s secrets, primary first. */
const blindIndexesWith = (ring: Ring, value: unknown, t: unknown, c: unknown, f: unknown): string[] => {
  const count = ring.indexCount(readContext(t, c, f));
  return Array.from({ length: count }, (_, secret) => blindIndexWith(ring, value, t, c, f, secret));
};

/** `op` on every element of `values`; a failure names the element's index and keeps its code. */
function mapValues(values: unknown, t: unknown, c: unknown, f: unknown, op: (value: unknown, aad: string) => string): string[] {
  if (!isArray(values)) throw invalidInput('values must be an array of strings');
  // As the addon does (src/ops.rs, `elements`): every element read first, up to the first that is not a string, which
  // fails in its turn; then the context. What an element's getter throws is the caller's own and goes on unchanged.
  const elements: unknown[] = [];
  const length = values.length; // once, as the addon reads it: a getter may change it
  for (let i = 0; i < length; i++) {
    const value: unknown = values[i];
    elements.push(value);
    if (typeof value !== 'string') break;
  }
  const aad = readContext(t, c, f);
  const out = new Array<string>(length);
  elements.forEach((value, i) => {
    try {
      out[i] = op(value, aad);
    } catch (e) {
      (e as Error).message = `values[${i}]: ${(e as Error).message}`;
      throw e;
    }
  });
  return out;
}

/** Marks a KeyRing built from a ring already made (KeyRing.fromEnv); never reachable outside this module. */
const ADOPT = Symbol('adopt');

/**
 * A set of AES-256-GCM keys: the primary encrypts, every key decrypts
 * (primary first, then previous keys, then passphrases' legacy keys). Keys
 * are node:crypto KeyObjects held in a private field.
 */
export class KeyRing implements NativeKeyRing {
  readonly #ring: Ring;

  constructor(secrets: Array<string | Uint8Array>, options?: RingOptions) {
    this.#ring = (secrets as unknown) === ADOPT ? (options as unknown as Ring) : ringFromSecrets(secrets, options);
  }

  static fromEnv(env?: Record<string, string | undefined>, options?: RingOptions): KeyRing {
    return new KeyRing(ADOPT as never, ringFromEnv(env, options) as never);
  }

  static forTenants(options?: RingOptions): KeyRing {
    const read = readOptions(options);
    if (read.keyIds || read.indexKey) {
      read.indexKey?.fill(0);
      throw invalidInput("a ring of tenants takes no keyIds or indexKey: each tenant's ring brings its own");
    }
    return new KeyRing(ADOPT as never, Ring.forTenants(read) as never);
  }

  setTenant(tenantId: string, secrets: Uint8Array[], options: RingOptions): void {
    const ring = KeyRing.#of(this);
    const tenant = readTenant(tenantId);
    ring.setTenant(tenant, ringFromSecrets(secrets, options));
  }

  deleteTenant(tenantId: string): boolean {
    const ring = KeyRing.#of(this);
    return ring.deleteTenant(readTenant(tenantId));
  }

  get tenants(): number {
    return KeyRing.#of(this).tenantCount;
  }

  /** The ring of `self`, which must be a KeyRing: its methods called on anything else throw `ALE_INVALID_INPUT`. */
  static #of(self: unknown): Ring {
    if (typeof self !== 'object' || self === null || !(#ring in self)) throw invalidInput('KeyRing methods must be called on a KeyRing');
    return (self as KeyRing).#ring;
  }

  encrypt(plaintext: string, tenantId: string, collectionId: string, fieldName: string): string {
    return encryptWith(KeyRing.#of(this), plaintext, tenantId, collectionId, fieldName);
  }

  decrypt(envelope: string, tenantId: string, collectionId: string, fieldName: string): string {
    return decryptWith(KeyRing.#of(this), envelope, tenantId, collectionId, fieldName);
  }

  encryptMany(plaintexts: string[], tenantId: string, collectionId: string, fieldName: string): string[] {
    const ring = KeyRing.#of(this);
    return mapValues(plaintexts, tenantId, collectionId, fieldName, (value, aad) => ring.seal(readText(value, 'plaintext'), aad));
  }

  decryptMany(envelopes: string[], tenantId: string, collectionId: string, fieldName: string): string[] {
    const ring = KeyRing.#of(this);
    return mapValues(envelopes, tenantId, collectionId, fieldName, (value, aad) => ring.open(readString(value, 'envelope'), aad));
  }

  /** Argument errors throw here, as the addon's do; the encryption's result or failure is the promise's. */
  encryptAsync(plaintext: string, tenantId: string, collectionId: string, fieldName: string): Promise<string> {
    const ring = KeyRing.#of(this);
    return ring.sealAsync(...args(tenantId, collectionId, fieldName, plaintext, readText, 'plaintext'));
  }

  decryptAsync(envelope: string, tenantId: string, collectionId: string, fieldName: string): Promise<string> {
    const ring = KeyRing.#of(this);
    const [text, aad] = args(tenantId, collectionId, fieldName, envelope, readString, 'envelope');
    ring.refuseOversized(text);
    return ring.openAsync(text, aad);
  }

  blindIndex(value: string, tenantId: string, collectionId: string, fieldName: string): string {
    return blindIndexWith(KeyRing.#of(this), value, tenantId, collectionId, fieldName, 0);
  }

  searchTokens(value: string, tenantId: string, collectionId: string, fieldName: string, options?: SearchOptions): Buffer {
    return searchTokensWith(KeyRing.#of(this), options, () => args(tenantId, collectionId, fieldName, value, readText, 'value'));
  }

  searchTokenText(value: string, tenantId: string, collectionId: string, fieldName: string, options?: SearchOptions): string {
    return wordText(searchTokensWith(KeyRing.#of(this), options, () => args(tenantId, collectionId, fieldName, value, readText, 'value')));
  }

  searchQuery(query: string, kind: 'contains' | 'prefix' | 'words', tenantId: string, collectionId: string, fieldName: string, options?: SearchOptions): Buffer {
    return searchQueryWith(KeyRing.#of(this), options, kind, () => queryArgs(tenantId, collectionId, fieldName, query));
  }

  rangeTokens(nodes: Uint8Array, tenantId: string, collectionId: string, fieldName: string, options?: RangeOptions): Buffer {
    const ring = KeyRing.#of(this);
    const secret = readSecret(options);
    const [bytes, aad] = args(tenantId, collectionId, fieldName, nodes, readBytes, 'nodes');
    return rangeTokensWith(ring, bytes, aad, secret);
  }

  blindIndexes(value: string, tenantId: string, collectionId: string, fieldName: string): string[] {
    return blindIndexesWith(KeyRing.#of(this), value, tenantId, collectionId, fieldName);
  }

  encryptBinary(plaintext: string, tenantId: string, collectionId: string, fieldName: string): Buffer {
    return encryptBinaryWith(KeyRing.#of(this), plaintext, tenantId, collectionId, fieldName);
  }

  decryptBinary(envelope: Uint8Array, tenantId: string, collectionId: string, fieldName: string): string {
    return decryptBinaryWith(KeyRing.#of(this), envelope, tenantId, collectionId, fieldName);
  }

  keyIndex(envelope: string, tenantId: string, collectionId: string, fieldName: string): number {
    const ring = KeyRing.#of(this);
    return ring.keyIndex(...args(tenantId, collectionId, fieldName, envelope, readString, 'envelope'));
  }

  get size(): number {
    return KeyRing.#of(this).secrets;
  }

  get ivLength(): 12 | 16 {
    return KeyRing.#of(this).ivLength;
  }

  stats(): Array<KeyStats> {
    return KeyRing.#of(this).stats();
  }

  setIvBudgetWarning(encryptions: number): void {
    const ring = KeyRing.#of(this);
    const n: unknown = encryptions;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1) throw invalidInput('encryptions must be a positive integer');
    ring.setIvBudgetWarning(n);
  }
}

// The process-wide ring. A worker thread has a module of its own, so the
// ring is also handed to threads started after initKeyRing() through
// worker_threads environment data (KeyObjects and the shared counters); a
// thread that started before it, or a ring set in another thread later, is
// not seen (the addon's ring is one for the whole process).
const SHARED_RING = '@sveltycms/ale: process-wide ring';
let processRing: Ring | null = null;

function currentRing(): Ring | null {
  if (processRing) return processRing;
  const shared = getEnvironmentData(SHARED_RING) as SharedRing | undefined;
  if (shared) processRing = Ring.adopt(shared);
  return processRing;
}

function requireRing(): Ring {
  const ring = currentRing();
  if (!ring) throw notInitialized();
  return ring;
}

export function initKeyRing(secrets?: Array<string | Uint8Array>, options?: RingOptions): void {
  processRing = secrets === undefined || secrets === null ? ringFromEnv(undefined, options) : ringFromSecrets(secrets, options);
  setEnvironmentData(SHARED_RING, processRing.share() as never);
}

export { searchMatches, searchNormalize };

export function isKeyRingInitialized(): boolean {
  return currentRing() !== null;
}

export function encrypt(plaintext: string, tenantId: string, collectionId: string, fieldName: string): string {
  return encryptWith(requireRing(), plaintext, tenantId, collectionId, fieldName);
}

export function decrypt(envelope: string, tenantId: string, collectionId: string, fieldName: string): string {
  return decryptWith(requireRing(), envelope, tenantId, collectionId, fieldName);
}

export function blindIndex(value: string, tenantId: string, collectionId: string, fieldName: string): string {
  return blindIndexWith(requireRing(), value, tenantId, collectionId, fieldName, 0);
}

export function blindIndexes(value: string, tenantId: string, collectionId: string, fieldName: string): string[] {
  return blindIndexesWith(requireRing(), value, tenantId, collectionId, fieldName);
}

export function searchTokens(value: string, tenantId: string, collectionId: string, fieldName: string, options?: SearchOptions): Buffer {
  const ring = requireRing();
  return searchTokensWith(ring, options, () => args(tenantId, collectionId, fieldName, value, readText, 'value'));
}

export function searchTokenText(value: string, tenantId: string, collectionId: string, fieldName: string, options?: SearchOptions): string {
  const ring = requireRing();
  return wordText(searchTokensWith(ring, options, () => args(tenantId, collectionId, fieldName, value, readText, 'value')));
}

export function searchQuery(query: string, kind: 'contains' | 'prefix' | 'words', tenantId: string, collectionId: string, fieldName: string, options?: SearchOptions): Buffer {
  const ring = requireRing();
  return searchQueryWith(ring, options, kind, () => queryArgs(tenantId, collectionId, fieldName, query));
}

export function rangeTokens(nodes: Uint8Array, tenantId: string, collectionId: string, fieldName: string, options?: RangeOptions): Buffer {
  const ring = requireRing();
  const secret = readSecret(options);
  const [bytes, aad] = args(tenantId, collectionId, fieldName, nodes, readBytes, 'nodes');
  return rangeTokensWith(ring, bytes, aad, secret);
}

export function encryptBinary(plaintext: string, tenantId: string, collectionId: string, fieldName: string): Buffer {
  return encryptBinaryWith(requireRing(), plaintext, tenantId, collectionId, fieldName);
}

export function decryptBinary(envelope: Uint8Array, tenantId: string, collectionId: string, fieldName: string): string {
  return decryptBinaryWith(requireRing(), envelope, tenantId, collectionId, fieldName);
}

export function envelopeToBytes(envelope: string): Buffer {
  return textToBinary(readString(envelope, 'envelope'));
}

export function envelopeFromBytes(envelope: Uint8Array): string {
  return binaryToText(readBytes(envelope, 'envelope'));
}

export function envelopeKeyId(envelope: string | Uint8Array): string | null {
  if (types.isUint8Array(envelope)) return keyIdText(parseBinary(envelope).keyId);
  const text = readString(envelope, 'envelope');
  const parts = parseText(text);
  decodeCiphertext(parts.ciphertext);
  return keyIdText(parts.keyId);
}

const keyIdText = (id: Uint8Array | null): string | null => (id === null ? null : Buffer.from(id).toString('base64url'));

export function isEnvelope(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  try {
    decodeCiphertext(parseText(value).ciphertext);
    return true;
  } catch {
    return false;
  }
}

// tsc checks that this module provides the generated API in full, with the
// generated types: the addon's own marker `__napiBindingTarget` aside.
type Api = Omit<typeof import('../../index.js'), '__napiBindingTarget'>;
type Provides<T extends Api> = T;
export type ProvidesTheGeneratedApi = Provides<typeof import('./index.js')>;
