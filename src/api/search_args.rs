//! The search functions' arguments read from JS: texts (wiped when
//! dropped, since a value or a query is plaintext), a query's kind, and
//! `accents`.

use ale_core::error::AleError;
use ale_core::search::index::Query;
use napi::bindgen_prelude::JsValue;
use napi::{sys, Unknown};
use zeroize::Zeroizing;

use crate::error::{to_js, Result};
use crate::js::raw::{is_nullish, read_bool};
use crate::js::text::read_utf8;

/// `accents`: false when absent, `ALE_INVALID_INPUT` when not a boolean.
///
/// # Safety
/// `env` and `accents` must be valid for the current call.
pub(super) unsafe fn read_accents(env: sys::napi_env, accents: Option<Unknown>) -> Result<bool> {
    match accents.map(|a| a.raw()) {
        // SAFETY: an argument of the current call.
        Some(a) if !unsafe { is_nullish(env, a) } => unsafe { read_bool(env, a) }
            .ok_or_else(|| to_js(AleError::InvalidInput("accents must be a boolean".into()))),
        _ => Ok(false),
    }
}

/// A query kind, read from its name.
#[derive(Clone, Copy)]
pub(super) enum Kind {
    Contains,
    Prefix,
    Words,
}

impl Kind {
    pub(super) fn query(self, text: &str) -> Query<'_> {
        match self {
            Kind::Contains => Query::Contains(text),
            Kind::Prefix => Query::Prefix(text),
            Kind::Words => Query::Words(text),
        }
    }
}

/// # Safety
/// `env` and `value` must be valid for the current call.
pub(super) unsafe fn read_kind(env: sys::napi_env, value: sys::napi_value) -> Result<Kind> {
    // SAFETY: forwarded.
    match unsafe { read_string(env, value, "kind") }?.as_str() {
        "contains" => Ok(Kind::Contains),
        "prefix" => Ok(Kind::Prefix),
        "words" => Ok(Kind::Words),
        _ => Err(to_js(AleError::InvalidInput(
            "kind must be 'contains', 'prefix' or 'words'".into(),
        ))),
    }
}

/// A JS string as a Rust one, wiped when dropped (a value or a query is
/// plaintext), as are the copies made on the way; `ALE_INVALID_INPUT` for
/// anything else or a lone surrogate.
///
/// # Safety
/// `env` and `value` must be valid for the current call.
pub(super) unsafe fn read_string(
    env: sys::napi_env,
    value: sys::napi_value,
    what: &str,
) -> Result<Zeroizing<String>> {
    let (mut wide, mut bytes) = (Zeroizing::new(Vec::new()), Zeroizing::new(Vec::new()));
    // SAFETY: forwarded.
    let range = unsafe { read_utf8(env, value, &mut wide, &mut bytes, what) }.map_err(to_js)?;
    let text = std::str::from_utf8(&bytes[range]).map_err(|_| to_js(AleError::Internal))?;
    Ok(Zeroizing::new(text.to_owned()))
}
