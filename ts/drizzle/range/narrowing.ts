// How orderedPage() narrows a part from a sample (range/ordered.ts): in the
// page's order (`descending` or not), whether a sample in fetch's order runs
// against it, and where a sample's edge rounds out to a whole node.
import { DEPTH, nodeOf } from './tree.js';

/**
 * Whether fetch's order runs against the page's in `kept`, a sample in
 * fetch's order: nine in ten of its neighbours that differ, and at least
 * 16 of them, are in the other order (ids that grow with the values,
 * newest first). The narrowing then keeps nearly all of the part, which a
 * query that collects the rows' keys first (SearchSql.narrowed) would
 * read whole, where the database's walk in fetch's order stops at the
 * batch. Fewer than 16 changes of value (values that tie in long runs)
 * show no order either way.
 */
export function against(kept: readonly (readonly [bigint, unknown])[], descending: boolean): boolean {
  let [along, counter] = [0, 0];
  for (let i = 1; i < kept.length; i++) {
    const [x, y] = [kept[i - 1][0], kept[i][0]];
    if (x !== y) (x < y) !== descending ? along++ : counter++;
  }
  return counter >= 16 && counter >= 9 * along;
}

/**
 * Where a sample narrows [a, b] to, past its `want`-th code `edge`: out to
 * the far end of the largest node of the tree around it that does not
 * pass `limit`, a later code of the sample, so the part holds about twice
 * the rows needed at most (more where rows tie at `limit`) and its cover
 * is a few tokens a depth, where a cut at `edge` itself costs up to
 * fifteen (an FTS5 query pays a lookup for each). Undefined when that
 * does not narrow the part.
 */
export function wholeNode(edge: bigint, limit: bigint, a: bigint, b: bigint, descending: boolean): bigint | undefined {
  for (let depth = 0; depth <= DEPTH; depth++) {
    const [start, end] = nodeOf(edge, depth);
    const cut = descending ? start : end;
    if (descending ? cut >= limit && cut > a : cut <= limit && cut < b) return cut;
  }
  return undefined;
}
