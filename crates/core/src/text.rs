//! Decryption as the string APIs want it: the plaintext under the rule of
//! `utf8.rs` (UTF-8, or wiped and refused), and whether it is ASCII, so
//! that making a JS string needs no second pass over it. Every binding's
//! decrypt (the Node-API call, the thread-pool job, the bun:ffi entry) runs
//! these.

use crate::context::Context;
use crate::envelope::CodeUnit;
use crate::error::Result;
use crate::keys::KeyRing;
use crate::utf8::check_text;

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
