//! Search tokens (docs/search.md): what a searchable column stores for a
//! value, what a query looks up, and the exact test a decrypted value
//! passes. The scheme is the core's (`ale_core::search`); this reads the
//! arguments and makes the results.

use ale_core::error::AleError;
use ale_core::search::index::{query_tokens, value_tokens};
use ale_core::search::matching::matches;
use ale_core::search::normalize::{normalize, Folding};
use ale_core::search::tokens::Token;
use ale_core::search::words::write_words;
use ale_core::{Context, Rings};
use napi::bindgen_prelude::JsValue;
use napi::{sys, Env, JsString, Unknown};
use napi_derive::napi;
use zeroize::Zeroizing;

use super::ring::raw3;
use super::search_args::{read_accents, read_kind, read_string};
use super::search_options::{read_options, Options};
use crate::class::KeyRing;
use crate::error::{guard, to_js, Result};
use crate::global_ring::with_global;
use crate::js::buffer::new_buffer;
use crate::js::raw::Created;
use crate::js::text::{ascii_to_js, read_utf8};
use crate::scratch::{with_context, Buffers};

#[napi]
impl KeyRing {
    /// The search tokens of `value` in this context, sorted and distinct, 8
    /// bytes each: what a searchable column stores (docs/search.md; as an
    /// array on PostgreSQL, as `searchTokenText` on SQLite and MySQL).
    // Replaced at load by the direct path (callbacks/search.rs), which runs
    // the same `tokens_in`; this declaration gives napi-rs its types and
    // documentation.
    #[napi(
        catch_unwind,
        ts_args_type = "value: string, tenantId: string, collectionId: string, fieldName: string, options?: SearchOptions",
        ts_return_type = "Buffer"
    )]
    pub fn search_tokens(
        &self,
        env: &Env,
        value: Unknown,
        tenant_id: JsString,
        collection_id: JsString,
        field_name: JsString,
        options: Option<Unknown>,
    ) -> Result<Created> {
        let ctx = raw3([tenant_id, collection_id, field_name]);
        // SAFETY: the arguments of the current call.
        unsafe {
            tokens_of(
                env.raw(),
                &self.inner,
                value.raw(),
                ctx,
                options,
                Form::Bytes,
            )
        }
        .map(Created)
    }

    /// The same tokens as the text SQLite FTS5 and MySQL FULLTEXT index:
    /// each token's first 30 bits as 6 base32hex digits (`0`-`9`, `a`-`v`),
    /// one space between two, a word that repeats the one before left out
    /// ('' for no token). What the Drizzle columns of those dialects store.
    // Replaced at load by the direct path, as searchTokens is.
    #[napi(
        catch_unwind,
        ts_args_type = "value: string, tenantId: string, collectionId: string, fieldName: string, options?: SearchOptions",
        ts_return_type = "string"
    )]
    pub fn search_token_text(
        &self,
        env: &Env,
        value: Unknown,
        tenant_id: JsString,
        collection_id: JsString,
        field_name: JsString,
        options: Option<Unknown>,
    ) -> Result<Created> {
        let ctx = raw3([tenant_id, collection_id, field_name]);
        // SAFETY: the arguments of the current call.
        unsafe {
            tokens_of(
                env.raw(),
                &self.inner,
                value.raw(),
                ctx,
                options,
                Form::Words,
            )
        }
        .map(Created)
    }

    /// The search tokens a value must all hold to match `query` (sorted,
    /// distinct, 8 bytes each). `ALE_INVALID_INPUT` for a query the indexes
    /// cannot serve: "contains" under 3 characters, "words" with no word, an
    /// index the options leave out; "prefix" needs the prefix index and a
    /// word, or the contains index and 3 characters.
    #[napi(
        catch_unwind,
        ts_args_type = "query: string, kind: 'contains' | 'prefix' | 'words', tenantId: string, collectionId: string, fieldName: string, options?: SearchOptions",
        ts_return_type = "Buffer"
    )]
    #[allow(clippy::too_many_arguments)]
    pub fn search_query(
        &self,
        env: &Env,
        query: Unknown,
        kind: Unknown,
        tenant_id: JsString,
        collection_id: JsString,
        field_name: JsString,
        options: Option<Unknown>,
    ) -> Result<Created> {
        let ctx = raw3([tenant_id, collection_id, field_name]);
        // SAFETY: the arguments of the current call.
        unsafe {
            query_of(
                env.raw(),
                &self.inner,
                query.raw(),
                kind.raw(),
                ctx,
                options,
            )
        }
        .map(Created)
    }
}

/// `KeyRing#searchTokens` with the process-wide ring. Throws
/// `ALE_NOT_INITIALIZED` before `initKeyRing()`.
#[napi(
    catch_unwind,
    ts_args_type = "value: string, tenantId: string, collectionId: string, fieldName: string, options?: SearchOptions",
    ts_return_type = "Buffer"
)]
pub fn search_tokens(
    env: &Env,
    value: Unknown,
    tenant_id: JsString,
    collection_id: JsString,
    field_name: JsString,
    options: Option<Unknown>,
) -> Result<Created> {
    let ctx = raw3([tenant_id, collection_id, field_name]);
    with_global(|rings| {
        // SAFETY: the arguments of the current call.
        unsafe { tokens_of(env.raw(), rings, value.raw(), ctx, options, Form::Bytes) }
    })
    .map(Created)
}

