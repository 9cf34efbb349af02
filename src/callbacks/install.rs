//! Installs the fast paths once per module load, after napi-rs has
//! registered the class and functions (and generated their types and docs).
//!
//! This relies on three details of napi-rs (pinned exactly in Cargo.toml):
//! a class instance is wrapped as `Box<T>`, the type tag is stamped by the
//! constructor, and the `module_exports` hook runs after the class and
//! functions are registered. `__test__/boundary.test.mjs` fails loudly if
//! any of them changes.

use std::ffi::CStr;
use std::ptr;
use std::sync::atomic::Ordering;

use napi::sys;

use super::checked::{wrap_getters, wrap_method};
use super::{direct, search};
use crate::error::{check, Result};
use crate::js::raw::{self, Callback};
use crate::js::{buffer, text};

/// The prototype's hot methods and the process-wide functions, in JS: each
/// passes the native function the ring's handle and, for a context seen
/// before, the context's; on Bun they call through bun:ffi.
const PROTOTYPE_METHODS: &str = include_str!("prototype.js");

/// The exported `KeyRing`: a constructor in front of napi-rs's class that
/// refuses a call without `new`, with static factories of its own.
const CLASS: &str = include_str!("class.js");

/// Replaces the hot functions and wraps the rest of `KeyRing.prototype`.
///
/// # Safety
/// `env` and `exports` must be valid during module registration.
pub unsafe fn install(env: sys::napi_env, exports: sys::napi_value) -> Result<()> {
    // SAFETY: module registration; `exports` holds the `KeyRing` class.
    unsafe {
        let class = raw::property(env, exports, c"KeyRing")?.ok_or_else(missing)?;
        let prototype = raw::property(env, class, c"prototype")?.ok_or_else(missing)?;
        let bun = is_bun(env)?;
        define_hot_functions(env, prototype, exports, bun)?;
        for name in [
            c"encryptMany",
            c"decryptMany",
            c"encryptAsync",
            c"decryptAsync",
            c"blindIndex",
            c"blindIndexes",
            c"keyIndex",
            c"searchQuery",
            c"rangeTokens",
            c"stats",
            c"setIvBudgetWarning",
            c"setTenant",
            c"deleteTenant",
        ] {
            wrap_method(env, prototype, name)?;
        }
        wrap_getters(env, prototype)?;
        let mut undefined = ptr::null_mut();
        check(sys::napi_get_undefined(env, &mut undefined))?;
        raw::call(env, undefined, evaluate(env, CLASS)?, &[exports])?;
        text::ENGINE_UTF8.store(bun, Ordering::Relaxed);
        buffer::enable_pool(env)
    }
}

/// What a script of this crate evaluates to (the function it is).
///
/// # Safety
/// `env` must be valid during module registration.
unsafe fn evaluate(env: sys::napi_env, script: &str) -> Result<sys::napi_value> {
    let mut value = ptr::null_mut();
    // SAFETY: forwarded.
    unsafe {
        let source = raw::string(env, script.as_bytes())?;
        check(sys::napi_run_script(env, source, &mut value))?;
    }
    Ok(value)
}

fn missing() -> napi::Error<&'static str> {
    crate::error::to_js(ale_core::error::AleError::Internal)
}

