//! The process-wide ring's functions: `initKeyRing` and the functions that
//! use it. The four hot ones are replaced at load by the fast paths in
//! `callbacks/`, which run the same [`ops::run`]; their declarations here
//! give napi-rs their types and documentation.

use napi::bindgen_prelude::JsValue;
use napi::{Env, JsString, Unknown};
use napi_derive::napi;

use crate::error::{guard, Result};
use crate::global_ring::{self, with_global};
use crate::js::raw::{type_name, Created};
use crate::ops::{self, Op};
use crate::scratch::with_context;
use crate::secrets::{read_secrets, ring_from_env};

/// Sets the process-wide ring used by `encrypt` and `decrypt`, shared by all
/// worker threads. Without secrets (undefined) it reads `process.env` like
/// `KeyRing.fromEnv()`. Calling it again replaces the ring.
#[napi(
    catch_unwind,
    ts_args_type = "secrets?: Array<string | Uint8Array>, options?: RingOptions"
)]
pub fn init_key_ring(env: Env, secrets: Option<Unknown>, options: Option<Unknown>) -> Result<()> {
    let raw = env.raw();
    let options = options.map(|o| o.raw());
    guard(|| {
        // SAFETY: the arguments of the current call.
        let ring = unsafe {
            match secrets.map(|s| s.raw()).filter(|&s| !is_undefined(raw, s)) {
                Some(s) => read_secrets(raw, s, options)?,
                None => ring_from_env(raw, None, options)?,
            }
        };
        global_ring::set(std::sync::Arc::new(ale_core::Rings::one(ring)));
        Ok(())
    })
}

/// `undefined` (a `null` secrets list is refused, as not an array).
///
/// # Safety
/// `env` and `value` must be valid for the current call.
unsafe fn is_undefined(env: napi::sys::napi_env, value: napi::sys::napi_value) -> bool {
    // SAFETY: forwarded.
    unsafe { type_name(env, value) == "undefined" }
}

/// Runs hot operation `op` with the process-wide ring.
fn hot(env: &Env, op: Op, value: Unknown, ctx: [JsString; 3]) -> Result<Created> {
    with_global(|ring| {
        // SAFETY: the arguments of the current call.
        unsafe { ops::run_in_context(env.raw(), op, ring, value.raw(), ctx.map(|s| s.raw())) }
    })
    .map(Created)
}

/// Encrypts with the process-wide ring. Throws `ALE_NOT_INITIALIZED` before `initKeyRing()`.
#[napi(
    catch_unwind,
    ts_return_type = "string",
    ts_args_type = "plaintext: string, tenantId: string, collectionId: string, fieldName: string"
)]
pub fn encrypt(
    env: &Env,
    plaintext: Unknown,
    tenant_id: JsString,
    collection_id: JsString,
    field_name: JsString,
) -> Result<Created> {
    hot(
        env,
        Op::Encrypt,
        plaintext,
        [tenant_id, collection_id, field_name],
    )
}

/// Decrypts with the process-wide ring. Throws `ALE_NOT_INITIALIZED` before `initKeyRing()`.
#[napi(
    catch_unwind,
    ts_return_type = "string",
    ts_args_type = "envelope: string, tenantId: string, collectionId: string, fieldName: string"
)]
pub fn decrypt(
    env: &Env,
    envelope: Unknown,
    tenant_id: JsString,
    collection_id: JsString,
    field_name: JsString,
) -> Result<Created> {
    hot(
        env,
        Op::Decrypt,
        envelope,
        [tenant_id, collection_id, field_name],
    )
}

/// `ring.encryptBinary` with the process-wide ring.
#[napi(
    catch_unwind,
    ts_return_type = "Buffer",
    ts_args_type = "plaintext: string, tenantId: string, collectionId: string, fieldName: string"
)]
pub fn encrypt_binary(
    env: &Env,
    plaintext: Unknown,
    tenant_id: JsString,
    collection_id: JsString,
    field_name: JsString,
) -> Result<Created> {
    let ctx = [tenant_id, collection_id, field_name];
    hot(env, Op::EncryptBinary, plaintext, ctx)
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
) -> Result<Created> {
    let ctx = [tenant_id, collection_id, field_name];
    hot(env, Op::DecryptBinary, envelope, ctx)
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
) -> Result<Created> {
    let (raw, ctx) = (
        env.raw(),
        [tenant_id, collection_id, field_name].map(|s| s.raw()),
    );
    with_global(|ring| {
        // SAFETY: the arguments of the current call.
        unsafe {
            with_context(raw, ctx, |b, c| {
                ops::blind_index(raw, ring, value.raw(), b, c, 0)
            })
        }
    })
    .map(Created)
}

/// The blind index of `value` under each of the process-wide ring's
/// secrets, primary first: the lookups of a rotation while indexes are
/// rebuilt, as `KeyRing#blindIndexes` gives them for a ring of its own.
#[napi(
    catch_unwind,
    ts_return_type = "string[]",
    ts_args_type = "value: string, tenantId: string, collectionId: string, fieldName: string"
)]
pub fn blind_indexes(
    env: &Env,
    value: JsString,
    tenant_id: JsString,
    collection_id: JsString,
    field_name: JsString,
) -> Result<Vec<Created>> {
    let (raw, ctx) = (
        env.raw(),
        [tenant_id, collection_id, field_name].map(|s| s.raw()),
    );
    let indexes = with_global(|ring| {
        // SAFETY: the arguments of the current call.
        unsafe {
            with_context(raw, ctx, |b, c| {
                ops::blind_indexes(raw, ring, value.raw(), b, c)
            })
        }
    })?;
    Ok(indexes.into_iter().map(Created).collect())
}

/// Whether the process-wide ring has been initialized.
#[napi(catch_unwind)]
pub fn is_key_ring_initialized() -> Result<bool> {
    guard(|| Ok(global_ring::is_set()))
}
