//! Direct Node-API callbacks for the hot calls: `KeyRing.prototype.encrypt`,
//! `decrypt`, `encryptBinary` and `decryptBinary`, and the process-wide
//! functions of the same names.
//!
//! napi-rs's generated glue records every `&self` borrow in a per-call
//! registry (to catch `&mut` aliasing through re-entrant JS), which costs
//! allocations and a mutex on each call: about 15% of a 256-byte encryption
//! on Node 24 in a `perf` profile (summed over the napi-rs borrow frames).
//! These methods only ever take `&self` of an immutable ring, so
//! that protection buys nothing here. After napi-rs has registered the class
//! and functions (and generated their types and docs from `binding.rs`), the
//! module hook below replaces those eight properties with callbacks that read
//! their arguments directly and run the very same [`Buffers`] code.
//!
//! `this` is checked with the class's napi-rs type tag before it is
//! unwrapped, so a foreign object is an error, never a wrong pointer.
//!
//! Every other method and getter of `KeyRing.prototype` is replaced by a
//! wrapper that checks `this` the same way and then calls napi-rs's own
//! function (methods) or reads the ring directly (getters). Without it, V8
//! would refuse a foreign `this` with a code-less "Illegal invocation".
//!
//! This relies on three details of napi-rs (pinned exactly in Cargo.toml):
//! a class instance is wrapped as `Box<T>`, the type tag is stamped by the
//! constructor, and the `module_exports` hook runs after the class and
//! functions are registered. `__test__/boundary.test.mjs` fails loudly if
//! any of them changes.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

use ale_core::keys::KeyRing as CoreRing;
use napi::bindgen_prelude::{JsError, TypeTag};
use napi::bindgen_prelude::{JsValue, Object};
use napi::{sys, Env};
use napi_derive::napi;

use crate::binding::{
    napi_failure, to_js, with_global, with_raw_context, Buffers, KeyRing, Result,
};

#[derive(Clone, Copy)]
enum Op {
    Encrypt,
    Decrypt,
    EncryptBinary,
    DecryptBinary,
}

/// The ring behind `this`, after checking that `this` is a `KeyRing`.
///
/// # Safety
/// `env` and `this` must be valid for the current callback.
unsafe fn ring_of<'a>(env: sys::napi_env, this: sys::napi_value) -> Result<&'a CoreRing> {
    let tag = <KeyRing as TypeTag>::type_tag();
    let mut is_ring = false;
    // SAFETY: plain Node-API calls on the callback's `this`.
    let status = unsafe { sys::napi_check_object_type_tag(env, this, &tag, &mut is_ring) };
    let mut wrapped = ptr::null_mut();
    let unwrapped = status == sys::Status::napi_ok
        && is_ring
        // SAFETY: only reached for objects napi-rs tagged as `KeyRing`.
        && unsafe { sys::napi_unwrap(env, this, &mut wrapped) } == sys::Status::napi_ok;
    if !unwrapped {
        return Err(to_js(ale_core::AleError::InvalidInput(
            "KeyRing methods must be called on a KeyRing".into(),
        )));
    }
    // SAFETY: napi-rs wraps a `KeyRing` instance as `Box::into_raw(Box<KeyRing>)`
    // and frees it only in the object's finalizer, which cannot run while
    // `this` is on the stack of this call. `KeyRing` has no `&mut self` method.
    Ok(unsafe { &(*wrapped.cast::<KeyRing>()).inner })
}

/// Throws `error` (or, for a panic, `ALE_INTERNAL`) into JS and returns the
/// null value a callback returns with a pending exception.
///
/// # Safety
/// `env` must be the current callback's.
unsafe fn throw(
    env: sys::napi_env,
    outcome: std::thread::Result<Result<sys::napi_value>>,
) -> sys::napi_value {
    let error = match outcome {
        Ok(Ok(value)) => return value,
        Ok(Err(error)) => error,
        Err(_) => to_js(ale_core::AleError::Internal),
    };
    // SAFETY: the current env.
    unsafe { JsError::from(error).throw_into(env) };
    ptr::null_mut()
}

