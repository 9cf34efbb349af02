//! Sorting a value's tokens. A stored set is sorted and distinct, so that
//! its order says nothing about where in the text a gram was, and so that
//! equal sets are equal bytes.
//!
//! Tokens are a keyed PRF's output, uniform over 64 bits: a counting pass
//! on their top bits, with at least as many buckets as tokens, leaves most
//! buckets a token or none to sort, where a comparison sort mispredicts a
//! branch on every other comparison of random keys (measured against
//! `sort_unstable` in docs/performance.md, "Search tokens, per value").
//! One pass of insertion then finishes the order within the buckets; past
//! a budget of moves, which only tokens sharing their top bits exceed
//! (nobody without the key can choose them), each bucket is sorted with
//! `sort_unstable` instead, so no set costs much more than one sort.

use super::tokens::Token;

/// Below this many tokens the counting pass costs more than it saves.
const COUNTING_FROM: usize = 64;

/// Moves a token, on average, that one pass of insertion may make before
/// the buckets are sorted one by one instead, besides one per token a
/// bucket holds on average (past 2^16 tokens, where the buckets stop
/// growing in number).
const MOVES_PER_TOKEN: usize = 4;

/// Sorts `tokens` and drops repeats.
pub fn sort_distinct(tokens: &mut Vec<Token>) {
    let n = tokens.len();
    // Past u32::MAX tokens the counts below would wrap; no string has that many.
    if n < COUNTING_FROM || u32::try_from(n).is_err() {
        tokens.sort_unstable();
        tokens.dedup();
        return;
    }
    let (mut sorted, ends, bits) = into_buckets(tokens);
    // The buckets are in order, so what is left is within each: one pass
    // of insertion over the whole array moves a token past the few larger
    // ones of its own bucket only (repeats of a word do not move past each
    // other), where a call a bucket (most hold one token or none) cost more
    // than the sorting (docs/performance.md, "Search tokens, per value").
    // Tokens that share their top bits, which nobody without the key can
    // choose, would make it quadratic: past a budget of moves, the buckets
    // are sorted one by one with `sort_unstable`, so no set costs much more
    // than one sort.
    if !insertion_sort(&mut sorted, budget(n, bits)) {
        let mut start = 0;
        for &end in &ends {
            sorted[start..end as usize].sort_unstable();
            start = end as usize;
        }
    }
    *tokens = sorted;
    tokens.dedup();
}

/// `tokens` (at least two, at most `u32::MAX`) in order of their top
/// `bits` bits, with where each bucket ends; `bits` is ceil(log2 n), up to
/// 16: at most one token a bucket on average, more only past 2^16 tokens.
fn into_buckets(tokens: &[Token]) -> (Vec<Token>, Vec<u32>, u32) {
    let n = tokens.len();
    let bits = (usize::BITS - n.saturating_sub(1).leading_zeros()).min(16);
    let shift = u64::BITS - bits;
    let mut ends = vec![0u32; 1 << bits];
    for &t in tokens {
        ends[bucket(t, shift)] += 1;
    }
    // each bucket's count becomes where it starts
    let mut at = 0;
    for slot in &mut ends {
        (*slot, at) = (at, at + *slot);
    }
    let mut sorted = vec![0; n];
    for &t in tokens {
        let slot = &mut ends[bucket(t, shift)];
        sorted[*slot as usize] = t;
        *slot += 1;
    }
    (sorted, ends, bits)
}

/// The moves one pass of insertion may make over `n` tokens in `2^bits`
/// buckets: uniform tokens, a bucket of k of them, move about k/4 each.
fn budget(n: usize, bits: u32) -> usize {
    n.saturating_mul(MOVES_PER_TOKEN + (n >> bits))
}

