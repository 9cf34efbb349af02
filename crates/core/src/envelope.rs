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
//! can decode a JS string without first narrowing it to bytes. Base64 runs on
//! simdutf, which picks AVX-512/AVX2/NEON code at run time.

use simdutf::{Base64Options, ErrorCode, LastChunkHandlingOptions};

use crate::aead::TAG_LEN;
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

/// A character of an envelope: a byte, or a UTF-16 code unit of a JS string.
pub trait CodeUnit: Copy + Eq {
    /// The character as ASCII, or `None` for anything else.
    fn ascii(self) -> Option<u8>;

    /// An index into a 256-entry table: the byte itself, or 0x80 (never an
    /// ASCII character) for a code unit above 0xFF.
    fn table_index(self) -> usize;

    /// Unpadded base64url → bytes, appended to `out`; `None` on a character
    /// outside the alphabet. White space is caught by the caller's length check.
    fn decode_base64(src: &[Self], out: &mut Vec<u8>) -> Option<usize>;
}

impl CodeUnit for u8 {
    fn ascii(self) -> Option<u8> {
        self.is_ascii().then_some(self)
    }

    fn table_index(self) -> usize {
        usize::from(self)
    }

    fn decode_base64(src: &[u8], out: &mut Vec<u8>) -> Option<usize> {
        decode_with(src.len(), out, |dst| {
            // SAFETY: `src` is valid for reads; `dst` has room for the maximal
            // binary length of `src.len()` characters (checked by `decode_with`).
            unsafe {
                simdutf::base64_to_binary(
                    src.as_ptr(),
                    src.len(),
                    dst,
                    Base64Options::Url,
                    LastChunkHandlingOptions::Loose,
                )
            }
        })
    }
}

impl CodeUnit for u16 {
    fn ascii(self) -> Option<u8> {
        u8::try_from(self).ok().filter(u8::is_ascii)
    }

    fn table_index(self) -> usize {
        usize::from(self.min(0x80))
    }

    fn decode_base64(src: &[u16], out: &mut Vec<u8>) -> Option<usize> {
        decode_with(src.len(), out, |dst| {
            // SAFETY: as for `u8`; code units above 0xFF are invalid characters.
            unsafe {
                simdutf::base64_to_binary_utf16(
                    src.as_ptr(),
                    src.len(),
                    dst,
                    Base64Options::Url,
                    LastChunkHandlingOptions::Loose,
                )
            }
        })
    }
}

