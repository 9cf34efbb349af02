//! Strings across the Node-API boundary, in as few passes as possible.
//!
//! V8's UTF-8 export walks a string a character at a time, while its UTF-16
//! export is a widening copy; so on V8 every string is read as UTF-16 and
//! transcoded here with simdutf, which validates it in the same pass.
//! JavaScriptCore (Bun) exports UTF-8 in one SIMD pass, so there long
//! strings are read that way ([`ENGINE_UTF8`]). The measurements behind both
//! choices are in `docs/performance.md`.
//!
//! - **In:** a lone surrogate is refused with `ALE_INVALID_INPUT` instead of
//!   being silently altered (the engines would substitute U+FFFD).
//! - **Out:** ASCII (every envelope, most plaintext) is created as Latin-1,
//!   the cheapest way into either engine; other text is transcoded to
//!   UTF-16 here.
//!
//! The buffers are the caller's, reused across calls, so the hot path does
//! not allocate once they have grown to the working size.

use std::ops::Range;
use std::ptr;
use std::sync::atomic::{AtomicBool, Ordering};

use ale_core::envelope;
use ale_core::error::AleError;
use ale_core::scratch;
use ale_core::Rings;
use napi::sys;

use crate::js::raw::type_name;

#[cfg(target_endian = "big")]
compile_error!("the UTF-16 transcoding assumes a little-endian target");

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
    unsafe { read_utf8_sized(env, value, wide, out, what, false) }
}

/// [`read_utf8`] for strings known to be short (context parts): straight to
/// the one-call UTF-16 read, without asking the engine for the length first.
///
/// # Safety
/// `env` and `value` must be valid for the current call.
pub unsafe fn read_short_utf8(
    env: sys::napi_env,
    value: sys::napi_value,
    wide: &mut Vec<u16>,
    out: &mut Vec<u8>,
    what: &str,
) -> Result<Range<usize>, AleError> {
    // SAFETY: forwarded from the caller.
    unsafe { read_utf8_sized(env, value, wide, out, what, true) }
}

/// # Safety
/// `env` and `value` must be valid for the current call.
unsafe fn read_utf8_sized(
    env: sys::napi_env,
    value: sys::napi_value,
    wide: &mut Vec<u16>,
    out: &mut Vec<u8>,
    what: &str,
    short: bool,
) -> Result<Range<usize>, AleError> {
    if !short && ENGINE_UTF8.load(Ordering::Relaxed) {
        // SAFETY: forwarded from the caller.
        if let Some(range) = unsafe { read_utf8_from_engine(env, value, wide, out, what, None) }? {
            return Ok(range);
        }
    }
    // SAFETY: forwarded from the caller.
    let units = unsafe { read_utf16(env, value, wide, what, None) }?;
    let start = out.len();
    if units == 0 {
        return Ok(start..start);
    }
    // Short ASCII strings (context parts, small values): a plain loop beats
    // the SIMD library's dispatch.
    if units <= SHORT && wide.iter().all(|&u| u < 0x80) {
        scratch::reserve(out, units);
        // Every unit is below 0x80, so the cast keeps it whole.
        #[allow(clippy::cast_possible_truncation)]
        out.extend(wide.iter().map(|&u| u as u8));
        return Ok(start..out.len());
    }
    let capacity = units
        .checked_mul(3)
        .ok_or_else(|| AleError::InvalidInput(format!("{what} is too long")))?;
    scratch::reserve(out, capacity);
    // SAFETY: `wide` holds `units` initialized code units; `out` has room for
    // `3 * units` bytes after `start`, the most UTF-8 that many units can need.
    let written = unsafe {
        simdutf::convert_utf16le_to_utf8(wide.as_ptr(), units, out.as_mut_ptr().add(start))
    };
    if written == 0 {
        return Err(lone_surrogate(what));
    }
    // SAFETY: simdutf initialized `written` bytes from `start`.
    unsafe { out.set_len(start + written) };
    Ok(start..start + written)
}

