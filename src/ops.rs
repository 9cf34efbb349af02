//! Every Node-API operation, once: read the value, run the core, make the JS
//! result. The `#[napi]` surface (`api/`) and the direct callbacks both come
//! here, so each conversion exists once. The operations' bodies (counting,
//! length rules, the UTF-8 rule and the wipes) are the core's ([`Rings`]):
//! the thread-pool job (`job.rs`) and the bun:ffi entry (`ffi/entry.rs`)
//! call the same ones.

use ale_core::context::Context;
use ale_core::error::AleError;
use ale_core::text::Opened;
use ale_core::Rings;
use napi::sys;

use crate::budget;
use crate::error::{check, to_js, Result};
use crate::js::buffer::{new_buffer, read_bytes_into};
use crate::js::raw;
use crate::js::text::{
    ascii_to_js, read_envelope_bytes, read_envelope_utf16, read_utf8, text_to_js,
};
use crate::scratch::{with_context, Buffers};

/// A hot operation: what the direct callbacks and the eight napi-rs
/// declarations they replace run.
#[derive(Clone, Copy)]
pub enum Op {
    Encrypt,
    Decrypt,
    EncryptBinary,
    DecryptBinary,
}

/// Runs `op` on `value` with `ring` in context `ctx`.
///
/// # Safety
/// `env` and `value` must be valid for the current callback.
pub unsafe fn run(
    env: sys::napi_env,
    op: Op,
    ring: &Rings,
    value: sys::napi_value,
    b: &mut Buffers,
    ctx: &Context<'_>,
) -> Result<sys::napi_value> {
    // SAFETY: forwarded.
    unsafe {
        match op {
            Op::Encrypt => encrypt(env, ring, value, b, ctx),
            Op::Decrypt => decrypt(env, ring, value, b, ctx),
            Op::EncryptBinary => encrypt_binary(env, ring, value, b, ctx),
            Op::DecryptBinary => decrypt_binary(env, ring, value, b, ctx),
        }
    }
}

/// The JS string `value` as UTF-8 in `b.input` (replacing what was there);
/// its range there. `what` names the argument in errors.
///
/// # Safety
/// `env` and `value` must be valid for the current call.
unsafe fn read_text(
    env: sys::napi_env,
    value: sys::napi_value,
    b: &mut Buffers,
    what: &str,
) -> Result<std::ops::Range<usize>> {
    b.input.clear();
    // SAFETY: forwarded from the caller.
    unsafe { read_utf8(env, value, &mut b.wide, &mut b.input, what) }.map_err(to_js)
}

/// Encrypts the JS string `value`; returns the envelope as a JS string.
///
/// # Safety
/// `env` and `value` must be valid for the current call.
pub unsafe fn encrypt(
    env: sys::napi_env,
    ring: &Rings,
    value: sys::napi_value,
    b: &mut Buffers,
    ctx: &Context<'_>,
) -> Result<sys::napi_value> {
    // SAFETY: forwarded from the caller.
    let range = unsafe { read_text(env, value, b, "plaintext") }?;
    let count = ring
        .seal(&mut b.input[range], ctx, &mut b.aad, &mut b.out)
        .map_err(to_js)?;
    // SAFETY: the current env.
    unsafe { budget::after_seal(env, ring, count) };
    // SAFETY: the current env; an envelope is ASCII.
    unsafe { ascii_to_js(env, &b.out) }.map_err(crate::error::engine_failure)
}

/// Decrypts the JS string `value`; returns the plaintext as a JS string.
///
/// # Safety
/// `env` and `value` must be valid for the current call.
pub unsafe fn decrypt(
    env: sys::napi_env,
    ring: &Rings,
    value: sys::napi_value,
    b: &mut Buffers,
    ctx: &Context<'_>,
) -> Result<sys::napi_value> {
    // SAFETY: forwarded from the caller.
    let opened = unsafe { open(env, ring, value, b, ctx) }?;
    // SAFETY: the current env.
    unsafe { plaintext_to_js(env, b, opened) }
}

/// Where [`read_envelope`] left an envelope.
enum Read {
    /// Its bytes, at this range of `b.input`.
    Bytes(std::ops::Range<usize>),
    /// Its UTF-16 code units, in `b.wide`.
    Units,
}

/// Reads the envelope `value`: its UTF-16 code units, or its bytes where the
/// engine exports those faster; either is parsed as it is.
///
/// # Safety
/// `env` and `value` must be valid for the current call.
unsafe fn read_envelope(
    env: sys::napi_env,
    ring: &Rings,
    value: sys::napi_value,
    b: &mut Buffers,
) -> Result<Read> {
    // SAFETY: forwarded from the caller.
    let bytes = unsafe { read_envelope_bytes(env, value, &mut b.wide, &mut b.input, ring) }
        .map_err(to_js)?;
    if let Some(range) = bytes {
        return Ok(Read::Bytes(range));
    }
    // SAFETY: forwarded from the caller.
    unsafe { read_envelope_utf16(env, value, &mut b.wide, ring) }.map_err(to_js)?;
    Ok(Read::Units)
}

