//! The `KeyRing` class itself: what an instance holds, how a `this` is
//! checked to be one, and its getters. The constructor and methods are
//! declared in `api/ring.rs`; the fast paths reach an instance through this
//! module only.

use std::ptr;
use std::sync::Arc;

use ale_core::error::AleError;
use ale_core::Rings;
use napi::bindgen_prelude::TypeTag;
use napi::sys;
use napi_derive::napi;

use crate::error::{to_js, Result};

/// A set of AES-256-GCM keys: the primary encrypts, every key decrypts
/// (primary first, then previous keys, then passphrases' legacy keys). Each
/// secret resolves as SveltyCMS resolves `ENCRYPTION_KEY` (hex, base64 or
/// base64url is the key itself; anything else is a passphrase for
/// HKDF-SHA-256). Keys never leave native memory and are wiped when the ring
/// is garbage-collected.
#[napi]
pub struct KeyRing {
    pub(crate) inner: Arc<Rings>,
}

impl KeyRing {
    /// The `KeyRing` behind `this`, after checking that `this` is one: a
    /// foreign object is an `ALE_INVALID_INPUT` error, never a wrong pointer.
    ///
    /// # Safety
    /// `env` and `this` must be valid for the current callback.
    pub unsafe fn of_this<'a>(env: sys::napi_env, this: sys::napi_value) -> Result<&'a KeyRing> {
        let tag = <KeyRing as TypeTag>::type_tag();
        let (mut kind, mut is_ring) = (sys::ValueType::napi_undefined, false);
        // SAFETY: plain Node-API calls on the callback's value. Only an object
        // reaches the tag check, which throws for `null` and `undefined`.
        let status = unsafe {
            match sys::napi_typeof(env, this, &mut kind) {
                sys::Status::napi_ok if kind == sys::ValueType::napi_object => {
                    sys::napi_check_object_type_tag(env, this, &tag, &mut is_ring)
                }
                status => status,
            }
        };
        let mut wrapped = ptr::null_mut();
        let unwrapped = status == sys::Status::napi_ok
            && is_ring
            // SAFETY: only reached for objects napi-rs tagged as `KeyRing`.
            && unsafe { sys::napi_unwrap(env, this, &mut wrapped) } == sys::Status::napi_ok;
        if !unwrapped {
            return Err(to_js(AleError::InvalidInput(
                "KeyRing methods must be called on a KeyRing".into(),
            )));
        }
        // SAFETY: napi-rs wraps a `KeyRing` instance as
        // `Box::into_raw(Box<KeyRing>)` and frees it only in the object's
        // finalizer, which cannot run while `this` is on the stack of this
        // call. `KeyRing` has no `&mut self` method.
        Ok(unsafe { &*wrapped.cast::<KeyRing>() })
    }
}

#[napi]
impl KeyRing {
    /// Number of secrets in the ring, primary included (legacy keys not counted).
    #[napi(getter, catch_unwind)]
    pub fn size(&self) -> u32 {
        let count = self.inner.ring().map_or(0, ale_core::KeyRing::secret_count);
        u32::try_from(count).unwrap_or(u32::MAX)
    }

    /// How many tenants a ring of tenants (`KeyRing.forTenants`) holds; 0 for any other ring.
    #[napi(getter, catch_unwind)]
    pub fn tenants(&self) -> u32 {
        let count = self.inner.tenants().map_or(0, ale_core::TenantRings::len);
        u32::try_from(count).unwrap_or(u32::MAX)
    }

    /// The IV length, in bytes, of the envelopes this ring writes: 16 or 12.
    #[napi(getter, catch_unwind, ts_return_type = "12 | 16")]
    pub fn iv_length(&self) -> u32 {
        u32::try_from(self.inner.options().iv_length.bytes()).unwrap_or(u32::MAX)
    }
}
