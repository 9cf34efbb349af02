//! Range tokens (docs/search.md, "Ranges and order"). A value of a range
//! column is a 64-bit code whose order is the values' order (the package
//! makes it, `ts/drizzle/range/encoding.ts`). The codes are the leaves of a
//! 16-ary tree: a node at depth `d` (1 to 16) is the set of codes sharing
//! their top `4d` bits. A value stores the token of each of the 16 nodes on
//! its path; a range query looks up the tokens of nodes that cover the range
//! (`ts/drizzle/range/tree.ts` chooses them). The tree lives in the package,
//! shared by both backends; this module only turns nodes into tokens.
//!
//! A node is 9 bytes: its prefix length in bits (4, 8, …, 64), then the
//! code with every bit below the prefix cleared, big-endian. Its token is
//! `AES-CMAC(column key, 'r' ‖ node)` cut to 8 bytes (search/tokens.rs),
//! so range tokens never equal a text column's tokens, and, as those, are
//! bound to `tenant:collection:field` and the secret.
//!
//! A node of a *spot* tree (a sparse sample of the rows that an ordered
//! page asks first to learn where the values lie) sets the first byte's
//! top bit: `0x80 | (level - 1) << 4 | (bits / 4 - 1)`, levels 1 to 8, then
//! the prefix as above. No plain node's first byte reaches 0x80, so the two
//! never share a token.

use super::tokens::{ColumnTokens, Kind, Token};
use crate::error::{AleError, Result};

/// Bytes of a node.
pub const NODE_LEN: usize = 9;
/// The most nodes one call turns into tokens: a value has 16, and a query
/// is cut to far fewer; anything larger is a caller's mistake.
pub const MAX_NODES: usize = 1024;

/// The prefix length in bits of a node's first byte: itself for a plain
/// node, its low nibble's for a spot tree's; 0 (refused) for a byte that is
/// neither.
fn prefix_bits(first: u8) -> u32 {
    if first & 0x80 == 0 {
        u32::from(first)
    } else {
        (u32::from(first & 0x0f) + 1) * 4
    }
}

/// Checks that `nodes` is a whole number of well-formed nodes, at most
/// [`MAX_NODES`]: a prefix length that is a multiple of 4 from 4 to 64 (or
/// a spot tree's first byte), and no bit set below it. `ALE_INVALID_INPUT`
/// otherwise.
pub fn check_nodes(nodes: &[u8]) -> Result<()> {
    if nodes.len() % NODE_LEN != 0 || nodes.len() / NODE_LEN > MAX_NODES {
        return Err(AleError::InvalidInput(format!(
            "nodes must be whole nodes of {NODE_LEN} bytes, at most {MAX_NODES}"
        )));
    }
    for node in nodes.chunks_exact(NODE_LEN) {
        let bits = prefix_bits(node[0]);
        let mut prefix = [0u8; 8];
        prefix.copy_from_slice(&node[1..]);
        let code = u64::from_be_bytes(prefix);
        let below = if bits >= 64 { 0 } else { u64::MAX >> bits };
        if bits == 0 || bits > 64 || bits % 4 != 0 || code & below != 0 {
            return Err(AleError::InvalidInput(
                "a node is a prefix length of 4 to 64 bits, a multiple of 4 (or a spot tree's level and length), and the code with the bits below it cleared".into(),
            ));
        }
    }
    Ok(())
}

/// The tokens of `nodes` (checked first), sorted and distinct, into `out`
/// (replacing its contents).
pub fn range_tokens(column: &ColumnTokens, nodes: &[u8], out: &mut Vec<Token>) -> Result<()> {
    check_nodes(nodes)?;
    out.clear();
    column.tokens_into(Kind::Range, nodes.chunks_exact(NODE_LEN), out);
    out.sort_unstable();
    out.dedup();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{check_nodes, range_tokens, NODE_LEN};
    use crate::context::Context;
    use crate::search::tokens::{ColumnTokens, Kind};

    fn node(bits: u8, code: u64) -> Vec<u8> {
        let mut out = vec![bits];
        out.extend_from_slice(&code.to_be_bytes());
        out
    }

    #[test]
    fn a_node_is_a_range_gram() {
        let column = ColumnTokens::new(&[3; 32], &Context::new("t", "c", "f").expect("valid"));
        let n = node(8, 0xab00_0000_0000_0000);
        let mut out = Vec::new();
        range_tokens(&column, &n, &mut out).expect("well-formed");
        assert_eq!(out, vec![column.token(Kind::Range, &n)]);
        // the same bytes as a word are another token
        assert_ne!(out[0], column.token(Kind::Word, &n));
    }

    #[test]
    fn a_spot_node_is_not_its_plain_node() {
        let column = ColumnTokens::new(&[3; 32], &Context::new("t", "c", "f").expect("valid"));
        let (plain, spot) = (
            node(8, 0xab00_0000_0000_0000),
            node(0x81, 0xab00_0000_0000_0000),
        );
        let mut out = Vec::new();
        range_tokens(&column, &[plain.clone(), spot.clone()].concat(), &mut out)
            .expect("well-formed");
        assert_eq!(out.len(), 2);
        assert_ne!(
            column.token(Kind::Range, &plain),
            column.token(Kind::Range, &spot)
        );
        // another level of the same node is another token
        assert_ne!(
            column.token(Kind::Range, &spot),
            column.token(Kind::Range, &node(0x91, 0xab00_0000_0000_0000))
        );
    }

    #[test]
    fn malformed_nodes_are_refused() {
        for bad in [
            node(0, 0),
            node(6, 0),
            node(68, 0),
            node(8, 0x00ff_0000_0000_0000),
            node(60, 1),
            vec![4; NODE_LEN - 1],
        ] {
            assert!(check_nodes(&bad).is_err(), "{bad:?}");
        }
        assert!(check_nodes(&node(64, u64::MAX)).is_ok());
        assert!(check_nodes(&node(4, 0xf000_0000_0000_0000)).is_ok());
        assert!(check_nodes(&[]).is_ok());
        // spot trees: level 1 at 4 bits, level 8 at 64 bits; the prefix rule holds there too
        assert!(check_nodes(&node(0x80, 0xf000_0000_0000_0000)).is_ok());
        assert!(check_nodes(&node(0xff, u64::MAX)).is_ok());
        assert!(check_nodes(&node(0x80, 0x0800_0000_0000_0000)).is_err());
        assert!(check_nodes(&node(0x9e, 1)).is_err());
        assert!(check_nodes(&vec![0; NODE_LEN * 1025]).is_err());
    }
}
