//! Secrets and ring options, from JS (an array, or `process.env`-like
//! objects) to a core key ring. Secret bytes live only in zeroizing buffers
//! here; how a secret becomes a key is `ale_core::secret`'s business.

use ale_core::envelope::{self, KeyId};
use ale_core::error::AleError;
use ale_core::iv::IvLength;
use ale_core::keys::{self, KeyRing, RingOptions, Secret};
use ale_core::near_miss::near_miss;
use ale_core::previous::{self, LIST};
use ale_core::secret::SecretValue;
use ale_core::Rings;
use napi::sys;
use std::sync::atomic::{AtomicBool, Ordering};
use zeroize::Zeroizing;

use crate::error::{check, to_js, Result};
use crate::js::buffer::read_bytes_into;
use crate::js::raw::{self, is_nullish, property, read_bool};
use crate::js::text::read_utf8;
use crate::warning;

/// The options that name a ring's keys: `keyIds` and `indexKey`.
#[derive(Default)]
struct Naming {
    key_ids: Option<Vec<KeyId>>,
    index_key: Option<Zeroizing<[u8; 32]>>,
}

/// One configured secret, copied out of JS.
enum Owned {
    Text(Zeroizing<Vec<u8>>),
    Bytes(Zeroizing<Vec<u8>>),
}

/// Reads `[primary, ...previous]` from a JS array of strings and 32-byte
/// `Uint8Array`s (Buffers included).
///
/// # Safety
/// `env` and the values must be valid for the current call.
pub unsafe fn read_secrets(
    env: sys::napi_env,
    secrets: sys::napi_value,
    options: Option<sys::napi_value>,
) -> Result<KeyRing> {
    // SAFETY: forwarded.
    let (options, naming) = unsafe { read_options(env, options) }?;
    let mut is_array = false;
    // SAFETY: `secrets` is an argument of the current call.
    let status = unsafe { sys::napi_is_array(env, secrets, &mut is_array) };
    if status != sys::Status::napi_ok || !is_array {
        return Err(to_js(AleError::InvalidKey {
            which: "secrets".into(),
            reason: "must be an array of strings or 32-byte Uint8Arrays: [primary, ...previous]",
        }));
    }
    let mut len = 0u32;
    // SAFETY: `secrets` is an array.
    check(unsafe { sys::napi_get_array_length(env, secrets, &mut len) })?;
    let mut owned = Vec::new();
    for i in 0..len {
        let label = keys::position_label(i as usize);
        let mut element = std::ptr::null_mut();
        // SAFETY: `i` is below the array's length.
        check(unsafe { sys::napi_get_element(env, secrets, i, &mut element) })?;
        // SAFETY: `element` was just read from the array.
        let secret = unsafe { read_secret(env, element, &label) }?;
        owned.push((label, secret));
    }
    let ring = build_ring(&owned, options, naming)?;
    // SAFETY: forwarded.
    unsafe { warn_near_misses(env, &owned) };
    Ok(ring)
}

/// Whether this process has warned of a near-miss secret: once is enough
/// to send someone to the configuration, and rings are built again (per
/// worker, per test) with the same secrets.
static WARNED: AtomicBool = AtomicBool::new(false);

/// Queues one `ALE_KEY_NEAR_MISS` warning naming each text secret that
/// nearly matched a key rule ([`near_miss`]), by label and rule, never by
/// value; once per process.
///
/// # Safety
/// `env` must be valid for the current call.
unsafe fn warn_near_misses(env: sys::napi_env, secrets: &[(String, Owned)]) {
    let found: Vec<String> = secrets
        .iter()
        .filter_map(|(label, secret)| match secret {
            Owned::Text(bytes) => std::str::from_utf8(bytes)
                .ok()
                .and_then(near_miss)
                .map(|m| format!("{label} {}", m.describe())),
            Owned::Bytes(_) => None,
        })
        .collect();
    if found.is_empty() || WARNED.swap(true, Ordering::Relaxed) {
        return;
    }
    let message = format!(
        "@sveltycms/ale: {}. It is used as it resolves, as SveltyCMS resolves it; if it was meant as a key, fix it \
         before values are sealed with it, or they will not open under the corrected one.",
        found.join("; ")
    );
    // SAFETY: forwarded.
    if !unsafe { warning::queue(env, message, "ALE_KEY_NEAR_MISS") } {
        WARNED.store(false, Ordering::Relaxed);
    }
}

