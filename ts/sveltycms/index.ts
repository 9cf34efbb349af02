// '@sveltycms/ale/sveltycms': a drop-in for SveltyCMS's own field-encryption
// module (src/utils/security/field-encryption.ts). Same exported names,
// signatures and semantics, so the CMS switches by changing one import; the
// work is done by the native KeyRing. What the module does, and where this
// one differs, is in docs/sveltycms.md.
import * as native from '../../index.js';
import type { KeyRing } from '../../index.js';
import { codedError, type CodedError } from '../shared/errors.js';
import { parseJson, stringifyJson } from '../shared/json.js';

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

/**
 * The hook and the cached ring, once per process: an app that loads both
 * the ESM and the CommonJS build (its own code, and a dependency through
 * require()) would otherwise set the hook, or reset the ring after a key
 * change, in one copy and not the other. The first build loaded makes it.
 */
interface DropInState {
  logger: FieldEncryptionLogger;
  ring: KeyRing | null;
  /** Whether the loose context ids were reported (once per process). */
  warnedLoose: boolean;
}
const state: DropInState = ((globalThis as { [key: symbol]: DropInState })[Symbol.for('@sveltycms/ale/sveltycms-state@2')] ??= { logger: defaultLogger, ring: null, warnedLoose: false });

/**
 * Sets the hook that hears of every value that fails to decrypt (the call
 * itself returns null, as the CMS's module does), and, once, of a context
 * id that is not a string (code `ALE_INVALID_CONTEXT`). Default:
 * console.error. `null` silences it; `undefined` restores the default.
 */
export function setFieldEncryptionLogger(hook: FieldEncryptionLogger | null | undefined): void {
  state.logger = hook === undefined ? defaultLogger : (hook ?? (() => {}));
}

/**
 * Whether `value` is an envelope, recognised strictly: `v1:`, an IV of 22
 * or 16 characters, a tag of 22, and a non-empty ciphertext with no stray
 * bits (the core's own check; nothing is decrypted). Writing uses it: text
 * that merely looks like an envelope to the CMS's looser pattern, such as
 * `v1:sk_live_abc:acct:prod`, is encrypted here like any other value,
 * where the CMS stores it unencrypted. Reading uses the CMS's pattern
 * (`storedAsEnvelope`), so that a damaged envelope gives null, not its text
 * (docs/sveltycms.md, "Where it differs").
 */
export function isFieldEncryptionEnvelope(value: unknown): value is string {
  // The core reads an empty ciphertext (an empty string's envelope, which
  // encryptedText writes); the CMS never writes one, since JSON is never
  // empty, and its own test refuses it.
  return typeof value === 'string' && value.startsWith('v1:') && !value.endsWith(':') && native.isEnvelope(value);
}

/**
 * The ring, built on first use from ENCRYPTION_KEY (or SECRET_ENCRYPTION_KEY)
 * and ENCRYPTION_KEY_PREVIOUS, then cached. A missing or unusable key is not
 * cached, so setting it later works without a reset.
 */
function keyRing(): KeyRing {
  // Another installed version of the package in the process shares the state: its ring is not this one's kind.
  if (state.ring instanceof native.KeyRing) return state.ring;
  try {
    state.ring = native.KeyRing.fromEnv();
  } catch (e) {
    const cause = e as CodedError;
    if (cause.code !== 'ALE_INVALID_KEY') throw e;
    throw appError('FIELD_ENCRYPTION_UNAVAILABLE', 503, `field encryption is unavailable: ${cause.message}`);
  }
  return state.ring;
}

/** Drops the cached key, so the next call reads the environment again. */
export function resetFieldEncryptionKeyCache(): void {
  state.ring = null;
}

/** The CMS's own, looser test: `v1:` and three non-empty base64url parts. */
const LOOSE_ENVELOPE = /^v1:[A-Za-z0-9_-]+:[A-Za-z0-9_-]+:[A-Za-z0-9_-]+$/;

/**
 * Whether a stored value is read as an envelope: by the CMS's test, as its
 * module reads. A value it takes for one either opens or fails (null, and
 * a report): an envelope with a changed character, a part cut short or an
 * IV of the wrong length never reaches the caller as its text. So a
 * look-alike the CMS stored unencrypted reads null, as it does in the CMS.
 */
const storedAsEnvelope = (value: unknown): value is string => typeof value === 'string' && LOOSE_ENVELOPE.test(value);