/// Set at module load on Bun, whose UTF-8 export of a string is one SIMD
/// pass and beats a UTF-16 copy plus a transcode; on V8 it is the other way
/// round (`docs/performance.md`, "Strings across the boundary").
pub static ENGINE_UTF8: AtomicBool = AtomicBool::new(false);

fn lone_surrogate(what: &str) -> AleError {
    AleError::LoneSurrogate { what: what.into() }
}

/// An envelope's bytes, on engines where that is the fast read (Bun), when
/// it is ASCII, as every envelope is; no text check is needed. `None`: read
/// the UTF-16 units instead (a value with other characters among them).
///
/// # Safety
/// `env` and `value` must be valid for the current call.
pub unsafe fn read_envelope_bytes(
    env: sys::napi_env,
    value: sys::napi_value,
    wide: &mut Vec<u16>,
    out: &mut Vec<u8>,
    ring: &Rings,
) -> Result<Option<Range<usize>>, AleError> {
    if !ENGINE_UTF8.load(Ordering::Relaxed) {
        return Ok(None);
    }
    out.clear();
    // SAFETY: forwarded from the caller.
    unsafe { read_utf8_from_engine(env, value, wide, out, "envelope", Some(ring)) }
}

/// Reads an envelope's UTF-16 units into `wide` and returns how many. A
/// value longer than the ring's maximum, or one that does not start like a
/// supported envelope (v1 or v2), is refused before more than the reused buffer is copied.
///
/// # Safety
/// `env` and `value` must be valid for the current call.
pub unsafe fn read_envelope_utf16(
    env: sys::napi_env,
    value: sys::napi_value,
    wide: &mut Vec<u16>,
    ring: &Rings,
) -> Result<usize, AleError> {
    // SAFETY: forwarded from the caller.
    unsafe { read_utf16(env, value, wide, "envelope", Some(ring)) }
}

/// Refuses, before it is copied, a stored value of `units` characters whose
/// first characters are `head`: over the ring's maximum, or not `v1:` or `v2:`.
fn check_long_envelope(ring: &Rings, units: usize, head: &[u16]) -> Result<(), AleError> {
    envelope::check_version(head)?;
    ring.check_envelope_len(units)
}

/// The engine's own UTF-8 export, for strings longer than [`SHORT`]: one
/// call into a buffer sized from the O(1) UTF-16 length. Text (`envelope` is
/// `None`) is checked for lone surrogates, which engines replace with
/// U+FFFD; an envelope is bounded by the ring's maximum length and checked
/// for its prefix before it is copied. `None`: use the UTF-16 path.
///
/// # Safety
/// `env` and `value` must be valid for the current call.
unsafe fn read_utf8_from_engine(
    env: sys::napi_env,
    value: sys::napi_value,
    wide: &mut Vec<u16>,
    out: &mut Vec<u8>,
    what: &str,
    envelope: Option<&Rings>,
) -> Result<Option<Range<usize>>, AleError> {
    let mut units = 0usize;
    // SAFETY: a null buffer asks only for the length, in UTF-16 units (O(1)).
    let status =
        unsafe { sys::napi_get_value_string_utf16(env, value, ptr::null_mut(), 0, &mut units) };
    if status != sys::Status::napi_ok || units <= SHORT {
        return Ok(None);
    }
    if let Some(ring) = envelope.filter(|_| units > MIN_WIDE_CAPACITY) {
        // The same head as the UTF-16 path reads first, so both engines
        // classify a long value alike.
        // SAFETY: forwarded from the caller.
        if unsafe { read_head(env, value, wide) }.is_none() {
            return Ok(None);
        }
        check_long_envelope(ring, units, wide)?;
    }
    let capacity = units
        .checked_mul(3)
        .and_then(|n| n.checked_add(1))
        .ok_or_else(|| AleError::InvalidInput(format!("{what} is too long")))?;
    let start = out.len();
    scratch::reserve(out, capacity);
    let mut written = 0usize;
    // SAFETY: `out` has `capacity` writable bytes after `start`; one UTF-16
    // unit never needs more than 3 UTF-8 bytes, so nothing is cut.
    let status = unsafe {
        sys::napi_get_value_string_utf8(
            env,
            value,
            out.as_mut_ptr().add(start).cast(),
            capacity,
            &mut written,
        )
    };
    if status != sys::Status::napi_ok || written >= capacity {
        return Ok(None);
    }
    // SAFETY: the engine initialized `written` bytes from `start`.
    unsafe { out.set_len(start + written) };
    if envelope.is_some() && written != units {
        // Not ASCII, so no envelope: the UTF-16 path refuses it, measuring
        // its length in characters as the other engine does, not in bytes.
        out.truncate(start);
        return Ok(None);
    }
    // All-ASCII text (as many bytes as units) is valid and cannot hold U+FFFD.
    if envelope.is_none() && written != units {
        let text = &out[start..];
        let well_formed = if !simdutf::validate_utf8(text) {
            false
        } else if holds_replacement_character(text) {
            // U+FFFD may be real text or a replaced lone surrogate: ask the original.
            // SAFETY: forwarded from the caller.
            unsafe { utf16_is_well_formed(env, value, wide, what) }?
        } else {
            true
        };
        if !well_formed {
            out.truncate(start);
            return Err(lone_surrogate(what));
        }
    }
    Ok(Some(start..start + written))
}

