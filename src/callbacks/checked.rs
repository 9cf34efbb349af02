//! Checked wrappers for the rest of `KeyRing.prototype`: each checks that
//! `this` is a `KeyRing` before napi-rs's own function runs, so that a
//! foreign `this` gets a coded error instead of V8's code-less "Illegal
//! invocation".

use std::ffi::CStr;
use std::ptr;

use napi::sys;

use crate::class::KeyRing;
use crate::error::{catch_raw, check, guard_raw, Result};
use crate::js::raw::{self, args, Args};

/// Most arguments any KeyRing method takes.
const MAX_ARGS: usize = 6;

/// A checked method: `this` must be a `KeyRing`; then napi-rs's own
/// function (kept in a reference, the callback's data) runs with the same
/// `this` and arguments. What it throws reaches the caller unchanged. The
/// wrapped function has its own guard, where a forced panic must land.
unsafe extern "C" fn checked_method(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    // SAFETY: this callback's env, info and values.
    unsafe {
        catch_raw(env, || {
            let Args {
                count,
                values,
                this,
                data,
            } = args::<MAX_ARGS>(env, info)?;
            KeyRing::of_this(env, this)?;
            let mut original = ptr::null_mut();
            // `data` is the reference created in `wrap_method`, never deleted.
            check(sys::napi_get_reference_value(
                env,
                data.cast(),
                &mut original,
            ))?;
            let argv = &values[..count.min(MAX_ARGS)];
            // A thrown error stays pending, and the null value lets it through.
            Ok(raw::call(env, this, original, argv).unwrap_or(ptr::null_mut()))
        })
    }
}

/// A checked getter: `this` must be a `KeyRing`; then `read` (the getter
/// napi-rs declares, in `class.rs`) runs on it.
///
/// # Safety
/// `env` and `info` must be the current callback's.
unsafe fn checked_getter(
    env: sys::napi_env,
    info: sys::napi_callback_info,
    read: fn(&KeyRing) -> u32,
) -> sys::napi_value {
    // SAFETY: this callback's env, info and values.
    unsafe {
        guard_raw(env, || {
            let this = args::<0>(env, info)?.this;
            let n = read(KeyRing::of_this(env, this)?);
            let mut value = ptr::null_mut();
            check(sys::napi_create_uint32(env, n, &mut value))?;
            Ok(value)
        })
    }
}

unsafe extern "C" fn get_size(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    // SAFETY: called by the engine with this callback's env and info.
    unsafe { checked_getter(env, info, KeyRing::size) }
}

unsafe extern "C" fn get_iv_length(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    // SAFETY: as above.
    unsafe { checked_getter(env, info, KeyRing::iv_length) }
}

unsafe extern "C" fn get_tenants(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    // SAFETY: as above.
    unsafe { checked_getter(env, info, KeyRing::tenants) }
}

/// Replaces `prototype[name]` with [`checked_method`] around the original.
///
/// # Safety
/// `env` and `prototype` must be valid during module registration.
pub unsafe fn wrap_method(
    env: sys::napi_env,
    prototype: sys::napi_value,
    name: &CStr,
) -> Result<()> {
    let (mut original, mut reference) = (ptr::null_mut(), ptr::null_mut());
    // SAFETY: module registration; the reference keeps the original alive
    // for the life of the module (it is never deleted).
    unsafe {
        check(sys::napi_get_named_property(
            env,
            prototype,
            name.as_ptr(),
            &mut original,
        ))?;
        check(sys::napi_create_reference(env, original, 1, &mut reference))?;
        let wrapper = raw::function(env, name, checked_method, reference.cast())?;
        raw::define_value(env, prototype, name, wrapper, false)
    }
}

/// Replaces the getters `size`, `ivLength` and `tenants` with checked ones.
///
/// # Safety
/// `env` and `prototype` must be valid during module registration.
pub unsafe fn wrap_getters(env: sys::napi_env, prototype: sys::napi_value) -> Result<()> {
    // SAFETY: forwarded.
    unsafe {
        raw::define_getter(env, prototype, c"size", get_size)?;
        raw::define_getter(env, prototype, c"ivLength", get_iv_length)?;
        raw::define_getter(env, prototype, c"tenants", get_tenants)
    }
}
