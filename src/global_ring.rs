//! The process-wide ring that `initKeyRing()` sets and the process-wide
//! `encrypt`/`decrypt` use, shared by every worker thread.

use std::sync::{Arc, RwLock};

use ale_core::error::AleError;
use ale_core::Rings;

use crate::error::{to_js, Result};

static GLOBAL_RING: RwLock<Option<Arc<Rings>>> = RwLock::new(None);

/// Runs `f` with the process-wide ring; `ALE_NOT_INITIALIZED` before one
/// is set. The lock is not held while `f` runs ([`global`]).
pub fn with_global<T>(f: impl FnOnce(&Rings) -> Result<T>) -> Result<T> {
    f(&*global()?)
}

/// The process-wide ring itself, for a call that may run JS before it is
/// done with it (an options object's getters, a Buffer's making): that JS
/// may call `initKeyRing`, whose write lock would wait for this thread's
/// read lock for ever, so the lock is let go first, and the call finishes
/// on the ring it began with. `ALE_NOT_INITIALIZED` before one is set.
fn global() -> Result<Arc<Rings>> {
    GLOBAL_RING
        .read()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .clone()
        .ok_or_else(|| to_js(AleError::NotInitialized))
}

/// Sets (or replaces) the process-wide ring.
pub fn set(ring: Arc<Rings>) {
    *GLOBAL_RING
        .write()
        .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(ring);
}

/// Whether a process-wide ring is set.
pub fn is_set() -> bool {
    GLOBAL_RING
        .read()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .is_some()
}
