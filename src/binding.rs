//! The Node-API surface. It only converts arguments and results; the work is
//! done by [`ale_core::KeyRing`]. Doc comments here become the JSDoc of the
//! generated `index.d.ts`.
//!
//! Every operation (sync, batch, async; class or process-wide ring) goes
//! through [`with_context`] (or its raw form, for `fast.rs`) and one
//! [`Buffers`] method, so argument handling and each conversion exist once.

use std::cell::RefCell;
use std::sync::{Arc, RwLock};

use ale_core::binary;
use ale_core::context::Context;
use ale_core::envelope;
use ale_core::error::AleError;
use ale_core::keys::{self, KeyRing as CoreRing};
use napi::bindgen_prelude::{AsyncTask, JsValue, ToNapiValue, TypeName};
use napi::{sys, Env, JsString, Task, Unknown, ValueType};
use napi_derive::napi;
use zeroize::Zeroizing;

use crate::convert::{
    self, ascii_to_js, read_envelope_bytes, read_envelope_utf16, read_short_utf8, read_utf16,
    read_utf8, utf8_to_js,
};
use crate::fast;
use crate::secrets::{read_secrets, ring_from_env};

/// Errors thrown to JS carry the `ALE_*` code as `error.code`.
pub type Result<T, E = napi::Error<&'static str>> = std::result::Result<T, E>;

/// The one place where a Rust error becomes a JS error.
pub fn to_js(err: AleError) -> napi::Error<&'static str> {
    napi::Error::new(err.code(), err.to_string())
}

/// A Node-API call failed: the engine is out of memory, refused a string
/// longer than it allows, or is shutting down.
pub fn napi_failure(err: napi::Error) -> napi::Error<&'static str> {
    to_js(AleError::Engine(err.reason))
}

/// With the `test-panic` feature (test builds only), a call after
/// `forcePanicOnNextCall()` panics here, to show that every path turns a
/// panic into `ALE_INTERNAL` instead of aborting. A no-op otherwise.
pub(crate) fn forced_panic_point() {
    #[cfg(feature = "test-panic")]
    if FORCE_PANIC.swap(false, std::sync::atomic::Ordering::SeqCst) {
        panic!("forced panic (test-panic feature)");
    }
}

#[cfg(feature = "test-panic")]
static FORCE_PANIC: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
#[cfg(feature = "test-panic")]
static FORCE_COMPUTE_PANIC: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// The same for the thread-pool half of an async call.
fn forced_compute_panic_point() {
    #[cfg(feature = "test-panic")]
    if FORCE_COMPUTE_PANIC.swap(false, std::sync::atomic::Ordering::SeqCst) {
        panic!("forced panic on the thread pool (test-panic feature)");
    }
}

/// Test builds only (`--features test-panic`): the next call into the addon
/// panics, or, with `inAsyncWork`, the next async job on the thread pool.
#[cfg(feature = "test-panic")]
#[napi(js_name = "forcePanicOnNextCall")]
pub fn force_panic_on_next_call(in_async_work: Option<bool>) {
    let flag = if in_async_work == Some(true) {
        &FORCE_COMPUTE_PANIC
    } else {
        &FORCE_PANIC
    };
    flag.store(true, std::sync::atomic::Ordering::SeqCst);
}

/// Runs `f`, turning a panic into `ALE_INTERNAL`: the guard of every call.
pub(crate) fn guard<T>(f: impl FnOnce() -> Result<T>) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        forced_panic_point();
        f()
    }))
    .unwrap_or_else(|_| Err(to_js(AleError::Internal)))
}

/// Emits the IV-budget warning when `count` is the first to reach the threshold.
///
/// # Safety
/// `env` must be valid for the current call.
unsafe fn after_seal(env: sys::napi_env, ring: &CoreRing, count: u64) {
    if ring.should_warn(count) {
        // SAFETY: forwarded from the caller.
        unsafe { warn_iv_budget(env, count) };
    }
}

/// A JS string created by this module, returned as-is.
pub struct JsText(sys::napi_value);

impl TypeName for JsText {
    fn type_name() -> &'static str {
        "string"
    }
    fn value_type() -> ValueType {
        ValueType::String
    }
}

impl ToNapiValue for JsText {
    unsafe fn to_napi_value(_: sys::napi_env, val: Self) -> napi::Result<sys::napi_value> {
        Ok(val.0)
    }
}

/// Buffers one value's operation works in; reused across calls, per thread,
/// so the hot path does not allocate once they have grown to size.
#[derive(Default)]
pub(crate) struct Buffers {
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
    pub(crate) unsafe fn encrypt(
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
        let count = ring
            .seal_into(&mut self.input[range], ctx, &mut self.aad, &mut self.out)
            .map_err(to_js)?;
        // SAFETY: the current env.
        unsafe { after_seal(env, ring, count) };
        // SAFETY: the current env; an envelope is ASCII.
        unsafe { ascii_to_js(env, &self.out) }.map_err(napi_failure)
    }

    /// Decrypts the JS string `value`; returns the plaintext as a JS string.
    /// The envelope is parsed straight from its UTF-16 code units.
    ///
    /// # Safety
    /// `env` and `value` must be valid for the current call.
    pub(crate) unsafe fn decrypt(
        &mut self,
        env: sys::napi_env,
        ring: &CoreRing,
        value: sys::napi_value,
        ctx: &Context<'_>,
    ) -> Result<sys::napi_value> {
        // SAFETY: forwarded from the caller.
        unsafe { self.open(env, ring, value, ctx) }?;
        // SAFETY: the current env.
        unsafe { self.out_to_js(env) }
    }

