//! The ring and the context this thread's last bun:ffi call named, kept so
//! that the next call naming the same tokens finds them without the
//! registries' locks and reference counts: eight atomic read-modify-writes
//! a call (their cost: docs/performance.md, "Figures behind code
//! comments").
//!
//! A remembered value is used only while its registry's removal count is
//! the one read before it was looked up. A slot's generation moves only
//! when its value is removed, and every removal moves the count, so an
//! unchanged count means the token still names the value remembered for it.
//! A removal on another thread after the count is read is the same race as
//! one after a lookup: the call finishes with the value it holds.
//!
//! What is remembered is held (an `Arc`), so a ring whose handle was
//! collected could stay in memory until this thread's next bun:ffi call or
//! its end. A registry removal calls [`forget`], on the thread that owned
//! the handle, which drops it at once.

use std::cell::RefCell;
use std::sync::Arc;

use ale_core::Rings;

use crate::scratch::OwnedContext;

/// One remembered lookup: the token, the removal count it is valid at, and
/// the value.
pub struct Remembered<T> {
    token: f64,
    removals: u64,
    value: Arc<T>,
}

impl<T> Remembered<T> {
    pub fn new(token: f64, removals: u64, value: Arc<T>) -> Self {
        Remembered {
            token,
            removals,
            value,
        }
    }

    /// Whether this was remembered for `token` at `removals`. Tokens are
    /// whole numbers, and a NaN equals nothing.
    pub fn holds(&self, token: f64, removals: u64) -> bool {
        self.token == token && self.removals == removals
    }

    pub fn value(&self) -> &T {
        &self.value
    }
}

/// A thread's remembered ring (a ring handle's, never the process-wide
/// one) and context.
#[derive(Default)]
pub struct Last {
    pub ring: Option<Remembered<Rings>>,
    pub context: Option<Remembered<OwnedContext>>,
}

thread_local! {
    pub static LAST: RefCell<Last> = const {
        RefCell::new(Last {
            ring: None,
            context: None,
        })
    };
}

/// Drops what this thread remembers. Safe at any time: while a call holds
/// it (it is then left, and its count is already stale), or while the
/// thread is ending.
pub fn forget() {
    let _ = LAST.try_with(|cell| {
        if let Ok(mut last) = cell.try_borrow_mut() {
            *last = Last::default();
        }
    });
}
