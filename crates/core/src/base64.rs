//! Unpadded base64url (RFC 4648 §5), strict: one spelling per byte string.
//!
//! Long parts (a ciphertext) run on simdutf, which picks AVX-512/AVX2/NEON
//! code at run time; short ones (an IV, a tag, a key id) on a table and one
//! 128-bit register ([`decode_short`]). Both read bytes or UTF-16 code units
//! ([`CodeUnit`]), so the addon can decode a JS string without first
//! narrowing it to bytes. Canonical form is checked by [`decoded_len`]: a
//! decoder that skips white space or padding returns fewer bytes than it
//! says, which callers refuse.

use simdutf::{Base64Options, ErrorCode, LastChunkHandlingOptions};

/// A character of base64url text: a byte, or a UTF-16 code unit of a JS string.
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

/// Unpadded base64 length of `n` bytes.
pub const fn b64_len(n: usize) -> usize {
    (n / 3) * 4 + [0, 2, 3][n % 3]
}

/// Appends the unpadded base64url of `src` to `out`.
pub fn encode_append(src: &[u8], out: &mut Vec<u8>) {
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

/// Writes the unpadded base64url of `bytes` into `out`, replacing its contents.
pub fn encode_into(bytes: &[u8], out: &mut Vec<u8>) {
    out.clear();
    encode_append(bytes, out);
}

/// The byte length `b64` decodes to when it is canonical unpadded base64url:
/// `None` for a length no encoder produces, or non-zero bits in the last
/// character that a decoder would silently drop. A decoder that skips white
/// space or padding returns fewer bytes than this, which the callers reject.
pub fn decoded_len<C: CodeUnit>(b64: &[C]) -> Option<usize> {
    let (whole, unused_bits_mask, tail) = match b64.len() % 4 {
        0 => return Some(b64.len() / 4 * 3),
        1 => return None,
        2 => (b64.len() / 4 * 3, 0x0F, 1),
        _ => (b64.len() / 4 * 3, 0x03, 2),
    };
    let last = b64.last().and_then(|c| c.ascii()).and_then(sextet)?;
    (last & unused_bits_mask == 0).then_some(whole + tail)
}

/// Decodes a short part (an IV, a tag, a key id: at most 16 bytes) that
/// must decode to exactly `len` bytes, into the first `len` bytes of a
/// zeroed 16-byte array; `None` for anything not its canonical form.
///
/// The bits are gathered in one register, four characters at a time, and
/// leave in one 16-byte store, so that `open_into`'s 16-byte read of the IV
/// forwards from it (docs/performance.md, "Short parts of an envelope"). No
/// allocation, no branch on the characters' values.
pub fn decode_short<C: CodeUnit>(src: &[C], len: usize) -> Option<[u8; 16]> {
    if len == 0 || len > 16 || decoded_len(src) != Some(len) {
        return None;
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
        return None;
    }
    // The bytes to the top: `len` is 1..=16, so the shift is below 128.
    Some((bits << (128 - 8 * len)).to_be_bytes())
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
