// Ranges and order through Drizzle against a plaintext oracle, on one
// dialect and driver: 10,000 rows of numbers, bigints and dates under one
// tenant (and 500 under another, which no query may return), and 1,000
// random queries (gt, gte, lt, lte, between, ascending and descending
// pages) whose exact answers must equal the oracle's, row for row. Then the
// lifecycle: building the index, rotating its key online, tenant keys and
// shredding, a saved row, coded errors, the leakage report and the plan.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import { codeOf } from '../dist/esm/drizzle/range/encoding.js';
import { spotLevel } from '../dist/esm/drizzle/range/spots.js';
import { pathNodes } from '../dist/esm/drizzle/range/tree.js';
import { boundsOf } from '../dist/esm/drizzle/range/operators.js';
import { and, asc, desc, eq, lte, sql } from 'drizzle-orm';
import { ale, eventually as waitFor, OLD_SECRET, SECRET, seeded } from './helpers.mjs';
import { measures } from './fixtures/measures.mjs';

export const ROWS = 10_000;
const OTHER_TENANT_ROWS = 500;
const QUERIES = 1_000;
const FIELDS = ['amount', 'total', 'born'];

const codeOfNumber = (v) => codeOf('number', v);
/** A value's place in the plaintext order (dates by their milliseconds). */
const key = (v) => (v instanceof Date ? v.getTime() : v);
const cmp = (a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0);

/**
 * @param {object} d
 * @param {string} d.name
 * @param {any} d.mod  the '@sveltycms/ale/drizzle/<dialect>' module
 * @param {(mod: any, options: { ring?: any, keys?: any, name: string }) => any} d.table  a range table named after `name` (id, tenant_id, and amount, total, born with their *_range columns)
 * @param {(table: any) => Promise<{ db: any, reset: (table: any) => Promise<void>, close: () => Promise<void> | void, explain: (query: any, table: any) => Promise<string> }>} d.connect
 * @param {RegExp} d.indexPlan  what the plan of a range query shows when the index serves it (the plan test always runs)
 * @param {boolean} [d.concurrentReads]  false: the index shows a committed change a moment late (InnoDB FULLTEXT)
 * @param {boolean} [d.workers]  the dialect has a job table, so reindexSearch can run with workers
 * @param {boolean} [d.samples]  orderedPage samples a piece of the tree before it reads it (SearchSql.sampler: FTS5)
 */
