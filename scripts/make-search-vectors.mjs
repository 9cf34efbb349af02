// Writes testdata/search.json: search tokens and the words the SQLite and
// MySQL index columns store, made here with node:crypto alone from the
// scheme in docs/search.md ("The scheme", "Words of 30 bits"), not with
// this package, so that the Rust core (cargo test), the addon and the
// node:crypto fallback are each checked against an independent
// construction, and a change to what a searchable column stores cannot
// pass unnoticed: rows indexed before it would no longer be found.
//
// Each vector carries its value's matching form, written out by hand
// (NFKC, full case folding, accents dropped where asked): the generator
// does not normalize, it takes the form the docs give and makes the grams,
// tokens and words from it. Deterministic: a rerun writes the same file.
//   node scripts/make-search-vectors.mjs [out.json]   (default testdata/search.json)
import { createCipheriv, createHash, hkdfSync } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const SECRET = createHash('sha512').update('search vectors: secret').digest().subarray(0, 32);
const CONTEXT = ['tenant-1', 'users', 'name'];
const MAX_PREFIX = 6;

/** A secret's blind-index key, and a column's token key from it. */
const hkdf = (ikm, info) => Buffer.from(hkdfSync('sha256', ikm, Buffer.alloc(0), info, 32));
const indexKey = hkdf(SECRET, Buffer.from('sveltycms-blind-index'));
const columnKey = (context) => hkdf(indexKey, Buffer.concat([Buffer.from('sveltycms-search-v1\0'), Buffer.from(context.join(':'), 'utf8')]));

/** AES-CMAC (RFC 4493) of `message` under `key`, with node:crypto's AES-256 as the block cipher. */
function cmac(key, message) {
  const aes = (block) => {
    const c = createCipheriv('aes-256-ecb', key, null).setAutoPadding(false);
    return Buffer.concat([c.update(block), c.final()]);
  };
  const double = (b) => {
    const n = (BigInt(`0x${b.toString('hex')}`) << 1n) & ((1n << 128n) - 1n);
    return Buffer.from((n ^ (b[0] & 0x80 ? 0x87n : 0n)).toString(16).padStart(32, '0'), 'hex');
  };
  const k1 = double(aes(Buffer.alloc(16)));
  const k2 = double(k1);
  const blocks = Math.max(1, Math.ceil(message.length / 16));
  const complete = message.length > 0 && message.length % 16 === 0;
  const last = Buffer.alloc(16);
  message.copy(last, 0, (blocks - 1) * 16);
  if (!complete) last[message.length - (blocks - 1) * 16] = 0x80;
  const sub = complete ? k1 : k2;
  let x = Buffer.alloc(16);
  for (let i = 0; i < blocks; i++) {
    const block = i + 1 === blocks ? last.map((b, j) => b ^ sub[j]) : message.subarray(i * 16, i * 16 + 16);
    x = aes(x.map((b, j) => b ^ block[j]));
  }
  return x;
}

/** The grams of a matching form, by kind: trigrams ('c'), words ('w'), word prefixes ('p'). */
function grams(form, indexes) {
  const chars = [...form];
  const words = form.match(/[\p{Alphabetic}\p{N}\p{M}]+/gu) ?? [];
  const out = [];
  if (indexes.contains) for (let i = 0; i + 3 <= chars.length; i++) out.push(['c', chars.slice(i, i + 3).join('')]);
  if (indexes.words) for (const w of words) out.push(['w', w]);
  if (indexes.prefix) for (const w of words) for (let n = 1; n <= Math.min(MAX_PREFIX, [...w].length); n++) out.push(['p', [...w].slice(0, n).join('')]);
  return out;
}

/** A value's tokens: each gram's first 8 bytes of CMAC(kind ‖ gram), sorted and distinct, as hex. */
function tokens(form, indexes, context) {
  const key = columnKey(context);
  const all = grams(form, indexes).map(([kind, gram]) => cmac(key, Buffer.concat([Buffer.from(kind), Buffer.from(gram, 'utf8')])).subarray(0, 8).toString('hex'));
  return [...new Set(all)].sort();
}

/** The words an index column stores: each token's first 30 bits as 6 base32hex digits, a repeat of the word before left out. */
function words(hexTokens) {
  const out = [];
  for (const t of hexTokens) {
    const w = (BigInt(`0x${t}`) >> 34n).toString(32).padStart(6, '0');
    if (out.at(-1) !== w) out.push(w);
  }
  return out.join(' ');
}

const ALL = { contains: true, prefix: true, words: true };
const WORDS = { contains: false, prefix: false, words: true };
const CASES = [
  { value: 'Jane Doe', form: 'jane doe', indexes: ALL },
  { value: 'jane.doe@example.com', form: 'jane.doe@example.com', indexes: ALL },
  { value: 'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod', form: 'lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod', indexes: WORDS },
  // ß folds to ss; Σ and final ς fold to σ
  { value: 'Straße Σίσυφος', form: 'strasse σίσυφοσ', indexes: ALL },
  // fullwidth letters are NFKC's compatibility forms of ASCII
  { value: 'ＭÜLLER 東京都', form: 'müller 東京都', indexes: ALL },
  { value: 'Jürgen Müller', form: 'jurgen muller', indexes: ALL, accents: true },
  // a word longer than one CMAC block (more than 15 bytes, one more for the kind)
  { value: 'Donaudampfschifffahrt', form: 'donaudampfschifffahrt', indexes: ALL },
  // a word of 15 bytes: with the kind, one whole block (CMAC's K1, unpadded)
  { value: 'Characteristics', form: 'characteristics', indexes: WORDS },
  // vowel signs are combining marks: word characters, kept without accent folding
  { value: 'हिन्दी भाषा', form: 'हिन्दी भाषा', indexes: ALL },
  { value: 'Müller-Lüdenscheid', form: 'müller-lüdenscheid', indexes: { contains: true, prefix: false, words: false } },
  // two characters: no trigram
  { value: 'Al', form: 'al', indexes: ALL },
];

const vectors = CASES.map(({ value, form, indexes, accents = false }) => {
  const hex = tokens(form, indexes, CONTEXT);
  return { value, form, options: { ...indexes, accents }, tokens: hex, words: words(hex) };
});
const doc = {
  source: 'scripts/make-search-vectors.mjs (node:crypto alone, from docs/search.md)',
  secretHex: SECRET.toString('hex'),
  context: CONTEXT,
  vectors,
};
const out = process.argv[2] ?? join(root, 'testdata/search.json');
writeFileSync(out, `${JSON.stringify(doc, null, 2)}\n`);
