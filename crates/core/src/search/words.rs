//! A value's tokens as the text SQLite FTS5 and MySQL FULLTEXT index: each
//! token as 16 lowercase hex digits, big-endian, one space between tokens
//! (docs/search.md, "Per dialect"). The Drizzle columns of those dialects
//! store this text on every write of a searchable column; it is made here,
//! with the tokens, so that JS needs no loop over their bytes
//! (docs/performance.md, "Search tokens, per value").

use super::tokens::Token;

// A token's sixteen lowercase hex digits, most significant first.
#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
use self::hex16_scalar as hex16;
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
use self::hex16_sse2 as hex16;

/// How many bytes [`write_words`] writes for `count` tokens.
pub fn words_len(count: usize) -> usize {
    // 16 digits a token and a space between two
    (count * 17).saturating_sub(1)
}

/// Appends `tokens` to `out` as hex words separated by single spaces.
pub fn write_words(tokens: &[Token], out: &mut Vec<u8>) {
    // `out` may be a result buffer that held a plaintext: grown only by a
    // step that wipes the allocation it leaves.
    crate::scratch::reserve(out, words_len(tokens.len()));
    for (i, &token) in tokens.iter().enumerate() {
        if i != 0 {
            out.push(b' ');
        }
        out.extend_from_slice(&hex16(token));
    }
}

/// [`hex16`] with SSE2, part of x86-64's baseline: one vector of the
/// token's nibbles, unpacked from its bytes, that a compare turns into
/// digits and letters, in a few instructions where the scalar halves take
/// dozens (docs/performance.md, "Search tokens, per value").
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline]
fn hex16_sse2(token: Token) -> [u8; 16] {
    use std::arch::x86_64::{
        __m128i, _mm_add_epi8, _mm_and_si128, _mm_cmpgt_epi8, _mm_cvtsi64_si128, _mm_set1_epi8,
        _mm_srli_epi16, _mm_unpacklo_epi8,
    };
    // the token's bytes, most significant first, as the vector's low half
    let bytes = i64::from_le_bytes(token.to_be_bytes());
    // ('0' and 'a' - '0' - 10 are below 128: the casts keep them)
    let (zero, to_letters) = (b'0' as i8, (b'a' - b'0' - 10) as i8);
    // SAFETY: SSE2 is enabled for this build (the cfg above), which is all
    // these intrinsics need; they read and write no memory. The vector and
    // the array are both 16 bytes, and every bit pattern is valid for both.
    unsafe {
        let bytes = _mm_cvtsi64_si128(bytes);
        let low_nibbles = _mm_set1_epi8(0x0f);
        let high = _mm_and_si128(_mm_srli_epi16::<4>(bytes), low_nibbles);
        let low = _mm_and_si128(bytes, low_nibbles);
        // each byte's high nibble, then its low one
        let nibbles = _mm_unpacklo_epi8(high, low);
        let letters = _mm_cmpgt_epi8(nibbles, _mm_set1_epi8(9));
        let digits = _mm_add_epi8(
            _mm_add_epi8(nibbles, _mm_set1_epi8(zero)),
            _mm_and_si128(letters, _mm_set1_epi8(to_letters)),
        );
        std::mem::transmute::<__m128i, [u8; 16]>(digits)
    }
}

/// [`hex16`] without SIMD: each half by [`hex8`]. (Compiled for tests
/// everywhere, which compare it with the SSE2 form.)
#[cfg(any(test, not(all(target_arch = "x86_64", target_feature = "sse2"))))]
fn hex16_scalar(token: Token) -> [u8; 16] {
    let [a, b, c, d, e, f, g, h] = token.to_be_bytes();
    let high = hex8(u32::from_be_bytes([a, b, c, d])).to_be_bytes();
    let low = hex8(u32::from_be_bytes([e, f, g, h])).to_be_bytes();
    let mut digits = [0u8; 16];
    digits[..8].copy_from_slice(&high);
    digits[8..].copy_from_slice(&low);
    digits
}

/// The eight lowercase hex digits of `x`, most significant in the top byte.
#[cfg(any(test, not(all(target_arch = "x86_64", target_feature = "sse2"))))]
fn hex8(x: u32) -> u64 {
    let x = u64::from(x);
    // One nibble a byte: halves, then bytes, then nibbles move apart.
    let v = ((x & 0xFFFF_0000) << 16) | (x & 0xFFFF);
    let v = ((v & 0x0000_FF00_0000_FF00) << 8) | (v & 0x0000_00FF_0000_00FF);
    let v = ((v & 0x00F0_00F0_00F0_00F0) << 4) | (v & 0x000F_000F_000F_000F);
    // 1 in each byte whose nibble is 10 or more: those become letters.
    let letters = ((v + 0x0606_0606_0606_0606) >> 4) & 0x0101_0101_0101_0101;
    v + 0x3030_3030_3030_3030 + letters * u64::from(b'a' - b'0' - 10)
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

    fn expected(tokens: &[Token]) -> String {
        tokens
            .iter()
            .map(|t| format!("{t:016x}"))
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn every_nibble_at_every_place_is_its_digit() {
        for place in 0..16 {
            for nibble in 0..16u64 {
                let token = nibble << (4 * place);
                let mut out = Vec::new();
                write_words(&[token], &mut out);
                assert_eq!(out, expected(&[token]).as_bytes(), "{token:x}");
            }
        }
    }

    #[test]
    fn both_forms_write_the_same_digits() {
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let tokens = (0..10_000).map(|_| xorshift(&mut state));
        for token in tokens.chain([0, u64::MAX, 0x0123_4567_89ab_cdef]) {
            let scalar = hex16_scalar(token);
            assert_eq!(scalar, format!("{token:016x}").as_bytes(), "{token:x}");
            assert_eq!(hex16(token), scalar, "{token:x}");
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
            let tokens: Vec<Token> = (0..n)
                .map(|_| xorshift(&mut state))
                .chain([0, u64::MAX])
                .collect();
            let mut out = b"kept".to_vec();
            write_words(&tokens, &mut out);
            assert_eq!(&out[..4], b"kept", "appends");
            assert_eq!(&out[4..], expected(&tokens).as_bytes());
            assert_eq!(out.len() - 4, words_len(tokens.len()));
        }
    }
}
