//! Plain Node-API helpers: a callback's arguments, property reads (one
//! helper for every `process.*` lookup), numbers, tagged externals, and
//! defining functions on an object.

use std::ffi::{c_void, CStr};
use std::ptr;

use napi::bindgen_prelude::{ToNapiValue, TypeName};
use napi::sys;

use crate::error::{check, Result};

/// A JS value this module created (a string or a `Buffer`), returned to
/// napi-rs as it is. Each function's `ts_return_type` says which.
pub struct Created(pub sys::napi_value);

impl TypeName for Created {
    fn type_name() -> &'static str {
        "unknown"
    }
    fn value_type() -> napi::ValueType {
        napi::ValueType::Unknown
    }
}

impl ToNapiValue for Created {
    unsafe fn to_napi_value(_: sys::napi_env, val: Self) -> napi::Result<sys::napi_value> {
        Ok(val.0)
    }
}

/// A raw Node-API callback.
pub type Callback = unsafe extern "C" fn(sys::napi_env, sys::napi_callback_info) -> sys::napi_value;

/// What a callback was called with: how many arguments, the first `N`
/// (`undefined` where fewer were passed), `this`, and the function's data.
pub struct Args<const N: usize> {
    pub count: usize,
    pub values: [sys::napi_value; N],
    pub this: sys::napi_value,
    pub data: *mut c_void,
}

/// Reads the current callback's [`Args`].
///
/// # Safety
/// `env` and `info` must be the current callback's.
pub unsafe fn args<const N: usize>(
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
    check(unsafe {
        sys::napi_get_cb_info(
            env,
            info,
            &mut a.count,
            a.values.as_mut_ptr(),
            &mut a.this,
            &mut a.data,
        )
    })?;
    Ok(a)
}

/// Whether `value` is a string (no JS runs).
///
/// # Safety
/// `env` and `value` must be valid.
pub unsafe fn is_string(env: sys::napi_env, value: sys::napi_value) -> bool {
    let mut t = 0;
    // SAFETY: forwarded.
    let status = unsafe { sys::napi_typeof(env, value, &mut t) };
    status == sys::Status::napi_ok && t == sys::ValueType::napi_string
}

/// `typeof value`, for error messages.
///
/// # Safety
/// `env` and `value` must be valid.
pub unsafe fn type_name(env: sys::napi_env, value: sys::napi_value) -> &'static str {
    let mut t = 0;
    // SAFETY: forwarded.
    if unsafe { sys::napi_typeof(env, value, &mut t) } != sys::Status::napi_ok {
        return "an unknown value";
    }
    match t {
        sys::ValueType::napi_undefined => "undefined",
        sys::ValueType::napi_null => "null",
        sys::ValueType::napi_boolean => "a boolean",
        sys::ValueType::napi_number => "a number",
        sys::ValueType::napi_string => "a string",
        sys::ValueType::napi_symbol => "a symbol",
        sys::ValueType::napi_object => "an object",
        sys::ValueType::napi_function => "a function",
        sys::ValueType::napi_bigint => "a bigint",
        sys::ValueType::napi_external => "an external",
        _ => "an unknown value",
    }
}

/// A JS boolean's value; `None` for anything else (no coercion).
///
/// # Safety
/// `env` and `value` must be valid.
pub unsafe fn read_bool(env: sys::napi_env, value: sys::napi_value) -> Option<bool> {
    let mut b = false;
    // SAFETY: forwarded.
    (unsafe { sys::napi_get_value_bool(env, value, &mut b) } == sys::Status::napi_ok).then_some(b)
}

/// Whether `value` is `undefined` or `null`.
///
/// # Safety
/// `env` and `value` must be valid.
pub unsafe fn is_nullish(env: sys::napi_env, value: sys::napi_value) -> bool {
    // SAFETY: forwarded.
    matches!(unsafe { type_name(env, value) }, "undefined" | "null")
}

/// `object[name]`, or `None` when it is `undefined`.
///
/// # Safety
/// `env` and `object` must be valid for the current call.
pub unsafe fn property(
    env: sys::napi_env,
    object: sys::napi_value,
    name: &CStr,
) -> Result<Option<sys::napi_value>> {
    let mut value = ptr::null_mut();
    // SAFETY: forwarded from the caller.
    check(unsafe { sys::napi_get_named_property(env, object, name.as_ptr(), &mut value) })?;
    // SAFETY: `value` was just read.
    Ok((unsafe { type_name(env, value) } != "undefined").then_some(value))
}

/// The global `process` object, or `None` where there is none.
///
/// # Safety
/// `env` must be valid for the current call.
pub unsafe fn process(env: sys::napi_env) -> Result<Option<sys::napi_value>> {
    let mut global = ptr::null_mut();
    // SAFETY: the current env's global object.
    check(unsafe { sys::napi_get_global(env, &mut global) })?;
    // SAFETY: a property read on a live value of the current env.
    let process = unsafe { property(env, global, c"process") }?;
    // SAFETY: `process` was just read.
    Ok(process.filter(|&p| unsafe { type_name(env, p) } == "an object"))
}

/// `process[name]`, every status checked; `None` when there is no
/// `process` or it has no such property. The one way this crate reads
/// `process.*`.
///
/// # Safety
/// `env` must be valid for the current call.
pub unsafe fn process_property(env: sys::napi_env, name: &CStr) -> Result<Option<sys::napi_value>> {
    // SAFETY: forwarded.
    match unsafe { process(env) }? {
        // SAFETY: a property read on a live object of the current env.
        Some(process) => unsafe { property(env, process, name) },
        None => Ok(None),
    }
}

