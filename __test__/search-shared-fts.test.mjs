// A search index column as one column of an FTS5 table the application
// keeps already, as the CMS's content search does (`fts` names that table;
// no searchIndexSql): the other columns stay plaintext and searchable as
// before, and the search index column's queries, pages and re-index through
// the table's own triggers equal the oracle, through inserts, updates and
// deletes. Every SQLite driver of this runtime.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { asc, eq } from 'drizzle-orm';
import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import * as m from '@sveltycms/ale/drizzle/sqlite';
import { openSqlite, SQLITE_DRIVERS } from '../bench/sqlite.mjs';
import { ale, SECRET, seeded } from './helpers.mjs';
import { people } from './fixtures/corpus.mjs';

const ring = new ale.KeyRing([SECRET]);
const on = { collection: 'content_nodes', tenant: 'acme', keyRing: ring, field: 'data' };
const nodes = sqliteTable('content_nodes', {
  id: integer('id').primaryKey(),
  name: text('name').notNull(),
  data: m.encryptedText('data', on),
  dataSearch: m.searchIndexColumn('data_search', { ...on, fts: 'content_nodes_fts' }),
});

/** The CMS's kind of FTS5 table (default tokenizer, positions) over a plaintext column and the search index column, with its triggers. */
const DDL = [
  'CREATE TABLE content_nodes (id INTEGER PRIMARY KEY, name TEXT NOT NULL, data TEXT, data_search TEXT)',
  "CREATE VIRTUAL TABLE content_nodes_fts USING fts5(name, data_search, content='content_nodes', content_rowid='id')",
  'CREATE TRIGGER content_nodes_ai AFTER INSERT ON content_nodes BEGIN INSERT INTO content_nodes_fts(rowid, name, data_search) VALUES (new.id, new.name, new.data_search); END',
  "CREATE TRIGGER content_nodes_ad AFTER DELETE ON content_nodes BEGIN INSERT INTO content_nodes_fts(content_nodes_fts, rowid, name, data_search) VALUES ('delete', old.id, old.name, old.data_search); END",
  `CREATE TRIGGER content_nodes_au AFTER UPDATE ON content_nodes BEGIN
     INSERT INTO content_nodes_fts(content_nodes_fts, rowid, name, data_search) VALUES ('delete', old.id, old.name, old.data_search);
     INSERT INTO content_nodes_fts(rowid, name, data_search) VALUES (new.id, new.name, new.data_search);
   END`,
];

for (const driver of SQLITE_DRIVERS) {
  test(`a search index column in the application's own FTS5 table (${driver}): searches equal the oracle through inserts, updates and deletes, and the plaintext column's FTS5 search still works`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ale-shared-fts-'));
    const s = await openSqlite(join(dir, 'nodes.db'), { driver });
    try {
      for (const stmt of DDL) s.exec(stmt);
      const rand = seeded(`search-shared-fts ${driver}`);
      const rows = new Map(people(300, { seed: 9 }).map((p) => [p.id, { id: p.id, name: `page ${p.id % 7 === 0 ? 'featured' : 'plain'}`, data: `${p.name} ${p.city}` }]));
      for (const r of rows.values()) await s.db.insert(nodes).values({ ...r, dataSearch: r.data });
      // Updates that change the text (the trigger re-indexes both columns), and deletes.
      const ids = [...rows.keys()];
      for (let i = 0; i < 40; i++) {
        const id = ids[Math.floor(rand() * ids.length)];
        const other = rows.get(ids[Math.floor(rand() * ids.length)]).data;
        const data = `${other.split(' ').reverse().join(' ')} edited`;
        await s.db.update(nodes).set({ data, dataSearch: data }).where(eq(nodes.id, id));
        rows.get(id).data = data;
      }
      for (let i = 0; i < 20; i++) {
        const id = ids[Math.floor(rand() * ids.length)];
        await s.db.delete(nodes).where(eq(nodes.id, id));
        rows.delete(id);
      }
      const live = [...rows.values()].sort((a, b) => a.id - b.id);

      // The plaintext column is searched through the same table as before; tokens never answer for it.
      const featured = s.all("SELECT rowid AS id FROM content_nodes_fts WHERE content_nodes_fts MATCH 'name : featured' ORDER BY rowid").map((r) => Number(r.id));
      assert.deepEqual(featured, live.filter((r) => r.name.includes('featured')).map((r) => r.id));
      assert.ok(featured.length > 10, `${featured.length} featured rows`);

      let compared = 0;
      for (let i = 0; i < 60; i++) {
        // Words as the package reads them (docs/search.md, "The scheme"): a street such as "Henry-T.-v.-Böttinger-Str." split
        // at spaces and dots only gave "-Böttinger-Str", whose prefix "-Böt" is no word's, and no row's.
        const words = live[Math.floor(rand() * live.length)].data.split(/[^\p{Alphabetic}\p{N}\p{M}]+/u).filter((w) => Array.from(w).length >= 3);
        if (words.length === 0) continue;
        const word = words[Math.floor(rand() * words.length)];
        const [kind, query] = [
          ['contains', Array.from(word).slice(0, 3).join('')],
          ['prefix', Array.from(word).slice(0, 4).join('')],
          ['words', word],
        ][i % 3];
        const where = { contains: m.searchContains, prefix: m.searchPrefix, words: m.searchWords }[kind](nodes.dataSearch, query);
        const expected = live.filter((r) => ale.searchMatches(r.data, query, kind)).map((r) => r.id);
        assert.ok(expected.length > 0, `${kind} ${query}: the oracle finds its own row`);
        const all = await m.searchPage((limit, offset) => s.db.select({ id: nodes.id, data: nodes.data }).from(nodes).where(where).orderBy(asc(nodes.id)).limit(limit).offset(offset), { limit: 1000, matches: (r) => where.matches(r.data) });
        assert.deepEqual(all.rows.map((r) => r.id), expected, `${kind} ${query}`);
        // The pages FTS5 drives, from the shared table.
        const hits = m.searchHits(where);
        const page = await m.searchPage((limit, offset) => s.db.select({ id: nodes.id, data: nodes.data }).from(hits.table).innerJoin(nodes, hits.on).where(hits.match).orderBy(asc(hits.rowid)).limit(limit).offset(offset), { limit: 3, matches: (r) => where.matches(r.data) });
        assert.deepEqual(page.rows.map((r) => r.id), expected.slice(0, 3), `${kind} ${query}, searchHits`);
        compared++;
      }
      assert.ok(compared >= 50, `${compared} queries compared`);
      // The table holds what its triggers were given: FTS5's own check of an external-content table.
      s.exec("INSERT INTO content_nodes_fts(content_nodes_fts, rank) VALUES ('integrity-check', 1)");
      assert.equal(Number(s.all('select count(*) as n from content_nodes')[0].n), live.length);
    } finally {
      s.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