/// A ring of tenants, with `options` (`ivLength`, `maxEnvelopeLength`;
/// its tenants' rings bring their own keys and ids).
///
/// # Safety
/// `env` and `options` must be valid for the current call.
pub unsafe fn tenant_ring(env: sys::napi_env, options: Option<sys::napi_value>) -> Result<Rings> {
    // SAFETY: forwarded.
    let (options, naming) = unsafe { read_options(env, options) }?;
    if naming.key_ids.is_some() || naming.index_key.is_some() {
        return Err(invalid_option(
            "a ring of tenants takes no keyIds or indexKey: each tenant's ring brings its own",
        ));
    }
    Ok(Rings::of_tenants(options))
}

/// A string, or the bytes of a `Uint8Array`/`Buffer`.
///
/// # Safety
/// `env` and `value` must be valid for the current call.
unsafe fn read_secret(env: sys::napi_env, value: sys::napi_value, label: &str) -> Result<Owned> {
    let mut bytes = Zeroizing::new(Vec::new());
    // SAFETY: forwarded from the caller.
    if unsafe { read_bytes_into(env, value, label, &mut bytes) }.is_ok() {
        return Ok(Owned::Bytes(bytes));
    }
    // SAFETY: forwarded from the caller.
    if unsafe { raw::type_name(env, value) } == "undefined" {
        return Err(to_js(AleError::InvalidKey {
            which: label.into(),
            reason: "is undefined: is the environment variable it comes from set? (initKeyRing() with no argument reads ENCRYPTION_KEY itself)",
        }));
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
                AleError::LoneSurrogate { .. } => "contains a lone UTF-16 surrogate",
                _ => "must be a string or a 32-byte Uint8Array",
            },
        })),
    }
}

/// `{ ivLength?: 12 | 16, legacyFallbacks?: boolean, maxEnvelopeLength?:
/// number, keyIds?: string[], indexKey?: Uint8Array }`; undefined or null
/// means the defaults. Anything else is `ALE_INVALID_INPUT`.
///
/// # Safety
/// `env` and `options` must be valid for the current call.
unsafe fn read_options(
    env: sys::napi_env,
    options: Option<sys::napi_value>,
) -> Result<(RingOptions, Naming)> {
    let mut out = RingOptions::default();
    let mut naming = Naming::default();
    // SAFETY: forwarded.
    let Some(options) = options.filter(|&o| !unsafe { is_nullish(env, o) }) else {
        return Ok((out, naming));
    };
    // SAFETY: forwarded.
    if unsafe { raw::type_name(env, options) } != "an object" {
        return Err(invalid_option("options must be an object"));
    }
    // SAFETY: `options` is an object argument of the current call.
    if let Some(value) = unsafe { property(env, options, c"ivLength") }? {
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
    if let Some(value) = unsafe { property(env, options, c"legacyFallbacks") }? {
        // SAFETY: `value` was just read.
        out.legacy_fallbacks = unsafe { read_bool(env, value) }
            .ok_or_else(|| invalid_option("options.legacyFallbacks must be a boolean"))?;
    }
    // SAFETY: as above.
    if let Some(value) = unsafe { property(env, options, c"maxEnvelopeLength") }? {
        // SAFETY: `value` was just read.
        let n = unsafe { raw::positive_integer(env, value) }
            .filter(|&n| n < 2f64.powi(53))
            .ok_or_else(|| {
                invalid_option("options.maxEnvelopeLength must be a positive integer")
            })?;
        // A whole number below 2^53: exact, and saturating on 32-bit targets.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        {
            out.max_envelope_len = n as usize;
        }
    }
    // SAFETY: as above.
    if let Some(value) = unsafe { property(env, options, c"keyIds") }? {
        // SAFETY: `value` was just read.
        naming.key_ids = Some(unsafe { read_key_ids(env, value) }?);
    }
    // SAFETY: as above.
    if let Some(value) = unsafe { property(env, options, c"indexKey") }? {
        let mut bytes = Zeroizing::new(Vec::new());
        let bad = || invalid_option("options.indexKey must be a 32-byte Uint8Array");
        // SAFETY: `value` was just read.
        unsafe { read_bytes_into(env, value, "options.indexKey", &mut bytes) }
            .map_err(|_| bad())?;
        let mut key = Zeroizing::new([0u8; 32]);
        if bytes.len() != key.len() {
            return Err(bad());
        }
        key.copy_from_slice(&bytes);
        naming.index_key = Some(key);
    }
    Ok((out, naming))
}

