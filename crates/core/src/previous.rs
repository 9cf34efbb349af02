//! The previous secrets of an environment, in the ring's order:
//! `ENCRYPTION_KEY_PREVIOUS`, a comma-separated list whose entries are
//! trimmed of the ASCII white space around them; then
//! `ENCRYPTION_KEY_PREVIOUS_<n>` (n from 1, in order of n, gaps allowed), each
//! exactly as written; then, where the list reading may have changed a
//! secret, the list's value as written (`docs/format.md`, "Keys").
//!
//! SveltyCMS takes any string of 32 characters or more as a passphrase,
//! commas and white space at either end included (a key with a stray line
//! break is a passphrase there). Moved from `ENCRYPTION_KEY` into the list,
//! such a secret would be cut at its commas or trimmed, and no key would
//! open what it sealed. So the list's whole value is one more secret when
//! the list reading changed it and it may be one secret: it has no comma
//! (only white space was trimmed), or one of its entries is a passphrase.
//! The key of whichever reading was meant is then in the ring. A list of
//! raw keys (hex, base64) is only ever a list, and a ring given `keyIds`
//! (one per secret) gets no secret it was not given. An entry too short to
//! be a secret, in a value with a comma, is refused naming the numbered
//! variables, which take a passphrase with commas as written.

use crate::error::{AleError, Result};
use crate::secret::{kind, KeyKind, MIN_SECRET_CHARS};

/// The list's name; the numbered variables are `<LIST>_<n>`.
pub const LIST: &str = "ENCRYPTION_KEY_PREVIOUS";

/// One previous secret and the name errors and warnings give it.
#[derive(Debug, PartialEq, Eq)]
pub struct PreviousSecret<'a> {
    pub label: String,
    pub value: &'a str,
    /// The list's value as written, beside its entries: no near-miss
    /// warning is given for it, since its trimmed reading is in the ring.
    pub as_written: bool,
}

/// For a variable's name: `None` when it is not one of the numbered
/// variables, `n` when it is `ENCRYPTION_KEY_PREVIOUS_<n>` (n from 1, no
/// leading zero, at most 9 digits), and `ALE_INVALID_KEY` for a name that
/// looks like one but is not (`_01`, `_0`, ten digits, another case), which
/// would otherwise be passed over without a word.
pub fn numbered(name: &str) -> Option<Result<u32>> {
    let head = name.get(..=LIST.len())?;
    let digits = name.get(LIST.len() + 1..)?;
    let like = head.eq_ignore_ascii_case(&format!("{LIST}_"))
        && !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit());
    if !like {
        return None;
    }
    let plain = head.starts_with(LIST) && !digits.starts_with('0') && digits.len() <= 9;
    Some(match digits.parse() {
        Ok(n) if plain => Ok(n),
        _ => Err(AleError::InvalidKey {
            which: name.into(),
            reason: "is not read: a numbered previous secret is ENCRYPTION_KEY_PREVIOUS_<n>, in \
                     upper case, with n from 1 to 999999999 and no leading zero",
        }),
    })
}

