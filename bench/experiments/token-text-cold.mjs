// What a write pays for the search tokens' call when the caches are cold
// (docs/search.md, "What a search costs in the database"): the 4 KB texts'
// KeyRing#searchTokenText timed call by call, warm (right after another
// such call), and after sweeping enough memory to push the addon's code and
// data out of the core's caches, as a write's database and driver work do
// between two calls. Medians over rounds; the outputs feed a checksum.
//
//   node bench/experiments/token-text-cold.mjs [--sweep-mb 4] [--rounds 7]
//   bun bench/experiments/token-text-cold.mjs
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { searchTexts } from '../search-texts.mjs';
import { median } from '../stats.mjs';

const { values: flags } = parseArgs({ options: { 'sweep-mb': { type: 'string', default: '4' }, rounds: { type: 'string', default: '7' } } });
const require = createRequire(import.meta.url);
const ale = require('../../index.js');
const { wordText } = require('../../dist/cjs/shared/search-words.js');

const corpus = searchTexts(4096, 64);
const ring = new ale.KeyRing([Buffer.alloc(32, 7).toString('base64')]);
const CTX = ['acme', 'content_nodes', 'data'];
const WORDS = { contains: false, prefix: false, words: true };
for (const v of corpus) if (ring.searchTokenText(v, ...CTX, WORDS) !== wordText(ring.searchTokens(v, ...CTX, WORDS))) throw new Error('the text is not the tokens');

// one read and one write per 64-byte line
const sweep = new Uint32Array((Number(flags['sweep-mb']) * 1024 * 1024) / 4);
let sink = 0;
const evict = () => {
  for (let i = 0; i < sweep.length; i += 16) sink += sweep[i]++;
};
const timed = (v) => {
  const t0 = process.hrtime.bigint();
  const out = ring.searchTokenText(v, ...CTX, WORDS);
  const t = Number(process.hrtime.bigint() - t0) / 1000;
  sink += out.charCodeAt(out.length - 1);
  return t;
};
const rounds = { warm: [], cold: [] };
for (let r = -1; r < Number(flags.rounds); r++) {
  const warm = [];
  const cold = [];
  for (let i = 0; i < 2000; i++) {
    timed(corpus[i & 63]);
    warm.push(timed(corpus[(i + 1) & 63]));
  }
  for (let i = 0; i < 600; i++) {
    evict();
    cold.push(timed(corpus[i & 63]));
  }
  if (r < 0) continue;
  rounds.warm.push(median(warm));
  rounds.cold.push(median(cold));
}
if (sink === 0) throw new Error('unreachable');
const runtime = process.versions.bun ? `Bun ${process.versions.bun}` : `Node ${process.version}`;
const show = (s) => `${median(s).toFixed(2)} µs [${Math.min(...s).toFixed(2)}–${Math.max(...s).toFixed(2)}]`;
console.log(`${runtime}, searchTokenText of a 4 KB text, median of ${flags.rounds} rounds' medians [min–max]`);
console.log(`  ${'warm'.padEnd(22)} ${show(rounds.warm)}`);
console.log(`  ${`after a ${flags['sweep-mb']} MB sweep`.padEnd(22)} ${show(rounds.cold)}`);
