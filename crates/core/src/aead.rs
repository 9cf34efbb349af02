//! AES-256-GCM with a 96- or 128-bit IV and a 128-bit tag, behind one small type.
//!
//! Two backends implement it:
//! - `aws-lc` (default): AWS-LC's assembly AES-GCM through its `EVP_AEAD`
//!   interface, which picks AES-NI/VAES and CLMUL code at run time, so one
//!   portable binary is fast everywhere, and takes the 16-byte IVs that
//!   SveltyCMS writes as readily as 12-byte ones (`docs/performance.md`,
//!   "Why these dependencies", has the measurement);
//! - `rustcrypto`: the pure-Rust `aes-gcm` crate, for targets where AWS-LC
//!   does not build. With both features on, the tests compare them on random
//!   input.
//!
//! Keys are scrubbed from memory when dropped, in both backends.

use crate::error::{AleError, Result};
use crate::iv::Iv;

pub const KEY_LEN: usize = 32;
pub const TAG_LEN: usize = 16;

#[cfg(not(any(feature = "aws-lc", feature = "rustcrypto")))]
compile_error!("enable the `aws-lc` or the `rustcrypto` feature to choose an AEAD backend");

/// An AES-256-GCM key, ready to seal and open.
#[cfg(feature = "aws-lc")]
pub type AeadKey = aws_lc_backend::Key;
#[cfg(all(feature = "rustcrypto", not(feature = "aws-lc")))]
pub type AeadKey = rustcrypto_backend::Key;

/// What every backend provides.
pub trait Aead: Sized {
    fn new(key: &[u8; KEY_LEN]) -> Self;

    /// Encrypts `buf` in place and returns the tag. The IV MUST be unique for this key.
    fn seal_in_place(&self, iv: &Iv, aad: &[u8], buf: &mut [u8]) -> Result<[u8; TAG_LEN]>;

    /// Checks the tag, then decrypts `buf` in place. On failure `buf` is zeroed,
    /// so no partial plaintext survives, and `ALE_AUTH_FAILED` is returned.
    fn open_in_place(&self, iv: &Iv, aad: &[u8], buf: &mut [u8], tag: &[u8; TAG_LEN])
        -> Result<()>;
}

/// GCM refuses more than 2^36 - 32 bytes under one IV; no JS string is that long.
fn too_long() -> AleError {
    AleError::InvalidInput("value exceeds the AES-GCM length limit".into())
}

#[cfg(feature = "aws-lc")]
pub mod aws_lc_backend {
    use super::*;
    use aws_lc_sys::{
        EVP_AEAD_CTX_cleanup, EVP_AEAD_CTX_init, EVP_AEAD_CTX_open_gather,
        EVP_AEAD_CTX_seal_scatter, EVP_aead_aes_256_gcm, EVP_AEAD_CTX,
    };
    use std::ptr;

    /// An initialised `EVP_AEAD_CTX`, boxed because AWS-LC aligns its key
    /// schedule inside the struct: it must never move after `init`.
    pub struct Key(Box<EVP_AEAD_CTX>);

    // SAFETY: after `EVP_AEAD_CTX_init`, seal and open only read the context
    // (they take `const EVP_AEAD_CTX *`), which AWS-LC documents as safe to
    // share between threads; it is freed only in `drop`, with `&mut self`.
    unsafe impl Send for Key {}
    // SAFETY: as above.
    unsafe impl Sync for Key {}

    impl Aead for Key {
        fn new(key: &[u8; KEY_LEN]) -> Self {
            // SAFETY: an all-zero EVP_AEAD_CTX is the documented "zeroed"
            // state (EVP_AEAD_CTX_zero); init then fills it in place.
            let mut ctx: Box<EVP_AEAD_CTX> = Box::new(unsafe { std::mem::zeroed() });
            // SAFETY: `ctx` is valid and pinned in its box; the key is 32
            // bytes, the tag length 16 (the default), no engine.
            let ok = unsafe {
                EVP_AEAD_CTX_init(
                    &mut *ctx,
                    EVP_aead_aes_256_gcm(),
                    key.as_ptr(),
                    KEY_LEN,
                    TAG_LEN,
                    ptr::null_mut(),
                )
            };
            // AES-256-GCM with a 32-byte key and a 16-byte tag needs no
            // allocation; init can only fail on wrong lengths, which the
            // types rule out.
            assert_eq!(ok, 1, "AWS-LC refused an AES-256-GCM key");
            Key(ctx)
        }

