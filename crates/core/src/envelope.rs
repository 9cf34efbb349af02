//! The stored format: `v1:<iv>:<tag>:<ciphertext>`, or
//! `v2:<key id>:<iv>:<tag>:<ciphertext>` for a value sealed under a key that
//! has an id (a tenant's data key), each part unpadded base64url (RFC 4648 §5).
//!
//! Decoding is strict, so that one stored value has exactly one spelling:
//! - `ALE_MALFORMED_ENVELOPE` when the value does not start with `v<digits>:`,
//!   or has other than 4 parts (5 at v2), a key id that is not 22 characters,
//!   an IV that is not 16 or 22, a tag that is not 22, padding, a character
//!   outside the alphabet (white space included), or non-zero trailing bits;
//! - `ALE_UNSUPPORTED_VERSION` for any version other than 1 and 2.
//!
//! The parser reads bytes or UTF-16 code units ([`CodeUnit`]), so the addon
//! can decode a JS string without first narrowing it to bytes; the base64url
//! itself is [`crate::base64`]'s.

use crate::aead::TAG_LEN;
pub use crate::base64::{b64_len, CodeUnit};
use crate::base64::{decode_short, decoded_len, encode_append};
use crate::error::{AleError, Result};
use crate::iv::{Iv, IvLength};

/// The version of values sealed under a key without an id.
pub const PREFIX_V1: &[u8] = b"v1:";
/// The version of values sealed under a key with an id.
pub const PREFIX_V2: &[u8] = b"v2:";
/// Base64url length of a 16-byte tag.
pub const TAG_B64_LEN: usize = 22;
/// Bytes of a key id.
pub const KEY_ID_LEN: usize = 16;
/// Base64url length of a key id.
pub const KEY_ID_B64_LEN: usize = 22;

/// The id a key is known by in v2 envelopes: random, not secret.
pub type KeyId = [u8; KEY_ID_LEN];

/// Characters an envelope adds around the ciphertext's base64: `v1:` + iv +
/// `:` + tag + `:`. 49 with a 16-byte IV, 43 with a 12-byte one; a key id
/// (v2) adds 23.
pub const fn overhead(iv: IvLength, key_id: bool) -> usize {
    let id = if key_id { KEY_ID_B64_LEN + 1 } else { 0 };
    PREFIX_V1.len() + id + b64_len(iv.bytes()) + 1 + TAG_B64_LEN + 1
}

/// The parts of an envelope, with key id, IV and tag already decoded.
#[derive(Debug, PartialEq, Eq)]
pub struct Parts<'a, C> {
    /// `Some` at v2: the id of the key the value is sealed under.
    pub key_id: Option<KeyId>,
    pub iv: Iv,
    pub tag: [u8; TAG_LEN],
    /// Still base64url; see [`decode_ciphertext`].
    pub ciphertext_b64: &'a [C],
}

/// Length of the envelope for a plaintext of `len` bytes.
pub const fn encoded_len(iv: IvLength, key_id: bool, len: usize) -> usize {
    overhead(iv, key_id) + b64_len(len)
}

/// Writes `v1:<iv>:<tag>:<ciphertext>`, or `v2:<key id>:…` when `key_id` is
/// given, into `out`, replacing its contents.
pub fn write(
    out: &mut Vec<u8>,
    key_id: Option<&KeyId>,
    iv: &Iv,
    tag: &[u8; TAG_LEN],
    ciphertext: &[u8],
) {
    write_with(out, key_id.map(key_id_text).as_ref(), iv, tag, ciphertext);
}

/// [`write`], given the key id's text form ([`key_id_text`]), which a ring
/// keeps rather than encode it for every value.
pub fn write_with(
    out: &mut Vec<u8>,
    key_id_text: Option<&[u8; KEY_ID_B64_LEN]>,
    iv: &Iv,
    tag: &[u8; TAG_LEN],
    ciphertext: &[u8],
) {
    out.clear();
    crate::scratch::reserve(
        out,
        encoded_len(iv.len(), key_id_text.is_some(), ciphertext.len()),
    );
    match key_id_text {
        None => out.extend_from_slice(PREFIX_V1),
        Some(text) => {
            out.extend_from_slice(PREFIX_V2);
            out.extend_from_slice(text);
            out.push(b':');
        }
    }
    encode_append(iv.as_bytes(), out);
    out.push(b':');
    encode_append(tag, out);
    out.push(b':');
    encode_append(ciphertext, out);
}

/// Splits and checks an envelope. The ciphertext part is checked by
/// [`decode_ciphertext`].
pub fn parse<C: CodeUnit>(envelope: &[C]) -> Result<Parts<'_, C>> {
    parse_with(envelope, &[])
}

