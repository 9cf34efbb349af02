//! `ale_ffi`: the C entry point Bun's FFI calls for `encrypt`, `decrypt` and
//! `decryptBinary` (`callbacks/prototype.js` holds the only caller), and
//! `ale_ffi_wipe`, which wipes a decrypt's plaintext from the caller's
//! memory. The value comes in as UTF-8 or bytes in memory the caller owns
//! and the result goes out the same way, so a call makes no Node-API call at
//! all; the ring and context are named by registry tokens.
//!
//! It returns `(length << 2) | flags` (bit 0: the output is ASCII; bit 1:
//! an IV-budget warning is due, see [`budget::defer`]), or:
//! - [`NODE_API`]: this value takes the Node-API path (an unknown token, a
//!   U+FFFD that may stand for a lone surrogate, an output that would not
//!   fit), which decides it exactly as before;
//! - [`FAILED`]: the call failed; [`take_error`] holds its coded error.

use std::cell::RefCell;
use std::ptr;

use ale_core::context::Context;
use ale_core::text::Opened;
use ale_core::Rings;

use super::last::{Remembered, LAST};
use super::registry::{Registry, CONTEXTS, RINGS};
use crate::budget;
use crate::error::{guard, to_js, Result};
use crate::global_ring::with_global;
use crate::js::text::holds_replacement_character;
use crate::scratch::Buffers;

/// The value takes the Node-API path.
pub const NODE_API: i32 = -1;
/// The call failed with the error [`take_error`] returns.
pub const FAILED: i32 = -2;
/// The ring token of the process-wide ring.
const GLOBAL_RING: f64 = -1.0;
/// The token of a ring or context the registry has no room for: it names
/// nothing, so its calls take the Node-API path. Never the process-wide
/// ring's: a ring of its own would seal under the process-wide key.
pub const NO_TOKEN: f64 = -2.0;
const _: () = assert!(NO_TOKEN != GLOBAL_RING && NO_TOKEN < 0.0);

const ENCRYPT: i32 = 0;
const DECRYPT: i32 = 1;
// 2, encryptBinary, keeps the Node-API path (its pooled Buffers are cheaper).
const DECRYPT_BINARY: i32 = 3;

thread_local! {
    /// The error of this thread's last failed call, until it is thrown.
    static LAST_ERROR: RefCell<Option<napi::Error<&'static str>>> = const { RefCell::new(None) };
}

/// The error of this thread's last [`FAILED`] call.
pub fn take_error() -> Option<napi::Error<&'static str>> {
    LAST_ERROR.with(|e| e.borrow_mut().take())
}

/// What a call did.
enum Outcome {
    /// The output's length, whether it is ASCII, whether a warning is due.
    Done {
        len: usize,
        ascii: bool,
        warn: bool,
    },
    NodeApi,
}

/// Runs `op` on `len` bytes at `input` with the ring and context the tokens
/// name, writing the result to `cap` bytes at `output`.
///
/// # Safety
/// `input` must be valid for reads of `len` bytes, and for writes when `op`
/// is an encryption (the caller's own scratch memory, which is sealed in
/// place); `output` must be valid for writes of `cap` bytes. Neither may be
/// touched by anything else during the call. Bun's FFI guarantees this for
/// the typed arrays `prototype.js` passes.
#[no_mangle]
pub unsafe extern "C" fn ale_ffi(
    op: i32,
    ring: f64,
    context: f64,
    input: *mut u8,
    len: i32,
    output: *mut u8,
    cap: i32,
) -> i32 {
    let outcome = guard(|| {
        let (Ok(len), Ok(cap)) = (usize::try_from(len), usize::try_from(cap)) else {
            return Ok(Outcome::NodeApi);
        };
        LAST.with(|cell| {
            let last = &mut *cell.borrow_mut();
            let Some(context) = remember(&mut last.context, &CONTEXTS, context) else {
                return Ok(Outcome::NodeApi);
            };
            let run = |ring: &Rings| {
                context.value().with(|b, ctx| {
                    // SAFETY: forwarded from the caller.
                    unsafe { run(op, ring, input, len, output, cap, b, ctx) }
                })
            };
            if ring == GLOBAL_RING {
                return with_global(run);
            }
            match remember(&mut last.ring, &RINGS, ring) {
                Some(ring) => run(ring.value()),
                None => Ok(Outcome::NodeApi),
            }
        })
    });
    // A plaintext this call did not seal (the Node-API path takes the
    // value from its string, or the call failed before the seal: no
    // process-wide ring) is wiped from the caller's scratch memory, as a
    // seal that fails wipes it.
    if op == ENCRYPT && !matches!(outcome, Ok(Outcome::Done { .. })) && !input.is_null() {
        if let Ok(len) = usize::try_from(len) {
            // SAFETY: writable for `len` bytes for an encryption, as the contract of `ale_ffi` says.
            zeroize::Zeroize::zeroize(unsafe { slice_mut(input, len) });
        }
    }
    match outcome {
        Ok(Outcome::NodeApi) => NODE_API,
        Ok(Outcome::Done { len, ascii, warn }) => match i32::try_from(len << 2) {
            Ok(n) => n | i32::from(ascii) | (i32::from(warn) << 1),
            Err(_) => NODE_API,
        },
        Err(error) => {
            LAST_ERROR.with(|e| *e.borrow_mut() = Some(error));
            FAILED
        }
    }
}