/// Sorts `a` by insertion, each element moved down past the larger ones
/// before it, while the moves stay within `budget`: false, with `a` still a
/// permutation of what it held, when they do not.
fn insertion_sort(a: &mut [Token], budget: usize) -> bool {
    let mut moves = 0;
    for i in 1..a.len() {
        let t = a[i];
        let mut j = i;
        while j > 0 && a[j - 1] > t {
            a[j] = a[j - 1];
            j -= 1;
        }
        a[j] = t;
        moves += i - j;
        if moves > budget {
            return false;
        }
    }
    true
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
    use proptest::prelude::*;

    /// Tokens spread over 64 bits, as a keyed PRF's (xorshift64).
    fn xorshift(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

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
        let mut random = || xorshift(&mut x);
        for n in [0, 1, 2, 63, 64, 65, 254, 1000, 70_000] {
            check((0..n).map(|_| random()).collect());
            // repeats, and tokens that all share their top bits
            check((0..n).map(|_| random() % 7).collect());
            check((0..n).map(|_| u64::MAX - random() % 1000).collect());
            check((0..n as u64).rev().collect());
            // uniform tokens, each repeated, as a text's common words are
            let words: Vec<u64> = (0..37).map(|_| random()).collect();
            check((0..n).map(|_| words[(random() % 37) as usize]).collect());
        }
    }

    #[test]
    fn a_texts_tokens_stay_within_the_budget() {
        use super::{budget, insertion_sort, into_buckets};
        // a 4 KB text's words: uniform tokens, some words repeated often
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut random = || xorshift(&mut x);
        for (distinct, repeats) in [(418, 186), (100, 500), (5000, 5000)] {
            let words: Vec<u64> = (0..distinct).map(|_| random()).collect();
            let common = &words[..20];
            let tokens: Vec<u64> = words
                .iter()
                .copied()
                .chain((0..repeats).map(|i| common[i % common.len()]))
                .collect();
            let (mut sorted, _, bits) = into_buckets(&tokens);
            assert!(
                insertion_sort(&mut sorted, budget(tokens.len(), bits)),
                "{distinct} words, {repeats} repeats"
            );
        }
    }

    #[test]
    fn full_buckets_are_sorted_one_by_one() {
        use super::{budget, insertion_sort, into_buckets};
        // four buckets (the top two bits), each 250 tokens in falling order
        let tokens: Vec<u64> = (0..1000u64).map(|i| (i % 4) << 62 | (1000 - i)).collect();
        let (mut sorted, ends, bits) = into_buckets(&tokens);
        let mut edges = ends.clone();
        edges.dedup();
        assert_eq!(edges, [250, 500, 750, 1000], "four full buckets");
        assert!(!insertion_sort(&mut sorted, budget(tokens.len(), bits)));
        check(tokens);
    }

    #[test]
    fn insertion_stops_past_its_budget_and_keeps_every_token() {
        use super::insertion_sort;
        // reversed: every token moves past all the ones before it
        let mut tokens: Vec<u64> = (0..1000).rev().collect();
        assert!(!insertion_sort(&mut tokens, 4 * 1000));
        tokens.sort_unstable();
        assert_eq!(tokens, (0..1000).collect::<Vec<_>>());
        let mut near: Vec<u64> = (0..1000).map(|i| i ^ 1).collect();
        assert!(insertion_sort(&mut near, 4 * 1000));
        assert_eq!(near, (0..1000).collect::<Vec<_>>());
    }

    proptest! {
        // any set, with the top bits a test shares between tokens (none to
        // all 64), and repeats drawn from the set itself
        #[test]
        fn any_tokens_come_out_sorted_and_distinct(
            tokens in proptest::collection::vec(any::<u64>(), 0..600),
            shared in 0u32..=64,
            repeats in proptest::collection::vec(any::<prop::sample::Index>(), 0..200),
        ) {
            let top = tokens.first().copied().unwrap_or(0);
            let keep = u64::MAX.checked_shr(shared).unwrap_or(0);
            let mut tokens: Vec<u64> = tokens.iter().map(|t| (top & !keep) | (t & keep)).collect();
            if !tokens.is_empty() {
                let more: Vec<u64> = repeats.iter().map(|i| tokens[i.index(tokens.len())]).collect();
                tokens.extend(more);
            }
            check(tokens);
        }
    }
}
