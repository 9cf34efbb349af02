//! Grams to tokens. Each column, in each context, has its own AES-256 key,
//! `HKDF-SHA256(ikm = a secret's blind-index key, salt = none, info =
//! "sveltycms-search-v1" ‖ 0x00 ‖ tenant:collection:field)`, and a gram's
//! token is the first 8 bytes of `AES-CMAC(key, kind ‖ gram)` (NIST SP
//! 800-38B, RFC 4493). So equal grams have equal tokens in one column of
//! one tenant, and tokens of other columns or tenants are unrelated.
//!
//! CMAC on AES rather than HMAC-SHA-256: a gram of up to 15 bytes is one
//! AES block, and the blocks of a value's grams are independent, so they are
//! encrypted together (the `aes` crate pipelines them with AES-NI or ARMv8
//! AES); HMAC needs two SHA-256 compressions per gram, one after the other.

use aes::cipher::{BlockCipherEncrypt, KeyInit};
use aes::{Aes256, Block};
use zeroize::Zeroize;

use crate::context::Context;
use crate::secret::hkdf_sha256;

/// Bytes of a token.
pub const TOKEN_LEN: usize = 8;
/// A token: its 8 bytes read as a big-endian integer, so that tokens sort
/// and compare as their bytes do, one instruction each.
pub type Token = u64;

/// HKDF info prefix of a column's token key.
pub const INFO_SEARCH: &[u8] = b"sveltycms-search-v1";

/// What a gram is, bound into its token so that a word and a trigram or a
/// prefix with the same text never share one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// A trigram ("contains").
    Contains = b'c',
    /// A word prefix ("starts with").
    Prefix = b'p',
    /// A whole word (word search).
    Word = b'w',
    /// A node of a range index's tree (search/range.rs).
    Range = b'r',
}

/// The token key of one column in one context, with its CMAC subkeys.
pub struct ColumnTokens {
    cipher: Aes256,
    /// RFC 4493's K1 (a complete last block) and K2 (a padded one), as
    /// big-endian integers.
    k1: u128,
    k2: u128,
}

impl ColumnTokens {
    /// The tokens of `ctx`'s column under `index_key`, a secret's
    /// blind-index key (keys.rs): a key per tenant with tenant keys, one that
    /// survives rotation of the data keys with an index key of its own.
    pub fn new(index_key: &[u8; 32], ctx: &Context<'_>) -> Self {
        let mut info = Vec::with_capacity(INFO_SEARCH.len() + 1 + 64);
        info.extend_from_slice(INFO_SEARCH);
        info.push(0);
        let mut aad = Vec::new();
        ctx.write_aad(&mut aad);
        info.extend_from_slice(&aad);
        let mut key = [0u8; 32];
        // 32 bytes is far below HKDF-SHA-256's limit: this cannot fail.
        if hkdf_sha256(None, index_key, &info, &mut key).is_err() {
            unreachable!("HKDF-SHA-256 gives 32 bytes");
        }
        let cipher = Aes256::new(&key.into());
        key.zeroize();
        let mut l = Block::default();
        cipher.encrypt_block(&mut l);
        let k1 = double(u128::from_be_bytes(l.into()));
        l.zeroize();
        ColumnTokens {
            cipher,
            k1,
            k2: double(k1),
        }
    }

    /// The token of one gram.
    pub fn token(&self, kind: Kind, gram: &[u8]) -> Token {
        let mut out = Vec::with_capacity(1);
        self.tokens_into(kind, std::iter::once(gram), &mut out);
        out[0]
    }

    /// Appends the tokens of `grams` to `out`, in no particular order (the
    /// callers sort them). Grams of up to 14 bytes (one block with the kind
    /// and the padding) are encrypted together; the rest one by one.
    pub fn tokens_into<'a>(
        &self,
        kind: Kind,
        grams: impl IntoIterator<Item = &'a [u8]>,
        out: &mut Vec<Token>,
    ) {
        let grams = grams.into_iter();
        // Room for as many grams as there may be, up to a bound: a text's
        // words give no lower bound, and growing from nothing copies the
        // blocks at every doubling; past the bound (a long text) it grows.
        let (low, high) = grams.size_hint();
        let room = high.map_or(low, |high| high.min(low.max(RESERVED_BLOCKS)));
        let mut short: Vec<Block> = Vec::with_capacity(room);
        for gram in grams {
            match self.last_block(kind, gram) {
                Some(block) => short.push(block.to_be_bytes().into()),
                None => out.push(self.long(kind, gram)),
            }
        }
        // Encrypted in place: what `short` holds afterwards is AES output,
        // not the grams, so it needs no wipe.
        self.cipher.encrypt_blocks(&mut short);
        out.extend(
            short
                .iter()
                .map(|b| (u128::from_be_bytes((*b).into()) >> 64) as u64),
        );
    }

    /// `kind ‖ gram` as CMAC's one and last block (padded, XORed with its
    /// subkey), when it fits in one.
    fn last_block(&self, kind: Kind, gram: &[u8]) -> Option<u128> {
        let used = gram.len() + 1;
        if used > 16 {
            return None;
        }
        // Built in a register rather than in a byte array on the stack that
        // would then need a wipe: the gram's bytes go under the kind's.
        let block = u128::from(kind as u8) << 120 | gram_bits(gram) >> 8;
        Some(if used == 16 {
            block ^ self.k1
        } else {
            (block | 0x80 << (120 - 8 * used)) ^ self.k2
        })
    }

    /// CMAC of `kind ‖ gram` for a message of more than one block.
    fn long(&self, kind: Kind, gram: &[u8]) -> Token {
        let mut message = Vec::with_capacity(gram.len() + 1);
        message.push(kind as u8);
        message.extend_from_slice(gram);
        let blocks = message.len().div_ceil(16);
        let mut x = 0u128;
        for (i, chunk) in message.chunks(16).enumerate() {
            let mut bytes = [0u8; 16];
            bytes[..chunk.len()].copy_from_slice(chunk);
            let mut block = u128::from_be_bytes(bytes);
            if i + 1 == blocks {
                block ^= if chunk.len() == 16 {
                    self.k1
                } else {
                    block ^= 0x80 << (8 * (15 - chunk.len()));
                    self.k2
                };
            }
            let mut state: Block = (x ^ block).to_be_bytes().into();
            self.cipher.encrypt_block(&mut state);
            x = u128::from_be_bytes(state.into());
            bytes.zeroize();
        }
        message.zeroize();
        (x >> 64) as u64
    }
}

