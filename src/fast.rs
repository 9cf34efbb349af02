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
//! module hook below replaces those eight functions with ones that read
//! their arguments directly and run the very same [`Buffers`] code.
//!
//! `this` is checked with the class's napi-rs type tag before it is
//! unwrapped, so a foreign object is an error, never a wrong pointer.
//!
//! On Node 24.9.0, checking and unwrapping `this` costs about 150 ns a call (two
//! private-symbol lookups in V8's runtime): a third of a 256 B `encrypt`.
//! Reading the three context strings through Node-API costs a call more
//! again, on both engines. So the four prototype methods are small JS functions (defined by
//! [`PROTOTYPE_METHODS`]) that pass a native function two handles:
//!
//! - the ring's: an external holding an `Arc` of the ring, made once per ring
//!   by `makeHandle`, which checks the ring as any `this` is checked, and
//!   kept in a `WeakMap`;
//! - the context's: an external holding the validated tenant, collection and
//!   field, made by `makeContext` (which refuses what a call would refuse,
//!   with the same code) the second time a context is seen, and kept in a
//!   map of at most 4,096 contexts (then cleared). A context's first call,
//!   and any call whose context is not three strings, takes the native path
//!   that reads the three arguments.
//!
//! Each handle is type-tagged ([`HANDLE_TAG`], [`CONTEXT_TAG`]) and checked on
//! every call. The native functions and the maps live only in that closure.
//! 256 B, tight loop, Node 24.9.0: `encrypt` / `decrypt` 0.475 / 0.51 µs
//! before, 0.35–0.38 / 0.35–0.39 µs after. On Bun 1.4.5 the change is about
//! as large as the run-to-run noise (README, "Performance").
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
use std::sync::Arc;

use ale_core::keys::KeyRing as CoreRing;
use napi::bindgen_prelude::{JsError, TypeTag};
use napi::bindgen_prelude::{JsValue, Object};
use napi::{sys, Env};
use napi_derive::napi;

use crate::binding::{
    napi_failure, to_js, with_global, with_raw_context, Buffers, KeyRing, OwnedContext, Result,
};

/// What a hot call does.
#[derive(Clone, Copy)]
pub(crate) enum Op {
    Encrypt,
    Decrypt,
    EncryptBinary,
    DecryptBinary,
}

/// The `KeyRing` behind `this`, after checking that `this` is one.
///
/// # Safety
/// `env` and `this` must be valid for the current callback.
unsafe fn key_ring_of<'a>(env: sys::napi_env, this: sys::napi_value) -> Result<&'a KeyRing> {
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
        return Err(to_js(ale_core::AleError::InvalidInput(
            "KeyRing methods must be called on a KeyRing".into(),
        )));
    }
    // SAFETY: napi-rs wraps a `KeyRing` instance as `Box::into_raw(Box<KeyRing>)`
    // and frees it only in the object's finalizer, which cannot run while
    // `this` is on the stack of this call. `KeyRing` has no `&mut self` method.
    Ok(unsafe { &*wrapped.cast::<KeyRing>() })
}