/// A JS string of `bytes`, which must be UTF-8 (a `&str`'s, or a path's on
/// a platform whose paths are).
///
/// # Safety
/// `env` must be valid for the current call.
pub unsafe fn string(env: sys::napi_env, bytes: &[u8]) -> Result<sys::napi_value> {
    let mut value = ptr::null_mut();
    // SAFETY: `bytes` holds `bytes.len()` bytes.
    check(unsafe {
        sys::napi_create_string_utf8(
            env,
            bytes.as_ptr().cast(),
            isize::try_from(bytes.len()).unwrap_or(0),
            &mut value,
        )
    })?;
    Ok(value)
}

/// `function.call(this, ...args)`; the value it returned, or its exception
/// left pending and `Err`.
///
/// # Safety
/// `env` and the values must be valid for the current call.
pub unsafe fn call(
    env: sys::napi_env,
    this: sys::napi_value,
    function: sys::napi_value,
    args: &[sys::napi_value],
) -> Result<sys::napi_value> {
    let mut result = ptr::null_mut();
    // SAFETY: forwarded; `args` holds `args.len()` values.
    check(unsafe {
        sys::napi_call_function(env, this, function, args.len(), args.as_ptr(), &mut result)
    })?;
    Ok(result)
}

/// A finite whole number of at least 1 (callers bound it further), or
/// `None` for anything else: not a number, NaN, infinite, a fraction, below 1.
///
/// # Safety
/// `env` and `value` must be valid for the current call.
pub unsafe fn positive_integer(env: sys::napi_env, value: sys::napi_value) -> Option<f64> {
    let mut n = f64::NAN;
    // SAFETY: forwarded; a non-number fails and leaves NaN.
    let status = unsafe { sys::napi_get_value_double(env, value, &mut n) };
    (status == sys::Status::napi_ok && n.is_finite() && n >= 1.0 && n.fract() == 0.0).then_some(n)
}

/// An external holding `value`, tagged `tag`; the engine frees it when the
/// external is collected.
///
/// # Safety
/// `env` must be valid for the current call.
pub unsafe fn tagged_external<T>(
    env: sys::napi_env,
    value: T,
    tag: &sys::napi_type_tag,
) -> Result<sys::napi_value> {
    unsafe extern "C" fn release<T>(_env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
        // SAFETY: `data` is the `Box` leaked below, released once.
        drop(unsafe { Box::from_raw(data.cast::<T>()) });
    }
    let data = Box::into_raw(Box::new(value)).cast::<c_void>();
    let mut handle = ptr::null_mut();
    // SAFETY: on success the engine owns `data` and calls `release` once.
    let status = unsafe {
        sys::napi_create_external(env, data, Some(release::<T>), ptr::null_mut(), &mut handle)
    };
    if status != sys::Status::napi_ok {
        // SAFETY: not handed over: freed here.
        drop(unsafe { Box::from_raw(data.cast::<T>()) });
        return check(status).map(|()| ptr::null_mut());
    }
    // SAFETY: tagging the external just made.
    check(unsafe { sys::napi_type_tag_object(env, handle, tag) })?;
    Ok(handle)
}

/// What a handle argument holds.
pub enum Tagged<'a, T> {
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
pub unsafe fn tagged_value<'a, T>(
    env: sys::napi_env,
    value: sys::napi_value,
    tag: &sys::napi_type_tag,
) -> Tagged<'a, T> {
    let (mut kind, mut ours, mut data) = (sys::ValueType::napi_null, false, ptr::null_mut());
    // SAFETY: reading the type, then the tag and the pointer of an external.
    let status = unsafe {
        match sys::napi_typeof(env, value, &mut kind) {
            sys::Status::napi_ok if kind == sys::ValueType::napi_undefined => {
                return Tagged::Absent
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
        Tagged::Ours(unsafe { &*data.cast::<T>() })
    } else {
        Tagged::Foreign
    }
}

/// A JS function named `name` that runs `callback` with `data`.
///
/// # Safety
/// `env` must be valid; `data` must stay valid as long as the function.
pub unsafe fn function(
    env: sys::napi_env,
    name: &CStr,
    callback: Callback,
    data: *mut c_void,
) -> Result<sys::napi_value> {
    let mut function = ptr::null_mut();
    let len = isize::try_from(name.to_bytes().len()).unwrap_or(isize::MAX);
    // SAFETY: `name` is a valid C string of `len` bytes; `callback` is 'static.
    check(unsafe {
        sys::napi_create_function(env, name.as_ptr(), len, Some(callback), data, &mut function)
    })?;
    Ok(function)
}

/// Defines `target[name] = value` with a method's attributes (writable,
/// configurable; enumerable only when asked, as on module exports).
///
/// # Safety
/// `env`, `target` and `value` must be valid.
pub unsafe fn define_value(
    env: sys::napi_env,
    target: sys::napi_value,
    name: &CStr,
    value: sys::napi_value,
    enumerable: bool,
) -> Result<()> {
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
        value,
        attributes,
        data: ptr::null_mut(),
    };
    // SAFETY: one valid descriptor.
    check(unsafe { sys::napi_define_properties(env, target, 1, &descriptor) })
}

/// Defines the accessor `target[name]` with `getter` and no setter.
///
/// # Safety
/// `env` and `target` must be valid.
pub unsafe fn define_getter(
    env: sys::napi_env,
    target: sys::napi_value,
    name: &CStr,
    getter: Callback,
) -> Result<()> {
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
    check(unsafe { sys::napi_define_properties(env, target, 1, &descriptor) })
}