/// # Safety
/// `env` and `value` must be valid for the current call.
unsafe fn utf16_is_well_formed(
    env: sys::napi_env,
    value: sys::napi_value,
    wide: &mut Vec<u16>,
    what: &str,
) -> Result<bool, AleError> {
    // SAFETY: forwarded from the caller.
    unsafe { read_utf16(env, value, wide, what, None) }?;
    Ok(simdutf::validate_utf16le(wide))
}

/// Copies as many of the string's first UTF-16 units as `wide`'s capacity
/// (at least [`MIN_WIDE_CAPACITY`]) holds, less one, into `wide`, replacing
/// its contents; returns how many, or `None` when `value` is not a string.
///
/// # Safety
/// `env` and `value` must be valid for the current call.
unsafe fn read_head(
    env: sys::napi_env,
    value: sys::napi_value,
    wide: &mut Vec<u16>,
) -> Option<usize> {
    wide.clear();
    scratch::reserve(wide, MIN_WIDE_CAPACITY);
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
        return None;
    }
    // SAFETY: the engine initialized `copied` units.
    unsafe { wide.set_len(copied) };
    Some(copied)
}

/// Copies the string's UTF-16 code units into `wide` (replacing its contents)
/// and returns how many there are. A string that fits the buffer's current
/// capacity takes one engine call; a longer one takes a length query first,
/// and, for an `envelope`, the checks of [`check_long_envelope`] before the
/// buffer grows.
///
/// # Safety
/// `env` and `value` must be valid for the current call.
pub unsafe fn read_utf16(
    env: sys::napi_env,
    value: sys::napi_value,
    wide: &mut Vec<u16>,
    what: &str,
    envelope: Option<&Rings>,
) -> Result<usize, AleError> {
    // SAFETY: forwarded from the caller.
    let Some(mut copied) = (unsafe { read_head(env, value, wide) }) else {
        // SAFETY: same env and value.
        let got = unsafe { type_name(env, value) };
        return Err(AleError::InvalidInput(format!(
            "{what} must be a string, got {got}"
        )));
    };
    if copied + 1 < wide.capacity() {
        return Ok(copied); // the whole string fit
    }
    // The buffer was filled: ask for the length, grow, and read again.
    let mut units = 0usize;
    // SAFETY: a null buffer asks only for the length, in UTF-16 units (O(1)).
    let status =
        unsafe { sys::napi_get_value_string_utf16(env, value, ptr::null_mut(), 0, &mut units) };
    if let Some(ring) = envelope {
        check_long_envelope(ring, units, wide)?;
    }
    wide.clear();
    scratch::reserve(wide, units + 1);
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

/// Creates a JS string from UTF-8 text, using `wide` as scratch. `text` is
/// UTF-8, and ASCII when `ascii` says so, as `ale_core::text::check_text`
/// found it: the conversion does not check it again.
///
/// # Safety
/// `env` must be valid for the current call, and `text` valid UTF-8.
pub unsafe fn text_to_js(
    env: sys::napi_env,
    text: &[u8],
    ascii: bool,
    wide: &mut Vec<u16>,
) -> napi::Result<sys::napi_value> {
    if ascii {
        // SAFETY: forwarded.
        return unsafe { ascii_to_js(env, text) };
    }
    wide.clear();
    scratch::reserve(wide, text.len());
    // SAFETY: `text` is valid UTF-8 (the caller's contract) for reads; `wide`
    // has room for `text.len()` units, the most that many bytes can produce.
    let units = unsafe {
        simdutf::convert_valid_utf8_to_utf16le(text.as_ptr(), text.len(), wide.as_mut_ptr())
    };
    // SAFETY: simdutf initialized `units` code units.
    unsafe { wide.set_len(units) };
    let mut out = ptr::null_mut();
    let len = isize::try_from(units).map_err(|_| too_long())?;
    // SAFETY: `wide` is valid for `len` UTF-16 code units.
    napi::check_status!(unsafe {
        sys::napi_create_string_utf16(env, wide.as_ptr(), len, &mut out)
    })?;
    Ok(out)
}

fn too_long() -> napi::Error {
    napi::Error::from_reason("string too long for the JS engine")
}

/// A tenant id argument, as UTF-8; `ALE_INVALID_CONTEXT` when it is not a
/// well-formed string.
///
/// # Safety
/// `env` and `value` must be valid for the current call.
pub unsafe fn read_tenant(env: sys::napi_env, value: sys::napi_value) -> Result<String, AleError> {
    let (mut wide, mut text) = (Vec::new(), Vec::new());
    let not_string = || AleError::InvalidContext {
        part: "tenantId",
        reason: "is not a string",
    };
    // SAFETY: forwarded.
    let range = unsafe { read_utf8(env, value, &mut wide, &mut text, "tenantId") }
        .map_err(|_| not_string())?;
    String::from_utf8(text[range].to_vec()).map_err(|_| AleError::Internal)
}

/// Whether UTF-8 `bytes` hold U+FFFD (EF BF BD): a scan for its first byte,
/// which UTF-8 of ASCII and Latin-1 text never holds, so it needs no
/// searcher built per call as a substring search does (docs/performance.md,
/// "Bun: the bun:ffi path").
pub fn holds_replacement_character(bytes: &[u8]) -> bool {
    memchr::memchr_iter(0xEF, bytes).any(|at| bytes.get(at + 1..at + 3) == Some(&[0xBF, 0xBD][..]))
}

#[cfg(test)]
mod tests {
    use super::holds_replacement_character as holds;

    #[test]
    fn finds_u_fffd_and_only_it() {
        assert!(holds("\u{FFFD}".as_bytes()));
        assert!(holds("abc\u{FFFD}".as_bytes()));
        assert!(holds("\u{F000}x\u{FFFD}".as_bytes()));
        assert!(!holds(b""));
        assert!(!holds("plain text, café".as_bytes()));
        // The same first byte, other characters: U+F000, U+FFFE, U+FFBD.
        assert!(!holds("\u{F000}\u{FFFE}\u{FFBD}".as_bytes()));
        // Cut after its first two bytes.
        assert!(!holds(&[b'a', 0xEF, 0xBF]));
    }
}
