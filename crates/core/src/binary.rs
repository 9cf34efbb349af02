//! The binary form of an envelope, for columns that hold bytes (`BLOB`,
//! `bytea`, `LONGBLOB`): the parts of the text form without base64, so a
//! value takes 34 bytes more than its plaintext (30 with a 12-byte IV)
//! instead of a third more plus 49 characters.
//!
//! | offset | length | content |
//! | --- | --- | --- |
//! | 0 | 1 | version: `0x01` (`0x03`–`0x1F` are kept for later layouts) |
//! | 1 | 1 | IV length in bytes: 16 or 12 |
//! | 2 | 16 or 12 | IV |
//! | 18 or 14 | 16 | tag |
//! | 34 or 30 | the rest | ciphertext (may be empty) |
//!
//! Version `0x02`, the binary form of a `v2:` envelope, puts the 16-byte key
//! id right after the version byte; everything else moves 16 bytes along.
//!
//! It converts losslessly to and from the text form ([`from_text`],
//! [`to_text`]), with no key.

use crate::aead::TAG_LEN;
use crate::envelope::{self, CodeUnit, KeyId, KEY_ID_LEN};
use crate::error::{AleError, Result};
use crate::iv::{Iv, IvLength};

/// The version byte of a value under a key without an id.
pub const VERSION_V1: u8 = 1;
/// The version byte of a value under a key with an id.
pub const VERSION_V2: u8 = 2;
/// First bytes kept for later layouts (`ALE_UNSUPPORTED_VERSION`); every
/// other first byte is `ALE_MALFORMED_ENVELOPE`.
pub const FUTURE_VERSIONS_FROM: u8 = 3;
pub const FUTURE_VERSIONS_TO: u8 = 0x1F;

/// Bytes before the ciphertext: version, key id (v2), IV length, IV, tag.
pub const fn header_len(iv: IvLength, key_id: bool) -> usize {
    let id = if key_id { KEY_ID_LEN } else { 0 };
    2 + id + iv.bytes() + TAG_LEN
}

/// The parts of a binary envelope.
#[derive(Debug, PartialEq, Eq)]
pub struct Parts<'a> {
    /// `Some` at version 2.
    pub key_id: Option<KeyId>,
    pub iv: Iv,
    pub tag: [u8; TAG_LEN],
    pub ciphertext: &'a [u8],
}

/// Splits and checks a binary envelope: `ALE_UNSUPPORTED_VERSION` for a first
/// byte from 0x03 to 0x1F, and `ALE_MALFORMED_ENVELOPE` for any other first
/// byte but 0x01 and 0x02, a value too short, or an IV length other than 12
/// or 16.
pub fn parse(bytes: &[u8]) -> Result<Parts<'_>> {
    let malformed = AleError::MalformedBinary;
    let (&version, rest) = bytes.split_first().ok_or(malformed("it is empty"))?;
    let (key_id, rest) = match version {
        VERSION_V1 => (None, rest),
        VERSION_V2 => {
            let (id, rest) = rest
                .split_first_chunk::<KEY_ID_LEN>()
                .ok_or(malformed("it ends inside its key id"))?;
            (Some(*id), rest)
        }
        // A later layout would take a small version number; any other first
        // byte (text, plaintext) is not a binary envelope at all.
        FUTURE_VERSIONS_FROM..=FUTURE_VERSIONS_TO => {
            return Err(AleError::UnsupportedVersion(u64::from(version)))
        }
        _ => return Err(malformed("its first byte is not a version (0x01 or 0x02)")),
    };
    let (&iv_len, rest) = rest
        .split_first()
        .ok_or(malformed("it ends after its version byte"))?;
    let iv_len = IvLength::from_bytes(usize::from(iv_len))
        .ok_or(malformed("its IV length byte is not 16 or 12"))?;
    if rest.len() < iv_len.bytes() + TAG_LEN {
        return Err(malformed(
            "the binary envelope is shorter than its IV and tag",
        ));
    }
    let (iv, rest) = rest.split_at(iv_len.bytes());
    let (tag, ciphertext) = rest.split_at(TAG_LEN);
    let mut tag_bytes = [0u8; TAG_LEN];
    tag_bytes.copy_from_slice(tag);
    Ok(Parts {
        key_id,
        iv: Iv::from_slice(iv).ok_or(AleError::Internal)?,
        tag: tag_bytes,
        ciphertext,
    })
}

/// Writes version, key id (when given), IV length, IV and tag into
/// `header`, which is exactly [`header_len`] bytes.
pub fn write_header(header: &mut [u8], key_id: Option<&KeyId>, iv: &Iv, tag: &[u8; TAG_LEN]) {
    let iv = iv.as_bytes();
    let rest = match key_id {
        None => {
            header[0] = VERSION_V1;
            &mut header[1..]
        }
        Some(id) => {
            header[0] = VERSION_V2;
            header[1..=KEY_ID_LEN].copy_from_slice(id);
            &mut header[1 + KEY_ID_LEN..]
        }
    };
    // 12 or 16.
    rest[0] = iv.len().to_le_bytes()[0];
    rest[1..=iv.len()].copy_from_slice(iv);
    rest[1 + iv.len()..].copy_from_slice(tag);
}

