//! Direct callbacks for the hot calls: `KeyRing.prototype.encrypt`,
//! `decrypt`, `encryptBinary` and `decryptBinary` (through the JS of
//! `prototype.js`), and the process-wide functions of the same names;
//! `searchTokens` takes the same handles (callbacks/search.rs).
//!
//! napi-rs's generated glue records every `&self` borrow in a per-call
//! registry (to catch `&mut` aliasing through re-entrant JS), which costs
//! allocations and a mutex on each call. These calls only ever take `&self`
//! of an immutable ring, so that protection buys nothing here.
//!
//! Checking and unwrapping `this` costs two private-symbol lookups in V8's
//! runtime, and reading three context strings costs a Node-API call each.
//! So the prototype methods pass a native function two handles instead:
//!
//! - the ring's: an external holding an `Arc` of the ring, made once per
//!   ring by `makeHandle`, which checks the ring as any `this` is checked;
//! - the context's: an external holding the validated tenant, collection
//!   and field, made by `makeContext` (which refuses what a call would
//!   refuse, with the same code) the second time a context is seen. A
//!   context's first call, and any call whose context is not three strings,
//!   reads the three arguments instead.
//!
//! Each handle is type-tagged ([`HANDLE_TAG`], [`CONTEXT_TAG`]) and checked
//! on every call. The native functions live only in the closure of
//! `prototype.js`. What each step saved is in `docs/performance.md`.

use std::sync::{Arc, OnceLock};

use ale_core::error::AleError;
use ale_core::Rings;
use napi::sys;

use crate::budget;
use crate::class::KeyRing;
use crate::error::{catch_raw, check, guard_raw, to_js, Result};
use crate::ffi::entry::{take_error, NO_TOKEN};
use crate::ffi::registry::{Registry, Token, CONTEXTS, RINGS};
use crate::global_ring::with_global;
use crate::js::raw::{args, tagged_external, tagged_value, Tagged};
use crate::ops::{self, Op};
use crate::scratch::OwnedContext;

/// What a handle holds: the value, and its bun:ffi registration once
/// `tokenOf` asked for one (it lasts as long as the handle).
pub struct Held<T: 'static> {
    value: Arc<T>,
    token: OnceLock<Option<Token<T>>>,
}

impl<T> Held<T> {
    fn new(value: Arc<T>) -> Self {
        Held {
            value,
            token: OnceLock::new(),
        }
    }

    /// The token bun:ffi calls name the value by; [`NO_TOKEN`] when the
    /// registry is full.
    fn token(&self, registry: &'static Registry<T>) -> f64 {
        let token = self
            .token
            .get_or_init(|| registry.insert(Arc::clone(&self.value)));
        token.as_ref().map_or(NO_TOKEN, Token::number)
    }
}

/// Where a direct callback finds its ring.
#[derive(Clone, Copy)]
enum Via {
    /// The process-wide ring: `(value, tenantId, collectionId, fieldName)`.
    Global,
    /// A ring handle, passed first by the prototype methods: `(handle,
    /// value, context handle or undefined, tenantId, collectionId,
    /// fieldName)`.
    Handle,
}

/// Runs `op` for one call: finds the ring (see [`Via`]) and the context,
/// and turns errors and panics into thrown JS errors.
///
/// # Safety
/// `env` and `info` must be the current callback's.
unsafe fn call(
    env: sys::napi_env,
    info: sys::napi_callback_info,
    op: Op,
    via: Via,
) -> sys::napi_value {
    // SAFETY: this callback's env, info and values.
    unsafe {
        guard_raw(env, || {
            let argv = args::<6>(env, info)?.values;
            match via {
                Via::Global => with_global(|ring| {
                    ops::run_in_context(env, op, ring, argv[0], [argv[1], argv[2], argv[3]])
                }),
                Via::Handle => {
                    let ring = ring_of_handle(env, argv[0])?;
                    match context_of_handle(env, argv[2])? {
                        Some(context) => {
                            context.with(|b, ctx| ops::run(env, op, ring, argv[1], b, ctx))
                        }
                        None => {
                            ops::run_in_context(env, op, ring, argv[1], [argv[3], argv[4], argv[5]])
                        }
                    }
                }
            }
        })
    }
}

/// The type tag of a ring handle (random; distinct from napi-rs's class tags).
const HANDLE_TAG: sys::napi_type_tag = sys::napi_type_tag {
    lower: 0x8d3c_5a1e_6b2f_47c9,
    upper: 0x2e91_f0a4_c7d8_1b36,
};

/// The type tag of a context handle.
const CONTEXT_TAG: sys::napi_type_tag = sys::napi_type_tag {
    lower: 0x51f7_0c2e_9ad4_63b8,
    upper: 0xc4a6_2d19_7e05_f38b,
};

