//! Range-tree nodes as `rangeTokens` reads them (search/range.rs), on
//! arbitrary bytes. Must never panic; must accept exactly the well-formed
//! nodes (prefix length a multiple of 4 from 4 to 64, or a spot tree's
//! first byte of 0x80 and up, whose low nibble is the length in 4-bit
//! digits less one; no bit set below the prefix; at most 1,024); and must
//! give, for accepted nodes, each node's own token (the one
//! `ColumnTokens::token` gives it alone), sorted and distinct.
#![no_main]

use ale_core::search::range::{check_nodes, range_tokens, MAX_NODES, NODE_LEN};
use ale_core::search::tokens::{ColumnTokens, Kind};
use ale_core::Context;
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

fn column() -> &'static ColumnTokens {
    static COLUMN: OnceLock<ColumnTokens> = OnceLock::new();
    COLUMN.get_or_init(|| {
        ColumnTokens::new(&[0x3C; 32], &Context::new("t", "c", "f").expect("valid"))
    })
}

/// The definition, written out: what `check_nodes` must accept.
fn well_formed(nodes: &[u8]) -> bool {
    nodes.len().is_multiple_of(NODE_LEN)
        && nodes.len() / NODE_LEN <= MAX_NODES
        && nodes.chunks_exact(NODE_LEN).all(|node| {
            // A spot tree's node: levels 1 to 8 in bits 4 to 6 (any is well formed), 4 to 64 bits in the low nibble.
            let bits = if node[0] >= 0x80 {
                4 * (u32::from(node[0] % 16) + 1)
            } else {
                u32::from(node[0])
            };
            let code = u64::from_be_bytes(node[1..].try_into().expect("8 bytes"));
            (4..=64).contains(&bits) && bits.is_multiple_of(4) && (bits == 64 || code << bits == 0)
        })
}

fuzz_target!(|data: &[u8]| {
    assert_eq!(check_nodes(data).is_ok(), well_formed(data));
    let mut out = Vec::new();
    match range_tokens(column(), data, &mut out) {
        Err(_) => assert!(!well_formed(data)),
        Ok(()) => {
            let mut expected: Vec<u64> = data
                .chunks_exact(NODE_LEN)
                .map(|node| column().token(Kind::Range, node))
                .collect();
            expected.sort_unstable();
            expected.dedup();
            assert_eq!(out, expected);
        }
    }
});