/**
 * An error the CMS's handlers take for one of its own (its isAppError tests
 * the name): a response with this status and code instead of a 500 for an
 * unknown error. `cause` is the package's coded error, where there is one.
 */
function appError(code: 'FIELD_ENCRYPTION_UNAVAILABLE' | 'FIELD_ENCRYPTION_FAILED', status: number, message: string, cause?: unknown): CodedError {
  const error = Object.assign(codedError(code, message), { status });
  // As an Error's own name and cause are: not enumerable, so JSON.stringify(error) shows the code and status only.
  Object.defineProperty(error, 'name', { value: 'AppError', writable: true, enumerable: false, configurable: true });
  if (cause !== undefined) {
    // The CMS's handler logs `originalError` of a 500.
    for (const key of ['cause', 'originalError']) Object.defineProperty(error, key, { value: cause, writable: true, enumerable: false, configurable: true });
  }
  return error;
}

/** Whether a context id may be used as it is: a non-empty string. */
const usable = (id: unknown): id is string => typeof id === 'string' && id !== '';

/**
 * The AAD parts, spelled as the CMS's template literal spells them: an id
 * that is not a string becomes `"undefined"` or `"[object Object]"`, which
 * binds every such value to one context. That is kept for compatibility,
 * and reported once through the logger; the strict variants refuse it.
 */
function parts(ctx: FieldEncryptionContext, fieldName: string): [string, string, string] {
  // The CMS's module fails on a missing context too (a TypeError it turns into a failure of the call).
  if (ctx === null || typeof ctx !== 'object') throw codedError('ALE_INVALID_CONTEXT', `the context must be an object { tenantId, collectionId }, got ${ctx === null ? 'null' : typeof ctx}`);
  const raw = [ctx.tenantId, ctx.collectionId, fieldName];
  if (!state.warnedLoose && raw.some((id) => typeof id !== 'string')) {
    state.warnedLoose = true;
    const [tenantId, collectionId, field] = raw.map((id) => `${id}`);
    state.logger({
      tenantId,
      collectionId,
      fieldName: field,
      code: 'ALE_INVALID_CONTEXT',
      message: `a context id is not a string (${raw.map((id) => typeof id).join(', ')}); it is used as the text ${JSON.stringify([tenantId, collectionId, field].join(':'))}, as SveltyCMS does, so every value written this way shares one context. Pass string ids, or use the strict variants, which refuse it. Reported once.`,
    });
  }
  return [`${raw[0]}`, `${raw[1]}`, `${raw[2]}`];
}

/** The AAD parts, each a non-empty string; anything else is `ALE_INVALID_CONTEXT`. */
function strictParts(ctx: FieldEncryptionContext, fieldName: string): [string, string, string] {
  const named: [string, unknown][] = [
    ['tenantId', ctx?.tenantId],
    ['collectionId', ctx?.collectionId],
    ['fieldName', fieldName],
  ];
  for (const [name, id] of named) {
    if (!usable(id)) throw codedError('ALE_INVALID_CONTEXT', `${name} must be a non-empty string, got ${id === '' ? 'an empty string' : typeof id}`);
  }
  return named.map(([, id]) => id) as [string, string, string];
}

/**
 * `JSON.stringify(value)`, encrypted; an envelope is returned unchanged. A
 * value that cannot be encrypted (no JSON text, as `undefined` or a BigInt;
 * no context) throws FIELD_ENCRYPTION_FAILED with status 500, as the CMS's
 * module does; its `cause` holds the package's coded error.
 */
export function encryptFieldValueSync(value: unknown, ctx: FieldEncryptionContext, fieldName: string): string {
  if (isFieldEncryptionEnvelope(value)) return value;
  const ring = keyRing();
  try {
    return ring.encrypt(stringifyJson(value), ...parts(ctx, fieldName));
  } catch (e) {
    throw appError('FIELD_ENCRYPTION_FAILED', 500, `the value of field "${String(fieldName)}" could not be encrypted: ${(e as Error)?.message ?? String(e)}`, e);
  }
}

/** Options of the strict encrypt variants. */
export interface StrictEncryptOptions {
  /**
   * Refuse a value that already is an envelope (`ALE_INVALID_INPUT`)
   * instead of storing it unchanged. Set it where the value comes from a
   * user: a pasted envelope of another row would otherwise be stored as
   * this row's, and read back decrypted (SECURITY.md, "Envelopes as
   * input"). Default false, the CMS's behaviour.
   */
  refuseEnvelopes?: boolean;
}

