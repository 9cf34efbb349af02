//! Tokens for rings and contexts, the only way a bun:ffi call names one.
//!
//! A token is a number: a slot of the registry and the generation that slot
//! had when the value was registered. Every lookup checks both, so a stale
//! token (its value unregistered, its slot reused) or a forged one names
//! nothing, and JS never holds a pointer. A slot's first generation is
//! random, so a made-up token almost surely names nothing either. A registration lives as long as
//! the handle that owns it (an external the engine collects), and dropping
//! it empties the slot and moves its generation on, and moves the
//! registry's removal count, which lets a thread reuse its last lookup
//! (`last.rs`) while the count stays.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use ale_core::Rings;

use super::last;
use crate::scratch::OwnedContext;

/// Rings named by bun:ffi calls.
pub static RINGS: Registry<Rings> = Registry::new();
/// Contexts named by bun:ffi calls.
pub static CONTEXTS: Registry<OwnedContext> = Registry::new();

/// Most slots a registry hands out, so that slot and generation fit a
/// double exactly (what the token is in JS).
const MAX_SLOTS: usize = 1 << 20;
const GENERATIONS: f64 = 4_294_967_296.0;

struct Slot<T> {
    generation: u32,
    value: Option<Arc<T>>,
}

/// Values registered under tokens.
pub struct Registry<T> {
    slots: RwLock<Vec<Slot<T>>>,
    free: Mutex<Vec<u32>>,
    /// How many values were removed so far.
    removals: AtomicU64,
}

impl<T> Registry<T> {
    pub const fn new() -> Self {
        Registry {
            slots: RwLock::new(Vec::new()),
            free: Mutex::new(Vec::new()),
            removals: AtomicU64::new(0),
        }
    }

    /// How many values were removed so far. Read before a lookup, it dates
    /// the lookup: while it stays, the token names what the lookup found.
    pub fn removals(&self) -> u64 {
        self.removals.load(Ordering::Acquire)
    }

    /// Registers `value`; `None` when every slot is taken.
    pub fn insert(&'static self, value: Arc<T>) -> Option<Token<T>> {
        let mut slots = self.slots.write().unwrap_or_else(|p| p.into_inner());
        let reused = self.free.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let slot = match reused {
            Some(slot) => slot,
            None if slots.len() < MAX_SLOTS => {
                slots.push(Slot {
                    generation: first_generation(),
                    value: None,
                });
                u32::try_from(slots.len() - 1).ok()?
            }
            None => return None,
        };
        let entry = slots.get_mut(slot as usize)?;
        entry.value = Some(value);
        Some(Token {
            registry: self,
            slot,
            generation: entry.generation,
        })
    }

    /// The value `token` names, if it is still registered under it.
    pub fn get(&self, token: f64) -> Option<Arc<T>> {
        if !(token >= 0.0 && token < MAX_SLOTS as f64 * GENERATIONS && token.fract() == 0.0) {
            return None;
        }
        // A whole number in range, checked above: exact.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let bits = token as u64;
        let (slot, generation) = (bits >> 32, bits & 0xffff_ffff);
        let slots = self.slots.read().unwrap_or_else(|p| p.into_inner());
        let entry = slots.get(usize::try_from(slot).ok()?)?;
        if u64::from(entry.generation) != generation {
            return None;
        }
        entry.value.clone()
    }
}

/// A new slot's first generation, unpredictable, so that a made-up token
/// (0, 1, …) names nothing. Not a secret: code that can call `ale_ffi` can
/// read the process's memory through bun:ffi anyway.
fn first_generation() -> u32 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u8(0);
    // The low half of a keyed hash.
    #[allow(clippy::cast_possible_truncation)]
    let generation = hasher.finish() as u32;
    generation
}

/// A registration. Dropping it unregisters the value: its token then names
/// nothing.
pub struct Token<T: 'static> {
    registry: &'static Registry<T>,
    slot: u32,
    generation: u32,
}

impl<T> Token<T> {
    /// The token as JS holds it.
    pub fn number(&self) -> f64 {
        f64::from(self.slot) * GENERATIONS + f64::from(self.generation)
    }
}

impl<T> Drop for Token<T> {
    fn drop(&mut self) {
        let removed = {
            let mut slots = self
                .registry
                .slots
                .write()
                .unwrap_or_else(|p| p.into_inner());
            match slots.get_mut(self.slot as usize) {
                Some(entry) if entry.generation == self.generation => {
                    entry.generation = entry.generation.wrapping_add(1);
                    // What a thread remembers of this slot is stale from now.
                    self.registry.removals.fetch_add(1, Ordering::AcqRel);
                    self.registry
                        .free
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .push(self.slot);
                    entry.value.take()
                }
                _ => None,
            }
        };
        // Dropped outside the lock, with what this thread remembers.
        drop(removed);
        last::forget();
    }
}