/// The ring behind `this`, after checking that `this` is a `KeyRing`.
///
/// # Safety
/// `env` and `this` must be valid for the current callback.
unsafe fn ring_of<'a>(env: sys::napi_env, this: sys::napi_value) -> Result<&'a CoreRing> {
    // SAFETY: forwarded.
    unsafe { key_ring_of(env, this) }.map(|r| &*r.inner)
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

/// What a callback was called with: how many arguments, the first `N`
/// (`undefined` where fewer were passed), `this`, and the function's data.
struct Args<const N: usize> {
    count: usize,
    values: [sys::napi_value; N],
    this: sys::napi_value,
    data: *mut std::ffi::c_void,
}

/// Reads the current callback's [`Args`].
///
/// # Safety
/// `env` and `info` must be the current callback's.
unsafe fn args<const N: usize>(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> Result<Args<N>> {
    let mut a = Args {
        count: N,
        values: [ptr::null_mut(); N],
        this: ptr::null_mut(),
        data: ptr::null_mut(),
    };
    // SAFETY: `values` has room for `count` values; the engine fills missing
    // ones with `undefined`.
    napi::check_status!(unsafe {
        sys::napi_get_cb_info(
            env,
            info,
            &mut a.count,
            a.values.as_mut_ptr(),
            &mut a.this,
            &mut a.data,
        )
    })
    .map_err(napi_failure)?;
    Ok(a)
}

/// Where a direct callback finds its ring.
#[derive(Clone, Copy)]
enum Via {
    /// The process-wide ring.
    Global,
    /// A handle made by [`make_handle`], passed as the first argument by the
    /// prototype methods that [`PROTOTYPE_METHODS`] defines.
    Handle,
}

/// Runs `op` for one call: finds the ring (see [`Via`]), reads the value and
/// the three context strings, converts errors and panics into thrown JS
/// errors.
///
/// # Safety
/// `env` and `info` must be the current callback's.
unsafe fn call(
    env: sys::napi_env,
    info: sys::napi_callback_info,
    op: Op,
    via: Via,
) -> sys::napi_value {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        crate::binding::forced_panic_point();
        // SAFETY: this callback's.
        let argv = unsafe { args::<6>(env, info) }?.values;
        match via {
            // (value, tenantId, collectionId, fieldName)
            Via::Global => with_global(|ring| {
                // SAFETY: the values are this callback's.
                unsafe {
                    with_raw_context(env, [argv[1], argv[2], argv[3]], |b, ctx| {
                        run(env, op, ring, argv[0], b, ctx)
                    })
                }
            }),
            // (handle, value, context handle or undefined, tenantId, collectionId, fieldName)
            Via::Handle => {
                // SAFETY: `argv[0]` is this callback's.
                let ring = unsafe { ring_of_handle(env, argv[0]) }?;
                // SAFETY: `argv[2]` is this callback's.
                match unsafe { context_of_handle(env, argv[2]) }? {
                    Some(context) => context.with(|b, ctx| {
                        // SAFETY: the values are this callback's.
                        unsafe { run(env, op, ring, argv[1], b, ctx) }
                    }),
                    // SAFETY: the values are this callback's.
                    None => unsafe {
                        with_raw_context(env, [argv[3], argv[4], argv[5]], |b, ctx| {
                            run(env, op, ring, argv[1], b, ctx)
                        })
                    },
                }
            }
        }
    }));
    // SAFETY: the current env.
    unsafe { throw(env, outcome) }
}

/// Runs `op` on `value` with `ring` in context `ctx`.
///
/// # Safety
/// `env` and `value` must be valid for the current callback.
pub(crate) unsafe fn run(
    env: sys::napi_env,
    op: Op,
    ring: &CoreRing,
    value: sys::napi_value,
    b: &mut Buffers,
    ctx: &ale_core::context::Context<'_>,
) -> Result<sys::napi_value> {
    // SAFETY: forwarded.
    unsafe {
        match op {
            Op::Encrypt => b.encrypt(env, ring, value, ctx),
            Op::Decrypt => b.decrypt(env, ring, value, ctx),
            Op::EncryptBinary => b.encrypt_binary(env, ring, value, ctx),
            Op::DecryptBinary => b.decrypt_binary(env, ring, value, ctx),
        }
    }
}

/// The type tag of a ring handle (random; distinct from napi-rs's class tags).
const HANDLE_TAG: sys::napi_type_tag = sys::napi_type_tag {
    lower: 0x8d3c_5a1e_6b2f_47c9,
    upper: 0x2e91_f0a4_c7d8_1b36,
};

/// The ring a handle holds.
///
/// # Safety
/// `env` and `handle` must be valid for the current callback, and `handle`
/// must come from [`make_handle`]: the functions that take one are reachable
/// only through the closure of [`PROTOTYPE_METHODS`], which passes nothing
/// but the handles it got from `make_handle` (kept in a `WeakMap` of its
/// own). The handle's `Arc` lives until the handle is collected, which
/// cannot happen while it is an argument of this call.
unsafe fn ring_of_handle<'a>(env: sys::napi_env, handle: sys::napi_value) -> Result<&'a CoreRing> {
    // SAFETY: forwarded; handles hold an `Arc<CoreRing>`.
    match unsafe { tagged_value::<Arc<CoreRing>>(env, handle, &HANDLE_TAG) } {
        Handle::Ours(ring) => Ok(ring),
        Handle::Absent | Handle::Foreign => Err(to_js(ale_core::AleError::Internal)),
    }
}

/// What a handle argument holds.
enum Handle<'a, T> {
    /// `undefined`: no handle was passed.
    Absent,
    /// The `T` of an external made by [`tagged_external`] with the tag asked for.
    Ours(&'a T),
    /// Anything else.
    Foreign,
}

