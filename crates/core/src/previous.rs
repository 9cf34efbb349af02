//! The secrets of `ENCRYPTION_KEY_PREVIOUS`: a comma-separated list, each
//! entry trimmed of the ASCII white space around it (`docs/format.md`,
//! "Keys"), and, where that reading may have cut a passphrase, the value as
//! written too.
//!
//! SveltyCMS takes any string of 32 characters or more as a passphrase,
//! commas and white space at either end included. Moved from
//! `ENCRYPTION_KEY` into this list, such a passphrase would be cut at its
//! commas or trimmed, and no key would open what it sealed. So when the
//! list reading changed the value (it has a comma, or white space was
//! trimmed) and one of its entries is a passphrase, the whole value as
//! written is one more secret, after the entries: the key of whichever
//! reading was meant is in the ring. A list of raw keys (hex, base64) is
//! only ever a list. (An entry under 32 characters still fails the ring:
//! the numbered variables, `ENCRYPTION_KEY_PREVIOUS_1` and on, take a
//! passphrase exactly as written.)

use crate::secret::{resolve, KeyKind, SecretValue};

/// The secrets `value` stands for: its entries, in order, then the whole
/// value when it may be one passphrase.
#[derive(Debug, PartialEq, Eq)]
pub struct Previous<'a> {
    pub entries: Vec<&'a str>,
    pub whole: Option<&'a str>,
}

/// Reads `ENCRYPTION_KEY_PREVIOUS`.
pub fn previous_secrets(value: &str) -> Previous<'_> {
    let entries: Vec<&str> = value
        .split(',')
        .map(|entry| entry.trim_matches(|c: char| c.is_ascii_whitespace()))
        .filter(|entry| !entry.is_empty())
        .collect();
    let changed = entries.as_slice() != [value];
    let passphrase = |entry: &&str| {
        resolve(SecretValue::Text(entry), "")
            .is_ok_and(|resolved| resolved.key.0 == KeyKind::Passphrase)
    };
    let whole = (changed && entries.iter().any(passphrase)).then_some(value);
    Previous { entries, whole }
}

#[cfg(test)]
mod tests {
    use super::previous_secrets;

    const HEX: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
    const FIRST: &str = "the first passphrase that we used in 2024";
    const SECOND: &str = "and the second one that we used in 2025";

    fn read(value: &str) -> (Vec<&str>, Option<&str>) {
        let p = previous_secrets(value);
        (p.entries, p.whole)
    }

    #[test]
    fn a_list_of_raw_keys_is_only_a_list() {
        let list = format!(" {HEX} ,\t{HEX}\n, ,");
        assert_eq!(read(&list), (vec![HEX, HEX], None));
        assert_eq!(read(HEX), (vec![HEX], None));
    }

    #[test]
    fn a_passphrase_as_written_is_its_one_entry() {
        assert_eq!(read(FIRST), (vec![FIRST], None));
    }

    #[test]
    fn a_cut_or_trimmed_passphrase_brings_the_whole_value() {
        let a = "a passphrase whose halves are each long";
        let b = " enough to be passphrases of their own";
        let comma = format!("{a},{b}");
        assert_eq!(read(&comma), (vec![a, b.trim()], Some(comma.as_str())));
        let spaced = format!("{FIRST}\n");
        assert_eq!(read(&spaced), (vec![FIRST], Some(spaced.as_str())));
        // two passphrases: the list, and the whole in case it was one
        let two = format!("{FIRST},{SECOND}");
        assert_eq!(read(&two), (vec![FIRST, SECOND], Some(two.as_str())));
        // a passphrase beside a raw key
        let mixed = format!("{HEX},{FIRST}");
        assert_eq!(read(&mixed), (vec![HEX, FIRST], Some(mixed.as_str())));
    }

    #[test]
    fn entries_too_short_to_be_secrets_bring_nothing_more() {
        // they fail the ring, loudly; the whole is no help there
        assert_eq!(
            read("short, also short"),
            (vec!["short", "also short"], None)
        );
        assert_eq!(read(""), (vec![], None));
    }
}