/**
 * Like encryptFieldValueSync, but the context ids must be non-empty
 * strings (`ALE_INVALID_CONTEXT`), and with `refuseEnvelopes` a value that
 * already is an envelope is refused.
 */
export function encryptFieldValueStrictSync(value: unknown, ctx: FieldEncryptionContext, fieldName: string, options: StrictEncryptOptions = {}): string {
  const aad = strictParts(ctx, fieldName);
  if (isFieldEncryptionEnvelope(value)) {
    if (options.refuseEnvelopes) throw codedError('ALE_INVALID_INPUT', `the value of field "${aad[2]}" already is an envelope; it was refused (refuseEnvelopes), since a pasted envelope of another row would be stored as this one's`);
    return value;
  }
  return keyRing().encrypt(stringifyJson(value), ...aad);
}

export async function encryptFieldValueStrict(value: unknown, ctx: FieldEncryptionContext, fieldName: string, options?: StrictEncryptOptions): Promise<string> {
  return encryptFieldValueStrictSync(value, ctx, fieldName, options);
}

/**
 * Like decryptFieldValueSync, but a value that does not decrypt throws its
 * coded error (`ALE_AUTH_FAILED`, `ALE_MALFORMED_ENVELOPE`,
 * `ALE_INVALID_JSON`, ...) instead of returning null.
 */
export function decryptFieldValueStrictSync<T = unknown>(stored: unknown, ctx: FieldEncryptionContext, fieldName: string): T {
  const aad = strictParts(ctx, fieldName);
  if (!storedAsEnvelope(stored)) return stored as T;
  return readValue(keyRing(), stored, aad) as T;
}

/** decryptFieldValueSync's body: the CMS's spelling of the context ids. */
function decryptLoose<T>(stored: string, ctx: FieldEncryptionContext, fieldName: string): T {
  return readValue(keyRing(), stored, parts(ctx, fieldName)) as T;
}

/** A stored envelope as every read of the drop-in reads it: decrypted, then parsed as JSON. */
function readValue(ring: KeyRing, stored: string, aad: readonly [string, string, string]): unknown {
  return parseJson(ring.decrypt(stored, ...aad));
}

/**
 * The stored value decrypted and parsed; a value that is not an envelope is
 * legacy plaintext and comes back unchanged. A value that fails (another
 * tenant, collection or field, a changed bit, JSON that does not parse) gives
 * null and is reported to the logger. Throws only when there is no key.
 */
