// The spot trees of a range index (docs/search.md, "Spots first, on
// PostgreSQL and MariaDB", and the Spots paragraph of "How the index
// works"): a sparse sample of the rows, chosen by their values, each sampled
// row storing its path again in the tree of its level. A level-j row is
// one in 16^j; levels nest (a level-2 row is a level-1 row too). An ordered
// page asks a level's tokens over a range to learn where the range's values
// lie at the cost of the few rows it samples, where GIN and FULLTEXT would
// read every row of the range first.
//
// Which rows: those whose 16 path tokens, XORed, begin with j zero nibbles,
// a keyed function of the value. Rows of one value are all sampled or none,
// so the spots show nothing a snapshot's equal path tokens do not already.

import { NODE_LEN } from './tree.js';

/** The levels a row may store: 1 row in 16 up to 1 in 16^6 (about 16.8 million). */
export const SPOT_LEVELS = 6;

/** The level of a value from its path tokens (8 bytes each, any order): 0 when it is no spot. */
export function spotLevel(tokens: Buffer): number {
  let h = 0;
  for (let at = 0; at < tokens.length; at += 8) h ^= tokens.readUInt32BE(at);
  return Math.min(SPOT_LEVELS, Math.clz32(h) >> 2);
}

/** The first byte of a node (prefix length `bits`) in the level-`level` spot tree (crates/core/src/search/range.rs). */
const spotByte = (bits: number, level: number) => 0x80 | ((level - 1) << 4) | (bits / 4 - 1);

/** `nodes` (range/tree.ts's encoding) as the nodes of the level-`level` spot tree: the first byte changed, the prefix kept. */
export function spotNodes(nodes: Buffer, level: number): Buffer {
  const out = Buffer.from(nodes);
  for (let at = 0; at < out.length; at += NODE_LEN) out[at] = spotByte(out[at], level);
  return out;
}

/** A value's path (range/tree.ts's pathNodes), then the same path in each spot tree from level 1 to `level`, in one Buffer (the caller clears it). */
export function withSpots(path: Buffer, level: number): Buffer {
  const out = Buffer.alloc(path.length * (level + 1));
  for (let j = 0; j <= level; j++) path.copy(out, j * path.length);
  for (let at = path.length; at < out.length; at += NODE_LEN) out[at] = spotByte(out[at], Math.floor(at / path.length));
  return out;
}
