// Micro-benchmark, in memory, per payload tier, in pairs:
// - the addon against node:crypto producing the identical envelope (the
//   speed targets), and the package's own node:crypto fallback (what runs
//   where no binary loads) against the same;
// - the SveltyCMS drop-in (@sveltycms/ale/sveltycms) against "SveltyCMS
//   today", the CMS's own module on node:crypto (JSON values, 16-byte IVs).
// Every contender gets the same input, each pair is checked to interoperate
// before timing, and each pair is timed in interleaved batches (A B, then
// B A, ...) so drift and noise hit both alike.
import { createRequire } from 'node:module';
import { NodeCryptoAle } from './reference.mjs';
import * as cms from '../__test__/fixtures/sveltycms-reference.mjs';
import { median, pairedOverhead } from './stats.mjs';

const require = createRequire(import.meta.url);
const dropIn = require('@sveltycms/ale/sveltycms');
/** The node:crypto fallback that runs where no binary loads (ts/fallback). */
const fallback = require('../dist/cjs/fallback/index.js');

export const TIERS = [
  { name: '256 B', label: 'Scalar / PII', bytes: 256, char: 'a' },
  { name: '4 KB', label: 'Standard Block', bytes: 4096, char: 'a' },
  { name: '64 KB', label: 'Large Text', bytes: 65536, char: 'a' },
  { name: '4 KB UTF-8', label: 'Multi-byte text', bytes: 4096, char: 'ü€' },
];

const CTX = ['tenant-bench', 'content_nodes', 'data'];
const [T, C, F] = CTX;

const WORDS = {
  a: 'the of and content page field tenant audit login user value secure data report system update record public access email profile address phone street city country number account session token event result status severity'.split(' '),
  'ü€': 'über straße größe café déjà naïve façade €uro prüfung mädchen jalapeño smörgåsbord 東京 日本語 データ 사용자 😀 🚀'.split(' '),
};

/**
 * Text of exactly `bytes` UTF-8 bytes: words from a fixed vocabulary in a
 * seeded order, so every run and every contender gets the same realistic
 * input (repeated single characters would flatter FTS and compression).
 */
export function payload(bytes, kind = 'a') {
  const words = WORDS[kind];
  let state = 0x9e3779b9 ^ bytes;
  const parts = [];
  let size = 0;
  while (size < bytes) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    const w = words[state % words.length];
    parts.push(w);
    size += Buffer.byteLength(w) + 1;
  }
  let s = parts.join(' ');
  while (Buffer.byteLength(s) > bytes) s = s.slice(0, -1);
  return s + ' '.repeat(bytes - Buffer.byteLength(s));
}

const FIELD_CTX = { tenantId: CTX[0], collectionId: CTX[1] };

/**
 * Both SveltyCMS modules read ENCRYPTION_KEY lazily and cache the key: point
 * it at the bench's secret and drop their caches.
 */
export function useSecretForCms(secret) {
  process.env.ENCRYPTION_KEY = secret;
  cms.resetFieldEncryptionKeyCache();
  dropIn.resetFieldEncryptionKeyCache();
}

/**
 * The micro tiers (and the tenant rows) time this many times --iterations
 * in this many times --rounds: fewer moved the speed-ups too much from run
 * to run (bench/README.md).
 */
export const TIMED_SCALE = 10;

/** The contenders; `baseline` names the one a contender's speed-up is measured against. */
function contenders(ale, secret) {
  useSecretForCms(secret);
  const addon = new ale.KeyRing([secret]);
  const ref = new NodeCryptoAle([secret]);
  const js = new fallback.KeyRing([secret]);
  return [
    // The arguments written out, as callers write them (a spread costs
    // about 20 ns a call on both runtimes, the same for every contender).
    { name: 'addon', baseline: 'node:crypto', encrypt: (p) => addon.encrypt(p, T, C, F), decrypt: (e) => addon.decrypt(e, T, C, F) },
    { name: 'node:crypto', encrypt: (p) => ref.encrypt(p, T, C, F), decrypt: (e) => ref.decrypt(e, T, C, F) },
    { name: 'js fallback', baseline: 'node:crypto', encrypt: (p) => js.encrypt(p, T, C, F), decrypt: (e) => js.decrypt(e, T, C, F) },
    {
      name: 'drop-in',
      baseline: 'SveltyCMS today',
      encrypt: (p) => dropIn.encryptFieldValueSync(p, FIELD_CTX, CTX[2]),
      decrypt: (e) => dropIn.decryptFieldValueStrictSync(e, FIELD_CTX, CTX[2]),
    },
    {
      name: 'SveltyCMS today',
      encrypt: (p) => cms.encryptFieldValueSync(p, FIELD_CTX, CTX[2]),
      decrypt: (e) => cms.decryptFieldValueSync(e, FIELD_CTX, CTX[2]),
    },
  ];
}

