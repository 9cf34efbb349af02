//! The IV-budget warning: `process.emitWarning(…, 'AleWarning',
//! 'ALE_IV_BUDGET')` once a ring's primary key reaches its threshold.
//!
//! The warning runs no JS inside the encryption that crossed the
//! threshold: it is queued as async work and emitted from its completion,
//! after the call has returned. A replaced `process.emitWarning` that
//! throws therefore cannot lose an envelope, and one that encrypts again
//! cannot re-enter a call that holds this thread's buffers.

use std::ffi::c_void;
use std::ptr;

use ale_core::keys::KeyRing as CoreRing;
use napi::sys;

use crate::js::raw;

/// Queues the warning when `count`, the primary key's count after a seal,
/// is the first to reach the ring's threshold.
///
/// # Safety
/// `env` must be valid for the current call.
pub unsafe fn after_seal(env: sys::napi_env, ring: &CoreRing, count: u64) {
    if ring.should_warn(count) {
        // SAFETY: forwarded.
        if !unsafe { queue(env, count) } {
            // Not queued: arm the threshold again, so that a later
            // encryption warns instead of none.
            ring.set_warn_at(ring.warn_at());
        }
    }
}

thread_local! {
    /// A warning due from a bun:ffi call, which has no env to queue it:
    /// queued by [`flush`] as soon as the call has returned.
    static DEFERRED: std::cell::Cell<Option<u64>> = const { std::cell::Cell::new(None) };
}

/// [`after_seal`] for a call without an env: whether a warning is due, kept
/// for [`flush`].
pub fn defer(ring: &CoreRing, count: u64) -> bool {
    let due = ring.should_warn(count);
    if due {
        DEFERRED.with(|d| d.set(Some(count)));
    }
    due
}

/// Queues the warning [`defer`] kept, if any.
///
/// # Safety
/// `env` must be valid for the current call.
pub unsafe fn flush(env: sys::napi_env) {
    if let Some(count) = DEFERRED.with(std::cell::Cell::take) {
        // SAFETY: forwarded.
        unsafe { queue(env, count) };
    }
}

/// One queued warning.
struct Pending {
    count: u64,
    work: sys::napi_async_work,
}

/// Queues the warning for `count`; whether it was queued. A failure never
/// fails the encryption.
///
/// # Safety
/// `env` must be valid for the current call.
unsafe fn queue(env: sys::napi_env, count: u64) -> bool {
    unsafe extern "C" fn execute(_env: sys::napi_env, _data: *mut c_void) {}
    let data = Box::into_raw(Box::new(Pending {
        count,
        work: ptr::null_mut(),
    }));
    let name = "ale-iv-budget-warning";
    let mut resource_name = ptr::null_mut();
    // SAFETY: the work owns `data` once queued, and `complete` frees it. It
    // runs once if the environment lives on; in a worker torn down first it
    // runs where JS can no longer run, and its calls fail harmlessly; after
    // process.exit() it never runs and the few bytes of `data` are left.
    unsafe {
        let queued = sys::napi_create_string_utf8(
            env,
            name.as_ptr().cast(),
            isize::try_from(name.len()).unwrap_or(0),
            &mut resource_name,
        ) == sys::Status::napi_ok
            && sys::napi_create_async_work(
                env,
                ptr::null_mut(),
                resource_name,
                Some(execute),
                Some(complete),
                data.cast(),
                &mut (*data).work,
            ) == sys::Status::napi_ok;
        if !queued {
            drop(Box::from_raw(data));
            return false;
        }
        if sys::napi_queue_async_work(env, (*data).work) != sys::Status::napi_ok {
            sys::napi_delete_async_work(env, (*data).work);
            drop(Box::from_raw(data));
            return false;
        }
        true
    }
}

/// Emits the warning, on the event loop, after the encryption returned.
unsafe extern "C" fn complete(env: sys::napi_env, status: sys::napi_status, data: *mut c_void) {
    // SAFETY: `data` is the `Pending` boxed in `queue`, completed once.
    let pending = unsafe { Box::from_raw(data.cast::<Pending>()) };
    // SAFETY: the work is done; deleted once.
    unsafe { sys::napi_delete_async_work(env, pending.work) };
    if status != sys::Status::napi_ok {
        return; // cancelled
    }
    let count = pending.count;
    let message = format!(
        "@sveltycms/ale: the primary key has encrypted {count} values in this process; AES-GCM \
         with random IVs allows 2^32 per key across all processes. Rotate ENCRYPTION_KEY soon."
    );
    // SAFETY: the completion runs on the env's thread with a handle scope.
    unsafe {
        let Ok(Some(process)) = raw::process(env) else {
            return;
        };
        let Ok(Some(emit)) = raw::property(env, process, c"emitWarning") else {
            return;
        };
        let mut args = [ptr::null_mut(); 3];
        for (slot, text) in args
            .iter_mut()
            .zip([message.as_str(), "AleWarning", "ALE_IV_BUDGET"])
        {
            let len = isize::try_from(text.len()).unwrap_or(0);
            if sys::napi_create_string_utf8(env, text.as_ptr().cast(), len, slot)
                != sys::Status::napi_ok
            {
                return;
            }
        }
        // Whatever a replaced emitWarning throws is its own error, reported
        // by the engine as uncaught; no encryption is in progress.
        let _ = raw::call(env, process, emit, &args);
    }
}
