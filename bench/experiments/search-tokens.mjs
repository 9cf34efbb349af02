// The per-value cost of search tokens (docs/search.md): a 256 B value's
// "contains" index, and all three indexes, on the addon and on the same
// scheme through node:crypto (the JS backend), interleaved in one process,
// with their outputs compared first. The target: at most 5 µs for
// the contains index on Node 24, and at least 20× less than node:crypto.
//
//   node --expose-gc bench/experiments/search-tokens.mjs [--rounds 20] [--iterations 20000]
//   bun bench/experiments/search-tokens.mjs
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { payload, timeBatches } from '../micro.mjs';
import { median } from '../stats.mjs';

const { values: flags } = parseArgs({ options: { rounds: { type: 'string', default: '20' }, iterations: { type: 'string', default: '20000' } } });
const require = createRequire(import.meta.url);
const native = require('../../index.js');
const js = require('../../dist/cjs/fallback/index.js');
const SECRET = 'bench-secret-0123456789-abcdefghijklmnop';
const CTX = ['tenant-bench', 'content_nodes', 'name'];
const rings = { native: new native.KeyRing([SECRET]), js: new js.KeyRing([SECRET]) };
const values = {
  '256 B ASCII': payload(256),
  '256 B multi-script': 'Jürgen Müller (Lüdenscheid) — Иван Петров, 東京都渋谷区 1-2-3; İstanbul\'da çalışıyor. Ἀθῆναι, नमस्ते दुनिया. '.repeat(3).slice(0, 110),
};
const INDEXES = { contains: { contains: true, prefix: false, words: false }, 'all three': {} };
const runtime = process.versions.bun ? `Bun ${process.versions.bun}` : `Node ${process.version}`;
console.log(`${runtime}, ${flags.rounds} interleaved rounds of ${flags.iterations} values; µs a value, median [min–max] over rounds`);
console.log('\n| value | index | tokens | addon (µs) | node:crypto (µs) | node:crypto / addon |\n| --- | --- | --- | --- | --- | --- |');
for (const [name, value] of Object.entries(values)) {
  for (const [index, options] of Object.entries(INDEXES)) {
    const a = rings.native.searchTokens(value, ...CTX, options);
    const b = rings.js.searchTokens(value, ...CTX, options);
    if (!a.equals(b)) throw new Error(`the backends disagree on ${name}, ${index}`);
    const [n, j] = timeBatches(
      [() => rings.native.searchTokens(value, ...CTX, options), () => rings.js.searchTokens(value, ...CTX, options)],
      { iterations: Number(flags.iterations), rounds: Number(flags.rounds) },
    );
    const us = (s) => `${(median(s.samples) / 1000).toFixed(2)} [${(Math.min(...s.samples) / 1000).toFixed(2)}–${(Math.max(...s.samples) / 1000).toFixed(2)}]`;
    const ratios = n.samples.map((x, i) => j.samples[i] / x);
    console.log(`| ${name} (${Buffer.byteLength(value)} bytes) | ${index} | ${a.length / 8} | ${us(n)} | ${us(j)} | ${median(ratios).toFixed(1)}× [${Math.min(...ratios).toFixed(1)}–${Math.max(...ratios).toFixed(1)}] |`);
  }
}
