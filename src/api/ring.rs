//! `KeyRing`'s constructor and methods (the class and its getters are in
//! `class.rs`). Doc comments here become the JSDoc of `index.d.ts`.
//!
//! The four hot methods (`encrypt`, `decrypt`, `encryptBinary`,
//! `decryptBinary`) are replaced at load by the fast paths in `callbacks/`,
//! which run the same [`ops::run`]; their declarations here give napi-rs
//! their types and documentation.

use std::sync::Arc;

use ale_core::error::AleError;
use napi::bindgen_prelude::{AsyncTask, JsValue, Uint8Array};
use napi::{Env, JsString, Unknown};
use napi_derive::napi;

use crate::class::KeyRing;
use crate::error::{guard, to_js, Result};
use crate::job::{Direction, Job};
use crate::js::raw::{positive_integer, Created};
use crate::js::text::read_tenant;
use crate::ops::{self, Op};
use crate::scratch::with_context;
use crate::secrets::{read_secrets, ring_from_env, tenant_ring};

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
// The type of the `options` argument, for `index.d.ts` only: `secrets.rs`
// reads the JS object itself, so that a bad option gets an `ALE_*` code.
#[allow(dead_code)]
#[napi(object, js_name = "RingOptions")]
pub struct RingOptionsDeclaration {
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
    /// One id per secret, in order: 22 base64url characters (16 random
    /// bytes). With ids, the ring writes `v2:<key id>:…` envelopes naming its
    /// primary, and opens a `v2` value with the key it names only (another id
    /// is `ALE_KEY_NOT_LOADED`); it reads no `v1` value. The tenant key store
    /// builds such rings; legacy fallbacks do not apply.
    pub key_ids: Option<Vec<String>>,
    /// A 32-byte secret that every key of the ring derives its blind-index
    /// key from, instead of from its own secret: indexes then survive a
    /// rotation of the data keys.
    pub index_key: Option<Uint8Array>,
}

