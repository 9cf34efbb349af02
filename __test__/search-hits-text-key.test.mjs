// searchHits on a table keyed by text, as the CMS's content_nodes is (a
// TEXT `_id`, with SQLite's rowid beside it): the FTS5 table follows the
// rowid, so the pages FTS5 drives come in rowid order, which is neither the
// key's order nor its reverse here. Every SQLite driver of this runtime.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { asc, desc, sql } from 'drizzle-orm';
import { sqliteTable, text } from 'drizzle-orm/sqlite-core';
import * as m from '@sveltycms/ale/drizzle/sqlite';
import { openSqlite, SQLITE_DRIVERS } from '../bench/sqlite.mjs';
import { ale, SECRET, seeded } from './helpers.mjs';
import { people } from './fixtures/corpus.mjs';

const ring = new ale.KeyRing([SECRET]);
const on = { collection: 'content_nodes', tenant: 'acme', keyRing: ring };
const nodes = sqliteTable('nodes', {
  _id: text('_id').primaryKey(),
  name: m.encryptedText('name', on),
  nameSearch: m.searchIndexColumn('name_search', { ...on, field: 'name', fts: 'nodes_name_fts' }),
});

for (const driver of SQLITE_DRIVERS) {
  test(`searchHits on a table keyed by text (${driver}): pages in rowid order, up and down and prepared, equal the oracle`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ale-hits-text-'));
    const s = await openSqlite(join(dir, 'nodes.db'), { driver });
    try {
      s.exec('CREATE TABLE nodes (_id TEXT PRIMARY KEY, name TEXT, name_search TEXT)');
      for (const stmt of m.searchIndexSql(nodes, nodes.nameSearch, 'nodes_name_fts')) s.exec(stmt);
      const rand = seeded(`search-hits-text-key ${driver}`);
      // Keys in an order of their own: a random hex id, inserted one by one (rowid = insertion order).
      const rows = people(400, { seed: 5 }).map((p) => ({ _id: Math.floor(rand() * 2 ** 48).toString(16).padStart(12, '0'), name: p.name }));
      for (const r of rows) await s.db.insert(nodes).values({ ...r, nameSearch: r.name });
      const byKey = [...rows].sort((a, b) => (a._id < b._id ? -1 : 1));
      assert.notDeepEqual(byKey.map((r) => r._id), rows.map((r) => r._id), 'the key order differs from the rowid order');

      const placed = m.searchHitsPlaceholder(nodes.nameSearch);
      const prepared = s.db.select({ id: nodes._id, name: nodes.name }).from(placed.table).innerJoin(nodes, placed.on).where(placed.match).orderBy(asc(placed.rowid)).limit(sql.placeholder('limit')).offset(sql.placeholder('offset')).prepare();
      let compared = 0;
      for (let i = 0; i < 40; i++) {
        const word = rows[Math.floor(rand() * rows.length)].name.split(/[\s<>@.,]+/u).find((w) => Array.from(w).length >= 4);
        if (word === undefined) continue;
        const query = Array.from(word).slice(1, 4).join('');
        const where = m.searchContains(nodes.nameSearch, query);
        const expected = rows.filter((r) => ale.searchMatches(r.name, query, 'contains')).map((r) => r._id);
        const hits = m.searchHits(where);
        const page = (order, fetch) => m.searchPage(fetch ?? ((limit, offset) => s.db.select({ id: nodes._id, name: nodes.name }).from(hits.table).innerJoin(nodes, hits.on).where(hits.match).orderBy(order(hits.rowid)).limit(limit).offset(offset)), { limit: 5, matches: (row) => where.matches(row.name) });
        assert.deepEqual((await page(asc)).rows.map((r) => r.id), expected.slice(0, 5), `${query}, up`);
        assert.deepEqual((await page(desc)).rows.map((r) => r.id), [...expected].reverse().slice(0, 5), `${query}, down`);
        const once = await page(asc, (limit, offset) => prepared.all({ match: placed.matchOf(where), limit, offset }));
        assert.deepEqual(once.rows.map((r) => r.id), expected.slice(0, 5), `${query}, prepared`);
        compared++;
      }
      assert.ok(compared >= 30, `${compared} queries compared`);
    } finally {
      s.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
