// '@sveltycms/ale/sveltycms': a drop-in for SveltyCMS's own field-encryption
// module (src/utils/security/field-encryption.ts). Same exported names,
// signatures and semantics, so the CMS switches by changing one import; the
// work is done by the native KeyRing. What the module does, and where this
// one differs, is in docs/sveltycms.md.
import * as native from '../../index.js';
import type { KeyRing } from '../../index.js';
import { codedError, parseJson, stringifyJson, type CodedError } from '../shared/json.js';

/** Where a value lives: the tenant and the collection (the field is passed beside it). */
export interface FieldEncryptionContext {
  tenantId: string;
  collectionId: string;
}

/** What the failure hook receives when a stored value does not decrypt. Never plaintext or key material. */
export interface FieldDecryptionFailure {
  tenantId: string;
  collectionId: string;
  fieldName: string;
  /** `ALE_AUTH_FAILED`, `ALE_MALFORMED_ENVELOPE`, `ALE_INVALID_JSON`, ... */
  code: string;
  message: string;
}

export type FieldEncryptionLogger = (failure: FieldDecryptionFailure) => void;

const defaultLogger: FieldEncryptionLogger = (f) =>
  console.error(`[field-encryption] could not decrypt field "${f.fieldName}" of collection "${f.collectionId}" (tenant "${f.tenantId}"): ${f.code}: ${f.message}`);

let logger: FieldEncryptionLogger = defaultLogger;

/**
 * Sets the hook that hears of every value that fails to decrypt (the call
 * itself returns null, as the CMS's module does). Default: console.error.
 * `null` silences it; `undefined` restores the default.
 */
export function setFieldEncryptionLogger(hook: FieldEncryptionLogger | null | undefined): void {
  logger = hook === undefined ? defaultLogger : (hook ?? (() => {}));
}

/** The CMS's own test for an envelope: `v1:` and three non-empty base64url parts. */
const ENVELOPE = /^v1:[A-Za-z0-9_-]+:[A-Za-z0-9_-]+:[A-Za-z0-9_-]+$/;

export function isFieldEncryptionEnvelope(value: unknown): value is string {
  return typeof value === 'string' && ENVELOPE.test(value);
}

let cachedRing: KeyRing | null = null;

/**
 * The ring, built on first use from ENCRYPTION_KEY (or SECRET_ENCRYPTION_KEY)
 * and ENCRYPTION_KEY_PREVIOUS, then cached. A missing or unusable key is not
 * cached, so setting it later works without a reset.
 */
function keyRing(): KeyRing {
  if (cachedRing) return cachedRing;
  try {
    cachedRing = native.KeyRing.fromEnv();
  } catch (e) {
    const cause = e as CodedError;
    if (cause.code !== 'ALE_INVALID_KEY') throw e;
    throw Object.assign(codedError('FIELD_ENCRYPTION_UNAVAILABLE', `field encryption is unavailable: ${cause.message}`), { status: 503 });
  }
  return cachedRing;
}

/** Drops the cached key, so the next call reads the environment again. */
export function resetFieldEncryptionKeyCache(): void {
  cachedRing = null;
}

/** The AAD parts, spelled as the CMS's template literal spells them. */
function parts(ctx: FieldEncryptionContext, fieldName: string): [string, string, string] {
  return [`${ctx.tenantId}`, `${ctx.collectionId}`, `${fieldName}`];
}

/** `JSON.stringify(value)`, encrypted; an envelope is returned unchanged. */
export function encryptFieldValueSync(value: unknown, ctx: FieldEncryptionContext, fieldName: string): string {
  if (isFieldEncryptionEnvelope(value)) return value;
  const ring = keyRing();
  return ring.encrypt(stringifyJson(value), ...parts(ctx, fieldName));
}

/**
 * Like decryptFieldValueSync, but a value that does not decrypt throws its
 * coded error (`ALE_AUTH_FAILED`, `ALE_MALFORMED_ENVELOPE`,
 * `ALE_INVALID_JSON`, ...) instead of returning null.
 */
export function decryptFieldValueStrictSync<T = unknown>(stored: unknown, ctx: FieldEncryptionContext, fieldName: string): T {
  if (!isFieldEncryptionEnvelope(stored)) return stored as T;
  const ring = keyRing();
  return parseJson(ring.decrypt(stored, ...parts(ctx, fieldName))) as T;
}

/**
 * The stored value decrypted and parsed; a value that is not an envelope is
 * legacy plaintext and comes back unchanged. A value that fails (another
 * tenant, collection or field, a changed bit, JSON that does not parse) gives
 * null and is reported to the logger. Throws only when there is no key.
 */
export function decryptFieldValueSync<T = unknown>(stored: unknown, ctx: FieldEncryptionContext, fieldName: string): T | null {
  if (!isFieldEncryptionEnvelope(stored)) return stored as T;
  keyRing(); // no key throws FIELD_ENCRYPTION_UNAVAILABLE, not null
  try {
    return decryptFieldValueStrictSync<T>(stored, ctx, fieldName);
  } catch (e) {
    const { code = 'ALE_INTERNAL', message } = e as CodedError;
    const [tenantId, collectionId] = parts(ctx, fieldName);
    logger({ tenantId, collectionId, fieldName, code, message });
    return null;
  }
}

