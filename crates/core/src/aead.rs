//! AES-256-GCM with a 96-bit IV and a 128-bit tag, behind one small type.
//!
//! Two backends implement it:
//! - `ring` (default): ring's assembly AES-GCM, which picks AES-NI/VAES and
//!   CLMUL code paths at run time, so one portable binary is fast everywhere;
//! - `rustcrypto`: the pure-Rust `aes-gcm` crate, for targets where ring does
//!   not build. With both features on, the tests compare them on random input.
//!
//! Keys are scrubbed from memory when dropped, in both backends.

use crate::error::{AleError, Result};
use crate::iv::IV_LEN;

pub const KEY_LEN: usize = 32;
pub const TAG_LEN: usize = 16;

#[cfg(not(any(feature = "ring", feature = "rustcrypto")))]
compile_error!("enable the `ring` or the `rustcrypto` feature to choose an AEAD backend");

/// An AES-256-GCM key, ready to seal and open.
#[cfg(feature = "ring")]
pub type AeadKey = ring_backend::Key;
#[cfg(all(feature = "rustcrypto", not(feature = "ring")))]
pub type AeadKey = rustcrypto_backend::Key;

/// What every backend provides.
pub trait Aead: Sized {
    fn new(key: &[u8; KEY_LEN]) -> Self;

    /// Encrypts `buf` in place and returns the tag. The IV MUST be unique for this key.
    fn seal_in_place(&self, iv: &[u8; IV_LEN], aad: &[u8], buf: &mut [u8])
        -> Result<[u8; TAG_LEN]>;

    /// Checks the tag, then decrypts `buf` in place. On failure `buf` is zeroed,
    /// so no partial plaintext survives, and `ALE_AUTH_FAILED` is returned.
    fn open_in_place(
        &self,
        iv: &[u8; IV_LEN],
        aad: &[u8],
        buf: &mut [u8],
        tag: &[u8; TAG_LEN],
    ) -> Result<()>;
}

/// GCM refuses more than 2^36 - 32 bytes under one IV; no JS string is that long.
fn too_long() -> AleError {
    AleError::InvalidInput("value exceeds the AES-GCM length limit".into())
}

#[cfg(feature = "ring")]
pub mod ring_backend {
    use super::*;
    use ring::aead::{Aad, LessSafeKey, Nonce, Tag, UnboundKey, AES_256_GCM};
    use std::mem::{ManuallyDrop, MaybeUninit};

    /// ring's key schedule, boxed so that its bytes can be wiped in place on drop.
    pub struct Key(ManuallyDrop<Box<LessSafeKey>>);

    impl Aead for Key {
        fn new(key: &[u8; KEY_LEN]) -> Self {
            // A 32-byte key is always accepted by AES_256_GCM.
            let unbound = match UnboundKey::new(&AES_256_GCM, key) {
                Ok(k) => k,
                Err(_) => unreachable!("AES-256 accepts every 32-byte key"),
            };
            Key(ManuallyDrop::new(Box::new(LessSafeKey::new(unbound))))
        }

        fn seal_in_place(
            &self,
            iv: &[u8; IV_LEN],
            aad: &[u8],
            buf: &mut [u8],
        ) -> Result<[u8; TAG_LEN]> {
            let nonce = Nonce::assume_unique_for_key(*iv);
            match self
                .0
                .seal_in_place_separate_tag(nonce, Aad::from(aad), buf)
            {
                Ok(tag) => {
                    let mut out = [0u8; TAG_LEN];
                    out.copy_from_slice(tag.as_ref());
                    Ok(out)
                }
                Err(_) => Err(too_long()),
            }
        }

        fn open_in_place(
            &self,
            iv: &[u8; IV_LEN],
            aad: &[u8],
            buf: &mut [u8],
            tag: &[u8; TAG_LEN],
        ) -> Result<()> {
            let nonce = Nonce::assume_unique_for_key(*iv);
            let tag = Tag::from(*tag);
            match self
                .0
                .open_in_place_separate_tag(nonce, Aad::from(aad), tag, buf, 0..)
            {
                Ok(_) => Ok(()),
                Err(_) => {
                    zeroize::Zeroize::zeroize(buf);
                    Err(AleError::AuthFailed)
                }
            }
        }
    }

    impl Drop for Key {
        fn drop(&mut self) {
            // SAFETY: `self.0` is never used again. We run the key's destructor,
            // overwrite its now-dead bytes with volatile writes (which the
            // compiler may not elide), and free the allocation as
            // `MaybeUninit`, which drops nothing.
            unsafe {
                let boxed = ManuallyDrop::take(&mut self.0);
                let raw: *mut LessSafeKey = Box::into_raw(boxed);
                std::ptr::drop_in_place(raw);
                let bytes = raw.cast::<u8>();
                for i in 0..std::mem::size_of::<LessSafeKey>() {
                    std::ptr::write_volatile(bytes.add(i), 0);
                }
                std::sync::atomic::compiler_fence(std::sync::atomic::Ordering::SeqCst);
                drop(Box::from_raw(raw.cast::<MaybeUninit<LessSafeKey>>()));
            }
        }
    }
}

#[cfg(feature = "rustcrypto")]
pub mod rustcrypto_backend {
    use super::*;
    use aes_gcm::aead::array::Array;
    use aes_gcm::{AeadInOut, Aes256Gcm, KeyInit};

    /// `aes-gcm` with its `zeroize` feature: the cipher state is ZeroizeOnDrop.
    pub struct Key(Aes256Gcm);

    impl Aead for Key {
        fn new(key: &[u8; KEY_LEN]) -> Self {
            Key(Aes256Gcm::new(&Array::from(*key)))
        }

        fn seal_in_place(
            &self,
            iv: &[u8; IV_LEN],
            aad: &[u8],
            buf: &mut [u8],
        ) -> Result<[u8; TAG_LEN]> {
            let nonce = Array::from(*iv);
            match self.0.encrypt_inout_detached(&nonce, aad, buf.into()) {
                Ok(tag) => Ok(tag.into()),
                Err(_) => Err(too_long()),
            }
        }

        fn open_in_place(
            &self,
            iv: &[u8; IV_LEN],
            aad: &[u8],
            buf: &mut [u8],
            tag: &[u8; TAG_LEN],
        ) -> Result<()> {
            let nonce = Array::from(*iv);
            let tag = Array::from(*tag);
            match self.0.decrypt_inout_detached(&nonce, aad, buf.into(), &tag) {
                Ok(()) => Ok(()),
                Err(_) => {
                    zeroize::Zeroize::zeroize(buf);
                    Err(AleError::AuthFailed)
                }
            }
        }
    }
}