    /// Opens the envelope `value` into `self.out`; returns the key index.
    ///
    /// # Safety
    /// `env` and `value` must be valid for the current call.
    unsafe fn open(
        &mut self,
        env: sys::napi_env,
        ring: &CoreRing,
        value: sys::napi_value,
        ctx: &Context<'_>,
    ) -> Result<usize> {
        // SAFETY: forwarded from the caller.
        let bytes =
            unsafe { read_envelope_bytes(env, value, &mut self.wide, &mut self.input, ring) }
                .map_err(to_js)?;
        if let Some(range) = bytes {
            return ring
                .open_into(&self.input[range], ctx, &mut self.aad, &mut self.out)
                .map_err(to_js);
        }
        // SAFETY: forwarded from the caller.
        unsafe { read_envelope_utf16(env, value, &mut self.wide, ring) }.map_err(to_js)?;
        ring.open_into(&self.wide[..], ctx, &mut self.aad, &mut self.out)
            .map_err(to_js)
    }

    /// The blind index of the JS string `value` under key `key`, as base64url.
    ///
    /// # Safety
    /// `env` and `value` must be valid for the current call.
    unsafe fn blind_index(
        &mut self,
        env: sys::napi_env,
        ring: &CoreRing,
        value: sys::napi_value,
        ctx: &Context<'_>,
        key: usize,
    ) -> Result<sys::napi_value> {
        self.input.clear();
        // SAFETY: forwarded from the caller.
        let range = unsafe { read_utf8(env, value, &mut self.wide, &mut self.input, "value") }
            .map_err(to_js)?;
        let mac = ring
            .blind_index(key, &self.input[range], ctx, &mut self.aad)
            .ok_or_else(|| to_js(AleError::InvalidInput("no key at that index".into())))?;
        envelope::base64url_into(&mac, &mut self.out);
        // SAFETY: the current env; base64url is ASCII.
        unsafe { ascii_to_js(env, &self.out) }.map_err(napi_failure)
    }

    /// Encrypts the JS string `value` into a new `Buffer` holding the binary
    /// envelope: the plaintext is copied once into the Buffer and sealed there.
    ///
    /// # Safety
    /// `env` and `value` must be valid for the current call.
    pub(crate) unsafe fn encrypt_binary(
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
        let header = binary::header_len(ring.options().iv_length);
        let plaintext = &mut self.input[range];
        // SAFETY: the current env.
        let created = unsafe { convert::new_buffer(env, header + plaintext.len()) };
        let (buffer, data) = match created {
            Ok(made) => made,
            Err(e) => {
                zeroize::Zeroize::zeroize(plaintext);
                return Err(napi_failure(e));
            }
        };
        // SAFETY: `data` is the Buffer's own memory, `header + len` bytes,
        // alive while `buffer` is on this call's stack; nothing else aliases it.
        let bytes =
            unsafe { std::slice::from_raw_parts_mut(data.cast::<u8>(), header + plaintext.len()) };
        bytes[header..].copy_from_slice(plaintext);
        zeroize::Zeroize::zeroize(plaintext);
        let count = ring.seal_binary(bytes, ctx, &mut self.aad).map_err(|e| {
            zeroize::Zeroize::zeroize(&mut *bytes);
            to_js(e)
        })?;
        // SAFETY: the current env.
        unsafe { after_seal(env, ring, count) };
        Ok(buffer)
    }

    /// Decrypts the binary envelope in the `Uint8Array` (or `Buffer`) `value`.
    ///
    /// # Safety
    /// `env` and `value` must be valid for the current call.
    pub(crate) unsafe fn decrypt_binary(
        &mut self,
        env: sys::napi_env,
        ring: &CoreRing,
        value: sys::napi_value,
        ctx: &Context<'_>,
    ) -> Result<sys::napi_value> {
        // SAFETY: forwarded from the caller.
        unsafe { convert::read_bytes_into(env, value, "envelope", &mut self.input) }
            .map_err(to_js)?;
        ring.open_binary_into(&self.input, ctx, &mut self.aad, &mut self.out)
            .map_err(to_js)?;
        // SAFETY: the current env.
        unsafe { self.out_to_js(env) }
    }

