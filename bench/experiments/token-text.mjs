// A 4 KB text's search tokens as the text SQLite FTS5 and MySQL FULLTEXT
// index (docs/search.md, "What a search costs in the database"): made by
// the addon in the call that makes the tokens (KeyRing#searchTokenText,
// what the Drizzle columns of those dialects use now), against a Buffer of
// tokens made into that text in JS (wordText, as the JS backend does); the
// Buffer alone for reference. bench/search.mjs's 4 KB texts and word index,
// interleaved rounds, each string flattened as a driver binding it would;
// outputs compared first.
//
//   node bench/experiments/token-text.mjs [--rounds 20]
//   bun bench/experiments/token-text.mjs
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { searchTexts } from '../search-texts.mjs';
import { median } from '../stats.mjs';

const { values: flags } = parseArgs({ options: { rounds: { type: 'string', default: '20' } } });
const ROUNDS = Number(flags.rounds);
const require = createRequire(import.meta.url);
const ale = require('../../index.js');
const { wordText } = require('../../dist/cjs/shared/search-words.js');

const corpus = searchTexts(4096, 64);
const ring = new ale.KeyRing([Buffer.alloc(32, 7).toString('base64')]);
const CTX = ['acme', 'content_nodes', 'data'];
const WORDS = { contains: false, prefix: false, words: true };

const sides = {
  'searchTokenText (the addon writes the text)': (v) => ring.searchTokenText(v, ...CTX, WORDS),
  'searchTokens + wordText (the text made in JS)': (v) => wordText(ring.searchTokens(v, ...CTX, WORDS)),
  'searchTokens alone (a Buffer)': (v) => ring.searchTokens(v, ...CTX, WORDS),
};
for (const v of corpus) {
  const text = sides['searchTokenText (the addon writes the text)'](v);
  if (text !== sides['searchTokens + wordText (the text made in JS)'](v)) throw new Error('the two ways made other text');
}
const tokens = corpus.reduce((n, v) => n + ring.searchTokens(v, ...CTX, WORDS).length / 8, 0) / corpus.length;

const N = 2000;
const samples = Object.fromEntries(Object.keys(sides).map((k) => [k, []]));
for (let r = -2; r < ROUNDS; r++) {
  const order = r % 2 ? Object.keys(sides) : Object.keys(sides).reverse();
  for (const name of order) {
    const make = sides[name];
    let sink = 0;
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < N; i++) {
      const out = make(corpus[i & 63]);
      // the last character: flattens a string, as binding it would
      sink += typeof out === 'string' ? out.charCodeAt(out.length - 1) : out[out.length - 1];
    }
    if (r >= 0) samples[name].push(Number(process.hrtime.bigint() - t0) / N / 1000);
    if (sink === 0) throw new Error('unreachable');
  }
}
const runtime = process.versions.bun ? `Bun ${process.versions.bun}` : `Node ${process.version}`;
console.log(`${runtime}, 4 KB texts (${tokens.toFixed(0)} word tokens on average), ${ROUNDS} rounds of ${N}; µs a value, median [min–max]`);
for (const [name, s] of Object.entries(samples)) console.log(`  ${name.padEnd(46)} ${median(s).toFixed(2)} [${Math.min(...s).toFixed(2)}–${Math.max(...s).toFixed(2)}]`);
