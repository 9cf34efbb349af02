// Could the 4 KB word-index write meet the 5% gate if SQLite made the
// search tokens itself? (docs/search.md, "Shorter words".)
// bench/search.mjs's 4 KB scenario, through the CMS's adapter
// (drizzle-orm/sqlite-proxy over node:sqlite), with a third way to index:
//
// - package: today's columns: `data` encrypted, and its search index column
//   (searchTokenText's words) in the CMS's FTS5 table in `data`'s place;
// - tokenizer: `data` encrypted and nothing else; the CMS's FTS5 table
//   indexes `data` with `ale_envelope` (./fts5-tokenizer, a SQLite loadable
//   extension), which opens each envelope and yields the same words, so
//   the row holds the envelope alone and no token crosses from JS;
// - A/A: plaintext against plaintext, the control for a small effect.
//
// Each round pairs plaintext with one of the three, interleaved as the bench
// does (one-row transactions, each side first in turn, fresh databases), the
// three in turn. Before timing, it checks that both ways index the same
// words (FTS5's vocabulary, term by term) and that word searches on the
// tokenizer's table, with false positives removed by decrypting, return
// what plaintext FTS5 returns.
//
//   (cd bench/experiments/fts5-tokenizer && CARGO_TARGET_DIR=../../../target/fts5-tokenizer cargo build --release)
//   node bench/experiments/fts5-tokenizer.mjs [--rounds 30] [--extension path] [--upto nothing|open|tokens]
//
// --upto: the tokenizer stops there with each envelope (yields no token
// from it; the check is skipped): its cost taken apart.
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { text } from 'drizzle-orm/sqlite-core';
import { encryptedText, searchIndexColumn, searchWords } from '@sveltycms/ale/drizzle/sqlite';
import { contentNodes, ns, row, statements, TENANT } from '../db.mjs';
import { ddl, ftsMatch, queries } from '../search.mjs';
import { searchTexts } from '../search-texts.mjs';
import { openSqlite } from '../sqlite.mjs';
import { median, overhead, seededRandom } from '../stats.mjs';

const require = createRequire(import.meta.url);
const { values: flags } = parseArgs({
  options: {
    rounds: { type: 'string', default: '30' },
    upto: { type: 'string', default: 'all' },
    extension: { type: 'string', default: join(import.meta.dirname, '../../target/fts5-tokenizer/release/libale_fts5_tokenizer_experiment.so') },
  },
});
const ROUNDS = Number(flags.rounds);
const PER_ROUND = 100;
const ale = require('../../index.js');
const { tokenWords } = require('../../dist/cjs/shared/search-words.js');

const SECRET = Buffer.alloc(32, 7).toString('base64');
// The extension reads its key here when an FTS5 table opens (never from SQL).
process.env.ALE_EXPERIMENT_SECRET = SECRET;
process.env.ALE_EXPERIMENT_UPTO = flags.upto;
const keyRing = new ale.KeyRing([SECRET]);
const on = { collection: 'content_nodes', tenant: TENANT, keyRing };
const WORDS = { contains: false, prefix: false, words: true };
const dataSearch = searchIndexColumn('data_search', { ...on, field: 'data', fts: 'content_nodes_fts', ...WORDS });
const TABLES = {
  plain: contentNodes(text('data')),
  package: contentNodes(encryptedText('data', on), { dataSearch }),
  tokenizer: contentNodes(encryptedText('data', on)),
};
const COLUMNS = 'name, description';
const DDL = {
  plain: ddl(`${COLUMNS}, data`, 'unicode61', false),
  package: ddl(`${COLUMNS}, data_search`, 'unicode61', true),
  tokenizer: ddl(`${COLUMNS}, data`, `ale_envelope ''${TENANT}'' content_nodes data unicode61`, false),
};
const corpus = searchTexts(4096, 64);

async function open(dir, side, name = side) {
  const s = await openSqlite(join(dir, `${name}.db`), { driver: 'node:sqlite', extension: flags.extension });
  for (const stmt of DDL[side]) s.exec(stmt);
  return { ...s, run: statements(s.db) };
}

const insert = (s, side, k, id) => s.run.insert(TABLES[side], { ...row('content_nodes', id, 0), data: corpus[k], ...(side === 'package' ? { dataSearch: corpus[k] } : {}) });

