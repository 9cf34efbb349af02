// Search through Drizzle against a plaintext oracle, on one dialect and
// driver: 10,000 rows of a multi-script corpus under one tenant (and 500
// under another, which no query may return), searchable columns with each
// option, and 1,000 random queries of each kind whose exact pages must equal
// the oracle's, row for row. The oracle is the definitions of docs/search.md
// written again in plain JS over the normalized text (checked against
// searchMatches on every row it returns and on random others). A dialect
// test supplies its module, table builders and a connection.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { and, asc, desc, eq, sql } from 'drizzle-orm';
import { integer, sqliteTable } from 'drizzle-orm/sqlite-core';
import { ale, eventually as waitFor, hexOf, OLD_SECRET, SECRET, searchWordsOf, seeded } from './helpers.mjs';
import { people } from './fixtures/corpus.mjs';

export const ROWS = 10_000;
const OTHER_TENANT_ROWS = 500;
const QUERIES = 1_000;

/**
 * @param {object} d
 * @param {string} d.name
 * @param {any} d.mod  the '@sveltycms/ale/drizzle/<dialect>' module
 * @param {(mod: any, options: { ring?: any, keys?: any, name: string }) => any} d.table  a search table named after `name` (id, tenant_id, name, name_search, city, city_search), its columns on `ring`, on the tenant key store `keys`, or on the process-wide ring
 * @param {(table: any) => Promise<{ db: any, reset: (table: any) => Promise<void>, close: () => Promise<void> | void, explain: (query: any, table: any) => Promise<string>, shown?: (table: any, column: any) => Promise<{ held: number, shown: number }> }>} d.connect
 *   `shown`, needed where `concurrentReads` is false: how many rows hold tokens in a column, and how many of them its index shows
 * @param {boolean} [d.concurrentReads]  false: the index is not transactional for readers (InnoDB FULLTEXT), so no query runs while rows are rewritten
 */