/// Reads a handle argument: one `napi_typeof`, then, for an external, its
/// tag and pointer.
///
/// # Safety
/// `env` and `value` must be valid for the current callback, and every
/// external tagged `tag` must hold a `T`. The external keeps it alive while
/// it is an argument of the current call.
unsafe fn tagged_value<'a, T>(
    env: sys::napi_env,
    value: sys::napi_value,
    tag: &sys::napi_type_tag,
) -> Handle<'a, T> {
    let (mut kind, mut ours, mut data) = (sys::ValueType::napi_null, false, ptr::null_mut());
    // SAFETY: reading the type, then the tag and the pointer of an external.
    let status = unsafe {
        match sys::napi_typeof(env, value, &mut kind) {
            sys::Status::napi_ok if kind == sys::ValueType::napi_undefined => {
                return Handle::Absent
            }
            sys::Status::napi_ok if kind == sys::ValueType::napi_external => {
                match sys::napi_check_object_type_tag(env, value, tag, &mut ours) {
                    sys::Status::napi_ok if ours => {
                        sys::napi_get_value_external(env, value, &mut data)
                    }
                    status => status,
                }
            }
            status => status,
        }
    };
    if status == sys::Status::napi_ok && ours && !data.is_null() {
        // SAFETY: see the contract: `data` is a live `Box<T>`.
        Handle::Ours(unsafe { &*data.cast::<T>() })
    } else {
        Handle::Foreign
    }
}

/// An external holding `value`, tagged `tag`; the engine frees it when the
/// external is collected.
///
/// # Safety
/// `env` must be valid for the current callback.
unsafe fn tagged_external<T>(
    env: sys::napi_env,
    value: T,
    tag: &sys::napi_type_tag,
) -> napi::Result<sys::napi_value> {
    unsafe extern "C" fn release<T>(
        _env: sys::napi_env,
        data: *mut std::ffi::c_void,
        _hint: *mut std::ffi::c_void,
    ) {
        // SAFETY: `data` is the `Box` leaked below, released once.
        drop(unsafe { Box::from_raw(data.cast::<T>()) });
    }
    let data = Box::into_raw(Box::new(value)).cast::<std::ffi::c_void>();
    let mut handle = ptr::null_mut();
    // SAFETY: on success the engine owns `data` and calls `release` once.
    let status = unsafe {
        sys::napi_create_external(env, data, Some(release::<T>), ptr::null_mut(), &mut handle)
    };
    if status != sys::Status::napi_ok {
        // SAFETY: not handed over: freed here.
        drop(unsafe { Box::from_raw(data.cast::<T>()) });
        return Err(napi::Error::from_status(napi::Status::from(status)));
    }
    // SAFETY: tagging the external just made.
    napi::check_status!(unsafe { sys::napi_type_tag_object(env, handle, tag) })?;
    Ok(handle)
}

/// `makeHandle(ring)`: an external holding a reference to the ring of the
/// `KeyRing` `ring` (checked as any `this` is), released when the external
/// is collected.
unsafe extern "C" fn make_handle(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        crate::binding::forced_panic_point();
        // SAFETY: this callback's.
        let [ring] = unsafe { args::<1>(env, info) }?.values;
        // SAFETY: `ring` is this callback's.
        let inner = Arc::clone(&unsafe { key_ring_of(env, ring) }?.inner);
        // SAFETY: the current env.
        unsafe { tagged_external(env, inner, &HANDLE_TAG) }.map_err(napi_failure)
    }));
    // SAFETY: the current env.
    unsafe { throw(env, outcome) }
}

/// The type tag of a context handle.
const CONTEXT_TAG: sys::napi_type_tag = sys::napi_type_tag {
    lower: 0x51f7_0c2e_9ad4_63b8,
    upper: 0xc4a6_2d19_7e05_f38b,
};

/// The context a context handle holds, or `None` for `undefined` (the
/// caller then reads the three strings).
///
/// # Safety
/// `env` and `value` must be valid for the current callback.
unsafe fn context_of_handle<'a>(
    env: sys::napi_env,
    value: sys::napi_value,
) -> Result<Option<&'a OwnedContext>> {
    // SAFETY: forwarded; context handles hold an `OwnedContext`.
    match unsafe { tagged_value::<OwnedContext>(env, value, &CONTEXT_TAG) } {
        Handle::Absent => Ok(None),
        Handle::Ours(context) => Ok(Some(context)),
        Handle::Foreign => Err(to_js(ale_core::AleError::Internal)),
    }
}

