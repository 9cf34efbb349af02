// The program bench/footprint.mjs runs under callgrind: each hot operation
// once on cold caches, many times, with markers callgrind dumps its counters
// at. Run by hand it only checks that every operation gives the right
// answer.
//
//   <runtime> bench/footprint-probe.mjs --line 4096 --samples 15 [--only encryptedText]
//
// One sample of one operation is two intervals between markers:
//   start · sweep · endBaseline              (the sweep by itself)
//   start · sweep · operation · endOperation
// The sweep writes one byte in every `--line` bytes of a buffer twice the
// simulated last-level cache, which evicts everything from it; what the
// operation then misses there is what it touches, counted in lines of the
// simulated size (4096 B: pages). The markers are libc calls both runtimes
// make straight from a small binding, and nothing else makes while the
// probe runs: process.getegid(), getuid() and getgid(); bench/footprint.mjs
// tells the intervals apart by the marker that ends each.
//
// With --instrument, callgrind was started with --instr-atstart=no, and the
// probe switches instrumentation on itself once the warm-up is done
// (bench/callgrind.mjs says why); it exits with status 3 if it cannot.
// ALE_FOOTPRINT_NO_CONTROL=1 makes it behave as if it could not, to try the
// fallback.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { sqliteTable } from 'drizzle-orm/sqlite-core';
import { encryptedText, searchIndexColumn } from '@sveltycms/ale/drizzle/sqlite';
import { payload } from './micro.mjs';
import { searchTexts } from './search-texts.mjs';

const { values: flags } = parseArgs({
  options: { instrument: { type: 'boolean' }, only: { type: 'string' }, line: { type: 'string', default: '4096' }, samples: { type: 'string', default: '15' }, cache: { type: 'string', default: String(16 << 20) } },
});
const line = Number(flags.line);
const samples = Number(flags.samples);
const require = createRequire(import.meta.url);
const ale = require('../index.js');

const SECRET = 'bench-secret-0123456789-abcdefghijklmnop';
const [T, C, F] = ['tenant-bench', 'content_nodes', 'data'];
ale.initKeyRing([SECRET]);
const ring = new ale.KeyRing([SECRET]);
const ringColumn = sqliteTable('footprint_ring', { data: encryptedText('data', { collection: C, field: F, tenant: T, keyRing: ring }) }).data;
const processColumn = sqliteTable('footprint_process', { data: encryptedText('data', { collection: C, field: F, tenant: T }) }).data;

// The search write's other column (bench/search.mjs's 4 KB scenario): a
// text's word index, as the FTS5 text its search index column writes.
const WORDS = { contains: false, prefix: false, words: true };
const searchColumn = sqliteTable('footprint_search', { s: searchIndexColumn('data_search', { collection: C, field: F, tenant: T, keyRing: ring, fts: 'footprint_search_fts', ...WORDS }) }).s;
const texts = searchTexts(4096, 64);
// What the column must write, made once and another way (the tokens as a
// Buffer, made into text by the JS backend's wordText), so the check
// tests the column's text rather than repeating its call.
const { wordText } = require('../dist/cjs/shared/search-words.js');
const tokenTexts = texts.map((t) => wordText(ring.searchTokens(t, T, C, F, WORDS)));
if (tokenTexts.some((t) => t.length === 0)) throw new Error('a 4 KB text gave no search token');

// 64 distinct 256 B values and their envelopes, made before any timing.
const base = payload(256);
const values = Array.from({ length: 64 }, (_, i) => `${i.toString(36).padStart(2, '0')}${base.slice(2)}`);
const envelopes = values.map((v) => ring.encrypt(v, T, C, F));
const binaries = values.map((v) => ring.encryptBinary(v, T, C, F));

