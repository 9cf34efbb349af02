// Where the 4 KB search write's overhead goes (docs/search.md, "What a
// search costs in the database"): bench/search.mjs's content_nodes with a
// 4 KB text, one row per transaction, interleaved, fresh databases each
// round, node:sqlite. Two parts, each against plaintext FTS5 over the text:
//
// - raw: prepared node:sqlite statements with ready-made values (the
//   envelope and the tokens' text made once, up front), the FTS5 set-ups
//   side by side: the tokens in the CMS's FTS5 table in the text's place
//   (default tokenizer, or ascii), or in a second FTS5 table of their own
//   (searchIndexSql's: detail=column, ascii);
// - drizzle: the CMS's adapter (bench/db.mjs), the same rows with the
//   envelope and the tokens' text ready-made in plain `text` columns,
//   against the package's columns making them on every write, and against
//   the same with the tokens' text made in JS from a Buffer (wordText;
//   hexWords's 16-digit words until the words became shorter), as the
//   columns did before searchTokenText.
//
//   node bench/experiments/search-write-floor.mjs [--rounds 12] [--pair | --apart]
//
// --pair: the adapter part times plaintext and the package's columns only;
// the raw part is unchanged.
// --apart: the adapter part times plaintext, the package's columns, the
// ready-made row, and a plaintext write whose transaction first makes the
// package's two columns' values (the envelope and the tokens' text) and
// drops them, with those calls timed, each side first in turn; that side's
// writes less their calls' time are printed as one more row; then the same
// two calls run in a loop, warm. So: the calls' time in a write and warm,
// and what the writes cost besides them (docs/search.md, "Taken apart in
// the write").
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { text } from 'drizzle-orm/sqlite-core';
import { encryptedText, searchIndexColumn } from '@sveltycms/ale/drizzle/sqlite';
import { contentNodes, row, statements, TENANT } from '../db.mjs';
import { searchTexts } from '../search-texts.mjs';
import { openSqlite } from '../sqlite.mjs';
import { median, medianInterval, overhead } from '../stats.mjs';

const { values: flags } = parseArgs({ options: { rounds: { type: 'string', default: '12' }, pair: { type: 'boolean', default: false }, apart: { type: 'boolean', default: false } } });
if (flags.pair && flags.apart) throw new Error('--pair or --apart, not both');
const ROUNDS = Number(flags.rounds);
const PER_ROUND = 100;
const require = createRequire(import.meta.url);
const ale = require('../../index.js');
const { wordText } = require('../../dist/cjs/shared/search-words.js');

const corpus = searchTexts(4096, 64);
const keyRing = new ale.KeyRing([Buffer.alloc(32, 7).toString('base64')]);
const on = { collection: 'content_nodes', tenant: TENANT, keyRing };
const WORDS = { contains: false, prefix: false, words: true };
const dataSearch = searchIndexColumn('data_search', { ...on, field: 'data', fts: 'content_nodes_fts', ...WORDS });
const TABLES = {
  plain: contentNodes(text('data')),
  'ready-made': contentNodes(text('data'), { dataSearch: text('data_search') }),
  package: contentNodes(encryptedText('data', on), { dataSearch }),
  // the package's columns as they were before searchTokenText: the tokens
  // as a Buffer, made into FTS5's text in JS, in the write
  'package, text made in JS (before)': contentNodes(encryptedText('data', on), { dataSearch: text('data_search') }),
};
// --apart's side that writes the plaintext row after making the package's two values
const CALLS = "plain, the columns' calls made";
const envelopes = corpus.map((d) => TABLES.package.data.mapToDriverValue(d));
const tokenTexts = corpus.map((d) => String(TABLES.package.dataSearch.mapToDriverValue(d)));
// the 'text made in JS (before)' side writes what the package's column writes
corpus.forEach((d, k) => {
  if (wordText(keyRing.searchTokens(d, TENANT, 'content_nodes', 'data', WORDS)) !== tokenTexts[k]) throw new Error('the two ways made other text');
});

