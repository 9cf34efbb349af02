// The one way this package builds an error: an Error with a stable `ALE_*`
// code, which callers branch on, and a message for the person reading it
// that never holds key material, tokens or plaintext.
// __test__/errors.test.mjs checks that no other way is used in ts/, and that
// every code is in the README's table.

/** An Error with a stable `code`. */
export type CodedError = Error & { code: string };

/**
 * `ALE_*`, or a code SveltyCMS's own module throws, which its drop-in keeps
 * so that the CMS's handlers still match (docs/sveltycms.md).
 */
export type ErrorCode = `ALE_${string}` | 'FIELD_ENCRYPTION_UNAVAILABLE' | 'FIELD_ENCRYPTION_FAILED';

export function codedError(code: ErrorCode, message: string): CodedError {
  return Object.assign(new Error(message), { code });
}
