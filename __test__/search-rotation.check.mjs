// Online rotation of the search key (docs/search.md, "Rotating the search
// key"): 20,000 rows on PostgreSQL whose tokens are under the previous
// secret, two worker processes running one reindexSearch job, and this
// process querying all the while. Every query's answer, read through the
// ring of both secrets, must equal the plaintext oracle's; afterwards every
// row's tokens are under the new secret. scripts/test.mjs runs it once, on
// Node, as its own suite.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { asc } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/postgres-js';
import * as mod from '@sveltycms/ale/drizzle/pg';
import { ale, OLD_SECRET, SECRET, seeded } from './helpers.mjs';
import { serverUrl } from './servers.mjs';
import { people } from './fixtures/corpus.mjs';
import { searchTable, TABLE } from './fixtures/search-rotation-table.mjs';

const worker = fileURLToPath(new URL('./fixtures/search-reindex-worker.mjs', import.meta.url));
const ROWS = 20_000;
const url = serverUrl('PG_URL');

function startWorker(job) {
  const p = spawn(process.execPath, [worker], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ALE_REINDEX: JSON.stringify(job) } });
  let out = '';
  p.stdout.on('data', (d) => (out += d));
  return new Promise((resolve) => p.on('close', (code) => resolve({ code, batches: (out.match(/^batch /gm) ?? []).length, done: JSON.parse(/^done (.*)$/m.exec(out)?.[1] ?? 'null') })));
}

/** Words of a name, as a query takes them. */
const wordsOf = (text) => text.split(/[\s<>@.,]+/u).filter(Boolean);

if (url) {
  test(`the search key rotates online: two workers re-index ${ROWS} rows while queries run, and every answer equals the plaintext oracle's`, async () => {
    const client = postgres(url, { max: 4, onnotice: () => {} });
    const db = drizzle(client);
    const rand = seeded('search-rotation');
    try {
      const [before, during, afterwards] = [[OLD_SECRET], [SECRET, OLD_SECRET], [SECRET]].map((s) => searchTable(mod, new ale.KeyRing(s)));
      await client.unsafe(`DROP TABLE IF EXISTS ${TABLE}`);
      await client.unsafe(`CREATE TABLE ${TABLE} (id integer PRIMARY KEY, tenant_id text NOT NULL, name text, name_search bigint[])`);
      for (const stmt of mod.searchIndexSql(before, before.nameSearch, `${TABLE}_name`)) await client.unsafe(stmt);
      const rows = people(ROWS, { seed: 21 });
      for (let at = 0; at < rows.length; at += 1000) {
        const batch = rows.slice(at, at + 1000).map((p) => ({ id: p.id, tenantId: 'acme', name: p.name, nameSearch: p.name }));
        await mod.withTenant('acme', () => db.insert(before).values(batch));
      }
      const normalized = rows.map((p) => ale.searchNormalize(p.name));
      /** One random query, read through `table`, against the oracle; false when the column refused it (too short), so nothing was compared. */
      const query = async (table, when) => {
        const p = rows[Math.floor(rand() * rows.length)];
        const word = wordsOf(p.name)[0];
        const kind = ['words', 'prefix', 'contains'][Math.floor(rand() * 3)];
        const q = kind === 'words' ? word : kind === 'prefix' ? Array.from(word).slice(0, 3).join('') : Array.from(p.name).slice(2, 6).join('');
        let where;
        try {
          where = await mod.withTenant('acme', async () => ({ words: mod.searchWords, prefix: mod.searchPrefix, contains: mod.searchContains })[kind](table.nameSearch, q));
        } catch (e) {
          assert.equal(e.code, 'ALE_INVALID_INPUT');
          return false;
        }
        const expected = rows.filter((r, i) => (kind === 'contains' ? normalized[i].includes(ale.searchNormalize(q)) : ale.searchMatches(r.name, q, kind))).map((r) => r.id);
        const page = await mod.withTenant('acme', () =>
          mod.searchPage((limit, offset) => db.select().from(table).where(where).orderBy(asc(table.id)).limit(limit).offset(offset), { limit: ROWS, matches: (row) => where.matches(row.name) }),
        );
        assert.deepEqual(page.rows.map((r) => r.id), expected, `${when}: ${kind} ${JSON.stringify(q)}`);
        return true;
      };
      // Queries run until both workers are done, and a few more after.
      // a job name of its own: a finished job of the same name would be done already
      const job = `search-rotation-${process.pid}-${Date.now()}`;
      const workers = [startWorker({ url, job }), startWorker({ url, job })];
      let running = true;
      let compared = 0;
      const finished = Promise.all(workers).finally(() => (running = false));
      while (running) if (await query(during, 'while two workers rotate the search key')) compared++;
      const results = await finished;
      for (const r of results) assert.equal(r.code, 0);
      assert.equal(results.reduce((n, r) => n + r.done.written, 0), ROWS, 'each row re-indexed once, by one worker or the other');
      assert.ok(results.every((r) => r.batches > 0), `both workers took ranges: ${results.map((r) => r.batches)}`);
      assert.ok(compared >= 20, `only ${compared} queries ran during the rotation`);
      // Every row's tokens are now under the new secret: a ring of it alone finds them all (and has none to write).
      const [{ n }] = await client.unsafe(`SELECT count(*)::int AS n FROM ${TABLE}`);
      assert.equal(n, ROWS);
      await mod.rotateKeys(db, { table: during, key: during.id, tenant: { column: during.tenantId }, keyRing: new ale.KeyRing([SECRET, OLD_SECRET]), columns: [{ column: during.name }] });
      let after = 0;
      for (let i = 0; i < 30; i++) if (await query(afterwards, 'on the new key alone')) after++;
      assert.ok(after >= 20, `only ${after} of 30 queries on the new key were compared (the rest refused)`);
      const again = await mod.reindexSearch(db, { table: afterwards, key: afterwards.id, tenant: { column: afterwards.tenantId }, columns: [{ source: afterwards.name, index: afterwards.nameSearch }] });
      assert.deepEqual([again.written, again.skipped], [0, ROWS], "a re-index on the new secret alone finds every row's tokens under it");
      console.log(`# ${compared} queries compared while the workers ran (${results.map((r) => r.batches).join(' + ')} batches)`);
    } finally {
      await client.end();
    }
  });
}
