//! Bytes in (`Uint8Array`s, copied) and Buffers out (cut from a pool).
//!
//! `napi_create_buffer` allocates an `ArrayBuffer` for every Buffer, so
//! small Buffers are views of a per-environment pool instead, made with
//! `node_api_create_buffer_from_arraybuffer`, as `Buffer.allocUnsafe` makes
//! them. A pool is marked untransferable before it is used, so that
//! `postMessage` or `structuredClone` can never empty the Buffers cut from
//! it.

use std::cell::RefCell;
use std::ffi::c_void;
use std::ptr;

use ale_core::error::AleError;
use ale_core::scratch;
use napi::sys;

use crate::error::{check, Result};
use crate::js::raw;

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
    /// the main thread or a worker), set by [`enable_pool`] and cleared by
    /// the environment's cleanup hook, so it never outlives its `env`.
    static POOL: RefCell<Option<Pool>> = const { RefCell::new(None) };
}

/// Lets [`new_buffer`] cut small Buffers from a pool of `env`'s.
///
/// # Safety
/// `env` must be valid during module registration, on its own thread.
pub unsafe fn enable_pool(env: sys::napi_env) -> Result<()> {
    /// Forgets the pool when its environment shuts down; the environment
    /// frees its own references.
    unsafe extern "C" fn forget(env: *mut c_void) {
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
        return Ok(());
    }
    // A lookup that throws fails the load with its exception (main.cjs then
    // falls back): clearing it could cancel a worker's termination.
    // SAFETY: module registration, on the env's thread.
    let untransferable = unsafe { mark_function(env) }?;
    // SAFETY: registering a hook with this env, its data the env pointer.
    let hooked = unsafe { sys::napi_add_env_cleanup_hook(env, Some(forget), env.cast()) }
        == sys::Status::napi_ok;
    if hooked {
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
    Ok(())
}

/// A reference to `markAsUntransferable` from `node:worker_threads`
/// (through `process.getBuiltinModule`), or null where there is none. Node
/// marks its own Buffer pool this way.
///
/// # Safety
/// `env` must be valid during module registration.
unsafe fn mark_function(env: sys::napi_env) -> Result<sys::napi_ref> {
    let function = |value: Option<sys::napi_value>| {
        // SAFETY: `value` was just read in the current env.
        value.filter(|&f| unsafe { raw::type_name(env, f) } == "a function")
    };
    // SAFETY: property reads and one call of a built-in, every status checked.
    unsafe {
        let Some(process) = raw::process(env)? else {
            return Ok(ptr::null_mut());
        };
        let Some(get) = function(raw::property(env, process, c"getBuiltinModule")?) else {
            return Ok(ptr::null_mut());
        };
        let name = raw::string(env, b"node:worker_threads")?;
        let module = raw::call(env, process, get, &[name])?;
        if raw::type_name(env, module) != "an object" {
            return Ok(ptr::null_mut());
        }
        let Some(mark) = function(raw::property(env, module, c"markAsUntransferable")?) else {
            return Ok(ptr::null_mut());
        };
        let mut reference = ptr::null_mut();
        check(sys::napi_create_reference(env, mark, 1, &mut reference))?;
        Ok(reference)
    }
}

/// A new `Buffer` of `len` bytes, not initialised, and its data pointer:
/// up to [`POOLED_MAX`] bytes a view of the environment's pool, otherwise
/// (or where the engine cannot make a view) from `napi_create_buffer`.
///
/// # Safety
/// `env` must be valid for the current call. The caller must write every
/// byte before the Buffer reaches JS.
pub unsafe fn new_buffer(env: sys::napi_env, len: usize) -> Result<(sys::napi_value, *mut u8)> {
    if len <= POOLED_MAX {
        // SAFETY: forwarded.
        let pooled = POOL.with(|pool| unsafe { cut_from_pool(&mut pool.borrow_mut(), env, len) });
        if let Some(made) = pooled? {
            return Ok(made);
        }
    }
    let (mut buffer, mut data) = (ptr::null_mut(), ptr::null_mut());
    // SAFETY: the engine allocates `len` bytes and returns them in `data`.
    check(unsafe { sys::napi_create_buffer(env, len, &mut data, &mut buffer) })?;
    Ok((buffer, data.cast()))
}

/// A new `Buffer` holding a copy of `bytes`.
///
/// # Safety
/// `env` must be valid for the current call.
#[cfg_attr(test, allow(dead_code))] // only the `#[napi]` exports call it
pub unsafe fn buffer_copy(env: sys::napi_env, bytes: &[u8]) -> Result<sys::napi_value> {
    let (mut data, mut buffer) = (ptr::null_mut(), ptr::null_mut());
    // SAFETY: copies `bytes` into a new Buffer of the current env.
    check(unsafe {
        sys::napi_create_buffer_copy(
            env,
            bytes.len(),
            bytes.as_ptr().cast(),
            &mut data,
            &mut buffer,
        )
    })?;
    Ok(buffer)
}

/// The pool's `ArrayBuffer` when it is still the one made, whole and
/// attached, with room for `len` more bytes.
///
/// # Safety
/// `env` must be valid for the current call and `pool` its pool.
unsafe fn current(pool: &Pool, env: sys::napi_env, len: usize) -> Option<sys::napi_value> {
    if pool.buffer.is_null() || pool.used + len > POOL_BYTES {
        return None;
    }
    let (mut array_buffer, mut data, mut size) = (ptr::null_mut(), ptr::null_mut(), 0usize);
    // SAFETY: the reference is this env's and alive; a detached ArrayBuffer
    // reports 0 bytes (or, on some engine, an error).
    let read = unsafe {
        sys::napi_get_reference_value(env, pool.buffer, &mut array_buffer) == sys::Status::napi_ok
            && sys::napi_get_arraybuffer_info(env, array_buffer, &mut data, &mut size)
                == sys::Status::napi_ok
    };
    // Anything but the pool as it was made is replaced, never written.
    (read && size == POOL_BYTES && data.cast() == pool.base).then_some(array_buffer)
}

/// Makes a new pool and marks it untransferable; it becomes current only
/// once marked. `Ok(None)` when the engine cannot make one (the caller then
/// uses `napi_create_buffer`).
///
/// # Safety
/// `env` must be valid for the current call and `pool` its pool.
unsafe fn replace(pool: &mut Pool, env: sys::napi_env) -> Result<Option<sys::napi_value>> {
    let (mut data, mut array_buffer, mut reference) =
        (ptr::null_mut(), ptr::null_mut(), ptr::null_mut());
    // SAFETY: a new, zero-filled ArrayBuffer.
    let made =
        unsafe { sys::napi_create_arraybuffer(env, POOL_BYTES, &mut data, &mut array_buffer) }
            == sys::Status::napi_ok;
    if !made {
        return Ok(None);
    }
    if !pool.untransferable.is_null() {
        // markAsUntransferable fails when JS cannot run (a worker being
        // terminated) or when something replaced it with a function that
        // throws. The call then fails with the engine's exception left
        // pending (clearing it would cancel a worker's termination), and
        // the unmarked ArrayBuffer is never used.
        // SAFETY: the reference is this env's.
        unsafe {
            let mut mark = ptr::null_mut();
            let mut undefined = ptr::null_mut();
            check(sys::napi_get_reference_value(
                env,
                pool.untransferable,
                &mut mark,
            ))?;
            check(sys::napi_get_undefined(env, &mut undefined))?;
            raw::call(env, undefined, mark, &[array_buffer])?;
        }
    }
    // SAFETY: keeps the new pool alive until the next one replaces it.
    if unsafe { sys::napi_create_reference(env, array_buffer, 1, &mut reference) }
        != sys::Status::napi_ok
    {
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
    Ok(Some(array_buffer))
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
) -> Result<Option<(sys::napi_value, *mut u8)>> {
    let Some(pool) = slot.as_mut().filter(|p| p.env == env) else {
        return Ok(None);
    };
    // SAFETY: forwarded.
    let array_buffer = match unsafe { current(pool, env, len) } {
        Some(current) => current,
        // SAFETY: forwarded.
        None => match unsafe { replace(pool, env) }? {
            Some(made) => made,
            None => return Ok(None),
        },
    };
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
    check(unsafe { sys::napi_get_buffer_info(env, buffer, &mut data, &mut got) })?;
    // The view must be exactly the bytes reserved here: they are written
    // through `data` with no further check.
    if got != len || data.cast::<u8>() != pool.base.wrapping_add(offset) {
        return Err(crate::error::to_js(AleError::Internal));
    }
    pool.used = (offset + len).next_multiple_of(8);
    Ok(Some((buffer, data.cast())))
}