/// The binary form of the text envelope `text`, into `out` (replacing its
/// contents). Fails as parsing the text would.
pub fn from_text<C: CodeUnit>(text: &[C], out: &mut Vec<u8>) -> Result<()> {
    let parts = envelope::parse(text)?;
    let header = header_len(parts.iv.len(), parts.key_id.is_some());
    let mut ciphertext = Vec::new();
    envelope::decode_ciphertext(parts.ciphertext_b64, &mut ciphertext)?;
    out.clear();
    crate::scratch::reserve(out, header + ciphertext.len());
    out.resize(header, 0);
    write_header(out, parts.key_id.as_ref(), &parts.iv, &parts.tag);
    out.extend_from_slice(&ciphertext);
    Ok(())
}

/// The text form of the binary envelope `bytes`, into `out` (replacing its
/// contents). Fails as [`parse`] would.
pub fn to_text(bytes: &[u8], out: &mut Vec<u8>) -> Result<()> {
    let parts = parse(bytes)?;
    envelope::write(
        out,
        parts.key_id.as_ref(),
        &parts.iv,
        &parts.tag,
        parts.ciphertext,
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT16: &str = "v1:AAECAwQFBgcICQoLDA0ODw:AAECAwQFBgcICQoLDA0ODw:aGkhPw";
    const TEXT12: &str = "v1:AAECAwQFBgcICQoL:AAECAwQFBgcICQoLDA0ODw:";

    fn bytes_of(text: &str) -> Vec<u8> {
        let mut out = Vec::new();
        from_text(text.as_bytes(), &mut out).expect("converts");
        out
    }

    #[test]
    fn converts_both_ways_losslessly() {
        for (text, iv_len, ct) in [(TEXT16, 16u8, &b"hi!?"[..]), (TEXT12, 12, &b""[..])] {
            let bytes = bytes_of(text);
            assert_eq!(bytes[..2], [1, iv_len]);
            assert_eq!(bytes.len(), 2 + usize::from(iv_len) + 16 + ct.len());
            assert_eq!(&bytes[bytes.len() - ct.len()..], ct);
            let wide: Vec<u16> = text.encode_utf16().collect();
            let mut from_wide = Vec::new();
            from_text(&wide[..], &mut from_wide).expect("converts from UTF-16");
            assert_eq!(from_wide, bytes);
            let mut back = Vec::new();
            to_text(&bytes, &mut back).expect("converts back");
            assert_eq!(back, text.as_bytes());
        }
    }

    #[test]
    fn v2_carries_its_key_id_both_ways() {
        let text = "v2:AAECAwQFBgcICQoLDA0ODw:AAECAwQFBgcICQoL:AAECAwQFBgcICQoLDA0ODw:aGkhPw";
        let bytes = bytes_of(text);
        let id: [u8; 16] = core::array::from_fn(|i| u8::try_from(i).expect("small"));
        assert_eq!(bytes[0], 2);
        assert_eq!(bytes[1..17], id);
        assert_eq!(bytes[17], 12);
        assert_eq!(bytes.len(), header_len(IvLength::Bits96, true) + 4);
        let parts = parse(&bytes).expect("parses");
        assert_eq!(parts.key_id, Some(id));
        assert_eq!(parts.ciphertext, b"hi!?");
        let mut back = Vec::new();
        to_text(&bytes, &mut back).expect("converts back");
        assert_eq!(back, text.as_bytes());
        for cut in [1, 16, 17, 18, 29, 45] {
            assert_eq!(
                parse(&bytes[..cut]).err().map(|e| e.code()),
                Some("ALE_MALFORMED_ENVELOPE"),
                "cut at {cut}"
            );
        }
        assert!(parse(&bytes[..46]).is_ok(), "an empty ciphertext is valid");
    }

    #[test]
    fn malformed_and_unsupported_bytes_are_coded() {
        let good = bytes_of(TEXT16);
        let code = |b: &[u8]| parse(b).err().map(|e| e.code());
        assert_eq!(code(&good), None);
        assert_eq!(code(&[]), Some("ALE_MALFORMED_ENVELOPE"));
        assert_eq!(code(&[1]), Some("ALE_MALFORMED_ENVELOPE"));
        assert_eq!(code(&good[..33]), Some("ALE_MALFORMED_ENVELOPE"));
        assert_eq!(code(&good[..34]), None, "an empty ciphertext is valid");
        for iv_len in [0u8, 1, 11, 13, 15, 17, 32, 255] {
            let mut b = good.clone();
            b[1] = iv_len;
            assert_eq!(
                code(&b),
                Some("ALE_MALFORMED_ENVELOPE"),
                "IV length {iv_len}"
            );
        }
        for v in [0u8, 0x20, 0x76, 0x80, 255] {
            let mut b = good.clone();
            b[0] = v;
            assert_eq!(
                code(&b),
                Some("ALE_MALFORMED_ENVELOPE"),
                "first byte {v:#x}"
            );
        }
        for v in [3u8, 4, 0x1F] {
            let mut b = good.clone();
            b[0] = v;
            assert_eq!(
                parse(&b).err(),
                Some(AleError::UnsupportedVersion(u64::from(v)))
            );
        }
        // text (a text envelope, plaintext) handed over as bytes is malformed, never read as text
        assert_eq!(code(TEXT16.as_bytes()), Some("ALE_MALFORMED_ENVELOPE"));
        assert_eq!(code(b"hello"), Some("ALE_MALFORMED_ENVELOPE"));
    }
}
