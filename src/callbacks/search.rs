//! The direct callbacks of `KeyRing#searchTokens` and `#searchTokenText`
//! (the tokens of a searchable column are made on every write of it): the
//! ring's and the context's handles, as the hot methods pass them
//! (callbacks/direct.rs), and the options as the number `prototype.js`
//! makes of them.
//!
//! Reading five option properties through Node-API interned each name on
//! every call (`napi_get_named_property`), a visible part of a short
//! value's call (docs/performance.md, "Search tokens, per value"); the JS
//! reads them instead, in the order and with the rules `read_options` has,
//! and says which one it would refuse, so that nothing is read twice.

use ale_core::error::AleError;
use ale_core::search::index::Indexes;
use ale_core::search::normalize::Folding;
use ale_core::Context;
use napi::sys;

use super::direct::{context_of_handle, ring_of_handle};
use crate::api::search::{tokens_in, Form};
use crate::api::search_options::{
    not_a_boolean, not_a_secret_index, read_options, Options, FLAG_OPTIONS,
};
use crate::error::{check, guard_raw, to_js, Result};
use crate::js::raw::args;
use crate::scratch::{with_context, Buffers};

/// `searchTokens(handle, value, context handle or undefined, tenantId,
/// collectionId, fieldName, options, flags)`.
pub unsafe extern "C" fn handle_search_tokens(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    // SAFETY: forwarded.
    unsafe { search_tokens(env, info, Form::Bytes) }
}

/// `searchTokenText`, with the arguments of `searchTokens`.
pub unsafe extern "C" fn handle_search_token_text(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    // SAFETY: forwarded.
    unsafe { search_tokens(env, info, Form::Words) }
}

/// # Safety
/// `env` and `info` must be this callback's.
unsafe fn search_tokens(
    env: sys::napi_env,
    info: sys::napi_callback_info,
    form: Form,
) -> sys::napi_value {
    // SAFETY: this callback's env, info and values.
    unsafe {
        guard_raw(env, || {
            let argv = args::<8>(env, info)?.values;
            let ring = ring_of_handle(env, argv[0])?;
            // The options first, then the context, then the value, as on
            // the process-wide function.
            let options = options_of(env, argv[6], argv[7])?;
            let tokens = |b: &mut Buffers, c: &Context<'_>| {
                tokens_in(env, ring, argv[1], &options, form, b, c)
            };
            match context_of_handle(env, argv[2])? {
                Some(context) => context.with(tokens),
                None => with_context(env, [argv[3], argv[4], argv[5]], tokens),
            }
        })
    }
}

/// The options `flags` stands for:
/// - 0 or more: bit 0 `contains`, 1 `prefix`, 2 `words`, 3 `accents`, and
///   the secret's index from bit 4;
/// - -1: not an object, so `options` is read here;
/// - -2 to -5: the option of that place in [`FLAG_OPTIONS`] is not a
///   boolean; -6: `secret` is not a secret's index.
///
/// # Safety
/// `env` must be valid for the current call, `options` and `flags` arguments of it.
unsafe fn options_of(
    env: sys::napi_env,
    options: sys::napi_value,
    flags: sys::napi_value,
) -> Result<Options> {
    let mut n = -1i32;
    // SAFETY: forwarded; `flags` is always a number from prototype.js.
    check(unsafe { sys::napi_get_value_int32(env, flags, &mut n) })?;
    let Ok(bits) = u32::try_from(n) else {
        return match usize::try_from(-2 - n)
            .ok()
            .and_then(|i| FLAG_OPTIONS.get(i))
        {
            Some(name) => Err(not_a_boolean(name)),
            None if n == -6 => Err(not_a_secret_index()),
            // SAFETY: forwarded.
            None if n == -1 => unsafe { read_options(env, Some(options)) },
            None => Err(to_js(AleError::Internal)),
        };
    };
    let bit = |i: u32| bits >> i & 1 == 1;
    Ok(Options {
        indexes: Indexes {
            contains: bit(0),
            prefix: bit(1),
            words: bit(2),
        },
        folding: Folding { accents: bit(3) },
        secret: (bits >> 4) as usize,
    })
}
