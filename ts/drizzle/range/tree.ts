// The range index's tree (docs/search.md, "Ranges and order"): 64-bit codes
// are the leaves of a 16-ary tree; a node at depth d (1 to 16) holds the
// codes that share their top 4d bits. A value stores its path; a range
// looks up nodes that cover it; an ordered page splits a range along the
// tree. Nodes go to rangeTokens() as 9 bytes each (crates/core/src/search/range.rs).

export const DEPTH = 16;
const BITS = 4;
const U64 = (1n << 64n) - 1n;

/** The first code of the depth-`depth` node holding `code`. */
const floor = (code: bigint, depth: number): bigint => code & ~((1n << BigInt(64 - BITS * depth)) - 1n) & U64;
/** The last code of the depth-`depth` node starting at `start`. */
const ceil = (start: bigint, depth: number): bigint => start | ((1n << BigInt(64 - BITS * depth)) - 1n);

/** Nodes as rangeTokens() reads them: prefix length in bits, then the prefix, big-endian. */
function encode(nodes: readonly (readonly [number, bigint])[]): Buffer {
  const out = Buffer.alloc(nodes.length * 9);
  nodes.forEach(([depth, start], i) => {
    out[i * 9] = depth * BITS;
    out.writeBigUInt64BE(start, i * 9 + 1);
  });
  return out;
}

/** The 16 nodes holding `code`, from the root's children down to the code itself. */
export function pathNodes(code: bigint): Buffer {
  return encode(Array.from({ length: DEPTH }, (_, i) => [i + 1, floor(code, i + 1)] as const));
}

/**
 * Nodes whose union holds every code of [lo, hi] and, when the exact cover
 * needs more than `max` nodes, a little more: the deepest nodes are replaced
 * by their parents until at most `max` remain. What the extra codes bring
 * in, the exact test removes.
 */
export function coverNodes(lo: bigint, hi: bigint, max: number): Buffer {
  const nodes: [number, bigint][] = [];
  // The exact cover: the largest nodes inside [lo, hi], found by walking down the two boundary paths.
  const visit = (depth: number, start: bigint) => {
    const end = ceil(start, depth);
    if (end < lo || start > hi) return;
    if (depth > 0 && lo <= start && end <= hi) {
      nodes.push([depth, start]);
      return;
    }
    const width = 1n << BigInt(64 - BITS * (depth + 1));
    for (let digit = 0n; digit < 16n; digit++) visit(depth + 1, start + digit * width);
  };
  visit(0, 0n);
  let deepest = Math.max(...nodes.map(([d]) => d));
  while (nodes.length > max && deepest > 1) {
    const parents = new Map<bigint, [number, bigint]>();
    for (const [depth, start] of nodes) {
      const node: [number, bigint] = depth === deepest ? [depth - 1, floor(start, depth - 1)] : [depth, start];
      // Distinct starts at one depth are distinct nodes; a parent and a shallower node never share a start here.
      parents.set((BigInt(node[0]) << 64n) | node[1], node);
    }
    nodes.splice(0, nodes.length, ...parents.values());
    deepest--;
  }
  return encode(nodes);
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

export const MIN_CODE = 0n;
export const MAX_CODE = U64;