/// Opens the envelope `value` into `b.out` (the plaintext, UTF-8).
///
/// # Safety
/// `env` and `value` must be valid for the current call.
pub unsafe fn open(
    env: sys::napi_env,
    ring: &Rings,
    value: sys::napi_value,
    b: &mut Buffers,
    ctx: &Context<'_>,
) -> Result<Opened> {
    // SAFETY: forwarded from the caller.
    let opened = match unsafe { read_envelope(env, ring, value, b) }? {
        Read::Bytes(range) => ring.open(&b.input[range], ctx, &mut b.aad, &mut b.out),
        Read::Units => ring.open(&b.wide[..], ctx, &mut b.aad, &mut b.out),
    };
    opened.map_err(to_js)
}

/// The index of the key that opens the envelope `value`, whatever its
/// plaintext, which is wiped.
///
/// # Safety
/// `env` and `value` must be valid for the current call.
pub unsafe fn key_index(
    env: sys::napi_env,
    ring: &Rings,
    value: sys::napi_value,
    b: &mut Buffers,
    ctx: &Context<'_>,
) -> Result<usize> {
    // SAFETY: forwarded from the caller.
    let index = match unsafe { read_envelope(env, ring, value, b) }? {
        Read::Bytes(range) => ring.open_bytes(&b.input[range], ctx, &mut b.aad, &mut b.out),
        Read::Units => ring.open_bytes(&b.wide[..], ctx, &mut b.aad, &mut b.out),
    };
    zeroize::Zeroize::zeroize(&mut b.out);
    index.map_err(to_js)
}

/// The blind index of the JS string `value` under the key of secret
/// `secret`, as base64url.
///
/// # Safety
/// `env` and `value` must be valid for the current call.
pub unsafe fn blind_index(
    env: sys::napi_env,
    ring: &Rings,
    value: sys::napi_value,
    b: &mut Buffers,
    ctx: &Context<'_>,
    secret: usize,
) -> Result<sys::napi_value> {
    // SAFETY: forwarded from the caller.
    let range = unsafe { read_text(env, value, b, "value") }?;
    let mac = ring
        .blind_index(secret, &b.input[range], ctx, &mut b.aad)
        .map_err(to_js)?;
    ale_core::base64::encode_into(&mac, &mut b.out);
    // SAFETY: the current env; base64url is ASCII.
    unsafe { ascii_to_js(env, &b.out) }.map_err(crate::error::engine_failure)
}

/// The blind index of the JS string `value` under each of `ring`'s
/// secrets, primary first: the lookups of a rotation while indexes are
/// rebuilt.
///
/// # Safety
/// `env` and `value` must be valid for the current call.
pub unsafe fn blind_indexes(
    env: sys::napi_env,
    ring: &Rings,
    value: sys::napi_value,
    b: &mut Buffers,
    ctx: &Context<'_>,
) -> Result<Vec<sys::napi_value>> {
    (0..ring.index_count(ctx).map_err(to_js)?)
        // SAFETY: forwarded from the caller.
        .map(|k| unsafe { blind_index(env, ring, value, b, ctx, k) })
        .collect()
}

/// Encrypts the JS string `value` into a new `Buffer` holding the binary
/// envelope: the plaintext is copied once into the Buffer and sealed there.
///
/// # Safety
/// `env` and `value` must be valid for the current call.
pub unsafe fn encrypt_binary(
    env: sys::napi_env,
    ring: &Rings,
    value: sys::napi_value,
    b: &mut Buffers,
    ctx: &Context<'_>,
) -> Result<sys::napi_value> {
    // SAFETY: forwarded from the caller.
    let range = unsafe { read_text(env, value, b, "plaintext") }?;
    let header = ring.binary_header_len();
    let plaintext = &mut b.input[range];
    let len = header + plaintext.len();
    // SAFETY: the current env.
    let made = unsafe { new_buffer(env, len) };
    // The scratch copy is wiped either way: the Buffer gets its own.
    let copied = made.map(|(buffer, data)| {
        // SAFETY: `data` is the Buffer's own memory, `len` bytes, alive
        // while `buffer` is on this call's stack; nothing else aliases it.
        let bytes = unsafe { std::slice::from_raw_parts_mut(data, len) };
        bytes[header..].copy_from_slice(plaintext);
        (buffer, bytes)
    });
    zeroize::Zeroize::zeroize(plaintext);
    let (buffer, bytes) = copied?;
    let count = ring.seal_binary(bytes, ctx, &mut b.aad).map_err(to_js)?;
    // SAFETY: the current env.
    unsafe { budget::after_seal(env, ring, count) };
    Ok(buffer)
}