export function decryptFieldValueSync<T = unknown>(stored: unknown, ctx: FieldEncryptionContext, fieldName: string): T | null {
  if (!storedAsEnvelope(stored)) return stored as T;
  keyRing(); // no key throws FIELD_ENCRYPTION_UNAVAILABLE, not null
  try {
    return decryptLoose<T>(stored, ctx, fieldName);
  } catch (e) {
    // No context at all fails here too, so the report spells the ids without reading them again.
    const { code = 'ALE_INTERNAL', message } = e as CodedError;
    state.logger({ tenantId: `${ctx?.tenantId}`, collectionId: `${ctx?.collectionId}`, fieldName: `${fieldName}`, code, message });
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

/** A document after its fields `K` were encrypted: each may now hold an envelope. With names typed `string`, every field. */
export type SealedDocument<T, K extends string = string> = { [P in keyof T]: P extends K ? T[P] | string : T[P] };
/** A document after its fields `K` were decrypted: each that held a string may now hold any JSON value, or null. */
export type OpenedDocument<T, K extends string = string> = { [P in keyof T]: P extends K ? (string extends T[P] ? unknown : T[P]) : T[P] };

/**
 * Encrypts the named fields of `doc` in place and returns it. Skips names
 * `doc` does not own, values that are undefined, null or "", and values that
 * already are envelopes.
 */
export function encryptDocumentFieldsSync<T extends Record<string, unknown>, K extends string = string>(doc: T, fieldNames: readonly K[], ctx: FieldEncryptionContext): SealedDocument<T, K> {
  if (!doc || !fieldNames?.length) return doc as SealedDocument<T, K>; // as the CMS's module: no document, nothing to do
  const fields = doc as Record<string, unknown>;
  for (const name of fieldNames) {
    if (!Object.hasOwn(doc, name)) continue;
    const value = fields[name];
    if (value === undefined || value === null || value === '' || isFieldEncryptionEnvelope(value)) continue;
    fields[name] = encryptFieldValueSync(value, ctx, name);
  }
  return doc as SealedDocument<T, K>; // changed in place
}

/**
 * Decrypts, in place, every named field of `doc` that holds an envelope and
 * returns it. A field that fails becomes null (and is reported to the
 * logger): saving such a document back overwrites the stored envelope.
 */
export function decryptDocumentFieldsSync<T extends Record<string, unknown>, K extends string = string>(doc: T, fieldNames: readonly K[], ctx: FieldEncryptionContext): OpenedDocument<T, K> {
  if (!doc || !fieldNames?.length) return doc as OpenedDocument<T, K>;
  const fields = doc as Record<string, unknown>;
  for (const name of fieldNames) {
    if (Object.hasOwn(doc, name) && storedAsEnvelope(fields[name])) {
      fields[name] = decryptFieldValueSync(fields[name], ctx, name);
    }
  }
  return doc as OpenedDocument<T, K>; // changed in place
}

/**
 * Like encryptDocumentFieldsSync, but the context ids must be non-empty
 * strings (`ALE_INVALID_CONTEXT`), and with `refuseEnvelopes` a field that
 * already holds an envelope is refused (`ALE_INVALID_INPUT`) before any
 * field of `doc` is changed: the save path for documents users write.
 */
export function encryptDocumentFieldsStrictSync<T extends Record<string, unknown>, K extends string = string>(doc: T, fieldNames: readonly K[], ctx: FieldEncryptionContext, options: StrictEncryptOptions = {}): SealedDocument<T, K> {
  if (!doc || !fieldNames?.length) return doc as SealedDocument<T, K>;
  const fields = doc as Record<string, unknown>;
  const names = fieldNames.filter((name) => Object.hasOwn(doc, name) && fields[name] !== undefined && fields[name] !== null && fields[name] !== '');
  const sealed = names.map((name) => encryptFieldValueStrictSync(fields[name], ctx, name, options));
  names.forEach((name, i) => (fields[name] = sealed[i]));
  return doc as SealedDocument<T, K>; // changed in place
}

export async function encryptDocumentFieldsStrict<T extends Record<string, unknown>, K extends string = string>(doc: T, fieldNames: readonly K[], ctx: FieldEncryptionContext, options?: StrictEncryptOptions): Promise<SealedDocument<T, K>> {
  return encryptDocumentFieldsStrictSync(doc, fieldNames, ctx, options);
}

export async function encryptDocumentFields<T extends Record<string, unknown>, K extends string = string>(doc: T, fieldNames: readonly K[], ctx: FieldEncryptionContext): Promise<SealedDocument<T, K>> {
  return encryptDocumentFieldsSync(doc, fieldNames, ctx);
}

export async function decryptDocumentFields<T extends Record<string, unknown>, K extends string = string>(doc: T, fieldNames: readonly K[], ctx: FieldEncryptionContext): Promise<OpenedDocument<T, K>> {
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
  /**
   * Values the CMS's test takes for envelopes that are not well formed: a
   * damaged envelope (cut short, an IV of the wrong length), or text the
   * CMS stored unencrypted because it looked like one. Both read as null,
   * in the CMS as here; they are counted in `failed` too, under
   * ALE_MALFORMED_ENVELOPE. Look at these before switching.
   */
  envelopeLike: number;
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
 * open, and `previous` and `legacy` say how much rotation is left. A value
 * counts as opened only when it reads as decryptFieldValueSync reads it: one
 * whose plaintext is not JSON is counted under `failed` (ALE_INVALID_JSON).
 * The ring defaults to the one the drop-in uses (from the environment).
 */
export function checkStoredValues(values: Iterable<StoredFieldValue>, options: { keyRing?: KeyRing } = {}): StoredValuesReport {
  const ring = options.keyRing ?? keyRing();
  const byKey = ring.stats().map(({ index, secret, kind }) => ({ index, secret, kind, opened: 0 }));
  const report: StoredValuesReport = { total: 0, plaintext: 0, envelopeLike: 0, primary: 0, previous: 0, legacy: 0, failed: {}, byKey };
  for (const { value, tenantId, collectionId, fieldName } of values) {
    report.total++;
    if (!storedAsEnvelope(value)) {
      report.plaintext++;
      continue;
    }
    if (!isFieldEncryptionEnvelope(value)) report.envelopeLike++;
    let index: number;
    try {
      const aad = parts({ tenantId, collectionId }, fieldName);
      index = ring.keyIndex(value, ...aad);
      // Opened means read as the drop-in reads it: a value that authenticates but is not UTF-8 or JSON reads as null.
      readValue(ring, value, aad);
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
