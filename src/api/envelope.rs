//! Functions on envelopes that need no key: telling an envelope from
//! plaintext, and converting between the text and binary forms.

use ale_core::KeyRing as CoreRing;
use ale_core::{binary, envelope};
use napi::bindgen_prelude::JsValue;
use napi::{Env, Unknown};
use napi_derive::napi;

use crate::error::{engine_failure, guard, to_js, Result};
use crate::js::buffer::{buffer_copy, read_bytes_into};
use crate::js::raw::Created;
use crate::js::text::{ascii_to_js, read_utf16};

/// The binary form of a text envelope, as a new `Buffer`; no key needed.
/// Throws like decryption on a malformed envelope.
#[napi(
    catch_unwind,
    ts_return_type = "Buffer",
    ts_args_type = "envelope: string"
)]
pub fn envelope_to_bytes(env: &Env, envelope: Unknown) -> Result<Created> {
    let raw = env.raw();
    guard(|| {
        let mut wide = Vec::new();
        // SAFETY: `envelope` is an argument of the current callback.
        unsafe { read_utf16(raw, envelope.raw(), &mut wide, "envelope", None) }.map_err(to_js)?;
        let mut bytes = Vec::new();
        binary::from_text(&wide[..], &mut bytes).map_err(to_js)?;
        // SAFETY: the current env.
        unsafe { buffer_copy(raw, &bytes) }.map(Created)
    })
}

/// The text form (`v1:…`) of a binary envelope; no key needed. Throws
/// `ALE_MALFORMED_ENVELOPE` or `ALE_UNSUPPORTED_VERSION` on bad bytes.
#[napi(
    catch_unwind,
    ts_return_type = "string",
    ts_args_type = "envelope: Uint8Array"
)]
pub fn envelope_from_bytes(env: &Env, envelope: Unknown) -> Result<Created> {
    let raw = env.raw();
    guard(|| {
        let mut bytes = Vec::new();
        // SAFETY: `envelope` is an argument of the current callback.
        unsafe { read_bytes_into(raw, envelope.raw(), "envelope", &mut bytes) }.map_err(to_js)?;
        let mut text = Vec::new();
        binary::to_text(&bytes, &mut text).map_err(to_js)?;
        // SAFETY: the current env; an envelope is ASCII.
        unsafe { ascii_to_js(raw, &text) }
            .map(Created)
            .map_err(engine_failure)
    })
}

/// Whether `value` is a well-formed envelope of a supported version (no key
/// needed, nothing decrypted). Used to tell legacy plaintext from envelopes.
#[napi(catch_unwind, ts_args_type = "value: unknown")]
pub fn is_envelope(env: &Env, value: Unknown) -> Result<bool> {
    guard(|| {
        let mut wide = Vec::new();
        // SAFETY: `value` is an argument of the current callback.
        Ok(
            unsafe { read_utf16(env.raw(), value.raw(), &mut wide, "value", None) }.is_ok()
                && CoreRing::check_envelope(&wide[..]).is_ok(),
        )
    })
}

/// The key id a `v2` envelope names (22 base64url characters), text or
/// binary; `null` for a `v1` envelope, which names none. No key needed,
/// nothing decrypted. Throws `ALE_MALFORMED_ENVELOPE` or
/// `ALE_UNSUPPORTED_VERSION` on anything else: callers ask this instead of
/// cutting the text at its `:`.
#[napi(
    catch_unwind,
    ts_return_type = "string | null",
    ts_args_type = "envelope: string | Uint8Array"
)]
pub fn envelope_key_id(env: &Env, envelope: Unknown) -> Result<Option<String>> {
    let raw = env.raw();
    guard(|| {
        let mut bytes = Vec::new();
        // SAFETY: `envelope` is an argument of the current callback.
        let id = if unsafe { read_bytes_into(raw, envelope.raw(), "envelope", &mut bytes) }.is_ok()
        {
            binary::parse(&bytes).map_err(to_js)?.key_id
        } else {
            let mut wide = Vec::new();
            // SAFETY: as above.
            unsafe { read_utf16(raw, envelope.raw(), &mut wide, "envelope", None) }
                .map_err(to_js)?;
            CoreRing::check_envelope(&wide[..]).map_err(to_js)?;
            envelope::parse(&wide[..]).map_err(to_js)?.key_id
        };
        Ok(id.map(|id| {
            envelope::key_id_text(&id)
                .iter()
                .map(|&b| char::from(b))
                .collect()
        }))
    })
}
