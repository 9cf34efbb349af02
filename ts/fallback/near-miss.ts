// A secret that nearly matched a key rule and resolved by another: the
// JavaScript backend's copy of crates/core/src/near_miss.rs (the contract
// and the reasons are there), held to it by __test__/near-miss.test.mjs.
import { rawKind, textKind, trimAsciiSpace, type Labelled } from './keys.js';

/** What `text` nearly was, for a warning (nothing of the value); undefined when nothing. */
export function nearMiss(text: string): string | undefined {
  if (textKind(text) === undefined) return undefined;
  const kind = rawKind(text);
  if (kind === 'hex') return undefined;
  const hexDigits = text.match(/[0-9a-fA-F]/g)?.length ?? 0;
  if (text.length === 64 && hexDigits >= 60) {
    return 'is 64 characters, nearly all hex digits, so it is read as base64 or as a passphrase; a hex key is exactly 64 hex digits (0-9, a-f)';
  }
  if (kind !== undefined) return undefined;
  const isKey = (t: string) => (textKind(t) ?? 'passphrase') !== 'passphrase';
  const trimmed = trimAsciiSpace(text);
  if (trimmed.length !== text.length && isKey(trimmed)) {
    return 'has white space or a line break around a value that would be a key (hex or base64) without it; it is not trimmed';
  }
  const quoted = /^(["'`])([\s\S]*)\1$/.exec(trimmed);
  if (quoted && isKey(trimAsciiSpace(quoted[2]))) return 'is in quotes, and would be a key (hex or base64) without them';
  const bytes = shortBase64(trimmed);
  if (bytes !== undefined) return `looks like base64 of ${bytes} bytes; a base64 key is 32 bytes (44 characters: \`openssl rand -base64 32\`)`;
  return undefined;
}

/** What `text` decodes to when it reads as generated base64 of under 32 bytes (near_miss.rs, short_base64). */
function shortBase64(text: string): number | undefined {
  const body = text.replace(/=+$/, '');
  const padding = text.length - body.length;
  const generated =
    padding <= 2 && /^[A-Za-z0-9+/_-]*$/.test(body) && (padding > 0 || text.length % 4 === 0) && /[A-Z]/.test(body) && /[a-z]/.test(body) && /[0-9]/.test(body);
  const decoded = Math.floor((body.length * 3) / 4);
  return generated && decoded < 32 ? decoded : undefined;
}

/** Whether this process has warned of a near-miss secret (src/secrets.rs keeps the same once-per-process rule). */
let warnedNearMiss = false;

/** One ALE_KEY_NEAR_MISS warning naming each text secret that nearly matched a key rule, by label and rule; emitted after the call returns. */
export function warnNearMisses(secrets: Labelled[]): void {
  const found = secrets.flatMap(({ label, value, asWritten }) => {
    const rule = typeof value === 'string' && !asWritten ? nearMiss(value) : undefined;
    return rule === undefined ? [] : [`${label} ${rule}`];
  });
  if (found.length === 0 || warnedNearMiss) return;
  warnedNearMiss = true;
  const message =
    `@sveltycms/ale: ${found.join('; ')}. It is used as it resolves, as SveltyCMS resolves it; if it was meant as a key, fix it ` +
    'before values are sealed with it, or they will not open under the corrected one.';
  setImmediate(() => process.emitWarning(message, 'AleWarning', 'ALE_KEY_NEAR_MISS'));
}