    /// The plaintext in `self.out` as a JS string; wiped and refused when
    /// it is not UTF-8.
    ///
    /// # Safety
    /// `env` must be valid for the current call.
    unsafe fn out_to_js(&mut self, env: sys::napi_env) -> Result<sys::napi_value> {
        // SAFETY: forwarded from the caller.
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

impl Drop for Buffers {
    /// Plaintext passes through these buffers; wipe them when the thread ends.
    fn drop(&mut self) {
        zeroize::Zeroize::zeroize(&mut self.input);
        zeroize::Zeroize::zeroize(&mut self.out);
        zeroize::Zeroize::zeroize(&mut self.wide);
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
/// thread's buffers.
fn with_context<T>(
    env: &Env,
    ctx: [JsString; 3],
    op: impl FnOnce(&mut Buffers, &Context<'_>) -> Result<T>,
) -> Result<T> {
    // SAFETY: the values are arguments of the current callback.
    unsafe { with_raw_context(env.raw(), ctx.map(|s| s.raw()), op) }
}

/// [`with_context`] on raw values, for the direct callbacks in `fast.rs`.
///
/// # Safety
/// `env` and the values must be valid for the current callback.
pub(crate) unsafe fn with_raw_context<T>(
    env: sys::napi_env,
    [tenant, collection, field]: [sys::napi_value; 3],
    op: impl FnOnce(&mut Buffers, &Context<'_>) -> Result<T>,
) -> Result<T> {
    guard(|| {
        SCRATCH.with(|cell| {
            let Scratch {
                ctx_wide,
                ctx,
                work,
            } = &mut *cell.borrow_mut();
            ctx.clear();
            let mut read = |v: sys::napi_value, what| {
                // SAFETY: `v` is an argument of the current callback.
                unsafe { read_short_utf8(env, v, ctx_wide, ctx, what) }.map_err(to_js)
            };
            let t = read(tenant, "tenantId")?;
            let c = read(collection, "collectionId")?;
            let f = read(field, "fieldName")?;
            // SAFETY: `read_utf8` appends only what simdutf produced from valid
            // UTF-16, which is valid UTF-8, and the ranges are its return values.
            let part =
                |r: std::ops::Range<usize>| unsafe { std::str::from_utf8_unchecked(&ctx[r]) };
            let context = Context::new(part(t), part(c), part(f)).map_err(to_js)?;
            let result = op(work, &context);
            work.trim();
            result
        })
    })
}

/// A validated context that owns its parts: what a context handle holds
/// (`fast.rs`), so that a call through it reads no context strings.
pub(crate) struct OwnedContext {
    tenant: String,
    collection: String,
    field: String,
}

impl OwnedContext {
    /// Reads and validates three context arguments, as every call does.
    ///
    /// # Safety
    /// `env` and the values must be valid for the current callback.
    pub(crate) unsafe fn read(env: sys::napi_env, parts: [sys::napi_value; 3]) -> Result<Self> {
        // SAFETY: forwarded.
        unsafe {
            with_raw_context(env, parts, |_, ctx| {
                let [tenant, collection, field] = ctx.parts().map(str::to_owned);
                Ok(Self {
                    tenant,
                    collection,
                    field,
                })
            })
        }
    }

    /// Runs `op` with this context and this thread's buffers.
    pub(crate) fn with<T>(
        &self,
        op: impl FnOnce(&mut Buffers, &Context<'_>) -> Result<T>,
    ) -> Result<T> {
        guard(|| {
            let context =
                Context::new(&self.tenant, &self.collection, &self.field).map_err(to_js)?;
            SCRATCH.with(|cell| {
                let work = &mut cell.borrow_mut().work;
                let result = op(work, &context);
                work.trim();
                result
            })
        })
    }
}

/// Applies `op` to every element of the JS array `values` and returns a new
/// array of the results. A failure names the element's index and keeps its code.
fn map_array(
    env: &Env,
    values: Unknown,
    ctx: [JsString; 3],
    mut op: impl FnMut(&mut Buffers, &Context<'_>, sys::napi_value) -> Result<sys::napi_value>,
) -> Result<Unknown<'static>> {
    let raw = env.raw();
    let (mut is_array, mut len) = (false, 0u32);
    // SAFETY: `values` is an argument of the current callback.
    let status = unsafe { sys::napi_is_array(raw, values.raw(), &mut is_array) };
    if status != sys::Status::napi_ok || !is_array {
        return Err(to_js(AleError::InvalidInput(
            "values must be an array of strings".into(),
        )));
    }
    // SAFETY: `values` is an array.
    napi::check_status!(unsafe { sys::napi_get_array_length(raw, values.raw(), &mut len) })
        .map_err(napi_failure)?;
    with_context(env, ctx, |buffers, context| {
        let mut result = std::ptr::null_mut();
        // SAFETY: creating an array in the current env.
        napi::check_status!(unsafe {
            sys::napi_create_array_with_length(raw, len as usize, &mut result)
        })
        .map_err(napi_failure)?;
        for i in 0..len {
            let mut element = std::ptr::null_mut();
            // SAFETY: `i` is below the array's length.
            napi::check_status!(unsafe {
                sys::napi_get_element(raw, values.raw(), i, &mut element)
            })
            .map_err(napi_failure)?;
            let value = op(buffers, context, element).map_err(|mut e| {
                e.reason = format!("values[{i}]: {}", e.reason);
                e
            })?;
            // SAFETY: `result` is an array of length `len`.
            napi::check_status!(unsafe { sys::napi_set_element(raw, result, i, value) })
                .map_err(napi_failure)?;
        }
        // SAFETY: `result` was created in this env.
        Ok(unsafe { Unknown::from_raw_unchecked(raw, result) })
    })
}

/// Tells the process, through Node's standard warning channel, that the
/// primary key has done `count` encryptions in this process.
///
/// # Safety
/// `env` must be valid for the current call.
unsafe fn warn_iv_budget(env: sys::napi_env, count: u64) {
    let message = format!(
        "@sveltycms/ale: the primary key has encrypted {count} values in this process; AES-GCM \
         with random IVs allows 2^32 per key across all processes. Rotate ENCRYPTION_KEY soon."
    );
    let mut global = std::ptr::null_mut();
    let (mut process, mut emit) = (std::ptr::null_mut(), std::ptr::null_mut());
    let mut args = [std::ptr::null_mut(); 3];
    // SAFETY: plain property reads and a call in the current env; a failure
    // only means no warning is shown, never a failed encryption.
    unsafe {
        sys::napi_get_global(env, &mut global);
        sys::napi_get_named_property(env, global, c"process".as_ptr(), &mut process);
        sys::napi_get_named_property(env, process, c"emitWarning".as_ptr(), &mut emit);
        for (slot, text) in args
            .iter_mut()
            .zip([message.as_str(), "AleWarning", "ALE_IV_BUDGET"])
        {
            sys::napi_create_string_utf8(env, text.as_ptr().cast(), text.len() as isize, slot);
        }
        let mut ignored = std::ptr::null_mut();
        sys::napi_call_function(env, process, emit, 3, args.as_ptr(), &mut ignored);
    }
}

/// A set of AES-256-GCM keys: the primary encrypts, every key decrypts
/// (primary first, then previous keys, then passphrases' legacy keys). Each
/// secret resolves as SveltyCMS resolves `ENCRYPTION_KEY` (hex, base64 or
/// base64url is the key itself; anything else is a passphrase for
/// HKDF-SHA-256). Keys never leave native memory and are wiped when the ring
/// is garbage-collected.
#[napi]
pub struct KeyRing {
    pub(crate) inner: Arc<CoreRing>,
}

/// One key of a ring, in decryption order, and what it did in this process.
#[napi(object)]
pub struct KeyStats {
    /// Position in decryption order: what `keyIndex` returns (0 is the primary).
    pub index: u32,
    /// The secret it comes from: 0 = primary, 1.. = previous keys.
    pub secret: u32,
    /// How the secret became this key.
    #[napi(
        ts_type = "'hex' | 'base64' | 'base64url' | 'bytes' | 'passphrase' | 'legacy-sha256' | 'legacy-base64'"
    )]
    pub kind: String,
    /// Whether this is a decrypt-only legacy key of a passphrase.
    pub legacy: bool,
    /// Values encrypted under this key by this process.
    pub encryptions: f64,
    /// Values this key opened in this process.
    pub decryptions: f64,
}

/// How a ring writes and what it reads.
// Declared for the generated `index.d.ts`; `secrets::read_options` reads the
// JS object itself, so a bad option gets an `ALE_*` code.
#[allow(dead_code)]
#[napi(object)]
pub struct RingOptions {
    /// IV length of new envelopes: 16 (default; every SveltyCMS release reads
    /// it, so rolling back stays safe) or 12 (only this package reads it).
    /// Both are always read.
    #[napi(ts_type = "12 | 16")]
    pub iv_length: Option<u32>,
    /// Try passphrases' legacy keys (SHA-256, lenient base64) when decrypting.
    /// Default true; turn off once `stats()` shows they open nothing.
    pub legacy_fallbacks: Option<bool>,
    /// The longest stored value, in characters, that decryption reads; a
    /// longer one is refused with `ALE_ENVELOPE_TOO_LARGE` before it is
    /// copied. Default 2^27 (134,217,728), the envelope of about 96 MiB.
    pub max_envelope_length: Option<f64>,
}

#[napi]
impl KeyRing {
    /// `secrets` is `[primary, ...previous]`: strings of at least 32
    /// characters, or 32-byte `Uint8Array`s. Throws `ALE_INVALID_KEY` for an
    /// empty list, a short string, a byte key that is not 32 bytes or another
    /// type, and `ALE_INVALID_INPUT` for bad options.
    #[napi(
        catch_unwind,
        constructor,
        ts_args_type = "secrets: Array<string | Uint8Array>, options?: RingOptions"
    )]
    pub fn new(env: Env, secrets: Unknown, options: Option<Unknown>) -> Result<Self> {
        guard(|| {
            Ok(Self {
                inner: read_secrets(&env, secrets, options)?,
            })
        })
    }

    /// Builds a ring from `ENCRYPTION_KEY` (or `SECRET_ENCRYPTION_KEY` when it
    /// is empty) as the primary and `ENCRYPTION_KEY_PREVIOUS` (comma-separated,
    /// newest first, white space around entries ignored). Reads `process.env`
    /// by default.
    #[napi(
        catch_unwind,
        factory,
        ts_args_type = "env?: Record<string, string | undefined>, options?: RingOptions"
    )]
    pub fn from_env(env: Env, vars: Option<Unknown>, options: Option<Unknown>) -> Result<Self> {
        guard(|| {
            Ok(Self {
                inner: ring_from_env(&env, vars, options)?,
            })
        })
    }

    /// Encrypts `plaintext` under the primary key, bound to
    /// `tenantId:collectionId:fieldName`. Returns `v1:<iv>:<tag>:<ciphertext>`.
    #[napi(
        catch_unwind,
        ts_return_type = "string",
        ts_args_type = "plaintext: string, tenantId: string, collectionId: string, fieldName: string"
    )]
    pub fn encrypt(
        &self,
        env: &Env,
        plaintext: JsString,
        tenant_id: JsString,
        collection_id: JsString,
        field_name: JsString,
    ) -> Result<JsText> {
        let ctx = [tenant_id, collection_id, field_name];
        run_with(env, &self.inner, fast::Op::Encrypt, plaintext.raw(), ctx)
    }

    /// Decrypts an envelope written for the same tenant, collection and field.
    /// Throws `ALE_MALFORMED_ENVELOPE`, `ALE_UNSUPPORTED_VERSION` or `ALE_AUTH_FAILED`.
    #[napi(
        catch_unwind,
        ts_return_type = "string",
        ts_args_type = "envelope: string, tenantId: string, collectionId: string, fieldName: string"
    )]
    pub fn decrypt(
        &self,
        env: &Env,
        envelope: JsString,
        tenant_id: JsString,
        collection_id: JsString,
        field_name: JsString,
    ) -> Result<JsText> {
        let ctx = [tenant_id, collection_id, field_name];
        run_with(env, &self.inner, fast::Op::Decrypt, envelope.raw(), ctx)
    }

    /// Encrypts every string of `plaintexts` with one context, in one call.
    #[napi(
        catch_unwind,
        ts_args_type = "plaintexts: string[], tenantId: string, collectionId: string, fieldName: string",
        ts_return_type = "string[]"
    )]
    pub fn encrypt_many(
        &self,
        env: &Env,
        plaintexts: Unknown,
        tenant_id: JsString,
        collection_id: JsString,
        field_name: JsString,
    ) -> Result<Unknown<'static>> {
        let raw = env.raw();
        map_array(
            env,
            plaintexts,
            [tenant_id, collection_id, field_name],
            |b, ctx, v| {
                // SAFETY: `v` is an element of an argument array.
                unsafe { b.encrypt(raw, &self.inner, v, ctx) }
            },
        )
    }

    /// Decrypts every envelope of `envelopes` with one context, in one call.
    /// Throws on the first failure, naming its index (`values[3]: …`).
    #[napi(
        catch_unwind,
        ts_args_type = "envelopes: string[], tenantId: string, collectionId: string, fieldName: string",
        ts_return_type = "string[]"
    )]
    pub fn decrypt_many(
        &self,
        env: &Env,
        envelopes: Unknown,
        tenant_id: JsString,
        collection_id: JsString,
        field_name: JsString,
    ) -> Result<Unknown<'static>> {
        let raw = env.raw();
        map_array(
            env,
            envelopes,
            [tenant_id, collection_id, field_name],
            |b, ctx, v| {
                // SAFETY: `v` is an element of an argument array.
                unsafe { b.decrypt(raw, &self.inner, v, ctx) }
            },
        )
    }

    /// `encrypt` on the libuv thread pool, for large values that should not
    /// block the event loop. The value is copied before the promise is returned.
    #[napi(
        catch_unwind,
        ts_args_type = "plaintext: string, tenantId: string, collectionId: string, fieldName: string",
        ts_return_type = "Promise<string>"
    )]
    pub fn encrypt_async(
        &self,
        env: &Env,
        plaintext: JsString,
        tenant_id: JsString,
        collection_id: JsString,
        field_name: JsString,
    ) -> Result<AsyncTask<Job>> {
        Job::prepare(
            env,
            &self.inner,
            plaintext,
            [tenant_id, collection_id, field_name],
            Op::Seal,
        )
    }

    /// `decrypt` on the libuv thread pool, for large values.
    #[napi(
        catch_unwind,
        ts_args_type = "envelope: string, tenantId: string, collectionId: string, fieldName: string",
        ts_return_type = "Promise<string>"
    )]
    pub fn decrypt_async(
        &self,
        env: &Env,
        envelope: JsString,
        tenant_id: JsString,
        collection_id: JsString,
        field_name: JsString,
    ) -> Result<AsyncTask<Job>> {
        Job::prepare(
            env,
            &self.inner,
            envelope,
            [tenant_id, collection_id, field_name],
            Op::Open,
        )
    }

    /// The keyed blind index of `value` in this context under the primary key:
    /// 43 base64url characters. Equal values give equal indexes, so a column
    /// of them supports exact-match lookups without decrypting anything.
    #[napi(
        catch_unwind,
        ts_return_type = "string",
        ts_args_type = "value: string, tenantId: string, collectionId: string, fieldName: string"
    )]
    pub fn blind_index(
        &self,
        env: &Env,
        value: JsString,
        tenant_id: JsString,
        collection_id: JsString,
        field_name: JsString,
    ) -> Result<JsText> {
        let ctx = [tenant_id, collection_id, field_name];
        // SAFETY: `value` is an argument of the current callback.
        with_context(env, ctx, |b, c| unsafe {
            b.blind_index(env.raw(), &self.inner, value.raw(), c, 0)
        })
        .map(JsText)
    }

    /// The blind index of `value` under every secret, primary first, for
    /// lookups while a rotation is rebuilding indexes (in Drizzle, use
    /// `matchBlindIndex`).
    #[napi(
        catch_unwind,
        ts_args_type = "value: string, tenantId: string, collectionId: string, fieldName: string",
        ts_return_type = "string[]"
    )]
    pub fn blind_indexes(
        &self,
        env: &Env,
        value: JsString,
        tenant_id: JsString,
        collection_id: JsString,
        field_name: JsString,
    ) -> Result<Vec<JsText>> {
        let ctx = [tenant_id, collection_id, field_name];
        with_context(env, ctx, |b, c| {
            (0..self.inner.secrets())
                .map(|k| {
                    // SAFETY: `value` is an argument of the current callback.
                    unsafe { b.blind_index(env.raw(), &self.inner, value.raw(), c, k) }.map(JsText)
                })
                .collect()
        })
    }

    /// Encrypts `plaintext` into a binary envelope, for columns that hold
    /// bytes: version, IV length, IV, tag, ciphertext, with no base64 (see
    /// the README's format section). Returns a new `Buffer`.
    #[napi(
        catch_unwind,
        ts_return_type = "Buffer",
        ts_args_type = "plaintext: string, tenantId: string, collectionId: string, fieldName: string"
    )]
    pub fn encrypt_binary(
        &self,
        env: &Env,
        plaintext: JsString,
        tenant_id: JsString,
        collection_id: JsString,
        field_name: JsString,
    ) -> Result<JsText> {
        let ctx = [tenant_id, collection_id, field_name];
        run_with(
            env,
            &self.inner,
            fast::Op::EncryptBinary,
            plaintext.raw(),
            ctx,
        )
    }

    /// Decrypts a binary envelope (a `Buffer` or `Uint8Array`; not changed)
    /// written for the same tenant, collection and field.
    #[napi(
        catch_unwind,
        ts_return_type = "string",
        ts_args_type = "envelope: Uint8Array, tenantId: string, collectionId: string, fieldName: string"
    )]
    pub fn decrypt_binary(
        &self,
        env: &Env,
        envelope: Unknown,
        tenant_id: JsString,
        collection_id: JsString,
        field_name: JsString,
    ) -> Result<JsText> {
        let ctx = [tenant_id, collection_id, field_name];
        run_with(
            env,
            &self.inner,
            fast::Op::DecryptBinary,
            envelope.raw(),
            ctx,
        )
    }

    /// Which key of the ring opens `envelope`, in decryption order (0 =
    /// primary; `stats()[i]` describes key `i`). Anything but 0, a legacy
    /// fallback of the primary included, needs re-encryption under the
    /// primary. Throws like `decrypt`.
    #[napi(
        catch_unwind,
        ts_args_type = "envelope: string, tenantId: string, collectionId: string, fieldName: string"
    )]
    pub fn key_index(
        &self,
        env: &Env,
        envelope: JsString,
        tenant_id: JsString,
        collection_id: JsString,
        field_name: JsString,
    ) -> Result<u32> {
        let ctx = [tenant_id, collection_id, field_name];
        let index = with_context(env, ctx, |b, c| {
            // SAFETY: `envelope` is an argument of the current callback.
            let index = unsafe { b.open(env.raw(), &self.inner, envelope.raw(), c) };
            zeroize::Zeroize::zeroize(&mut b.out);
            index
        })?;
        Ok(u32::try_from(index).unwrap_or(u32::MAX))
    }

    /// Number of secrets in the ring, primary included (legacy keys not counted).
    #[napi(getter, catch_unwind)]
    pub fn size(&self) -> u32 {
        u32::try_from(self.inner.secrets()).unwrap_or(u32::MAX)
    }

    /// The IV length, in bytes, of the envelopes this ring writes: 16 or 12.
    #[napi(getter, catch_unwind, ts_return_type = "12 | 16")]
    pub fn iv_length(&self) -> u32 {
        u32::try_from(self.inner.options().iv_length.bytes()).unwrap_or(u32::MAX)
    }

    /// Every key in decryption order (secrets first, then legacy keys) with
    /// its counters in this process.
    #[napi(catch_unwind)]
    pub fn stats(&self) -> Result<Vec<KeyStats>> {
        guard(|| {
            Ok(self
                .inner
                .stats()
                .into_iter()
                .enumerate()
                .map(|(i, s)| KeyStats {
                    index: u32::try_from(i).unwrap_or(u32::MAX),
                    secret: u32::try_from(s.secret).unwrap_or(u32::MAX),
                    kind: s.kind.as_str().to_owned(),
                    legacy: s.kind.is_legacy(),
                    encryptions: s.encryptions as f64,
                    decryptions: s.decryptions as f64,
                })
                .collect())
        })
    }

    /// Sets after how many encryptions under the primary key (in this
    /// process) the ring emits a process warning with code `ALE_IV_BUDGET`:
    /// once, when a count first reaches or passes it, from any path.
    /// Default: 2^30, a quarter of the 2^32 limit for random IVs.
    #[napi(catch_unwind, ts_args_type = "encryptions: number")]
    pub fn set_iv_budget_warning(&self, env: &Env, encryptions: Unknown) -> Result<()> {
        guard(|| self.set_warn_at(env, encryptions))
    }
}

