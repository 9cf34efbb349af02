// Search queries at scale (docs/search.md, "Queries at 100,000 rows"): a
// multi-script corpus of people (names, e-mail addresses, streets; de, tr,
// ru, ja, en) in a plaintext table and in an encrypted one with a search
// index column, on each dialect; random contains, prefix and word queries,
// a first page of 20 rows each, against the plaintext way of asking the
// same (LIKE, and the dialect's full-text index), median and p95; and the
// index's size per row. Every encrypted page is checked against the exact
// answer after it is timed; plaintext pages that differ from it are counted.
//
//   node bench/search-queries.mjs [--rows 100000] [--queries 200] [--dialects sqlite,pg,mysql]
//   bun bench/search-queries.mjs …
// PostgreSQL and MariaDB come from PG_URL and MYSQL_URL (eval "$(scripts/services.sh start)").
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { asc, ilike, like, or, sql } from 'drizzle-orm';
import { people } from '../__test__/fixtures/corpus.mjs';
import { openSqlite } from './sqlite.mjs';
import { mean, nearestRank, seededRandom } from './stats.mjs';

const { values: flags } = parseArgs({ options: { rows: { type: 'string', default: '100000' }, queries: { type: 'string', default: '200' }, dialects: { type: 'string', default: 'sqlite,pg,mysql' } } });
const ROWS = Number(flags.rows);
const QUERIES = Number(flags.queries);
const ale = createRequire(import.meta.url)('../index.js');
const ring = new ale.KeyRing(['bench-secret-0123456789-abcdefghijklmnop']);
const runtime = process.versions.bun ? `Bun ${process.versions.bun}` : `Node ${process.version}`;