        fn seal_in_place(&self, iv: &Iv, aad: &[u8], buf: &mut [u8]) -> Result<[u8; TAG_LEN]> {
            let mut tag = [0u8; TAG_LEN];
            let mut tag_len = 0usize;
            let iv = iv.as_bytes();
            let data = buf.as_mut_ptr();
            // SAFETY: `data` is valid for `buf.len()` bytes; AWS-LC allows
            // `out == in` exactly; `tag` has room for TAG_LEN bytes; nonce and
            // AAD are valid for their lengths.
            let ok = unsafe {
                EVP_AEAD_CTX_seal_scatter(
                    &*self.0,
                    data,
                    tag.as_mut_ptr(),
                    &mut tag_len,
                    TAG_LEN,
                    iv.as_ptr(),
                    iv.len(),
                    data.cast_const(),
                    buf.len(),
                    ptr::null(),
                    0,
                    aad.as_ptr(),
                    aad.len(),
                )
            };
            if ok != 1 || tag_len != TAG_LEN {
                return Err(too_long());
            }
            Ok(tag)
        }

        fn open_in_place(
            &self,
            iv: &Iv,
            aad: &[u8],
            buf: &mut [u8],
            tag: &[u8; TAG_LEN],
        ) -> Result<()> {
            let iv = iv.as_bytes();
            let data = buf.as_mut_ptr();
            // SAFETY: as in `seal_in_place`; the tag is TAG_LEN bytes.
            let ok = unsafe {
                EVP_AEAD_CTX_open_gather(
                    &*self.0,
                    data,
                    iv.as_ptr(),
                    iv.len(),
                    data.cast_const(),
                    buf.len(),
                    tag.as_ptr(),
                    TAG_LEN,
                    aad.as_ptr(),
                    aad.len(),
                )
            };
            if ok == 1 {
                return Ok(());
            }
            // AWS-LC decrypts before it compares tags: wipe what it wrote.
            zeroize::Zeroize::zeroize(buf);
            Err(AleError::AuthFailed)
        }
    }

    impl Drop for Key {
        fn drop(&mut self) {
            let ctx: *mut EVP_AEAD_CTX = &mut *self.0;
            // SAFETY: `ctx` was initialised in `new` and is not used again.
            // AES-GCM's cleanup frees nothing and leaves the key schedule in
            // place, so the struct's bytes are overwritten with volatile
            // writes, which the compiler may not elide.
            unsafe {
                EVP_AEAD_CTX_cleanup(ctx);
                let bytes = ctx.cast::<u8>();
                for i in 0..std::mem::size_of::<EVP_AEAD_CTX>() {
                    ptr::write_volatile(bytes.add(i), 0);
                }
            }
            std::sync::atomic::compiler_fence(std::sync::atomic::Ordering::SeqCst);
        }
    }
}

#[cfg(feature = "rustcrypto")]
pub mod rustcrypto_backend {
    use super::*;
    use crate::iv::IvLength;
    use aes_gcm::aead::array::Array;
    use aes_gcm::aead::consts::U16;
    use aes_gcm::aes::Aes256;
    use aes_gcm::{AeadInOut, Aes256Gcm, AesGcm, KeyInit};

    /// `aes-gcm` with its `zeroize` feature: the cipher states are
    /// ZeroizeOnDrop. The nonce size is a type parameter, so a key holds one
    /// cipher per IV length (the same AES key schedule twice).
    pub struct Key {
        iv96: Aes256Gcm,
        iv128: AesGcm<Aes256, U16>,
    }

    impl Aead for Key {
        fn new(key: &[u8; KEY_LEN]) -> Self {
            let key = Array::from(*key);
            Key {
                iv96: Aes256Gcm::new(&key),
                iv128: AesGcm::new(&key),
            }
        }

        fn seal_in_place(&self, iv: &Iv, aad: &[u8], buf: &mut [u8]) -> Result<[u8; TAG_LEN]> {
            let sealed = match iv.len() {
                IvLength::Bits96 => {
                    let nonce = Array::try_from(iv.as_bytes()).map_err(|_| too_long())?;
                    self.iv96.encrypt_inout_detached(&nonce, aad, buf.into())
                }
                IvLength::Bits128 => {
                    let nonce = Array::try_from(iv.as_bytes()).map_err(|_| too_long())?;
                    self.iv128.encrypt_inout_detached(&nonce, aad, buf.into())
                }
            };
            sealed.map(Into::into).map_err(|_| too_long())
        }

        fn open_in_place(
            &self,
            iv: &Iv,
            aad: &[u8],
            buf: &mut [u8],
            tag: &[u8; TAG_LEN],
        ) -> Result<()> {
            let tag = Array::from(*tag);
            let opened = match iv.len() {
                IvLength::Bits96 => Array::try_from(iv.as_bytes()).is_ok_and(|nonce| {
                    self.iv96
                        .decrypt_inout_detached(&nonce, aad, (&mut *buf).into(), &tag)
                        .is_ok()
                }),
                IvLength::Bits128 => Array::try_from(iv.as_bytes()).is_ok_and(|nonce| {
                    self.iv128
                        .decrypt_inout_detached(&nonce, aad, (&mut *buf).into(), &tag)
                        .is_ok()
                }),
            };
            if opened {
                return Ok(());
            }
            zeroize::Zeroize::zeroize(buf);
            Err(AleError::AuthFailed)
        }
    }
}
