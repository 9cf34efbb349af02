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
use std::sync::atomic::{AtomicBool, Ordering};

use ale_core::envelope;
use ale_core::error::AleError;
use ale_core::keys::KeyRing as CoreRing;
use ale_core::scratch;
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

/// Set at module load on Bun, whose UTF-8 export of a string is one SIMD pass
/// and beats UTF-16 + transcode (64 KiB: 1.6 µs against 2.5 µs + 3 µs); on
/// V8 it is the other way round (39 µs against 2.2 µs + 3 µs).
pub static ENGINE_UTF8: AtomicBool = AtomicBool::new(false);

fn lone_surrogate(what: &str) -> AleError {
    AleError::InvalidInput(format!(
        "{what} contains a lone UTF-16 surrogate, which cannot be stored as text without \
         changing it; repair the string first (String.prototype.toWellFormed)"
    ))
}

/// An envelope's bytes, on engines where that is the fast read (Bun). Any
/// character outside ASCII comes out as bytes ≥ 0x80, which the strict
/// base64url parser rejects, so no text check is needed. `None`: read the
/// UTF-16 units instead.
///
/// # Safety
/// `env` and `value` must be valid for the current call.
pub unsafe fn read_envelope_bytes(
    env: sys::napi_env,
    value: sys::napi_value,
    wide: &mut Vec<u16>,
    out: &mut Vec<u8>,
    ring: &CoreRing,
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
/// v1 envelope, is refused before more than the reused buffer is copied.
///
/// # Safety
/// `env` and `value` must be valid for the current call.
pub unsafe fn read_envelope_utf16(
    env: sys::napi_env,
    value: sys::napi_value,
    wide: &mut Vec<u16>,
    ring: &CoreRing,
) -> Result<usize, AleError> {
    // SAFETY: forwarded from the caller.
    unsafe { read_utf16(env, value, wide, "envelope", Some(ring)) }
}

/// Refuses, before it is copied, a stored value of `units` characters whose
/// first characters are `head`: over the ring's maximum, or not `v1:`.
fn check_long_envelope(ring: &CoreRing, units: usize, head: &[u16]) -> Result<(), AleError> {
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
    envelope: Option<&CoreRing>,
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
    // All-ASCII text (as many bytes as units) is valid and cannot hold U+FFFD.
    if envelope.is_none() && written != units {
        let text = &out[start..];
        let well_formed = if !simdutf::validate_utf8(text) {
            false
        } else if memchr::memmem::find(text, "\u{FFFD}".as_bytes()).is_some() {
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
    envelope: Option<&CoreRing>,
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

/// Copies the bytes of the `Uint8Array` (a `Buffer` is one) `value` into
/// `out` (replacing its contents). They are copied through a raw pointer and
/// never borrowed: a `SharedArrayBuffer` behind the array may be written by
/// another thread meanwhile, and a copy is then a snapshot, not a data race
/// on a Rust reference.
///
/// # Safety
/// `env` and `value` must be valid for the current call.
pub unsafe fn read_bytes_into(
    env: sys::napi_env,
    value: sys::napi_value,
    what: &str,
    out: &mut Vec<u8>,
) -> Result<(), AleError> {
    let not_bytes = || AleError::InvalidInput(format!("{what} must be a Buffer or Uint8Array"));
    let mut is_typed = false;
    // SAFETY: forwarded from the caller.
    let status = unsafe { sys::napi_is_typedarray(env, value, &mut is_typed) };
    if status != sys::Status::napi_ok || !is_typed {
        return Err(not_bytes());
    }
    let (mut kind, mut len, mut data) = (0, 0usize, ptr::null_mut());
    // SAFETY: `value` is a typed array; the out-pointers are valid.
    let status = unsafe {
        sys::napi_get_typedarray_info(
            env,
            value,
            &mut kind,
            &mut len,
            &mut data,
            ptr::null_mut(),
            ptr::null_mut(),
        )
    };
    if status != sys::Status::napi_ok || kind != sys::TypedarrayType::uint8_array {
        return Err(not_bytes());
    }
    out.clear();
    if len == 0 || data.is_null() {
        return Ok(());
    }
    scratch::reserve(out, len);
    // SAFETY: the engine reports `len` readable bytes at `data`, alive for
    // this call; `out` has room for `len` bytes and does not overlap them.
    unsafe {
        ptr::copy_nonoverlapping(data.cast::<u8>(), out.as_mut_ptr(), len);
        out.set_len(len);
    }
    Ok(())
}

/// Size of the `ArrayBuffer` that small Buffers are cut from.
const POOL_BYTES: usize = 32 * 1024;
/// Largest Buffer cut from the pool; a larger one gets memory of its own.
const POOLED_MAX: usize = POOL_BYTES / 4;

/// The pool of one JS environment: an `ArrayBuffer` held by a reference and
/// how much of it is handed out. Like `Buffer.allocUnsafe`'s pool, it lives
/// as long as any Buffer cut from it.
struct Pool {
    env: sys::napi_env,
    /// `markAsUntransferable` of `node:worker_threads`, or null where the
    /// engine has none.
    untransferable: sys::napi_ref,
    /// The pool's `ArrayBuffer`, or null before the first Buffer.
    buffer: sys::napi_ref,
    /// Where it starts in memory, as its `ArrayBuffer` reported when created.
    base: *mut u8,
    used: usize,
}

thread_local! {
    /// The pool of the environment running on this thread (one per thread:
    /// the main thread or a worker), set by [`enable_buffer_pool`] and cleared
    /// by the environment's cleanup hook, so it never outlives its `env`.
    static POOL: std::cell::RefCell<Option<Pool>> = const { std::cell::RefCell::new(None) };
}

/// Lets [`new_buffer`] cut small Buffers from a pool of `env`'s.
///
/// # Safety
/// `env` must be valid during module registration, on its own thread.
pub unsafe fn enable_buffer_pool(env: sys::napi_env) {
    /// Forgets the pool when its environment shuts down; the environment
    /// frees its own references.
    unsafe extern "C" fn forget(env: *mut std::ffi::c_void) {
        let _ = POOL.try_with(|pool| {
            if let Ok(mut pool) = pool.try_borrow_mut() {
                if pool.as_ref().is_some_and(|p| p.env.cast() == env) {
                    *pool = None;
                }
            }
        });
    }
    // Each load of the module gets an environment of its own (Node gives a
    // second load of the same file a new `napi_env`), so a thread's pool
    // belongs to the module's latest load there; an earlier one goes back
    // to `napi_create_buffer`. This check only guards against registering
    // the hook twice with the same data, which aborts Node.
    if POOL.with(|pool| pool.borrow().as_ref().is_some_and(|p| p.env == env)) {
        return;
    }
    // SAFETY: registering a hook with this env, its data the env pointer.
    let hooked = unsafe { sys::napi_add_env_cleanup_hook(env, Some(forget), env.cast()) }
        == sys::Status::napi_ok;
    if hooked {
        // SAFETY: module registration, on the env's thread.
        let untransferable = unsafe { mark_as_untransferable(env) };
        POOL.with(|pool| {
            *pool.borrow_mut() = Some(Pool {
                env,
                untransferable,
                buffer: ptr::null_mut(),
                base: ptr::null_mut(),
                used: 0,
            });
        });
    }
}

/// A reference to `markAsUntransferable` from `node:worker_threads`
/// (through `process.getBuiltinModule`), or null where there is none. Node
/// marks its own Buffer pool this way: `postMessage` and `structuredClone`
/// then refuse to transfer it, which would empty every Buffer cut from it.
///
/// # Safety
/// `env` must be valid during module registration.
unsafe fn mark_as_untransferable(env: sys::napi_env) -> sys::napi_ref {
    let (mut global, mut process, mut get, mut name, mut module, mut mark, mut reference) = (
        ptr::null_mut(),
        ptr::null_mut(),
        ptr::null_mut(),
        ptr::null_mut(),
        ptr::null_mut(),
        ptr::null_mut(),
        ptr::null_mut(),
    );
    let specifier = "node:worker_threads";
    // SAFETY: property reads and one call of a built-in on the global object;
    // a call that throws leaves its exception pending (below).
    let found = unsafe {
        sys::napi_get_global(env, &mut global) == sys::Status::napi_ok
            && sys::napi_get_named_property(env, global, c"process".as_ptr(), &mut process)
                == sys::Status::napi_ok
            && sys::napi_get_named_property(env, process, c"getBuiltinModule".as_ptr(), &mut get)
                == sys::Status::napi_ok
            && type_name(env, get) == "a function"
            && sys::napi_create_string_utf8(
                env,
                specifier.as_ptr().cast(),
                specifier.len() as isize,
                &mut name,
            ) == sys::Status::napi_ok
            && sys::napi_call_function(env, process, get, 1, &name, &mut module)
                == sys::Status::napi_ok
            && type_name(env, module) == "an object"
            && sys::napi_get_named_property(
                env,
                module,
                c"markAsUntransferable".as_ptr(),
                &mut mark,
            ) == sys::Status::napi_ok
            && type_name(env, mark) == "a function"
            && sys::napi_create_reference(env, mark, 1, &mut reference) == sys::Status::napi_ok
    };
    // A lookup that threw leaves its exception pending, so loading fails
    // with it (main.cjs then falls back): clearing it could cancel a
    // worker's termination (see `cut_from_pool`).
    if found {
        reference
    } else {
        ptr::null_mut()
    }
}

/// A new `Buffer` of `len` bytes, not initialised, and its data pointer.
///
/// Up to [`POOLED_MAX`] bytes, it is a view of the environment's pool
/// (`node_api_create_buffer_from_arraybuffer`), as `Buffer.allocUnsafe`
/// makes small Buffers. `napi_create_buffer` allocates an `ArrayBuffer`
/// each time: a 256 B `encryptBinary` took 1.43 µs with it on Node 24.9,
/// 0.94 µs calling `Buffer.allocUnsafe` from here, and takes 0.68 µs with
/// the pool (and a direct callback, `fast.rs`); on Bun 1.4.5, 0.45 µs with
/// the pool against 0.48 µs with `napi_create_buffer`. Larger Buffers, and any where the
/// engine cannot make a view, come from `napi_create_buffer`.
///
/// # Safety
/// `env` must be valid for the current call. The caller must write every
/// byte before the Buffer reaches JS.
pub unsafe fn new_buffer(
    env: sys::napi_env,
    len: usize,
) -> napi::Result<(sys::napi_value, *mut u8)> {
    if len <= POOLED_MAX {
        // SAFETY: forwarded.
        let pooled = POOL.with(|pool| unsafe { cut_from_pool(&mut pool.borrow_mut(), env, len) });
        if let Some(made) = pooled? {
            return Ok(made);
        }
    }
    let (mut buffer, mut data) = (ptr::null_mut(), ptr::null_mut());
    // SAFETY: the engine allocates `len` bytes and returns them in `data`.
    napi::check_status!(unsafe { sys::napi_create_buffer(env, len, &mut data, &mut buffer) })?;
    Ok((buffer, data.cast()))
}

/// `len` bytes of `env`'s pool as a Buffer, starting a new pool when this
/// one is full or was detached (`buf.buffer.transfer()`). `Ok(None)` when
/// there is no pool for `env`, or the engine has no way to make the view
/// (then the pool is given up).
///
/// # Safety
/// `env` must be valid for the current call; `len <= POOLED_MAX`.
unsafe fn cut_from_pool(
    slot: &mut Option<Pool>,
    env: sys::napi_env,
    len: usize,
) -> napi::Result<Option<(sys::napi_value, *mut u8)>> {
    let Some(pool) = slot.as_mut().filter(|p| p.env == env) else {
        return Ok(None);
    };
    let mut array_buffer = ptr::null_mut();
    let mut size = 0usize;
    if !pool.buffer.is_null() {
        let mut data = ptr::null_mut();
        // SAFETY: the reference is this env's and alive; a detached
        // ArrayBuffer reports 0 bytes (or, on some engine, an error).
        let read = unsafe {
            sys::napi_get_reference_value(env, pool.buffer, &mut array_buffer)
                == sys::Status::napi_ok
                && sys::napi_get_arraybuffer_info(env, array_buffer, &mut data, &mut size)
                    == sys::Status::napi_ok
        };
        // Anything but the pool as it was made is replaced, never written.
        if !read || data.cast() != pool.base {
            size = 0;
        }
    }
    if size != POOL_BYTES || pool.used + len > POOL_BYTES {
        let (mut data, mut reference) = (ptr::null_mut(), ptr::null_mut());
        // SAFETY: a new, zero-filled ArrayBuffer, kept alive by the reference
        // until the next pool replaces it.
        let made = unsafe {
            sys::napi_create_arraybuffer(env, POOL_BYTES, &mut data, &mut array_buffer)
                == sys::Status::napi_ok
                && sys::napi_create_reference(env, array_buffer, 1, &mut reference)
                    == sys::Status::napi_ok
        };
        if !made {
            // `napi_create_buffer` then makes this Buffer (or reports why not).
            return Ok(None);
        }
        if !pool.buffer.is_null() {
            // SAFETY: the old pool's reference, deleted once. Were deletion to
            // fail, the old pool would stay referenced until the environment
            // ends, which is all this call could do about it anyway.
            let status = unsafe { sys::napi_delete_reference(env, pool.buffer) };
            debug_assert_eq!(status, sys::Status::napi_ok);
        }
        pool.buffer = reference;
        pool.base = data.cast();
        pool.used = 0;
        // markAsUntransferable(pool) fails when JS cannot run, in a worker
        // being terminated: the call then fails with the engine's pending
        // exception left as it is. Clearing it cancelled the termination and
        // left the worker's loop running for ever.
        // SAFETY: `untransferable` is this env's reference.
        let marked = pool.untransferable.is_null()
            || unsafe { mark_untransferable(env, pool.untransferable, array_buffer) };
        if !marked {
            return Err(napi::Error::from_reason(
                "markAsUntransferable could not run",
            ));
        }
    }
    let offset = pool.used;
    let mut buffer = ptr::null_mut();
    // SAFETY: `offset + len <= POOL_BYTES`, the ArrayBuffer's size, so the
    // engine only makes the view (no exception to leave pending).
    let status = unsafe {
        sys::node_api_create_buffer_from_arraybuffer(env, array_buffer, offset, len, &mut buffer)
    };
    if status != sys::Status::napi_ok {
        *slot = None;
        return Ok(None);
    }
    let (mut data, mut got) = (ptr::null_mut(), 0usize);
    // SAFETY: `buffer` was just created.
    napi::check_status!(unsafe { sys::napi_get_buffer_info(env, buffer, &mut data, &mut got) })?;
    // The view must be exactly the bytes reserved here: they are written
    // through `data` with no further check.
    if got != len || data.cast::<u8>() != pool.base.wrapping_add(offset) {
        return Err(napi::Error::from_reason(
            "a pooled Buffer is not where it was cut",
        ));
    }
    pool.used = (offset + len).next_multiple_of(8);
    Ok(Some((buffer, data.cast())))
}

/// Calls `markAsUntransferable(array_buffer)` through `mark`; whether it ran.
/// Whatever it threw stays pending.
///
/// # Safety
/// `env` must be valid for the current call, `mark` a reference of it.
unsafe fn mark_untransferable(
    env: sys::napi_env,
    mark: sys::napi_ref,
    array_buffer: sys::napi_value,
) -> bool {
    let (mut function, mut undefined, mut result) =
        (ptr::null_mut(), ptr::null_mut(), ptr::null_mut());
    // SAFETY: calling a built-in with one argument.
    unsafe {
        sys::napi_get_reference_value(env, mark, &mut function) == sys::Status::napi_ok
            && sys::napi_get_undefined(env, &mut undefined) == sys::Status::napi_ok
            && sys::napi_call_function(env, undefined, function, 1, &array_buffer, &mut result)
                == sys::Status::napi_ok
    }
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
    scratch::reserve(wide, text.len());
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