/// Decrypts the binary envelope in the `Uint8Array` (or `Buffer`) `value`.
///
/// # Safety
/// `env` and `value` must be valid for the current call.
pub unsafe fn decrypt_binary(
    env: sys::napi_env,
    ring: &Rings,
    value: sys::napi_value,
    b: &mut Buffers,
    ctx: &Context<'_>,
) -> Result<sys::napi_value> {
    // SAFETY: forwarded from the caller.
    unsafe { read_bytes_into(env, value, "envelope", &mut b.input) }.map_err(to_js)?;
    let opened = ring
        .open_binary(&b.input, ctx, &mut b.aad, &mut b.out)
        .map_err(to_js)?;
    // SAFETY: the current env.
    unsafe { plaintext_to_js(env, b, opened) }
}

/// The plaintext in `b.out`, which the core checked is UTF-8, as a JS string.
///
/// # Safety
/// `env` must be valid for the current call.
unsafe fn plaintext_to_js(
    env: sys::napi_env,
    b: &mut Buffers,
    opened: Opened,
) -> Result<sys::napi_value> {
    // SAFETY: forwarded from the caller; the core checked the text.
    unsafe { text_to_js(env, &b.out, opened.ascii, &mut b.wide) }
        .map_err(crate::error::engine_failure)
}

/// The length of the JS array `values`; `ALE_INVALID_INPUT` when it is not
/// an array.
///
/// # Safety
/// `env` and `values` must be valid for the current call.
pub unsafe fn array_len(env: sys::napi_env, values: sys::napi_value) -> Result<u32> {
    let (mut is_array, mut len) = (false, 0u32);
    // SAFETY: forwarded.
    let status = unsafe { sys::napi_is_array(env, values, &mut is_array) };
    if status != sys::Status::napi_ok || !is_array {
        return Err(to_js(AleError::InvalidInput(
            "values must be an array of strings".into(),
        )));
    }
    // SAFETY: `values` is an array.
    check(unsafe { sys::napi_get_array_length(env, values, &mut len) })?;
    Ok(len)
}

/// The first `len` elements of the JS array `values`, up to and including
/// the first that is not a string. They are read before any is worked on:
/// reading one can run JS (a getter), which may call the addon again, and
/// must not while the thread's buffers are in use. The element that is not
/// a string fails the call when its turn comes (`values[i]`, after the
/// context is checked), so none after it is read: a sparse array with a
/// length of 2^32 - 1 would otherwise be read, and held, hole by hole.
///
/// # Safety
/// `env` and `values` must be valid for the current call, `values` an array
/// of at least `len` elements ([`array_len`]).
pub unsafe fn elements(
    env: sys::napi_env,
    values: sys::napi_value,
    len: u32,
) -> Result<Vec<sys::napi_value>> {
    let mut out = Vec::new();
    for i in 0..len {
        let mut element = std::ptr::null_mut();
        // SAFETY: `i` is below the array's length.
        check(unsafe { sys::napi_get_element(env, values, i, &mut element) })?;
        out.push(element);
        // SAFETY: `element` was just read.
        if !unsafe { raw::is_string(env, element) } {
            break;
        }
    }
    Ok(out)
}

/// Applies `op` to each of `values` and returns a new array of the
/// results. A failure names the element's index and keeps its code.
/// `values` may end early ([`elements`] stops after the first element that
/// is not a string), so `op` must refuse what is not a string, as every op
/// of `encryptMany`/`decryptMany` does: otherwise the result would be cut
/// short without an error.
///
/// # Safety
/// `env` and `values` must be valid for the current call.
pub unsafe fn map_values(
    env: sys::napi_env,
    values: &[sys::napi_value],
    b: &mut Buffers,
    mut op: impl FnMut(&mut Buffers, sys::napi_value) -> Result<sys::napi_value>,
) -> Result<sys::napi_value> {
    let mut result = std::ptr::null_mut();
    // SAFETY: a new array of the same length.
    check(unsafe { sys::napi_create_array_with_length(env, values.len(), &mut result) })?;
    for (i, &element) in (0u32..).zip(values) {
        let value = op(b, element).map_err(|mut e| {
            e.reason = format!("values[{i}]: {}", e.reason);
            e
        })?;
        // SAFETY: `result` is an array of `values.len()` elements.
        check(unsafe { sys::napi_set_element(env, result, i, value) })?;
    }
    Ok(result)
}

/// Reads the three context arguments, then runs `op` on `value`: a hot call
/// that has no context handle.
///
/// # Safety
/// `env` and the values must be valid for the current callback.
pub unsafe fn run_in_context(
    env: sys::napi_env,
    op: Op,
    ring: &Rings,
    value: sys::napi_value,
    ctx: [sys::napi_value; 3],
) -> Result<sys::napi_value> {
    // SAFETY: forwarded.
    unsafe { with_context(env, ctx, |b, c| run(env, op, ring, value, b, c)) }
}