impl KeyRing {
    fn set_warn_at(&self, env: &Env, encryptions: Unknown) -> Result<()> {
        let mut n = f64::NAN;
        // SAFETY: `encryptions` is an argument of the current call.
        let status = unsafe { sys::napi_get_value_double(env.raw(), encryptions.raw(), &mut n) };
        // Not a number: refused below like NaN.
        let encryptions = if status == sys::Status::napi_ok {
            n
        } else {
            f64::NAN
        };
        if !(encryptions.is_finite() && encryptions >= 1.0 && encryptions.fract() == 0.0) {
            return Err(to_js(AleError::InvalidInput(
                "encryptions must be a positive integer".into(),
            )));
        }
        // Saturating float-to-int conversion; counts beyond 2^53 are moot.
        #[allow(clippy::cast_possible_truncation)]
        self.inner.set_warn_at(encryptions as u64);
        Ok(())
    }
}

/// The body of the eight hot functions as napi-rs registers them (ring
/// methods and process-wide functions). `fast.rs` replaces all eight at load
/// with direct callbacks running the same [`fast::run`]; these bodies give
/// napi-rs their types and documentation.
fn run_with(
    env: &Env,
    ring: &CoreRing,
    op: fast::Op,
    value: sys::napi_value,
    ctx: [JsString; 3],
) -> Result<JsText> {
    // SAFETY: `value` is an argument of the current callback.
    with_context(env, ctx, |b, c| unsafe {
        fast::run(env.raw(), op, ring, value, b, c)
    })
    .map(JsText)
}