export function searchSuite(d) {
  const { mod } = d;
  const ring = new ale.KeyRing([SECRET]);
  const table = d.table(mod, { ring, name: 'search_people' });
  const acme = people(ROWS, { seed: 7 });
  const globex = people(OTHER_TENANT_ROWS, { seed: 7, firstId: ROWS + 1 });
  let conn;
  /**
   * `get()` resolves to `expected`; on a dialect whose index shows a
   * committed change a moment late (InnoDB FULLTEXT: d.concurrentReads
   * false), within a second of asking.
   */
  const eventually = (get, expected, message) => waitFor(get, expected, message, d.concurrentReads === false);
  const insert = async (tenant, rows) => {
    for (let at = 0; at < rows.length; at += 250) {
      const batch = rows.slice(at, at + 250).map((p) => ({ id: p.id, tenantId: tenant, name: p.name, nameSearch: p.name, city: p.city, citySearch: p.city }));
      await mod.withTenant(tenant, () => conn.db.insert(table).values(batch));
    }
  };
  const COLUMNS = {
    name: { search: () => table.nameSearch, accents: false },
    city: { search: () => table.citySearch, accents: true },
  };
  const OPERATORS = { contains: mod.searchContains, prefix: mod.searchPrefix, words: mod.searchWords };
  /** Each row's columns as the oracle reads them: normalized, with their words and where words start. */
  const read = acme.map((p) => Object.fromEntries(Object.keys(COLUMNS).map((c) => [c, plainForm(ale.searchNormalize(p[c], COLUMNS[c].accents))])));
  /** The plaintext answer: the ids of the tenant's rows whose value answers, in id order. */
  const oracle = (column, query, kind) => {
    const accents = COLUMNS[column].accents;
    const test = plainTest(query, kind, (text) => ale.searchNormalize(text, accents));
    const ids = [];
    for (let i = 0; i < acme.length; i++) if (test(read[i][column])) ids.push(acme[i].id);
    return ids;
  };
  /** The oracle and searchMatches agree on `ids` and on 20 random rows. */
  const agree = (column, query, kind, ids, int) => {
    const expected = new Set(ids);
    const sample = [...ids.slice(0, 50), ...Array.from({ length: 20 }, () => acme[int(acme.length)].id)];
    for (const id of sample) {
      const p = acme[id - 1];
      assert.equal(ale.searchMatches(p[column], query, kind, COLUMNS[column].accents), expected.has(id), `oracle and searchMatches differ: ${kind} ${JSON.stringify(query)} on ${JSON.stringify(p[column])}`);
    }
  };
  const pageOf = (where, column, options) =>
    mod.withTenant('acme', () =>
      mod.searchPage((limit, offset) => conn.db.select().from(table).where(where).orderBy(asc(table.id)).limit(limit).offset(offset), { ...options, matches: (row) => where.matches(row[column]) }),
    );

  describe(`search through Drizzle: ${d.name}`, () => {
    before(async () => {
      conn = await d.connect(table);
      await conn.reset(table);
      await insert('acme', acme);
      await insert('globex', globex);
      if (d.concurrentReads === false) {
        // InnoDB shows the last batches' rows to the other connection a
        // moment after their commits (docs/search.md, "Per dialect"): the
        // queries below would miss them. They start once every row shows.
        for (const column of [table.nameSearch, table.citySearch]) {
          let again = 0;
          let seen = await conn.shown(table, column);
          for (const deadline = Date.now() + 1_000; seen.shown !== seen.held && Date.now() < deadline; again++) {
            await new Promise((r) => setTimeout(r, 50));
            seen = await conn.shown(table, column);
          }
          assert.equal(seen.shown, seen.held, `${column.name}: the index shows ${seen.shown} of the ${seen.held} rows holding tokens`);
          assert.ok(seen.held >= ROWS, `${column.name}: only ${seen.held} rows hold tokens`);
          console.log(`# ${d.name}: ${column.name}'s index shows all ${seen.held} rows (asked again ${again} times, 50 ms apart)`);
        }
      }
    });
    after(async () => {
      await conn?.close();
    });

    test(`${QUERIES} random queries (contains, prefix and words) over ${ROWS} multi-script rows: every exact page equals the plaintext oracle's (0 false positives, 0 false negatives)`, async () => {
      const rand = seeded(`search-suite ${d.name}`);
      const int = (n) => Math.floor(rand() * n);
      const pick = (list) => list[int(list.length)];
      const words = (text) => text.split(/[\s,<>@.]+/u).filter(Boolean);
      const cut = (text, from, length) => Array.from(text).slice(from, from + length).join('');
      const shout = (q) => (rand() < 0.25 ? q.toUpperCase() : q);
      const makeQuery = (kind, value) => {
        if (rand() < 0.15) value = pick(acme)[pick(['name', 'city'])]; // most likely elsewhere, or nowhere
        const w = words(value);
        if (kind === 'contains') return shout(cut(value, int(Array.from(value).length), 3 + int(8)));
        if (kind === 'prefix') return shout(cut(rand() < 0.3 ? value : pick(w) ?? value, 0, 1 + int(8)));
        const some = Array.from({ length: 1 + int(2) }, () => pick(w) ?? 'x');
        if (rand() < 0.4) some[some.length - 1] = `${cut(some[some.length - 1], 0, 1 + int(5))}*`;
        return shout(some.join(' '));
      };
      const done = { contains: 0, prefix: 0, words: 0 };
      const total = () => done.contains + done.prefix + done.words;
      let refusedByIndex = 0;
      let whole = 0;
      let matchedRows = 0;
      const stats = { read: 0, refused: 0 };
      while (total() < QUERIES) {
        const kind = pick(Object.keys(done));
        const column = pick(Object.keys(COLUMNS));
        const person = pick(acme);
        const query = makeQuery(kind, person[column]);
        let where;
        try {
          where = await mod.withTenant('acme', async () => OPERATORS[kind](COLUMNS[column].search(), query));
        } catch (e) {
          // a query the index cannot serve (under 3 characters for contains, no word): refused, coded, before any SQL
          assert.equal(e.code, 'ALE_INVALID_INPUT', `${kind} ${JSON.stringify(query)}: ${e.message}`);
          refusedByIndex++;
          continue;
        }
        const expected = oracle(column, query, kind);
        agree(column, query, kind, expected, int);
        const label = `${d.name}: ${kind} ${JSON.stringify(query)} on ${column}`;
        const first = await pageOf(where, column, { limit: 10 });
        assert.deepEqual(first.rows.map((r) => r.id), expected.slice(0, 10), `${label}, page 1`);
        if (expected.length > 10) assert.notEqual(first.cursor, undefined, `${label}: more pages, so a cursor`);
        if (expected.length < 10) assert.equal(first.cursor, undefined, `${label}: the last page, so no cursor`);
        if (first.cursor !== undefined) {
          const second = await pageOf(where, column, { limit: 10, cursor: first.cursor });
          assert.deepEqual(second.rows.map((r) => r.id), expected.slice(10, 20), `${label}, page 2 by cursor`);
          const skipped = await pageOf(where, column, { limit: 10, offset: 10 });
          assert.deepEqual(skipped.rows.map((r) => r.id), expected.slice(10, 20), `${label}, page 2 by offset`);
        }
        // Every tenth query in full: the whole candidate set, tested.
        if (total() % 10 === 0) {
          const all = await pageOf(where, column, { limit: ROWS + OTHER_TENANT_ROWS });
          assert.deepEqual(all.rows.map((r) => r.id), expected, `${label}, every match`);
          stats.read += all.read;
          stats.refused += all.refused;
          whole++;
        }
        matchedRows += expected.length;
        done[kind]++;
      }
      assert.ok(matchedRows > QUERIES, `the queries matched only ${matchedRows} rows in all: too few to test anything`);
      assert.ok(Math.min(...Object.values(done)) > QUERIES / 5, `too few of one kind: ${JSON.stringify(done)}`);
      console.log(
        `# ${d.name}: ${QUERIES} queries compared ${JSON.stringify(done)} (${refusedByIndex} refused by the index first), ${whole} of them in full: ` +
          `${stats.read} candidates, ${stats.refused} false positives removed (${((100 * stats.refused) / Math.max(1, stats.read)).toFixed(2)}%)`,
      );
    });

    test("another tenant's tokens answer for its rows only, and a query outside any tenant scope is refused", async () => {
      const p = globex[3];
      const where = await mod.withTenant('globex', async () => mod.searchWords(table.nameSearch, words1(p.name)));
      const rows = await mod.withTenant('globex', () => conn.db.select().from(table).where(where));
      assert.ok(rows.length >= 1 && rows.every((r) => r.tenantId === 'globex'), `${rows.length} rows`);
      await assert.rejects(async () => mod.searchWords(table.nameSearch, 'müller'), { code: 'ALE_INVALID_CONTEXT' });
    });

    test("a candidate that does not decrypt in the tenant's context (another tenant's row whose words answer by chance) is left out of the page and reported, and the page stays exact", async () => {
      // The chance made certain: a globex row holds acme's tokens of a word no acme row has.
      const [foreign, word] = [globex[5], 'zyxwvutsrq'];
      await mod.withTenant('acme', () => conn.db.update(table).set({ nameSearch: `${word} ${acme[0].name}` }).where(eq(table.id, foreign.id)));
      try {
        const page = async (q, options) => pageOf(await mod.withTenant('acme', async () => mod.searchWords(table.nameSearch, q)), 'name', { limit: 10, ...options });
        await eventually(async () => (await page(word)).failures.map((f) => [f.key, f.column, f.code]), [[undefined, 'name', 'ALE_AUTH_FAILED']], 'the foreign candidate is reported');
        const alone = await page(word);
        assert.deepEqual([alone.rows, alone.read, alone.refused], [[], 1, 0]);
        // with `key`, the report names the row, as readWithFailures' does
        const named = await page(word, { key: 'id', table: 'search_people' });
        assert.deepEqual(named.failures.map((f) => f.key), [foreign.id]);
        assert.match(named.failures[0].message, new RegExp(`table "search_people", column "name", .*tenant "acme", row ${foreign.id}:`));
        for (const value of [word, foreign.name, foreign.city]) assert.ok(!alone.failures[0].message.includes(value), 'no value in the report');
        // with acme's own matches beside it, every page is the oracle's, by cursor and by offset
        const own = words1(acme[0].name);
        const where = await mod.withTenant('acme', async () => mod.searchWords(table.nameSearch, own));
        const expected = oracle('name', own, 'words');
        const all = await pageOf(where, 'name', { limit: ROWS });
        assert.deepEqual([all.rows.map((r) => r.id), all.failures.length], [expected, 1]);
        const first = await pageOf(where, 'name', { limit: 1 });
        const next = await pageOf(where, 'name', { limit: ROWS, cursor: first.cursor });
        const skipped = await pageOf(where, 'name', { limit: ROWS, offset: 1 });
        assert.deepEqual([first.rows, next.rows, skipped.rows].map((rows) => rows.map((r) => r.id)), [expected.slice(0, 1), expected.slice(1), expected.slice(1)]);
        // Newest first, the foreign row is the first candidate: reported by the first page, and not again by the page after it, by offset or by cursor.
        assert.ok(expected.length >= 2, 'a page after the first needs two matches');
        const newest = (options) =>
          mod.withTenant('acme', () => mod.searchPage((limit, offset) => conn.db.select().from(table).where(where).orderBy(desc(table.id)).limit(limit).offset(offset), { ...options, matches: (row) => where.matches(row.name) }));
        const top = await newest({ limit: 1 });
        const [after, byOffset] = [await newest({ limit: ROWS, cursor: top.cursor }), await newest({ limit: ROWS, offset: 1 })];
        assert.deepEqual([top, after, byOffset].map((p) => p.failures.length), [1, 0, 0]);
        assert.deepEqual([after.rows, byOffset.rows].map((rows) => rows.map((r) => r.id)), [expected.slice(0, -1).reverse(), expected.slice(0, -1).reverse()]);
        // A row is looked into only when its batch had a failed cell, and then through plain objects and arrays, not a
        // String object such as a StoredIndex (whose values are its characters): counted by proxies added to each row.
        const looked = { plain: 0, string: 0 };
        const probed = (q) =>
          mod.withTenant('acme', async () => {
            const w = mod.searchWords(table.nameSearch, q);
            const fetch = async (limit, offset) =>
              (await conn.db.select().from(table).where(w).orderBy(asc(table.id)).limit(limit).offset(offset)).map((row) => ({
                ...row,
                plain: new Proxy({}, { ownKeys: (t) => (looked.plain++, Reflect.ownKeys(t)) }),
                string: new Proxy(new String('abc'), { ownKeys: (t) => (looked.string++, Reflect.ownKeys(t)) }),
              }));
            return mod.searchPage(fetch, { limit: ROWS, matches: (row) => w.matches(row.name) });
          });
        // a word of another acme row, not in the foreign row's words
        const other = acme.map((p) => words1(p.name)).find((w) => !ale.searchMatches(`${word} ${acme[0].name}`, w, 'words', COLUMNS.name.accents));
        assert.ok(other, "a word of acme's that the foreign row does not hold");
        const clean = await probed(other);
        assert.ok(clean.read > 0, 'rows read');
        assert.deepEqual([clean.failures.length, looked.plain], [0, 0], 'no failed cell: no row looked into');
        const mixed = await probed(own);
        assert.equal(mixed.failures.length, 1);
        assert.ok(looked.plain > 0, 'a failed cell: rows looked into');
        assert.equal(looked.string, 0, 'never a String object');
        // rows the fetch made into class instances, or nested in an object of its own: the failure is still found
        for (const shape of [(row) => Object.assign(new (class Person {})(), row), (row) => ({ p: row })]) {
          const shaped = await mod.withTenant('acme', async () => {
            const w = mod.searchWords(table.nameSearch, own);
            const fetch = async (limit, offset) => (await conn.db.select().from(table).where(w).orderBy(asc(table.id)).limit(limit).offset(offset)).map(shape);
            return mod.searchPage(fetch, { limit: ROWS, matches: (row) => w.matches((row.p ?? row).name) });
          });
          assert.deepEqual([shaped.failures.length, shaped.rows.length], [1, expected.length]);
        }
        // rows made into one cell each, or nested under a key of their own: reported, named by the candidate row's key
        for (const [shape, value, key] of [
          [(row) => row.name, (row) => row, undefined],
          [(row) => ({ id: `candidate ${row.id}`, p: row }), (row) => row.p.name, `candidate ${foreign.id}`],
        ]) {
          const shaped = await mod.withTenant('acme', async () => {
            const w = mod.searchWords(table.nameSearch, own);
            const fetch = async (limit, offset) => (await conn.db.select().from(table).where(w).orderBy(asc(table.id)).limit(limit).offset(offset)).map(shape);
            return mod.searchPage(fetch, { limit: ROWS, key: 'id', matches: (row) => w.matches(value(row)) });
          });
          assert.deepEqual([shaped.failures.map((f) => f.key), shaped.rows.length], [[key], expected.length]);
        }
        // a failure that is not one value's (no tenant in scope) fails the page, as it fails any read
        await assert.rejects(
          mod.searchPage((limit, offset) => conn.db.select().from(table).where(where).orderBy(asc(table.id)).limit(limit).offset(offset), { limit: 5, matches: () => true }),
          { code: 'ALE_INVALID_CONTEXT' },
        );
      } finally {
        await mod.withTenant('globex', () => conn.db.update(table).set({ nameSearch: foreign.name }).where(eq(table.id, foreign.id)));
      }
    });

    /** Sets `column` of row `id` to `value` as it is, past the column's codec; `undo()` puts back what it held. */
    const damage = async (t, column, id, value) => {
      const [{ raw }] = await conn.db.select({ raw: sql`${column}` }).from(t).where(eq(t.id, id));
      const set = (v) => conn.db.update(t).set({ [Object.entries(t).find(([, c]) => c === column)[0]]: sql`${v}` }).where(eq(t.id, id));
      await set(value);
      return { raw, undo: () => set(raw) };
    };

    test("a candidate of the tenant's own whose cell is no envelope this build reads (cut short, a later version) is left out and reported with its code, as a failed tag check is", async () => {
      const victim = acme[3];
      const { raw } = await damage(table, table.name, victim.id, null);
      const q = words1(victim.name);
      const where = await mod.withTenant('acme', async () => mod.searchWords(table.nameSearch, q));
      const expected = oracle('name', q, 'words').filter((id) => id !== victim.id);
      try {
        for (const [bad, code] of [
          [raw.split(':').slice(0, 3).join(':'), 'ALE_MALFORMED_ENVELOPE'],
          [`v3${raw.slice(2)}`, 'ALE_UNSUPPORTED_VERSION'],
        ]) {
          await damage(table, table.name, victim.id, bad);
          const page = await pageOf(where, 'name', { limit: ROWS, key: 'id' });
          assert.deepEqual([page.rows.map((r) => r.id), page.failures.map((f) => [f.key, f.column, f.code])], [expected, [[victim.id, 'name', code]]]);
        }
      } finally {
        await damage(table, table.name, victim.id, raw);
      }
    });

    test('reindexSearch builds the index of rows written without one, and rotates the search key online: queries stay exact before, during and after', async () => {
      const rand = seeded(`search-suite rotation ${d.name}`);
      const [oldRing, bothRings, newRing] = [new ale.KeyRing([OLD_SECRET]), new ale.KeyRing([SECRET, OLD_SECRET]), new ale.KeyRing([SECRET])];
      const [before, during, afterwards] = [oldRing, bothRings, newRing].map((r) => d.table(mod, { ring: r, name: 'search_rot' }));
      const rows = people(600, { seed: 11 });
      await conn.reset(before);
      // Written before the column had an index: the tokens are NULL.
      await mod.withTenant('acme', () => conn.db.insert(before).values(rows.map((p) => ({ id: p.id, tenantId: 'acme', name: p.name, city: p.city }))));
      const reindex = (t, extra = {}) =>
        mod.reindexSearch(conn.db, { table: t, key: t.id, tenant: { column: t.tenantId }, batchSize: 100, columns: [{ source: t.name, index: t.nameSearch }, { source: t.city, index: t.citySearch }], ...extra });
      // a value that does not open is its own column's failure, not the index's beside it
      const damaged = await damage(before, before.city, rows[0].id, 'not an envelope');
      const bad = await reindex(before).then(() => null, (error) => error);
      assert.deepEqual([bad?.code, bad?.column], ['ALE_MALFORMED_ENVELOPE', 'city'], String(bad));
      await damaged.undo();
      const built = await reindex(before);
      assert.deepEqual([built.scanned, built.written, built.skipped], [600, 1200, 0]);
      assert.deepEqual([(await reindex(before)).written, (await reindex(before)).skipped], [0, 1200]);
      const texts = new Map(rows.map((p) => [p.id, p]));
      /** Five random values' queries on `t`, each equal to the plaintext answer over `texts`; most must be compared, not refused. */
      const exact = async (t, when) => {
        let compared = 0;
        for (let i = 0; i < 5; i++) {
          const p = rows[Math.floor(rand() * rows.length)];
          const word = p.name.split(/[\s<>@.,]+/u).filter(Boolean)[0];
          for (const [kind, query] of [['words', word], ['prefix', word.slice(0, 3)], ['contains', Array.from(p.name).slice(1, 5).join('')]]) {
            let where;
            try {
              where = await mod.withTenant('acme', async () => ({ contains: mod.searchContains, prefix: mod.searchPrefix, words: mod.searchWords })[kind](t.nameSearch, query));
            } catch (e) {
              assert.equal(e.code, 'ALE_INVALID_INPUT');
              continue;
            }
            const test = plainTest(query, kind, (text) => ale.searchNormalize(text));
            const expected = [...texts.values()].filter((r) => test(plainForm(ale.searchNormalize(r.name)))).map((r) => r.id).sort((a, b) => a - b);
            const ids = async () =>
              (
                await mod.withTenant('acme', () =>
                  mod.searchPage((limit, offset) => conn.db.select().from(t).where(where).orderBy(asc(t.id)).limit(limit).offset(offset), { limit: 1000, matches: (row) => where.matches(row.name) }),
                )
              ).rows.map((r) => r.id);
            await eventually(ids, expected, `${when}: ${kind} ${JSON.stringify(query)}`);
            compared++;
          }
        }
        assert.ok(compared >= 10, `${when}: only ${compared} of 15 queries were compared (the rest refused)`);
      };
      await exact(before, 'after building the index');
      // The ring gains a new primary secret: the rows' tokens are under the previous one, new writes under the new one.
      const added = people(20, { seed: 12, firstId: 1001 });
      await mod.withTenant('acme', () => conn.db.insert(during).values(added.map((p) => ({ id: p.id, tenantId: 'acme', name: p.name, nameSearch: p.name, city: p.city, citySearch: p.city }))));
      for (const p of added) texts.set(p.id, p);
      rows.push(...added);
      await exact(during, 'once the ring has a new primary');
      let checks = 0;
      const rotated = await reindex(during, { onProgress: () => void checks++ });
      assert.equal(rotated.written, 1200, 'every row but the new ones, both columns');
      assert.equal(rotated.skipped, 40);
      await exact(during, 'after the rotation, on the ring of both');
      // Only the new key now (its values rotated too): every row's tokens are under it.
      await mod.rotateKeys(conn.db, { table: during, key: during.id, tenant: { column: during.tenantId }, keyRing: bothRings, columns: [{ column: during.name }, { column: during.city }] });
      await exact(afterwards, 'on the new key alone');
      assert.equal((await reindex(afterwards)).written, 0, "every row's tokens are the new key's");
      assert.equal(checks, 7);
    });

    // PostgreSQL stores each token's 64 bits, as it did before.
    if (!d.name.startsWith('pg')) test('a column written before the words were 30 bits (16 hex digits a token) is found again once reindexSearch rewrites it', async () => {
      const ring = new ale.KeyRing([SECRET]);
      const t = d.table(mod, { ring, name: 'search_old_words' });
      const rows = people(40, { seed: 14 });
      await conn.reset(t);
      await mod.withTenant('acme', () => conn.db.insert(t).values(rows.map((p) => ({ id: p.id, tenantId: 'acme', name: p.name, nameSearch: p.name, city: p.city, citySearch: p.city }))));
      // the text these columns wrote before, made here from the tokens
      const oldText = (text) => hexOf(ring.searchTokens(text, 'acme', 'people', 'name')).join(' ');
      for (const p of rows) await conn.db.update(t).set({ nameSearch: sql`${oldText(p.name)}` }).where(sql`${t.id} = ${p.id}`);
      const word = rows[0].name.split(/[\s<>@.,]+/u).filter(Boolean)[0];
      const where = await mod.withTenant('acme', async () => mod.searchWords(t.nameSearch, word));
      const expected = rows.filter((p) => where.matches(p.name)).map((p) => p.id);
      assert.ok(expected.length > 0);
      const found = async () => (await mod.withTenant('acme', () => conn.db.select().from(t).where(where).orderBy(asc(t.id)))).filter((r) => where.matches(r.name)).map((r) => r.id);
      await eventually(found, [], 'the old words are not looked up');
      const rewritten = await mod.reindexSearch(conn.db, { table: t, key: t.id, tenant: { column: t.tenantId }, columns: [{ source: t.name, index: t.nameSearch }] });
      assert.equal(rewritten.written, rows.length, 'every row rewritten');
      await eventually(found, expected, 'found after reindexSearch');
    });

    test('a rotation of the search key stopped halfway leaves every query exact, and queries that run while it goes on stay exact', async () => {
      const rand = seeded(`search-suite half ${d.name}`);
      const [oldRing, bothRings] = [new ale.KeyRing([OLD_SECRET]), new ale.KeyRing([SECRET, OLD_SECRET])];
      const [before, during] = [oldRing, bothRings].map((r) => d.table(mod, { ring: r, name: 'search_half' }));
      const rows = people(300, { seed: 13 });
      await conn.reset(before);
      await mod.withTenant('acme', () => conn.db.insert(before).values(rows.map((p) => ({ id: p.id, tenantId: 'acme', name: p.name, nameSearch: p.name, city: p.city, citySearch: p.city }))));
      const queries = rows.map((p) => p.name.split(/[\s<>@.,]+/u).filter(Boolean)[0]);
      let compared = 0;
      let lagged = 0;
      const check = async (when) => {
        for (let i = 0; i < 4; i++) {
          const query = queries[Math.floor(rand() * queries.length)];
          const where = await mod.withTenant('acme', async () => mod.searchWords(during.nameSearch, query));
          const test = plainTest(query, 'words', (text) => ale.searchNormalize(text));
          const expected = rows.filter((r) => test(plainForm(ale.searchNormalize(r.name)))).map((r) => r.id);
          const answer = async () => (await mod.withTenant('acme', () => conn.db.select({ id: during.id, name: during.name }).from(during).where(where).orderBy(asc(during.id)))).filter((r) => where.matches(r.name)).map((r) => r.id);
          let got = await answer();
          // InnoDB shows a committed FULLTEXT change to other connections a moment later (docs/search.md): there, the answer must come within a second.
          for (const deadline = Date.now() + 1_000; d.concurrentReads === false && JSON.stringify(got) !== JSON.stringify(expected) && Date.now() < deadline; ) {
            lagged++;
            await new Promise((r) => setTimeout(r, 50));
            got = await answer();
          }
          assert.deepEqual(got, expected, `words ${JSON.stringify(query)} ${when}`);
          compared++;
        }
      };
      const reindex = (onProgress) =>
        mod.reindexSearch(conn.db, { table: during, key: during.id, tenant: 'acme', batchSize: 50, columns: [{ source: during.name, index: during.nameSearch }], onProgress });
      // Stopped after two batches: 100 rows hold the new key's tokens, 200 the previous key's.
      const stop = new Error('stop');
      let batches = 0;
      await assert.rejects(
        reindex(() => {
          if (++batches === 2) throw stop;
        }),
        (e) => e === stop,
      );
      for (let i = 0; i < 10; i++) await check('with the rotation stopped halfway');
      assert.equal(compared, 40);
      // Resumed; onProgress is not awaited, so each batch queues queries that run while the next batches are written.
      let pending = Promise.resolve();
      let whileRunning = 0;
      const progress = await reindex(d.concurrentReads === false ? undefined : () => void (pending = pending.then(async () => (await check('while the rotation runs'), whileRunning++))));
      await pending;
      assert.equal(progress.written, 200);
      if (d.concurrentReads !== false) assert.ok(whileRunning >= 3, `${whileRunning} rounds of queries while the rotation ran`);
      if (lagged > 0) console.log(`# ${d.name}: ${lagged} answers came late, each within a second of the commit`);
    });

    test("convertToTenantKeys moves search tokens under each tenant's index key: queries stay exact before and after, another tenant's tokens differ, and a shred leaves nothing to find", async () => {
      ale.initKeyRing([SECRET]);
      const keyTable = `search_keys_${d.name.toLowerCase().replace(/[^a-z0-9]+/g, '_')}`.slice(0, 48);
      const keys = mod.tenantKeys(conn.db, { kek: 'search-kek-0123456789-abcdefghijklmnop', table: keyTable, changeCheckEveryMs: 0, flushEveryMs: 0 });
      try {
        // a key table of this test's own, empty: the tenants' keys are made afresh
        await (conn.db.execute ? conn.db.execute(sql.raw(`DROP TABLE IF EXISTS ${keyTable}`)) : conn.db.run(sql.raw(`DROP TABLE IF EXISTS ${keyTable}`)));
        await keys.ready();
        const [v1, keyed] = [d.table(mod, { name: 'search_conv' }), d.table(mod, { keys, name: 'search_conv' })];
        await conn.reset(v1);
        const rows = people(200, { seed: 19 });
        const tenantOf = (p) => (p.id % 4 === 0 ? 'globex' : 'acme');
        for (const tenant of ['acme', 'globex']) {
          const mine = rows.filter((p) => tenantOf(p) === tenant);
          await mod.withTenant(tenant, () => conn.db.insert(v1).values(mine.map((p) => ({ id: p.id, tenantId: tenant, name: p.name, nameSearch: p.name, city: p.city, citySearch: p.city }))));
        }
        const answer = async (t, tenant, query) => {
          const where = await mod.withTenant(tenant, async () => mod.searchWords(t.nameSearch, query));
          const got = await mod.withTenant(tenant, () => conn.db.select().from(t).where(where).orderBy(asc(t.id)));
          return got.filter((r) => where.matches(r.name)).map((r) => r.id);
        };
        const oracle = (tenant, query) => rows.filter((p) => tenantOf(p) === tenant && ale.searchMatches(p.name, query, 'words')).map((p) => p.id);
        const queries = rows.slice(0, 12).map((p) => [tenantOf(p), p.name.split(/[\s<>@.,]+/u).filter(Boolean)[0]]);
        // Before: the rows hold the process-wide ring's tokens, which a keys column still looks up while it reads v1 values.
        for (const [tenant, q] of queries) await eventually(() => answer(keyed, tenant, q), oracle(tenant, q), `before: ${tenant} ${q}`);
        const options = {
          table: keyed,
          key: keyed.id,
          tenant: { column: keyed.tenantId },
          keys,
          batchSize: 64,
          columns: [{ column: keyed.name }, { column: keyed.city }],
          indexes: [{ index: keyed.nameSearch, source: keyed.name }, { index: keyed.citySearch, source: keyed.city }],
        };
        // an index paired with another column's values is refused before a row is read
        const crossed = { ...options, indexes: [{ index: keyed.nameSearch, source: keyed.city }] };
        const e = await mod.convertToTenantKeys(conn.db, crossed).then(() => null, (error) => error);
        assert.equal(e?.code, 'ALE_INVALID_CONTEXT', String(e));
        assert.match(e.message, /the index "name_search" is bound to collection "\w+", field "name", its source to collection "\w+", field "city"/);
        // a value that does not open is its own column's failure, not the index's beside it
        const damaged = await damage(v1, v1.name, rows[1].id, 'not an envelope');
        const bad = await mod.convertToTenantKeys(conn.db, options).then(() => null, (error) => error);
        assert.deepEqual([bad?.code, bad?.column], ['ALE_MALFORMED_ENVELOPE', 'name'], String(bad));
        await damaged.undo();
        const first = await mod.convertToTenantKeys(conn.db, options);
        assert.equal(first.written, 800, 'both columns and both indexes of 200 rows');
        assert.equal((await mod.convertToTenantKeys(conn.db, options)).written, 0);
        for (const [tenant, q] of queries) await eventually(() => answer(keyed, tenant, q), oracle(tenant, q), `after: ${tenant} ${q}`);
        // The converted tokens are what the keyed column writes for the same text in the same tenant, and another tenant's differ.
        const same = rows[0];
        await mod.withTenant('acme', () => conn.db.insert(keyed).values({ id: 9001, tenantId: 'acme', name: same.name, nameSearch: same.name }));
        await mod.withTenant('globex', () => conn.db.insert(keyed).values({ id: 9002, tenantId: 'globex', name: same.name, nameSearch: same.name }));
        const tokensOf = async (tenant, id) => String((await mod.withTenant(tenant, () => conn.db.select().from(keyed).where(sql`${keyed.id} = ${id}`)))[0].nameSearch);
        assert.equal(await tokensOf('acme', same.id), await tokensOf('acme', 9001));
        assert.notEqual(await tokensOf('acme', 9001), await tokensOf('globex', 9002));
        await conn.db.delete(keyed).where(sql`${keyed.id} > 9000`);
        // After a shred, a query of the tenant looks up one random token: nothing is found, and nothing needs decrypting.
        await keys.shred('acme');
        const [tenant, q] = queries.find(([t]) => t === 'acme');
        assert.ok(oracle(tenant, q).length > 0);
        assert.deepEqual(await answer(keyed, tenant, q), []);
        const shredded = keys.sealer.searchQueries(q, 'words', 'acme', 'people', 'name', {});
        const live = keys.sealer.searchQueries(q, 'words', 'globex', 'people', 'name', {});
        assert.deepEqual(shredded.map((set) => set.length), [live[0].length], "one set, shaped as a live tenant's");
        assert.ok(!live.some((set) => Buffer.from(set).equals(Buffer.from(shredded[0]))));
        // A query refused for a live tenant is refused for a shredded one: the shred does not change what a caller may ask.
        for (const [bad, kind] of [['ab', 'contains'], ['', 'words'], [q, 'everywhere']]) {
          assert.throws(() => keys.sealer.searchQueries(bad, kind, 'globex', 'people', 'name', {}), (e) => e.code === 'ALE_INVALID_INPUT', `live: ${kind}`);
          assert.throws(() => keys.sealer.searchQueries(bad, kind, 'acme', 'people', 'name', {}), (e) => e.code === 'ALE_INVALID_INPUT', `shredded: ${kind}`);
        }
        // and a value of the tenant gets no tokens, in either form: its key is gone
        for (const form of ['searchTokens', 'searchTokenText']) {
          assert.throws(() => keys.sealer[form]('Jürgen', 'acme', 'people', 'name', {}), (e) => e.code === 'ALE_KEY_SHREDDED', form);
        }
        const [other, otherQuery] = queries.find(([t]) => t === 'globex');
        await eventually(() => answer(keyed, other, otherQuery), oracle(other, otherQuery), 'another tenant is untouched');
        // Re-indexing the table goes past the shredded tenant's rows.
        const reindexed = await mod.reindexSearch(conn.db, { table: keyed, key: keyed.id, tenant: { column: keyed.tenantId }, columns: [{ source: keyed.name, index: keyed.nameSearch }] });
        assert.deepEqual([reindexed.written, reindexed.skipped], [0, 200]);
      } finally {
        await keys.close();
      }
    });

    test('a search index column reads back a StoredIndex: a row saved as read keeps its tokens, and a new text written to both columns gets new ones', async () => {
      const t = d.table(mod, { ring, name: 'search_save' });
      await conn.reset(t);
      const [p] = people(1, { seed: 23 });
      await mod.withTenant('acme', () => conn.db.insert(t).values({ id: 1, tenantId: 'acme', name: p.name, nameSearch: p.name, city: p.city, citySearch: p.city }));
      const find = async (query) => {
        const where = await mod.withTenant('acme', async () => mod.searchWords(t.nameSearch, query));
        return (await mod.withTenant('acme', () => conn.db.select().from(t).where(where))).filter((r) => where.matches(r.name)).map((r) => r.id);
      };
      const [row] = await mod.withTenant('acme', () => conn.db.select().from(t));
      assert.ok(row.nameSearch instanceof mod.StoredIndex);
      assert.equal(Object.isExtensible(row.nameSearch), false);
      assert.equal(JSON.stringify({ s: row.nameSearch }), '{}', 'JSON leaves it out, as a blind index');
      if (!d.name.startsWith('pg')) {
        // FTS5 and FULLTEXT hold the tokens as words, one space apart (the column has them made by searchTokenText)
        const words = searchWordsOf(ring.searchTokens(p.name, 'acme', 'people', 'name'));
        assert.equal(String(row.nameSearch), words, "the stored text is the tokens' words, 6 base-32 digits each");
      }
      const first = p.name.split(/[\s<>@.,]+/u)[0];
      await mod.withTenant('acme', () => conn.db.update(t).set({ ...row }).where(sql`${t.id} = 1`));
      await eventually(() => find(first), [1], 'saved as read: the tokens are kept');
      await mod.withTenant('acme', () => conn.db.update(t).set({ name: 'Zoë Quill', nameSearch: 'Zoë Quill' }).where(sql`${t.id} = 1`));
      await eventually(() => find('quill'), [1], 'new text, new tokens');
      assert.deepEqual(await find(first), []);
      // Its tokens are the name's, in acme: refused into the city's column, and into a copy for another tenant; nothing is written.
      await assert.rejects(
        mod.withTenant('acme', () => conn.db.update(t).set({ citySearch: row.nameSearch }).where(sql`${t.id} = 1`)),
        (e) => e.code === 'ALE_INVALID_INPUT' && /read from the search index of people\.name \(contains, prefix, words\)/.test(e.message) && /not this search index of people\.city/.test(e.message) && e.column === t.citySearch.name,
      );
      const [after] = await mod.withTenant('acme', () => conn.db.select().from(t));
      assert.equal(String(after.citySearch), String(row.citySearch), "the city's tokens are left as they were");
      await assert.rejects(
        mod.withTenant('globex', () => conn.db.insert(t).values({ ...row, id: 2, tenantId: 'globex' })),
        (e) => e.code === 'ALE_INVALID_INPUT' && /read for tenant "acme"/.test(e.message) && !e.message.includes(String(row.nameSearch)),
      );
      assert.deepEqual(await mod.withTenant('acme', () => conn.db.select({ id: t.id }).from(t)), [{ id: 1 }]);
    });

    if (d.name.startsWith('sqlite')) {
      test('without an FTS5 table, a SQLite search index column is scanned, with the same answers', async () => {
        const t = d.table(mod, { ring, name: 'search_scan', scan: true });
        await conn.reset(t);
        const rows = people(300, { seed: 29 });
        await mod.withTenant('acme', () => conn.db.insert(t).values(rows.map((p) => ({ id: p.id, tenantId: 'acme', name: p.name, nameSearch: p.name }))));
        for (const p of rows.slice(0, 30).filter((r) => Array.from(r.name.split(/[\s<>@.,]+/u)[0]).length >= 3)) {
          const word = p.name.split(/[\s<>@.,]+/u)[0];
          for (const [kind, op, q] of [['words', mod.searchWords, word], ['contains', mod.searchContains, Array.from(word).slice(0, 3).join('')]]) {
            const where = await mod.withTenant('acme', async () => op(t.nameSearch, q));
            assert.match(conn.db.select().from(t).where(where).toSQL().sql, /instr\(.*\) > 0/);
            const got = await mod.withTenant('acme', () => conn.db.select().from(t).where(where).orderBy(asc(t.id)));
            assert.deepEqual(got.filter((r) => where.matches(r.name)).map((r) => r.id), rows.filter((r) => ale.searchMatches(r.name, q, kind)).map((r) => r.id), `${kind} ${q}`);
          }
        }
      });
    }

    if (d.name.startsWith('sqlite')) {
      test('searchHits: pages the FTS5 table drives, in rowid order up and down, and through one prepared statement a column, equal the oracle; the plan reads the FTS5 table first and sorts nothing', async () => {
        const rand = seeded(`search-hits ${d.name}`);
        const pick = (list) => list[Math.floor(rand() * list.length)];
        const hitsPage = (where, column, order, options) => {
          const hits = mod.searchHits(where);
          return mod.withTenant('acme', () =>
            mod.searchPage((limit, offset) => conn.db.select({ id: table.id, [column]: table[column] }).from(hits.table).innerJoin(table, hits.on).where(hits.match).orderBy(order(hits.rowid)).limit(limit).offset(offset), { ...options, matches: (row) => where.matches(row[column]) }),
          );
        };
        // A statement per column, prepared once, its query a placeholder.
        const prepared = {};
        const preparedPage = (where, column, options) => {
          if (prepared[column] === undefined) {
            const hits = mod.searchHitsPlaceholder(COLUMNS[column].search(), 'q');
            const statement = conn.db.select({ id: table.id, [column]: table[column] }).from(hits.table).innerJoin(table, hits.on).where(hits.match).orderBy(asc(hits.rowid)).limit(sql.placeholder('limit')).offset(sql.placeholder('offset')).prepare();
            prepared[column] = { hits, statement };
          }
          const { hits, statement } = prepared[column];
          const q = hits.matchOf(where);
          return mod.withTenant('acme', () => mod.searchPage((limit, offset) => statement.all({ q, limit, offset }), { ...options, matches: (row) => where.matches(row[column]) }));
        };
        let compared = 0;
        while (compared < 60) {
          const kind = pick(['contains', 'prefix', 'words']);
          const column = pick(Object.keys(COLUMNS));
          const word = pick(pick(acme)[column].split(/[\s,<>@.]+/u).filter((w) => Array.from(w).length >= 3));
          if (word === undefined) continue;
          const query = kind === 'contains' ? Array.from(word).slice(1, 4).join('') : kind === 'prefix' ? Array.from(word).slice(0, 3).join('') : word;
          if (Array.from(query).length < 3) continue;
          const where = await mod.withTenant('acme', async () => OPERATORS[kind](COLUMNS[column].search(), query));
          const expected = oracle(column, query, kind);
          const label = `${kind} ${JSON.stringify(query)} on ${column}`;
          const up = await hitsPage(where, column, asc, { limit: 10 });
          assert.deepEqual(up.rows.map((r) => r.id), expected.slice(0, 10), `${label}, ascending`);
          const next = await hitsPage(where, column, asc, { limit: 10, cursor: up.cursor ?? 0 });
          if (up.cursor !== undefined) assert.deepEqual(next.rows.map((r) => r.id), expected.slice(10, 20), `${label}, second page`);
          const down = await hitsPage(where, column, desc, { limit: 10 });
          assert.deepEqual(down.rows.map((r) => r.id), [...expected].reverse().slice(0, 10), `${label}, descending`);
          const once = await preparedPage(where, column, { limit: 10 });
          assert.deepEqual(once.rows.map((r) => r.id), expected.slice(0, 10), `${label}, prepared`);
          if (up.cursor !== undefined) {
            assert.notEqual(once.cursor, undefined, `${label}, prepared: a cursor where the unprepared page has one`);
            assert.deepEqual((await preparedPage(where, column, { limit: 10, cursor: once.cursor })).rows.map((r) => r.id), expected.slice(10, 20), `${label}, prepared, second page`);
          }
          compared++;
        }
        assert.ok(Object.keys(prepared).length > 1, 'more than one column prepared');
        const hits = mod.searchHits(await mod.withTenant('acme', async () => mod.searchContains(table.nameSearch, 'müller')));
        const plan = await conn.explain(conn.db.select({ id: table.id }).from(hits.table).innerJoin(table, hits.on).where(hits.match).orderBy(desc(hits.rowid)).limit(20));
        // A plan row is an array through sqlite-proxy, an object through the other drivers.
        const first = JSON.parse(plan)[0];
        assert.match(Array.isArray(first) ? first[3] : first.detail, /VIRTUAL TABLE INDEX/, `the FTS5 table first: ${plan}`);
        assert.doesNotMatch(plan, /TEMP B-TREE/, `no sort: ${plan}`);
        // Only a search condition itself, on a column with an FTS5 table, has hits: not one combined with and(), a range, or a scan.
        const contains = await mod.withTenant('acme', async () => mod.searchContains(table.nameSearch, 'müller'));
        const scanned = await mod.withTenant('acme', async () => mod.searchContains(d.table(mod, { ring, name: 'search_scan', scan: true }).nameSearch, 'müller'));
        const rangeTable = sqliteTable('search_range', { id: integer('id').primaryKey(), n: mod.encryptedNumber('n', { collection: 'people', keyRing: ring }), nRange: mod.rangeIndexColumn('n_range', { collection: 'people', field: 'n', type: 'number', keyRing: ring, fts: 'search_range_fts' }) });
        const range = await mod.withTenant('acme', async () => mod.rangeGt(rangeTable.nRange, 5));
        for (const other of [sql`1 = 1`, undefined, and(contains, sql`1 = 1`), range, scanned]) {
          assert.throws(() => mod.searchHits(other), { code: 'ALE_INVALID_INPUT' });
        }
        // And a placeholder only for a search index column with an FTS5 table, under a name.
        const scanColumn = d.table(mod, { ring, name: 'search_scan', scan: true }).nameSearch;
        for (const [column, name] of [[scanColumn, 'q'], [rangeTable.nRange, 'q'], [table.name, 'q'], [undefined, 'q'], [table.nameSearch, ''], [table.nameSearch, 7]]) {
          assert.throws(() => mod.searchHitsPlaceholder(column, name), { code: 'ALE_INVALID_INPUT' });
        }
        // Its query only from a condition on its own column: another column's would find that column's rows.
        const placed = mod.searchHitsPlaceholder(table.nameSearch);
        const onCity = await mod.withTenant('acme', async () => mod.searchContains(table.citySearch, 'berlin'));
        for (const other of [onCity, range, scanned, and(contains, sql`1 = 1`), sql`1 = 1`, undefined]) {
          assert.throws(() => placed.matchOf(other), { code: 'ALE_INVALID_INPUT' });
        }
        assert.equal(typeof placed.matchOf(contains), 'string');
      });
    }

    test('bad options and calls get coded errors before any SQL, naming no value', async () => {
      const fetch = async () => [];
      for (const options of [{}, { limit: 0, matches: () => true }, { limit: 1.5, matches: () => true }, { limit: 10 }, { limit: 10, matches: () => true, offset: 1, cursor: 2 }, { limit: 10, matches: () => true, cursor: -1 }]) {
        await assert.rejects(mod.searchPage(fetch, options), { code: 'ALE_INVALID_INPUT' }, JSON.stringify(options));
      }
      await assert.rejects(mod.searchPage(async () => 'rows', { limit: 1, matches: () => true }), { code: 'ALE_INVALID_INPUT' });
      await assert.rejects(mod.searchPage(undefined, { limit: 1, matches: () => true }), { code: 'ALE_INVALID_INPUT', message: /fetch must be a function/ });
      const batch = { table, key: table.id, tenant: 'acme' };
      for (const options of [{ table: undefined }, { key: undefined }, { tenant: { column: {} } }]) {
        await assert.rejects(mod.reindexSearch(conn.db, { ...batch, columns: [{ source: table.name, index: table.nameSearch }], ...options }), { code: 'ALE_INVALID_INPUT' }, `reindexSearch ${Object.keys(options)}`);
        await assert.rejects(mod.searchLeakage(conn.db, { ...batch, index: table.nameSearch, ...options }), { code: 'ALE_INVALID_INPUT' }, `searchLeakage ${Object.keys(options)}`);
      }
      await assert.rejects(mod.reindexSearch(conn.db, { ...batch, columns: [null] }), { code: 'ALE_INVALID_INPUT' });
      const column = (options) => () => mod.searchIndexColumn('s', { collection: 'people', ...options });
      for (const options of [{ contains: 'yes' }, { contains: false, prefix: false, words: false }, { storage: 'binary' }, { legacyPlaintext: true }, { fts: '' }, { keyRing: ring, keys: {} }]) {
        assert.throws(column(options), { code: /^ALE_INVALID_(INPUT|CONTEXT)$/ }, JSON.stringify(Object.keys(options)));
      }
      assert.throws(() => mod.searchWords(table.name, 'x'), { code: 'ALE_INVALID_INPUT' }, 'an encrypted column is no search index column');
      const secret = 'Jürgen Müller';
      await mod.withTenant('acme', async () => {
        for (const [op, q] of [[mod.searchContains, 'Jü'], [mod.searchWords, ' ,; ']]) {
          try {
            op(table.nameSearch, q);
            assert.fail('no error');
          } catch (e) {
            assert.equal(e.code, 'ALE_INVALID_INPUT');
            assert.ok(!e.message.includes(q.trim() || '\u0000'));
          }
        }
        const where = mod.searchWords(table.nameSearch, secret);
        assert.ok(!Object.keys(where).includes('query') && !JSON.stringify(Object.keys(where)).includes('Müller'), 'the condition does not list its search term');
      });
    });

    test('searchLeakage counts, per tenant, what the tokens show: distinct tokens, the most frequent one, equal token sets, and warns past its thresholds', async () => {
      const t = d.table(mod, { ring, name: 'search_leak' });
      await conn.reset(t);
      const same = 'Jürgen Müller <j@acme.test>';
      const acmeRows = [...Array.from({ length: 60 }, () => same), ...people(90, { seed: 17 }).map((p) => `${p.name.split(' <')[0]} <x@acme.test>`)];
      const globexRows = people(20, { seed: 18 }).map((p) => p.name);
      const values = (tenant, list, first) => list.map((name, i) => ({ id: first + i, tenantId: tenant, name, nameSearch: i === 5 ? null : name }));
      await mod.withTenant('acme', () => conn.db.insert(t).values(values('acme', acmeRows, 1)));
      await mod.withTenant('globex', () => conn.db.insert(t).values(values('globex', globexRows, 1001)));
      const reports = await mod.searchLeakage(conn.db, { table: t, key: t.id, index: t.nameSearch, tenant: { column: t.tenantId }, batchSize: 64 });
      assert.deepEqual(reports.map((r) => [r.tenant, r.rows, r.indexed]), [['acme', 150, 149], ['globex', 20, 19]]);
      // The same figures from the tokens themselves, made here.
      for (const [r, tenant, list] of [[reports[0], 'acme', acmeRows], [reports[1], 'globex', globexRows]]) {
        const counts = new Map();
        const sets = new Map();
        list.forEach((v, i) => {
          if (i === 5) return;
          // what the column holds: 64-bit tokens on PostgreSQL, their words elsewhere
          const tokens = ring.searchTokens(v, tenant, 'people', 'name');
          const held = d.name.startsWith('pg') ? hexOf(tokens) : searchWordsOf(tokens).split(' ');
          const set = held.join(' ');
          sets.set(set, (sets.get(set) ?? 0) + 1);
          for (const token of held) counts.set(token, (counts.get(token) ?? 0) + 1);
        });
        assert.equal(r.distinct, counts.size, `${tenant}: distinct`);
        assert.equal(r.tokens, [...counts.values()].reduce((a, b) => a + b, 0), `${tenant}: tokens`);
        assert.equal(r.topTokenShare, Math.max(...counts.values()) / (list.length - 1), `${tenant}: top`);
        assert.equal(r.equalSetShare, [...sets.values()].filter((n) => n > 1).reduce((a, b) => a + b, 0) / (list.length - 1), `${tenant}: equal sets`);
        assert.match(r.summary, new RegExp(`tenant "${tenant}"`));
        assert.ok(!r.summary.includes('Müller') && !r.summary.includes('acme.test'), 'the report names no value');
      }
      assert.equal(reports[0].topTokenShare, 1);
      assert.deepEqual(reports[0].warnings.map((w) => w.code), ['ALE_LEAK_COMMON_TOKEN', 'ALE_LEAK_EQUAL_VALUES']);
      // 19 names with e-mail addresses: few rows, all different; a gram such as "com" may well pass the common threshold too
      assert.ok(reports[1].warnings.some((w) => w.code === 'ALE_LEAK_FEW_ROWS'));
      assert.ok(!reports[1].warnings.some((w) => w.code === 'ALE_LEAK_EQUAL_VALUES'));
      await assert.rejects(mod.searchLeakage(conn.db, { table: t, key: t.id, index: t.name, tenant: 'acme' }), { code: 'ALE_INVALID_INPUT' });
      // One key: nothing mixed. While the ring holds a previous secret, queries look up both keys' tokens, and the figures,
      // which would count a value indexed under each key twice, say so.
      assert.deepEqual(reports.map((r) => [r.keys, r.warnings.some((w) => w.code === 'ALE_LEAK_MIXED_KEYS')]), [[1, false], [1, false]]);
      const rotating = d.table(mod, { ring: new ale.KeyRing([SECRET, OLD_SECRET]), name: 'search_leak' });
      const mixed = await mod.searchLeakage(conn.db, { table: rotating, key: rotating.id, index: rotating.nameSearch, tenant: { column: rotating.tenantId } });
      assert.deepEqual(mixed.map((r) => [r.keys, r.warnings.some((w) => w.code === 'ALE_LEAK_MIXED_KEYS')]), [[2, true], [2, true]]);
      // Two secrets that share an indexKey make one index key; a ring of tenants that holds none of them cannot be asked,
      // and the report, which reads the tokens only, is made all the same.
      const shared = d.table(mod, { ring: new ale.KeyRing([SECRET, OLD_SECRET], { keyIds: [Buffer.alloc(16, 1), Buffer.alloc(16, 2)].map((b) => b.toString('base64url')), indexKey: Buffer.alloc(32, 9) }), name: 'search_leak' });
      const none = d.table(mod, { ring: ale.KeyRing.forTenants(), name: 'search_leak' });
      for (const [t2, keys] of [[shared, 1], [none, undefined]]) {
        const got = await mod.searchLeakage(conn.db, { table: t2, key: t2.id, index: t2.nameSearch, tenant: { column: t2.tenantId } });
        assert.deepEqual(got.map((r) => [r.rows, r.keys, r.warnings.some((w) => w.code === 'ALE_LEAK_MIXED_KEYS')]), [[150, keys, false], [20, keys, false]]);
      }
    });

    test('the query plan uses the index', async () => {
      const where = await mod.withTenant('acme', async () => mod.searchContains(table.nameSearch, 'müller'));
      const plan = await conn.explain(conn.db.select({ id: table.id }).from(table).where(where).orderBy(asc(table.id)).limit(20), table);
      assert.match(plan, d.indexPlan, plan);
    });
  });
}

