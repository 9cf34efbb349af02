//! Direct Node-API callbacks for the four hottest calls: `KeyRing.prototype.
//! encrypt` / `decrypt` and the process-wide `encrypt` / `decrypt`.
//!
//! napi-rs's generated glue records every `&self` borrow in a per-call
//! registry (to catch `&mut` aliasing through re-entrant JS), which costs
//! allocations and a mutex on each call: about 15% of a 256-byte encryption
//! on Node 24 in a `perf` profile (summed over the napi-rs borrow frames).
//! These methods only ever take `&self` of an immutable ring, so
//! that protection buys nothing here. After napi-rs has registered the class
//! and functions (and generated their types and docs from `binding.rs`), the
//! module hook below replaces those four properties with callbacks that read
//! their arguments directly and run the very same [`Buffers`] code.
//!
//! `this` is checked with the class's napi-rs type tag before it is
//! unwrapped, so a foreign object is an error, never a wrong pointer.

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
    let error = match outcome {
        Ok(Ok(value)) => return value,
        Ok(Err(error)) => error,
        Err(_) => to_js(ale_core::AleError::Internal),
    };
    // SAFETY: the current env.
    unsafe { JsError::from(error).throw_into(env) };
    ptr::null_mut()
}

unsafe extern "C" fn ring_encrypt(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    // SAFETY: called by the engine with this callback's env and info.
    unsafe { call(env, info, Op::Encrypt, true) }
}
unsafe extern "C" fn ring_decrypt(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    // SAFETY: as above.
    unsafe { call(env, info, Op::Decrypt, true) }
}
unsafe extern "C" fn global_encrypt(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    // SAFETY: as above.
    unsafe { call(env, info, Op::Encrypt, false) }
}
unsafe extern "C" fn global_decrypt(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    // SAFETY: as above.
    unsafe { call(env, info, Op::Decrypt, false) }
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
        define(raw, exports, c"encrypt", global_encrypt, true)?;
        define(raw, exports, c"decrypt", global_decrypt, true)?;
        crate::convert::ENGINE_UTF8.store(is_bun(raw), std::sync::atomic::Ordering::Relaxed);
    }
    Ok(())
}