/// What an async job does.
#[derive(Clone, Copy)]
pub enum Op {
    Seal,
    Open,
}

/// An encryption or decryption on the thread pool. Its input is copied out
/// of the JS heap on the main thread; `compute` calls the same core functions
/// as the sync path.
pub struct Job {
    ring: Arc<CoreRing>,
    op: Op,
    context: [String; 3],
    bytes: Zeroizing<Vec<u8>>,
    units: Zeroizing<Vec<u16>>,
    /// The primary key's encryption count after a seal.
    count: u64,
    /// An envelope refused while it was read: the promise rejects with it.
    refused: Option<AleError>,
}

impl Job {
    fn prepare(
        env: &Env,
        ring: &Arc<CoreRing>,
        value: JsString,
        ctx: [JsString; 3],
        op: Op,
    ) -> Result<AsyncTask<Job>> {
        let raw = env.raw();
        let mut job = Job {
            ring: ring.clone(),
            op,
            context: Default::default(),
            bytes: Zeroizing::new(Vec::new()),
            units: Zeroizing::new(Vec::new()),
            count: 0,
            refused: None,
        };
        with_context(env, ctx, |_, c| {
            job.context = c.parts().map(str::to_owned);
            Ok(())
        })?;
        match op {
            // SAFETY: `value` is an argument of the current callback.
            Op::Seal => unsafe {
                read_utf8(
                    raw,
                    value.raw(),
                    &mut job.units,
                    &mut job.bytes,
                    "plaintext",
                )
            }
            .map(drop),
            Op::Open => {
                // SAFETY: as above.
                match unsafe { read_envelope_utf16(raw, value.raw(), &mut job.units, ring) } {
                    // Whatever its length, a value refused by its first
                    // characters rejects the promise (as any value that
                    // fails to parse does), and one over the maximum length
                    // throws before a promise exists: the fallback's split.
                    Err(e @ (AleError::MalformedEnvelope(_) | AleError::UnsupportedVersion(_))) => {
                        job.refused = Some(e);
                        Ok(())
                    }
                    Ok(units) => match envelope::check_version(&job.units[..]) {
                        Err(e) => {
                            job.refused = Some(e);
                            Ok(())
                        }
                        Ok(()) => ring.check_envelope_len(units),
                    },
                    Err(e) => Err(e),
                }
            }
        }
        .map_err(to_js)?;
        if matches!(op, Op::Seal) {
            zeroize::Zeroize::zeroize(&mut *job.units);
        }
        Ok(AsyncTask::new(job))
    }
}