/** Indexes into `list` of each contender and its baseline: [[0, 1], [2, 1], [3, 4]]. */
function pairsOf(list) {
  return list.flatMap((c, k) => (c.baseline ? [[k, list.findIndex((b) => b.name === c.baseline)]] : []));
}

/** Throws unless each contender reads what the other of its pair writes, and its own. */
export function checkInterop(list, text) {
  const pairs = list.filter((c) => c.baseline).map((c) => [c, list.find((b) => b.name === c.baseline)]);
  for (const pair of pairs) {
    for (const a of pair) {
      for (const b of pair) {
        if (b.decrypt(a.encrypt(text)) !== text) throw new Error(`interop failed: ${a.name} → ${b.name}`);
      }
    }
  }
}

/**
 * A full collection, so each timed set starts from a collected heap: the
 * garbage of earlier pairs (node:crypto's and the CMS module's Buffers) is
 * otherwise collected during whichever batches run next. Measured on Node
 * 24.9.0 with the DB layers loaded, as in `run.mjs`: the addon's 4 KB
 * encrypt or decrypt took 3.0-3.4 µs in some runs and 1.2 µs in others
 * (incremental marking started by that garbage, paid by the next
 * allocations); with this, 1.2 µs in each of 4 runs.
 */
let collector;
export function collect() {
  collector ??= (() => {
    if (globalThis.Bun) return () => globalThis.Bun.gc(true);
    if (typeof globalThis.gc === 'function') return globalThis.gc;
    process.emitWarning('the heap is not collected between timed sets: run the bench through `npm run bench` (node --expose-gc)');
    return () => undefined;
  })();
  collector();
}

/**
 * Median ns/op over `rounds` batches, and CPU µs per 1,000 ops, for `fn(i)`,
 * after a full collection. Rounds alternate forward and backward order, so
 * each contender runs before each other one as often as after it.
 * `samples[r]` of every contender is round r's: the contenders' samples
 * pair up by round (stats.mjs, pairedOverhead).
 */
export function timeBatches(fns, { iterations, rounds }) {
  collect();
  const perRound = Math.max(1, Math.floor(iterations / rounds));
  const samples = fns.map(() => []);
  const cpu = fns.map(() => 0);
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? fns.map((_, i) => i) : fns.map((_, i) => fns.length - 1 - i);
    for (const k of order) {
      const fn = fns[k];
      const c0 = process.cpuUsage();
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < perRound; i++) fn(i);
      const t1 = process.hrtime.bigint();
      const c = process.cpuUsage(c0);
      samples[k].push(Number(t1 - t0) / perRound);
      cpu[k] += c.user + c.system;
    }
  }
  return samples.map((s, k) => ({ nsPerOp: median(s), samples: s, cpuUsPer1000: (cpu[k] / (perRound * rounds)) * 1000 }));
}

/**
 * @returns rows: one per tier and contender, with enc/dec latency (µs), CPU
 * per 1,000 ops (ms), throughput (MB/s), ops/s, and the speed-up of the addon.
 */
export function runMicro(ale, { warmup, iterations, rounds, secret, onStep }) {
  const list = contenders(ale, secret);
  const rows = [];
  for (const tier of TIERS) {
    const text = payload(tier.bytes, tier.char);
    checkInterop(list, text);
    // Each contender decrypts its own envelopes; both were just shown to interoperate.
    const envelopes = list.map((c) => Array.from({ length: 16 }, () => c.encrypt(text)));
    let sink = 0;
    const enc = list.map((c) => () => (sink += c.encrypt(text).length));
    const dec = list.map((c, k) => (i) => (sink += c.decrypt(envelopes[k][i & 15]).length));
    for (let i = 0; i < warmup; i++) for (const f of [...enc, ...dec]) f(i);
    // Each pair is timed on its own, interleaved within the pair, so one
    // pair's allocations (the CMS module's JSON, Buffers) do not land in the
    // other pair's timings.
    const e = [];
    const d = [];
    const speedups = [];
    const timing = { iterations: iterations * TIMED_SCALE, rounds: rounds * TIMED_SCALE };
    for (const pair of pairsOf(list)) {
      const te = timeBatches(pair.map((k) => enc[k]), timing);
      const td = timeBatches(pair.map((k) => dec[k]), timing);
      // A baseline in two pairs (node:crypto, against the addon and the fallback) shows its first pair's times, the addon's, so that its row and the addon's speed-up come from one timing.
      pair.forEach((k, j) => ((e[k] ??= te[j]), (d[k] ??= td[j])));
      // The baseline's time over the contender's, per unit of a forward and
      // a backward round: the drift within a unit hits both alike.
      speedups[pair[0]] = { encrypt: ratio(te[0], te[1]), decrypt: ratio(td[0], td[1]) };
    }
    if (sink === 0) throw new Error('benchmark produced no output');
    list.forEach((c, k) => {
      const envelopeBytes = c.encrypt(text).length;
      rows.push({
        tier: tier.name,
        label: tier.label,
        bytes: tier.bytes,
        contender: c.name,
        encryptUs: e[k].nsPerOp / 1000,
        decryptUs: d[k].nsPerOp / 1000,
        cpuMsPer1000: (e[k].cpuUsPer1000 + d[k].cpuUsPer1000) / 2 / 1000,
        throughputMBs: tier.bytes / (e[k].nsPerOp / 1e9) / 1e6,
        opsPerSec: 1e9 / e[k].nsPerOp,
        envelopeBytes,
        sizeOverhead: envelopeBytes / tier.bytes - 1,
      });
    });
    const tierRows = rows.slice(-list.length);
    list.forEach((c, k) => {
      if (!c.baseline) return;
      const { encrypt, decrypt } = speedups[k];
      Object.assign(tierRows[k], {
        encryptSpeedup: encrypt.point,
        encryptSpeedupInterval: [encrypt.low, encrypt.high],
        decryptSpeedup: decrypt.point,
        decryptSpeedupInterval: [decrypt.low, decrypt.high],
      });
    });
    onStep?.(`micro ${tier.name}`);
  }
  return rows;
}

