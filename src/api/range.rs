//! Range tokens (docs/search.md, "Ranges and order"): the tokens of nodes of
//! a range index's tree, which the package chooses for a value (its path)
//! or a query (a cover of the range). The scheme is the core's
//! (`ale_core::search::range`); this reads the arguments and makes the
//! Buffer.

use ale_core::search::range;
use ale_core::Rings;
use napi::bindgen_prelude::JsValue;
use napi::{sys, Env, JsString, Unknown};
use napi_derive::napi;
use zeroize::Zeroizing;

use super::ring::raw3;
use super::search::tokens_to_buffer;
use super::search_options::read_secret;
use crate::class::KeyRing;
use crate::error::{guard, to_js, Result};
use crate::global_ring::with_global;
use crate::js::buffer::read_bytes_into;
use crate::js::raw::{is_nullish, Created};
use crate::scratch::with_context;

/// Options of `rangeTokens`.
// For `index.d.ts` only: `read_secret` reads the object itself, so that a
// bad option gets an `ALE_*` code.
#[allow(dead_code)]
#[napi(object, js_name = "RangeOptions")]
pub struct RangeOptionsDeclaration {
    /// The secret whose blind-index key makes the tokens: 0 (the primary,
    /// default) or a previous one, while a re-index runs.
    pub secret: Option<u32>,
}

#[napi]
impl KeyRing {
    /// The tokens of range-tree `nodes` (9 bytes each: a prefix length in
    /// bits, or a spot tree's level and length from 0x80 up, then the
    /// prefix) in this context, sorted and distinct, 8 bytes each.
    /// `ALE_INVALID_INPUT` for a malformed node or more than 1,024.
    #[napi(
        catch_unwind,
        ts_args_type = "nodes: Uint8Array, tenantId: string, collectionId: string, fieldName: string, options?: RangeOptions",
        ts_return_type = "Buffer"
    )]
    pub fn range_tokens(
        &self,
        env: &Env,
        nodes: Unknown,
        tenant_id: JsString,
        collection_id: JsString,
        field_name: JsString,
        options: Option<Unknown>,
    ) -> Result<Created> {
        let ctx = raw3([tenant_id, collection_id, field_name]);
        // SAFETY: the arguments of the current call.
        unsafe { tokens_of(env.raw(), &self.inner, nodes.raw(), ctx, options) }.map(Created)
    }
}

/// `KeyRing#rangeTokens` with the process-wide ring. Throws
/// `ALE_NOT_INITIALIZED` before `initKeyRing()`.
#[napi(
    catch_unwind,
    ts_args_type = "nodes: Uint8Array, tenantId: string, collectionId: string, fieldName: string, options?: RangeOptions",
    ts_return_type = "Buffer"
)]
pub fn range_tokens(
    env: &Env,
    nodes: Unknown,
    tenant_id: JsString,
    collection_id: JsString,
    field_name: JsString,
    options: Option<Unknown>,
) -> Result<Created> {
    let ctx = raw3([tenant_id, collection_id, field_name]);
    with_global(|rings| {
        // SAFETY: the arguments of the current call.
        unsafe { tokens_of(env.raw(), rings, nodes.raw(), ctx, options) }
    })
    .map(Created)
}

/// The tokens of `nodes` in context `ctx` of `rings`, as a Buffer.
///
/// # Safety
/// `raw`, `nodes`, `ctx` and `options` must be valid for the current call.
unsafe fn tokens_of(
    raw: sys::napi_env,
    rings: &Rings,
    nodes: sys::napi_value,
    ctx: [sys::napi_value; 3],
    options: Option<Unknown>,
) -> Result<sys::napi_value> {
    let secret = guard(|| match options.map(|o| o.raw()) {
        // SAFETY: an argument of the current call.
        Some(o) if !unsafe { is_nullish(raw, o) } => unsafe { read_secret(raw, o) },
        _ => Ok(0),
    })?;
    // A value's path is its code, which is as telling as the value: wiped on every way out.
    let mut bytes = Zeroizing::new(Vec::new());
    // The checks in the node:crypto backend's order: the options, the
    // context, the nodes (their type, then their shape), then the tenant.
    // SAFETY: forwarded.
    unsafe {
        with_context(raw, ctx, |_, c| {
            read_bytes_into(raw, nodes, "nodes", &mut bytes).map_err(to_js)?;
            range::check_nodes(&bytes).map_err(to_js)?;
            let column = rings
                .serve(c, |r| r.column_tokens(secret, c))
                .map_err(to_js)?;
            let mut tokens = Vec::new();
            range::range_tokens(&column, &bytes, &mut tokens).map_err(to_js)?;
            tokens_to_buffer(raw, &tokens)
        })
    }
}