/** The same words in both ways' FTS5 tables, and exact word searches on the tokenizer's: throws otherwise. */
async function check() {
  const dir = mkdtempSync(join(tmpdir(), 'ale-fts5-tok-'));
  const dbs = { plain: await open(dir, 'plain'), package: await open(dir, 'package'), tokenizer: await open(dir, 'tokenizer') };
  try {
    for (const [side, s] of Object.entries(dbs)) for (let k = 0; k < corpus.length; k++) await insert(s, side, k, `${k}`);
    const vocab = (s, column) => {
      s.exec("CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, 'content_nodes_fts', 'col')");
      return JSON.stringify(s.all('SELECT term, doc, cnt FROM temp.vocab WHERE col = ? ORDER BY term', column));
    };
    const words = vocab(dbs.package, 'data_search');
    if (words !== vocab(dbs.tokenizer, 'data')) throw new Error('the tokenizer indexed other words than the search index column');
    const terms = JSON.parse(words).length;
    const rand = seededRandom(4096);
    let rows = 0;
    const qs = queries(corpus, 'words', 200, rand);
    for (const q of qs) {
      const plain = dbs.plain.all(`SELECT _id AS id FROM content_nodes WHERE rowid IN (SELECT rowid FROM content_nodes_fts WHERE content_nodes_fts MATCH ?) ORDER BY _id`, ftsMatch('words', q));
      const tokens = tokenWords(keyRing.searchQuery(q, 'words', TENANT, 'content_nodes', 'data', WORDS));
      const exact = searchWords(TABLES.package.dataSearch, q);
      const candidates = dbs.tokenizer.all(`SELECT _id AS id, data FROM content_nodes WHERE rowid IN (SELECT rowid FROM content_nodes_fts WHERE content_nodes_fts MATCH ?) ORDER BY _id`, `data : (${tokens.join(' AND ')})`);
      const found = candidates.filter((r) => exact.matches(keyRing.decrypt(r.data, TENANT, 'content_nodes', 'data')));
      if (JSON.stringify(found.map((r) => r.id)) !== JSON.stringify(plain.map((r) => r.id))) throw new Error(`search ${JSON.stringify(q)}: the tokenizer's table gave ${found.length} rows, plaintext FTS5 ${plain.length}`);
      rows += found.length;
    }
    console.log(`checked: the same ${terms} words in both ways' FTS5 tables; ${qs.length} word searches on the tokenizer's table equal to plaintext FTS5 (${rows} rows)`);
  } finally {
    for (const s of Object.values(dbs)) s.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const PAIRS = ['tokenizer', 'package', 'A/A'];
async function measure() {
  const times = Object.fromEntries(PAIRS.map((p) => [p, { plain: [], other: [] }]));
  for (let round = 0; round < ROUNDS; round++) {
    const pair = PAIRS[round % PAIRS.length];
    const other = pair === 'A/A' ? 'plain' : pair;
    const dir = mkdtempSync(join(tmpdir(), 'ale-fts5-tok-'));
    const dbs = { plain: await open(dir, 'plain'), other: await open(dir, other, 'other') };
    try {
      for (let i = -20; i < PER_ROUND; i++) {
        const k = (i + 20) % corpus.length;
        for (const side of (i + round) % 2 ? ['plain', 'other'] : ['other', 'plain']) {
          const t0 = process.hrtime.bigint();
          await insert(dbs[side], side === 'plain' ? 'plain' : other, k, `${side}-${i}`);
          if (i >= 0) times[pair][side].push(ns(t0));
        }
      }
    } finally {
      for (const s of Object.values(dbs)) s.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return times;
}

if (flags.upto === 'all') await check();
const times = await measure();
console.log(`Node ${process.version}, node:sqlite through the CMS adapter, 4 KB rows, ${ROUNDS} rounds of ${PER_ROUND} one-row writes a pair, the pairs in turn; median write, Δ against plaintext FTS5 in the same rounds [95% CI]${flags.upto === 'all' ? '' : `; the tokenizer stops at ${flags.upto}`}`);
for (const [pair, t] of Object.entries(times)) {
  const w = overhead(t.plain, t.other);
  console.log(`  ${pair.padEnd(10)} plaintext ${(median(t.plain) / 1000).toFixed(1)} µs, this ${(median(t.other) / 1000).toFixed(1)} µs: ${(w.point * 100).toFixed(1)}% [${(w.low * 100).toFixed(1)}, ${(w.high * 100).toFixed(1)}]`);
}