export async function encryptFieldValue(value: unknown, ctx: FieldEncryptionContext, fieldName: string): Promise<string> {
  return encryptFieldValueSync(value, ctx, fieldName);
}

export async function decryptFieldValue<T = unknown>(stored: unknown, ctx: FieldEncryptionContext, fieldName: string): Promise<T | null> {
  return decryptFieldValueSync<T>(stored, ctx, fieldName);
}

export async function decryptFieldValueStrict<T = unknown>(stored: unknown, ctx: FieldEncryptionContext, fieldName: string): Promise<T> {
  return decryptFieldValueStrictSync<T>(stored, ctx, fieldName);
}

/**
 * Encrypts the named fields of `doc` in place and returns it. Skips names
 * `doc` does not own, values that are undefined, null or "", and values that
 * already are envelopes.
 */
export function encryptDocumentFieldsSync<T extends Record<string, unknown>>(doc: T, fieldNames: readonly string[], ctx: FieldEncryptionContext): T {
  const fields = doc as Record<string, unknown>;
  for (const name of fieldNames) {
    if (!Object.hasOwn(doc, name)) continue;
    const value = fields[name];
    if (value === undefined || value === null || value === '' || isFieldEncryptionEnvelope(value)) continue;
    fields[name] = encryptFieldValueSync(value, ctx, name);
  }
  return doc;
}

/**
 * Decrypts, in place, every named field of `doc` that holds an envelope and
 * returns it. A field that fails becomes null (and is reported to the
 * logger): saving such a document back overwrites the stored envelope.
 */
export function decryptDocumentFieldsSync<T extends Record<string, unknown>>(doc: T, fieldNames: readonly string[], ctx: FieldEncryptionContext): T {
  const fields = doc as Record<string, unknown>;
  for (const name of fieldNames) {
    if (Object.hasOwn(doc, name) && isFieldEncryptionEnvelope(fields[name])) {
      fields[name] = decryptFieldValueSync(fields[name], ctx, name);
    }
  }
  return doc;
}

export async function encryptDocumentFields<T extends Record<string, unknown>>(doc: T, fieldNames: readonly string[], ctx: FieldEncryptionContext): Promise<T> {
  return encryptDocumentFieldsSync(doc, fieldNames, ctx);
}

export async function decryptDocumentFields<T extends Record<string, unknown>>(doc: T, fieldNames: readonly string[], ctx: FieldEncryptionContext): Promise<T> {
  return decryptDocumentFieldsSync(doc, fieldNames, ctx);
}

/** One stored value to check, with the context it was written for. */
export interface StoredFieldValue {
  value: unknown;
  tenantId: string;
  collectionId: string;
  fieldName: string;
}

/** What {@link checkStoredValues} found. Counts only; no value is kept. */
export interface StoredValuesReport {
  total: number;
  /** Not an envelope: legacy plaintext, read as it is. */
  plaintext: number;
  /** Opened by ENCRYPTION_KEY's own key. */
  primary: number;
  /** Opened by a key of ENCRYPTION_KEY_PREVIOUS: re-encrypt before dropping it. */
  previous: number;
  /** Opened by a passphrase's legacy key (SHA-256 or lenient base64): re-encrypt. */
  legacy: number;
  /** Did not open: by code, e.g. { ALE_AUTH_FAILED: 2 }. */
  failed: Record<string, number>;
  /** Values opened per key of the ring, in decryption order. */
  byKey: { index: number; secret: number; kind: string; opened: number }[];
}

/**
 * Opens every value (nothing is written) and counts which key opened it, so
 * a site can check its database before switching: every envelope should
 * open, and `previous` and `legacy` say how much rotation is left.
 * The ring defaults to the one the drop-in uses (from the environment).
 */
export function checkStoredValues(values: Iterable<StoredFieldValue>, options: { keyRing?: KeyRing } = {}): StoredValuesReport {
  const ring = options.keyRing ?? keyRing();
  const byKey = ring.stats().map(({ index, secret, kind }) => ({ index, secret, kind, opened: 0 }));
  const report: StoredValuesReport = { total: 0, plaintext: 0, primary: 0, previous: 0, legacy: 0, failed: {}, byKey };
  for (const { value, tenantId, collectionId, fieldName } of values) {
    report.total++;
    if (!isFieldEncryptionEnvelope(value)) {
      report.plaintext++;
      continue;
    }
    let index: number;
    try {
      index = ring.keyIndex(value, ...parts({ tenantId, collectionId }, fieldName));
    } catch (e) {
      const code = (e as CodedError).code ?? 'ALE_INTERNAL';
      report.failed[code] = (report.failed[code] ?? 0) + 1;
      continue;
    }
    byKey[index].opened++;
    if (index === 0) report.primary++;
    else if (index < ring.size) report.previous++;
    else report.legacy++;
  }
  return report;
}
