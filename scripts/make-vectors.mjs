// Writes testdata/envelopes.json: envelopes and their failures, made here
// with node:crypto alone from the format in docs/format.md (not with this
// package), so that the Rust core (cargo test), the addon and the
// node:crypto fallback are each checked against an independent construction.
// Deterministic: fixed keys and IVs, so a rerun writes the same file.
//   node scripts/make-vectors.mjs [out.json]   (default testdata/envelopes.json)
import { createCipheriv, createHash, hkdfSync } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const b64u = (bytes) => Buffer.from(bytes).toString('base64url');

/** A fixed byte string of `n` bytes from a label. */
const bytesOf = (label, n) => createHash('sha512').update(label).digest().subarray(0, n);

const HEX = bytesOf('vectors: hex key', 32).toString('hex');
const PASSPHRASE = 'vectors: a passphrase of at least 32 characters';
const PASSPHRASE_KEY = Buffer.from(hkdfSync('sha256', Buffer.from(PASSPHRASE), Buffer.from('sveltycms-aes-gcm-v1'), Buffer.from('sveltycms-field-at-rest'), 32));
const KEY_ID = b64u(bytesOf('vectors: key id 1', 16));
const OTHER_ID = b64u(bytesOf('vectors: key id 2', 16));
const OTHER_HEX = bytesOf('vectors: second hex key', 32).toString('hex');
const CONTEXT = ['tenant-1', 'users', 'email'];

/** One envelope, text and binary, sealed with node:crypto as docs/format.md says. */
function seal({ key, plaintext, ivLength, keyId, context = CONTEXT, label }) {
  const iv = bytesOf(`vectors: iv ${label}`, ivLength);
  const id = keyId ? Buffer.from(keyId, 'base64url') : null;
  const aad = Buffer.concat([...(id ? [id] : []), Buffer.from(context.join(':'), 'utf8')]);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: 16 });
  cipher.setAAD(aad);
  const ct = Buffer.concat([cipher.update(Buffer.isBuffer(plaintext) ? plaintext : Buffer.from(plaintext, 'utf8')), cipher.final()]);
  const tag = cipher.getAuthTag();
  const text = id ? `v2:${keyId}:${b64u(iv)}:${b64u(tag)}:${b64u(ct)}` : `v1:${b64u(iv)}:${b64u(tag)}:${b64u(ct)}`;
  const binary = Buffer.concat([Buffer.of(id ? 2 : 1), ...(id ? [id] : []), Buffer.of(ivLength), iv, tag, ct]);
  return { text, binary: binary.toString('hex') };
}

const hexKey = Buffer.from(HEX, 'hex');
const rings = {
  hex: { secrets: [HEX] },
  passphrase: { secrets: [PASSPHRASE] },
  keyed: { secrets: [HEX, OTHER_HEX], options: { keyIds: [KEY_ID, OTHER_ID] } },
  small: { secrets: [HEX], options: { maxEnvelopeLength: 40 } },
};

const open = [];
const add = (name, ring, spec, plaintext) => open.push({ name, ring, context: spec.context ?? CONTEXT, ...seal({ ...spec, plaintext, label: name }), plaintext });
add('v1, 16-byte IV, a hex key', 'hex', { key: hexKey, ivLength: 16 }, 'alice@example.com');
add('v1, 12-byte IV', 'hex', { key: hexKey, ivLength: 12 }, 'alice@example.com');
add('v1, an empty value', 'hex', { key: hexKey, ivLength: 16 }, '');
add('v1, UTF-8 of every width', 'hex', { key: hexKey, ivLength: 16 }, 'Grüße ✓ 😀 日本語');
add('v1, a passphrase through HKDF-SHA-256', 'passphrase', { key: PASSPHRASE_KEY, ivLength: 16 }, 'under a passphrase');
add('v2, 12-byte IV, naming its key', 'keyed', { key: hexKey, ivLength: 12, keyId: KEY_ID }, 'under a named key');
add('v2, 16-byte IV, naming the second key', 'keyed', { key: Buffer.from(OTHER_HEX, 'hex'), ivLength: 16, keyId: OTHER_ID }, 'under the second key');

