//! The IV-budget warning: `process.emitWarning(…, 'AleWarning',
//! 'ALE_IV_BUDGET')` once a ring's primary key reaches its threshold,
//! queued by [`warning`] so that it runs no JS inside the encryption that
//! crossed the threshold (a replaced `emitWarning` cannot lose an envelope).

use ale_core::Rings;
use napi::sys;

use crate::warning;

/// Queues the warning when `count`, the primary key's count after a seal,
/// is the first to reach the ring's threshold.
///
/// # Safety
/// `env` must be valid for the current call.
pub unsafe fn after_seal(env: sys::napi_env, ring: &Rings, count: u64) {
    let budget = ring.budget();
    if budget.should_warn(count) {
        // SAFETY: forwarded.
        if !unsafe { queue(env, count) } {
            // Not queued: arm the threshold again, so that a later
            // encryption warns instead of none.
            budget.set_warn_at(budget.warn_at());
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
pub fn defer(ring: &Rings, count: u64) -> bool {
    let due = ring.budget().should_warn(count);
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

/// Queues the warning for `count`; whether it was queued. A failure never
/// fails the encryption.
///
/// # Safety
/// `env` must be valid for the current call.
unsafe fn queue(env: sys::napi_env, count: u64) -> bool {
    let message = format!(
        "@sveltycms/ale: the primary key has encrypted {count} values in this process; AES-GCM \
         with random IVs allows 2^32 per key across all processes. Rotate ENCRYPTION_KEY soon."
    );
    // SAFETY: forwarded.
    unsafe { warning::queue(env, message, "ALE_IV_BUDGET") }
}