/** The baseline's time over the contender's: the median over paired units, with its 95% interval. */
function ratio(contender, baseline) {
  const p = pairedOverhead(contender.samples, baseline.samples);
  return { point: 1 + p.point, low: 1 + p.low, high: 1 + p.high };
}

/** Per-value cost of encryptMany/decryptMany against single calls, at 256 B. */
export function runBatchCost(ale, { iterations, rounds, secret }) {
  const ring = new ale.KeyRing([secret]);
  const values = Array.from({ length: 100 }, (_, i) => payload(256) + i);
  const envs = ring.encryptMany(values, ...CTX);
  if (ring.decryptMany(envs, ...CTX).join() !== values.join()) throw new Error('batch round trip failed');
  const n = Math.max(1, Math.floor(iterations / 100));
  const [single, many, singleDec, manyDec] = timeBatches(
    [
      () => values.forEach((v) => ring.encrypt(v, T, C, F)),
      () => ring.encryptMany(values, ...CTX),
      () => envs.forEach((v) => ring.decrypt(v, T, C, F)),
      () => ring.decryptMany(envs, ...CTX),
    ],
    { iterations: n * rounds, rounds },
  );
  const per = (x) => x.nsPerOp / 100 / 1000;
  return { encryptSingleUs: per(single), encryptManyUs: per(many), decryptSingleUs: per(singleDec), decryptManyUs: per(manyDec) };
}

/**
 * A SveltyCMS document of 8 fields × 256 B through the drop-in's
 * encrypt/decryptDocumentFieldsSync against the CMS's module: µs per document.
 */
export function runDocument({ iterations, rounds, secret }) {
  useSecretForCms(secret);
  const names = Array.from({ length: 8 }, (_, i) => `field${i}`);
  const fresh = () => Object.fromEntries(names.map((n, i) => [n, payload(256) + i]));
  const original = fresh();
  const modules = [
    ['drop-in', dropIn],
    ['SveltyCMS today', cms],
  ];
  // Each reads what the other writes before anything is timed.
  for (const [, writer] of modules) {
    for (const [, reader] of modules) {
      const doc = reader.decryptDocumentFieldsSync(writer.encryptDocumentFieldsSync(fresh(), names, FIELD_CTX), names, FIELD_CTX);
      if (JSON.stringify(doc) !== JSON.stringify(original)) throw new Error('document interop failed');
    }
  }
  const encrypted = modules.map(([, m]) => m.encryptDocumentFieldsSync(fresh(), names, FIELD_CTX));
  let sink = 0;
  const n = Math.max(1, Math.floor(iterations / 8));
  const timings = timeBatches(
    [
      // A copy of the same document (the call writes its envelopes into it); building it anew, as fresh() does, costed more than a copy and went into both sides' time.
      ...modules.map(([, m]) => () => (sink += m.encryptDocumentFieldsSync({ ...original }, names, FIELD_CTX).field7.length)),
      ...modules.map(([, m], k) => () => (sink += m.decryptDocumentFieldsSync({ ...encrypted[k] }, names, FIELD_CTX).field7.length)),
    ],
    // The same documents in as many rounds as the micro tier has (always
    // even), so that each speed-up is paired by round as there.
    { iterations: n * rounds, rounds: rounds * TIMED_SCALE },
  );
  if (sink === 0) throw new Error('benchmark produced no output');
  const [encDrop, encCms, decDrop, decCms] = timings.map((t) => t.nsPerOp / 1000);
  const encrypt = ratio(timings[0], timings[1]);
  const decrypt = ratio(timings[2], timings[3]);
  return {
    fields: 8,
    bytes: 256,
    encryptUs: { dropIn: encDrop, cms: encCms },
    decryptUs: { dropIn: decDrop, cms: decCms },
    encryptSpeedup: encrypt.point,
    encryptSpeedupInterval: [encrypt.low, encrypt.high],
    decryptSpeedup: decrypt.point,
    decryptSpeedupInterval: [decrypt.low, decrypt.high],
  };
}
