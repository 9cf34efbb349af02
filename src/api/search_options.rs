//! Search options (`contains`, `prefix`, `words`, `accents`, `secret`):
//! their declaration for `index.d.ts`, and their reading, with the coded
//! errors the direct path's JS (callbacks/prototype.js) also names.

use std::ffi::CStr;

use ale_core::error::AleError;
use ale_core::search::index::Indexes;
use ale_core::search::normalize::Folding;
use napi::sys;
use napi_derive::napi;

use crate::error::{to_js, Result};
use crate::js::raw::{property, read_bool};

/// Which indexes a searchable column keeps, and how it folds text.
// For `index.d.ts` only: `read_options` reads the object itself, so that a
// bad option gets an `ALE_*` code.
#[allow(dead_code)]
#[napi(object, js_name = "SearchOptions")]
pub struct SearchOptionsDeclaration {
    /// Trigrams, for "contains" queries of 3 characters or more. Default true.
    pub contains: Option<bool>,
    /// Word prefixes of up to 6 characters, for "starts with". Default true.
    pub prefix: Option<bool>,
    /// Whole words, for word search. Default true.
    pub words: Option<bool>,
    /// Match without accents and other combining marks. Default false.
    pub accents: Option<bool>,
    /// The secret whose blind-index key makes the tokens: 0 (the primary,
    /// default) or a previous one, while a re-index runs.
    pub secret: Option<u32>,
}

/// The boolean options, in the order they are read, here and by the
/// direct path's JS (callbacks/prototype.js); `secret` comes after them.
pub(crate) const FLAG_OPTIONS: [&CStr; 4] = [c"contains", c"prefix", c"words", c"accents"];

/// Read search options.
pub(crate) struct Options {
    pub(crate) indexes: Indexes,
    pub(crate) folding: Folding,
    /// The index of the secret whose blind-index key makes the tokens.
    pub(crate) secret: usize,
}

/// # Safety
/// `env` must be valid for the current call, `options` an argument of it.
pub(crate) unsafe fn read_options(
    env: sys::napi_env,
    options: Option<sys::napi_value>,
) -> Result<Options> {
    let mut out = Options {
        indexes: Indexes {
            contains: true,
            prefix: true,
            words: true,
        },
        folding: Folding::default(),
        secret: 0,
    };
    // SAFETY: forwarded.
    let Some(options) = options.filter(|&o| !unsafe { crate::js::raw::is_nullish(env, o) }) else {
        return Ok(out);
    };
    let slots = [
        &mut out.indexes.contains,
        &mut out.indexes.prefix,
        &mut out.indexes.words,
        &mut out.folding.accents,
    ];
    for (name, slot) in FLAG_OPTIONS.into_iter().zip(slots) {
        // SAFETY: `options` is an argument of the current call.
        if let Some(value) = unsafe { property(env, options, name) }? {
            // SAFETY: `value` was just read.
            *slot = unsafe { read_bool(env, value) }.ok_or_else(|| not_a_boolean(name))?;
        }
    }
    // SAFETY: as above.
    out.secret = unsafe { read_secret(env, options) }?;
    Ok(out)
}

/// `options.secret`: the index of the secret whose blind-index key makes
/// the tokens, 0 (the primary) when absent.
///
/// # Safety
/// `env` must be valid for the current call, `options` an object argument of it.
pub(crate) unsafe fn read_secret(env: sys::napi_env, options: sys::napi_value) -> Result<usize> {
    // SAFETY: forwarded.
    let Some(value) = (unsafe { property(env, options, c"secret") })? else {
        return Ok(0);
    };
    let mut n = 0f64;
    // SAFETY: `value` was just read.
    let status = unsafe { sys::napi_get_value_double(env, value, &mut n) };
    if status != sys::Status::napi_ok || n.fract() != 0.0 || !(0.0..1024.0).contains(&n) {
        return Err(not_a_secret_index());
    }
    // A whole number in 0..1024.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    Ok(n as usize)
}

/// The error for a flag option (`contains`, …) that is not a boolean.
pub(crate) fn not_a_boolean(name: &CStr) -> napi::Error<&'static str> {
    to_js(AleError::InvalidInput(format!(
        "options.{} must be a boolean",
        name.to_string_lossy()
    )))
}

/// The error for an `options.secret` that is not a secret's index.
pub(crate) fn not_a_secret_index() -> napi::Error<&'static str> {
    to_js(AleError::InvalidInput(
        "options.secret must be a secret's index: 0, 1, …".into(),
    ))
}
