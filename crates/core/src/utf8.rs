//! The rule for a plaintext that a string API returns: UTF-8, or wiped and
//! refused. Below the ring, which applies it in `decrypt`, and `text.rs`,
//! which applies it for the bindings.

use crate::error::{AleError, Result};

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
