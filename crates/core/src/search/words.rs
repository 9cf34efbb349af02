//! A value's tokens as the text SQLite FTS5 and MySQL FULLTEXT index: each
//! token as 16 lowercase hex digits, big-endian, one space between tokens
//! (docs/search.md, "Per dialect"). The Drizzle columns of those dialects
//! store this text on every write of a searchable column; it is made here,
//! with the tokens, so that JS needs no loop over their bytes
//! (docs/performance.md, "Search tokens, per value").

use super::tokens::Token;

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
        // Both halves at once, eight digits each, rather than a table lookup
        // per nibble: branch-free, about 10 operations a half. (Writing into
        // a room made first, spaces and all, measured no faster.)
        let [a, b, c, d, e, f, g, h] = token.to_be_bytes();
        out.extend_from_slice(&hex8(u32::from_be_bytes([a, b, c, d])).to_be_bytes());
        out.extend_from_slice(&hex8(u32::from_be_bytes([e, f, g, h])).to_be_bytes());
    }
}

/// The eight lowercase hex digits of `x`, most significant in the top byte.
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
    fn tokens_are_words_one_space_apart() {
        let mut out = Vec::new();
        write_words(&[], &mut out);
        assert!(out.is_empty());
        assert_eq!(words_len(0), 0);
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        for n in [1usize, 2, 3, 17, 400] {
            let tokens: Vec<Token> = (0..n)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    state
                })
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
