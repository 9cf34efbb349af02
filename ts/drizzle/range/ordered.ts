// Exact order over a range index: the database cannot sort what it cannot
// read, so the package narrows the range. From the range's near end, part
// by part, it asks for the rows of a part; if they are few (at most
// `batch`), it decrypts and sorts them; if not, it narrows the part to
// where the page must lie, or splits it where the tree branches and walks
// the pieces in order, until the page is full. Where the index stops at a
// LIMIT (FTS5), a part is sampled before it is read, and narrowed from the
// sample while it is large; where the index finds every match first
// (GIN, FULLTEXT), the range's spots (range/spots.ts) say where a large
// part's values lie; where fetch's first rows run against the page's
// order (ids that grow with the values, newest first), the part's rows at
// both ends of the table's key narrow it. What comes back equals
// `ORDER BY value [DESC], <fetch's order> LIMIT … OFFSET …` on the
// plaintext (docs/search.md, "Ranges and order").
import type { SQL } from 'drizzle-orm';
import { codedError } from '../../shared/errors.js';
import { inFailureScope, PageFailures } from '../failures.js';
import { codeRange, type PartOptions } from './operators.js';
import { pageOptions, withinOf } from './page-options.js';
import type { OrderedPage, OrderedPageOptions } from './page-types.js';
import { against, wholeNode } from './narrowing.js';
import { SPOT_LEVELS } from './spots.js';
import { nodeOf, split } from './tree.js';

/** The depths of orderedPage's rungs from a bound: each rung up to 256 times wider than the last while they are narrow, 16 times from depth 6 up, where a node can hold many rows. */
const RUNGS = [12, 10, 8, 6, 5, 4, 3, 2];

/** How many samples in a row a part may take before it is read: each narrowing keeps one to two times the sample's share of the rows needed (SAMPLE_SHARE) of a part whose sample is unrelated to its values, and a sample that follows them keeps nearly all. */
const MAX_SAMPLES = 8;

/** A sample's rows for each row the page still needs (at most a batch): each narrowing then keeps an eighth to a quarter of a part, and a page of one value costs a few times its rows. */
const SAMPLE_SHARE = 8;

/** The spot level a page asks first over its range: one value in 4,096, a few dozen rows of a table of 100,000; from about a million rows on, more than SPOT_MAX, and the level above is asked next. */
const SPOT_FIRST = 3;

/** The most rows of one spot sample: past it, the level above (16 times sparser) is asked. */
const SPOT_MAX = 256;

/**
 * A page of rows in the order of a range column's values:
 *
 *   const page = await orderedPage(
 *     (where, limit, offset) => db.select().from(orders).where(where).orderBy(orders.id).limit(limit).offset(offset),
 *     { column: orders.totalRange, value: (row) => row.total, order: 'desc', limit: 20 },
 *   );
 *
 * `fetch(where, limit, offset)` runs the caller's query with `where` (add
 * the caller's own conditions with `and()`), a total order (ending with the
 * primary key: it breaks ties), and that limit and offset.
 */