/** The dialects: tables, DDL, the plaintext queries, and the index's size. */
const DIALECTS = {
  async sqlite() {
    const { integer, sqliteTable, text } = await import('drizzle-orm/sqlite-core');
    const m = await import('@sveltycms/ale/drizzle/sqlite');
    const dir = mkdtempSync(join(tmpdir(), 'ale-search-q-'));
    const s = await openSqlite(join(dir, 'q.db'));
    const enc = sqliteTable('sq_enc', { id: integer('id').primaryKey(), name: m.encryptedText('name', { collection: 'people', tenant: 'acme', keyRing: ring }), nameSearch: m.searchIndexColumn('name_search', { collection: 'people', field: 'name', tenant: 'acme', keyRing: ring, fts: 'sq_enc_fts' }) });
    const plain = sqliteTable('sq_plain', { id: integer('id').primaryKey(), name: text('name') });
    const plainFts = sqliteTable('sq_plain_fts', { rowid: integer('rowid') });
    for (const stmt of ['CREATE TABLE sq_plain (id INTEGER PRIMARY KEY, name TEXT)', "CREATE VIRTUAL TABLE sq_plain_fts USING fts5(name, content='sq_plain', content_rowid='id')", 'CREATE TABLE sq_enc (id INTEGER PRIMARY KEY, name TEXT, name_search TEXT)']) s.exec(stmt);
    return {
      name: `SQLite ${s.sqliteVersion} (${s.driver})`,
      m,
      db: s.db,
      enc,
      plain,
      // Both FTS5 tables filled in one go after the load and merged, as a migration over existing rows does (searchIndexSql ends with a rebuild and an optimize).
      afterLoad: () => {
        s.exec("INSERT INTO sq_plain_fts(sq_plain_fts) VALUES ('rebuild')");
        s.exec("INSERT INTO sq_plain_fts(sq_plain_fts) VALUES ('optimize')");
        for (const stmt of m.searchIndexSql(enc, enc.nameSearch, 'sq_enc_fts')) s.exec(stmt);
      },
      // The same page driven by the FTS5 table (searchHits).
      hits: (where) => {
        const hits = m.searchHits(where);
        return (limit, offset) => s.db.select({ id: enc.id, name: enc.name }).from(hits.table).innerJoin(enc, hits.on).where(hits.match).orderBy(asc(hits.rowid)).limit(limit).offset(offset);
      },
      // And through one statement prepared before the timing (searchHitsPlaceholder), against plaintext prepared the same way.
      prepared: () => {
        const hits = m.searchHitsPlaceholder(enc.nameSearch);
        const stmt = s.db.select({ id: enc.id, name: enc.name }).from(hits.table).innerJoin(enc, hits.on).where(hits.match).orderBy(asc(hits.rowid)).limit(sql.placeholder('limit')).offset(sql.placeholder('offset')).prepare();
        const firstPage = () => s.db.select({ id: plain.id, name: plain.name }).from(plain).orderBy(asc(plain.id)).limit(20);
        const plainStmts = {
          contains: firstPage().where(like(plain.name, sql.placeholder('q'))).prepare(),
          prefix: firstPage().where(or(like(plain.name, sql.placeholder('q')), like(plain.name, sql.placeholder('q2')))).prepare(),
          words: s.db.select({ id: plain.id, name: plain.name }).from(plainFts).innerJoin(plain, sql`${plainFts.rowid} = ${plain.id}`).where(sql`sq_plain_fts MATCH ${sql.placeholder('q')}`).orderBy(asc(plainFts.rowid)).limit(20).prepare(),
        };
        return {
          hits: (where) => {
            const match = hits.matchOf(where);
            return (limit, offset) => stmt.all({ match, limit, offset });
          },
          plaintext: (kind, q) => plainStmts[kind].all(kind === 'contains' ? { q: `%${q}%` } : kind === 'prefix' ? { q: `${q}%`, q2: `% ${q}%` } : { q: ftsWords(q) }),
        };
      },
      plaintext: {
        contains: (q) => like(plain.name, `%${q}%`),
        prefix: (q) => or(like(plain.name, `${q}%`), like(plain.name, `% ${q}%`)),
      },
      // Words through plaintext FTS5 the fast way too: driven by the FTS5 table, in rowid order.
      plainWords: (q) => s.db.select({ id: plain.id, name: plain.name }).from(plainFts).innerJoin(plain, sql`${plainFts.rowid} = ${plain.id}`).where(sql`sq_plain_fts MATCH ${ftsWords(q)}`).orderBy(asc(plainFts.rowid)).limit(20),
      against: { contains: "LIKE '%q%'", prefix: "LIKE 'q%' OR LIKE '% q%'", words: 'FTS5 (unicode61), driven by FTS5' },
      indexBytes: () => Number(s.all('SELECT SUM(length(name_search)) AS n FROM sq_enc')[0].n) + Number(s.all('SELECT SUM(length(block)) AS n FROM sq_enc_fts_data')[0].n),
      close: () => {
        s.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
  async pg() {
    if (!process.env.PG_URL) throw new Error('PG_URL is not set: eval "$(scripts/services.sh start)"');
    const { integer, pgTable, text } = await import('drizzle-orm/pg-core');
    const { default: postgres } = await import('postgres');
    const { drizzle } = await import('drizzle-orm/postgres-js');
    const m = await import('@sveltycms/ale/drizzle/pg');
    const client = postgres(process.env.PG_URL, { max: 2, onnotice: () => {} });
    const enc = pgTable('sq_enc', { id: integer('id').primaryKey(), name: m.encryptedText('name', { collection: 'people', tenant: 'acme', keyRing: ring }), nameSearch: m.searchIndexColumn('name_search', { collection: 'people', field: 'name', tenant: 'acme', keyRing: ring }) });
    const plain = pgTable('sq_plain', { id: integer('id').primaryKey(), name: text('name') });
    for (const stmt of ['DROP TABLE IF EXISTS sq_plain, sq_enc', 'CREATE TABLE sq_plain (id integer PRIMARY KEY, name text)', 'CREATE TABLE sq_enc (id integer PRIMARY KEY, name text, name_search bigint[])']) await client.unsafe(stmt);
    const [{ version }] = await client`select current_setting('server_version') as version`;
    return {
      name: `PostgreSQL ${version} (postgres.js)`,
      m,
      db: drizzle(client),
      enc,
      plain,
      afterLoad: async () => {
        for (const stmt of m.searchIndexSql(enc, enc.nameSearch, 'sq_enc_name')) await client.unsafe(stmt);
        await client.unsafe("CREATE INDEX sq_plain_fts ON sq_plain USING gin (to_tsvector('simple', name))");
        await client.unsafe('ANALYZE sq_plain; ANALYZE sq_enc');
      },
      plaintext: {
        contains: (q) => ilike(plain.name, `%${q}%`),
        prefix: (q) => or(ilike(plain.name, `${q}%`), ilike(plain.name, `% ${q}%`)),
        words: (q) => sql`to_tsvector('simple', ${plain.name}) @@ plainto_tsquery('simple', ${q})`,
      },
      against: { contains: "ILIKE '%q%'", prefix: "ILIKE 'q%' OR ILIKE '% q%'", words: "tsvector GIN ('simple')" },
      indexBytes: async () => {
        const [{ n }] = await client`SELECT (SELECT sum(pg_column_size(name_search)) FROM sq_enc) + pg_relation_size('sq_enc_name') AS n`;
        return Number(n);
      },
      close: () => client.end(),
    };
  },
  async mysql() {
    if (!process.env.MYSQL_URL) throw new Error('MYSQL_URL is not set: eval "$(scripts/services.sh start)"');
    const { int, mysqlTable, varchar } = await import('drizzle-orm/mysql-core');
    const { createPool } = await import('mysql2/promise');
    const { drizzle } = await import('drizzle-orm/mysql2');
    const m = await import('@sveltycms/ale/drizzle/mysql');
    const pool = createPool({ uri: process.env.MYSQL_URL, connectionLimit: 2 });
    const enc = mysqlTable('sq_enc', { id: int('id').primaryKey(), name: m.encryptedText('name', { collection: 'people', tenant: 'acme', keyRing: ring }), nameSearch: m.searchIndexColumn('name_search', { collection: 'people', field: 'name', tenant: 'acme', keyRing: ring }) });
    const plain = mysqlTable('sq_plain', { id: int('id').primaryKey(), name: varchar('name', { length: 255 }) });
    for (const stmt of ['DROP TABLE IF EXISTS sq_plain, sq_enc', 'CREATE TABLE sq_plain (id INT PRIMARY KEY, name VARCHAR(255)) CHARACTER SET utf8mb4', 'CREATE TABLE sq_enc (id INT PRIMARY KEY, name LONGTEXT, name_search MEDIUMTEXT)']) await pool.query(stmt);
    const [[{ v }]] = await pool.query('SELECT version() AS v');
    const rows = async (q, params) => (await pool.query(q, params))[0];
    return {
      name: `MariaDB ${v.split('-')[0]} (mysql2)`,
      m,
      db: drizzle(pool),
      enc,
      plain,
      afterLoad: async () => {
        for (const stmt of m.searchIndexSql(enc, enc.nameSearch, 'sq_enc_name')) await pool.query(stmt);
        await pool.query('ALTER TABLE sq_plain ADD FULLTEXT INDEX sq_plain_fts (name)');
      },
      plaintext: {
        contains: (q) => like(plain.name, `%${q}%`),
        prefix: (q) => or(like(plain.name, `${q}%`), like(plain.name, `% ${q}%`)),
        words: (q) => sql`MATCH(${plain.name}) AGAINST(${q.split(' ').map((w) => `+${w}`).join(' ')} IN BOOLEAN MODE)`,
      },
      against: { contains: "LIKE '%q%'", prefix: "LIKE 'q%' OR LIKE '% q%'", words: 'FULLTEXT (boolean)' },
      indexBytes: async () => Number((await rows('SELECT SUM(LENGTH(name_search)) AS n FROM sq_enc'))[0].n),
      close: () => pool.end(),
    };
  },
};

/** Plaintext FTS5's query for the words of `q`, each quoted. */
const ftsWords = (q) => q.split(' ').map((w) => `"${w.replace(/"/g, '')}"`).join(' AND ');

const corpus = people(ROWS, { seed: 31 });
const rand = seededRandom(7);
const pick = (list) => list[Math.floor(rand() * list.length)];
const wordsOf = (text) => text.split(/[\s<>@.,]+/u).filter((w) => w.length >= 3 && !/['"%_*\\]/.test(w));
const QUERY = {
  contains: () => {
    const w = pick(wordsOf(pick(corpus).name));
    const chars = Array.from(w);
    const start = Math.floor(rand() * Math.max(1, chars.length - 3));
    return chars.slice(start, start + 3 + Math.floor(rand() * 3)).join('');
  },
  prefix: () => Array.from(pick(wordsOf(pick(corpus).name))).slice(0, 3 + Math.floor(rand() * 3)).join(''),
  words: () => pick(wordsOf(pick(corpus).name)),
};

const ms = (x) => `${(x / 1e6).toFixed(2)} ms`;
const summary = (samples) => `${ms(nearestRank(samples, 0.5))} / ${ms(nearestRank(samples, 0.95))} / ${ms(mean(samples))}`;

console.log(`${runtime}, ${ROWS.toLocaleString('en-US')} rows, ${QUERIES} queries of each kind, a first page of 20 rows each\n`);
console.log('| runtime | dialect | query | encrypted form | encrypted median / p95 / mean | plaintext median / p95 / mean | the plaintext way | plaintext pages that differ | index per row |');
console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- |');
for (const name of flags.dialects.split(',')) {
  const d = await DIALECTS[name]();
  try {
    const t0 = Date.now();
    for (let at = 0; at < corpus.length; at += 500) {
      const batch = corpus.slice(at, at + 500);
      await d.db.insert(d.plain).values(batch.map((r) => ({ id: r.id, name: r.name })));
      await d.db.insert(d.enc).values(batch.map((r) => ({ id: r.id, name: r.name, nameSearch: r.name })));
    }
    await d.afterLoad();
    const loadS = (Date.now() - t0) / 1000;
    const perRow = (await d.indexBytes()) / ROWS;
    for (const kind of ['contains', 'prefix', 'words']) {
      const op = { contains: d.m.searchContains, prefix: d.m.searchPrefix, words: d.m.searchWords }[kind];
      // Each encrypted form: `where` on the table, and on SQLite also the page the FTS5 table drives.
      // A page shows id and name on both sides; the search column stays in the database.
      const forms = { where: (where) => (limit, offset) => d.db.select({ id: d.enc.id, name: d.enc.name }).from(d.enc).where(where).orderBy(asc(d.enc.id)).limit(limit).offset(offset) };
      if (d.hits) forms.searchHits = d.hits;
      const prepared = d.prepared?.();
      if (prepared) forms['searchHits, prepared'] = prepared.hits;
      let [asked, differ] = [0, 0];
      const times = { plain: [], plainPrepared: [], ...Object.fromEntries(Object.keys(forms).map((f) => [f, []])) };
      for (let i = 0; i < QUERIES; i++) {
        const q = QUERY[kind]();
        let where;
        try {
          where = op(d.enc.nameSearch, q);
        } catch {
          continue; // a query the index refuses
        }
        const pages = [];
        const encrypted = async () => {
          // The forms take turns going first too.
          const order = Object.entries(forms);
          for (const [form, fetch] of i % 4 < 2 ? order : order.reverse()) {
            const a = process.hrtime.bigint();
            const page = await d.m.searchPage(fetch(where), { limit: 20, matches: (r) => where.matches(r.name) });
            times[form].push(Number(process.hrtime.bigint() - a));
            pages.push([form, page]);
          }
        };
        // The plaintext page through the same Drizzle adapter, showing the same columns.
        let plainPage;
        const plaintext = async () => {
          const a = process.hrtime.bigint();
          plainPage = await (kind === 'words' && d.plainWords ? d.plainWords(q) : d.db.select({ id: d.plain.id, name: d.plain.name }).from(d.plain).where(d.plaintext[kind](q)).orderBy(asc(d.plain.id)).limit(20));
          times.plain.push(Number(process.hrtime.bigint() - a));
        };
        let plainPreparedPage;
        const plaintextPrepared = async () => {
          if (!prepared) return;
          const a = process.hrtime.bigint();
          plainPreparedPage = await prepared.plaintext(kind, q);
          times.plainPrepared.push(Number(process.hrtime.bigint() - a));
        };
        // The plaintext ways take turns going first, and each side goes first on every other query.
        const plaintextWays = async () => {
          for (const way of i % 4 < 2 ? [plaintext, plaintextPrepared] : [plaintextPrepared, plaintext]) await way();
        };
        if (i % 2) {
          await plaintextWays();
          await encrypted();
        } else {
          await encrypted();
          await plaintextWays();
        }
        if (prepared && JSON.stringify(plainPreparedPage.map((r) => r.id)) !== JSON.stringify(plainPage.map((r) => r.id))) throw new Error(`${name} ${kind} ${JSON.stringify(q)}: the prepared plaintext page differs from the unprepared one`);
        // The check: each exact page equals the plaintext answer's first 20 (definitions of docs/search.md).
        const expected = [];
        for (const r of corpus) {
          if (expected.length === 20) break;
          if (ale.searchMatches(r.name, q, kind)) expected.push(r.id);
        }
        for (const [form, page] of pages) if (JSON.stringify(page.rows.map((r) => r.id)) !== JSON.stringify(expected)) throw new Error(`${name} ${kind} ${JSON.stringify(q)}: the page (${form}) differs from the exact answer`);
        // The plaintext way folds case by its own rules (LIKE: ASCII only), so its page can differ: counted, not fatal.
        if (JSON.stringify(plainPage.map((r) => r.id)) !== JSON.stringify(expected)) differ++;
        asked++;
      }
      for (const form of Object.keys(forms)) {
        const against = form.endsWith('prepared') ? [times.plainPrepared, `${d.against[kind]}, prepared`] : [times.plain, d.against[kind]];
        console.log(`| ${runtime} | ${d.name} | ${kind} | ${form} | ${summary(times[form])} | ${summary(against[0])} | ${against[1]} | ${differ} of ${asked} | ${kind === 'contains' ? `${perRow.toFixed(0)} B (load ${loadS.toFixed(0)} s)` : ''} |`);
      }
    }
  } finally {
    await d.close();
  }
}