/// Runs `op` for one call: reads `this` and four arguments, converts errors
/// and panics into thrown JS errors.
///
/// # Safety
/// `env` and `info` must be the current callback's.
unsafe fn call(
    env: sys::napi_env,
    info: sys::napi_callback_info,
    op: Op,
    on_ring: bool,
) -> sys::napi_value {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        crate::binding::forced_panic_point();
        let mut argc = 4usize;
        let mut argv = [ptr::null_mut(); 4];
        let mut this = ptr::null_mut();
        // SAFETY: `argv` has room for `argc` values; missing arguments are
        // filled with `undefined` by the engine.
        napi::check_status!(unsafe {
            sys::napi_get_cb_info(
                env,
                info,
                &mut argc,
                argv.as_mut_ptr(),
                &mut this,
                ptr::null_mut(),
            )
        })
        .map_err(napi_failure)?;
        let run =
            |ring: &CoreRing| {
                // SAFETY: all values are this callback's.
                unsafe {
                    with_raw_context(env, [argv[1], argv[2], argv[3]], |b: &mut Buffers, ctx| {
                        match op {
                            Op::Encrypt => b.encrypt(env, ring, argv[0], ctx),
                            Op::Decrypt => b.decrypt(env, ring, argv[0], ctx),
                            Op::EncryptBinary => b.encrypt_binary(env, ring, argv[0], ctx),
                            Op::DecryptBinary => b.decrypt_binary(env, ring, argv[0], ctx),
                        }
                    })
                }
            };
        if on_ring {
            // SAFETY: `this` is this callback's.
            run(unsafe { ring_of(env, this) }?)
        } else {
            with_global(run)
        }
    }));
    // SAFETY: the current env.
    unsafe { throw(env, outcome) }
}

/// Most arguments any KeyRing method takes.
const MAX_ARGS: usize = 6;

/// A checked prototype method: `this` must be a `KeyRing`; then napi-rs's
/// own function (kept in a reference, the callback's data) runs with the
/// same `this` and arguments.
unsafe extern "C" fn checked_method(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let mut argc = MAX_ARGS;
        let mut argv = [ptr::null_mut(); MAX_ARGS];
        let (mut this, mut data) = (ptr::null_mut(), ptr::null_mut());
        // SAFETY: `argv` has room for `argc` values.
        napi::check_status!(unsafe {
            sys::napi_get_cb_info(
                env,
                info,
                &mut argc,
                argv.as_mut_ptr(),
                &mut this,
                &mut data,
            )
        })
        .map_err(napi_failure)?;
        // SAFETY: `this` is this callback's.
        unsafe { ring_of(env, this) }?;
        let mut original = ptr::null_mut();
        // SAFETY: `data` is the reference created in `wrap_method`, never deleted.
        napi::check_status!(unsafe {
            sys::napi_get_reference_value(env, data.cast(), &mut original)
        })
        .map_err(napi_failure)?;
        let mut result = ptr::null_mut();
        // SAFETY: calling a function of this module with this call's values.
        let status = unsafe {
            sys::napi_call_function(
                env,
                this,
                original,
                argc.min(MAX_ARGS),
                argv.as_ptr(),
                &mut result,
            )
        };
        // A thrown error stays pending and reaches the caller unchanged.
        Ok(if status == sys::Status::napi_ok {
            result
        } else {
            ptr::null_mut()
        })
    }));
    // SAFETY: the current env.
    unsafe { throw(env, outcome) }
}

/// A checked getter, reading the ring itself: `size` or `ivLength`.
unsafe fn checked_getter(
    env: sys::napi_env,
    info: sys::napi_callback_info,
    read: fn(&CoreRing) -> usize,
) -> sys::napi_value {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        crate::binding::forced_panic_point();
        let mut this = ptr::null_mut();
        let mut argc = 0usize;
        // SAFETY: no arguments are read.
        napi::check_status!(unsafe {
            sys::napi_get_cb_info(
                env,
                info,
                &mut argc,
                ptr::null_mut(),
                &mut this,
                ptr::null_mut(),
            )
        })
        .map_err(napi_failure)?;
        // SAFETY: `this` is this callback's.
        let n = read(unsafe { ring_of(env, this) }?);
        let mut value = ptr::null_mut();
        // SAFETY: creating a number in the current env; counts are small.
        napi::check_status!(unsafe {
            sys::napi_create_uint32(env, u32::try_from(n).unwrap_or(u32::MAX), &mut value)
        })
        .map_err(napi_failure)?;
        Ok(value)
    }));
    // SAFETY: the current env.
    unsafe { throw(env, outcome) }
}