/// Wipes `len` bytes at `data`: the plaintext a decrypt left in the
/// caller's memory, once the caller has made its string. A call here costs
/// less than the typed array's own `fill` on Bun (docs/performance.md, "Bun:
/// the bun:ffi path").
///
/// # Safety
/// `data` must be valid for writes of `len` bytes and not otherwise borrowed
/// during the call, as `output` is for [`ale_ffi`]; or `len` must be 0 or
/// less, or `data` null.
#[no_mangle]
pub unsafe extern "C" fn ale_ffi_wipe(data: *mut u8, len: i32) {
    let Ok(len) = usize::try_from(len) else {
        return;
    };
    if data.is_null() {
        return;
    }
    // SAFETY: forwarded from the caller.
    zeroize::Zeroize::zeroize(unsafe { slice_mut(data, len) });
}

/// What `token` names in `registry`, through what this thread remembers in
/// `slot`, which a miss replaces (with nothing, when the token names
/// nothing).
fn remember<'a, T>(
    slot: &'a mut Option<Remembered<T>>,
    registry: &Registry<T>,
    token: f64,
) -> Option<&'a Remembered<T>> {
    // Read before the lookup, so a removal after it makes the memo stale.
    let removals = registry.removals();
    if !slot.as_ref().is_some_and(|r| r.holds(token, removals)) {
        *slot = registry
            .get(token)
            .map(|value| Remembered::new(token, removals, value));
    }
    slot.as_ref()
}

/// # Safety
/// As [`ale_ffi`].
#[allow(clippy::too_many_arguments)]
unsafe fn run(
    op: i32,
    ring: &Rings,
    input: *mut u8,
    len: usize,
    output: *mut u8,
    cap: usize,
    b: &mut Buffers,
    ctx: &Context<'_>,
) -> Result<Outcome> {
    if (len > 0 && input.is_null()) || (cap > 0 && output.is_null()) {
        return Ok(Outcome::NodeApi);
    }
    // SAFETY: the caller's memory, as the contract of `ale_ffi` says.
    let output = unsafe { slice_mut(output, cap) };
    match op {
        ENCRYPT => {
            // SAFETY: as above; the caller's own scratch, sealed in place.
            let plaintext = unsafe { slice_mut(input, len) };
            // The encoder turned any lone surrogate into U+FFFD: only the
            // Node-API path, which reads the string itself, can tell.
            // Either way the caller's copy of the plaintext is wiped (by
            // the seal, when it fails).
            if holds_replacement_character(plaintext) {
                zeroize::Zeroize::zeroize(plaintext);
                return Ok(Outcome::NodeApi);
            }
            // An envelope longer than the room given would be sealed here
            // and then again on the Node-API path: that path takes it unsealed.
            let Some(count) = ring
                .seal_within(plaintext, ctx, &mut b.aad, &mut b.out, output.len())
                .map_err(to_js)?
            else {
                return Ok(Outcome::NodeApi);
            };
            let warn = budget::defer(ring, count);
            copy_out(&b.out, output, true, warn)
        }
        DECRYPT => {
            // SAFETY: as above; read only.
            let envelope = unsafe { slice_mut(input, len) };
            // Over the ring's maximum, or not ASCII (so no envelope, whose
            // parts the Node-API path measures in characters, not bytes):
            // that path refuses it, with the code and words it calls for.
            if ring.check_envelope_len(len).is_err() || !envelope.is_ascii() {
                return Ok(Outcome::NodeApi);
            }
            let opened = ring
                .open(&envelope[..], ctx, &mut b.aad, &mut b.out)
                .map_err(to_js)?;
            plaintext_out(b, opened, output)
        }
        DECRYPT_BINARY => {
            // The bytes are the caller's Uint8Array, which may sit on a
            // SharedArrayBuffer: copied out through a raw pointer, never
            // borrowed.
            b.input.clear();
            ale_core::scratch::reserve(&mut b.input, len);
            // SAFETY: `input` is readable for `len` bytes; `b.input` has room.
            unsafe {
                if len > 0 {
                    ptr::copy_nonoverlapping(input, b.input.as_mut_ptr(), len);
                }
                b.input.set_len(len);
            }
            let opened = ring
                .open_binary(&b.input, ctx, &mut b.aad, &mut b.out)
                .map_err(to_js)?;
            plaintext_out(b, opened, output)
        }
        _ => Ok(Outcome::NodeApi),
    }
}