impl Task for Job {
    type Output = std::result::Result<Zeroizing<Vec<u8>>, AleError>;
    type JsValue = JsText;

    /// Runs on the thread pool, where no `catch_unwind` of napi-rs reaches:
    /// a panic becomes `ALE_INTERNAL` here instead of aborting the process.
    fn compute(&mut self) -> napi::Result<Self::Output> {
        if let Some(refused) = self.refused.take() {
            return Ok(Err(refused));
        }
        let run = || -> std::result::Result<Zeroizing<Vec<u8>>, AleError> {
            forced_compute_panic_point();
            let [t, c, f] = &self.context;
            let ctx = Context::new(t, c, f)?;
            let (mut aad, mut out) = (Vec::new(), Zeroizing::new(Vec::new()));
            match self.op {
                Op::Seal => {
                    self.count = self
                        .ring
                        .seal_into(&mut self.bytes, &ctx, &mut aad, &mut out)?;
                }
                Op::Open => self
                    .ring
                    .open_into(&self.units[..], &ctx, &mut aad, &mut out)
                    .map(drop)?,
            }
            Ok(out)
        };
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(run));
        // The UTF-16 copy of an envelope is not secret, but a plaintext's is
        // wiped on the main thread already; nothing else to clean here.
        Ok(outcome.unwrap_or(Err(AleError::Internal)))
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> napi::Result<JsText> {
        let raw = env.raw();
        if matches!(self.op, Op::Seal) && output.is_ok() {
            // SAFETY: the current env (the task's completion callback).
            unsafe { after_seal(raw, &self.ring, self.count) };
        }
        let created = match output {
            // SAFETY: the current env; an envelope is ASCII.
            Ok(out) if matches!(self.op, Op::Seal) => unsafe { ascii_to_js(raw, &out) }.map(Some),
            // SAFETY: the current env.
            Ok(out) => unsafe { utf8_to_js(raw, &out, &mut Zeroizing::new(Vec::new())) },
            Err(e) => return Err(coded_rejection(&env, e)),
        }?;
        created
            .map(JsText)
            .ok_or_else(|| coded_rejection(&env, keys::not_utf8()))
    }
}