/** Each operation: [name, (i) => result, (i, result) => whether it is right]. */
const ALL = [
  ['native copy: envelopeFromBytes (no crypto)', (i) => ale.envelopeFromBytes(binaries[i]), (i, r) => r.length === envelopes[i].length && ring.decrypt(r, T, C, F) === values[i]],
  ['encrypt (process-wide)', (i) => ale.encrypt(values[i], T, C, F), (i, r) => ring.decrypt(r, T, C, F) === values[i]],
  ['KeyRing#encrypt', (i) => ring.encrypt(values[i], T, C, F), (i, r) => ring.decrypt(r, T, C, F) === values[i]],
  ['encryptedText encode, keyRing', (i) => ringColumn.mapToDriverValue(values[i]), (i, r) => ring.decrypt(r, T, C, F) === values[i]],
  ['encryptedText encode, process-wide ring', (i) => processColumn.mapToDriverValue(values[i]), (i, r) => ring.decrypt(r, T, C, F) === values[i]],
  ['decrypt (process-wide)', (i) => ale.decrypt(envelopes[i], T, C, F), (i, r) => r === values[i]],
  ['KeyRing#decrypt', (i) => ring.decrypt(envelopes[i], T, C, F), (i, r) => r === values[i]],
  ['encryptedText decode, keyRing', (i) => ringColumn.mapFromDriverValue(envelopes[i]), (i, r) => r === values[i]],
  ['encryptedText decode, process-wide ring', (i) => processColumn.mapFromDriverValue(envelopes[i]), (i, r) => r === values[i]],
  ['searchIndexColumn encode, 4 KB words, keyRing', (i) => searchColumn.mapToDriverValue(texts[i]), (i, r) => r === tokenTexts[i]],
];
const OPERATIONS = ALL.filter(([name]) => flags.only === undefined || name.includes(flags.only));
if (OPERATIONS.length === 0) throw new Error(`no operation's name contains "${flags.only}"`);

const sweepBytes = 2 * Number(flags.cache);
const sweepArea = new Uint8Array(sweepBytes);
function sweep(round) {
  for (let at = 0; at < sweepBytes; at += line) sweepArea[at] = round;
}
const start = () => process.getegid();
const endBaseline = () => process.getuid();
const endOperation = () => process.getgid();
const WARM_CALLS = 2000;

// One sample: the baseline, then the operation, as the header says.
function sample(op, i, round) {
  start();
  sweep(round);
  endBaseline();
  start();
  sweep(round);
  const result = op(i);
  endOperation();
  return result;
}

// Warm: every operation and the sampling code are compiled and every lazy
// structure is made, so that a sample counts a cold cache, not a first
// call or code the interpreter runs.
for (const [name, op, check] of OPERATIONS) {
  for (let i = 0; i < WARM_CALLS; i++) {
    if (!check(i & 63, op(i & 63))) throw new Error(`${name} gave a wrong result`);
  }
}
if (flags.instrument) {
  if (process.env.ALE_FOOTPRINT_NO_CONTROL === '1') {
    console.error('callgrind_control could not switch instrumentation on: ALE_FOOTPRINT_NO_CONTROL=1');
    process.exit(3);
  }
  instrumentFromHere();
}
for (let round = 0; round < 64; round++) sweep(round);
const idle = () => undefined;
for (let round = 0; round < 64; round++) sample(idle, 0, round);

let wrong = 0;
for (const [, op, check] of OPERATIONS) {
  for (let s = 0; s < samples; s++) {
    const i = (s * 7) & 63;
    if (!check(i, sample(op, i, s))) wrong++;
  }
}
if (wrong) throw new Error(`${wrong} sampled results were wrong`);
console.log(JSON.stringify({ operations: OPERATIONS.map(([name]) => name), samples, line }));

/**
 * Asks callgrind (through callgrind_control, which reaches this process with
 * vgdb) to instrument from here on. Nothing before this point is measured:
 * the sweeps below empty the simulated caches before every sample.
 */
function instrumentFromHere() {
  // vgdb wakes this process, blocked in spawnSync, with ptrace; where ptrace
  // is refused it retries without end, hence the time limit.
  const control = spawnSync('callgrind_control', ['--instr=on', String(process.pid)], { encoding: 'utf8', timeout: 30_000, killSignal: 'SIGKILL' });
  // callgrind_control exits 0 even when it finds no such process: what it printed says.
  const said = `${control.stdout ?? ''}${control.stderr ?? ''}`;
  const failed = control.error !== undefined || control.status !== 0 || !/sending command instrumentation on/.test(said) || /^Error:/m.test(said);
  if (failed) {
    const why = control.error?.message ?? said.trim().replaceAll('\n', '; ');
    console.error(`callgrind_control could not switch instrumentation on: ${why}`);
    process.exit(3);
  }
}
