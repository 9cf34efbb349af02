// The JS backend's errors: one constructor per `ALE_*` code, with the
// messages the native addon gives (crates/core/src/error.rs), and the
// argument readers every call shares. No message holds a secret, a key or a
// value's text; secrets are named by position or variable.
/// <reference lib="es2024.string" />
import { types } from 'node:util';
import { codedError, type CodedError } from '../shared/errors.js';

export type { CodedError };

export const invalidInput = (reason: string): CodedError => codedError('ALE_INVALID_INPUT', `invalid input: ${reason}`);

export const invalidKey = (which: string, reason: string): CodedError => codedError('ALE_INVALID_KEY', `${which}: ${reason}`);

export const invalidContext = (part: string, reason: string): CodedError =>
  codedError(
    'ALE_INVALID_CONTEXT',
    `invalid encryption context: ${part} ${reason} (tenant, collection and field must each be non-empty and must not contain ':')`,
  );

export const malformed = (reason: string): CodedError =>
  codedError('ALE_MALFORMED_ENVELOPE', `malformed envelope: ${reason} (expected v1:<iv>:<tag>:<ciphertext> or v2:<key id>:<iv>:<tag>:<ciphertext> in unpadded base64url)`);

export const malformedBinary = (reason: string): CodedError =>
  codedError(
    'ALE_MALFORMED_ENVELOPE',
    `malformed binary envelope: ${reason} (expected the version byte 0x01, or 0x02 and a 16-byte key id, then the IV length 16 or 12, the IV, a 16-byte tag and the ciphertext)`,
  );

/** `version` is the decimal digits as stored; shown saturated at 2^64 − 1, as the addon shows it. */
export function unsupportedVersion(version: string | number): CodedError {
  const v = BigInt(version);
  const shown = v > 0xffff_ffff_ffff_ffffn ? 0xffff_ffff_ffff_ffffn : v;
  return codedError('ALE_UNSUPPORTED_VERSION', `unsupported envelope version v${shown}: this build reads v1 and v2; upgrade @sveltycms/ale to read it`);
}

export const keyNotLoaded = (): CodedError =>
  codedError(
    'ALE_KEY_NOT_LOADED',
    "a key of the tenant is not loaded (the tenant's, or the one a v2 envelope names): load the tenant's keys first, with withTenant(tenantId, fn) or keys.load(tenantId)",
  );

export const authFailed = (): CodedError =>
  codedError(
    'ALE_AUTH_FAILED',
    'authentication failed: the value was altered, belongs to another tenant/collection/field, or was written under a key that is not in the ring',
  );

export const notInitialized = (): CodedError =>
  codedError(
    'ALE_NOT_INITIALIZED',
    'the process-wide key ring is not initialized: call initKeyRing() (it reads ENCRYPTION_KEY) before encrypt()/decrypt(), or use a KeyRing instance',
  );

export const tooLarge = (max: number): CodedError =>
  codedError(
    'ALE_ENVELOPE_TOO_LARGE',
    `the stored value is longer than the maximum envelope length (${max} characters) and was not read; raise the ring's maxEnvelopeLength if values this large are expected`,
  );

export const tooLargeToSeal = (max: number): CodedError =>
  codedError(
    'ALE_ENVELOPE_TOO_LARGE',
    `the value's envelope would be longer than the maximum envelope length (${max} characters), which decryption refuses, so it was not encrypted; raise maxEnvelopeLength on every ring that writes or reads values this large`,
  );

export const notUtf8 = (): CodedError => invalidInput('the decrypted value is not UTF-8 text; it was not written by a string API');

export const engineFailure = (reason: string): CodedError => codedError('ALE_ENGINE_FAILURE', `the JavaScript engine refused: ${reason}`);

const rngUnavailable = (): CodedError =>
  codedError('ALE_RNG_UNAVAILABLE', "the operating system's random number generator failed; nothing was encrypted");

/**
 * Runs `make`, which creates a string or a buffer, and turns the engine's
 * refusal (a string longer than it allows, memory it cannot allocate) into
 * `ALE_ENGINE_FAILURE`. The engine's own message names sizes only.
 */
export function engine<T>(make: () => T): T {
  try {
    return make();
  } catch (e) {
    if (e instanceof RangeError || (e as { code?: unknown }).code === 'ERR_STRING_TOO_LONG') {
      throw engineFailure((e as Error).message);
    }
    throw e;
  }
}

/** Runs `draw`, which reads the OS random generator; its failure is `ALE_RNG_UNAVAILABLE`. */
export function random<T>(draw: () => T): T {
  try {
    return draw();
  } catch {
    throw rngUnavailable();
  }
}

/** `typeof value` in words, for messages. */
export function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  const t = typeof value;
  return t === 'object' ? 'an object' : `a ${t}`;
}

/**
 * Whether `value` is an array as the addon tells one (`napi_is_array`): a
 * Proxy of an array is not, though Array.isArray says it is.
 */
export function isArray(value: unknown): value is unknown[] {
  return !types.isProxy(value) && Array.isArray(value); // Array.isArray throws on a revoked Proxy
}

/** `value` when it is a string, else `ALE_INVALID_INPUT` naming `what`. */
export function readString(value: unknown, what: string): string {
  if (typeof value !== 'string') throw invalidInput(`${what} must be a string, got ${typeName(value)}`);
  return value;
}

/**
 * `value` when it is a string that UTF-8 carries unchanged: a lone UTF-16
 * surrogate is refused, never replaced with U+FFFD.
 */
export function readText(value: unknown, what: string): string {
  const text = readString(value, what);
  if (!text.isWellFormed()) {
    throw invalidInput(
      `${what} contains a lone UTF-16 surrogate, which cannot be stored as text without changing it; repair the string first (String.prototype.toWellFormed)`,
    );
  }
  return text;
}

/** The bytes of a `Uint8Array` (a `Buffer` is one), else `ALE_INVALID_INPUT` naming `what`. */
export function readBytes(value: unknown, what: string): Uint8Array {
  if (!types.isUint8Array(value)) throw invalidInput(`${what} must be a Buffer or Uint8Array`);
  return value;
}