const COLUMNS = '_id TEXT PRIMARY KEY, path TEXT NOT NULL, parentId TEXT, nodeType TEXT NOT NULL, status TEXT NOT NULL, name TEXT NOT NULL, description TEXT, data TEXT, data_search TEXT, metadata TEXT, tenantId TEXT NOT NULL, createdAt INTEGER NOT NULL, updatedAt INTEGER NOT NULL';
const fts = (name, columns, extra = '') => [
  `CREATE VIRTUAL TABLE ${name} USING fts5(${columns}, content='content_nodes', content_rowid='rowid'${extra})`,
  `CREATE TRIGGER ${name}_ai AFTER INSERT ON content_nodes BEGIN INSERT INTO ${name}(rowid, ${columns}) VALUES (new.rowid, ${columns.split(', ').map((c) => `new.${c}`).join(', ')}); END`,
];
const RAW = {
  plain: fts('f', 'name, description, data'),
  'tokens in the CMS table': fts('f', 'name, description, data_search'),
  'tokens in the CMS table, ascii': fts('f', 'name, description, data_search', ", tokenize='ascii'"),
  'tokens in a second table': [...fts('f', 'name, description'), ...fts('g', 'data_search', ", detail=column, tokenize='ascii'")],
};

/**
 * Rounds of interleaved one-row transactions on each side's fresh database:
 * ns a write per side, and in `inside`, what `write` says it spent on the
 * package's calls (when it returns a number).
 */