/// The ring a handle holds.
///
/// # Safety
/// `env` and `handle` must be valid for the current callback. The handle's
/// `Arc` lives until the handle is collected, which cannot happen while it
/// is an argument of this call.
// Inline: with a second caller (callbacks/search.rs) it became a call of
// its own on the encrypt path.
#[inline]
pub(super) unsafe fn ring_of_handle<'a>(
    env: sys::napi_env,
    handle: sys::napi_value,
) -> Result<&'a Rings> {
    // SAFETY: forwarded; ring handles hold a `Held<Rings>`.
    match unsafe { tagged_value::<Held<Rings>>(env, handle, &HANDLE_TAG) } {
        Tagged::Ours(held) => Ok(&held.value),
        Tagged::Absent | Tagged::Foreign => Err(to_js(AleError::Internal)),
    }
}

/// The context a context handle holds, or `None` for `undefined` (the
/// caller then reads the three strings).
///
/// # Safety
/// `env` and `value` must be valid for the current callback.
// Inline, as [`ring_of_handle`].
#[inline]
pub(super) unsafe fn context_of_handle<'a>(
    env: sys::napi_env,
    value: sys::napi_value,
) -> Result<Option<&'a OwnedContext>> {
    // SAFETY: forwarded; context handles hold a `Held<OwnedContext>`.
    match unsafe { tagged_value::<Held<OwnedContext>>(env, value, &CONTEXT_TAG) } {
        Tagged::Absent => Ok(None),
        Tagged::Ours(held) => Ok(Some(&held.value)),
        Tagged::Foreign => Err(to_js(AleError::Internal)),
    }
}

/// `makeHandle(ring)`: an external holding a reference to the ring of the
/// `KeyRing` `ring` (checked as any `this` is), released when the external
/// is collected.
pub unsafe extern "C" fn make_handle(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    // SAFETY: this callback's env, info and values.
    unsafe {
        guard_raw(env, || {
            let [ring] = args::<1>(env, info)?.values;
            let inner = Arc::clone(&KeyRing::of_this(env, ring)?.inner);
            tagged_external(env, Held::new(inner), &HANDLE_TAG)
        })
    }
}

/// `makeContext(tenantId, collectionId, fieldName)`: an external holding
/// the validated context, for calls that then read no context strings.
/// Throws what a call with those three arguments would.
pub unsafe extern "C" fn make_context(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    // SAFETY: this callback's env, info and values.
    unsafe {
        guard_raw(env, || {
            let argv = args::<3>(env, info)?.values;
            let context = OwnedContext::read(env, argv)?;
            tagged_external(env, Held::new(Arc::new(context)), &CONTEXT_TAG)
        })
    }
}

/// `tokenOf(handle)`: the bun:ffi token of a ring or context handle,
/// registering it on first use; [`NO_TOKEN`] when the registry is full (the
/// calls then take the Node-API path).
pub unsafe extern "C" fn token_of(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    // SAFETY: this callback's env, info and values.
    unsafe {
        guard_raw(env, || {
            let [handle] = args::<1>(env, info)?.values;
            let token = match tagged_value::<Held<Rings>>(env, handle, &HANDLE_TAG) {
                Tagged::Ours(held) => held.token(&RINGS),
                _ => match tagged_value::<Held<OwnedContext>>(env, handle, &CONTEXT_TAG) {
                    Tagged::Ours(held) => held.token(&CONTEXTS),
                    _ => return Err(to_js(ale_core::error::AleError::Internal)),
                },
            };
            let mut value = std::ptr::null_mut();
            check(sys::napi_create_double(env, token, &mut value))?;
            Ok(value)
        })
    }
}

/// `flushWarning()`: queues the IV-budget warning a bun:ffi call found due.
pub unsafe extern "C" fn flush_warning(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    // SAFETY: this callback's env and info.
    unsafe {
        guard_raw(env, || {
            budget::flush(env);
            let mut undefined = std::ptr::null_mut();
            args::<0>(env, info)?;
            check(sys::napi_get_undefined(env, &mut undefined))?;
            Ok(undefined)
        })
    }
}

/// `throwError()`: throws the coded error of this thread's last failed
/// bun:ffi call.
pub unsafe extern "C" fn throw_error(
    env: sys::napi_env,
    _info: sys::napi_callback_info,
) -> sys::napi_value {
    // SAFETY: this callback's env.
    unsafe {
        catch_raw(env, || {
            Err(take_error().unwrap_or_else(|| to_js(ale_core::error::AleError::Internal)))
        })
    }
}

/// The direct callbacks: each runs [`call`] with its operation and ring.
macro_rules! direct_callbacks {
    ($($name:ident => $op:expr, $via:expr;)*) => {$(
        pub unsafe extern "C" fn $name(
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