/// The raw values of three context arguments.
pub(crate) fn raw3(ctx: [JsString; 3]) -> [napi::sys::napi_value; 3] {
    ctx.map(|s| s.raw())
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
        // SAFETY: the arguments of the current call.
        guard(|| unsafe { read_secrets(env.raw(), secrets.raw(), options.map(|o| o.raw())) })
            .map(Self::of)
    }

    /// Builds a ring from `ENCRYPTION_KEY` (or `SECRET_ENCRYPTION_KEY` when it
    /// is empty) as the primary, then `ENCRYPTION_KEY_PREVIOUS` (comma-separated,
    /// newest first, white space around entries ignored), then
    /// `ENCRYPTION_KEY_PREVIOUS_<n>` in order of n, each as written, then the
    /// list as written when its reading may have cut or trimmed a passphrase.
    /// Reads `process.env` by default.
    #[napi(
        catch_unwind,
        factory,
        ts_args_type = "env?: Record<string, string | undefined>, options?: RingOptions"
    )]
    pub fn from_env(env: Env, vars: Option<Unknown>, options: Option<Unknown>) -> Result<Self> {
        // SAFETY: the arguments of the current call.
        guard(|| unsafe {
            ring_from_env(env.raw(), vars.map(|v| v.raw()), options.map(|o| o.raw()))
        })
        .map(Self::of)
    }

    /// A ring of tenants: it holds one keyed ring per tenant (`setTenant`),
    /// and every call goes to the ring of its `tenantId`
    /// (`ALE_KEY_NOT_LOADED` for a tenant it does not hold). The tenant key
    /// store of `@sveltycms/ale/drizzle` keeps its loaded tenants in one.
    /// `options.ivLength` must be that of the tenants' rings.
    #[napi(catch_unwind, factory, ts_args_type = "options?: RingOptions")]
    pub fn for_tenants(env: Env, options: Option<Unknown>) -> Result<Self> {
        // SAFETY: the arguments of the current call.
        guard(|| unsafe { tenant_ring(env.raw(), options.map(|o| o.raw())) }).map(|rings| Self {
            inner: Arc::new(rings),
        })
    }

    /// Gives a ring of tenants the keys of `tenantId`: `secrets` is
    /// `[active, ...decrypt-only]` data keys (32-byte `Uint8Array`s) and
    /// `options` names them (`keyIds`) and gives the index key (`indexKey`).
    /// Replaces what the tenant had. `ALE_INVALID_INPUT` on any other ring.
    #[napi(
        catch_unwind,
        ts_args_type = "tenantId: string, secrets: Uint8Array[], options: RingOptions",
        ts_return_type = "void"
    )]
    pub fn set_tenant(
        &self,
        env: Env,
        tenant_id: Unknown,
        secrets: Unknown,
        options: Unknown,
    ) -> Result<()> {
        // SAFETY: the arguments of the current call.
        guard(|| unsafe {
            let tenant = read_tenant(env.raw(), tenant_id.raw()).map_err(to_js)?;
            let ring = read_secrets(env.raw(), secrets.raw(), Some(options.raw()))?;
            let tenants = self.inner.tenants().map_err(to_js)?;
            tenants.set(&tenant, Arc::new(ring)).map_err(to_js)
        })
    }

    /// Drops the keys of `tenantId` from a ring of tenants; they are wiped
    /// once no call is using them. Returns whether it held them.
    #[napi(catch_unwind, ts_args_type = "tenantId: string")]
    pub fn delete_tenant(&self, env: Env, tenant_id: Unknown) -> Result<bool> {
        // SAFETY: the arguments of the current call.
        guard(|| unsafe {
            let tenant = read_tenant(env.raw(), tenant_id.raw()).map_err(to_js)?;
            self.inner
                .tenants()
                .and_then(|t| t.remove(&tenant))
                .map_err(to_js)
        })
    }

    /// Encrypts `plaintext` under the primary key, bound to
    /// `tenantId:collectionId:fieldName`. Returns `v1:<iv>:<tag>:<ciphertext>`,
    /// or `v2:<key id>:<iv>:<tag>:<ciphertext>` from a ring whose keys have ids.
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
    ) -> Result<Created> {
        let ctx = raw3([tenant_id, collection_id, field_name]);
        // SAFETY: the arguments of the current call.
        unsafe { ops::run_in_context(env.raw(), Op::Encrypt, &self.inner, plaintext.raw(), ctx) }
            .map(Created)
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
    ) -> Result<Created> {
        let ctx = raw3([tenant_id, collection_id, field_name]);
        // SAFETY: the arguments of the current call.
        unsafe { ops::run_in_context(env.raw(), Op::Decrypt, &self.inner, envelope.raw(), ctx) }
            .map(Created)
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
    ) -> Result<Created> {
        let ctx = raw3([tenant_id, collection_id, field_name]);
        self.many(env, plaintexts, ctx, Op::Encrypt)
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
    ) -> Result<Created> {
        let ctx = raw3([tenant_id, collection_id, field_name]);
        self.many(env, envelopes, ctx, Op::Decrypt)
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
        let ctx = raw3([tenant_id, collection_id, field_name]);
        // SAFETY: the arguments of the current call.
        unsafe {
            Job::prepare(
                env.raw(),
                &self.inner,
                plaintext.raw(),
                ctx,
                Direction::Seal,
            )
        }
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
        let ctx = raw3([tenant_id, collection_id, field_name]);
        // SAFETY: the arguments of the current call.
        unsafe { Job::prepare(env.raw(), &self.inner, envelope.raw(), ctx, Direction::Open) }
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
    ) -> Result<Created> {
        let (raw, ctx) = (env.raw(), raw3([tenant_id, collection_id, field_name]));
        // SAFETY: the arguments of the current call.
        unsafe {
            with_context(raw, ctx, |b, c| {
                ops::blind_index(raw, &self.inner, value.raw(), b, c, 0)
            })
        }
        .map(Created)
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
    ) -> Result<Vec<Created>> {
        let (raw, ctx) = (env.raw(), raw3([tenant_id, collection_id, field_name]));
        // SAFETY: the arguments of the current call.
        let indexes = unsafe {
            with_context(raw, ctx, |b, c| {
                ops::blind_indexes(raw, &self.inner, value.raw(), b, c)
            })
        }?;
        Ok(indexes.into_iter().map(Created).collect())
    }

    /// Encrypts `plaintext` into a binary envelope, for columns that hold
    /// bytes: version, IV length, IV, tag, ciphertext, with no base64 (see
    /// `docs/format.md`). Returns a new `Buffer`.
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
    ) -> Result<Created> {
        let ctx = raw3([tenant_id, collection_id, field_name]);
        let op = Op::EncryptBinary;
        // SAFETY: the arguments of the current call.
        unsafe { ops::run_in_context(env.raw(), op, &self.inner, plaintext.raw(), ctx) }
            .map(Created)
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
    ) -> Result<Created> {
        let ctx = raw3([tenant_id, collection_id, field_name]);
        let op = Op::DecryptBinary;
        // SAFETY: the arguments of the current call.
        unsafe { ops::run_in_context(env.raw(), op, &self.inner, envelope.raw(), ctx) }.map(Created)
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
        let (raw, ctx) = (env.raw(), raw3([tenant_id, collection_id, field_name]));
        // SAFETY: the arguments of the current call.
        let index = unsafe {
            with_context(raw, ctx, |b, c| {
                ops::key_index(raw, &self.inner, envelope.raw(), b, c)
            })
        }?;
        Ok(u32::try_from(index).unwrap_or(u32::MAX))
    }

    /// Every key in decryption order (secrets first, then legacy keys) with
    /// its counters in this process.
    #[napi(catch_unwind)]
    pub fn stats(&self) -> Result<Vec<KeyStats>> {
        guard(|| {
            let stats = self.inner.ring().map(ale_core::KeyRing::stats);
            Ok(stats
                .unwrap_or_default()
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
        guard(|| {
            // SAFETY: an argument of the current call.
            let n = unsafe { positive_integer(env.raw(), encryptions.raw()) }.ok_or_else(|| {
                to_js(AleError::InvalidInput(
                    "encryptions must be a positive integer".into(),
                ))
            })?;
            // Saturating float-to-int conversion; counts beyond 2^64 are moot.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            self.inner.budget().set_warn_at(n as u64);
            Ok(())
        })
    }
}

impl KeyRing {
    /// The JS object of one ring.
    fn of(ring: ale_core::KeyRing) -> Self {
        Self {
            inner: Arc::new(ale_core::Rings::one(ring)),
        }
    }

    /// `encryptMany`/`decryptMany`: `op` on every element of `values`.
    fn many(
        &self,
        env: &Env,
        values: Unknown,
        ctx: [napi::sys::napi_value; 3],
        op: Op,
    ) -> Result<Created> {
        let raw = env.raw();
        // SAFETY: the arguments of the current call.
        unsafe {
            let len = guard(|| ops::array_len(raw, values.raw()))?;
            let elements = guard(|| ops::elements(raw, values.raw(), len))?;
            with_context(raw, ctx, |b, c| {
                ops::map_values(raw, &elements, b, |b, v| {
                    ops::run(raw, op, &self.inner, v, b, c)
                })
            })
        }
        .map(Created)
    }
}