async function measure(sides, open, write) {
  const times = Object.fromEntries(sides.map((s) => [s, []]));
  times.inside = [];
  for (let round = 0; round < ROUNDS; round++) {
    const dir = mkdtempSync(join(tmpdir(), 'ale-floor-'));
    const dbs = {};
    for (const side of sides) dbs[side] = await open(side, join(dir, `${sides.indexOf(side)}.db`));
    try {
      for (let i = -20; i < PER_ROUND; i++) {
        const k = (i + 20) % corpus.length;
        // --apart: each side first in one write of every sides.length, so
        // that none always follows another; else forward and back, as before.
        const r = (i + 20 + round) % sides.length;
        const order = flags.apart ? [...sides.slice(r), ...sides.slice(0, r)] : (i + round) % 2 ? sides : [...sides].reverse();
        for (const side of order) {
          const t0 = process.hrtime.bigint();
          const calls = await write(dbs[side], side, k, `${side}-${i}`);
          if (i >= 0) times[side].push(Number(process.hrtime.bigint() - t0));
          if (i >= 0 && typeof calls === 'number') times.inside.push(calls);
        }
      }
    } finally {
      for (const db of Object.values(dbs)) db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return times;
}

function report(title, { inside, ...times }) {
  console.log(title);
  // the CALLS side's writes less their own calls' time, write by write (inside[j] is times[CALLS][j]'s)
  if (inside.length > 0) times[`${CALLS}, less the calls`] = times[CALLS].map((t, j) => t - inside[j]);
  const width = Math.max(36, ...Object.keys(times).map((side) => side.length));
  for (const [side, t] of Object.entries(times)) {
    const w = side === 'plain' ? undefined : overhead(times.plain, t);
    const delta = w ? `${(w.point * 100).toFixed(1)}% [${(w.low * 100).toFixed(1)}, ${(w.high * 100).toFixed(1)}]` : '';
    console.log(`  ${side.padEnd(width)} ${(median(t) / 1000).toFixed(1).padStart(6)} µs  ${delta}`);
  }
  if (inside.length > 0) console.log(`  the two calls in "${CALLS}": ${interval(inside)}`);
}

const values = (side, k, id) => {
  const r = row('content_nodes', id, 0);
  const plain = side === 'plain';
  return [r._id, r.path, r.parentId, r.nodeType, r.status, r.name, r.description, plain ? corpus[k] : envelopes[k], plain ? null : tokenTexts[k], r.metadata, r.tenantId, r.createdAt, r.updatedAt];
};
const raw = await measure(
  Object.keys(RAW),
  async (side, file) => {
    const { DatabaseSync } = await import('node:sqlite');
    const db = new DatabaseSync(file);
    db.exec('PRAGMA journal_mode = WAL');
    db.exec('PRAGMA synchronous = NORMAL');
    db.exec(`CREATE TABLE content_nodes (${COLUMNS})`);
    for (const stmt of RAW[side]) db.exec(stmt);
    return { db, insert: db.prepare(`INSERT INTO content_nodes VALUES (${Array(13).fill('?').join(', ')})`), close: () => db.close() };
  },
  (s, side, k, id) => {
    s.db.exec('BEGIN');
    s.insert.run(...values(side, k, id));
    s.db.exec('COMMIT');
  },
);
report(`Node ${process.version}, node:sqlite, raw statements, ready-made values, ${ROUNDS}×${PER_ROUND} writes a side; median, Δ against plain [95% CI]`, raw);

// --pair: plaintext and the package's columns only, as the bench interleaves
// them; the package measures several points more this way than among the
// four sides, for a reason not yet taken apart (docs/search.md).
const drizzle = await measure(
  flags.pair ? ['plain', 'package'] : flags.apart ? ['plain', 'package', CALLS, 'ready-made'] : Object.keys(TABLES),
  async (side, file) => {
    const s = await openSqlite(file, { driver: 'node:sqlite' });
    s.exec(`CREATE TABLE content_nodes (${COLUMNS})`);
    const plain = side === 'plain' || side === CALLS;
    for (const stmt of fts('content_nodes_fts', plain ? 'name, description, data' : 'name, description, data_search')) s.exec(stmt);
    return { ...s, run: statements(s.db) };
  },
  (s, side, k, id) => {
    if (side === CALLS) return callsThenPlain(s, k, id);
    const data =
      side === 'ready-made'
        ? { data: envelopes[k], dataSearch: tokenTexts[k] }
        : side === 'package'
          ? { data: corpus[k], dataSearch: corpus[k] }
          : side === 'plain'
            ? { data: corpus[k] }
            : { data: corpus[k], dataSearch: wordText(keyRing.searchTokens(corpus[k], TENANT, 'content_nodes', 'data', WORDS)) };
    return s.run.insert(TABLES[side], { ...row('content_nodes', id, 0), ...data });
  },
);
report(`through the CMS adapter (drizzle-orm/sqlite-proxy over node:sqlite), tokens in the CMS table${flags.pair ? ' (--pair: plain and package only)' : flags.apart ? ' (--apart)' : ''}`, drizzle);

if (flags.apart) {
  // The same two calls outside any write, each value in turn, warm. (The
  // timer's own cost, tens of ns, is left in here and in the write.)
  const made = [TABLES.package.data.mapToDriverValue(corpus[0]), String(TABLES.package.dataSearch.mapToDriverValue(corpus[0]))];
  if (keyRing.decrypt(made[0], TENANT, 'content_nodes', 'data') !== corpus[0] || made[1] !== tokenTexts[0]) throw new Error('the columns made other values');
  const pairs = [];
  for (let round = 0; round < 20; round++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < 640; i++) {
      TABLES.package.data.mapToDriverValue(corpus[i % corpus.length]);
      TABLES.package.dataSearch.mapToDriverValue(corpus[i % corpus.length]);
    }
    pairs.push(Number(process.hrtime.bigint() - t0) / 640);
  }
  console.log(`  the two calls in a loop, warm (20 rounds of 640): ${interval(pairs)}`);
}

/** A median in µs with its 95% interval. */
function interval(ns) {
  const { point, low, high } = medianInterval(ns);
  return `${(point / 1000).toFixed(1)} µs [${(low / 1000).toFixed(1)}, ${(high / 1000).toFixed(1)}]`;
}

/** The CALLS side's write: the package's columns make their values (dropped), then the plaintext row is written; ns of the calls. */
async function callsThenPlain(s, k, id) {
  let calls = 0;
  // In the transaction, as the package's columns make them while Drizzle builds the INSERT; checked once above.
  const make = () => {
    const t0 = process.hrtime.bigint();
    TABLES.package.data.mapToDriverValue(corpus[k]);
    TABLES.package.dataSearch.mapToDriverValue(corpus[k]);
    calls = Number(process.hrtime.bigint() - t0);
  };
  await s.run.insert(TABLES.plain, { ...row('content_nodes', id, 0), data: corpus[k] }, make);
  return calls;
}
