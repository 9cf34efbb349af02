// The per-value cost of search tokens (docs/search.md): every case of the
// bench's search-token tier (bench/search-tokens.mjs), with more calls than
// `npm run bench` gives it: --iterations calls of each side in all, split
// into --rounds interleaved batches. The target: at most 5 µs for
// the 256 B contains index on Node 24, and at least 20× less than
// node:crypto.
//
//   node --expose-gc bench/experiments/search-tokens.mjs [--rounds 20] [--iterations 20000]
//   bun bench/experiments/search-tokens.mjs
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { runSearchTokens } from '../search-tokens.mjs';

const { values: flags } = parseArgs({ options: { rounds: { type: 'string', default: '20' }, iterations: { type: 'string', default: '20000' } } });
const ale = createRequire(import.meta.url)('../../index.js');
const runtime = process.versions.bun ? `Bun ${process.versions.bun}` : `Node ${process.version}`;
console.log(`${runtime}, ${flags.iterations} values of each side in ${flags.rounds} interleaved rounds; µs a value, median [min–max] over rounds`);
console.log('\n| value | index | tokens | addon (µs) | node:crypto (µs) | node:crypto / addon |\n| --- | --- | --- | --- | --- | --- |');
const rows = runSearchTokens(ale, { warmup: 2000, iterations: Number(flags.iterations), rounds: Number(flags.rounds), secret: 'bench-secret-0123456789-abcdefghijklmnop' });
const range = (x, digits) => `${x.median.toFixed(digits)} [${x.min.toFixed(digits)}–${x.max.toFixed(digits)}]`;
for (const r of rows) {
  console.log(`| ${r.value} (${r.bytes} bytes) | ${r.index} | ${r.tokens} | ${range(r.addonUs, 2)} | ${range(r.nodeCryptoUs, 2)} | ${range(r.ratio, 1).replace(' [', '× [').replace(']', '×]')} |`);
}
