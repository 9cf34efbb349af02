//! From a configured secret to AES keys, exactly as SveltyCMS resolves
//! `ENCRYPTION_KEY` (the contract is in `docs/format.md`, "Keys").
//!
//! A text secret is tried against these rules in order; the first that
//! matches wins:
//! 1. 64 hex digits: the 32 bytes they spell;
//! 2. strict base64 of at least 44 characters that decodes to at least 32
//!    bytes: the first 32 of them;
//! 3. base64url of at least 43 characters with a `-` or `_` that decodes to at
//!    least 32 bytes: the first 32 of them;
//! 4. anything else is a passphrase:
//!    `HKDF-SHA-256(ikm = UTF-8, salt = "sveltycms-aes-gcm-v1", info = "sveltycms-field-at-rest", L = 32)`.
//!
//! A passphrase also has decrypt-only legacy keys, tried after it in this
//! order, dropping any equal to an earlier one: `SHA-256(UTF-8)`, then (for 44
//! characters or more) the first 32 bytes of its lenient base64 decoding when
//! that gives at least 32. A byte secret (a `Uint8Array` in JS) must be exactly
//! 32 bytes and is the key itself.
//!
//! "Characters" are UTF-16 code units, as JS counts `string.length`.

use std::fmt;

use sha2::{Digest, Sha256};
use zeroize::{Zeroize, ZeroizeOnDrop, Zeroizing};

use crate::aead::KEY_LEN;
use crate::error::{AleError, Result};

/// HKDF salt of a passphrase.
pub const PASSPHRASE_SALT: &[u8] = b"sveltycms-aes-gcm-v1";
/// HKDF info of a passphrase's field-encryption key.
pub const INFO_FIELD_AT_REST: &[u8] = b"sveltycms-field-at-rest";
/// Shortest text secret accepted, in UTF-16 code units.
pub const MIN_SECRET_CHARS: usize = 32;

/// 32 bytes of key material. Zeroized on drop; `Debug` prints no bytes.
#[derive(Clone, Zeroize, ZeroizeOnDrop, PartialEq, Eq)]
pub struct KeyBytes([u8; KEY_LEN]);

/// RFC 5869 HKDF-SHA-256. `salt = None` (or empty) means 32 zero bytes.
/// Fails when `okm` is longer than 255 × 32 bytes.
pub fn hkdf_sha256(salt: Option<&[u8]>, ikm: &[u8], info: &[u8], okm: &mut [u8]) -> Result<()> {
    hkdf::Hkdf::<Sha256>::new(salt, ikm)
        .expand(info, okm)
        .map_err(|_| AleError::InvalidInput("HKDF output longer than 8160 bytes".into()))
}

impl KeyBytes {
    pub fn new(bytes: [u8; KEY_LEN]) -> Self {
        KeyBytes(bytes)
    }

    /// The first 32 bytes of `bytes`, which must hold at least that many.
    fn prefix_of(bytes: &[u8]) -> Option<Self> {
        let mut key = KeyBytes([0; KEY_LEN]);
        key.0.copy_from_slice(bytes.get(..KEY_LEN)?);
        Some(key)
    }

    /// HKDF-SHA-256 into 32 bytes, through [`hkdf_sha256`] (the function
    /// the Wycheproof vectors test).
    pub fn hkdf(salt: Option<&[u8]>, ikm: &[u8], info: &[u8]) -> Self {
        let mut key = KeyBytes([0; KEY_LEN]);
        // 32 bytes is far below HKDF-SHA-256's 8160-byte output limit.
        if hkdf_sha256(salt, ikm, info, &mut key.0).is_err() {
            unreachable!("HKDF-SHA-256 can always produce 32 bytes");
        }
        key
    }

    /// The raw bytes, for building a cipher. Never leaves the crate's Rust side.
    pub fn expose(&self) -> &[u8; KEY_LEN] {
        &self.0
    }
}

impl fmt::Debug for KeyBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("KeyBytes(<redacted>)")
    }
}