/// [`parse`], given the ids a ring holds with their text forms (each
/// text `key_id_text` of its id): a `v2` key id equal to one of those
/// texts is taken without decoding it (a canonical text has one id, and a
/// ring's ids are few). The result is [`parse`]'s, for every input; only
/// the work differs.
pub fn parse_with<'a, C: CodeUnit>(
    envelope: &'a [C],
    known: &[(KeyId, [u8; KEY_ID_B64_LEN])],
) -> Result<Parts<'a, C>> {
    let (version, rest) = strip_version(envelope)?;
    match in_place(version, rest, known) {
        Some(parts) => Ok(parts),
        None => scan(version, rest, known),
    }
}

/// [`parse_with`] by the scan alone, without its in-place shortcut: what
/// the tests and the fuzz target compare the shortcut with.
#[doc(hidden)]
pub fn parse_by_scan<'a, C: CodeUnit>(
    envelope: &'a [C],
    known: &[(KeyId, [u8; KEY_ID_B64_LEN])],
) -> Result<Parts<'a, C>> {
    let (version, rest) = strip_version(envelope)?;
    scan(version, rest, known)
}

/// Splits what follows the version at the `:` it finds, and checks each part.
fn scan<'a, C: CodeUnit>(
    version: Version,
    rest: &'a [C],
    known: &[(KeyId, [u8; KEY_ID_B64_LEN])],
) -> Result<Parts<'a, C>> {
    let colon = |s: &[C]| s.iter().position(|c| c.ascii() == Some(b':'));
    let (key_id, rest) = match version {
        Version::V1 => (None, rest),
        Version::V2 => {
            let end = colon(rest).ok_or(AleError::MalformedEnvelope(
                "expected 5 parts separated by ':'",
            ))?;
            if end != KEY_ID_B64_LEN {
                return Err(AleError::MalformedEnvelope(
                    "the key id must be 22 base64url characters",
                ));
            }
            let text = &rest[..end];
            let same = |(_, t): &&(KeyId, [u8; KEY_ID_B64_LEN])| {
                text.iter().zip(t).all(|(c, b)| c.ascii() == Some(*b))
            };
            let id = match known.iter().find(same) {
                Some((id, _)) => *id,
                None => parse_key_id(text)?,
            };
            (Some(id), &rest[end + 1..])
        }
    };
    let four_parts = || {
        AleError::MalformedEnvelope(if key_id.is_some() {
            "expected 5 parts separated by ':'"
        } else {
            "expected 4 parts separated by ':'"
        })
    };
    let iv_end = colon(rest).ok_or_else(four_parts)?;
    let (iv, rest) = (&rest[..iv_end], &rest[iv_end + 1..]);
    let tag_end = colon(rest).ok_or_else(four_parts)?;
    let (tag, ciphertext_b64) = (&rest[..tag_end], &rest[tag_end + 1..]);
    let iv_len = [IvLength::Bits128, IvLength::Bits96]
        .into_iter()
        .find(|l| b64_len(l.bytes()) == iv.len())
        .ok_or(AleError::MalformedEnvelope(
            "the IV must be 22 or 16 base64url characters (16 or 12 bytes)",
        ))?;
    if tag.len() != TAG_B64_LEN {
        return Err(AleError::MalformedEnvelope(
            "the tag must be 22 base64url characters",
        ));
    }
    let iv_bytes = decode_short(iv, iv_len.bytes()).ok_or(AleError::MalformedEnvelope(
        "the IV is not canonical base64url",
    ))?;
    let tag_bytes = decode_short(tag, TAG_LEN).ok_or(AleError::MalformedEnvelope(
        "the tag is not canonical base64url",
    ))?;
    Ok(Parts {
        key_id,
        iv: Iv::from_padded(iv_bytes, iv_len),
        tag: tag_bytes,
        ciphertext_b64,
    })
}

/// A key id from its text form, 22 base64url characters (strict, as in an
/// envelope).
pub fn parse_key_id<C: CodeUnit>(text: &[C]) -> Result<KeyId> {
    if text.len() != KEY_ID_B64_LEN {
        return Err(AleError::MalformedEnvelope(
            "the key id must be 22 base64url characters",
        ));
    }
    decode_short(text, KEY_ID_LEN).ok_or(AleError::MalformedEnvelope(
        "the key id is not canonical base64url",
    ))
}

/// The text form of a key id, as an envelope writes it.
pub fn key_id_text(id: &KeyId) -> [u8; KEY_ID_B64_LEN] {
    let mut out = Vec::with_capacity(KEY_ID_B64_LEN);
    encode_append(id, &mut out);
    let mut text = [0u8; KEY_ID_B64_LEN];
    text.copy_from_slice(&out);
    text
}

/// Checks the ciphertext part without decoding it into memory we keep.
pub fn check_ciphertext<C: CodeUnit>(b64: &[C]) -> Result<()> {
    decode_ciphertext(b64, &mut Vec::new())
}

