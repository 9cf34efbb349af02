//! The Node-API surface. It only converts arguments and results; the work is
//! done by [`crate::keys::KeyRing`]. Doc comments here become the JSDoc of the
//! generated `index.d.ts`.

use std::cell::RefCell;
use std::sync::{Arc, RwLock};

use napi::bindgen_prelude::{FromNapiValue, JsValue};
use napi::{sys, Env, JsString, Unknown};
use napi_derive::napi;
use zeroize::Zeroizing;

use crate::convert::{self, ascii_to_js, read_utf16, read_utf8, utf8_to_js};
use ale_core::context::Context;
use ale_core::error::AleError;
use ale_core::keys::{self, KeyRing as CoreRing, Secret};

/// Errors thrown to JS carry the `ALE_*` code as `error.code`.
type Result<T, E = napi::Error<&'static str>> = std::result::Result<T, E>;

/// The one place where a Rust error becomes a JS error.
fn to_js(err: AleError) -> napi::Error<&'static str> {
    napi::Error::new(err.code(), err.to_string())
}

fn napi_failure(err: napi::Error) -> napi::Error<&'static str> {
    napi::Error::new("ALE_INVALID_INPUT", err.reason)
}

/// Buffers one value's operation works in; reused across calls, per thread,
/// so the hot path does not allocate once they have grown to size.
#[derive(Default)]
struct Buffers {
    input: Vec<u8>,
    wide: Vec<u16>,
    aad: Vec<u8>,
    out: Vec<u8>,
}

impl Buffers {
    /// Encrypts the JS string `value`; returns the envelope as a JS string.
    ///
    /// # Safety
    /// `env` and `value` must be valid for the current call.
    unsafe fn encrypt(
        &mut self,
        env: sys::napi_env,
        ring: &CoreRing,
        value: sys::napi_value,
        ctx: &Context<'_>,
    ) -> Result<sys::napi_value> {
        self.input.clear();
        // SAFETY: forwarded from the caller.
        let range = unsafe { read_utf8(env, value, &mut self.wide, &mut self.input, "plaintext") }
            .map_err(to_js)?;
        ring.seal_into(&mut self.input[range], ctx, &mut self.aad, &mut self.out)
            .map_err(to_js)?;
        // SAFETY: the current env; an envelope is ASCII.
        unsafe { ascii_to_js(env, &self.out) }.map_err(napi_failure)
    }

    /// Decrypts the JS string `value`; returns the plaintext as a JS string.
    /// The envelope is parsed straight from its UTF-16 code units.
    ///
    /// # Safety
    /// `env` and `value` must be valid for the current call.
    unsafe fn decrypt(
        &mut self,
        env: sys::napi_env,
        ring: &CoreRing,
        value: sys::napi_value,
        ctx: &Context<'_>,
    ) -> Result<sys::napi_value> {
        // SAFETY: forwarded from the caller.
        unsafe { read_utf16(env, value, &mut self.wide, "envelope") }.map_err(to_js)?;
        ring.open_into(&self.wide[..], ctx, &mut self.aad, &mut self.out)
            .map_err(to_js)?;
        // SAFETY: the current env.
        match unsafe { utf8_to_js(env, &self.out, &mut self.wide) }.map_err(napi_failure)? {
            Some(text) => Ok(text),
            None => {
                zeroize::Zeroize::zeroize(&mut self.out);
                Err(to_js(keys::not_utf8()))
            }
        }
    }

    fn trim(&mut self) {
        convert::trim(&mut self.input);
        convert::trim(&mut self.out);
        convert::trim(&mut self.wide);
    }
}

