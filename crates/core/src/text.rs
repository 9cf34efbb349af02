//! Decryption as the string APIs want it: the authentic plaintext must be
//! UTF-8, or it is wiped and refused, and the caller learns whether it is
//! ASCII, so that making a JS string needs no second pass over it. Every
//! binding's decrypt (the Node-API call, the thread-pool job, the bun:ffi
//! entry) runs these, so the rule lives here once.

use crate::context::Context;
use crate::envelope::CodeUnit;
use crate::error::{AleError, Result};
use crate::keys::KeyRing;

/// What a text decryption gave: the plaintext is in the caller's `out`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Opened {
    /// The index of the key that opened it (0 = primary).
    pub key: usize,
    /// Whether the plaintext is ASCII (else it is UTF-8 with other characters).
    pub ascii: bool,
}

impl KeyRing {
    /// [`KeyRing::open_into`], for a plaintext that must be UTF-8 text.
    pub fn open_text<C: CodeUnit>(
        &self,
        envelope: &[C],
        ctx: &Context<'_>,
        aad: &mut Vec<u8>,
        out: &mut Vec<u8>,
    ) -> Result<Opened> {
        let key = self.open_into(envelope, ctx, aad, out)?;
        let ascii = check_text(out)?;
        Ok(Opened { key, ascii })
    }

    /// [`KeyRing::open_binary_into`], for a plaintext that must be UTF-8 text.
    pub fn open_binary_text(
        &self,
        bytes: &[u8],
        ctx: &Context<'_>,
        aad: &mut Vec<u8>,
        out: &mut Vec<u8>,
    ) -> Result<Opened> {
        let key = self.open_binary_into(bytes, ctx, aad, out)?;
        let ascii = check_text(out)?;
        Ok(Opened { key, ascii })
    }
}

/// Whether `plaintext` is ASCII; when it is not UTF-8 at all, it is wiped
/// and refused ([`not_utf8`]). ASCII is checked first: it is UTF-8, and the
/// common case, so most values take one pass.
pub fn check_text(plaintext: &mut Vec<u8>) -> Result<bool> {
    if simdutf::validate_ascii(plaintext) {
        return Ok(true);
    }
    if simdutf::validate_utf8(plaintext) {
        return Ok(false);
    }
    zeroize::Zeroize::zeroize(plaintext);
    Err(not_utf8())
}

/// The error for authentic bytes that are not UTF-8 text.
pub fn not_utf8() -> AleError {
    AleError::InvalidInput(
        "the decrypted value is not UTF-8 text; it was not written by a string API".into(),
    )
}

#[cfg(test)]
mod tests {
    use super::check_text;

    #[test]
    fn text_is_ascii_utf8_or_wiped_and_refused() {
        assert_eq!(check_text(&mut b"plain".to_vec()), Ok(true));
        assert_eq!(check_text(&mut Vec::new()), Ok(true));
        assert_eq!(check_text(&mut "grüße".as_bytes().to_vec()), Ok(false));
        let mut bad = vec![b'a', 0xFF, b'b'];
        let err = check_text(&mut bad).err().map(|e| e.code());
        assert_eq!(err, Some("ALE_INVALID_INPUT"));
        assert!(bad.is_empty(), "no plaintext left: {bad:?}");
    }
}