/// `KeyRing#searchTokenText` with the process-wide ring. Throws
/// `ALE_NOT_INITIALIZED` before `initKeyRing()`.
#[napi(
    catch_unwind,
    ts_args_type = "value: string, tenantId: string, collectionId: string, fieldName: string, options?: SearchOptions",
    ts_return_type = "string"
)]
pub fn search_token_text(
    env: &Env,
    value: Unknown,
    tenant_id: JsString,
    collection_id: JsString,
    field_name: JsString,
    options: Option<Unknown>,
) -> Result<Created> {
    let ctx = raw3([tenant_id, collection_id, field_name]);
    with_global(|rings| {
        // SAFETY: the arguments of the current call.
        unsafe { tokens_of(env.raw(), rings, value.raw(), ctx, options, Form::Words) }
    })
    .map(Created)
}

/// `KeyRing#searchQuery` with the process-wide ring. Throws
/// `ALE_NOT_INITIALIZED` before `initKeyRing()`.
#[napi(
    catch_unwind,
    ts_args_type = "query: string, kind: 'contains' | 'prefix' | 'words', tenantId: string, collectionId: string, fieldName: string, options?: SearchOptions",
    ts_return_type = "Buffer"
)]
pub fn search_query(
    env: &Env,
    query: Unknown,
    kind: Unknown,
    tenant_id: JsString,
    collection_id: JsString,
    field_name: JsString,
    options: Option<Unknown>,
) -> Result<Created> {
    let ctx = raw3([tenant_id, collection_id, field_name]);
    with_global(|rings| {
        // SAFETY: the arguments of the current call.
        unsafe { query_of(env.raw(), rings, query.raw(), kind.raw(), ctx, options) }
    })
    .map(Created)
}

/// What a value's tokens become in JS.
#[derive(Clone, Copy)]
pub(crate) enum Form {
    /// A Buffer, 8 bytes a token (`searchTokens`).
    Bytes,
    /// A string of words (`searchTokenText`).
    Words,
}

/// A value's tokens in context `ctx` of `rings`, in `form`.
///
/// # Safety
/// `raw`, `value`, `ctx` and `options` must be valid for the current call.
unsafe fn tokens_of(
    raw: sys::napi_env,
    rings: &Rings,
    value: sys::napi_value,
    ctx: [sys::napi_value; 3],
    options: Option<Unknown>,
    form: Form,
) -> Result<sys::napi_value> {
    // SAFETY: forwarded.
    let options = guard(|| unsafe { read_options(raw, options.map(|o| o.raw())) })?;
    // SAFETY: forwarded.
    unsafe {
        with_context(raw, ctx, |b, c| {
            tokens_in(raw, rings, value, &options, form, b, c)
        })
    }
}

/// A value's tokens in the context `c`, in `form`, read through this
/// thread's buffers.
///
/// # Safety
/// `raw` and `value` must be valid for the current call.
pub(crate) unsafe fn tokens_in(
    raw: sys::napi_env,
    rings: &Rings,
    value: sys::napi_value,
    options: &Options,
    form: Form,
    b: &mut Buffers,
    c: &Context<'_>,
) -> Result<sys::napi_value> {
    // The read appends: from an empty buffer, or every call would add its
    // value after the last one's (wiped) bytes until the buffer is trimmed.
    b.input.clear();
    // SAFETY: forwarded.
    let range =
        unsafe { read_utf8(raw, value, &mut b.wide, &mut b.input, "value") }.map_err(to_js)?;
    let column = rings
        .serve(c, |r| r.column_tokens(options.secret, c))
        .map_err(to_js);
    let valid = std::str::from_utf8(&b.input[range.clone()]);
    let utf8 = valid.is_ok();
    if let (Ok(column), Ok(text)) = (&column, valid) {
        // The normalized form is plaintext: wiped when this block ends,
        // however it ends (a panic included). Only its used bytes: the room
        // past them is wiped whenever it is used, and wiping all of it would
        // cost every later call the largest value's size.
        let text_room = WipedOnDrop(&mut b.text);
        value_tokens(
            column,
            text,
            options.indexes,
            options.folding,
            text_room.0,
            &mut b.tokens,
        );
    }
    zeroize::Zeroize::zeroize(&mut b.input[range]);
    column?;
    if !utf8 {
        return Err(to_js(AleError::Internal));
    }
    match form {
        // SAFETY: the current env.
        Form::Bytes => unsafe { tokens_to_buffer(raw, &b.tokens) },
        Form::Words => {
            // The room of a result may still hold an earlier plaintext:
            // write_words grows it only by a step that wipes what it leaves.
            b.out.clear();
            write_words(&b.tokens, &mut b.out);
            // SAFETY: the current env; the words' digits and spaces are ASCII.
            unsafe { ascii_to_js(raw, &b.out) }.map_err(crate::error::engine_failure)
        }
    }
}