/// The previous secrets, in the ring's order, from the list's value and the
/// numbered variables' (`(n, value)`, in any order; empty ones are left
/// out, as an empty list is). `keyed`: the ring is given `keyIds`.
pub fn previous_secrets<'a>(
    list: Option<&'a str>,
    mut numbered: Vec<(u32, &'a str)>,
    keyed: bool,
) -> Result<Vec<PreviousSecret<'a>>> {
    let value = list.unwrap_or("");
    let entries: Vec<&str> = value
        .split(',')
        .map(|entry| entry.trim_matches(|c: char| c.is_ascii_whitespace()))
        .filter(|entry| !entry.is_empty())
        .collect();
    let comma = value.contains(',');
    if comma {
        if let Some(i) = entries
            .iter()
            .position(|e| e.encode_utf16().count() < MIN_SECRET_CHARS)
        {
            return Err(AleError::InvalidKey {
                which: format!("{LIST}[{i}]"),
                reason: "is shorter than 32 characters: the list is cut at its commas. A passphrase \
                         that holds a comma goes in ENCRYPTION_KEY_PREVIOUS_1 (or _2, ...), which is \
                         used exactly as written",
            });
        }
    }
    let mut out: Vec<PreviousSecret<'a>> = entries
        .iter()
        .enumerate()
        .map(|(i, &value)| PreviousSecret {
            label: format!("{LIST}[{i}]"),
            value,
            as_written: false,
        })
        .collect();
    numbered.sort_unstable_by_key(|&(n, _)| n);
    out.extend(
        numbered
            .into_iter()
            .filter(|(_, v)| !v.is_empty())
            .map(|(n, value)| PreviousSecret {
                label: format!("{LIST}_{n}"),
                value,
                as_written: false,
            }),
    );
    let changed = entries.as_slice() != [value];
    let passphrase = |entry: &&str| kind(entry) == Some(KeyKind::Passphrase);
    if !keyed && changed && !entries.is_empty() && (!comma || entries.iter().any(passphrase)) {
        out.push(PreviousSecret {
            label: LIST.into(),
            value,
            as_written: true,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::{numbered, previous_secrets};

    const HEX: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
    const FIRST: &str = "the first passphrase that we used in 2024";
    const SECOND: &str = "and the second one that we used in 2025";

    fn read(list: &str) -> Vec<&str> {
        previous_secrets(Some(list), Vec::new(), false)
            .expect("resolves")
            .into_iter()
            .map(|s| s.value)
            .collect()
    }

    #[test]
    fn a_list_of_raw_keys_is_only_a_list() {
        let list = format!(" {HEX} ,\t{HEX}\n, ,");
        assert_eq!(read(&list), [HEX, HEX]);
        assert_eq!(read(HEX), [HEX]);
    }

    #[test]
    fn a_secret_as_written_is_its_one_entry() {
        assert_eq!(read(FIRST), [FIRST]);
    }

    #[test]
    fn a_cut_or_trimmed_secret_brings_the_whole_value_last() {
        let a = "a passphrase whose halves are each long";
        let b = " enough to be passphrases of their own";
        let comma = format!("{a},{b}");
        assert_eq!(read(&comma), [a, b.trim(), comma.as_str()]);
        let spaced = format!("{FIRST}\n");
        assert_eq!(read(&spaced), [FIRST, spaced.as_str()]);
        // a key with a line break is a passphrase to SveltyCMS: trimmed, it is a key; as written, the passphrase
        let key_with_break = format!("{HEX}\n");
        assert_eq!(read(&key_with_break), [HEX, key_with_break.as_str()]);
        let two = format!("{FIRST},{SECOND}");
        assert_eq!(read(&two), [FIRST, SECOND, two.as_str()]);
        let mixed = format!("{HEX},{FIRST}");
        assert_eq!(read(&mixed), [HEX, FIRST, mixed.as_str()]);
        // numbered variables come before it, in order of n; a keyed ring gets no secret it was not given
        let all = previous_secrets(Some(&spaced), vec![(10, SECOND), (2, HEX), (3, "")], false)
            .expect("resolves");
        let labels: Vec<(&str, &str)> = all.iter().map(|s| (s.label.as_str(), s.value)).collect();
        assert_eq!(
            labels,
            [
                ("ENCRYPTION_KEY_PREVIOUS[0]", FIRST),
                ("ENCRYPTION_KEY_PREVIOUS_2", HEX),
                ("ENCRYPTION_KEY_PREVIOUS_10", SECOND),
                ("ENCRYPTION_KEY_PREVIOUS", spaced.as_str()),
            ]
        );
        assert_eq!(
            previous_secrets(Some(&spaced), Vec::new(), true)
                .expect("resolves")
                .len(),
            1
        );
    }

    #[test]
    fn a_short_entry_beside_a_comma_names_the_numbered_variables() {
        let e = previous_secrets(
            Some("the first passphrase, chosen by the admin in 2024"),
            Vec::new(),
            false,
        )
        .expect_err("refused");
        assert_eq!(e.code(), "ALE_INVALID_KEY");
        let text = e.to_string();
        assert!(
            text.contains("ENCRYPTION_KEY_PREVIOUS[0]")
                && text.contains("ENCRYPTION_KEY_PREVIOUS_1"),
            "{text}"
        );
        assert!(
            !text.contains("chosen by"),
            "the value is not quoted: {text}"
        );
        // without a comma, a short value is the ring's to refuse, as any short secret
        assert_eq!(read("short"), ["short"]);
        assert!(read("").is_empty());
    }

    #[test]
    fn numbered_names() {
        assert_eq!(numbered("ENCRYPTION_KEY_PREVIOUS_1"), Some(Ok(1)));
        assert_eq!(
            numbered("ENCRYPTION_KEY_PREVIOUS_123456789"),
            Some(Ok(123_456_789))
        );
        for name in [
            "ENCRYPTION_KEY_PREVIOUS",
            "ENCRYPTION_KEY_PREVIOUS_",
            "ENCRYPTION_KEY_PREVIOUS_1a",
            "ENCRYPTION_KEY_PREVIOUS_+1",
            "XENCRYPTION_KEY_PREVIOUS_1",
            "ENCRYPTION_KEY_PREVIOUSX1",
            "ENCRYPTION_KEY",
        ] {
            assert_eq!(numbered(name), None, "{name}");
        }
        // names that look like one and would be passed over: refused, naming the variable
        for name in [
            "ENCRYPTION_KEY_PREVIOUS_0",
            "ENCRYPTION_KEY_PREVIOUS_01",
            "ENCRYPTION_KEY_PREVIOUS_1234567890",
            "encryption_key_previous_1",
            "Encryption_Key_Previous_2",
        ] {
            let e = numbered(name)
                .expect("looks numbered")
                .expect_err("refused");
            assert_eq!(e.code(), "ALE_INVALID_KEY");
            assert!(e.to_string().contains(name), "{e}");
        }
    }
}
