//! Reading secrets and ring options from JS (an array, or `process.env`-like
//! objects) into a core key ring. Secret bytes live only in zeroizing
//! buffers here; how a secret becomes a key is `ale_core::secret`'s business.

use std::sync::Arc;

use ale_core::error::AleError;
use ale_core::iv::IvLength;
use ale_core::keys::{self, KeyRing as CoreRing, RingOptions, Secret};
use ale_core::secret::SecretValue;
use napi::bindgen_prelude::JsValue;
use napi::{sys, Env, Unknown};
use zeroize::Zeroizing;

use crate::binding::{napi_failure, to_js, Result};
use crate::convert::{self, read_utf8};

/// One configured secret, copied out of JS.
enum Owned {
    Text(Zeroizing<Vec<u8>>),
    Bytes(Zeroizing<Vec<u8>>),
}

/// Reads `[primary, ...previous]` from a JS array of strings and 32-byte
/// `Uint8Array`s (Buffers included).
pub fn read_secrets(
    env: &Env,
    secrets: Unknown,
    options: Option<Unknown>,
) -> Result<Arc<CoreRing>> {
    let raw = env.raw();
    let options = read_options(raw, options)?;
    let mut is_array = false;
    // SAFETY: `secrets` is an argument of the current call.
    let status = unsafe { sys::napi_is_array(raw, secrets.raw(), &mut is_array) };
    if status != sys::Status::napi_ok || !is_array {
        return Err(to_js(AleError::InvalidKey {
            which: "secrets".into(),
            reason: "must be an array of strings or 32-byte Uint8Arrays: [primary, ...previous]",
        }));
    }
    let mut len = 0u32;
    // SAFETY: `secrets` is an array.
    check(unsafe { sys::napi_get_array_length(raw, secrets.raw(), &mut len) })?;
    let mut owned = Vec::new();
    for i in 0..len {
        let label = keys::position_label(i as usize);
        let mut element = std::ptr::null_mut();
        // SAFETY: `i` is below the array's length.
        check(unsafe { sys::napi_get_element(raw, secrets.raw(), i, &mut element) })?;
        // SAFETY: `element` was just read from the array.
        let secret = unsafe { read_secret(raw, element, &label) }?;
        owned.push((label, secret));
    }
    build_ring(owned, options)
}

/// A string, or the bytes of a `Uint8Array`/`Buffer`.
///
/// # Safety
/// `env` and `value` must be valid for the current call.
unsafe fn read_secret(env: sys::napi_env, value: sys::napi_value, label: &str) -> Result<Owned> {
    let mut bytes = Zeroizing::new(Vec::new());
    // SAFETY: forwarded from the caller.
    if unsafe { convert::read_bytes_into(env, value, label, &mut bytes) }.is_ok() {
        return Ok(Owned::Bytes(bytes));
    }
    let mut text = Zeroizing::new(Vec::new());
    // SAFETY: forwarded from the caller.
    match unsafe {
        read_utf8(
            env,
            value,
            &mut Zeroizing::new(Vec::new()),
            &mut text,
            label,
        )
    } {
        Ok(_) => Ok(Owned::Text(text)),
        Err(e) => Err(to_js(AleError::InvalidKey {
            which: label.into(),
            reason: match e {
                AleError::InvalidInput(m) if m.contains("surrogate") => {
                    "contains a lone UTF-16 surrogate"
                }
                _ => "must be a string or a 32-byte Uint8Array",
            },
        })),
    }
}

/// `{ ivLength?: 12 | 16, legacyFallbacks?: boolean, maxEnvelopeLength?:
/// number }`; undefined or null means the defaults. Anything else is
/// `ALE_INVALID_INPUT`.
fn read_options(env: sys::napi_env, options: Option<Unknown>) -> Result<RingOptions> {
    let mut out = RingOptions::default();
    let Some(options) = options.filter(|o| !is_nullish(o)) else {
        return Ok(out);
    };
    if !matches!(options.get_type(), Ok(napi::ValueType::Object)) {
        return Err(invalid_option("options must be an object"));
    }
    // SAFETY: `options` is an object argument of the current call.
    if let Some(value) = unsafe { property(env, options.raw(), c"ivLength") }? {
        let mut n = 0f64;
        // SAFETY: `value` was just read.
        let status = unsafe { sys::napi_get_value_double(env, value, &mut n) };
        out.iv_length = match (status, n) {
            (sys::Status::napi_ok, 12.0) => IvLength::Bits96,
            (sys::Status::napi_ok, 16.0) => IvLength::Bits128,
            _ => return Err(invalid_option("options.ivLength must be 12 or 16")),
        };
    }
    // SAFETY: as above.
    if let Some(value) = unsafe { property(env, options.raw(), c"legacyFallbacks") }? {
        let mut b = false;
        // SAFETY: `value` was just read.
        if unsafe { sys::napi_get_value_bool(env, value, &mut b) } != sys::Status::napi_ok {
            return Err(invalid_option("options.legacyFallbacks must be a boolean"));
        }
        out.legacy_fallbacks = b;
    }
    // SAFETY: as above.
    if let Some(value) = unsafe { property(env, options.raw(), c"maxEnvelopeLength") }? {
        let mut n = f64::NAN;
        // SAFETY: `value` was just read.
        let status = unsafe { sys::napi_get_value_double(env, value, &mut n) };
        let valid =
            status == sys::Status::napi_ok && n >= 1.0 && n.fract() == 0.0 && n < 2f64.powi(53);
        if !valid {
            return Err(invalid_option(
                "options.maxEnvelopeLength must be a positive integer",
            ));
        }
        // An integer below 2^53: exact, and saturating on 32-bit targets.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        {
            out.max_envelope_len = n as usize;
        }
    }
    Ok(out)
}

