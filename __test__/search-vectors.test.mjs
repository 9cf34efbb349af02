// The project's search vectors (testdata/search.json, made with node:crypto
// alone by scripts/make-search-vectors.mjs), through this process's backend:
// npm test runs this file on the addon and on the node:crypto fallback, and
// cargo test reads the same file (crates/core/tests/search_vectors.rs). A
// change to what a searchable column stores fails here before it ships:
// rows indexed before it would no longer be found.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ale, generatedJson, hexOf } from './helpers.mjs';

const doc = JSON.parse(readFileSync(new URL('../testdata/search.json', import.meta.url), 'utf8'));
const ring = new ale.KeyRing([Buffer.from(doc.secretHex, 'hex')]);

test('search vectors: the committed file is what scripts/make-search-vectors.mjs writes', () => {
  assert.deepEqual(generatedJson('make-search-vectors.mjs'), doc);
});

test(`search vectors (${ale.backend}): each value's tokens and stored words are the independent construction's`, () => {
  assert.ok(doc.vectors.length >= 11);
  for (const v of doc.vectors) {
    assert.deepEqual(hexOf(ring.searchTokens(v.value, ...doc.context, v.options)), v.tokens, v.value);
    assert.equal(ring.searchTokenText(v.value, ...doc.context, v.options), v.words, v.value);
    // the form written by hand is the package's too: the same tokens from it
    assert.deepEqual(hexOf(ring.searchTokens(v.form, ...doc.context, v.options)), v.tokens, v.form);
  }
});