#[derive(Default)]
struct Scratch {
    ctx_wide: Vec<u16>,
    ctx: Vec<u8>,
    work: Buffers,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Reads and validates the context arguments, then runs `op` with this
/// thread's buffers. Every operation goes through here, so argument handling
/// exists once.
fn with_context<T>(
    env: &Env,
    [tenant, collection, field]: [JsString; 3],
    op: impl FnOnce(&mut Buffers, &Context<'_>) -> Result<T>,
) -> Result<T> {
    SCRATCH.with(|cell| {
        let Scratch {
            ctx_wide,
            ctx,
            work,
        } = &mut *cell.borrow_mut();
        let raw = env.raw();
        ctx.clear();
        let mut read = |v: JsString, what| {
            // SAFETY: `v` is an argument of the current callback.
            unsafe { read_utf8(raw, v.raw(), ctx_wide, ctx, what) }.map_err(to_js)
        };
        let t = read(tenant, "tenantId")?;
        let c = read(collection, "collectionId")?;
        let f = read(field, "fieldName")?;
        let part = |r: std::ops::Range<usize>| {
            std::str::from_utf8(&ctx[r])
                .map_err(|_| to_js(AleError::InvalidInput("context is not text".into())))
        };
        let context = Context::new(part(t)?, part(c)?, part(f)?).map_err(to_js)?;
        let result = op(work, &context);
        work.trim();
        result
    })
}

/// Wraps a string value created in this env.
fn js_string(env: &Env, value: sys::napi_value) -> Result<JsString<'_>> {
    // SAFETY: `value` is a string created in `env` during this call.
    unsafe { JsString::from_napi_value(env.raw(), value) }.map_err(napi_failure)
}

fn encrypt_with<'env>(
    env: &'env Env,
    ring: &CoreRing,
    plaintext: JsString,
    ctx: [JsString; 3],
) -> Result<JsString<'env>> {
    // SAFETY: `plaintext` is an argument of the current callback.
    let value = with_context(env, ctx, |b, c| unsafe {
        b.encrypt(env.raw(), ring, plaintext.raw(), c)
    })?;
    js_string(env, value)
}

fn decrypt_with<'env>(
    env: &'env Env,
    ring: &CoreRing,
    envelope: JsString,
    ctx: [JsString; 3],
) -> Result<JsString<'env>> {
    // SAFETY: `envelope` is an argument of the current callback.
    let value = with_context(env, ctx, |b, c| unsafe {
        b.decrypt(env.raw(), ring, envelope.raw(), c)
    })?;
    js_string(env, value)
}

/// Reads `[primary, ...previous]` from a JS array of strings.
fn read_secrets(env: &Env, secrets: Unknown) -> Result<Arc<CoreRing>> {
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
fn ring_from_env(env: &Env, vars: Option<Unknown>) -> Result<Arc<CoreRing>> {
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

/// A set of AES-256-GCM keys: the primary encrypts, every key decrypts
/// (primary first). Keys are derived with HKDF-SHA-256 and never leave native
/// memory; they are wiped when the ring is garbage-collected.
#[napi]
pub struct KeyRing {
    inner: Arc<CoreRing>,
}

/// Encryption counts of one key of a ring, in this process.
#[napi(object)]
pub struct KeyStats {
    /// 0 is the primary.
    pub index: u32,
    /// Values encrypted under this key by this process.
    pub encryptions: f64,
}

#[napi]
impl KeyRing {
    /// `secrets` is `[primary, ...previous]`; each at least 32 bytes of UTF-8.
    /// Throws `ALE_INVALID_KEY` for an empty list, a short secret or a non-string.
    #[napi(constructor, ts_args_type = "secrets: string[]")]
    pub fn new(env: Env, secrets: Unknown) -> Result<Self> {
        Ok(Self {
            inner: read_secrets(&env, secrets)?,
        })
    }

    /// Builds a ring from `ENCRYPTION_KEY` (primary) and `ENCRYPTION_KEY_PREVIOUS`
    /// (comma-separated, newest first). Reads `process.env` by default.
    #[napi(factory, ts_args_type = "env?: Record<string, string | undefined>")]
    pub fn from_env(env: Env, vars: Option<Unknown>) -> Result<Self> {
        Ok(Self {
            inner: ring_from_env(&env, vars)?,
        })
    }

    /// Encrypts `plaintext` under the primary key, bound to
    /// `tenantId:collectionId:fieldName`. Returns `v1:<iv>:<tag>:<ciphertext>`.
    #[napi(
        ts_args_type = "plaintext: string, tenantId: string, collectionId: string, fieldName: string"
    )]
    pub fn encrypt<'env>(
        &self,
        env: &'env Env,
        plaintext: JsString,
        tenant_id: JsString,
        collection_id: JsString,
        field_name: JsString,
    ) -> Result<JsString<'env>> {
        encrypt_with(
            env,
            &self.inner,
            plaintext,
            [tenant_id, collection_id, field_name],
        )
    }

    /// Decrypts an envelope written for the same tenant, collection and field.
    /// Throws `ALE_MALFORMED_ENVELOPE`, `ALE_UNSUPPORTED_VERSION` or `ALE_AUTH_FAILED`.
    #[napi(
        ts_args_type = "envelope: string, tenantId: string, collectionId: string, fieldName: string"
    )]
    pub fn decrypt<'env>(
        &self,
        env: &'env Env,
        envelope: JsString,
        tenant_id: JsString,
        collection_id: JsString,
        field_name: JsString,
    ) -> Result<JsString<'env>> {
        decrypt_with(
            env,
            &self.inner,
            envelope,
            [tenant_id, collection_id, field_name],
        )
    }

    /// Number of keys in the ring, primary included.
    #[napi(getter)]
    pub fn size(&self) -> u32 {
        u32::try_from(self.inner.len()).unwrap_or(u32::MAX)
    }

    /// Per-key encryption counts in this process, primary first.
    #[napi]
    pub fn stats(&self) -> Vec<KeyStats> {
        self.inner
            .stats()
            .into_iter()
            .enumerate()
            .map(|(i, s)| KeyStats {
                index: u32::try_from(i).unwrap_or(u32::MAX),
                encryptions: s.encryptions as f64,
            })
            .collect()
    }
}