/// Rejects a promise with an `Error` carrying the `ALE_*` code. napi-rs's
/// task errors are `Status`-typed, so the JS error is built here and handed
/// over by reference, which napi-rs rejects with unchanged.
fn coded_rejection(env: &Env, err: AleError) -> napi::Error {
    let js = to_js(err);
    // SAFETY: the current env (the task's completion callback).
    let value = unsafe { napi::bindgen_prelude::JsError::from(js).into_value(env.raw()) };
    // SAFETY: `value` is an Error object created in this env just now.
    napi::Error::from(unsafe { Unknown::from_raw_unchecked(env.raw(), value) })
}

static GLOBAL_RING: RwLock<Option<Arc<CoreRing>>> = RwLock::new(None);

pub(crate) fn with_global<T>(f: impl FnOnce(&CoreRing) -> Result<T>) -> Result<T> {
    let guard = GLOBAL_RING
        .read()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    match guard.as_deref() {
        Some(ring) => f(ring),
        None => Err(to_js(AleError::NotInitialized)),
    }
}

/// Sets the process-wide ring used by `encrypt` and `decrypt`, shared by all
/// worker threads. Without secrets (undefined) it reads `process.env` like
/// `KeyRing.fromEnv()`. Calling it again replaces the ring.
#[napi(
    catch_unwind,
    ts_args_type = "secrets?: Array<string | Uint8Array>, options?: RingOptions"
)]
pub fn init_key_ring(env: Env, secrets: Option<Unknown>, options: Option<Unknown>) -> Result<()> {
    guard(|| set_global_ring(&env, secrets, options))
}

fn set_global_ring(env: &Env, secrets: Option<Unknown>, options: Option<Unknown>) -> Result<()> {
    let ring = match secrets {
        Some(s) if !matches!(s.get_type(), Ok(ValueType::Undefined)) => {
            read_secrets(env, s, options)?
        }
        _ => ring_from_env(env, None, options)?,
    };
    *GLOBAL_RING
        .write()
        .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(ring);
    Ok(())
}