unsafe extern "C" fn get_size(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    // SAFETY: called by the engine with this callback's env and info.
    unsafe { checked_getter(env, info, CoreRing::secrets) }
}

unsafe extern "C" fn get_iv_length(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    // SAFETY: as above.
    unsafe { checked_getter(env, info, |r| r.options().iv_length.bytes()) }
}

/// Replaces `prototype[name]` with [`checked_method`] around the original.
///
/// # Safety
/// `env` and `prototype` must be valid during module registration.
unsafe fn wrap_method(
    env: sys::napi_env,
    prototype: sys::napi_value,
    name: &std::ffi::CStr,
) -> napi::Result<()> {
    let mut original = ptr::null_mut();
    let mut reference = ptr::null_mut();
    let mut wrapper = ptr::null_mut();
    // SAFETY: module registration; the reference keeps the original alive
    // for the life of the module (it is never deleted).
    unsafe {
        napi::check_status!(sys::napi_get_named_property(
            env,
            prototype,
            name.as_ptr(),
            &mut original
        ))?;
        napi::check_status!(sys::napi_create_reference(env, original, 1, &mut reference))?;
        napi::check_status!(sys::napi_create_function(
            env,
            name.as_ptr(),
            name.to_bytes().len() as isize,
            Some(checked_method),
            reference.cast(),
            &mut wrapper,
        ))?;
        define_value(env, prototype, name, wrapper, false)
    }
}

/// Replaces the accessor `prototype[name]` with a checked getter.
///
/// # Safety
/// `env` and `prototype` must be valid during module registration.
unsafe fn wrap_getter(
    env: sys::napi_env,
    prototype: sys::napi_value,
    name: &std::ffi::CStr,
    getter: Callback,
) -> napi::Result<()> {
    let descriptor = sys::napi_property_descriptor {
        utf8name: name.as_ptr(),
        name: ptr::null_mut(),
        method: None,
        getter: Some(getter),
        setter: None,
        value: ptr::null_mut(),
        attributes: sys::PropertyAttributes::configurable,
        data: ptr::null_mut(),
    };
    // SAFETY: one valid descriptor.
    napi::check_status!(unsafe { sys::napi_define_properties(env, prototype, 1, &descriptor) })
}

/// The direct callbacks: each runs [`call`] with its operation, on `this`
/// (a `KeyRing`) or on the process-wide ring.
macro_rules! direct_callbacks {
    ($($name:ident => $op:expr, $on_ring:expr;)*) => {$(
        unsafe extern "C" fn $name(
            env: sys::napi_env,
            info: sys::napi_callback_info,
        ) -> sys::napi_value {
            // SAFETY: called by the engine with this callback's env and info.
            unsafe { call(env, info, $op, $on_ring) }
        }
    )*};
}

direct_callbacks! {
    ring_encrypt => Op::Encrypt, true;
    ring_decrypt => Op::Decrypt, true;
    ring_encrypt_binary => Op::EncryptBinary, true;
    ring_decrypt_binary => Op::DecryptBinary, true;
    global_encrypt => Op::Encrypt, false;
    global_decrypt => Op::Decrypt, false;
    global_encrypt_binary => Op::EncryptBinary, false;
    global_decrypt_binary => Op::DecryptBinary, false;
}

type Callback = unsafe extern "C" fn(sys::napi_env, sys::napi_callback_info) -> sys::napi_value;

