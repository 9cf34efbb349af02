//! Per-thread working memory and the checked context of one call.
//!
//! Every operation runs inside [`with_context`] (three context strings read
//! and validated) or [`OwnedContext::with`] (a context validated once and
//! kept in a handle), with this thread's [`Buffers`]: the hot path does not
//! allocate once they have grown to the working size.

use std::cell::RefCell;
use std::ops::Range;

use ale_core::context::{Context, ContextBuf};
use ale_core::search::tokens::Token;
use napi::sys;

use crate::error::{guard, to_js, Result};
use crate::js::text::read_short_utf8;

/// Largest capacity a thread keeps between calls; larger buffers are freed,
/// so one 100 MB string does not pin 300 MB per thread for good.
const KEEP_CAPACITY: usize = 4 << 20;

/// The buffers one value's operation works in.
#[derive(Default)]
pub struct Buffers {
    /// The value's UTF-8 (plaintext, or an envelope's bytes).
    pub input: Vec<u8>,
    /// UTF-16 units: a string as read from the engine, or text going out.
    pub wide: Vec<u16>,
    /// The additional data, `tenant:collection:field`.
    pub aad: Vec<u8>,
    /// The result: an envelope, or a plaintext.
    pub out: Vec<u8>,
    /// A searched value's normalized form (plaintext: wiped after each use).
    pub text: String,
    /// A value's search tokens, before they become a Buffer.
    pub tokens: Vec<Token>,
}

impl Buffers {
    /// Frees capacity left by an unusually large value.
    fn trim(&mut self) {
        trim(&mut self.input);
        trim(&mut self.out);
        trim(&mut self.wide);
        if self.text.capacity() > KEEP_CAPACITY {
            // wiped after each call already; wiped whole before it is freed all the same
            zeroize::Zeroize::zeroize(&mut self.text);
            self.text = String::new();
        }
        if self.tokens.capacity() > KEEP_CAPACITY / 8 {
            self.tokens = Vec::new();
        }
    }
}

impl Drop for Buffers {
    /// Plaintext passes through these buffers; wipe them when the thread ends.
    fn drop(&mut self) {
        zeroize::Zeroize::zeroize(&mut self.input);
        zeroize::Zeroize::zeroize(&mut self.out);
        zeroize::Zeroize::zeroize(&mut self.wide);
        zeroize::Zeroize::zeroize(&mut self.text);
    }
}

fn trim<T: zeroize::DefaultIsZeroes>(buf: &mut Vec<T>) {
    if buf.capacity() > KEEP_CAPACITY {
        zeroize::Zeroize::zeroize(buf);
        *buf = Vec::new();
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

/// Reads and validates the three context arguments, then runs `op` with
/// this thread's buffers, inside the panic guard.
///
/// # Safety
/// `env` and the values must be valid for the current callback.
pub unsafe fn with_context<T>(
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
            // SAFETY: `read_short_utf8` appends only what simdutf produced
            // from valid UTF-16, which is valid UTF-8, and the ranges are its
            // return values.
            let part = |r: Range<usize>| unsafe { std::str::from_utf8_unchecked(&ctx[r]) };
            let context = Context::new(part(t), part(c), part(f)).map_err(to_js)?;
            let result = op(work, &context);
            work.trim();
            result
        })
    })
}

/// A validated context that owns its parts: what a context handle holds, so
/// that a call through it reads no context strings and checks nothing again.
pub struct OwnedContext(ContextBuf);

impl OwnedContext {
    /// Reads and validates three context arguments, as every call does.
    ///
    /// # Safety
    /// `env` and the values must be valid for the current callback.
    pub unsafe fn read(env: sys::napi_env, parts: [sys::napi_value; 3]) -> Result<Self> {
        // SAFETY: forwarded.
        unsafe { with_context(env, parts, |_, ctx| Ok(Self(ContextBuf::from(*ctx)))) }
    }

    /// Runs `op` with this context and this thread's buffers, inside the
    /// panic guard.
    pub fn with<T>(&self, op: impl FnOnce(&mut Buffers, &Context<'_>) -> Result<T>) -> Result<T> {
        guard(|| {
            SCRATCH.with(|cell| {
                let work = &mut cell.borrow_mut().work;
                let result = op(work, &self.0.as_context());
                work.trim();
                result
            })
        })
    }
}