fn invalid_option(reason: &str) -> napi::Error<&'static str> {
    to_js(AleError::InvalidInput(reason.into()))
}

fn is_nullish(value: &Unknown) -> bool {
    matches!(
        value.get_type(),
        Ok(napi::ValueType::Undefined | napi::ValueType::Null)
    )
}

/// `object[name]`, or `None` when it is undefined.
///
/// # Safety
/// `env` and `object` must be valid for the current call.
unsafe fn property(
    env: sys::napi_env,
    object: sys::napi_value,
    name: &std::ffi::CStr,
) -> Result<Option<sys::napi_value>> {
    let mut value = std::ptr::null_mut();
    // SAFETY: forwarded from the caller.
    check(unsafe { sys::napi_get_named_property(env, object, name.as_ptr(), &mut value) })?;
    // SAFETY: `value` was just read.
    Ok((unsafe { convert::type_name(env, value) } != "undefined").then_some(value))
}

fn build_ring(secrets: Vec<(String, Owned)>, options: RingOptions) -> Result<Arc<CoreRing>> {
    let mut labelled = Vec::with_capacity(secrets.len());
    for (label, secret) in &secrets {
        let value = match secret {
            // read_utf8 transcodes from well-formed UTF-16, so this is UTF-8.
            Owned::Text(bytes) => SecretValue::Text(
                std::str::from_utf8(bytes).map_err(|_| to_js(AleError::Internal))?,
            ),
            Owned::Bytes(bytes) => SecretValue::Bytes(bytes),
        };
        labelled.push(Secret {
            label: label.clone(),
            value,
        });
    }
    CoreRing::new(labelled, options)
        .map(Arc::new)
        .map_err(to_js)
}

/// Builds a ring from the environment, the way SveltyCMS reads its key:
/// `ENCRYPTION_KEY`, or `SECRET_ENCRYPTION_KEY` when that is unset or empty,
/// used exactly as written (SveltyCMS does not trim it); then the
/// comma-separated `ENCRYPTION_KEY_PREVIOUS`, each entry trimmed of the white
/// space around it. `vars` defaults to `process.env`.
pub fn ring_from_env(
    env: &Env,
    vars: Option<Unknown>,
    options: Option<Unknown>,
) -> Result<Arc<CoreRing>> {
    let raw = env.raw();
    let options = read_options(raw, options)?;
    let vars = match vars.filter(|v| !is_nullish(v)) {
        Some(v) => v.raw(),
        None => process_env(raw).map_err(napi_failure)?,
    };
    let mut primary = None;
    for name in ["ENCRYPTION_KEY", "SECRET_ENCRYPTION_KEY"] {
        if let Some(value) = get_string_property(raw, vars, name)?.filter(|v| !v.is_empty()) {
            primary = Some((name, value));
            break;
        }
    }
    let Some((name, primary)) = primary else {
        return Err(to_js(AleError::InvalidKey {
            which: "ENCRYPTION_KEY".into(),
            reason: "is not set (nor SECRET_ENCRYPTION_KEY); set it to 32 random bytes as hex \
                     or base64, for example `openssl rand -base64 32`",
        }));
    };
    let mut secrets = vec![(name.to_string(), Owned::Text(primary))];
    if let Some(previous) = get_string_property(raw, vars, "ENCRYPTION_KEY_PREVIOUS")? {
        let entries = previous
            .split(|&b| b == b',')
            .map(<[u8]>::trim_ascii)
            .filter(|p| !p.is_empty());
        for (i, entry) in entries.enumerate() {
            secrets.push((
                format!("ENCRYPTION_KEY_PREVIOUS[{i}]"),
                Owned::Text(Zeroizing::new(entry.to_vec())),
            ));
        }
    }
    build_ring(secrets, options)
}

fn check(status: sys::napi_status) -> Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(napi_failure(napi::Error::from_status(napi::Status::from(
            status,
        ))))
    }
}

fn process_env(env: sys::napi_env) -> napi::Result<sys::napi_value> {
    let mut global = std::ptr::null_mut();
    let (mut process, mut vars) = (std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: plain property reads on the global object of the current env.
    unsafe {
        napi::check_status!(sys::napi_get_global(env, &mut global))?;
        napi::check_status!(sys::napi_get_named_property(
            env,
            global,
            c"process".as_ptr(),
            &mut process
        ))?;
        napi::check_status!(sys::napi_get_named_property(
            env,
            process,
            c"env".as_ptr(),
            &mut vars
        ))?;
    }
    Ok(vars)
}

/// `vars[name]` as bytes, `None` when undefined; `ALE_INVALID_KEY` when not a string.
fn get_string_property(
    env: sys::napi_env,
    vars: sys::napi_value,
    name: &'static str,
) -> Result<Option<Zeroizing<Vec<u8>>>> {
    let key = std::ffi::CString::new(name).map_err(|_| to_js(AleError::Internal))?;
    let invalid = || {
        to_js(AleError::InvalidKey {
            which: name.into(),
            reason: "must be a string",
        })
    };
    // SAFETY: `vars` is an object value of the current call.
    let Some(value) = (unsafe { property(env, vars, &key) }).map_err(|_| invalid())? else {
        return Ok(None);
    };
    let mut bytes = Zeroizing::new(Vec::new());
    // SAFETY: `value` was just read.
    unsafe {
        read_utf8(
            env,
            value,
            &mut Zeroizing::new(Vec::new()),
            &mut bytes,
            name,
        )
    }
    .map_err(|_| invalid())?;
    Ok(Some(bytes))
}