/// `keyIds`: an array of key ids, 22 base64url characters each.
///
/// # Safety
/// `env` and `value` must be valid for the current call.
unsafe fn read_key_ids(env: sys::napi_env, value: sys::napi_value) -> Result<Vec<KeyId>> {
    let bad = || {
        invalid_option("options.keyIds must be an array of key ids, 22 base64url characters each")
    };
    let mut is_array = false;
    // SAFETY: `value` is a value of the current call.
    let status = unsafe { sys::napi_is_array(env, value, &mut is_array) };
    if status != sys::Status::napi_ok || !is_array {
        return Err(bad());
    }
    let mut len = 0u32;
    // SAFETY: `value` is an array.
    check(unsafe { sys::napi_get_array_length(env, value, &mut len) })?;
    // Not sized by `len`: a sparse array's length says nothing of its elements, and its first hole fails below.
    let mut ids = Vec::new();
    for i in 0..len {
        let mut element = std::ptr::null_mut();
        // SAFETY: `i` is below the array's length.
        check(unsafe { sys::napi_get_element(env, value, i, &mut element) })?;
        let (mut wide, mut text) = (Vec::new(), Vec::new());
        // SAFETY: `element` was just read from the array.
        let range = unsafe { read_utf8(env, element, &mut wide, &mut text, "options.keyIds") }
            .map_err(|_| bad())?;
        ids.push(envelope::parse_key_id(&text[range]).map_err(|_| bad())?);
    }
    Ok(ids)
}

fn invalid_option(reason: &str) -> napi::Error<&'static str> {
    to_js(AleError::InvalidInput(reason.into()))
}