/// Decodes the ciphertext part into `out` (replacing its contents).
pub fn decode_ciphertext<C: CodeUnit>(b64: &[C], out: &mut Vec<u8>) -> Result<()> {
    out.clear();
    if b64.len() % 4 == 1 {
        return Err(AleError::MalformedEnvelope(
            "the ciphertext has an impossible base64url length",
        ));
    }
    // Stray bits in the last character (decoded_len's other `None`) are
    // worded as any other spelling that is not canonical, as the fallback
    // words them.
    let refused = || {
        if b64.iter().any(|c| c.ascii() == Some(b':')) {
            AleError::MalformedEnvelope("the ciphertext holds a ':': too many parts")
        } else {
            AleError::MalformedEnvelope("the ciphertext is not canonical base64url")
        }
    };
    let expected = decoded_len(b64).ok_or_else(refused)?;
    match C::decode_base64(b64, out) {
        Some(n) if n == expected => Ok(()),
        _ => {
            out.clear();
            Err(refused())
        }
    }
}

/// Checks only the version prefix: `Ok` for `v1:` and `v2:`, the error
/// [`parse`] would give for any other. Reads a few characters, so a partial
/// copy of a long value is enough.
pub fn check_version<C: CodeUnit>(envelope: &[C]) -> Result<()> {
    strip_version(envelope).map(drop)
}

/// The versions this build reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Version {
    V1,
    V2,
}

/// The common case of [`parse_with`], after the version: for `v2`, a key id
/// the ring holds; then an IV of either length and the tag, each followed
/// by `:` where its length puts it. The separators are looked at where they
/// must be instead of scanned for (docs/performance.md, "Figures behind
/// code comments": the scan's cost). `None` for anything
/// else, which the scan then parses (or refuses, with its message). When
/// this succeeds, the key id equals a text the ring holds and the IV and
/// tag decoded as base64url, none of which has a `:`, so the scan would have
/// found the same separators: the result is the same.
fn in_place<'a, C: CodeUnit>(
    version: Version,
    rest: &'a [C],
    known: &[(KeyId, [u8; KEY_ID_B64_LEN])],
) -> Option<Parts<'a, C>> {
    let is_colon = |s: &[C], i: usize| s.get(i).and_then(|c| c.ascii()) == Some(b':');
    let (key_id, rest) = match version {
        Version::V1 => (None, rest),
        Version::V2 => {
            if !is_colon(rest, KEY_ID_B64_LEN) {
                return None;
            }
            let text = &rest[..KEY_ID_B64_LEN];
            let (id, _) = known
                .iter()
                .find(|(_, t)| text.iter().zip(t).all(|(c, b)| c.ascii() == Some(*b)))?;
            (Some(*id), &rest[KEY_ID_B64_LEN + 1..])
        }
    };
    let iv_len = [IvLength::Bits96, IvLength::Bits128]
        .into_iter()
        .find(|l| is_colon(rest, b64_len(l.bytes())))?;
    let iv_chars = b64_len(iv_len.bytes());
    let (iv, rest) = (&rest[..iv_chars], &rest[iv_chars + 1..]);
    if !is_colon(rest, TAG_B64_LEN) {
        return None;
    }
    let (tag, ciphertext_b64) = (&rest[..TAG_B64_LEN], &rest[TAG_B64_LEN + 1..]);
    let iv_bytes = decode_short(iv, iv_len.bytes())?;
    let tag_bytes = decode_short(tag, TAG_LEN)?;
    Some(Parts {
        key_id,
        iv: Iv::from_padded(iv_bytes, iv_len),
        tag: tag_bytes,
        ciphertext_b64,
    })
}

/// Accepts `v1:` and `v2:` and returns what follows; classifies every other prefix.
/// The most digits a version number may have.
const MAX_VERSION_DIGITS: usize = 19;

fn strip_version<C: CodeUnit>(envelope: &[C]) -> Result<(Version, &[C])> {
    let ascii = |i: usize| envelope.get(i).and_then(|c| c.ascii());
    for (version, prefix) in [(Version::V1, PREFIX_V1), (Version::V2, PREFIX_V2)] {
        if (0..3).all(|i| ascii(i) == Some(prefix[i])) {
            return Ok((version, &envelope[3..]));
        }
    }
    let not_envelope = AleError::MalformedEnvelope("the value does not start with v<digits>:");
    if ascii(0) != Some(b'v') {
        return Err(not_envelope);
    }
    let digits = (1..)
        .take_while(|&i| ascii(i).is_some_and(|b| b.is_ascii_digit()))
        .take(MAX_VERSION_DIGITS + 1)
        .count();
    // Decided on the first 21 characters, before the `:` is looked for: a
    // long value is classified by its head alone (src/js/text.rs), and every
    // version read fits a u64.
    if digits > MAX_VERSION_DIGITS {
        return Err(AleError::MalformedEnvelope(
            "the version number has more than 19 digits",
        ));
    }
    if digits == 0 || ascii(1 + digits) != Some(b':') {
        return Err(not_envelope);
    }
    if ascii(1) == Some(b'0') && digits > 1 {
        return Err(AleError::MalformedEnvelope(
            "the version number has a leading zero",
        ));
    }
    let version = (1..=digits)
        .filter_map(ascii)
        .fold(0u64, |v, d| v * 10 + u64::from(d - b'0'));
    Err(AleError::UnsupportedVersion(version))
}

#[cfg(test)]
mod tests;
