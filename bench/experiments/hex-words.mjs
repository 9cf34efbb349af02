// How tokens become words of 16 hex digits separated by spaces
// (ts/shared/hex-words.ts, hexWords): a range index column's text on
// SQLite and MySQL, and a search index column's until 2026-12-06. The package's way (bytes written once, one
// string made) against building the string piece by piece, as it did
// before, and against joining slices; each result flattened, as a driver
// does when it binds it. Outputs compared first.
//
//   node bench/experiments/hex-words.mjs [--tokens 419] [--rounds 5]
//   bun bench/experiments/hex-words.mjs
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { median } from '../stats.mjs';

const { values: flags } = parseArgs({ options: { tokens: { type: 'string', default: '419' }, rounds: { type: 'string', default: '5' } } });
const { hexWords } = createRequire(import.meta.url)('../../dist/cjs/shared/hex-words.js');
const tokens = randomBytes(Number(flags.tokens) * 8);

const sides = {
  'hexWords (bytes, one string)': hexWords,
  'piece by piece (before)': (t) => {
    const hex = t.toString('hex');
    let out = '';
    for (let at = 0; at < hex.length; at += 16) out += (at === 0 ? '' : ' ') + hex.slice(at, at + 16);
    return out;
  },
  'slices joined': (t) => {
    const hex = t.toString('hex');
    const parts = [];
    for (let at = 0; at < hex.length; at += 16) parts.push(hex.slice(at, at + 16));
    return parts.join(' ');
  },
};
const expected = sides['piece by piece (before)'](tokens);
for (const [name, make] of Object.entries(sides)) if (make(tokens) !== expected) throw new Error(`${name} made other text`);

const N = 20000;
const samples = Object.fromEntries(Object.keys(sides).map((k) => [k, []]));
for (let r = 0; r < Number(flags.rounds); r++) {
  for (const [name, make] of Object.entries(sides)) {
    let sink = 0;
    const t0 = process.hrtime.bigint();
    // charCodeAt of the last character flattens a rope, as binding it would
    for (let i = 0; i < N; i++) {
      const s = make(tokens);
      sink += s.charCodeAt(s.length - 1);
    }
    samples[name].push(Number(process.hrtime.bigint() - t0) / N / 1000);
    if (sink === 0) throw new Error('unreachable');
  }
}
const runtime = process.versions.bun ? `Bun ${process.versions.bun}` : `Node ${process.version}`;
console.log(`${runtime}, ${flags.tokens} tokens, ${flags.rounds} rounds of ${N}; µs a value, median [min–max]`);
for (const [name, s] of Object.entries(samples)) console.log(`  ${name.padEnd(30)} ${median(s).toFixed(2)} [${Math.min(...s).toFixed(2)}–${Math.max(...s).toFixed(2)}]`);