fn build_ring(
    secrets: &[(String, Owned)],
    options: RingOptions,
    naming: Naming,
) -> Result<KeyRing> {
    let mut labelled = Vec::with_capacity(secrets.len());
    for (label, secret) in secrets {
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
    let mut ring = KeyRing::new(labelled, options).map_err(to_js)?;
    if let Some(ids) = naming.key_ids {
        ring = ring.with_key_ids(&ids).map_err(to_js)?;
    }
    if let Some(key) = naming.index_key {
        ring = ring.with_index_key(&key);
    }
    Ok(ring)
}

/// Builds a ring from the environment, the way SveltyCMS reads its key:
/// `ENCRYPTION_KEY`, or `SECRET_ENCRYPTION_KEY` when that is unset or empty,
/// used exactly as written (SveltyCMS does not trim it); then the previous
/// secrets in `ale_core::previous`'s order (`ENCRYPTION_KEY_PREVIOUS`'s
/// entries, `ENCRYPTION_KEY_PREVIOUS_<n>`, the list as written). `vars`
/// defaults to `process.env`.
///
/// # Safety
/// `env` and the values must be valid for the current call.
pub unsafe fn ring_from_env(
    env: sys::napi_env,
    vars: Option<sys::napi_value>,
    options: Option<sys::napi_value>,
) -> Result<KeyRing> {
    // SAFETY: forwarded.
    let (options, naming) = unsafe { read_options(env, options) }?;
    // SAFETY: forwarded.
    let vars = match vars.filter(|&v| !unsafe { is_nullish(env, v) }) {
        Some(v) => v,
        // SAFETY: the current env.
        None => unsafe { raw::process_property(env, c"env") }?.ok_or_else(|| {
            to_js(AleError::InvalidKey {
                which: "ENCRYPTION_KEY".into(),
                reason: "cannot be read: this runtime has no process.env; pass the secrets",
            })
        })?,
    };
    let mut primary = None;
    for name in ["ENCRYPTION_KEY", "SECRET_ENCRYPTION_KEY"] {
        if let Some(value) = get_string_property(env, vars, name)?.filter(|v| !v.is_empty()) {
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
    let list = get_string_property(env, vars, LIST)?;
    let mut numbered = Vec::new();
    // SAFETY: forwarded.
    for name in unsafe { own_names(env, vars) }? {
        if let Some(n) = previous::numbered(&name) {
            let n = n.map_err(to_js)?;
            if let Some(value) = get_string_property(env, vars, &name)? {
                numbered.push((n, value));
            }
        }
    }
    // read_utf8 transcodes from well-formed UTF-16, so these are UTF-8.
    fn utf8(bytes: &[u8]) -> Result<&str> {
        std::str::from_utf8(bytes).map_err(|_| to_js(AleError::Internal))
    }
    let numbered_text = numbered
        .iter()
        .map(|(n, value)| Ok((*n, utf8(value)?)))
        .collect::<Result<Vec<_>>>()?;
    let list_text = list.as_deref().map(|v| utf8(v)).transpose()?;
    let mut checked = secrets.len();
    for secret in previous::previous_secrets(list_text, numbered_text, naming.key_ids.is_some())
        .map_err(to_js)?
    {
        if !secret.as_written {
            checked += 1;
        }
        secrets.push((
            secret.label,
            Owned::Text(Zeroizing::new(secret.value.as_bytes().to_vec())),
        ));
    }
    let ring = build_ring(&secrets, options, naming)?;
    // SAFETY: forwarded; the list's value as written (last, when there) is no near miss of its own.
    unsafe { warn_near_misses(env, &secrets[..checked]) };
    Ok(ring)
}

/// The names of `object`'s own enumerable string-keyed properties, as
/// `Object.keys` gives them; none for a value that is not an object.
///
/// # Safety
/// `env` and `object` must be valid for the current call.
unsafe fn own_names(env: sys::napi_env, object: sys::napi_value) -> Result<Vec<String>> {
    let mut names = std::ptr::null_mut();
    // SAFETY: forwarded.
    let status = unsafe {
        sys::napi_get_all_property_names(
            env,
            object,
            sys::KeyCollectionMode::own_only,
            sys::KeyFilter::enumerable | sys::KeyFilter::skip_symbols,
            sys::KeyConversion::numbers_to_strings,
            &mut names,
        )
    };
    // A value that is not an object has no names; a Proxy's ownKeys trap that throws is the caller's error.
    if status == sys::Status::napi_object_expected {
        return Ok(Vec::new());
    }
    check(status)?;
    let mut len = 0u32;
    // SAFETY: `names` is an array.
    check(unsafe { sys::napi_get_array_length(env, names, &mut len) })?;
    let mut out = Vec::new();
    for i in 0..len {
        let mut name = std::ptr::null_mut();
        // SAFETY: `i` is below the array's length.
        check(unsafe { sys::napi_get_element(env, names, i, &mut name) })?;
        let (mut wide, mut text) = (Vec::new(), Vec::new());
        // SAFETY: `name` was just read.
        let read = unsafe { read_utf8(env, name, &mut wide, &mut text, "a variable's name") };
        // A name that is no string (none here, with numbers_to_strings) is passed over.
        if let Ok(range) = read {
            out.push(String::from_utf8_lossy(&text[range]).into_owned());
        }
    }
    Ok(out)
}

/// `vars[name]` as bytes, `None` when undefined; `ALE_INVALID_KEY` when not a string.
fn get_string_property(
    env: sys::napi_env,
    vars: sys::napi_value,
    name: &str,
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
