//! A value's search tokens as the text SQLite FTS5 and MySQL FULLTEXT index:
//! each token's first 30 bits as 6 base32hex digits (RFC 4648's
//! extended-hex alphabet, lowercase: `0`–`9`, `a`–`v`, in the order of
//! their values, so that words sort as their tokens do),
//! one space between two, a word that repeats the one before left out
//! (docs/search.md, "Per dialect"). The Drizzle columns of those dialects
//! store this text on every write of a searchable column; it is made here,
//! with the tokens, so that JS needs no loop over their bytes
//! (docs/performance.md, "Search tokens, per value").
//!
//! Why 30 bits and not the token's 64: FTS5's cost on a write grows with
//! the bytes of the words it indexes, and at 16 hex digits a token the 4 KB
//! write gate could not be met (docs/search.md, "Shorter words"). Two grams
//! then share a word with probability 2^-30: a chance candidate, which the
//! exact test removes, as it removes the structural ones. PostgreSQL keeps
//! the 64 bits (a `bigint[]`).

use super::tokens::Token;

/// Digits a word.
const WORD_LEN: usize = 6;

/// The bits of a token that its word keeps (its most significant): five a
/// digit.
const WORD_BITS: u32 = 30;
const _: () = assert!(WORD_BITS as usize == 5 * WORD_LEN);

/// The most bytes [`write_words`] writes for `count` tokens (fewer when
/// two tokens share a word).
pub fn words_len(count: usize) -> usize {
    // a word a token and a space between two
    (count * (WORD_LEN + 1)).saturating_sub(1)
}

/// The word of `token`: the digits of its first 30 bits, most significant
/// first. Branch-free, a few operations on one 64-bit word instead of a
/// loop of six lookups (docs/performance.md, "Search tokens, per value").
fn word(token: Token) -> [u8; WORD_LEN] {
    let x = token >> (Token::BITS - WORD_BITS);
    // three groups of 10 bits, the first in the lowest of three 16-bit lanes
    let groups = ((x >> 20) & 0x3ff) | (((x >> 10) & 0x3ff) << 16) | ((x & 0x3ff) << 32);
    // each group's two digits, the first in the lower byte: six values of 0 to 31
    let digits = ((groups >> 5) & 0x0000_001f_001f_001f) | ((groups & 0x0000_001f_001f_001f) << 8);
    // 1 in each byte whose value is 10 or more (at most 31 + 118 < 256: no carry between bytes)
    let letters = ((digits + 0x0000_7676_7676_7676) >> 7) & 0x0000_0101_0101_0101;
    // '0' + value, and 'a' - '0' - 10 more for a letter
    let chars = digits + 0x0000_3030_3030_3030 + letters * u64::from(b'a' - b'0' - 10);
    let bytes = chars.to_le_bytes();
    [bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5]]
}

/// Appends the words of `tokens` (sorted, as a value's are) to `out`,
/// separated by single spaces; a word equal to the one before is left out,
/// so that sorted, distinct tokens give distinct words.
pub fn write_words(tokens: &[Token], out: &mut Vec<u8>) {
    // `out` may be a result buffer that held a plaintext: grown only by a
    // step that wipes the allocation it leaves.
    crate::scratch::reserve(out, words_len(tokens.len()));
    // the bits of the last word written
    let mut last: Option<Token> = None;
    for &token in tokens {
        let bits = token >> (Token::BITS - WORD_BITS);
        if last == Some(bits) {
            continue;
        }
        if last.is_some() {
            out.push(b' ');
        }
        out.extend_from_slice(&word(token));
        last = Some(bits);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tokens spread over 64 bits (xorshift64).
    fn xorshift(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    /// The words as written independently: the token's top 30 bits as a
    /// number in base 32, six digits, leading zeros kept.
    fn expected(tokens: &[Token]) -> String {
        let mut words: Vec<String> = Vec::new();
        for t in tokens {
            let mut n = t >> 34;
            let mut digits = Vec::new();
            for _ in 0..6 {
                digits.push(char::from_digit((n % 32) as u32, 32).unwrap_or('?'));
                n /= 32;
            }
            let w: String = digits.into_iter().rev().collect();
            if words.last() != Some(&w) {
                words.push(w);
            }
        }
        words.join(" ")
    }

    #[test]
    fn every_digit_at_every_place_is_its_value() {
        for place in 0..6 {
            for digit in 0..32u64 {
                let token = digit << (34 + 5 * place);
                let mut out = Vec::new();
                write_words(&[token], &mut out);
                assert_eq!(out, expected(&[token]).as_bytes(), "{token:x}");
            }
        }
        // the 34 bits past the word change nothing
        assert_eq!(word(0x0000_0003_ffff_ffff), *b"000000");
        assert_eq!(word(u64::MAX), *b"vvvvvv");
    }

    #[test]
    fn words_sort_as_their_tokens() {
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut tokens: Vec<Token> = (0..10_000).map(|_| xorshift(&mut state)).collect();
        tokens.sort_unstable();
        for pair in tokens.windows(2) {
            assert!(
                word(pair[0]) <= word(pair[1]),
                "{:x} {:x}",
                pair[0],
                pair[1]
            );
        }
    }

    #[test]
    fn tokens_are_words_one_space_apart() {
        let mut out = Vec::new();
        write_words(&[], &mut out);
        assert!(out.is_empty());
        assert_eq!(words_len(0), 0);
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        for n in [1usize, 2, 3, 17, 400] {
            let mut tokens: Vec<Token> = (0..n)
                .map(|_| xorshift(&mut state))
                .chain([0, u64::MAX])
                .collect();
            tokens.sort_unstable();
            let mut out = b"kept".to_vec();
            write_words(&tokens, &mut out);
            assert_eq!(&out[..4], b"kept", "appends");
            assert_eq!(&out[4..], expected(&tokens).as_bytes());
            assert_eq!(out.len() - 4, words_len(tokens.len()));
        }
    }

    #[test]
    fn tokens_that_share_a_word_write_it_once() {
        // the same first 30 bits, the rest different
        let tokens = [
            5u64 << 34,
            (5u64 << 34) | 1,
            (5u64 << 34) | 0x3_ffff_ffff,
            6u64 << 34,
        ];
        let mut out = Vec::new();
        write_words(&tokens, &mut out);
        assert_eq!(out, b"000005 000006");
        assert!(out.len() < words_len(tokens.len()));
    }
}
