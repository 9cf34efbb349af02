//! The ground floor: the one place where a Rust error becomes a JS error,
//! and the panic guard every call runs inside.
//!
//! Every message comes from [`AleError`]'s `Display`, which never holds key
//! material or plaintext. A panic anywhere becomes `ALE_INTERNAL`; with the
//! `test-panic` feature (test builds only) the tests can force one.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

use ale_core::error::AleError;
use napi::bindgen_prelude::JsError;
use napi::{sys, Env, Unknown};

/// Errors thrown to JS carry the `ALE_*` code as `error.code`.
pub type Result<T, E = napi::Error<&'static str>> = std::result::Result<T, E>;

/// A Rust error as the JS error it becomes.
pub fn to_js(err: AleError) -> napi::Error<&'static str> {
    napi::Error::new(err.code(), err.to_string())
}

/// A Node-API call failed: the engine is out of memory, refused a string
/// longer than it allows, or is shutting down.
pub fn engine_failure(err: napi::Error) -> napi::Error<&'static str> {
    to_js(engine_refused(err))
}

/// [`engine_failure`]'s error before it reaches JS: the reason Node-API
/// gave, or, as it often gives none, its status and what it likely means.
pub fn engine_refused(err: napi::Error) -> AleError {
    AleError::Engine(if err.reason.is_empty() {
        format!(
            "{} (out of memory, or a string longer than the engine allows)",
            err.status.as_ref()
        )
    } else {
        err.reason
    })
}

/// A Node-API status as a coded error (`ALE_ENGINE_FAILURE` unless `napi_ok`).
pub fn check(status: sys::napi_status) -> Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(engine_failure(napi::Error::from_status(
            napi::Status::from(status),
        )))
    }
}

#[cfg(feature = "test-panic")]
static FORCE_PANIC: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
#[cfg(feature = "test-panic")]
static FORCE_COMPUTE_PANIC: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// With the `test-panic` feature, a call after `forcePanicOnNextCall()`
/// panics here, to show that every path turns a panic into `ALE_INTERNAL`
/// instead of aborting. A no-op otherwise.
fn forced_panic_point() {
    #[cfg(feature = "test-panic")]
    if FORCE_PANIC.swap(false, std::sync::atomic::Ordering::SeqCst) {
        panic!("forced panic (test-panic feature)");
    }
}

/// The same for the thread-pool half of an async call.
pub fn forced_compute_panic_point() {
    #[cfg(feature = "test-panic")]
    if FORCE_COMPUTE_PANIC.swap(false, std::sync::atomic::Ordering::SeqCst) {
        panic!("forced panic on the thread pool (test-panic feature)");
    }
}

/// Test builds only (`--features test-panic`): the next call into the addon
/// panics, or, with `inAsyncWork`, the next async job on the thread pool.
#[cfg(feature = "test-panic")]
#[napi_derive::napi(js_name = "forcePanicOnNextCall")]
pub fn force_panic_on_next_call(in_async_work: Option<bool>) {
    let flag = if in_async_work == Some(true) {
        &FORCE_COMPUTE_PANIC
    } else {
        &FORCE_PANIC
    };
    flag.store(true, std::sync::atomic::Ordering::SeqCst);
}

/// Runs `f`, turning a panic into `ALE_INTERNAL`: the guard of every call.
pub fn guard<T>(f: impl FnOnce() -> Result<T>) -> Result<T> {
    catch_unwind(AssertUnwindSafe(|| {
        forced_panic_point();
        f()
    }))
    .unwrap_or_else(|_| Err(to_js(AleError::Internal)))
}

/// [`guard`] for a raw Node-API callback: returns `f`'s value, or throws its
/// error (a panic as `ALE_INTERNAL`) and returns the null value a callback
/// returns with a pending exception.
///
/// # Safety
/// `env` must be the current callback's.
pub unsafe fn guard_raw(
    env: sys::napi_env,
    f: impl FnOnce() -> Result<sys::napi_value>,
) -> sys::napi_value {
    // SAFETY: forwarded.
    unsafe {
        catch_raw(env, || {
            forced_panic_point();
            f()
        })
    }
}

/// [`guard_raw`] without the test-panic point: for a wrapper whose wrapped
/// function has a guard of its own, which a forced panic must reach.
///
/// # Safety
/// `env` must be the current callback's.
pub unsafe fn catch_raw(
    env: sys::napi_env,
    f: impl FnOnce() -> Result<sys::napi_value>,
) -> sys::napi_value {
    let outcome =
        catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|_| Err(to_js(AleError::Internal)));
    match outcome {
        Ok(value) => value,
        Err(error) => {
            // SAFETY: the current env.
            unsafe { JsError::from(error).throw_into(env) };
            ptr::null_mut()
        }
    }
}

/// A promise rejection carrying the `ALE_*` code. napi-rs's task errors are
/// `Status`-typed, so the JS error is built here and handed over as a value,
/// which napi-rs rejects with unchanged.
pub fn coded_rejection(env: &Env, err: AleError) -> napi::Error {
    let js = to_js(err);
    // SAFETY: the current env (a task's completion callback).
    let value = unsafe { JsError::from(js).into_value(env.raw()) };
    // SAFETY: `value` is an Error object created in this env just now.
    napi::Error::from(unsafe { Unknown::from_raw_unchecked(env.raw(), value) })
}
