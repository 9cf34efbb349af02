// Range tokens as crates/core/src/search/range.rs makes them: each node of
// the range tree (9 bytes: a prefix length in bits, or a spot tree's level
// and length from 0x80 up, then the prefix) is a gram of kind 'r', and the
// tokens come back sorted and distinct.
import { invalidInput } from '../errors.js';
import type { Ring } from '../ring.js';
import { sortedSet } from './index.js';
import { ColumnTokens } from './tokens.js';

export const NODE_LEN = 9;
export const MAX_NODES = 1024;

/** The nodes of `bytes`, checked as the core checks them. */
function readNodes(bytes: Uint8Array): Uint8Array[] {
  if (bytes.length % NODE_LEN !== 0 || bytes.length / NODE_LEN > MAX_NODES) {
    throw invalidInput(`nodes must be whole nodes of ${NODE_LEN} bytes, at most ${MAX_NODES}`);
  }
  const nodes: Uint8Array[] = [];
  // No node (an empty or a detached array) reads nothing: a DataView of a detached buffer would throw.
  if (bytes.length === 0) return nodes;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let at = 0; at < bytes.length; at += NODE_LEN) {
    // A spot tree's node keeps its prefix length in the low nibble (crates/core/src/search/range.rs).
    const bits = bytes[at] & 0x80 ? ((bytes[at] & 0x0f) + 1) * 4 : bytes[at];
    const code = view.getBigUint64(at + 1);
    const below = bits >= 64 ? 0n : (1n << BigInt(64 - bits)) - 1n;
    if (bits === 0 || bits > 64 || bits % 4 !== 0 || (code & below) !== 0n) {
      throw invalidInput("a node is a prefix length of 4 to 64 bits, a multiple of 4 (or a spot tree's level and length), and the code with the bits below it cleared");
    }
    nodes.push(bytes.subarray(at, at + NODE_LEN));
  }
  return nodes;
}

/** The tokens of `nodes` in the column `aad`, under secret `secret`. */
export function rangeTokensWith(ring: Ring, nodes: Uint8Array, aad: string, secret: number): Buffer {
  const grams = readNodes(nodes);
  return ring.withIndexKey(aad, secret, (key) => sortedSet([new ColumnTokens(key, aad).tokens('range', grams)]));
}
