// The per-value cost of a range index's terms (docs/search.md, "Ranges and
// order"): a number's, a bigint's and a date's 16 tokens (its code, its
// path in the tree, the tokens), and a range query's cover, on the addon
// and on the same scheme through node:crypto (the JS backend), interleaved
// in one process, with their outputs compared first.
//
//   node bench/experiments/range-tokens.mjs [--rounds 20] [--iterations 20000]
//   bun bench/experiments/range-tokens.mjs
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { codeOf } from '../../dist/esm/drizzle/range/encoding.js';
import { cover, pathNodes } from '../../dist/esm/drizzle/range/tree.js';
import { timeBatches } from '../micro.mjs';
import { median } from '../stats.mjs';

const { values: flags } = parseArgs({ options: { rounds: { type: 'string', default: '20' }, iterations: { type: 'string', default: '20000' } } });
const require = createRequire(import.meta.url);
const native = require('../../index.js');
const js = require('../../dist/cjs/fallback/index.js');
const SECRET = 'bench-secret-0123456789-abcdefghijklmnop';
const CTX = ['tenant-bench', 'orders', 'total'];
const rings = { native: new native.KeyRing([SECRET]), js: new js.KeyRing([SECRET]) };
const CASES = {
  'a number (-1234.5)': (ring) => ring.rangeTokens(pathNodes(codeOf('number', -1234.5)), ...CTX),
  'a bigint (2^60 + 7)': (ring) => ring.rangeTokens(pathNodes(codeOf('bigint', 2n ** 60n + 7n)), ...CTX),
  'a date (1969-07-20)': (ring) => ring.rangeTokens(pathNodes(codeOf('date', new Date('1969-07-20T20:17:40Z'))), ...CTX),
  'a query: between 100 and 500.25 (cover and exclusion)': (ring) => {
    const { include, exclude } = cover(codeOf('number', 100), codeOf('number', 500.25), 16);
    return Buffer.concat([ring.rangeTokens(include, ...CTX), ring.rangeTokens(exclude, ...CTX)]);
  },
};
const runtime = process.versions.bun ? `Bun ${process.versions.bun}` : `Node ${process.version}`;
console.log(`${runtime}, ${flags.rounds} interleaved rounds of ${flags.iterations} values; µs a value, median [min–max] over rounds`);
console.log('\n| what | tokens | addon (µs) | node:crypto (µs) | node:crypto / addon |\n| --- | --- | --- | --- | --- |');
for (const [name, make] of Object.entries(CASES)) {
  const a = make(rings.native);
  if (!a.equals(make(rings.js))) throw new Error(`the backends disagree on ${name}`);
  const [n, j] = timeBatches([() => make(rings.native), () => make(rings.js)], { iterations: Number(flags.iterations), rounds: Number(flags.rounds) });
  const us = (s) => `${(median(s.samples) / 1000).toFixed(2)} [${(Math.min(...s.samples) / 1000).toFixed(2)}–${(Math.max(...s.samples) / 1000).toFixed(2)}]`;
  const ratios = n.samples.map((x, i) => j.samples[i] / x);
  console.log(`| ${name} | ${a.length / 8} | ${us(n)} | ${us(j)} | ${median(ratios).toFixed(1)}× [${Math.min(...ratios).toFixed(1)}–${Math.max(...ratios).toFixed(1)}] |`);
}