/// A thread's text buffer whose used bytes are wiped, and its length set
/// to zero, when this is dropped.
struct WipedOnDrop<'a>(&'a mut String);

impl Drop for WipedOnDrop<'_> {
    fn drop(&mut self) {
        zeroize::Zeroize::zeroize(self.0.as_mut_str());
        self.0.clear();
    }
}

/// A query's tokens in context `ctx` of `rings`, as a Buffer.
///
/// # Safety
/// `raw`, `query`, `kind`, `ctx` and `options` must be valid for the current call.
unsafe fn query_of(
    raw: sys::napi_env,
    rings: &Rings,
    query: sys::napi_value,
    kind: sys::napi_value,
    ctx: [sys::napi_value; 3],
    options: Option<Unknown>,
) -> Result<sys::napi_value> {
    // SAFETY: forwarded.
    let (options, kind, text) = guard(|| unsafe {
        Ok((
            read_options(raw, options.map(|o| o.raw()))?,
            read_kind(raw, kind)?,
            read_string(raw, query, "query")?,
        ))
    })?;
    // SAFETY: forwarded.
    let made = unsafe {
        with_context(raw, ctx, |_, c| {
            let column = rings
                .serve(c, |r| r.column_tokens(options.secret, c))
                .map_err(to_js)?;
            let mut tokens = Vec::new();
            query_tokens(
                &column,
                kind.query(&text),
                options.indexes,
                options.folding,
                &mut tokens,
            )
            .map_err(to_js)?;
            tokens_to_buffer(raw, &tokens)
        })
    };
    // `text`, the query, is plaintext as a value is: read_string's wipes it on drop.
    made
}

/// `text` in the form search matches on (NFKC, full case folding; without
/// combining marks when `accents` is true).
#[napi(
    catch_unwind,
    ts_args_type = "text: string, accents?: boolean",
    ts_return_type = "string"
)]
pub fn search_normalize(env: Env, text: Unknown, accents: Option<Unknown>) -> Result<Created> {
    let raw = env.raw();
    guard(|| {
        // SAFETY: the arguments of the current call.
        let (text, accents) = unsafe {
            (
                read_string(raw, text.raw(), "text")?,
                read_accents(raw, accents)?,
            )
        };
        let folded = Zeroizing::new(normalize(&text, Folding { accents }));
        // SAFETY: the current env.
        unsafe { string_to_js(raw, &folded) }
    })
    .map(Created)
}

/// Whether `value` answers `query` of `kind`: the exact test a searchable
/// column's candidates pass once decrypted.
#[napi(
    catch_unwind,
    ts_args_type = "value: string, query: string, kind: 'contains' | 'prefix' | 'words', accents?: boolean"
)]
pub fn search_matches(
    env: Env,
    value: Unknown,
    query: Unknown,
    kind: Unknown,
    accents: Option<Unknown>,
) -> Result<bool> {
    let raw = env.raw();
    guard(|| {
        // SAFETY: the arguments of the current call.
        let (value, query, kind, accents) = unsafe {
            (
                read_string(raw, value.raw(), "value")?,
                read_string(raw, query.raw(), "query")?,
                read_kind(raw, kind.raw())?,
                read_accents(raw, accents)?,
            )
        };
        Ok(matches(&value, kind.query(&query), Folding { accents }))
    })
}

/// Tokens as one Buffer of 8 bytes each.
///
/// # Safety
/// `env` must be valid for the current call.
pub(super) unsafe fn tokens_to_buffer(
    env: sys::napi_env,
    tokens: &[Token],
) -> Result<sys::napi_value> {
    let len = tokens.len() * ale_core::search::tokens::TOKEN_LEN;
    // SAFETY: the current env.
    let (buffer, data) = unsafe { new_buffer(env, len) }?;
    if len > 0 {
        // SAFETY: `data` is the new Buffer's memory, `len` bytes, nothing
        // else refers to it yet.
        let bytes = unsafe { std::slice::from_raw_parts_mut(data, len) };
        for (room, token) in bytes.chunks_exact_mut(8).zip(tokens) {
            room.copy_from_slice(&token.to_be_bytes());
        }
    }
    Ok(buffer)
}

/// A Rust string as a JS one.
///
/// # Safety
/// `env` must be valid for the current call.
unsafe fn string_to_js(env: sys::napi_env, text: &str) -> Result<sys::napi_value> {
    if text.is_ascii() {
        // SAFETY: forwarded; ASCII.
        return unsafe { ascii_to_js(env, text.as_bytes()) }.map_err(crate::error::engine_failure);
    }
    let mut out = std::ptr::null_mut();
    let len = isize::try_from(text.len()).map_err(|_| to_js(AleError::Internal))?;
    // SAFETY: `text` is UTF-8, `len` bytes.
    crate::error::check(unsafe {
        sys::napi_create_string_utf8(env, text.as_ptr().cast(), len, &mut out)
    })?;
    Ok(out)
}