// The oracle: docs/search.md's definitions over normalized text. A word is
// a run of letters, digits and combining marks.
const NOT_WORD = /[^\p{Alphabetic}\p{N}\p{M}]+/u;
const WORD_CHAR = /^[\p{Alphabetic}\p{N}\p{M}]$/u;

/** A normalized value: its text, its words, and the offsets where a word starts (and 0). */
function plainForm(text) {
  const starts = [0];
  let before = '';
  for (let i = 0; i < text.length; ) {
    const ch = String.fromCodePoint(text.codePointAt(i));
    if (i > 0 && WORD_CHAR.test(ch) && !WORD_CHAR.test(before)) starts.push(i);
    before = ch;
    i += ch.length;
  }
  return { text, words: text.split(NOT_WORD).filter(Boolean), starts };
}

/** Whether a plainForm answers `query` of `kind`; `fold` normalizes as the column does. */
function plainTest(query, kind, fold) {
  if (kind === 'contains') {
    const q = fold(query);
    return (v) => v.text.includes(q);
  }
  if (kind === 'prefix') {
    const q = fold(query);
    return (v) => v.starts.some((at) => v.text.startsWith(q, at));
  }
  const terms = query.split(/\s+/u).filter(Boolean).flatMap((term) => {
    const prefix = term.endsWith('*');
    const wanted = fold(prefix ? term.slice(0, -1) : term).split(NOT_WORD).filter(Boolean);
    return wanted.map((w, i) => ({ w, prefix: prefix && i === wanted.length - 1 }));
  });
  return (v) => terms.every(({ w, prefix }) => (prefix ? v.words.some((x) => x.startsWith(w)) : v.words.includes(w)));
}

const words1 = (text) => text.split(/[\s,<>@.]+/u).filter(Boolean)[0];
