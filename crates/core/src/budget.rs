//! The IV budget of a key: how many values one key may seal with random IVs,
//! and the one-time warning a ring gives as its primary approaches it.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// NIST SP 800-38D: at most 2^32 encryptions under one key with random IVs.
pub const IV_BUDGET: u64 = 1 << 32;
/// Default count at which the addon warns: a quarter of the budget.
pub const DEFAULT_WARN_AT: u64 = IV_BUDGET / 4;

/// When to warn about the encryption count of a ring's primary key, and
/// whether that warning was given.
#[derive(Debug)]
pub struct IvBudget {
    warn_at: AtomicU64,
    warned: AtomicBool,
}

impl Default for IvBudget {
    fn default() -> Self {
        IvBudget {
            warn_at: AtomicU64::new(DEFAULT_WARN_AT),
            warned: AtomicBool::new(false),
        }
    }
}

impl IvBudget {
    /// The primary key's encryption count at which callers should warn.
    pub fn warn_at(&self) -> u64 {
        self.warn_at.load(Ordering::Relaxed)
    }

    /// Sets the count at which [`IvBudget::should_warn`] first says yes, and
    /// re-arms the warning.
    pub fn set_warn_at(&self, count: u64) {
        self.warn_at.store(count, Ordering::Relaxed);
        self.warned.store(false, Ordering::Relaxed);
    }

    /// True exactly once: for the first encryption count, as a seal returns
    /// it, that reaches or passes the threshold, whichever path (single,
    /// batch, async) produced it.
    pub fn should_warn(&self, count: u64) -> bool {
        count >= self.warn_at() && !self.warned.swap(true, Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::IvBudget;

    #[test]
    fn the_warning_fires_once_at_or_past_the_threshold() {
        let budget = IvBudget::default();
        budget.set_warn_at(3);
        assert!(!budget.should_warn(2));
        // a batch may jump past the threshold without hitting it exactly
        assert!(budget.should_warn(5));
        assert!(!budget.should_warn(6));
        budget.set_warn_at(10);
        assert!(budget.should_warn(10));
        assert!(!budget.should_warn(10));
    }
}
