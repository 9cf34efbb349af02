//! Moving strings across the Node-API boundary with as few passes as possible.
//!
//! Measured on Node 24 (64 KiB ASCII argument): `napi_get_value_string_utf8`
//! costs about 39 µs, because V8's `WriteUtf8` walks the string a character at
//! a time; `napi_get_value_string_utf16` costs about 2 µs (a widening copy).
//! So every string is read as UTF-16 and transcoded here with simdutf, which
//! also validates it in the same pass:
//!
//! - **In:** length in UTF-16 units (O(1)), one UTF-16 copy into a reused
//!   thread-local buffer, one SIMD transcode to UTF-8. A lone surrogate makes
//!   the transcode fail, and the string is refused with `ALE_INVALID_INPUT`
//!   instead of being silently altered (the engines would substitute U+FFFD).
//! - **Out:** ASCII (every envelope, most plaintext) is created as Latin-1,
//!   the cheapest way into V8; other text is transcoded to UTF-16 here.
//!
//! All buffers are per thread and reused, so the hot path does not allocate
//! once they have grown to the working size.

use std::ops::Range;
use std::ptr;

use ale_core::error::AleError;
use napi::sys;

#[cfg(target_endian = "big")]
compile_error!("the UTF-16 transcoding assumes a little-endian target");

/// Largest capacity a thread keeps between calls; larger buffers are freed.
const KEEP_CAPACITY: usize = 4 << 20;
/// UTF-16 units a read buffer always has, so short strings take one call.
const MIN_WIDE_CAPACITY: usize = 1024;
/// Up to this many units, ASCII is narrowed with a plain loop.
const SHORT: usize = 32;

/// Reads the JS string `value` as UTF-8 and appends it to `out`, using `wide`
/// as scratch. Returns the appended range. `what` names the argument in errors.
///
/// # Safety
/// `env` and `value` must be valid for the current call.
pub unsafe fn read_utf8(
    env: sys::napi_env,
    value: sys::napi_value,
    wide: &mut Vec<u16>,
    out: &mut Vec<u8>,
    what: &str,
) -> Result<Range<usize>, AleError> {
    // SAFETY: forwarded from the caller.
    let units = unsafe { read_utf16(env, value, wide, what) }?;
    let start = out.len();
    if units == 0 {
        return Ok(start..start);
    }
    // Short ASCII strings (context parts, small values): a plain loop beats
    // the SIMD library's dispatch.
    if units <= SHORT && wide.iter().all(|&u| u < 0x80) {
        // Every unit is below 0x80, so the cast keeps it whole.
        #[allow(clippy::cast_possible_truncation)]
        out.extend(wide.iter().map(|&u| u as u8));
        return Ok(start..out.len());
    }
    let capacity = units
        .checked_mul(3)
        .ok_or_else(|| AleError::InvalidInput(format!("{what} is too long")))?;
    out.reserve(capacity);
    // SAFETY: `wide` holds `units` initialized code units; `out` has room for
    // `3 * units` bytes after `start`, the most UTF-8 that many units can need.
    let written = unsafe {
        simdutf::convert_utf16le_to_utf8(wide.as_ptr(), units, out.as_mut_ptr().add(start))
    };
    if written == 0 {
        return Err(AleError::InvalidInput(format!(
            "{what} contains a lone UTF-16 surrogate, which cannot be stored as text without \
             changing it; repair the string first (String.prototype.toWellFormed)"
        )));
    }
    // SAFETY: simdutf initialized `written` bytes from `start`.
    unsafe { out.set_len(start + written) };
    Ok(start..start + written)
}

