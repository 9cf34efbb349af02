// The project's envelope vectors (testdata/envelopes.json, made with
// node:crypto alone by scripts/make-vectors.mjs), through this process's
// backend: npm test runs this file on the addon (Node, Bun bun:ffi and Bun
// Node-API) and on the node:crypto fallback; cargo test reads the same file
// (crates/core/tests/vectors.rs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ale, generatedJson } from './helpers.mjs';

const doc = JSON.parse(readFileSync(new URL('../testdata/envelopes.json', import.meta.url), 'utf8'));
const ringOf = (spec) => new ale.KeyRing([...(spec.secrets ?? []), ...(spec.secretsHex ?? []).map((h) => Buffer.from(h, 'hex'))], spec.options);
const codeOf = (fn) => {
  try {
    fn();
  } catch (e) {
    return e.code;
  }
  return 'no error';
};

test('vectors: the committed file is what scripts/make-vectors.mjs writes', () => {
  assert.deepEqual(generatedJson('make-vectors.mjs'), doc);
});

test(`vectors (${ale.backend}): every envelope opens to its plaintext, text and binary, and the two forms convert into each other`, () => {
  assert.ok(doc.open.length >= 7);
  for (const c of doc.open) {
    const ring = ringOf(doc.rings[c.ring]);
    const bytes = Buffer.from(c.binary, 'hex');
    assert.equal(ring.decrypt(c.text, ...c.context), c.plaintext, c.name);
    assert.equal(ring.decryptBinary(bytes, ...c.context), c.plaintext, `${c.name}: binary`);
    assert.equal(Buffer.from(ale.envelopeToBytes(c.text)).toString('hex'), c.binary, `${c.name}: text to binary`);
    assert.equal(ale.envelopeFromBytes(bytes), c.text, `${c.name}: binary to text`);
    assert.ok(ale.isEnvelope(c.text), c.name);
    const id = c.text.startsWith('v2:') ? doc.rings[c.ring].options.keyIds.find((k) => c.text.includes(k)) : null;
    assert.equal(ale.envelopeKeyId(c.text), id, `${c.name}: key id`);
    assert.equal(ale.envelopeKeyId(bytes), id, `${c.name}: key id, binary`);
  }
});

test(`vectors (${ale.backend}): every failure gives its code, and no ring is built from a refused secret`, () => {
  assert.ok(doc.errors.length >= 15);
  for (const c of doc.errors) {
    const ring = ringOf(doc.rings[c.ring]);
    const got = c.text !== undefined ? codeOf(() => ring.decrypt(c.text, ...c.context)) : codeOf(() => ring.decryptBinary(Buffer.from(c.binary, 'hex'), ...c.context));
    assert.equal(got, c.code, c.name);
  }
  for (const c of doc.badRings) assert.equal(codeOf(() => ringOf(c)), c.code, c.name);
  // what is not an envelope has no key id to give: the same codes as decryption's, before any key
  for (const c of doc.errors.filter((e) => ['ALE_MALFORMED_ENVELOPE', 'ALE_UNSUPPORTED_VERSION'].includes(e.code))) {
    assert.equal(codeOf(() => ale.envelopeKeyId(c.text ?? Buffer.from(c.binary, 'hex'))), c.code, `${c.name}: key id`);
  }
});
