// The range index's tree (docs/search.md, "Ranges and order"): 64-bit codes
// are the leaves of a 16-ary tree; a node at depth d (1 to 16) holds the
// codes that share their top 4d bits. A value stores its path; a range
// looks up nodes that cover it; an ordered page splits a range along the
// tree. Nodes go to rangeTokens() as 9 bytes each (crates/core/src/search/range.rs).

export const DEPTH = 16;
const BITS = 4;
/** Bytes of a node as rangeTokens() reads it. */
export const NODE_LEN = 9;
const U64 = (1n << 64n) - 1n;

/** The first code of the depth-`depth` node holding `code`. */
const floor = (code: bigint, depth: number): bigint => code & ~((1n << BigInt(64 - BITS * depth)) - 1n) & U64;
/** The last code of the depth-`depth` node starting at `start`. */
const ceil = (start: bigint, depth: number): bigint => start | ((1n << BigInt(64 - BITS * depth)) - 1n);

/** Nodes as rangeTokens() reads them: prefix length in bits, then the prefix, big-endian. */
function encode(nodes: readonly (readonly [number, bigint])[]): Buffer {
  const out = Buffer.alloc(nodes.length * NODE_LEN);
  nodes.forEach(([depth, start], i) => {
    out[i * NODE_LEN] = depth * BITS;
    out.writeBigUInt64BE(start, i * NODE_LEN + 1);
  });
  return out;
}

/**
 * The 16 nodes holding `code`, from the root's children down to the code
 * itself: its bytes, written once, each copy cut after its depth's nibbles
 * (byte work; a BigInt per node cost more than the tokens).
 */
export function pathNodes(code: bigint): Buffer {
  const out = Buffer.alloc(DEPTH * 9);
  out.writeBigUInt64BE(code, 1);
  out[0] = BITS;
  out[1] &= 0xf0;
  out.fill(0, 2, 9);
  for (let depth = 2; depth <= DEPTH; depth++) {
    const at = (depth - 1) * 9;
    out[at] = depth * BITS;
    out.writeBigUInt64BE(code, at + 1);
    // The prefix's last byte keeps its high nibble when the depth is odd; every byte after it is cleared.
    const whole = depth >> 1;
    if (depth & 1) out[at + 1 + whole] &= 0xf0;
    out.fill(0, at + 1 + whole + (depth & 1), at + 9);
  }
  return out;
}

/** A range's nodes: a row is in it when its path meets `include` and not `exclude`. */
export interface Cover {
  include: Buffer;
  /** The parts of `include`'s nodes that lie outside the range (empty when the cover is exact). */
  exclude: Buffer;
}

/**
 * The nodes of [lo, hi]: at most `max` nodes whose union holds the range,
 * and, when the exact cover needs more, the exact cover of what their union
 * holds beyond it. The deepest nodes are replaced by their parents until at
 * most `max` remain, so the database looks up few tokens (each costs an
 * index search; on PostgreSQL they decide whether the planner uses the
 * index at all) and removes the excess with a filter on those rows alone.
 */
export function cover(lo: bigint, hi: bigint, max: number): Cover {
  const include = exactNodes(lo, hi);
  if (include.length <= max) return { include: encode(include), exclude: encode([]) };
  let deepest = Math.max(...include.map(([d]) => d));
  while (include.length > max && deepest > 1) {
    const parents = new Map<bigint, [number, bigint]>();
    for (const [depth, start] of include) {
      const node: [number, bigint] = depth === deepest ? [depth - 1, floor(start, depth - 1)] : [depth, start];
      // Distinct starts at one depth are distinct nodes; a parent and a shallower node never share a start here.
      parents.set((BigInt(node[0]) << 64n) | node[1], node);
    }
    include.splice(0, include.length, ...parents.values());
    deepest--;
  }
  const exclude: [number, bigint][] = [];
  for (const [depth, start] of include) {
    const end = ceil(start, depth);
    if (start < lo) exclude.push(...exactNodes(start, lo - 1n));
    if (end > hi) exclude.push(...exactNodes(hi + 1n, end));
  }
  return { include: encode(include), exclude: encode(exclude) };
}

/**
 * The exact cover of [lo, hi]: the largest nodes inside it. From the leaves
 * up, as node numbers at each depth: the nodes at the left end up to a
 * multiple of 16, and at the right end down from one, are taken; what is
 * left between them is whole parents, one depth up. At depth 1 the rest is
 * taken as it is (the root is never a node).
 */
function exactNodes(lo: bigint, hi: bigint): [number, bigint][] {
  const nodes: [number, bigint][] = [];
  let [a, b] = [lo, hi];
  for (let depth = DEPTH; depth >= 1 && a <= b; depth--) {
    const shift = BigInt(64 - BITS * depth);
    if (depth === 1) {
      for (let n = a; n <= b; n++) nodes.push([1, n << shift]);
      break;
    }
    while ((a & 15n) !== 0n && a <= b) nodes.push([depth, a++ << shift]);
    while ((b & 15n) !== 15n && a <= b) nodes.push([depth, b-- << shift]);
    // All taken (shifted, a past b could meet it again).
    if (a > b) break;
    a >>= 4n;
    b >>= 4n;
  }
  return nodes;
}

/**
 * [lo, hi] cut where the tree branches below their common ancestor: the
 * pieces, in ascending order, each inside one child node. One piece when
 * lo === hi.
 */
export function split(lo: bigint, hi: bigint): [bigint, bigint][] {
  if (lo === hi) return [[lo, hi]];
  let depth = 1;
  while (floor(lo, depth) === floor(hi, depth)) depth++;
  const pieces: [bigint, bigint][] = [];
  for (let start = floor(lo, depth); start <= hi; start = ceil(start, depth) + 1n) {
    pieces.push([start < lo ? lo : start, ceil(start, depth) > hi ? hi : ceil(start, depth)]);
    if (ceil(start, depth) === U64) break;
  }
  return pieces;
}

/** The first and last codes of the depth-`depth` node holding `code`. */
export function nodeOf(code: bigint, depth: number): [bigint, bigint] {
  const start = floor(code, depth);
  return [start, ceil(start, depth)];
}

/** The most nodes an exact cover has: at each depth from 16 to 2, up to 15 at either end of the range (the rest is whole parents), and at depth 1 up to all 16. */
export const EXACT_COVER_MAX = 2 * 15 * (DEPTH - 1) + 16;

export const MIN_CODE = 0n;
export const MAX_CODE = U64;