export async function orderedPage<Row>(fetch: (where: SQL, limit: number, offset: number) => Promise<Row[]> | PromiseLike<Row[]>, options: OrderedPageOptions<Row>): Promise<OrderedPage<Row>> {
  const what = 'orderedPage';
  const { column, value, limit, offset, batch, narrowBatch, descending, codec, dialect } = pageOptions(fetch, options);
  // Whether this column's index gives a sample for the price of its rows (SearchSql.sampler).
  const samples = dialect.sampler?.(codec) !== undefined;
  // Whether the column's table can be asked for the rows at both ends of its key (SearchSql.ends).
  const ends = dialect.ends?.(column) !== undefined;
  // Whether a large part is first asked for its spots (SearchSql.spots): where the index has no sampler.
  const spots = dialect.spots && !samples;
  const [lo, hi] = withinOf(options, codec);
  // The first and last codes a value of the type can have.
  const [first, last] = codec.bounds;
  // Whether the page's near end is the type's first or last value (no
  // `within` bound, or one on its far side): no row lies beyond a part
  // but the ones the page has found (fewer than it needs), so a walk of the
  // key from the end where the part's near rows are, when the ids follow
  // the values, reads few others (SearchSql.ends). Past a bound (a page
  // after a value), that walk would read every row beyond it first.
  const open = descending ? hi >= last : lo <= first;
  const need = offset + limit;
  const page: OrderedPage<Row> = { rows: [], read: 0, refused: 0, queries: 0, spots: 0, failures: [] };
  const found: Row[] = [];
  // Rows read with a cell that did not open: left out of the order, their value unknown.
  const failed = new PageFailures();
  /** The rows of `rows` whose code is in [a, b], with their codes. */
  const exact = (rows: Row[], a: bigint, b: bigint) => {
    page.read += rows.length;
    const kept: [bigint, Row][] = [];
    for (const row of rows) {
      if (failed.has(row)) continue;
      const v = value(row);
      const code = v === null || v === undefined ? undefined : codec.code(v);
      if (code !== undefined && a <= code && code <= b) kept.push([code, row]);
      else page.refused++;
    }
    return kept;
  };
  /** Rows of [a, b], or with `part.sample`, of that many of the index's rows of it. */
  const ask = async (a: bigint, b: bigint, n: number, at: number, part?: PartOptions) => {
    page.queries++;
    // In readWithFailures' scope, as searchPage's batches: one row that does not open cannot stop every page that reads it.
    const scope = { failed: 0 };
    const where = codeRange(column, a, b, what, part);
    const rows = await inFailureScope(() => fetch(where, n, at), scope);
    if (!Array.isArray(rows)) throw codedError('ALE_INVALID_INPUT', `${what}: fetch must resolve to the rows of the query`);
    // More rows than asked for: fetch ignores its limit, and the pages would repeat rows. One that applies its limit
    // and ignores only its offset returns the first rows again, which nothing here can tell from the next ones.
    if (rows.length > n) throw codedError('ALE_INVALID_INPUT', `${what}: fetch returned ${rows.length} rows for a limit of ${n}; apply its limit and offset`);
    failed.note(rows, scope, options);
    return rows as Row[];
  };
  /** A comparator of codes in this order. */
  const inOrder = (x: bigint, y: bigint) => (x === y ? 0 : (x < y) !== descending ? -1 : 1);
  /** Few enough rows of [a, b] to sort whole: sorted, and taken until the page is full. The sort is stable, so ties keep fetch's order. */
  const take = (rows: Row[], a: bigint, b: bigint) => {
    const kept = exact(rows, a, b).sort(([x], [y]) => inOrder(x, y));
    for (const [, row] of kept) if (found.length < need) found.push(row);
  };
  /** The rows of `kept` whose code is `code`, in fetch's order, until the page is full. */
  const keep = (kept: [bigint, Row][], code: bigint) => {
    for (const [c, row] of kept) if (c === code && found.length < need) found.push(row);
  };
  /** The codes of `kept`, in this order. */
  const ordered = (kept: [bigint, Row][]) => kept.map(([code]) => code).sort(inOrder);
  /**
   * After the near end of [a, b] up to `cut`, where a sample narrowed the
   * part, the rest of [a, b] through `go` while the page is not full. The
   * sample said the page lies before the cut; a write between its query
   * and the next (or, on MySQL, FULLTEXT showing a commit late) can make
   * that untrue, and the rest must not be skipped then.
   */
  const beyond = async (a: bigint, b: bigint, cut: bigint, go: (p: bigint, q: bigint) => Promise<void>) => {
    const [p, q] = descending ? [a, cut - 1n] : [cut + 1n, b];
    if (found.length < need && p <= q) await go(p, q);
  };
  /** The rows of value `code` from the `at`-th on in fetch's order, a batch a query, until the page is full or they run out. */
  const valueFrom = async (code: bigint, at: number, close: boolean) => {
    for (; found.length < need; at += batch) {
      const more = await ask(code, code, batch, at, { narrowed: close });
      keep(exact(more, code, code), code);
      if (more.length < batch) return;
    }
  };
  /** The first code a row of [a, b] can have in this order: the range's near end, or where it starts beyond any value of the type, the type's first value in this order. */
  const nearOf = (a: bigint, b: bigint) => (descending ? (b < last ? b : last) : a > first ? a : first);
  /** The codes from the first of `pieces` to the last, which are in this order. */
  const span = (pieces: [bigint, bigint][]): [bigint, bigint] => {
    const [head, tail] = [pieces[0], pieces[pieces.length - 1]];
    return descending ? [tail[0], head[1]] : [head[0], tail[1]];
  };
  /**
   * `narrowed`: how many times in a row the range was narrowed from a sample
   * without splitting; `size`: the most rows to sort whole here; `close`: a
   * narrowed part or a rung, expected to hold few rows (SearchSql.narrowed).
   */
  const walk = async (a: bigint, b: bigint, narrowed = 0, size = batch, close = false): Promise<void> => {
    const rows = await ask(a, b, size + 1, 0, { narrowed: close });
    if (rows.length <= size) return take(rows, a, b);
    // Too many to sort whole: counted as read, and as refused where the exact test refuses them.
    const kept = exact(rows, a, b);
    if (a === b) {
      // One value held by more rows than a batch: they are equal, so fetch's
      // order is theirs, and the rows just read are its first.
      keep(kept, a);
      return valueFrom(a, rows.length, close);
    }
    // The rows just read are a sample of the range. When `want` of them are
    // in it, the page's rows are all at or before the `want`-th of them in
    // this order (at least `want` rows are), so the range narrows to there:
    // a few queries for a large table, as a selection would. A sample is
    // only as good as fetch's order is unrelated to the values: when ids
    // grow with them (a creation date, newest first), each narrowing drops
    // about a batch of rows, so after two in a row the range is split.
    const want = need - found.length;
    const codes = ordered(kept);
    // The sample is the range's first rows in fetch's order, so the rows it
    // holds of one value are that value's first rows, in order. When the
    // `want`-th code is the first a row of the range can have in this order
    // (nearOf), the sample holds the page: `want` rows of that value, and
    // none can come before them.
    const near = nearOf(a, b);
    if (codes.length >= want && codes[want - 1] === near) return keep(kept, near);
    if (codes.length >= want && narrowed < 2) {
      const edge = codes[want - 1];
      // A sample whose order runs against the page's narrows the part little: it is read as any other range.
      const few = !against(kept, descending);
      if (!few && ends && open) {
        // Unless the part's rows at both ends of the table's key narrow it
        // further: when the ids grow with the values, the page's end is the
        // newest rows (SearchSql.ends). They are not fetch's first rows,
        // so they only narrow, as the sampler's do, and the part they narrow
        // to is asked as one narrowed from fetch's sample is. Each half
        // holds `want` rows at least, which a batch given below twice the
        // page may not.
        const n = Math.max(size, 2 * want);
        const other = ordered(exact(await ask(a, b, n, 0, { ends: n }), a, b));
        const closer = other[want - 1];
        if (other.length >= want && (descending ? closer > edge : closer < edge)) {
          await walk(descending ? closer : a, descending ? b : closer, narrowed + 1, narrowBatch, true);
          return beyond(a, b, closer, walk);
        }
      }
      if (descending ? edge > a : edge < b) {
        await walk(descending ? edge : a, descending ? b : edge, narrowed + 1, narrowBatch, few);
        return beyond(a, b, edge, walk);
      }
      // The edge is the range's far end, a value many rows share: the rows
      // before it, then that value's, which the sample holds enough of (it
      // has `want` rows up to the edge, and the rows before it are at least
      // the ones it has), unless a write came between the queries: then
      // that value's rows past the sample's follow.
      await (descending ? walk(a + 1n, b, narrowed + 1, narrowBatch, few) : walk(a, b - 1n, narrowed + 1, narrowBatch, few));
      keep(kept, edge);
      return valueFrom(edge, kept.filter(([code]) => code === edge).length, few);
    }
    // Else along the tree: each piece is a child node's part of the range.
    const pieces = split(a, b);
    if (descending) pieces.reverse();
    await walkPieces(pieces, false, close);
  };
  /**
   * A part that may hold many rows. Where the index can stop at a LIMIT
   * (SearchSql.sampler: FTS5), its first and last rows are a sample that costs
   * what it holds, where reading the part costs every row it has: the part
   * narrows to where the sample's `want`-th code lies, as walk() narrows,
   * and is sampled again, until a sample is not full (the part is small)
   * or says nothing. Then it is walked. The sample is in the index's order,
   * not fetch's, so it only narrows: a page of one value is read whole.
   */
  const sampled = async (a: bigint, b: bigint, times = 0): Promise<void> => {
    if (spots && a !== b) return spotted(a, b);
    if (!samples || a === b || times >= MAX_SAMPLES) return walk(a, b, 0, times > 0 ? narrowBatch : batch, times > 0);
    const want = need - found.length;
    const size = Math.min(batch, SAMPLE_SHARE * want);
    const rows = await ask(a, b, size + 1, 0, { sample: size + 1 });
    const kept = exact(rows, a, b);
    if (rows.length > size && kept.length >= want) {
      const codes = ordered(kept);
      const edge = codes[want - 1];
      // The page is `want` rows of that value, the first in fetch's order.
      if (edge === nearOf(a, b)) {
        await walk(edge, edge, 0, want);
        return beyond(a, b, edge, sampled);
      }
      const end = wholeNode(edge, codes[Math.min(codes.length, 2 * want) - 1], a, b, descending);
      if (end !== undefined) {
        await sampled(descending ? end : a, descending ? b : end, times + 1);
        return beyond(a, b, end, sampled);
      }
    }
    return walk(a, b, 0, times > 0 ? narrowBatch : batch, times > 0);
  };
  /**
   * The codes of the page's range's spots (range/spots.ts), in fetch's
   * order, and their level: the first level from SPOT_FIRST up whose rows number
   * SPOT_MAX at most, asked once a page, when a part first needs it.
   * Undefined when even the sparsest level has more.
   */
  let census: Promise<{ level: number; codes: bigint[] } | undefined> | undefined;
  const spotCensus = () =>
    (census ??= (async () => {
      for (let level = SPOT_FIRST; level <= SPOT_LEVELS; level++) {
        const rows = await ask(lo, hi, SPOT_MAX + 1, 0, { spot: level, narrowed: true });
        page.spots += rows.length;
        if (rows.length <= SPOT_MAX) return { level, codes: exact(rows, lo, hi).map(([code]) => code) };
        page.read += rows.length;
      }
      return undefined;
    })());
  /**
   * A part that may hold many rows, where the index finds every match
   * before a LIMIT: its spots of the census's level (or `known`, every spot
   * of a level in [a, b]) say where its values lie. With none there, it is
   * walked as it is: it likely holds fewer rows than a spot of that level
   * stands for. Else it narrows to where its k-th spot lies (k spots stand
   * for about twice the rows the page still needs, and the part then holds
   * k rows at least), rounded out to a whole node as a sample's narrowing
   * is, and asks the next level's spots within that, while its rows are
   * expected to pass `narrowBatch`; a level's spots of such a part are
   * about 16 rows. Then the narrowed part is walked, then the rest of the
   * range the last spots were asked over (with those spots), then the rest
   * of the part, until the page is full. Spots are a sample of the values,
   * not of fetch's order, so they only narrow.
   */
  const spotted = async (a: bigint, b: bigint, known?: { level: number; codes: bigint[] }): Promise<void> => {
    let { level, codes } = known ?? { level: 0, codes: [] };
    if (known === undefined) {
      const all = await spotCensus();
      if (all !== undefined) [level, codes] = [all.level, all.codes.filter((code) => a <= code && code <= b).sort(inOrder)];
    }
    // No spot of `level` here: few rows, expected, when the spots were asked over this range (`known`).
    if (codes.length === 0) return known === undefined ? walk(a, b) : walk(a, b, 0, narrowBatch, true);
    // [x, y]: the part as narrowed; [u, v]: the range whose every spot of `level` is in `codes`.
    let [x, y, u, v] = [a, b, a, b];
    for (;;) {
      const k = Math.max(1, Math.ceil((2 * (need - found.length)) / 16 ** level));
      if (codes.length >= k) {
        const cut = wholeNode(codes[k - 1], codes[k] ?? codes[k - 1], x, y, descending);
        if (cut !== undefined) [x, y] = descending ? [cut, y] : [x, cut];
      }
      // Past k spots, the part may hold the rows of one more.
      if (level === 1 || 16 ** level * (k + 1) <= narrowBatch) break;
      const rows = await ask(x, y, SPOT_MAX + 1, 0, { spot: level - 1, narrowed: true });
      page.spots += rows.length;
      const next = ordered(exact(rows, x, y));
      if (rows.length > SPOT_MAX || next.length === 0) break;
      [level, codes, u, v] = [level - 1, next, x, y];
    }
    await walk(x, y, 0, narrowBatch, true);
    if (found.length >= need) return;
    // The rest of [u, v], then of [a, b], each with the spots known there.
    const rest = async (p: bigint, q: bigint, those: { level: number; codes: bigint[] } | undefined) => {
      if (p <= q && found.length < need) await spotted(p, q, those === undefined ? undefined : { level: those.level, codes: those.codes.filter((code) => p <= code && code <= q) });
    };
    await (descending ? rest(u, x - 1n, { level, codes }) : rest(y + 1n, v, { level, codes }));
    await (descending ? rest(a, u - 1n, known) : rest(v + 1n, b, known));
  };
  /**
   * Pieces in order, halved: the rows of a half at once when they are few,
   * none at all when it is empty, which skips its pieces in one query
   * instead of one each (data often sits in one or two of a node's 16
   * children). `asked`: the caller already knows the whole is too large;
   * `close`: the pieces split a narrowed part or a rung, as walk()'s.
   */
  const walkPieces = async (pieces: [bigint, bigint][], asked = true, close = false): Promise<void> => {
    if (found.length >= need) return;
    if (pieces.length === 1) return walk(pieces[0][0], pieces[0][1], 0, batch, close);
    if (asked) {
      const [x, y] = span(pieces);
      const rows = await ask(x, y, batch + 1, 0, { narrowed: close });
      if (rows.length === 0) return;
      if (rows.length <= batch) return take(rows, x, y);
      page.read += rows.length;
    }
    const half = pieces.length >> 1;
    await walkPieces(pieces.slice(0, half), true, close);
    await walkPieces(pieces.slice(half), true, close);
  };
  /**
   * The range from its near end, so that a page there reads the rows near
   * it rather than a sample of the whole range: FTS5 and FULLTEXT read
   * every row a query matches before they sort and limit, so a query costs
   * what its range holds. When the near end is a bound inside the type's
   * values (the page after a value), the rest of its node at each depth of
   * RUNGS comes first, a rung at a time; then the pieces where the range
   * branches, one, then one, two, four… (an exponential search). Each part
   * is walked. A page at the end costs a few queries that find nothing
   * (docs/search.md, "Ranges at 100,000 rows").
   */
  const gallop = async (a: bigint, b: bigint): Promise<void> => {
    // Cut where the type's values branch (a date's two pieces, not sixteen),
    // then out to the range's own ends: codes past the type's values hold
    // no row, and a whole node of the tree is one token where a cut one is
    // dozens.
    const pieces = split(a > first ? a : first, b < last ? b : last);
    [pieces[0][0], pieces[pieces.length - 1][1]] = [a, b];
    if (descending) pieces.reverse();
    if (descending ? b < last : a > first) {
      let [x, y] = pieces[0];
      for (const depth of RUNGS) {
        const [start, end] = nodeOf(descending ? b : a, depth);
        // A rung that reaches the piece's far end: the rest of the piece is walked below.
        if (descending ? start <= x : end >= y) break;
        // Two depths whose nodes end alike (the bound's digit there is the last or first): nothing between them to ask.
        if (descending ? start > y : end < x) continue;
        await (descending ? walk(start, y, 0, narrowBatch, true) : walk(x, end, 0, narrowBatch, true));
        [x, y] = descending ? [x, start - 1n] : [end + 1n, y];
        if (found.length >= need) return;
      }
      pieces[0] = [x, y];
    }
    if (spots && a !== b) {
      // The pieces before the first spot's are likely few rows (no spot of
      // the census's level stands among them): one query for them all, not
      // one per group. From that piece on, the spots narrow.
      const all = await spotCensus();
      const [x, y] = span(pieces);
      const spot = all?.codes.filter((code) => x <= code && code <= y).sort(inOrder)[0];
      if (spot !== undefined) {
        const at = pieces.findIndex(([p, q]) => p <= spot && spot <= q);
        if (at > 0) await walk(...span(pieces.slice(0, at)));
        if (found.length < need) await spotted(...span(pieces.slice(at)));
        return;
      }
    }
    for (let at = 0, size = 1; at < pieces.length && found.length < need; at += size, size = at) {
      const [x, y] = span(pieces.slice(at, at + size));
      await sampled(x, y);
    }
  };
  // A range past the type's values holds no row: no query.
  if (lo <= hi && lo <= last && hi >= first) await gallop(lo, hi);
  page.rows = found.slice(offset, need);
  page.failures = failed.list();
  return page;
}
