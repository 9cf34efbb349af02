//! A secret that nearly matched a key rule and resolved by another: a quoted
//! key, one with a line break at its end, base64 of too few bytes (each a
//! passphrase), or 64 characters of hex with one typo (base64, or a
//! passphrase). SveltyCMS's resolution is kept (such a value resolves the
//! same there, and values it sealed must keep opening), but nobody means
//! these: values sealed under one fail later against the clean key. The
//! binding warns with the rule's description, never the value.

use crate::secret::{kind, KeyKind};

/// The rule a passphrase nearly matched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NearMiss {
    /// White space or a line break around a value that is a key without it.
    Whitespace,
    /// Quotes around a value that is a key without them.
    Quoted,
    /// 64 characters, nearly all of them hex digits: read as base64 or a passphrase.
    NearlyHex,
    /// Base64 (either alphabet) of fewer than 32 bytes.
    ShortBase64 {
        /// What it decodes to.
        bytes: usize,
    },
}

impl NearMiss {
    /// What the secret nearly was, for a warning; holds nothing of the value.
    pub fn describe(self) -> String {
        match self {
            NearMiss::Whitespace => {
                "has white space or a line break around a value that would be a key \
                                     (hex or base64) without it; it is not trimmed"
                    .into()
            }
            NearMiss::Quoted => {
                "is in quotes, and would be a key (hex or base64) without them".into()
            }
            NearMiss::NearlyHex => {
                "is 64 characters, nearly all hex digits, so it is read as base64 or \
                                    as a passphrase; a hex key is exactly 64 hex digits (0-9, a-f)"
                    .into()
            }
            NearMiss::ShortBase64 { bytes } => format!(
                "looks like base64 of {bytes} bytes; a base64 key is 32 bytes (44 characters: \
                 `openssl rand -base64 32`)"
            ),
        }
    }
}

/// Whether `text` resolves as a raw key (hex, base64, base64url), not as a passphrase.
fn is_raw_key(text: &str) -> bool {
    kind(text).is_some_and(|kind| kind != KeyKind::Passphrase)
}

/// The rule `text` nearly matched; `None` for a hex key, a secret too short
/// to resolve, an ordinary passphrase, and base64 that is not nearly hex.
pub fn near_miss(text: &str) -> Option<NearMiss> {
    let kind = kind(text)?;
    // Counted in UTF-16 units, as the fallback (ts/fallback/near-miss.ts) counts them.
    let hexish = text.encode_utf16().count() == 64
        && text.bytes().filter(u8::is_ascii_hexdigit).count() >= 60;
    if kind == KeyKind::Hex {
        return None;
    }
    if hexish {
        return Some(NearMiss::NearlyHex);
    }
    if kind != KeyKind::Passphrase {
        return None;
    }
    let trimmed = text.trim_matches(|c: char| c.is_ascii_whitespace());
    if trimmed.len() != text.len() && is_raw_key(trimmed) {
        return Some(NearMiss::Whitespace);
    }
    let quotes = [('"', '"'), ('\'', '\''), ('`', '`')];
    let unquoted = quotes
        .iter()
        .find_map(|&(open, close)| trimmed.strip_prefix(open)?.strip_suffix(close));
    if unquoted
        .is_some_and(|inner| is_raw_key(inner.trim_matches(|c: char| c.is_ascii_whitespace())))
    {
        return Some(NearMiss::Quoted);
    }
    short_base64(trimmed).map(|bytes| NearMiss::ShortBase64 { bytes })
}

/// What `text` decodes to when it reads as generated base64 of under 32
/// bytes: the alphabet (either), a length of whole quads or padding, and
/// upper case, lower case and digits all present, as random base64 has and
/// a passphrase of words seldom does.
fn short_base64(text: &str) -> Option<usize> {
    let body = text.trim_end_matches('=');
    let padding = text.len() - body.len();
    let in_alphabet = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'-' | b'_');
    let b = body.as_bytes();
    let generated = padding <= 2
        && b.iter().all(|&c| in_alphabet(c))
        && (padding > 0 || text.len() % 4 == 0)
        && b.iter().any(u8::is_ascii_uppercase)
        && b.iter().any(u8::is_ascii_lowercase)
        && b.iter().any(u8::is_ascii_digit);
    let decoded = body.len() * 3 / 4;
    (generated && decoded < 32).then_some(decoded)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEX: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
    const B64: &str = "ABEiM0RVZneImaq7zN3u/wARIjNEVWZ3iJmqu8zd7v8=";

    #[test]
    fn each_rule_and_none_for_keys_and_passphrases() {
        let cases: [(String, Option<NearMiss>); 12] = [
            (HEX.into(), None),
            (B64.into(), None),
            ("correct horse battery staple, twice over".into(), None),
            ("CorrectHorseBatteryStapleTwiceOver".into(), None),
            (format!("{HEX}\n"), Some(NearMiss::Whitespace)),
            (format!(" {B64}"), Some(NearMiss::Whitespace)),
            (format!("\"{HEX}\""), Some(NearMiss::Quoted)),
            (format!("'{B64}'"), Some(NearMiss::Quoted)),
            (format!("{}g", &HEX[..63]), Some(NearMiss::NearlyHex)),
            (format!("{}.", &HEX[..63]), Some(NearMiss::NearlyHex)),
            (
                "ABEiM0RVZneImaq7zN3u/wARIjNEVWZ3".into(),
                Some(NearMiss::ShortBase64 { bytes: 24 }),
            ),
            ("ABEiM0RVZneImaq7zN3u_wARIjNEVWZ3iJmqu8zd7v8".into(), None),
        ];
        for (text, expected) in cases {
            assert_eq!(near_miss(&text), expected, "{text:?}");
        }
    }

    #[test]
    fn descriptions_hold_nothing_of_the_value() {
        let text = format!("\"{HEX}\"");
        let rule = near_miss(&text).map(NearMiss::describe).unwrap_or_default();
        assert!(!rule.is_empty() && !rule.contains("0011"));
    }
}