static GLOBAL_RING: RwLock<Option<Arc<CoreRing>>> = RwLock::new(None);

fn with_global<T>(f: impl FnOnce(&CoreRing) -> Result<T>) -> Result<T> {
    let guard = GLOBAL_RING
        .read()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    match guard.as_deref() {
        Some(ring) => f(ring),
        None => Err(to_js(AleError::NotInitialized)),
    }
}

/// Sets the process-wide ring used by `encrypt` and `decrypt`, shared by all
/// worker threads. Without an argument it reads `process.env` like
/// `KeyRing.fromEnv()`. Calling it again replaces the ring.
#[napi(ts_args_type = "secrets?: string[]")]
pub fn init_key_ring(env: Env, secrets: Option<Unknown>) -> Result<()> {
    let ring = match secrets {
        Some(s) if !matches!(s.get_type(), Ok(napi::ValueType::Undefined)) => {
            read_secrets(&env, s)?
        }
        _ => ring_from_env(&env, None)?,
    };
    *GLOBAL_RING
        .write()
        .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(ring);
    Ok(())
}

/// Encrypts with the process-wide ring. Throws `ALE_NOT_INITIALIZED` before `initKeyRing()`.
#[napi(
    ts_args_type = "plaintext: string, tenantId: string, collectionId: string, fieldName: string"
)]
pub fn encrypt<'env>(
    env: &'env Env,
    plaintext: JsString,
    tenant_id: JsString,
    collection_id: JsString,
    field_name: JsString,
) -> Result<JsString<'env>> {
    with_global(|ring| encrypt_with(env, ring, plaintext, [tenant_id, collection_id, field_name]))
}

/// Decrypts with the process-wide ring. Throws `ALE_NOT_INITIALIZED` before `initKeyRing()`.
#[napi(
    ts_args_type = "envelope: string, tenantId: string, collectionId: string, fieldName: string"
)]
pub fn decrypt<'env>(
    env: &'env Env,
    envelope: JsString,
    tenant_id: JsString,
    collection_id: JsString,
    field_name: JsString,
) -> Result<JsString<'env>> {
    with_global(|ring| decrypt_with(env, ring, envelope, [tenant_id, collection_id, field_name]))
}