/// How a key came out of its secret.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyKind {
    /// 64 hex digits, used as the key.
    Hex,
    /// Strict base64, its first 32 bytes used as the key.
    Base64,
    /// Base64url, its first 32 bytes used as the key.
    Base64Url,
    /// 32 bytes given as bytes.
    Bytes,
    /// A passphrase through HKDF-SHA-256.
    Passphrase,
    /// Decrypt-only: SHA-256 of a passphrase.
    LegacySha256,
    /// Decrypt-only: the lenient base64 decoding of a passphrase.
    LegacyBase64,
}

impl KeyKind {
    /// The name JS sees in `ring.stats()`.
    pub const fn as_str(self) -> &'static str {
        match self {
            KeyKind::Hex => "hex",
            KeyKind::Base64 => "base64",
            KeyKind::Base64Url => "base64url",
            KeyKind::Bytes => "bytes",
            KeyKind::Passphrase => "passphrase",
            KeyKind::LegacySha256 => "legacy-sha256",
            KeyKind::LegacyBase64 => "legacy-base64",
        }
    }

    /// Whether this key only decrypts (a legacy fallback of a passphrase).
    pub const fn is_legacy(self) -> bool {
        matches!(self, KeyKind::LegacySha256 | KeyKind::LegacyBase64)
    }
}