/// Encrypts with the process-wide ring. Throws `ALE_NOT_INITIALIZED` before `initKeyRing()`.
#[napi(
    catch_unwind,
    ts_return_type = "string",
    ts_args_type = "plaintext: string, tenantId: string, collectionId: string, fieldName: string"
)]
pub fn encrypt(
    env: &Env,
    plaintext: JsString,
    tenant_id: JsString,
    collection_id: JsString,
    field_name: JsString,
) -> Result<JsText> {
    let ctx = [tenant_id, collection_id, field_name];
    with_global(|ring| run_with(env, ring, fast::Op::Encrypt, plaintext.raw(), ctx))
}

/// Decrypts with the process-wide ring. Throws `ALE_NOT_INITIALIZED` before `initKeyRing()`.
#[napi(
    catch_unwind,
    ts_return_type = "string",
    ts_args_type = "envelope: string, tenantId: string, collectionId: string, fieldName: string"
)]
pub fn decrypt(
    env: &Env,
    envelope: JsString,
    tenant_id: JsString,
    collection_id: JsString,
    field_name: JsString,
) -> Result<JsText> {
    let ctx = [tenant_id, collection_id, field_name];
    with_global(|ring| run_with(env, ring, fast::Op::Decrypt, envelope.raw(), ctx))
}

/// The blind index of `value` under the process-wide ring's primary key.
#[napi(
    catch_unwind,
    ts_return_type = "string",
    ts_args_type = "value: string, tenantId: string, collectionId: string, fieldName: string"
)]
pub fn blind_index(
    env: &Env,
    value: JsString,
    tenant_id: JsString,
    collection_id: JsString,
    field_name: JsString,
) -> Result<JsText> {
    let ctx = [tenant_id, collection_id, field_name];
    with_global(|ring| {
        // SAFETY: `value` is an argument of the current callback.
        with_context(env, ctx, |b, c| unsafe {
            b.blind_index(env.raw(), ring, value.raw(), c, 0)
        })
        .map(JsText)
    })
}

/// `ring.encryptBinary` with the process-wide ring.
#[napi(
    catch_unwind,
    ts_return_type = "Buffer",
    ts_args_type = "plaintext: string, tenantId: string, collectionId: string, fieldName: string"
)]
pub fn encrypt_binary(
    env: &Env,
    plaintext: JsString,
    tenant_id: JsString,
    collection_id: JsString,
    field_name: JsString,
) -> Result<JsText> {
    let ctx = [tenant_id, collection_id, field_name];
    with_global(|ring| run_with(env, ring, fast::Op::EncryptBinary, plaintext.raw(), ctx))
}

/// `ring.decryptBinary` with the process-wide ring.
#[napi(
    catch_unwind,
    ts_return_type = "string",
    ts_args_type = "envelope: Uint8Array, tenantId: string, collectionId: string, fieldName: string"
)]
pub fn decrypt_binary(
    env: &Env,
    envelope: Unknown,
    tenant_id: JsString,
    collection_id: JsString,
    field_name: JsString,
) -> Result<JsText> {
    let ctx = [tenant_id, collection_id, field_name];
    with_global(|ring| run_with(env, ring, fast::Op::DecryptBinary, envelope.raw(), ctx))
}

/// The binary form of a text envelope, as a new `Buffer`; no key needed.
/// Throws like decryption on a malformed envelope.
#[napi(
    catch_unwind,
    ts_return_type = "Buffer",
    ts_args_type = "envelope: string"
)]
pub fn envelope_to_bytes(env: &Env, envelope: Unknown) -> Result<JsText> {
    guard(|| text_to_bytes(env, envelope))
}

fn text_to_bytes(env: &Env, envelope: Unknown) -> Result<JsText> {
    let raw = env.raw();
    let mut wide = Vec::new();
    // SAFETY: `envelope` is an argument of the current callback.
    unsafe { read_utf16(raw, envelope.raw(), &mut wide, "envelope", None) }.map_err(to_js)?;
    let mut bytes = Vec::new();
    binary::from_text(&wide[..], &mut bytes).map_err(to_js)?;
    let (mut data, mut buffer) = (std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: copies `bytes` into a new Buffer of the current env.
    napi::check_status!(unsafe {
        sys::napi_create_buffer_copy(
            raw,
            bytes.len(),
            bytes.as_ptr().cast(),
            &mut data,
            &mut buffer,
        )
    })
    .map_err(napi_failure)?;
    Ok(JsText(buffer))
}

/// The text form (`v1:…`) of a binary envelope; no key needed. Throws
/// `ALE_MALFORMED_ENVELOPE` or `ALE_UNSUPPORTED_VERSION` on bad bytes.
#[napi(
    catch_unwind,
    ts_return_type = "string",
    ts_args_type = "envelope: Uint8Array"
)]
pub fn envelope_from_bytes(env: &Env, envelope: Unknown) -> Result<JsText> {
    guard(|| bytes_to_text(env, envelope))
}

fn bytes_to_text(env: &Env, envelope: Unknown) -> Result<JsText> {
    let raw = env.raw();
    let mut bytes = Vec::new();
    // SAFETY: `envelope` is an argument of the current callback.
    unsafe { convert::read_bytes_into(raw, envelope.raw(), "envelope", &mut bytes) }
        .map_err(to_js)?;
    let mut text = Vec::new();
    binary::to_text(&bytes, &mut text).map_err(to_js)?;
    // SAFETY: the current env; an envelope is ASCII.
    unsafe { ascii_to_js(raw, &text) }
        .map(JsText)
        .map_err(napi_failure)
}

/// Whether the process-wide ring has been initialized.
#[napi(catch_unwind)]
pub fn is_key_ring_initialized() -> Result<bool> {
    guard(|| {
        Ok(GLOBAL_RING
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .is_some())
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
