//! Reading secrets from JS (an array, or `process.env`-like objects) into a
//! core key ring. Secret bytes live only in zeroizing buffers here.

use std::sync::Arc;

use ale_core::error::AleError;
use ale_core::keys::{self, KeyRing as CoreRing, Secret};
use napi::bindgen_prelude::JsValue;
use napi::{sys, Env, Unknown};
use zeroize::Zeroizing;

use crate::binding::{napi_failure, to_js, Result};
use crate::convert::{self, read_utf8};

/// Reads `[primary, ...previous]` from a JS array of strings.
pub fn read_secrets(env: &Env, secrets: Unknown) -> Result<Arc<CoreRing>> {
    let raw = env.raw();
    let (mut is_array, mut len) = (false, 0u32);
    // SAFETY: `secrets` is an argument of the current call.
    unsafe { sys::napi_is_array(raw, secrets.raw(), &mut is_array) };
    if !is_array {
        return Err(to_js(AleError::InvalidKey {
            which: "secrets".into(),
            reason: "must be an array of strings: [primary, ...previous]",
        }));
    }
    // SAFETY: `secrets` is an array.
    unsafe { sys::napi_get_array_length(raw, secrets.raw(), &mut len) };
    let mut owned: Vec<(String, Zeroizing<Vec<u8>>)> = Vec::new();
    for i in 0..len {
        let label = keys::position_label(i as usize);
        let mut element = std::ptr::null_mut();
        // SAFETY: `i` is below the array's length.
        unsafe { sys::napi_get_element(raw, secrets.raw(), i, &mut element) };
        let mut bytes = Zeroizing::new(Vec::new());
        // SAFETY: `element` was just read from the array.
        if let Err(e) = unsafe {
            read_utf8(
                raw,
                element,
                &mut Zeroizing::new(Vec::new()),
                &mut bytes,
                &label,
            )
        } {
            return Err(to_js(AleError::InvalidKey {
                which: label,
                reason: not_a_string(&e),
            }));
        }
        owned.push((label, bytes));
    }
    build_ring(owned)
}

fn not_a_string(e: &AleError) -> &'static str {
    match e {
        AleError::InvalidInput(m) if m.contains("surrogate") => "contains a lone UTF-16 surrogate",
        _ => "must be a string",
    }
}

fn build_ring(secrets: Vec<(String, Zeroizing<Vec<u8>>)>) -> Result<Arc<CoreRing>> {
    let ring = CoreRing::new(secrets.iter().map(|(label, bytes)| Secret {
        label: label.clone(),
        bytes,
    }));
    ring.map(Arc::new).map_err(to_js)
}

/// Reads ENCRYPTION_KEY and ENCRYPTION_KEY_PREVIOUS from `vars`, or from
/// `process.env` when `vars` is undefined or null.
pub fn ring_from_env(env: &Env, vars: Option<Unknown>) -> Result<Arc<CoreRing>> {
    let raw = env.raw();
    let vars = match vars {
        Some(v)
            if !matches!(
                v.get_type(),
                Ok(napi::ValueType::Undefined | napi::ValueType::Null)
            ) =>
        {
            v.raw()
        }
        _ => process_env(raw).map_err(napi_failure)?,
    };
    let primary = get_string_property(raw, vars, "ENCRYPTION_KEY")?;
    let Some(primary) = primary.filter(|p| !p.is_empty()) else {
        return Err(to_js(AleError::InvalidKey {
            which: "ENCRYPTION_KEY".into(),
            reason: "is not set; set it to a secret of at least 32 bytes \
                     (for example `openssl rand -base64 48`)",
        }));
    };
    let mut secrets = vec![("ENCRYPTION_KEY".to_string(), primary)];
    if let Some(previous) = get_string_property(raw, vars, "ENCRYPTION_KEY_PREVIOUS")? {
        for (i, part) in previous
            .split(|&b| b == b',')
            .filter(|p| !p.is_empty())
            .enumerate()
        {
            secrets.push((
                format!("ENCRYPTION_KEY_PREVIOUS[{i}]"),
                Zeroizing::new(part.to_vec()),
            ));
        }
    }
    build_ring(secrets)
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
    let mut value = std::ptr::null_mut();
    let key =
        std::ffi::CString::new(name).map_err(|_| to_js(AleError::InvalidInput("name".into())))?;
    // SAFETY: `vars` is an object value of the current call.
    let status = unsafe { sys::napi_get_named_property(env, vars, key.as_ptr(), &mut value) };
    let invalid = || {
        to_js(AleError::InvalidKey {
            which: name.into(),
            reason: "must be a string",
        })
    };
    if status != sys::Status::napi_ok {
        return Err(invalid());
    }
    // SAFETY: `value` was just read.
    if unsafe { convert::type_name(env, value) } == "undefined" {
        return Ok(None);
    }
    let mut bytes = Zeroizing::new(Vec::new());
    // SAFETY: as above.
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