const good = seal({ key: hexKey, plaintext: 'x', ivLength: 16, label: 'error base' });
const goodV2 = seal({ key: hexKey, plaintext: 'x', ivLength: 12, keyId: KEY_ID, label: 'error base v2' });
const [, iv, tag, ct] = good.text.split(':');
const flipped = (hex, at) => {
  const b = Buffer.from(hex, 'hex');
  b[at] ^= 1;
  return b.toString('hex');
};
const errors = [
  { name: 'not an envelope', ring: 'hex', text: 'alice@example.com', code: 'ALE_MALFORMED_ENVELOPE' },
  { name: 'three parts', ring: 'hex', text: `v1:${iv}:${tag}`, code: 'ALE_MALFORMED_ENVELOPE' },
  { name: 'padding', ring: 'hex', text: `v1:${iv}==:${tag}:${ct}`, code: 'ALE_MALFORMED_ENVELOPE' },
  { name: 'an IV of 8 bytes', ring: 'hex', text: `v1:${b64u(bytesOf('vectors: 8-byte iv', 8))}:${tag}:${ct}`, code: 'ALE_MALFORMED_ENVELOPE' },
  { name: 'v2 with a key id of 21 characters', ring: 'keyed', text: goodV2.text.replace(KEY_ID, KEY_ID.slice(0, 21)), code: 'ALE_MALFORMED_ENVELOPE' },
  { name: 'v2 with no key id', ring: 'keyed', text: goodV2.text.replace(`${KEY_ID}:`, ''), code: 'ALE_MALFORMED_ENVELOPE' },
  { name: 'another alphabet', ring: 'hex', text: `v1:${iv.slice(0, 21)}+:${tag}:${ct}`, code: 'ALE_MALFORMED_ENVELOPE' },
  { name: 'version 3', ring: 'hex', text: `v3:${iv}:${tag}:${ct}`, code: 'ALE_UNSUPPORTED_VERSION' },
  { name: 'a version of 19 digits', ring: 'hex', text: `v${'9'.repeat(19)}:${iv}:${tag}:${ct}`, code: 'ALE_UNSUPPORTED_VERSION' },
  { name: 'a version of 20 digits', ring: 'hex', text: `v1${'0'.repeat(19)}:${iv}:${tag}:${ct}`, code: 'ALE_MALFORMED_ENVELOPE' },
  { name: 'a changed tag', ring: 'hex', text: `v1:${iv}:${b64u(Buffer.from(flipped(Buffer.from(tag, 'base64url').toString('hex'), 0), 'hex'))}:${ct}`, code: 'ALE_AUTH_FAILED' },
  { name: 'another context', ring: 'hex', text: good.text, context: ['tenant-2', 'users', 'email'], code: 'ALE_AUTH_FAILED' },
  { name: 'another key', ring: 'passphrase', text: good.text, code: 'ALE_AUTH_FAILED' },
  { name: 'v2 whose id is changed to another key of the ring', ring: 'keyed', text: goodV2.text.replace(KEY_ID, OTHER_ID), code: 'ALE_AUTH_FAILED' },
  { name: 'v2 naming a key the ring lacks', ring: 'keyed', text: goodV2.text.replace(KEY_ID, b64u(bytesOf('vectors: unknown id', 16))), code: 'ALE_KEY_NOT_LOADED' },
  { name: 'a context with ":"', ring: 'hex', text: good.text, context: ['tenant:1', 'users', 'email'], code: 'ALE_INVALID_CONTEXT' },
  { name: 'longer than maxEnvelopeLength', ring: 'small', text: good.text, code: 'ALE_ENVELOPE_TOO_LARGE' },
  {
    name: 'authentic bytes that are not UTF-8',
    ring: 'hex',
    text: seal({ key: hexKey, plaintext: Buffer.from([0xff, 0xfe]), ivLength: 16, label: 'not utf8' }).text,
    code: 'ALE_INVALID_INPUT',
  },
  { name: 'binary: empty', ring: 'hex', binary: '', code: 'ALE_MALFORMED_ENVELOPE' },
  { name: 'binary: a version byte alone', ring: 'hex', binary: '01', code: 'ALE_MALFORMED_ENVELOPE' },
  { name: 'binary: an IV length of 8', ring: 'hex', binary: `0108${good.binary.slice(4)}`, code: 'ALE_MALFORMED_ENVELOPE' },
  { name: 'binary: version 3', ring: 'hex', binary: `03${good.binary.slice(2)}`, code: 'ALE_UNSUPPORTED_VERSION' },
  { name: 'binary: v2 cut inside its key id', ring: 'keyed', binary: goodV2.binary.slice(0, 2 + 2 * 10), code: 'ALE_MALFORMED_ENVELOPE' },
  { name: 'binary: a changed ciphertext byte', ring: 'hex', binary: flipped(good.binary, good.binary.length / 2 - 1), code: 'ALE_AUTH_FAILED' },
];
const badRings = [
  { name: 'a secret of 31 characters', secrets: ['x'.repeat(31)], code: 'ALE_INVALID_KEY' },
  { name: 'a 31-byte key', secretsHex: [HEX.slice(0, 62)], code: 'ALE_INVALID_KEY' },
  { name: 'two ids for one secret', secrets: [HEX], options: { keyIds: [KEY_ID, OTHER_ID] }, code: 'ALE_INVALID_INPUT' },
];

const file = {
  source: 'scripts/make-vectors.mjs: node:crypto and docs/format.md, not this package; regenerate with `node scripts/make-vectors.mjs`',
  rings,
  open,
  errors: errors.map((e) => ({ context: CONTEXT, ...e })),
  badRings,
};
const out = process.argv[2] ?? join(root, 'testdata', 'envelopes.json');
writeFileSync(out, `${JSON.stringify(file, null, 2)}\n`);
console.log(`${out}: ${open.length} envelopes, ${errors.length} failures, ${badRings.length} refused rings`);