/// The plaintext in `b.out` (which the core checked is UTF-8) copied to
/// `output`.
fn plaintext_out(b: &Buffers, opened: Opened, output: &mut [u8]) -> Result<Outcome> {
    copy_out(&b.out, output, opened.ascii, false)
}

fn copy_out(result: &[u8], output: &mut [u8], ascii: bool, warn: bool) -> Result<Outcome> {
    match output.get_mut(..result.len()) {
        Some(room) => {
            room.copy_from_slice(result);
            Ok(Outcome::Done {
                len: result.len(),
                ascii,
                warn,
            })
        }
        None => Ok(Outcome::NodeApi),
    }
}

/// `len` bytes at `data` (an empty slice for none).
///
/// # Safety
/// `data` must be valid for reads and writes of `len` bytes, unaliased for
/// the returned lifetime, or `len` must be 0.
unsafe fn slice_mut<'a>(data: *mut u8, len: usize) -> &'a mut [u8] {
    if len == 0 {
        return &mut [];
    }
    // SAFETY: forwarded from the caller.
    unsafe { std::slice::from_raw_parts_mut(data, len) }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::{remember, Registry};

    #[test]
    fn a_remembered_value_names_nothing_once_its_token_is_removed() {
        static VALUES: Registry<u32> = Registry::new();
        let mut slot = None;
        let value = |slot: &Option<super::Remembered<u32>>| slot.as_ref().map(|r| *r.value());
        let a = VALUES.insert(Arc::new(1)).expect("a slot");
        let old = a.number();
        assert_eq!(
            remember(&mut slot, &VALUES, old).map(|r| *r.value()),
            Some(1)
        );
        // A hit changes nothing.
        assert_eq!(
            remember(&mut slot, &VALUES, old).map(|r| *r.value()),
            Some(1)
        );
        drop(a);
        // The slot is reused under its next generation.
        let b = VALUES.insert(Arc::new(2)).expect("a slot");
        let new = b.number();
        assert_ne!(old, new);
        assert!(remember(&mut slot, &VALUES, old).is_none());
        assert_eq!(value(&slot), None, "a miss that names nothing forgets");
        assert_eq!(
            remember(&mut slot, &VALUES, new).map(|r| *r.value()),
            Some(2)
        );
        // Made-up tokens: the next generation, NaN, negative, fractional.
        for forged in [new + 1.0, f64::NAN, -1.0, new + 0.5] {
            assert!(remember(&mut slot, &VALUES, forged).is_none(), "{forged}");
        }
        // Removed while remembered, with nothing reusing the slot.
        assert_eq!(
            remember(&mut slot, &VALUES, new).map(|r| *r.value()),
            Some(2)
        );
        drop(b);
        assert!(remember(&mut slot, &VALUES, new).is_none());
    }

    #[test]
    fn the_wipe_zeroes_the_bytes_it_is_given_and_no_others() {
        let mut memory = [7u8; 8];
        // SAFETY: `memory` is valid for writes of 5 bytes from index 1.
        unsafe { super::ale_ffi_wipe(memory.as_mut_ptr().add(1), 5) };
        assert_eq!(memory, [7, 0, 0, 0, 0, 0, 7, 7]);
        let mut memory = [7u8; 4];
        for len in [0, -1, i32::MIN] {
            // SAFETY: a length of 0 or less writes nothing.
            unsafe { super::ale_ffi_wipe(memory.as_mut_ptr(), len) };
        }
        // SAFETY: a null pointer writes nothing.
        unsafe { super::ale_ffi_wipe(std::ptr::null_mut(), 4) };
        assert_eq!(memory, [7; 4]);
    }
}