/// Reserves room in `out` for `chars` characters' worth of bytes, lets
/// `decode` write there, and commits what it wrote.
fn decode_with(
    chars: usize,
    out: &mut Vec<u8>,
    decode: impl FnOnce(*mut u8) -> simdutf::Result,
) -> Option<usize> {
    let start = out.len();
    // Upper bound of simdutf's maximal_binary_length_from_base64.
    crate::scratch::reserve(out, chars / 4 * 3 + 3);
    // SAFETY: `start` is within the allocation just reserved.
    let r = decode(unsafe { out.as_mut_ptr().add(start) });
    if !matches!(r.error, ErrorCode::Success) {
        return None;
    }
    // SAFETY: simdutf initialized `r.count` bytes after `start`.
    unsafe { out.set_len(start + r.count) };
    Some(r.count)
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

/// Unpadded base64 length of `n` bytes.
pub const fn b64_len(n: usize) -> usize {
    (n / 3) * 4 + [0, 2, 3][n % 3]
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

fn encode_append(src: &[u8], out: &mut Vec<u8>) {
    let start = out.len();
    crate::scratch::reserve(out, b64_len(src.len()));
    // SAFETY: `src` is valid for reads; `out` has room for the unpadded
    // base64url length of `src` after `start`, which is what simdutf writes.
    let written = unsafe {
        simdutf::binary_to_base64(
            src.as_ptr(),
            src.len(),
            out.as_mut_ptr().add(start),
            Base64Options::Url,
        )
    };
    debug_assert_eq!(written, b64_len(src.len()));
    // SAFETY: simdutf initialized `written` bytes after `start`.
    unsafe { out.set_len(start + written) };
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
    let iv_bytes = decode_short(iv, iv_len.bytes(), "the IV is not canonical base64url")?;
    let tag_bytes = decode_short(tag, TAG_LEN, "the tag is not canonical base64url")?;
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
    decode_short(text, KEY_ID_LEN, "the key id is not canonical base64url")
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

/// Writes the unpadded base64url of `bytes` into `out`, replacing its contents.
pub fn base64url_into(bytes: &[u8], out: &mut Vec<u8>) {
    out.clear();
    encode_append(bytes, out);
}

/// Decodes the ciphertext part into `out` (replacing its contents).
pub fn decode_ciphertext<C: CodeUnit>(b64: &[C], out: &mut Vec<u8>) -> Result<()> {
    out.clear();
    let expected = decoded_len(b64).ok_or(AleError::MalformedEnvelope(
        "the ciphertext has an impossible base64url length",
    ))?;
    match C::decode_base64(b64, out) {
        Some(n) if n == expected => Ok(()),
        _ => {
            out.clear();
            Err(if b64.iter().any(|c| c.ascii() == Some(b':')) {
                AleError::MalformedEnvelope("the ciphertext holds a ':': too many parts")
            } else {
                AleError::MalformedEnvelope("the ciphertext is not canonical base64url")
            })
        }
    }
}

/// The byte length `b64` decodes to when it is canonical unpadded base64url:
/// `None` for a length no encoder produces, or non-zero bits in the last
/// character that a decoder would silently drop. A decoder that skips white
/// space or padding returns fewer bytes than this, which the callers reject.
fn decoded_len<C: CodeUnit>(b64: &[C]) -> Option<usize> {
    let (whole, unused_bits_mask, tail) = match b64.len() % 4 {
        0 => return Some(b64.len() / 4 * 3),
        1 => return None,
        2 => (b64.len() / 4 * 3, 0x0F, 1),
        _ => (b64.len() / 4 * 3, 0x03, 2),
    };
    let last = b64.last().and_then(|c| c.ascii()).and_then(sextet)?;
    (last & unused_bits_mask == 0).then_some(whole + tail)
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
    let iv_bytes = decode_short(iv, iv_len.bytes(), "").ok()?;
    let tag_bytes = decode_short(tag, TAG_LEN, "").ok()?;
    Some(Parts {
        key_id,
        iv: Iv::from_padded(iv_bytes, iv_len),
        tag: tag_bytes,
        ciphertext_b64,
    })
}

/// Accepts `v1:` and `v2:` and returns what follows; classifies every other prefix.
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
        .count();
    if digits == 0 || ascii(1 + digits) != Some(b':') {
        return Err(not_envelope);
    }
    if ascii(1) == Some(b'0') && digits > 1 {
        return Err(AleError::MalformedEnvelope(
            "the version number has a leading zero",
        ));
    }
    let version = (1..=digits).filter_map(ascii).fold(0u64, |v, d| {
        v.saturating_mul(10).saturating_add(u64::from(d - b'0'))
    });
    Err(AleError::UnsupportedVersion(version))
}

/// Decodes a short part (an IV, a tag, a key id: at most 16 bytes) that
/// must decode to exactly `len` bytes, into the first `len` bytes of a
/// zeroed 16-byte array; canonical form enforced by `decoded_len`.
///
/// The bits are gathered in one register, four characters at a time, and
/// leave in one 16-byte store, so that `open_into`'s 16-byte read of the IV
/// forwards from it (docs/performance.md, "Short parts of an envelope"). No
/// allocation, no branch on the characters' values.
fn decode_short<C: CodeUnit>(src: &[C], len: usize, bad: &'static str) -> Result<[u8; 16]> {
    if len == 0 || len > 16 || decoded_len(src) != Some(len) {
        return Err(AleError::MalformedEnvelope(bad));
    }
    let mut invalid = 0u8;
    let mut sextet = |c: &C| {
        let v = SEXTETS[c.table_index()];
        invalid |= v;
        u32::from(v & 0x3F)
    };
    let quads = src.chunks_exact(4);
    let tail = quads.remainder();
    let mut bits = 0u128;
    for quad in quads {
        bits = (bits << 24) | u128::from(quad.iter().fold(0u32, |n, c| (n << 6) | sextet(c)));
    }
    // The last character's bits past the last byte (`decoded_len` checked
    // that they are zero) are dropped before they are shifted in, so that
    // 22 characters fit: 132 bits, 128 of them data.
    let unused = 6 * src.len() - 8 * len;
    let last = tail.iter().fold(0u32, |n, c| (n << 6) | sextet(c)) >> unused;
    bits = (bits << (6 * tail.len() - unused)) | u128::from(last);
    if invalid & NOT_BASE64 != 0 {
        return Err(AleError::MalformedEnvelope(bad));
    }
    // The bytes to the top: `len` is 1..=16, so the shift is below 128.
    Ok((bits << (128 - 8 * len)).to_be_bytes())
}

/// Marks a byte outside the base64url alphabet in [`SEXTETS`].
const NOT_BASE64: u8 = 0x80;

/// The base64url value of every byte, or [`NOT_BASE64`].
static SEXTETS: [u8; 256] = {
    let mut table = [NOT_BASE64; 256];
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut i = 0u8;
    while (i as usize) < alphabet.len() {
        table[alphabet[i as usize] as usize] = i;
        i += 1;
    }
    table
};

fn sextet(c: u8) -> Option<u8> {
    let v = SEXTETS[usize::from(c)];
    (v & NOT_BASE64 == 0).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    const IV: &str = "AAECAwQFBgcICQoL"; // 00..0b
    const TAG: &str = "AAECAwQFBgcICQoLDA0ODw"; // 00..0f

    /// The code of parsing and decoding `s`, as bytes and as UTF-16; both must agree.
    fn code(s: &str) -> &'static str {
        fn run<C: CodeUnit>(units: &[C]) -> &'static str {
            match parse(units) {
                Ok(p) => {
                    let mut v = Vec::new();
                    decode_ciphertext(p.ciphertext_b64, &mut v)
                        .err()
                        .map_or("ok", |e| e.code())
                }
                Err(e) => e.code(),
            }
        }
        let bytes = run(s.as_bytes());
        let wide: Vec<u16> = s.encode_utf16().collect();
        assert_eq!(bytes, run(&wide), "u8 and u16 parsers disagree on {s:?}");
        bytes
    }

    const IV16: &str = "AAECAwQFBgcICQoLDA0ODw"; // 00..0f

    #[test]
    fn a_parse_with_or_without_ids_gives_what_the_scan_gives() {
        let id = [0xA5u8; KEY_ID_LEN];
        let known = [(id, key_id_text(&id))];
        let text = String::from_utf8(key_id_text(&id).to_vec()).expect("ASCII");
        assert_eq!(text, "paWlpaWlpaWlpaWlpaWlpQ");
        for envelope in [
            format!("v2:{text}:{IV}:{TAG}:aGkhPw"),
            // another id, a non-canonical spelling of the known one, a bad character
            format!("v2:AAAAAAAAAAAAAAAAAAAAAA:{IV}:{TAG}:aGkhPw"),
            format!("v2:paWlpaWlpaWlpaWlpaWlpR:{IV}:{TAG}:aGkhPw"),
            format!("v2:paWlpaWlpaWlpaWlpaWlp=:{IV}:{TAG}:aGkhPw"),
            format!("v2:{text}:{IV}:{TAG}"),
            format!("v1:{IV}:{TAG}:aGkhPw"),
            // what the in-place parse of a known id takes, and what it
            // must hand to the scan: the other IV length, separators one
            // place off, a ':' or a bad character inside a part, an empty
            // ciphertext, a cut value
            format!("v2:{text}:{IV16}:{TAG}:aGkhPw"),
            format!("v2:{text}:{IV16}:{TAG}:"),
            format!("v2:{text}:AAECAwQFBgcICQoL:DA0ODw:{TAG}:aGkhPw"),
            format!("v2:{text}:AAECAwQF:gcICQoL:{TAG}:aGkhPw"),
            format!("v2:{text}:AAECAwQFBgcICQo=:{TAG}:aGkhPw"),
            format!("v2:{text}:{IV}:AAECAwQFBgcICQoLDA0OD:w:aGkhPw"),
            format!("v2:{text}:{IV}:AAECAwQFBgcICQoLDA0ODx:aGkhPw"),
            format!("v2:{text}:{IV}:{TAG}aGkhPw"),
            format!("v2:{text}:{IV}:"),
            format!("v2:{text}:"),
            format!("v2:{text}"),
            format!("v2:{text}::{IV}:{TAG}:aGkhPw"),
            // the same for v1, which takes the in-place parse with no id
            format!("v1:{IV16}:{TAG}:aGkhPw"),
            format!("v1:{IV16}:{TAG}:"),
            format!("v1:AAECAwQFBgcICQoL:DA0ODw:{TAG}:aGkhPw"),
            format!("v1:AAECAwQF:gcICQoL:{TAG}:aGkhPw"),
            format!("v1:AAECAwQFBgcICQo=:{TAG}:aGkhPw"),
            format!("v1:{IV}:AAECAwQFBgcICQoLDA0OD:w:aGkhPw"),
            format!("v1:{IV}:AAECAwQFBgcICQoLDA0ODx:aGkhPw"),
            format!("v1:{IV}:{TAG}aGkhPw"),
            format!("v1:{IV}:{TAG}:aGk:hPw"),
            format!("v1:{IV}:"),
            "v1:".to_string(),
            format!("v1::{IV}:{TAG}:aGkhPw"),
        ] {
            let wide: Vec<u16> = envelope.encode_utf16().collect();
            for ids in [&known[..], &[]] {
                assert_eq!(
                    parse_with(envelope.as_bytes(), ids),
                    parse_by_scan(envelope.as_bytes(), ids),
                    "{envelope}"
                );
                assert_eq!(
                    parse_with(&wide[..], ids),
                    parse_by_scan(&wide[..], ids),
                    "{envelope}"
                );
            }
            assert_eq!(
                parse_with(envelope.as_bytes(), &known),
                parse(envelope.as_bytes()),
                "{envelope}"
            );
            assert_eq!(
                parse_with(&wide[..], &known),
                parse(&wide[..]),
                "{envelope}"
            );
        }
        let named_envelope = format!("v2:{text}:{IV}:{TAG}:aGkhPw");
        let named = parse_with(named_envelope.as_bytes(), &known).expect("parses");
        assert_eq!(named.key_id, Some(id));
        // A code unit above 0xFF where the id's text has an ASCII character.
        let mut wide: Vec<u16> = format!("v2:{text}:{IV}:{TAG}:aGkhPw")
            .encode_utf16()
            .collect();
        wide[3] = 0x170;
        assert_eq!(parse_with(&wide[..], &known), parse(&wide[..]));
        assert!(parse(&wide[..]).is_err());
    }

    #[test]
    fn round_trips_the_layout() {
        let bytes: [u8; 16] = core::array::from_fn(|i| u8::try_from(i).expect("small"));
        let tag = bytes;
        for (iv, iv_b64) in [(&bytes[..12], IV), (&bytes[..], IV16)] {
            let iv = Iv::from_slice(iv).expect("12 or 16");
            let mut out = Vec::new();
            write(&mut out, None, &iv, &tag, b"hi!?");
            assert_eq!(out, format!("v1:{iv_b64}:{TAG}:aGkhPw").as_bytes());
            assert_eq!(out.len(), encoded_len(iv.len(), false, 4));
            let p = parse(&out[..]).expect("parses");
            assert_eq!(
                (p.key_id, p.iv, p.tag, p.ciphertext_b64),
                (None, iv, tag, &b"aGkhPw"[..])
            );
            write(&mut out, Some(&tag), &iv, &tag, b"hi!?");
            assert_eq!(out, format!("v2:{TAG}:{iv_b64}:{TAG}:aGkhPw").as_bytes());
            assert_eq!(out.len(), encoded_len(iv.len(), true, 4));
            let p = parse(&out[..]).expect("parses");
            assert_eq!(
                (p.key_id, p.iv, p.tag, p.ciphertext_b64),
                (Some(tag), iv, tag, &b"aGkhPw"[..])
            );
        }
        assert_eq!(overhead(IvLength::Bits128, false), 49);
        assert_eq!(overhead(IvLength::Bits96, false), 43);
        assert_eq!(overhead(IvLength::Bits96, true), 66);
    }

    #[test]
    fn v2_has_exactly_five_parts_and_a_canonical_key_id() {
        assert_eq!(code(&format!("v2:{TAG}:{IV}:{TAG}:aGkhPw")), "ok");
        assert_eq!(code(&format!("v2:{TAG}:{IV}:{TAG}:")), "ok");
        for bad in [
            format!("v2:{IV}:{TAG}:aGkhPw"),
            format!("v2:{TAG}:{IV}:{TAG}"),
            format!("v2:{TAG}:{IV}:{TAG}:aGk:hPw"),
            format!("v2::{IV}:{TAG}:"),
            format!("v2:{TAG}A:{IV}:{TAG}:"),
            format!("v2:{}:{IV}:{TAG}:", &TAG[..21]),
            format!("v2:AAECAwQFBgcICQoLDA0ODx:{IV}:{TAG}:"),
            format!("v2:AAECAwQFBgcICQoLDA0OD+:{IV}:{TAG}:"),
            format!("v2:{TAG}"),
            "v2:".to_string(),
        ] {
            assert_eq!(code(&bad), "ALE_MALFORMED_ENVELOPE", "{bad:?}");
        }
    }

    #[test]
    fn empty_ciphertext_is_valid() {
        assert_eq!(code(&format!("v1:{IV}:{TAG}:")), "ok");
    }

    #[test]
    fn prefix_must_be_v_digits_colon() {
        for s in [
            "",
            "v",
            "v:",
            "1:a:b:c",
            "V1:x:y:z",
            "va:x",
            "v1",
            "v1x:",
            " v1:",
            "plain text",
        ] {
            assert_eq!(code(s), "ALE_MALFORMED_ENVELOPE", "{s:?}");
        }
        assert_eq!(code("v01:a:b:c"), "ALE_MALFORMED_ENVELOPE");
        // a character whose low byte is 'v' (U+0176) is not 'v'
        assert_eq!(
            code(&format!("\u{0176}1:{IV}:{TAG}:")),
            "ALE_MALFORMED_ENVELOPE"
        );
    }

    #[test]
    fn other_versions_are_unsupported() {
        for (s, v) in [
            ("v0:x", 0),
            ("v3:a:b:c", 3),
            ("v10:", 10),
            ("v99999999999999999999999:", u64::MAX),
        ] {
            assert_eq!(
                parse(s.as_bytes()).err(),
                Some(AleError::UnsupportedVersion(v)),
                "{s:?}"
            );
        }
    }

    #[test]
    fn exactly_four_parts() {
        assert_eq!(code(&format!("v1:{IV}:{TAG}")), "ALE_MALFORMED_ENVELOPE");
        assert_eq!(code(&format!("v1:{IV}")), "ALE_MALFORMED_ENVELOPE");
        assert_eq!(
            code(&format!("v1:{IV}:{TAG}:AAAA:AAAA")),
            "ALE_MALFORMED_ENVELOPE"
        );
        assert_eq!(code(&format!("v1:{IV}:{TAG}::")), "ALE_MALFORMED_ENVELOPE");
    }

    #[test]
    fn iv_must_be_16_or_22_chars_and_tag_22() {
        assert_eq!(code(&format!("v1:{IV}:{TAG}:")), "ok");
        assert_eq!(code(&format!("v1:{IV16}:{TAG}:")), "ok");
        for iv in [
            "",
            &IV[..15],
            &format!("{IV}A"),
            &IV[..8],
            &format!("{IV}{IV}"),
            &IV16[..21],
            &format!("{IV16}A"),
            &IV16[..11],
            &format!("{IV16}{IV16}"),
            // 22 characters with stray bits in the last one
            "AAECAwQFBgcICQoLDA0ODx",
        ] {
            assert_eq!(
                code(&format!("v1:{iv}:{TAG}:")),
                "ALE_MALFORMED_ENVELOPE",
                "iv {iv:?}"
            );
        }
        for tag in [
            "",
            &TAG[..21],
            &format!("{TAG}A"),
            &TAG[..11],
            &format!("{TAG}{TAG}"),
        ] {
            assert_eq!(
                code(&format!("v1:{IV}:{tag}:")),
                "ALE_MALFORMED_ENVELOPE",
                "tag {tag:?}"
            );
        }
    }

    #[test]
    fn padding_white_space_and_foreign_characters_are_rejected() {
        for ct in [
            "aGk=",
            "aGkhPw==",
            "aGk+",
            "aGk/",
            "aG k",
            "aGkhP w",
            "aGk\n",
            "aGkh\tPw",
            "aGké",
            "aG\u{0100}",
        ] {
            assert_eq!(
                code(&format!("v1:{IV}:{TAG}:{ct}")),
                "ALE_MALFORMED_ENVELOPE",
                "{ct:?}"
            );
        }
        assert_eq!(
            code(&format!("v1:AAECAwQFBgcICQo+:{TAG}:")),
            "ALE_MALFORMED_ENVELOPE"
        );
        assert_eq!(
            code(&format!("v1:AAECAwQFBgcI CQo:{TAG}:")),
            "ALE_MALFORMED_ENVELOPE"
        );
        assert_eq!(
            code(&format!("v1:{IV}:AAECAwQFBgcICQoLDA0OD=:")),
            "ALE_MALFORMED_ENVELOPE"
        );
    }

    #[test]
    fn non_canonical_trailing_bits_are_rejected() {
        // "aGkhPw" is canonical; "aGkhPx" decodes to the same bytes with a stray bit.
        assert_eq!(code(&format!("v1:{IV}:{TAG}:aGkhPw")), "ok");
        assert_eq!(
            code(&format!("v1:{IV}:{TAG}:aGkhPx")),
            "ALE_MALFORMED_ENVELOPE"
        );
        assert_eq!(code(&format!("v1:{IV}:{TAG}:aGk")), "ok");
        assert_eq!(
            code(&format!("v1:{IV}:{TAG}:aGl")),
            "ALE_MALFORMED_ENVELOPE"
        );
        // the tag's last character carries 2 unused bits
        assert_eq!(
            code(&format!("v1:{IV}:AAECAwQFBgcICQoLDA0ODx:")),
            "ALE_MALFORMED_ENVELOPE"
        );
        // one character short of a byte
        assert_eq!(
            code(&format!("v1:{IV}:{TAG}:aGkhP")),
            "ALE_MALFORMED_ENVELOPE"
        );
    }

    #[test]
    fn agrees_with_the_base64_crate() {
        use base64::engine::general_purpose::URL_SAFE_NO_PAD;
        use base64::Engine;
        let data: Vec<u8> = (0..=255u8).cycle().take(1200).collect();
        for n in 0..data.len() {
            let mut out = Vec::new();
            write(
                &mut out,
                None,
                &Iv::from_slice(&[7; 16]).expect("16"),
                &[9; 16],
                &data[..n],
            );
            let p = parse(&out[..]).expect("parses");
            assert_eq!(
                p.ciphertext_b64,
                URL_SAFE_NO_PAD.encode(&data[..n]).as_bytes()
            );
            let mut back = Vec::new();
            decode_ciphertext(p.ciphertext_b64, &mut back).expect("decodes");
            assert_eq!(back, &data[..n]);
            let wide: Vec<u16> = p.ciphertext_b64.iter().map(|&b| u16::from(b)).collect();
            decode_ciphertext(&wide[..], &mut back).expect("decodes from UTF-16");
            assert_eq!(back, &data[..n]);
        }
    }
}