/// `gram` (at most 16 bytes) as the top bytes of a big-endian u128, zeros
/// below: two overlapping loads of 8 or 4 bytes from its two ends, each
/// shifted into place, rather than a variable shift per byte
/// (docs/performance.md, "Search: reading a search index back, and the word test").
#[inline]
fn gram_bits(gram: &[u8]) -> u128 {
    let n = gram.len();
    debug_assert!(n <= 16);
    // (the lengths matched below make every chunk whole: the zeros are never taken)
    let be64 = |at: usize| {
        gram[at..]
            .first_chunk()
            .map_or(0, |c| u128::from(u64::from_be_bytes(*c)))
    };
    let be32 = |at: usize| {
        gram[at..]
            .first_chunk()
            .map_or(0, |c| u128::from(u32::from_be_bytes(*c)))
    };
    match n {
        // the second load ends at the gram's end; where the two overlap they hold the same bytes
        8.. => be64(0) << 64 | be64(n - 8) << (8 * (16 - n)),
        4..=7 => be32(0) << 96 | be32(n - 4) << (8 * (16 - n)),
        _ => gram.iter().enumerate().fold(0, |bits, (i, &byte)| {
            bits | u128::from(byte) << (120 - 8 * i)
        }),
    }
}

/// The most blocks `tokens_into` reserves on a gram iterator's upper bound
/// alone (a lower bound is reserved in full).
const RESERVED_BLOCKS: usize = 4096;

/// Doubling in GF(2^128), RFC 4493's subkey step.
fn double(value: u128) -> u128 {
    (value << 1) ^ if value >> 127 == 1 { 0x87 } else { 0 }
}

impl Drop for ColumnTokens {
    fn drop(&mut self) {
        self.k1.zeroize();
        self.k2.zeroize();
    }
}

#[cfg(test)]
mod tests {
    use cmac::{Cmac, KeyInit, Mac};

    use super::{ColumnTokens, Kind, TOKEN_LEN};
    use crate::context::Context;

    #[test]
    fn gram_bits_place_every_length_at_the_top() {
        let bytes: Vec<u8> = (1..=16).collect();
        for n in 0..=16 {
            let mut padded = [0u8; 16];
            padded[..n].copy_from_slice(&bytes[..n]);
            assert_eq!(
                super::gram_bits(&bytes[..n]),
                u128::from_be_bytes(padded),
                "{n} bytes"
            );
        }
    }

    #[test]
    fn tokens_are_aes_cmac_truncated_whatever_the_length() {
        let ctx = Context::new("acme", "users", "name").expect("valid");
        let tokens = ColumnTokens::new(&[7; 32], &ctx);
        // the column's key, as the module doc derives it
        let mut info = b"sveltycms-search-v1\0".to_vec();
        info.extend_from_slice(b"acme:users:name");
        let mut key = [0u8; 32];
        crate::secret::hkdf_sha256(None, &[7; 32], &info, &mut key).expect("hkdf");
        for len in [0u8, 1, 12, 14, 15, 16, 17, 31, 32, 33, 100] {
            let gram: Vec<u8> = (0..len)
                .map(|i: u8| i.wrapping_mul(37).wrapping_add(11))
                .collect();
            let mut mac = <Cmac<aes::Aes256> as KeyInit>::new_from_slice(&key).expect("key");
            mac.update(b"w");
            mac.update(&gram);
            let full = mac.finalize().into_bytes();
            let first: [u8; TOKEN_LEN] = full[..TOKEN_LEN].try_into().expect("8 bytes");
            assert_eq!(
                tokens.token(Kind::Word, &gram),
                u64::from_be_bytes(first),
                "{len} bytes"
            );
        }
    }

    #[test]
    fn kinds_columns_and_tenants_separate_tokens() {
        let token = |t, c, f, kind| {
            let ctx = Context::new(t, c, f).expect("valid");
            ColumnTokens::new(&[7; 32], &ctx).token(kind, b"muller")
        };
        let base = token("acme", "users", "name", Kind::Word);
        let others = [
            token("acme", "users", "name", Kind::Prefix),
            token("globex", "users", "name", Kind::Word),
            token("acme", "users", "email", Kind::Word),
        ];
        assert!(others.iter().all(|t| *t != base), "{others:?}");
        assert_eq!(base, token("acme", "users", "name", Kind::Word));
    }

    #[test]
    fn a_batch_gives_each_gram_its_own_token() {
        let tokens = ColumnTokens::new(&[1; 32], &Context::new("t", "c", "f").expect("valid"));
        let grams: [&[u8]; 4] = [b"abc", b"a much longer gram than one block", b"", b"abc"];
        let mut out = Vec::new();
        tokens.tokens_into(Kind::Contains, grams, &mut out);
        let mut one: Vec<_> = grams
            .iter()
            .map(|g| tokens.token(Kind::Contains, g))
            .collect();
        assert_eq!(one[0], one[3]);
        out.sort_unstable();
        one.sort_unstable();
        assert_eq!(out, one, "the same tokens, in another order");
    }
}
