// The search tokens' micro tier (docs/search.md, "What a value's tokens
// cost"): a value's index through the addon's `searchTokens` and through
// the same scheme on node:crypto (the package's fallback), interleaved in
// one process, their outputs compared first. The targets, for the
// 256 B contains index: at most 5 µs on Node 24, and at least 20× less than
// node:crypto. `npm run bench` reports them beside the gate, not in its
// exit status; bench/experiments/search-tokens.mjs runs every case.
import { createRequire } from 'node:module';
import { payload, timeBatches } from './micro.mjs';
import { median } from './stats.mjs';

const require = createRequire(import.meta.url);
/** The node:crypto fallback that runs where no binary loads (ts/fallback). */
const fallback = require('../dist/cjs/fallback/index.js');

const CTX = ['tenant-bench', 'content_nodes', 'name'];
const MULTI_SCRIPT = "Jürgen Müller (Lüdenscheid) — Иван Петров, 東京都渋谷区 1-2-3; İstanbul'da çalışıyor. Ἀθῆναι, नमस्ते दुनिया. ".repeat(3).slice(0, 110);
const INDEXES = { contains: { contains: true, prefix: false, words: false }, 'all three': {} };

/** Every case: the value, and the index it gets. `target`: the case the targets are for. */
export const SEARCH_TOKEN_CASES = [
  { value: '256 B ASCII', text: payload(256), index: 'contains', target: true },
  { value: '256 B ASCII', text: payload(256), index: 'all three' },
  { value: 'multi-script', text: MULTI_SCRIPT, index: 'contains' },
  { value: 'multi-script', text: MULTI_SCRIPT, index: 'all three' },
];

/** The targets: at most this many µs a value on the addon, and at least this ratio to node:crypto. */
const TOKEN_TARGETS = { addonUs: 5, ratio: 20 };

/**
 * Times each case's tokens on `ale` (the addon) against the fallback:
 * `warmup` calls of each first, then `iterations` calls of each, split
 * into `rounds` interleaved batches.
 * @returns one row per case: tokens, µs a value (median over rounds, with
 * min and max), node:crypto ÷ addon per round (median, min, max), and for
 * the target case its `limits` (TOKEN_TARGETS) and whether it meets them (`met`).
 */
export function runSearchTokens(ale, { warmup, iterations, rounds, secret, cases = SEARCH_TOKEN_CASES }) {
  const rings = { addon: new ale.KeyRing([secret]), js: new fallback.KeyRing([secret]) };
  return cases.map(({ value, text, index, target = false }) => {
    const options = INDEXES[index];
    const addon = () => rings.addon.searchTokens(text, ...CTX, options);
    const js = () => rings.js.searchTokens(text, ...CTX, options);
    const made = addon();
    if (!made.equals(js())) throw new Error(`the addon and node:crypto disagree on the ${index} tokens of the ${value} value`);
    for (let i = 0; i < warmup; i++) addon(), js();
    const [a, j] = timeBatches([addon, js], { iterations, rounds });
    const us = (s) => ({ median: median(s.samples) / 1000, min: Math.min(...s.samples) / 1000, max: Math.max(...s.samples) / 1000 });
    const ratios = a.samples.map((x, i) => j.samples[i] / x);
    const row = {
      value,
      bytes: Buffer.byteLength(text),
      index,
      target,
      tokens: made.length / 8,
      addonUs: us(a),
      nodeCryptoUs: us(j),
      ratio: { median: median(ratios), min: Math.min(...ratios), max: Math.max(...ratios) },
    };
    if (target) {
      row.limits = TOKEN_TARGETS;
      row.met = row.addonUs.median <= TOKEN_TARGETS.addonUs && row.ratio.median >= TOKEN_TARGETS.ratio;
    }
    return row;
  });
}