/// Defines the hot prototype methods and process-wide functions: evaluates
/// [`PROTOTYPE_METHODS`] and calls the function it evaluates to with the
/// prototype, the exports, the native functions that only it receives, and,
/// on Bun unless `ALE_BUN_PATH=napi`, the path of this library for bun:ffi.
///
/// # Safety
/// `env`, `prototype` and `exports` must be valid during module registration.
unsafe fn define_hot_functions(
    env: sys::napi_env,
    prototype: sys::napi_value,
    exports: sys::napi_value,
    bun: bool,
) -> Result<()> {
    let natives: [(&CStr, Callback); 15] = [
        (c"makeHandle", direct::make_handle),
        (c"makeContext", direct::make_context),
        (c"encrypt", direct::handle_encrypt),
        (c"decrypt", direct::handle_decrypt),
        (c"encryptBinary", direct::handle_encrypt_binary),
        (c"decryptBinary", direct::handle_decrypt_binary),
        (c"globalEncrypt", direct::global_encrypt),
        (c"globalDecrypt", direct::global_decrypt),
        (c"globalEncryptBinary", direct::global_encrypt_binary),
        (c"globalDecryptBinary", direct::global_decrypt_binary),
        (c"searchTokens", search::handle_search_tokens),
        (c"searchTokenText", search::handle_search_token_text),
        (c"tokenOf", direct::token_of),
        (c"flushWarning", direct::flush_warning),
        (c"throwError", direct::throw_error),
    ];
    let (mut object, mut undefined) = (ptr::null_mut(), ptr::null_mut());
    // SAFETY: module registration: the functions made here are passed only
    // to the script's factory, which keeps them in its closure.
    unsafe {
        check(sys::napi_create_object(env, &mut object))?;
        for (name, callback) in natives {
            let function = raw::function(env, name, callback, ptr::null_mut())?;
            raw::define_value(env, object, name, function, true)?;
        }
        check(sys::napi_get_undefined(env, &mut undefined))?;
        let mut library = undefined;
        if bun && ffi_chosen(env)? {
            if let Some(path) = own_path() {
                library = raw::string(env, path.to_bytes())?;
            }
        }
        raw::call(
            env,
            undefined,
            evaluate(env, PROTOTYPE_METHODS)?,
            &[prototype, exports, object, library],
        )
        .map(drop)
    }
}

/// Whether the bun:ffi path runs: on Bun, unless `process.env.ALE_BUN_PATH`
/// is `napi`, which keeps the Node-API path (for comparison, and as a way
/// out); `main.cjs` refuses values other than `napi` and `ffi`. bun:ffi is
/// the default because it is the faster of the two in the bench's micro
/// tier (docs/performance.md, "Bun: the bun:ffi path").
///
/// # Safety
/// `env` must be valid during module registration.
unsafe fn ffi_chosen(env: sys::napi_env) -> Result<bool> {
    // SAFETY: property reads on live values of the current env.
    unsafe {
        let Some(vars) = raw::process_property(env, c"env")? else {
            return Ok(true);
        };
        let Some(value) = raw::property(env, vars, c"ALE_BUN_PATH")? else {
            return Ok(true);
        };
        let (mut wide, mut bytes) = (Vec::new(), Vec::new());
        Ok(
            text::read_utf8(env, value, &mut wide, &mut bytes, "ALE_BUN_PATH").is_err()
                || bytes != b"napi",
        )
    }
}

/// The file this library was loaded from, which bun:ffi opens again.
#[cfg(unix)]
fn own_path() -> Option<std::ffi::CString> {
    let mut info = std::mem::MaybeUninit::<libc::Dl_info>::zeroed();
    let address = crate::ffi::entry::ale_ffi as *const std::ffi::c_void;
    // SAFETY: dladdr fills `info` for an address inside a loaded object.
    let found = unsafe { libc::dladdr(address, info.as_mut_ptr()) } != 0;
    // SAFETY: zeroed, then filled by dladdr when it found the object.
    let info = unsafe { info.assume_init() };
    if !found || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dladdr's file name is a NUL-terminated string that lives as
    // long as the object is loaded; it is copied here.
    Some(unsafe { CStr::from_ptr(info.dli_fname) }.to_owned())
}

/// Elsewhere the Node-API path runs.
#[cfg(not(unix))]
fn own_path() -> Option<std::ffi::CString> {
    None
}

/// Whether `process.versions.bun` exists: the engine is JavaScriptCore,
/// whose UTF-8 export is the fast way to read a long string (`js/text.rs`),
/// and bun:ffi is there.
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