export function rangeSuite(d) {
  const { mod } = d;
  const ring = new ale.KeyRing([SECRET]);
  const table = d.table(mod, { ring, name: 'range_measures' });
  const acme = measures(ROWS, { seed: 7 });
  const globex = measures(OTHER_TENANT_ROWS, { seed: 8, firstId: ROWS + 1 });
  let conn;
  const OPS = { gt: mod.rangeGt, gte: mod.rangeGte, lt: mod.rangeLt, lte: mod.rangeLte };
  const TESTS = { gt: (v, b) => cmp(v, b) > 0, gte: (v, b) => cmp(v, b) >= 0, lt: (v, b) => cmp(v, b) < 0, lte: (v, b) => cmp(v, b) <= 0 };
  const rowsOf = (tenant, list) => list.map((r) => ({ id: r.id, tenantId: tenant, amount: r.amount, amountRange: r.amount, total: r.total, totalRange: r.total, born: r.born, bornRange: r.born }));
  const insert = async (t, tenant, list) => {
    for (let at = 0; at < list.length; at += 250) await mod.withTenant(tenant, () => conn.db.insert(t).values(rowsOf(tenant, list.slice(at, at + 250))));
  };
  const rangeOf = (t, field) => t[`${field}Range`];
  const TYPES = { amount: 'number', total: 'bigint', born: 'date' };
  /** The spot level (range/spots.ts) of a value of `field` in tenant acme, as the column's codec finds it. */
  const levelOf = (field, v) => spotLevel(ring.rangeTokens(pathNodes(codeOf(TYPES[field], v)), 'acme', 'measures', field));
  /** Rows `where` finds on `t`, in id order, that pass its exact test: their ids. */
  const answer = async (t, field, where, tenant = 'acme') => {
    const got = await mod.withTenant(tenant, () => conn.db.select({ id: t.id, value: t[field] }).from(t).where(where).orderBy(asc(t.id)));
    return got.filter((r) => where.matches(r.value)).map((r) => r.id);
  };
  /** As `answer`, waiting up to a second where the index shows commits late; resolves to how many times it asked again. */
  const eventually = (get, expected, message) => waitFor(get, expected, message, d.concurrentReads === false);
  /**
   * A fresh table `name` of `n` rows, all visible in the index: amount in runs of 40 equal values, every 7th row
   * negative; total and born grow with the id, as a creation date does.
   */
  const runsOf = async (name, n) => {
    const t = d.table(mod, { ring, name });
    await conn.reset(t);
    const rows = Array.from({ length: n }, (_, i) => ({ id: i + 1, amount: (i % 7 === 0 ? -1 : 1) * Math.floor(i / 40), total: BigInt(i - Math.floor(n / 2)), born: new Date(Date.UTC(1960, 0, 1) + i * 3_600_000) }));
    await insert(t, 'acme', rows);
    const all = await mod.withTenant('acme', async () => mod.rangeGte(t.totalRange, -(2n ** 63n)));
    await eventually(() => answer(t, 'total', all), rows.map((r) => r.id), 'every row visible');
    return { t, rows };
  };
  /** orderedPage over `t` by `field`, in id order; each query it makes must ask for a range that can hold a row. */
  const ordered = (t, field, options, tenant = 'acme') =>
    mod.withTenant(tenant, () =>
      mod.orderedPage((where, limit, offset) => {
        const { lo, hi } = boundsOf(where);
        assert.ok(lo <= hi, `orderedPage asked for an empty range (${lo} > ${hi})`);
        return conn.db.select({ id: t.id, value: t[field] }).from(t).where(where).orderBy(asc(t.id)).limit(limit).offset(offset);
      }, {
        column: rangeOf(t, field),
        value: (row) => row.value,
        ...options,
      }),
    );

  describe(`ranges and order through Drizzle: ${d.name}`, () => {
    before(async () => {
      conn = await d.connect(table);
      await conn.reset(table);
      await insert(table, 'acme', acme);
      await insert(table, 'globex', globex);
      if (d.concurrentReads === false) {
        // InnoDB shows the last batches' rows to the other connection a
        // moment after their commits (docs/search.md, "Per dialect"): the
        // queries below would miss them. They start once every row shows.
        let again = 0;
        for (const [tenant, list] of [['acme', acme], ['globex', globex]]) {
          for (const field of FIELDS) {
            const held = list.filter((r) => r[field] !== null).sort((a, b) => cmp(a[field], b[field]));
            const all = await mod.withTenant(tenant, async () => mod.rangeBetween(rangeOf(table, field), held[0][field], held.at(-1)[field]));
            again += await eventually(() => answer(table, field, all, tenant), held.map((r) => r.id).sort((a, b) => a - b), `every ${tenant} row shows in ${field}'s index`);
          }
        }
        console.log(`# ${d.name}: every row shows in the index (asked again ${again} times, 50 ms apart)`);
      }
    });
    after(async () => {
      await conn?.close();
    });

    test(`${QUERIES} random queries (gt, gte, lt, lte, between, ascending and descending pages) over ${ROWS} rows of numbers, bigints and dates: every answer equals the plaintext oracle's`, async () => {
      const rand = seeded(`range-suite ${d.name}`);
      const int = (n) => Math.floor(rand() * n);
      const sorted = Object.fromEntries(FIELDS.map((f) => [f, acme.filter((r) => r[f] !== null).sort((a, b) => cmp(a[f], b[f]) || a.id - b.id)]));
      /** A bound: a value some row holds (ties and edges), or one near it. */
      const bound = (field) => {
        const v = sorted[field][int(sorted[field].length)][field];
        if (rand() < 0.6) return v;
        if (field === 'amount') return v + (rand() - 0.5) * 10;
        if (field === 'total') return BigInt.asIntN(64, v + BigInt(int(21) - 10));
        return new Date(Math.max(-8.64e15, Math.min(8.64e15, v.getTime() + int(2e9) - 1e9)));
      };
      const oracle = (field, test) => acme.filter((r) => r[field] !== null && test(r[field])).map((r) => r.id);
      const done = { gt: 0, gte: 0, lt: 0, lte: 0, between: 0, asc: 0, desc: 0 };
      const total = () => Object.values(done).reduce((a, b) => a + b, 0);
      const stats = { rows: 0, queries: 0, read: 0 };
      while (total() < QUERIES) {
        const kind = Object.keys(done)[int(7)];
        const field = FIELDS[int(3)];
        const column = rangeOf(table, field);
        if (kind === 'between') {
          // Narrow, around a row's rank, and now and then reversed (no rows, as SQL's BETWEEN).
          const from = int(sorted[field].length);
          const to = Math.min(sorted[field].length - 1, from + int(400));
          let [lo, hi] = [sorted[field][from][field], sorted[field][to][field]];
          if (rand() < 0.05) [lo, hi] = [hi, lo];
          const where = await mod.withTenant('acme', async () => mod.rangeBetween(column, lo, hi));
          const expected = oracle(field, (v) => cmp(v, lo) >= 0 && cmp(v, hi) <= 0);
          assert.deepEqual(await answer(table, field, where), expected, `between on ${field}`);
          stats.rows += expected.length;
        } else if (kind === 'asc' || kind === 'desc') {
          const limit = 1 + int(30);
          const offset = rand() < 0.1 ? int(300) : int(50);
          let within;
          let keep = () => true;
          if (rand() < 0.3) {
            const [op, b] = [Object.keys(OPS)[int(4)], bound(field)];
            within = await mod.withTenant('acme', async () => OPS[op](column, b));
            keep = (v) => TESTS[op](v, b);
          }
          const list = sorted[field].filter((r) => keep(r[field]));
          const expected = (kind === 'asc' ? list : [...list].sort((a, b) => cmp(b[field], a[field]) || a.id - b.id)).slice(offset, offset + limit).map((r) => r.id);
          const page = await ordered(table, field, { order: kind, limit, offset, within });
          assert.deepEqual(
            page.rows.map((r) => r.id),
            expected,
            `${kind} on ${field}, limit ${limit}, offset ${offset}${within ? ', within a range' : ''}`,
          );
          stats.queries += page.queries;
          stats.read += page.read;
          stats.rows += expected.length;
        } else {
          const b = bound(field);
          const where = await mod.withTenant('acme', async () => OPS[kind](column, b));
          const expected = oracle(field, (v) => TESTS[kind](v, b));
          // One-sided ranges hold half the rows on average: a page of them, as an admin list shows one.
          const [limit, offset] = [1 + int(50), int(100)];
          const page = await mod.withTenant('acme', () =>
            mod.searchPage((l, o) => conn.db.select({ id: table.id, value: table[field] }).from(table).where(where).orderBy(asc(table.id)).limit(l).offset(o), {
              limit,
              offset,
              matches: (row) => where.matches(row.value),
            }),
          );
          assert.deepEqual(
            page.rows.map((r) => r.id),
            expected.slice(offset, offset + limit),
            `${kind} on ${field}`,
          );
          stats.rows += page.rows.length;
        }
        done[kind]++;
      }
      console.log(`# ${d.name}: ${JSON.stringify(done)}; ${stats.rows} rows compared; ordered pages made ${stats.queries} queries and read ${stats.read} rows`);
    });

    test("orderedPage with small batches (a value held by more rows than a batch, a tied far end, splits) and with fetch's order following the values: every page equals the oracle, in a bounded number of queries", async () => {
      const { t, rows } = await runsOf('range_walk', 1500);
      let most = 0;
      for (const field of FIELDS) {
        for (const order of ['asc', 'desc']) {
          // The whole column, and from a bound inside it (rungs first), the middle row's value: after it, or before it descending.
          const middle = rows[750][field];
          const op = order === 'asc' ? 'gt' : 'lt';
          for (const bound of [undefined, middle]) {
            const within = bound === undefined ? undefined : await mod.withTenant('acme', async () => OPS[op](rangeOf(t, field), bound));
            const list = rows.filter((r) => bound === undefined || TESTS[op](r[field], bound));
            const expected = list.sort((a, b) => (order === 'asc' ? cmp(a[field], b[field]) : cmp(b[field], a[field])) || a.id - b.id).map((r) => r.id);
            for (const batch of [1, 3, 8, 50, undefined]) {
              // Offset 45 walks 57 rows, in batches of 1 and 3 most of this test's queries; offset 7 already pages past
              // more rows than such a batch holds. amount keeps it: within the bound its runs of one value are longer
              // than 19 rows, and only a page at 45 crosses from one run into the next.
              const small = batch !== undefined && batch < 8;
              for (const offset of small && field !== 'amount' ? [0, 7] : [0, 7, 45]) {
                const page = await ordered(t, field, { order, limit: 12, offset, batch, within });
                assert.deepEqual(page.rows.map((r) => r.id), expected.slice(offset, offset + 12), `${field} ${order}, batch ${batch}, offset ${offset}${within ? `, ${op} the middle row's value` : ''}`);
                if (batch === undefined) most = Math.max(most, page.queries);
              }
            }
          }
        }
      }
      // One value held by more rows than a batch: the rows that showed it are the page's first, not read again.
      const five = rows.filter((r) => r.amount === 5).map((r) => r.id);
      const tie = await ordered(t, 'amount', { limit: 12, batch: 8, within: await mod.withTenant('acme', async () => mod.rangeBetween(t.amountRange, 5, 5)) });
      assert.deepEqual(tie.rows.map((r) => r.id), five.slice(0, 12));
      assert.equal(tie.queries, 2, `${tie.queries} queries for 12 rows of one value in batches of 8: the first 9, then 8 more`);
      // Paging by a bound where values repeat (docs/search.md, "Ranges and order"): rangeGte of the last value shown, with
      // offset the number of that value's rows already shown, walks runs of 34 rows in pages of 12 without a gap.
      const from5 = rows.filter((r) => r.amount >= 5).sort((a, b) => a.amount - b.amount || a.id - b.id);
      let [bound, shown, walked] = [5, 0, []];
      for (let p = 0; p < 8; p++) {
        const within = await mod.withTenant('acme', async () => mod.rangeGte(t.amountRange, bound));
        const page = await ordered(t, 'amount', { limit: 12, offset: shown, within });
        walked.push(...page.rows);
        const last = page.rows[page.rows.length - 1].value;
        const ofLast = page.rows.filter((r) => r.value === last).length;
        [bound, shown] = last === bound ? [bound, shown + ofLast] : [last, ofLast];
      }
      assert.deepEqual(walked.map((r) => r.id), from5.slice(0, 96).map((r) => r.id), 'pages by a bound, rangeGte and offset');
      assert.deepEqual([tie.read, tie.refused], [17, 0], 'each row read once, and counted once');
      // Newest first while fetch goes oldest first: each sample is the range's far end. Two narrowings, then splits, bound it;
      // without the bound, each narrowing drops about a batch of rows (docs/search.md, "Ranges and order").
      assert.ok(most <= 40, `${most} queries for one page at the default batch`);
      // fetch ordered the way the page goes (id descending for newest first): the sample is the page's end, found at once.
      const withIt = [];
      for (const field of ['total', 'born']) {
        const page = await mod.withTenant('acme', () =>
          mod.orderedPage((where, limit, offset) => conn.db.select({ id: t.id, value: t[field] }).from(t).where(where).orderBy(desc(t.id)).limit(limit).offset(offset), { column: rangeOf(t, field), value: (row) => row.value, order: 'desc', limit: 12, batch: 256 }),
        );
        assert.deepEqual(page.rows.map((r) => r.id), rows.slice(-12).reverse().map((r) => r.id));
        // A sample of 257 rows, then the page's 12, after at most 4 empty groups of the tree's pieces (1, 1, 2 and 4 before the last 8).
        // Sampled first (d.samples), each group is a sample of 8 rows for each of the page's 12, and one (97), and when it is
        // not full, a read: the sample's newest half is the page's end, and the part it narrows to holds at most twice the
        // page (24 rows), sampled and then read.
        const [readBound, queryBound] = d.samples ? [97 + 2 * 24, 2 * 4 + 3] : [257 + 12, 6];
        assert.ok(page.read <= readBound && page.queries <= queryBound, `${page.read} rows read in ${page.queries} queries with fetch in the page's order`);
        withIt.push(`${field}: ${page.queries} queries, ${page.read} rows`);
      }
      console.log(`# ${d.name}: at most ${most} queries for a page against fetch's order; with it, ${withIt.join('; ')}`);
      // fetch ordered by something else before the key (id % 7, then id): ties keep that order, and the rows at the key's ends only narrow.
      const sevens = sql`${t.id} % 7`;
      for (const field of FIELDS) {
        for (const order of ['asc', 'desc']) {
          const expected = [...rows].sort((a, b) => (order === 'asc' ? cmp(a[field], b[field]) : cmp(b[field], a[field])) || (a.id % 7) - (b.id % 7) || a.id - b.id).map((r) => r.id);
          for (const offset of [0, 45]) {
            const page = await mod.withTenant('acme', () =>
              mod.orderedPage((where, limit, at) => conn.db.select({ id: t.id, value: t[field] }).from(t).where(where).orderBy(sevens, asc(t.id)).limit(limit).offset(at), { column: rangeOf(t, field), value: (row) => row.value, order, limit: 12, offset }),
            );
            assert.deepEqual(page.rows.map((r) => r.id), expected.slice(offset, offset + 12), `${field} ${order}, offset ${offset}, fetch by id % 7 first`);
          }
        }
      }
    });

    test("a row whose cell does not open is left out of every ordered page and reported once, by its key; the pages stay exact over the rows that open", async () => {
      // (the least amount's run holds 6 rows)
      const { t, rows } = await runsOf('range_failed', 600);
      const byAmount = [...rows].sort((a, b) => a.amount - b.amount || a.id - b.id);
      // Inside the least value's run, the last of the greatest's and one between; the first and last totals. Cut short, of a
      // later version, and one that opens but holds text the column does not read (an encryptedText's, say).
      const damaged = { amount: [byAmount[2].id, byAmount.at(-1).id, byAmount[300].id], total: [rows[0].id, rows.at(-1).id] };
      const codes = {};
      for (const [field, ids] of Object.entries(damaged)) {
        for (const [i, id] of ids.entries()) {
          const [{ raw }] = await conn.db.select({ raw: sql`${t[field]}` }).from(t).where(eq(t.id, id));
          const bad = [raw.split(':').slice(0, 3).join(':'), `v7${raw.slice(2)}`, ring.encrypt('twelve', 'acme', 'measures', field)][i];
          await conn.db.update(t).set({ [field]: sql`${bad}` }).where(eq(t.id, id));
          codes[id] = ['ALE_MALFORMED_ENVELOPE', 'ALE_UNSUPPORTED_VERSION', 'ALE_INVALID_INPUT'][i];
        }
      }
      for (const [field, ids] of Object.entries(damaged)) {
        for (const order of ['asc', 'desc']) {
          const expected = rows
            .filter((r) => !ids.includes(r.id))
            .sort((a, b) => (order === 'asc' ? cmp(a[field], b[field]) : cmp(b[field], a[field])) || a.id - b.id)
            .map((r) => r.id);
          for (const batch of [3, 8, undefined]) {
            for (const offset of [0, 4]) {
              const label = `${field} ${order}, batch ${batch}, offset ${offset}`;
              const page = await ordered(t, field, { order, limit: 12, offset, batch, key: 'id', table: 'range_failed' });
              assert.deepEqual(page.rows.map((r) => r.id), expected.slice(offset, offset + 12), label);
              // each damaged row this page read, once, named by its key
              const reported = page.failures.map((f) => [f.key, f.column, f.code]);
              assert.equal(new Set(reported.map(([id]) => id)).size, reported.length, `${label}: reported once`);
              for (const [id, column, code] of reported) assert.deepEqual([ids.includes(id), column, code], [true, field, codes[id]], label);
              for (const f of page.failures) assert.match(f.message, new RegExp(`table "range_failed", column "${field}", .*row ${f.key}:`));
            }
          }
          // the row at the page's own end is read, and reported; so is the one between, by a page after its value
          const first = await ordered(t, field, { order, limit: 12, key: 'id' });
          const end = order === 'asc' ? ids[0] : ids[1];
          assert.ok(first.failures.some((f) => f.key === end), `${field} ${order}: the damaged row at the page's end is reported`);
          if (ids[2] !== undefined) {
            const v = rows.find((r) => r.id === ids[2])[field];
            const within = await mod.withTenant('acme', async () => (order === 'asc' ? mod.rangeGte : mod.rangeLte)(rangeOf(t, field), v));
            const after = await ordered(t, field, { order, limit: 12, key: 'id', within });
            assert.deepEqual(after.rows.map((r) => r.id), expected.filter((id) => TESTS[order === 'asc' ? 'gte' : 'lte'](rows[id - 1][field], v)).slice(0, 12));
            assert.deepEqual(after.failures.filter((f) => f.key === ids[2]).map((f) => f.code), ['ALE_INVALID_INPUT'], `${field} ${order}: the row that opens but does not parse`);
          }
        }
      }
      // reindexSearch names the source column for a value that opens to text it does not read, not the index beside it
      const one = rows.slice(0, 3);
      const u = d.table(mod, { ring, name: 'range_parse' });
      await conn.reset(u);
      await insert(u, 'acme', one);
      await conn.db.update(u).set({ amount: sql`${ring.encrypt('twelve', 'acme', 'measures', 'amount')}` }).where(eq(u.id, one[1].id));
      const bad = await mod.reindexSearch(conn.db, { table: u, key: u.id, tenant: 'acme', columns: [{ source: u.amount, index: u.amountRange }] }).then(() => null, (e) => e);
      assert.deepEqual([bad?.code, bad?.column, bad?.rowKey], ['ALE_INVALID_INPUT', 'amount', one[1].id], String(bad));
      assert.match(bad.message, /column "amount", .*: encrypted number column "amount": /);
      assert.ok(!bad.message.includes('amount_range'), bad.message);
      // without a tenant in scope, the page is refused, not turned into an empty one
      await assert.rejects(
        mod.orderedPage((where, limit, offset) => conn.db.select({ id: t.id, value: t.amount }).from(t).where(where).orderBy(asc(t.id)).limit(limit).offset(offset), { column: t.amountRange, value: (r) => r.value, limit: 5 }),
        { code: 'ALE_INVALID_CONTEXT' },
      );
    });

    test("a page of the type's first or last value, held by more rows than the page, comes from one sample; a far end many rows share, from the sample too", async () => {
      const t = d.table(mod, { ring, name: 'range_ends' });
      await conn.reset(t);
      // ids 1-20: each type's last value; 21-40: its first; 41-60: values between.
      const ends = { amount: [-Number.MAX_VALUE, Number.MAX_VALUE], total: [-(2n ** 63n), 2n ** 63n - 1n], born: [new Date(-8.64e15), new Date(8.64e15)] };
      const rows = Array.from({ length: 60 }, (_, i) => {
        const at = i < 20 ? 1 : i < 40 ? 0 : undefined;
        const pick = (field, middle) => (at === undefined ? middle : ends[field][at]);
        return { id: i + 1, amount: pick('amount', i - 50), total: pick('total', BigInt(i)), born: pick('born', new Date(Date.UTC(2000, 0, i))) };
      });
      await insert(t, 'acme', rows);
      const everything = await mod.withTenant('acme', async () => mod.rangeGte(t.totalRange, -(2n ** 63n)));
      await eventually(() => answer(t, 'total', everything), rows.map((r) => r.id), 'every row visible');
      for (const field of FIELDS) {
        for (const order of ['asc', 'desc']) {
          // batch 8: the first query reads 9 rows, ids 1-9 (the last value) or, with `within` below, 21-29 (the first)
          const page = await ordered(t, field, { order, limit: 5, batch: 8, ...(order === 'asc' ? { within: await mod.withTenant('acme', async () => mod.rangeLt(rangeOf(t, field), ends[field][1])) } : {}) });
          const expected = order === 'desc' ? [1, 2, 3, 4, 5] : [21, 22, 23, 24, 25];
          assert.deepEqual(page.rows.map((r) => r.id), expected, `${field} ${order}`);
          // The end's piece of the tree is asked first (a date's end shares its piece with the dates between): one sample of 9.
          // Sampled first (d.samples): the index's first and last rows of the piece, then the page's 5 and one more. With
          // spots (d.spots), the range's spots first, a query that finds few rows (no spot among them, as a rule, then none).
          assert.deepEqual([page.read - page.spots, page.queries], d.samples ? [9 + 6, 2] : d.spots ? [9, 2] : [9, 1], `${field} ${order}: rows read and queries`);
        }
      }
      // The far end: ids 61-80 hold a value, 81-83 the next one up, 84-90 one past the range. Newest first within the two:
      // the sample (ids 61-69) is all the far end, so the rows above it are read, and the far end's come from the sample.
      await conn.reset(t);
      const step = { amount: (k) => k, total: (k) => BigInt(k), born: (k) => new Date(Date.UTC(2000, 0, 1 + k)) };
      const tiers = Array.from({ length: 30 }, (_, i) => ({ id: 61 + i, k: i < 20 ? 0 : i < 23 ? 1 : 2 }));
      await insert(t, 'acme', tiers.map(({ id, k }) => ({ id, amount: step.amount(k), total: step.total(k), born: step.born(k) })));
      await eventually(() => answer(t, 'total', everything), tiers.map((r) => r.id), 'every row visible');
      for (const field of FIELDS) {
        const within = await mod.withTenant('acme', async () => mod.rangeBetween(rangeOf(t, field), step[field](0), step[field](1)));
        for (const [offset, expected] of [[0, [81, 82, 83, 61, 62]], [2, [83, 61, 62, 63, 64]]]) {
          const page = await ordered(t, field, { order: 'desc', limit: 5, offset, batch: 8, within });
          assert.deepEqual(page.rows.map((r) => r.id), expected, `${field}, offset ${offset}`);
          // The 3 rows above, then a sample of 9 of the far end's, which the page takes from: no row is read twice.
          // Sampled first (d.samples), a far end in a piece of its own (amount's, born's; total's 0 and 1 share a rung) is
          // sampled before it is read, which says nothing here: 9 rows more.
          assert.equal(page.read, d.samples && field !== 'total' ? 12 + 9 : 12, `${field}, offset ${offset}: ${page.read} rows read, in ${page.queries} queries`);
        }
      }
    });

    test('newest first where the ids follow the values: the rows at both ends of the key narrow the range where the dialect asks for them (PostgreSQL, MariaDB), not past a bound; every page equals the oracle', async () => {
      const t = d.table(mod, { ring, name: 'range_newest' });
      await conn.reset(t);
      // Every field grows with the id, as a creation date does; amount's values are each held by three rows, born's cross 1970.
      const rows = Array.from({ length: 3000 }, (_, i) => ({ id: i + 1, amount: Math.floor(i / 3) / 4, total: BigInt(i) * 1000n - 1_500_000n, born: new Date(Date.UTC(1965, 0, 1) + i * 86_400_000) }));
      await insert(t, 'acme', rows);
      for (const field of FIELDS) {
        const all = await mod.withTenant('acme', async () => mod.rangeBetween(rangeOf(t, field), rows[0][field], rows.at(-1)[field]));
        await eventually(() => answer(t, field, all), rows.map((r) => r.id), `every ${field} visible`);
      }
      const newest = (field, list) => [...list].sort((a, b) => cmp(b[field], a[field]) || a.id - b.id).map((r) => r.id);
      const counts = [];
      let endsAsked = 0;
      // [offset, batch, a bound: below ('lt', on the page's near side) or from ('gte', its far side) the middle row's value, fetch's own condition]
      const cases = [[0], [37], [0, 64], [0, undefined, 'lt'], [0, undefined, 'gte'], [0, undefined, undefined, 'own']];
      for (const field of FIELDS) {
        const middle = rows[1500][field];
        for (const [offset, batch, op, own] of cases) {
          const sent = [];
          const within = op === undefined ? undefined : await mod.withTenant('acme', async () => OPS[op](rangeOf(t, field), middle));
          // fetch's own condition leaves out most of the sample's newest half (ids 2873 to 3000), which the narrowing may not count.
          const mine = (where) => (own === undefined ? where : and(where, lte(t.id, 2900)));
          const page = await mod.withTenant('acme', () =>
            mod.orderedPage((where, limit, at) => {
              const q = conn.db.select({ id: t.id, value: t[field] }).from(t).where(mine(where)).orderBy(asc(t.id)).limit(limit).offset(at);
              sent.push(q.toSQL().sql);
              return q;
            }, { column: rangeOf(t, field), value: (row) => row.value, order: 'desc', limit: 20, offset, batch, within }),
          );
          const what = `${field}, offset ${offset}, batch ${batch ?? 'default'}${op === undefined ? '' : `, ${op} the middle row's value`}${own === undefined ? '' : ', ids up to 2900'}`;
          const list = rows.filter((r) => (op === undefined || TESTS[op](r[field], middle)) && (own === undefined || r.id <= 2900));
          assert.deepEqual(page.rows.map((r) => r.id), newest(field, list).slice(offset, offset + 20), what);
          // The sample from both ends of the key (SearchSql.ends): its second half walks the key from the newest row.
          const fromEnds = sent.filter((q) => /order by [`"]id[`"] desc limit/.test(q)).length;
          if (d.ends && op !== 'lt') {
            // Unless the range's spots narrow the part first (SearchSql.spots): where none of its values is a spot of the
            // census's level, exactly one.
            const census = d.spots && list.some((r) => levelOf(field, r[field]) >= 3);
            if (census) assert.ok(fromEnds <= 1, `${what}: ${fromEnds} samples from both ends of the key`);
            else assert.equal(fromEnds, 1, `${what}: one sample from both ends of the key`);
            endsAsked += fromEnds;
            // The spots, the sample, the one from both ends, the part it narrows to and a few pieces near the type's end that hold nothing.
            assert.ok(page.queries <= 9, `${what}: ${page.queries} queries`);
          } else assert.equal(fromEnds, 0, `${what}: a walk of the key from its end${op === 'lt' ? ' past a bound' : ''}`);
          counts.push(page.queries);
        }
      }
      console.log(`# ${d.name}: newest first, ${Math.min(...counts)} to ${Math.max(...counts)} queries a page, ${endsAsked} samples from both ends of the key`);
    });

    test('values bunched together: the range\'s spots narrow a part that holds every row (PostgreSQL, MariaDB); every page equals the oracle', async () => {
      const t = d.table(mod, { ring, name: 'range_spots' });
      await conn.reset(t);
      // 3,000 amounts from 500 to 1,500 (one piece of the tree), ids in no order, and 20 more of them spots of level 3
      // (range/spots.ts: about one in 4,096, found by trying), so that the census finds some, as it would among 100,000.
      const rand = seeded('range spots');
      const values = new Set();
      let spots = 0;
      while (values.size < 3000 || spots < 20) {
        const v = 500 + Math.floor(rand() * 1_000_000) / 1000;
        if (values.has(v)) continue;
        if (levelOf('amount', v) >= 3) spots++, values.add(v);
        else if (values.size < 3000 + spots) values.add(v);
      }
      const ids = [...values].map((_, i) => i + 1).sort(() => rand() - 0.5);
      const rows = [...values].map((amount, i) => ({ id: ids[i], amount, total: null, born: null }));
      await insert(t, 'acme', rows);
      const all = await mod.withTenant('acme', async () => mod.rangeBetween(t.amountRange, 500, 1500));
      await eventually(() => answer(t, 'amount', all), rows.map((r) => r.id).sort((a, b) => a - b), 'every amount visible');
      // Then 300 rows of one more value of level 3 or more: the census's level holds more than it takes (256), and the level
      // above is asked, whose spots are few or none.
      const heavy = (() => {
        for (;;) {
          const v = 500 + Math.floor(rand() * 1_000_000) / 1000;
          if (!values.has(v) && levelOf('amount', v) >= 3) return v;
        }
      })();
      for (const round of ['spread', 'one value held by 300 rows']) {
        if (round !== 'spread') {
          const more = Array.from({ length: 300 }, (_, i) => ({ id: 4001 + i, amount: heavy, total: null, born: null }));
          await insert(t, 'acme', more);
          rows.push(...more);
          await eventually(() => answer(t, 'amount', all), rows.map((r) => r.id).sort((a, b) => a - b), 'every amount visible');
        }
        const codes = rows.map((r) => codeOf('number', r.amount));
        for (const order of ['asc', 'desc']) {
          const sorted = [...rows].sort((a, b) => (order === 'asc' ? a.amount - b.amount : b.amount - a.amount) || a.id - b.id).map((r) => r.id);
          // The default batch, and batches small enough that the part narrows to level 1's spots; offsets past several of them.
          for (const [offset, batch] of [[0], [37], [0, 16], [150, 16], [0, 64]]) {
            const widest = [];
            const page = await mod.withTenant('acme', () =>
              mod.orderedPage((where, limit, at) => {
                // How many rows each query that reads a part (not its spots) could find.
                const { lo, hi, spot } = boundsOf(where);
                if (spot === undefined) widest.push(codes.filter((c) => lo <= c && c <= hi).length);
                return conn.db.select({ id: t.id, value: t.amount }).from(t).where(where).orderBy(asc(t.id)).limit(limit).offset(at);
              }, { column: t.amountRange, value: (row) => row.value, order, limit: 20, offset, batch }),
            );
            const what = `${round}: ${order}, offset ${offset}, batch ${batch ?? 'default'}`;
            assert.deepEqual(page.rows.map((r) => r.id), sorted.slice(offset, offset + 20), what);
            if (!d.spots) assert.equal(page.spots, 0, `${what}: no spots asked`);
            else if (round === 'spread') {
              // The census's 20-odd spots first; then no query over more than a few times the rows the page needs, where
              // without the spots the first would be the whole piece (3,020 rows), and the ones after it halves of it.
              assert.ok(page.spots >= 20, `${what}: ${page.spots} spot rows`);
              assert.ok(Math.max(...widest) <= 1000, `${what}: a query over ${Math.max(...widest)} rows, in ${page.queries} queries`);
            } else assert.ok(page.spots > 256, `${what}: the census's level holds more than it takes: ${page.spots} spot rows`);
          }
        }
      }
    });

    test("a page at an end of the range reads that end's piece of the tree, not a sample of the whole range, even when fetch gives the end's rows last", async () => {
      const t = d.table(mod, { ring, name: 'range_gallop' });
      await conn.reset(t);
      // ids 1-200: values between; 201-220: the type's last value; 221-240: its first. Numbers and bigints only:
      // a date's ends share their pieces of the tree with the dates around 1970.
      const ends = { amount: [-Number.MAX_VALUE, Number.MAX_VALUE], total: [-(2n ** 63n), 2n ** 63n - 1n] };
      const rows = Array.from({ length: 240 }, (_, i) => {
        const pick = (field, middle) => (i < 200 ? middle : ends[field][i < 220 ? 1 : 0]);
        return { id: i + 1, amount: pick('amount', i + 1), total: pick('total', BigInt(i + 1)), born: null };
      });
      await insert(t, 'acme', rows);
      const everything = await mod.withTenant('acme', async () => mod.rangeGte(t.totalRange, -(2n ** 63n)));
      await eventually(() => answer(t, 'total', everything), rows.map((r) => r.id), 'every row visible');
      // Each column's FULLTEXT index shows the rows on its own (InnoDB): wait for the amounts' too.
      const amounts = await mod.withTenant('acme', async () => mod.rangeGte(t.amountRange, -Number.MAX_VALUE));
      await eventually(() => answer(t, 'amount', amounts), rows.map((r) => r.id), 'every amount visible');
      for (const field of ['amount', 'total']) {
        for (const [order, expected] of [['desc', [201, 202, 203, 204, 205]], ['asc', [221, 222, 223, 224, 225]]]) {
          // InnoDB's FULLTEXT can show a row through one token before another (the waits above passed, and a page
          // then missed ids 201-220): the page is asked again while it differs, as `answer` is.
          let page;
          await eventually(async () => (page = await ordered(t, field, { order, limit: 5, batch: 8 })).rows.map((r) => r.id), expected, `${field} ${order}`);
          // A sample of the whole range would be ids 1-9, from the middle. Sampled first (d.samples), the index's
          // first and last rows of the piece, then the page's 5 rows of the value, the first in fetch's order, and one more.
          // With spots (d.spots), the range's spots first.
          assert.deepEqual([page.read - page.spots, page.queries], d.samples ? [9 + 6, 2] : d.spots ? [9, 2] : [9, 1], `${field} ${order}: rows read and queries`);
        }
      }
    });

    test('a page after a value reads the rows near that bound, a rung of the tree at a time, not a sample of the rest of its node', async () => {
      const t = d.table(mod, { ring, name: 'range_rungs' });
      await conn.reset(t);
      // Around a centre C, in one node of depth 1: ids 1-100 far from it (50 above, 50 below), ids 101-140 next to it (20 above, 20 below).
      const C = { amount: 1e6, total: 2n ** 40n, born: Date.UTC(2000, 0, 1) };
      const at = { amount: (k) => C.amount + k / 1024, total: (k) => C.total + BigInt(k), born: (k) => new Date(C.born + k) };
      const far = { amount: (k) => C.amount + Math.sign(k) * (5e5 + Math.abs(k)), total: (k) => C.total + BigInt(Math.sign(k)) * (2n ** 39n + BigInt(Math.abs(k))), born: (k) => new Date(C.born + Math.sign(k) * (1e11 + Math.abs(k))) };
      const offsets = [...Array.from({ length: 100 }, (_, i) => ['far', i < 50 ? i + 1 : 49 - i]), ...Array.from({ length: 40 }, (_, i) => ['at', i < 20 ? i + 1 : 19 - i])];
      const rows = offsets.map(([kind, k], i) => {
        const value = (field) => (kind === 'far' ? far : at)[field](k);
        return { id: i + 1, amount: value('amount'), total: value('total'), born: value('born') };
      });
      await insert(t, 'acme', rows);
      const everything = await mod.withTenant('acme', async () => mod.rangeGte(t.totalRange, -(2n ** 63n)));
      await eventually(() => answer(t, 'total', everything), rows.map((r) => r.id), 'every row visible');
      // Each column's FULLTEXT index shows the rows on its own (InnoDB): wait for the amounts' and dates' too (a run missed id 101's amount).
      for (const [field, lowest] of [['amount', -Number.MAX_VALUE], ['born', new Date(-8.64e15)]]) {
        const all = await mod.withTenant('acme', async () => mod.rangeGte(rangeOf(t, field), lowest));
        await eventually(() => answer(t, field, all), rows.map((r) => r.id), `every ${field} visible`);
      }
      const centre = { amount: C.amount, total: C.total, born: new Date(C.born) };
      for (const field of FIELDS) {
        for (const [order, bound, expected] of [['asc', 'rangeGt', [101, 102, 103, 104, 105]], ['desc', 'rangeLt', [121, 122, 123, 124, 125]]]) {
          const within = await mod.withTenant('acme', async () => mod[bound](rangeOf(t, field), centre[field]));
          const page = await ordered(t, field, { order, limit: 5, batch: 8, within });
          assert.deepEqual(page.rows.map((r) => r.id), expected, `${field} ${order}`);
          // The rung that holds the 20 near rows: a sample of 9, then the 5 of the page. The far rows share the first piece
          // of the tree with them, and come first in fetch's order: a sample of that piece would be far rows.
          assert.equal(page.read, 14, `${field} ${order}: ${page.read} rows read in ${page.queries} queries`);
        }
      }
      // A bound whose next code has the digits F, F at depths 11 and 12, and no row in its rung of depth 12: the rungs
      // of depths 12 and 10 end alike, and the second is not asked for (ordered() refuses an empty range). The page is
      // in the rung of depth 8: the 20 rows below C, from the lowest.
      const below = await mod.withTenant('acme', async () => mod.rangeGt(t.totalRange, C.total - 0x1010001n));
      const skipped = await ordered(t, 'total', { limit: 5, batch: 8, within: below });
      assert.deepEqual(skipped.rows.map((r) => r.id), [140, 139, 138, 137, 136]);
      // Past the type's last value: no value can be there, so no query.
      for (const field of ['amount', 'born']) {
        const last = { amount: Number.MAX_VALUE, born: new Date(8.64e15) }[field];
        const beyond = await ordered(t, field, { limit: 5, within: await mod.withTenant('acme', async () => mod.rangeGt(rangeOf(t, field), last)) });
        assert.deepEqual([beyond.rows, beyond.queries], [[], 0], `${field} past the last value`);
      }
    });

    test('rows of another tenant are never returned, and the values read back with their JS types', async () => {
      const [lo, hi] = [-(2n ** 63n), 2n ** 63n - 1n];
      const where = await mod.withTenant('globex', async () => mod.rangeBetween(table.totalRange, lo, hi));
      const ids = await answer(table, 'total', where, 'globex');
      assert.deepEqual(ids, globex.filter((r) => r.total !== null).map((r) => r.id));
      const got = await mod.withTenant('acme', () => conn.db.select().from(table).where(sql`${table.id} <= 200`).orderBy(asc(table.id)));
      for (const [i, row] of got.entries()) {
        const want = acme[i];
        for (const f of FIELDS) {
          if (want[f] === null) assert.equal(row[f], null);
          else if (f === 'born') assert.equal(row.born.getTime(), want.born.getTime());
          else assert.equal(row[f], want[f] === 0 ? 0 : want[f], `${f} of ${want.id}`); // -0 reads back as 0
        }
        assert.equal(typeof row.total, want.total === null ? 'object' : 'bigint');
        if (row.amountRange !== null) assert.ok(row.amountRange instanceof mod.StoredIndex);
      }
    });

    test('reindexSearch builds a range index and rotates its key online, with workers where the dialect has them: every query exact before, during and after', async () => {
      const rand = seeded(`range-suite rotation ${d.name}`);
      const [oldRing, bothRings, newRing] = [new ale.KeyRing([OLD_SECRET]), new ale.KeyRing([SECRET, OLD_SECRET]), new ale.KeyRing([SECRET])];
      const [before, during, afterwards] = [oldRing, bothRings, newRing].map((r) => d.table(mod, { ring: r, name: 'range_rot' }));
      const rows = measures(600, { seed: 11 });
      await conn.reset(before);
      // Written before the index existed: NULL tokens.
      await mod.withTenant('acme', () => conn.db.insert(before).values(rows.map((r) => ({ id: r.id, tenantId: 'acme', amount: r.amount, total: r.total, born: r.born }))));
      const columns = (t) => FIELDS.map((f) => ({ source: t[f], index: rangeOf(t, f) }));
      const reindex = (t, extra = {}) => mod.reindexSearch(conn.db, { table: t, key: t.id, tenant: { column: t.tenantId }, batchSize: 100, columns: columns(t), ...extra });
      const filled = rows.reduce((n, r) => n + FIELDS.filter((f) => r[f] !== null).length, 0);
      const built = await reindex(before);
      assert.equal(built.written, filled);
      assert.equal((await reindex(before)).written, 0);
      const exact = async (t, when) => {
        for (let i = 0; i < 6; i++) {
          const field = FIELDS[i % 3];
          const present = rows.filter((r) => r[field] !== null);
          const [a, b] = [present[Math.floor(rand() * present.length)][field], present[Math.floor(rand() * present.length)][field]];
          const [lo, hi] = cmp(a, b) <= 0 ? [a, b] : [b, a];
          const where = await mod.withTenant('acme', async () => mod.rangeBetween(rangeOf(t, field), lo, hi));
          const expected = rows.filter((r) => r[field] !== null && cmp(r[field], lo) >= 0 && cmp(r[field], hi) <= 0).map((r) => r.id);
          await eventually(() => answer(t, field, where), expected, `${when}: between on ${field}`);
          const page = await ordered(t, field, { order: 'desc', limit: 10 });
          const top = [...present].sort((x, y) => cmp(y[field], x[field]) || x.id - y.id).slice(0, 10).map((r) => r.id);
          assert.deepEqual(page.rows.map((r) => r.id), top, `${when}: top 10 of ${field}`);
        }
      };
      await exact(before, 'once built');
      // A new primary secret: rows hold the previous key's tokens, new writes the new key's.
      const added = measures(20, { seed: 12, firstId: 1001 });
      await insert(during, 'acme', added);
      rows.push(...added);
      await exact(during, 'once the ring has a new primary');
      // Two workers on one job where the dialect has a job table: each takes leases on ranges of keys.
      const job = { workers: { job: `range-rot-${process.pid}-${Date.now()}` } };
      const runs = await Promise.all(d.workers ? [reindex(during, job), reindex(during, job)] : [reindex(during)]);
      assert.equal(
        runs.reduce((n, r) => n + r.written, 0),
        filled,
        'every row but the new ones, each once',
      );
      await exact(during, 'after the re-index, on the ring of both');
      await mod.rotateKeys(conn.db, { table: during, key: during.id, tenant: { column: during.tenantId }, keyRing: bothRings, columns: FIELDS.map((f) => ({ column: during[f] })) });
      await exact(afterwards, 'on the new key alone');
      assert.equal((await reindex(afterwards)).written, 0);
    });

    if (d.workers) test("a reindexSearch job is bound to its index columns' key: resumed with the ring's new primary, it is refused instead of leaving the ranges done before under the old key", async () => {
      const [oldRing, bothRings] = [new ale.KeyRing([OLD_SECRET]), new ale.KeyRing([SECRET, OLD_SECRET])];
      const [before, during] = [oldRing, bothRings].map((r) => d.table(mod, { ring: r, name: 'range_fp' }));
      const rows = measures(300, { seed: 21 });
      await conn.reset(before);
      await mod.withTenant('acme', () => conn.db.insert(before).values(rows.map((r) => ({ id: r.id, tenantId: 'acme', amount: r.amount, total: r.total, born: r.born }))));
      const job = `range-fp-${process.pid}-${Date.now()}`;
      const reindex = (t, extra = {}) =>
        mod.reindexSearch(conn.db, { table: t, key: t.id, tenant: { column: t.tenantId }, batchSize: 100, columns: FIELDS.map((f) => ({ source: t[f], index: rangeOf(t, f) })), workers: { job, rangeRows: 100, leaseMs: 100 }, ...extra });
      await assert.rejects(reindex(before, { onProgress: () => { throw new Error('stopped after one batch'); } }), /stopped after one batch/);
      const e = await reindex(during).then(() => null, (error) => error);
      assert.equal(e?.code, 'ALE_INVALID_INPUT', `not refused: ${JSON.stringify(e)}`);
      assert.match(e.message, /other parameters/);
      // under the key it was started with, it resumes and finishes
      assert.ok((await reindex(before)).written > 0);
      assert.equal((await reindex(before, { workers: undefined })).written, 0);
    });

    if (d.workers) test('reindexSearch runs with workers over index columns on a ring of tenants, which has no key of its own to bind the job to', async () => {
      const tenants = ale.KeyRing.forTenants();
      tenants.setTenant('acme', [Buffer.alloc(32, 7)], { keyIds: [Buffer.alloc(16, 1).toString('base64url')], indexKey: Buffer.alloc(32, 9) });
      const t = d.table(mod, { ring: tenants, name: 'range_tenants' });
      const rows = measures(150, { seed: 22 });
      await conn.reset(t);
      await mod.withTenant('acme', () => conn.db.insert(t).values(rows.map((r) => ({ id: r.id, tenantId: 'acme', amount: r.amount, total: r.total, born: r.born }))));
      const reindex = () =>
        mod.reindexSearch(conn.db, { table: t, key: t.id, tenant: { column: t.tenantId }, batchSize: 50, columns: FIELDS.map((f) => ({ source: t[f], index: rangeOf(t, f) })), workers: { job: `range-tenants-${process.pid}-${Date.now()}` } });
      assert.equal((await reindex()).written, rows.reduce((n, r) => n + FIELDS.filter((f) => r[f] !== null).length, 0));
      assert.equal((await reindex()).written, 0);
      const bound = rows.find((r) => r.amount !== null).amount;
      const expected = rows.filter((r) => r.amount !== null && r.amount >= bound).map((r) => r.id).sort((a, b) => a - b);
      assert.deepEqual(await answer(t, 'amount', await mod.withTenant('acme', async () => mod.rangeGte(t.amountRange, bound))), expected);
    });

    test("convertToTenantKeys moves range tokens under each tenant's index key, and a shred leaves nothing to find", async () => {
      ale.initKeyRing([SECRET]);
      const keyTable = `range_keys_${d.name.toLowerCase().replace(/[^a-z0-9]+/g, '_')}`.slice(0, 48);
      const keys = mod.tenantKeys(conn.db, { kek: 'range-kek-0123456789-abcdefghijklmnopq', table: keyTable, changeCheckEveryMs: 0, flushEveryMs: 0 });
      try {
        await (conn.db.execute ? conn.db.execute(sql.raw(`DROP TABLE IF EXISTS ${keyTable}`)) : conn.db.run(sql.raw(`DROP TABLE IF EXISTS ${keyTable}`)));
        await keys.ready();
        const [v1, keyed] = [d.table(mod, { name: 'range_conv' }), d.table(mod, { keys, name: 'range_conv' })];
        await conn.reset(v1);
        const rows = measures(200, { seed: 19 });
        const tenantOf = (r) => (r.id % 4 === 0 ? 'globex' : 'acme');
        for (const tenant of ['acme', 'globex']) await insert(v1, tenant, rows.filter((r) => tenantOf(r) === tenant));
        const lo = -100_000;
        const hi = 100_000;
        const oracle = (tenant) => rows.filter((r) => tenantOf(r) === tenant && r.amount !== null && r.amount >= lo && r.amount <= hi).map((r) => r.id);
        const find = async (t, tenant) => answer(t, 'amount', await mod.withTenant(tenant, async () => mod.rangeBetween(t.amountRange, lo, hi)), tenant);
        for (const tenant of ['acme', 'globex']) await eventually(() => find(keyed, tenant), oracle(tenant), `before: ${tenant}`);
        const options = {
          table: keyed,
          key: keyed.id,
          tenant: { column: keyed.tenantId },
          keys,
          batchSize: 64,
          columns: [{ column: keyed.amount }],
          indexes: [{ index: keyed.amountRange, source: keyed.amount }],
        };
        const first = await mod.convertToTenantKeys(conn.db, options);
        const present = rows.filter((r) => r.amount !== null).length;
        assert.equal(first.written, 2 * present, 'the column and its index');
        assert.equal((await mod.convertToTenantKeys(conn.db, options)).written, 0);
        for (const tenant of ['acme', 'globex']) await eventually(() => find(keyed, tenant), oracle(tenant), `after: ${tenant}`);
        await keys.shred('acme');
        assert.ok(oracle('acme').length > 0);
        assert.deepEqual(await find(keyed, 'acme'), []);
        // Nodes refused for a live tenant are refused for a shredded one (an 8-byte buffer holds no node).
        for (const tenant of ['globex', 'acme']) {
          assert.throws(() => keys.sealer.rangeQueries(Buffer.alloc(8), tenant, 'measures', 'amount'), (e) => e.code === 'ALE_INVALID_INPUT', tenant);
        }
        await eventually(() => find(keyed, 'globex'), oracle('globex'), 'another tenant is untouched');
      } finally {
        await keys.close();
      }
    });

    test('a range index column reads back a StoredIndex that writes back unchanged; a new value written to both columns moves the row', async () => {
      const t = d.table(mod, { ring, name: 'range_save' });
      await conn.reset(t);
      await insert(t, 'acme', [{ id: 1, amount: 5, total: 5n, born: new Date(Date.UTC(1960, 5, 1)) }]);
      const at = async (lo, hi) => answer(t, 'amount', await mod.withTenant('acme', async () => mod.rangeBetween(t.amountRange, lo, hi)));
      const [row] = await mod.withTenant('acme', () => conn.db.select().from(t));
      assert.ok(row.amountRange instanceof mod.StoredIndex);
      await mod.withTenant('acme', () => conn.db.update(t).set({ ...row }).where(sql`${t.id} = 1`));
      await eventually(() => at(0, 10), [1], 'saved as read');
      await mod.withTenant('acme', () => conn.db.update(t).set({ amount: -7.5, amountRange: -7.5 }).where(sql`${t.id} = 1`));
      await eventually(() => at(-8, -7), [1], 'moved');
      assert.deepEqual(await at(0, 10), []);
      // The amount's tokens are no total's: refused there, and nothing is written.
      await assert.rejects(
        mod.withTenant('acme', () => conn.db.update(t).set({ total: 6n, totalRange: row.amountRange }).where(sql`${t.id} = 1`)),
        (e) => e.code === 'ALE_INVALID_INPUT' && /range index of [^ ]+\.amount \(number\)/.test(e.message) && e.column === t.totalRange.name && !e.message.includes(String(row.amountRange)),
      );
      assert.deepEqual((await mod.withTenant('acme', () => conn.db.select({ total: t.total }).from(t))).map((r) => r.total), [5n]);
    });

    test('bad values, bounds and options get coded errors before any SQL, quoting no value', async () => {
      const t = d.table(mod, { ring, name: 'range_bad' });
      await mod.withTenant('acme', async () => {
        for (const [field, value] of [['amount', Number.NaN], ['amount', Infinity], ['amount', '5'], ['total', 2n ** 63n], ['total', 5], ['born', new Date(Number.NaN)], ['born', '2020-01-01']]) {
          for (const make of [() => conn.db.insert(t).values({ id: 1, tenantId: 'acme', [field]: value }).toSQL(), () => mod.rangeGt(rangeOf(t, field), value)]) {
            try {
              make();
              assert.fail(`no error for ${field} ${String(value)}`);
            } catch (e) {
              assert.equal(e.code, 'ALE_INVALID_INPUT', `${field} ${String(value)}: ${e.message}`);
              if (String(value).length > 2) assert.ok(!e.message.includes(String(value)), e.message);
            }
          }
        }
        assert.throws(() => mod.rangeGt(t.amount, 1), { code: 'ALE_INVALID_INPUT' }, 'an encrypted column is no range index');
        assert.throws(() => mod.rangeGt(t.amountRange, null), { code: 'ALE_INVALID_INPUT' });
        const fetch = async () => [];
        for (const options of [{}, { column: t.amountRange }, { column: t.amountRange, value: (r) => r.value }, { column: t.amountRange, value: (r) => r.value, limit: 0 }, { column: t.amountRange, value: (r) => r.value, limit: 5, order: 'up' }, { column: t.amountRange, value: (r) => r.value, limit: 5, within: sql`1 = 1` }, { column: t.amountRange, value: (r) => r.value, limit: 5, within: mod.rangeGt(t.totalRange, 1n) }, { column: t.totalRange, value: (r) => r.value, limit: 5, batch: 0 }, { column: t.amountRange, value: (r) => r.value, limit: 5, offset: Number.MAX_SAFE_INTEGER - 4, batch: 256 }]) {
          await assert.rejects(mod.orderedPage(fetch, options), { code: 'ALE_INVALID_INPUT' }, Object.keys(options).join());
        }
        await assert.rejects(mod.orderedPage(async () => 'rows', { column: t.amountRange, value: (r) => r.value, limit: 1 }), { code: 'ALE_INVALID_INPUT' });
      });
      for (const options of [{ type: 'float' }, {}, { type: 'number', storage: 'binary' }, { type: 'date', fts: '' }]) {
        assert.throws(() => mod.rangeIndexColumn('r', { collection: 'c', ...options }), { code: 'ALE_INVALID_INPUT' }, JSON.stringify(options));
      }
      const where = await mod.withTenant('acme', async () => mod.rangeBetween(table.amountRange, 123456.75, 123999.25));
      // The bounds' codes are kept for orderedPage's `within`, under a symbol that is not enumerable: a logged condition shows neither.
      const codes = [123456.75, 123999.25].map((v) => String(codeOfNumber(v)));
      for (const shown of [inspect(where, { depth: 6 }), JSON.stringify(Object.keys(where)), String(Object.getOwnPropertyNames(where))]) {
        assert.ok(!shown.includes('123456') && !codes.some((c) => shown.includes(c)), 'a logged condition shows no bound');
      }
      assert.ok(inspect(where, { showHidden: true, depth: 6 }).includes(codes[0]), 'the check above can see a code where there is one');
      assert.ok(!conn.db.select().from(table).where(where).toSQL().params.some((p) => String(p).includes('123456')), 'nor does its SQL');
    });

    test('searchLeakage reports on a range index: what its tokens show, per tenant', async () => {
      const report = (await mod.searchLeakage(conn.db, { table, key: table.id, index: table.bornRange, tenant: { column: table.tenantId } })).find((r) => r.tenant === 'acme');
      const present = acme.filter((r) => r.born !== null);
      assert.equal(report.indexed, present.length);
      // A value's path is 16 nodes; where the dialect asks spots (d.spots), one value in 16 is one (range/spots.ts), which
      // stores its path again in each spot tree of its level.
      assert.equal(report.medianPerRow, 16, "a value's path: 16 nodes");
      if (d.spots) assert.ok(report.maxPerRow > 16 && report.maxPerRow % 16 === 0 && report.maxPerRow <= 16 * 7, `the most a spot stores: ${report.maxPerRow}`);
      else assert.equal(report.maxPerRow, 16, 'no spots stored');
      assert.match(report.summary, /16 for most values, and 16 more for each level of a spot/);
      assert.ok(report.topTokenShare > 0.5, 'the top of the tree is shared by most rows');
      assert.ok(report.warnings.some((w) => w.code === 'ALE_LEAK_COMMON_TOKEN'));
      // Rows share their whole set when they share the deepest node, the code itself: equal dates.
      const groups = new Map();
      for (const r of present) groups.set(r.born.getTime(), (groups.get(r.born.getTime()) ?? 0) + 1);
      const shared = [...groups.values()].filter((n) => n > 1).reduce((a, b) => a + b, 0);
      assert.equal(report.equalSetShare, shared / present.length);
    });

    // A range's rows, without a LIMIT: with one, PostgreSQL's planner may walk the primary key instead (docs/search.md, "PostgreSQL's planner and the LIMIT").
    test('the query plan uses the index', async () => {
      const where = await mod.withTenant('acme', async () => mod.rangeBetween(table.amountRange, 100, 200));
      const plan = await conn.explain(conn.db.select({ id: table.id }).from(table).where(where).orderBy(asc(table.id)), table);
      assert.match(plan, d.indexPlan, plan);
    });
  });
}
