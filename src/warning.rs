//! Process warnings (`process.emitWarning(message, 'AleWarning', code)`)
//! queued as async work and emitted from its completion, after the call
//! that raised them has returned. No JS runs inside that call: a replaced
//! `process.emitWarning` that throws cannot fail it, and one that calls the
//! package again cannot re-enter a call that holds this thread's buffers.

use std::ffi::c_void;
use std::ptr;

use napi::sys;

use crate::js::raw;

/// One queued warning.
struct Pending {
    message: String,
    code: &'static str,
    work: sys::napi_async_work,
}

/// Queues `message` with `code`; whether it was queued. A failure never
/// fails the caller.
///
/// # Safety
/// `env` must be valid for the current call.
pub unsafe fn queue(env: sys::napi_env, message: String, code: &'static str) -> bool {
    unsafe extern "C" fn execute(_env: sys::napi_env, _data: *mut c_void) {}
    let data = Box::into_raw(Box::new(Pending {
        message,
        code,
        work: ptr::null_mut(),
    }));
    let name = "ale-warning";
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

/// Emits the warning, on the event loop, after the call returned.
unsafe extern "C" fn complete(env: sys::napi_env, status: sys::napi_status, data: *mut c_void) {
    // SAFETY: `data` is the `Pending` boxed in `queue`, completed once.
    let pending = unsafe { Box::from_raw(data.cast::<Pending>()) };
    // SAFETY: the work is done; deleted once.
    unsafe { sys::napi_delete_async_work(env, pending.work) };
    if status != sys::Status::napi_ok {
        return; // cancelled
    }
    // SAFETY: the completion runs on the env's thread with a handle scope.
    unsafe {
        let Ok(Some(process)) = raw::process(env) else {
            return;
        };
        let Ok(Some(emit)) = raw::property(env, process, c"emitWarning") else {
            return;
        };
        let mut args = [ptr::null_mut(); 3];
        for (slot, text) in
            args.iter_mut()
                .zip([pending.message.as_str(), "AleWarning", pending.code])
        {
            let len = isize::try_from(text.len()).unwrap_or(0);
            if sys::napi_create_string_utf8(env, text.as_ptr().cast(), len, slot)
                != sys::Status::napi_ok
            {
                return;
            }
        }
        // Whatever a replaced emitWarning throws is its own error, reported
        // by the engine as uncaught; no call of the package is in progress.
        let _ = raw::call(env, process, emit, &args);
    }
}