/// A secret as configured: text (an environment variable) or 32 raw bytes.
#[derive(Clone, Copy)]
pub enum SecretValue<'a> {
    Text(&'a str),
    Bytes(&'a [u8]),
}

/// The keys one secret stands for: the key that encrypts, then its
/// decrypt-only legacy fallbacks in the order they are tried.
pub struct Resolved {
    pub key: (KeyKind, KeyBytes),
    pub fallbacks: Vec<(KeyKind, KeyBytes)>,
}

/// How `text` resolves (hex, base64, base64url, passphrase); `None` for a
/// text too short to be a secret.
pub fn kind(text: &str) -> Option<KeyKind> {
    resolve(SecretValue::Text(text), "").ok().map(|r| r.key.0)
}

/// Resolves one secret. `label` names it in errors ("ENCRYPTION_KEY",
/// "secret #1"); the value never appears in any message.
pub fn resolve(value: SecretValue<'_>, label: &str) -> Result<Resolved> {
    match value {
        SecretValue::Bytes(bytes) => match <[u8; KEY_LEN]>::try_from(bytes) {
            Ok(key) => Ok(Resolved {
                key: (KeyKind::Bytes, KeyBytes(key)),
                fallbacks: Vec::new(),
            }),
            Err(_) => Err(AleError::InvalidKey {
                which: label.into(),
                reason: "is a byte array that is not 32 bytes long; a raw AES-256 key is \
                         exactly 32 bytes",
            }),
        },
        SecretValue::Text(text) => resolve_text(text, label),
    }
}

fn resolve_text(text: &str, label: &str) -> Result<Resolved> {
    let chars = text.encode_utf16().count();
    if chars < MIN_SECRET_CHARS {
        return Err(AleError::InvalidKey {
            which: label.into(),
            reason: "is shorter than 32 characters; generate one with \
                     `openssl rand -base64 32` (or `openssl rand -hex 32`)",
        });
    }
    let bytes = text.as_bytes();
    let raw = |kind: KeyKind| {
        move |key| Resolved {
            key: (kind, key),
            fallbacks: Vec::new(),
        }
    };
    if bytes.len() == 64 && bytes.iter().all(u8::is_ascii_hexdigit) {
        let mut key = KeyBytes([0; KEY_LEN]);
        for (byte, pair) in key.0.iter_mut().zip(bytes.chunks_exact(2)) {
            *byte = (hex_digit(pair[0]) << 4) | hex_digit(pair[1]);
        }
        return Ok(raw(KeyKind::Hex)(key));
    }
    let standard = |c: u8| c.is_ascii_alphanumeric() || c == b'+' || c == b'/';
    let url = |c: u8| c.is_ascii_alphanumeric() || c == b'-' || c == b'_';
    if chars >= 44 && matches_padded(bytes, standard) {
        if let Some(key) = KeyBytes::prefix_of(&lenient_base64(text)) {
            return Ok(raw(KeyKind::Base64)(key));
        }
    }
    if chars >= 43 && matches_padded(bytes, url) && bytes.iter().any(|&c| c == b'-' || c == b'_') {
        if let Some(key) = KeyBytes::prefix_of(&lenient_base64(text)) {
            return Ok(raw(KeyKind::Base64Url)(key));
        }
    }
    let key = KeyBytes::hkdf(Some(PASSPHRASE_SALT), bytes, INFO_FIELD_AT_REST);
    let mut fallbacks: Vec<(KeyKind, KeyBytes)> = Vec::new();
    let mut sha = Zeroizing::new([0u8; KEY_LEN]);
    sha.copy_from_slice(&Sha256::digest(bytes));
    let candidates = [
        Some((KeyKind::LegacySha256, KeyBytes(*sha))),
        (chars >= 44)
            .then(|| KeyBytes::prefix_of(&lenient_base64(text)))
            .flatten()
            .map(|k| (KeyKind::LegacyBase64, k)),
    ];
    for (kind, candidate) in candidates.into_iter().flatten() {
        if candidate != key && fallbacks.iter().all(|(_, k)| *k != candidate) {
            fallbacks.push((kind, candidate));
        }
    }
    Ok(Resolved {
        key: (KeyKind::Passphrase, key),
        fallbacks,
    })
}

fn hex_digit(c: u8) -> u8 {
    match c {
        b'0'..=b'9' => c - b'0',
        b'a'..=b'f' => c - b'a' + 10,
        _ => c - b'A' + 10,
    }
}

/// `^[alphabet]+={0,2}$`.
fn matches_padded(bytes: &[u8], in_alphabet: impl Fn(u8) -> bool) -> bool {
    let body = bytes
        .strip_suffix(b"==")
        .or_else(|| bytes.strip_suffix(b"="))
        .unwrap_or(bytes);
    !body.is_empty() && body.iter().all(|&c| in_alphabet(c))
}

/// Base64 decoded the way Node's `Buffer.from(text, 'base64')` does it, which
/// is what SveltyCMS called: both alphabets are accepted, every other
/// character is skipped, and `=` ends the input. Node looks only at the low
/// byte of each UTF-16 code unit, so this does too.
fn lenient_base64(text: &str) -> Zeroizing<Vec<u8>> {
    let mut out = Zeroizing::new(Vec::with_capacity(text.len() / 4 * 3 + 3));
    let (mut acc, mut bits) = (0u32, 0u32);
    for unit in text.encode_utf16() {
        let c = unit.to_le_bytes()[0];
        let sextet = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            b'=' => break,
            _ => continue,
        };
        acc = ((acc << 6) | u32::from(sextet)) & 0xFFFF;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits).to_le_bytes()[0]);
        }
    }
    acc.zeroize();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(secret: &str) -> Vec<KeyKind> {
        let r = resolve(SecretValue::Text(secret), "k").expect("resolves");
        std::iter::once(r.key.0)
            .chain(r.fallbacks.iter().map(|f| f.0))
            .collect()
    }

    #[test]
    fn each_rule_in_order() {
        let hex = "00112233445566778899aabbccddeeff00112233445566778899AABBCCDDEEFF";
        let r = resolve(SecretValue::Text(hex), "k").expect("hex");
        assert_eq!(r.key.0, KeyKind::Hex);
        assert_eq!(r.key.1.expose()[..4], [0x00, 0x11, 0x22, 0x33]);
        assert_eq!(r.key.1.expose()[31], 0xFF);
        // 64 hex digits are also valid base64: hex wins
        assert_eq!(kinds(hex), [KeyKind::Hex]);
        // 44 characters of base64 (32 bytes, padded)
        let b64 = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
        let r = resolve(SecretValue::Text(b64), "k").expect("base64");
        assert_eq!(r.key.0, KeyKind::Base64);
        assert_eq!(r.key.1.expose()[31], 31);
        // 64 characters of base64: 48 bytes, the first 32 are the key
        let b64_64 = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4v";
        let r = resolve(SecretValue::Text(b64_64), "k").expect("base64");
        assert_eq!((r.key.0, r.key.1.expose()[31]), (KeyKind::Base64, 31));
        // base64url needs a '-' or '_', and 43 characters are enough
        let url = "__8AAQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0";
        let r = resolve(SecretValue::Text(url), "k").expect("base64url");
        assert_eq!(r.key.0, KeyKind::Base64Url);
        assert_eq!(r.key.1.expose()[..3], [0xFF, 0xFF, 0x00]);
        // 43 characters without '-' or '_' is neither: a passphrase
        assert_eq!(kinds(&"A".repeat(43))[0], KeyKind::Passphrase);
        // 44 base64 characters with "==" decode to 31 bytes: a passphrase
        assert_eq!(
            kinds(&format!("{}==", "A".repeat(42)))[0],
            KeyKind::Passphrase
        );
    }

    #[test]
    fn passphrase_uses_the_salted_hkdf_and_has_fallbacks_in_order() {
        let p = "correct horse battery staple, but longer";
        let r = resolve(SecretValue::Text(p), "k").expect("passphrase");
        let expected = KeyBytes::hkdf(
            Some(b"sveltycms-aes-gcm-v1"),
            p.as_bytes(),
            b"sveltycms-field-at-rest",
        );
        assert_eq!(r.key, (KeyKind::Passphrase, expected));
        let sha: [u8; 32] = Sha256::digest(p.as_bytes()).into();
        assert_eq!(
            r.fallbacks.len(),
            1,
            "under 44 characters: no base64 fallback"
        );
        assert_eq!(r.fallbacks[0], (KeyKind::LegacySha256, KeyBytes(sha)));
        // 44+ characters with junk between base64 characters: a lenient decoding
        let junky = "QUJD REVG R0hJ SktM TU5P UFFS U1RV VldY WVph YmNk ZWZn";
        assert_eq!(
            kinds(junky),
            [
                KeyKind::Passphrase,
                KeyKind::LegacySha256,
                KeyKind::LegacyBase64
            ]
        );
    }

    #[test]
    fn lenient_base64_matches_node() {
        // Buffer.from(s, 'base64') on Node 24 for each of these:
        let cases: [(&str, &[u8]); 6] = [
            ("QUJD", b"ABC"),
            ("Q U J D", b"ABC"),
            ("QUJD=QUJD", b"ABC"),
            ("QUI", b"AB"),
            ("Q", b""),
            ("-_-_", &[0xFB, 0xFF, 0xBF]),
        ];
        for (s, want) in cases {
            assert_eq!(&lenient_base64(s)[..], want, "{s:?}");
        }
        // only the low byte of a code unit counts: U+0141 reads as 'A' (0x41)
        assert_eq!(&lenient_base64("\u{0141}UJD")[..], [0x01, 0x42, 0x43]);
    }

    #[test]
    fn short_text_and_wrong_byte_lengths_are_refused_without_echo() {
        for s in ["", "hunter2", &"x".repeat(31), &"é".repeat(31)] {
            let err = resolve(SecretValue::Text(s), "ENCRYPTION_KEY")
                .err()
                .expect("short");
            assert_eq!(err.code(), "ALE_INVALID_KEY");
            assert!(err.to_string().starts_with("ENCRYPTION_KEY"));
            assert!(s.is_empty() || !err.to_string().contains(s));
        }
        // 32 characters is enough, counted in UTF-16 units: "é" is one, "😀" two
        assert!(resolve(SecretValue::Text(&"é".repeat(32)), "k").is_ok());
        assert!(resolve(SecretValue::Text(&"😀".repeat(16)), "k").is_ok());
        for n in [0, 1, 16, 31, 33, 64] {
            let err = resolve(SecretValue::Bytes(&vec![7; n]), "secret #0")
                .err()
                .expect("len");
            assert_eq!(err.code(), "ALE_INVALID_KEY", "{n}");
        }
        let r = resolve(SecretValue::Bytes(&[7; 32]), "k").expect("32 bytes");
        assert_eq!(r.key, (KeyKind::Bytes, KeyBytes([7; 32])));
    }

    #[test]
    fn debug_output_has_no_key_material() {
        let k = KeyBytes([0xAB; 32]);
        assert_eq!(format!("{k:?}"), "KeyBytes(<redacted>)");
    }
}
