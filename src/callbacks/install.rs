//! Installs the fast paths once per module load, after napi-rs has
//! registered the class and functions (and generated their types and docs).
//!
//! This relies on three details of napi-rs (pinned exactly in Cargo.toml):
//! a class instance is wrapped as `Box<T>`, the type tag is stamped by the
//! constructor, and the `module_exports` hook runs after the class and
//! functions are registered. `__test__/boundary.test.mjs` fails loudly if
//! any of them changes.

use std::ptr;
use std::sync::atomic::Ordering;

use napi::sys;

use super::checked::{wrap_getters, wrap_method};
use super::direct;
use crate::error::{check, Result};
use crate::js::raw::{self, Callback};
use crate::js::{buffer, text};

/// The prototype's hot methods, in JS: each passes the native function the
/// ring's handle and, for a context seen before, the context's.
const PROTOTYPE_METHODS: &str = include_str!("prototype.js");

/// Replaces the hot functions and wraps the rest of `KeyRing.prototype`.
///
/// # Safety
/// `env` and `exports` must be valid during module registration.
pub unsafe fn install(env: sys::napi_env, exports: sys::napi_value) -> Result<()> {
    // SAFETY: module registration; `exports` holds the `KeyRing` class.
    unsafe {
        let class = raw::property(env, exports, c"KeyRing")?.ok_or_else(missing)?;
        let prototype = raw::property(env, class, c"prototype")?.ok_or_else(missing)?;
        define_prototype_methods(env, prototype)?;
        for name in [
            c"encryptMany",
            c"decryptMany",
            c"encryptAsync",
            c"decryptAsync",
            c"blindIndex",
            c"blindIndexes",
            c"keyIndex",
            c"stats",
            c"setIvBudgetWarning",
        ] {
            wrap_method(env, prototype, name)?;
        }
        wrap_getters(env, prototype)?;
        let globals: [(&std::ffi::CStr, Callback); 4] = [
            (c"encrypt", direct::global_encrypt),
            (c"decrypt", direct::global_decrypt),
            (c"encryptBinary", direct::global_encrypt_binary),
            (c"decryptBinary", direct::global_decrypt_binary),
        ];
        for (name, callback) in globals {
            let function = raw::function(env, name, callback, ptr::null_mut())?;
            raw::define_value(env, exports, name, function, true)?;
        }
        text::ENGINE_UTF8.store(is_bun(env)?, Ordering::Relaxed);
        buffer::enable_pool(env)
    }
}

fn missing() -> napi::Error<&'static str> {
    crate::error::to_js(ale_core::error::AleError::Internal)
}

/// Defines the hot prototype methods: evaluates [`PROTOTYPE_METHODS`] and
/// calls the function it evaluates to with the prototype and the native
/// functions that only it receives.
///
/// # Safety
/// `env` and `prototype` must be valid during module registration.
unsafe fn define_prototype_methods(env: sys::napi_env, prototype: sys::napi_value) -> Result<()> {
    let natives: [(&std::ffi::CStr, Callback); 6] = [
        (c"makeHandle", direct::make_handle),
        (c"makeContext", direct::make_context),
        (c"encrypt", direct::handle_encrypt),
        (c"decrypt", direct::handle_decrypt),
        (c"encryptBinary", direct::handle_encrypt_binary),
        (c"decryptBinary", direct::handle_decrypt_binary),
    ];
    let mut args = [prototype; 7];
    let (mut source, mut factory, mut undefined) =
        (ptr::null_mut(), ptr::null_mut(), ptr::null_mut());
    // SAFETY: module registration: the functions made here are passed only
    // to the script's factory, which keeps them in its closure.
    unsafe {
        for (slot, (name, callback)) in args[1..].iter_mut().zip(natives) {
            *slot = raw::function(env, name, callback, ptr::null_mut())?;
        }
        check(sys::napi_create_string_utf8(
            env,
            PROTOTYPE_METHODS.as_ptr().cast(),
            isize::try_from(PROTOTYPE_METHODS.len()).unwrap_or(0),
            &mut source,
        ))?;
        check(sys::napi_run_script(env, source, &mut factory))?;
        check(sys::napi_get_undefined(env, &mut undefined))?;
        raw::call(env, undefined, factory, &args).map(drop)
    }
}

/// Whether `process.versions.bun` exists: the engine is JavaScriptCore,
/// whose UTF-8 export is the fast way to read a long string (`js/text.rs`).
///
/// # Safety
/// `env` must be valid during module registration.
unsafe fn is_bun(env: sys::napi_env) -> Result<bool> {
    // SAFETY: property reads on live values of the current env.
    unsafe {
        match raw::process_property(env, c"versions")? {
            Some(versions) => Ok(raw::property(env, versions, c"bun")?.is_some()),
            None => Ok(false),
        }
    }
}