/// `makeContext(tenantId, collectionId, fieldName)`: an external holding
/// the validated context, for calls that then read no context strings.
/// Throws what a call with those three arguments would.
unsafe extern "C" fn make_context(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        crate::binding::forced_panic_point();
        // SAFETY: this callback's.
        let argv = unsafe { args::<3>(env, info) }?.values;
        // SAFETY: the values are this callback's.
        let context = unsafe { OwnedContext::read(env, argv) }?;
        // SAFETY: the current env.
        unsafe { tagged_external(env, context, &CONTEXT_TAG) }.map_err(napi_failure)
    }));
    // SAFETY: the current env.
    unsafe { throw(env, outcome) }
}

/// The prototype's hot methods, in JS (`src/prototype.js`): each passes
/// the native function the ring's handle and, for a context seen before,
/// the context's (see the module documentation for why, and what it saves).
const PROTOTYPE_METHODS: &str = include_str!("prototype.js");

/// Defines the hot prototype methods from [`PROTOTYPE_METHODS`], handing
/// it the native functions it alone calls.
///
/// # Safety
/// `env` and `prototype` must be valid during module registration.
unsafe fn define_prototype_methods(
    env: sys::napi_env,
    prototype: sys::napi_value,
) -> napi::Result<()> {
    let mut args = [ptr::null_mut(); 7];
    args[0] = prototype;
    let natives: [(&std::ffi::CStr, Callback); 6] = [
        (c"makeHandle", make_handle),
        (c"makeContext", make_context),
        (c"encrypt", handle_encrypt),
        (c"decrypt", handle_decrypt),
        (c"encryptBinary", handle_encrypt_binary),
        (c"decryptBinary", handle_decrypt_binary),
    ];
    let (mut source, mut factory, mut undefined) =
        (ptr::null_mut(), ptr::null_mut(), ptr::null_mut());
    // SAFETY: module registration: functions created here are passed only to
    // the script's factory, which keeps them in its closure.
    unsafe {
        for (slot, (name, callback)) in args[1..].iter_mut().zip(natives) {
            napi::check_status!(sys::napi_create_function(
                env,
                name.as_ptr(),
                name.to_bytes().len() as isize,
                Some(callback),
                ptr::null_mut(),
                slot
            ))?;
        }
        napi::check_status!(sys::napi_create_string_utf8(
            env,
            PROTOTYPE_METHODS.as_ptr().cast(),
            PROTOTYPE_METHODS.len() as isize,
            &mut source
        ))?;
        napi::check_status!(sys::napi_run_script(env, source, &mut factory))?;
        napi::check_status!(sys::napi_get_undefined(env, &mut undefined))?;
        let mut result = ptr::null_mut();
        napi::check_status!(sys::napi_call_function(
            env,
            undefined,
            factory,
            args.len(),
            args.as_ptr(),
            &mut result
        ))
    }
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
        // SAFETY: this callback's.
        let Args {
            count: argc,
            values: argv,
            this,
            data,
        } = unsafe { args::<MAX_ARGS>(env, info) }?;
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
        // SAFETY: this callback's.
        let this = unsafe { args::<0>(env, info) }?.this;
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
    ($($name:ident => $op:expr, $via:expr;)*) => {$(
        unsafe extern "C" fn $name(
            env: sys::napi_env,
            info: sys::napi_callback_info,
        ) -> sys::napi_value {
            // SAFETY: called by the engine with this callback's env and info.
            unsafe { call(env, info, $op, $via) }
        }
    )*};
}

direct_callbacks! {
    global_encrypt => Op::Encrypt, Via::Global;
    global_decrypt => Op::Decrypt, Via::Global;
    global_encrypt_binary => Op::EncryptBinary, Via::Global;
    global_decrypt_binary => Op::DecryptBinary, Via::Global;
    handle_encrypt => Op::Encrypt, Via::Handle;
    handle_decrypt => Op::Decrypt, Via::Handle;
    handle_encrypt_binary => Op::EncryptBinary, Via::Handle;
    handle_decrypt_binary => Op::DecryptBinary, Via::Handle;
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
        define_prototype_methods(raw, prototype)?;
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