/// Defines `target[name] = callback` (writable, configurable, not enumerable
/// on prototypes — the same attributes as a class method).
///
/// # Safety
/// `env` and `target` must be valid during module registration.
unsafe fn define(
    env: sys::napi_env,
    target: sys::napi_value,
    name: &std::ffi::CStr,
    callback: Callback,
    enumerable: bool,
) -> napi::Result<()> {
    let mut function = ptr::null_mut();
    let len = name.to_bytes().len() as isize;
    // SAFETY: `name` is a valid C string of `len` bytes; `callback` is 'static.
    napi::check_status!(unsafe {
        sys::napi_create_function(
            env,
            name.as_ptr(),
            len,
            Some(callback),
            ptr::null_mut(),
            &mut function,
        )
    })?;
    // SAFETY: forwarded from the caller.
    unsafe { define_value(env, target, name, function, enumerable) }
}

/// Defines `target[name] = function` with a method's attributes.
///
/// # Safety
/// `env`, `target` and `function` must be valid during module registration.
unsafe fn define_value(
    env: sys::napi_env,
    target: sys::napi_value,
    name: &std::ffi::CStr,
    function: sys::napi_value,
    enumerable: bool,
) -> napi::Result<()> {
    let mut attributes = sys::PropertyAttributes::writable | sys::PropertyAttributes::configurable;
    if enumerable {
        attributes |= sys::PropertyAttributes::enumerable;
    }
    let descriptor = sys::napi_property_descriptor {
        utf8name: name.as_ptr(),
        name: ptr::null_mut(),
        method: None,
        getter: None,
        setter: None,
        value: function,
        attributes,
        data: ptr::null_mut(),
    };
    // SAFETY: one valid descriptor.
    napi::check_status!(unsafe { sys::napi_define_properties(env, target, 1, &descriptor) })
}

/// Whether `process.versions.bun` exists: the engine is JavaScriptCore, whose
/// UTF-8 export is the fast way to read a string (see `convert.rs`).
///
/// # Safety
/// `env` must be valid during module registration.
unsafe fn is_bun(env: sys::napi_env) -> bool {
    let (mut global, mut process, mut versions) =
        (ptr::null_mut(), ptr::null_mut(), ptr::null_mut());
    let mut has = false;
    // SAFETY: plain property reads on the global object.
    unsafe {
        sys::napi_get_global(env, &mut global) == sys::Status::napi_ok
            && sys::napi_get_named_property(env, global, c"process".as_ptr(), &mut process)
                == sys::Status::napi_ok
            && sys::napi_get_named_property(env, process, c"versions".as_ptr(), &mut versions)
                == sys::Status::napi_ok
            && sys::napi_has_named_property(env, versions, c"bun".as_ptr(), &mut has)
                == sys::Status::napi_ok
            && has
    }
}

/// Runs once per module load, after napi-rs has registered everything.
#[napi(module_exports)]
pub fn install_direct_callbacks(exports: Object, env: Env) -> napi::Result<()> {
    let raw = env.raw();
    let exports = exports.raw();
    let mut class = ptr::null_mut();
    let mut prototype = ptr::null_mut();
    // SAFETY: module registration; `exports` holds the `KeyRing` class.
    unsafe {
        napi::check_status!(sys::napi_get_named_property(
            raw,
            exports,
            c"KeyRing".as_ptr(),
            &mut class
        ))?;
        napi::check_status!(sys::napi_get_named_property(
            raw,
            class,
            c"prototype".as_ptr(),
            &mut prototype
        ))?;
        define(raw, prototype, c"encrypt", ring_encrypt, false)?;
        define(raw, prototype, c"decrypt", ring_decrypt, false)?;
        define(raw, prototype, c"encryptBinary", ring_encrypt_binary, false)?;
        define(raw, prototype, c"decryptBinary", ring_decrypt_binary, false)?;
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
            wrap_method(raw, prototype, name)?;
        }
        wrap_getter(raw, prototype, c"size", get_size)?;
        wrap_getter(raw, prototype, c"ivLength", get_iv_length)?;
        define(raw, exports, c"encrypt", global_encrypt, true)?;
        define(raw, exports, c"decrypt", global_decrypt, true)?;
        define(raw, exports, c"encryptBinary", global_encrypt_binary, true)?;
        define(raw, exports, c"decryptBinary", global_decrypt_binary, true)?;
        let bun = is_bun(raw);
        crate::convert::ENGINE_UTF8.store(bun, std::sync::atomic::Ordering::Relaxed);
        crate::convert::enable_buffer_pool(raw);
    }
    Ok(())
}
