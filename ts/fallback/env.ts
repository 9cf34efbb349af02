// The secrets of an environment, the way SveltyCMS reads its key, then the
// previous secrets: the JavaScript backend's copy of src/secrets.rs
// (`ring_from_env`) and crates/core/src/previous.rs, where the rule and its
// reasons are; __test__/backends.test.mjs holds the two to one result.
import { invalidKey } from './errors.js';
import { textKind, trimAsciiSpace, type Labelled } from './keys.js';

const LIST = 'ENCRYPTION_KEY_PREVIOUS';
const NUMBERED = /^ENCRYPTION_KEY_PREVIOUS_([1-9][0-9]{0,8})$/;
/** A name that looks like a numbered variable, in any case: refused unless NUMBERED takes it, rather than passed over. */
const NUMBERED_LIKE = /^ENCRYPTION_KEY_PREVIOUS_[0-9]+$/i;

/**
 * `ENCRYPTION_KEY`, or `SECRET_ENCRYPTION_KEY` when that is unset or empty,
 * used exactly as written; then `ENCRYPTION_KEY_PREVIOUS`'s entries, each
 * trimmed; then `ENCRYPTION_KEY_PREVIOUS_<n>` in order of n, each as written;
 * then the list as written when its reading may have changed a secret (not
 * for a ring given `keyIds`, `keyed`). `vars` defaults to `process.env`.
 */
export function secretsFromEnv(vars: unknown, keyed: boolean): Labelled[] {
  const source = (vars === undefined || vars === null ? process.env : vars) as Record<string, unknown>;
  const read = (name: string): string | undefined => {
    const value = source[name];
    if (value === undefined) return undefined;
    if (typeof value !== 'string' || !value.isWellFormed()) throw invalidKey(name, 'must be a string');
    return value;
  };
  let primary: Labelled | undefined;
  for (const name of ['ENCRYPTION_KEY', 'SECRET_ENCRYPTION_KEY']) {
    const value = read(name);
    if (value) {
      primary = { label: name, value };
      break;
    }
  }
  if (!primary) {
    throw invalidKey(
      'ENCRYPTION_KEY',
      'is not set (nor SECRET_ENCRYPTION_KEY); set it to 32 random bytes as hex or base64, for example `openssl rand -base64 32`',
    );
  }
  const list = read(LIST);
  const numbered: [number, string][] = [];
  for (const name of Object.keys(source)) {
    if (!NUMBERED_LIKE.test(name)) continue;
    const n = NUMBERED.exec(name);
    if (!n) throw invalidKey(name, 'is not read: a numbered previous secret is ENCRYPTION_KEY_PREVIOUS_<n>, in upper case, with n from 1 to 999999999 and no leading zero');
    const value = read(name);
    if (value !== undefined) numbered.push([Number(n[1]), value]);
  }
  return [primary, ...previousSecrets(list, numbered, keyed)];
}

/** crates/core/src/previous.rs, `previous_secrets`. */
function previousSecrets(list: string | undefined, numbered: [number, string][], keyed: boolean): Labelled[] {
  const value = list ?? '';
  const entries = value
    .split(',')
    .map(trimAsciiSpace)
    .filter((entry) => entry !== '');
  const comma = value.includes(',');
  const short = comma ? entries.findIndex((entry) => textKind(entry) === undefined) : -1;
  if (short >= 0) {
    throw invalidKey(
      `${LIST}[${short}]`,
      'is shorter than 32 characters: the list is cut at its commas. A passphrase that holds a comma goes in ENCRYPTION_KEY_PREVIOUS_1 (or _2, ...), which is used exactly as written',
    );
  }
  const out: Labelled[] = entries.map((entry, i) => ({ label: `${LIST}[${i}]`, value: entry }));
  numbered.sort(([a], [b]) => a - b);
  for (const [n, secret] of numbered) if (secret !== '') out.push({ label: `${LIST}_${n}`, value: secret });
  const changed = !(entries.length === 1 && entries[0] === value);
  const passphrase = (entry: string) => textKind(entry) === 'passphrase';
  // As written, beside its entries: no near-miss warning of its own, since its trimmed reading is in the ring.
  if (!keyed && changed && entries.length > 0 && (!comma || entries.some(passphrase))) out.push({ label: LIST, value, asWritten: true });
  return out;
}
