// JSON for encrypted values, shared by the Drizzle layer and the SveltyCMS
// drop-in. A SyntaxError from JSON.parse quotes the text it choked on, which
// here is authentic plaintext, so it never reaches a caller or a log: it is
// replaced by a coded error that says what happened and nothing of the value.

import { codedError } from './errors.js';

/** `JSON.parse(text)`, or `ALE_INVALID_JSON` with `message`, without the text or the parser's message. */
export function parseJson(text: string, message = 'the decrypted value is not valid JSON (it was not written by a JSON column)'): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw codedError('ALE_INVALID_JSON', message);
  }
}

/** `JSON.stringify(value)`, or `ALE_INVALID_INPUT` for a value JSON cannot carry (undefined, a function, a symbol, a BigInt, a cycle). */
export function stringifyJson(value: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    throw codedError('ALE_INVALID_INPUT', 'the value cannot be serialised as JSON (a BigInt or a cycle)');
  }
  if (typeof text !== 'string') {
    throw codedError('ALE_INVALID_INPUT', `the value cannot be serialised as JSON (${typeof value})`);
  }
  return text;
}
