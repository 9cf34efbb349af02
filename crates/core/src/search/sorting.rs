//! Sorting a value's tokens. A stored set is sorted and distinct, so that
//! its order says nothing about where in the text a gram was, and so that
//! equal sets are equal bytes.
//!
//! Tokens are a keyed PRF's output, uniform over 64 bits: a counting pass
//! on their top bits, with about one bucket per token, leaves each bucket a
//! token or two to sort, where a comparison sort mispredicts a branch on
//! every other comparison of random keys (measured against `sort_unstable`
//! in docs/performance.md, "Search tokens, per value"). Each bucket is sorted with
//! `sort_unstable`, so even tokens that all share their top bits (which
//! nobody without the key can choose) cost no more than one sort.

use super::tokens::Token;

/// Below this many tokens the counting pass costs more than it saves.
const COUNTING_FROM: usize = 64;

/// Sorts `tokens` and drops repeats.
pub fn sort_distinct(tokens: &mut Vec<Token>) {
    let n = tokens.len();
    // Past u32::MAX tokens the counts below would wrap; no string has that many.
    if n < COUNTING_FROM || u32::try_from(n).is_err() {
        tokens.sort_unstable();
        tokens.dedup();
        return;
    }
    // ceil(log2 n) bits: between one and two tokens a bucket, on average
    let bits = (usize::BITS - (n - 1).leading_zeros()).min(16);
    let shift = u64::BITS - bits;
    let mut starts = vec![0u32; (1 << bits) + 1];
    for &t in tokens.iter() {
        starts[bucket(t, shift) + 1] += 1;
    }
    for i in 1..starts.len() {
        starts[i] += starts[i - 1];
    }
    let mut sorted = vec![0; n];
    let mut next = starts.clone();
    for &t in tokens.iter() {
        let slot = &mut next[bucket(t, shift)];
        sorted[*slot as usize] = t;
        *slot += 1;
    }
    for bucket in starts.windows(2) {
        sorted[bucket[0] as usize..bucket[1] as usize].sort_unstable();
    }
    *tokens = sorted;
    tokens.dedup();
}

/// The bucket of `t`: its top `64 - shift` bits.
#[inline]
#[allow(clippy::cast_possible_truncation)] // shift is at least 48: 16 bits at most
fn bucket(t: Token, shift: u32) -> usize {
    (t >> shift) as usize
}

#[cfg(test)]
mod tests {
    use super::sort_distinct;

    fn check(mut tokens: Vec<u64>) {
        let mut expected = tokens.clone();
        expected.sort_unstable();
        expected.dedup();
        sort_distinct(&mut tokens);
        assert_eq!(tokens, expected);
    }

    #[test]
    fn sorts_and_drops_repeats_whatever_the_spread() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut random = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for n in [0, 1, 2, 63, 64, 65, 254, 1000, 70_000] {
            check((0..n).map(|_| random()).collect());
            // repeats, and tokens that all share their top bits
            check((0..n).map(|_| random() % 7).collect());
            check((0..n).map(|_| u64::MAX - random() % 1000).collect());
            check((0..n as u64).rev().collect());
        }
    }
}