/// Copies the string's UTF-16 code units into `wide` (replacing its contents)
/// and returns how many there are. A string that fits the buffer's current
/// capacity takes one engine call; a longer one takes a length query first.
///
/// # Safety
/// `env` and `value` must be valid for the current call.
pub unsafe fn read_utf16(
    env: sys::napi_env,
    value: sys::napi_value,
    wide: &mut Vec<u16>,
    what: &str,
) -> Result<usize, AleError> {
    wide.clear();
    wide.reserve(MIN_WIDE_CAPACITY);
    let mut copied = 0usize;
    // SAFETY: `wide` has `capacity()` writable units; the engine writes at
    // most `capacity() - 1` of them plus a terminating NUL.
    let status = unsafe {
        sys::napi_get_value_string_utf16(
            env,
            value,
            wide.as_mut_ptr(),
            wide.capacity(),
            &mut copied,
        )
    };
    if status != sys::Status::napi_ok {
        // SAFETY: same env and value.
        let got = unsafe { type_name(env, value) };
        return Err(AleError::InvalidInput(format!(
            "{what} must be a string, got {got}"
        )));
    }
    if copied + 1 < wide.capacity() {
        // SAFETY: the engine initialized `copied` units, and the whole string fit.
        unsafe { wide.set_len(copied) };
        return Ok(copied);
    }
    // The buffer was filled: ask for the length, grow, and read again.
    let mut units = 0usize;
    // SAFETY: a null buffer asks only for the length, in UTF-16 units (O(1)).
    let status =
        unsafe { sys::napi_get_value_string_utf16(env, value, ptr::null_mut(), 0, &mut units) };
    wide.reserve(units + 1);
    // SAFETY: `wide` now has room for `units + 1` units.
    let status2 = unsafe {
        sys::napi_get_value_string_utf16(env, value, wide.as_mut_ptr(), units + 1, &mut copied)
    };
    if status != sys::Status::napi_ok || status2 != sys::Status::napi_ok || copied != units {
        return Err(AleError::InvalidInput(format!(
            "{what} could not be read as text"
        )));
    }
    // SAFETY: the engine initialized `copied` units.
    unsafe { wide.set_len(copied) };
    Ok(units)
}

/// Creates a JS string from ASCII bytes.
///
/// # Safety
/// `env` must be valid for the current call.
pub unsafe fn ascii_to_js(env: sys::napi_env, ascii: &[u8]) -> napi::Result<sys::napi_value> {
    let mut out = ptr::null_mut();
    let len = isize::try_from(ascii.len()).map_err(|_| too_long())?;
    // SAFETY: `ascii` is valid for `len` bytes; Latin-1 is a superset of ASCII.
    napi::check_status!(unsafe {
        sys::napi_create_string_latin1(env, ascii.as_ptr().cast(), len, &mut out)
    })?;
    Ok(out)
}

/// Creates a JS string from UTF-8 bytes, using `wide` as scratch. Returns
/// `Ok(None)` when the bytes are not valid UTF-8.
///
/// # Safety
/// `env` must be valid for the current call.
pub unsafe fn utf8_to_js(
    env: sys::napi_env,
    text: &[u8],
    wide: &mut Vec<u16>,
) -> napi::Result<Option<sys::napi_value>> {
    if simdutf::validate_ascii(text) {
        // SAFETY: forwarded.
        return unsafe { ascii_to_js(env, text) }.map(Some);
    }
    wide.clear();
    wide.reserve(text.len());
    // SAFETY: `text` is valid for reads; `wide` has room for `text.len()` units,
    // the most that many UTF-8 bytes can produce. Non-empty: ASCII was handled.
    let units =
        unsafe { simdutf::convert_utf8_to_utf16le(text.as_ptr(), text.len(), wide.as_mut_ptr()) };
    if units == 0 {
        return Ok(None);
    }
    // SAFETY: simdutf initialized `units` code units.
    unsafe { wide.set_len(units) };
    let mut out = ptr::null_mut();
    let len = isize::try_from(units).map_err(|_| too_long())?;
    // SAFETY: `wide` is valid for `len` UTF-16 code units.
    napi::check_status!(unsafe {
        sys::napi_create_string_utf16(env, wide.as_ptr(), len, &mut out)
    })?;
    Ok(Some(out))
}

fn too_long() -> napi::Error {
    napi::Error::from_reason("string too long for the JS engine")
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
        _ => "an unknown value",
    }
}

/// Frees scratch capacity left by an unusually large value, so one 100 MB
/// string does not pin 300 MB per thread for the life of the process.
pub fn trim<T: zeroize::DefaultIsZeroes>(buf: &mut Vec<T>) {
    if buf.capacity() > KEEP_CAPACITY {
        zeroize::Zeroize::zeroize(buf);
        *buf = Vec::new();
    }
}
