//! A ring's column token keys (search/tokens.rs), kept once derived.
//!
//! Deriving one is an HKDF-SHA-256 and an AES-256 key schedule, as much
//! work as the trigrams of a short text, and every `searchTokens`,
//! `searchQuery` and `rangeTokens` call needs one, all on the same few
//! columns (docs/performance.md, "Search tokens, per value"). So a ring
//! keeps the last [`CAPACITY`] it derived. They are key material of the
//! same standing as the blind-index key they come from, which the ring
//! holds anyway: they live no longer than the ring, and are wiped when it
//! drops (the `aes` crate's `zeroize` feature, and `ColumnTokens`' Drop).

use std::sync::{Arc, Mutex};

use super::tokens::ColumnTokens;
use crate::context::{Context, ContextBuf};

/// The most keys a ring keeps, one per (secret, tenant, collection, field):
/// a CMS searches a handful of fields per collection, and a ring of
/// tenants keeps a ring per tenant. Past that, the least recently used
/// makes room.
pub const CAPACITY: usize = 16;

struct Entry {
    secret: usize,
    context: ContextBuf,
    tokens: Arc<ColumnTokens>,
}

/// The kept keys, most recently used last.
#[derive(Default)]
pub struct ColumnKeys {
    entries: Mutex<Vec<Entry>>,
}

impl ColumnKeys {
    /// The token key of `ctx`'s column under secret `secret`, from
    /// `derive` the first time.
    pub fn get_or_derive<E>(
        &self,
        secret: usize,
        ctx: &Context<'_>,
        derive: impl FnOnce() -> Result<ColumnTokens, E>,
    ) -> Result<Arc<ColumnTokens>, E> {
        // A poisoned lock (a panic in `derive` while it was held) only
        // costs the cache: derive, keep nothing.
        let Ok(mut entries) = self.entries.lock() else {
            return derive().map(Arc::new);
        };
        let parts = ctx.parts();
        if let Some(at) = entries
            .iter()
            .position(|e| e.secret == secret && e.context.as_context().parts() == parts)
        {
            let tokens = Arc::clone(&entries[at].tokens);
            let used = entries.remove(at);
            entries.push(used);
            return Ok(tokens);
        }
        let tokens = Arc::new(derive()?);
        if entries.len() == CAPACITY {
            entries.remove(0);
        }
        entries.push(Entry {
            secret,
            context: ContextBuf::from(*ctx),
            tokens: Arc::clone(&tokens),
        });
        Ok(tokens)
    }

    /// How many keys are kept.
    pub fn len(&self) -> usize {
        self.entries.lock().map_or(0, |e| e.len())
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::{ColumnKeys, CAPACITY};
    use crate::context::Context;
    use crate::search::tokens::{ColumnTokens, Kind};

    #[test]
    fn a_column_is_derived_once_and_each_column_gets_its_own() {
        let keys = ColumnKeys::default();
        let mut derived = 0;
        let mut token = |t: &str, f: &str, secret: u8| {
            let ctx = Context::new(t, "users", f).expect("valid");
            let column = keys
                .get_or_derive::<()>(usize::from(secret), &ctx, || {
                    derived += 1;
                    Ok(ColumnTokens::new(&[secret; 32], &ctx))
                })
                .expect("derived");
            column.token(Kind::Word, b"muller")
        };
        let first = token("acme", "name", 0);
        assert_eq!(token("acme", "name", 0), first);
        assert_ne!(token("acme", "email", 0), first);
        assert_ne!(token("globex", "name", 0), first);
        assert_ne!(token("acme", "name", 1), first);
        assert_eq!(derived, 4);
    }

    #[test]
    fn the_least_recently_used_makes_room() {
        let keys = ColumnKeys::default();
        let names: Vec<String> = (0..=CAPACITY).map(|i| format!("f{i}")).collect();
        let derived = std::cell::Cell::new(0);
        // whether `f`'s key had to be derived
        let get = |f: &str| {
            let before = derived.get();
            let ctx = Context::new("acme", "users", f).expect("valid");
            keys.get_or_derive::<()>(0, &ctx, || {
                derived.set(derived.get() + 1);
                Ok(ColumnTokens::new(&[1; 32], &ctx))
            })
            .expect("derived");
            derived.get() > before
        };
        for name in &names {
            assert!(get(name), "{name} is new");
        }
        assert_eq!(keys.len(), CAPACITY);
        // names[0] made room for names[CAPACITY]
        assert!(!get(&names[CAPACITY]));
        assert!(get(&names[0]), "evicted");
        // that evicted names[1]; a hit on names[2] makes names[3] the next to go
        assert!(!get(&names[2]));
        assert!(get(&names[1]), "evicted");
        assert!(!get(&names[2]), "used, so kept");
        assert!(get(&names[3]), "the least recently used, evicted");
        assert_eq!(keys.len(), CAPACITY);
    }

    #[test]
    fn a_failed_derivation_keeps_nothing() {
        let keys = ColumnKeys::default();
        let ctx = Context::new("acme", "users", "name").expect("valid");
        assert_eq!(
            keys.get_or_derive(0, &ctx, || Err("no key")).err(),
            Some("no key")
        );
        assert!(keys.is_empty());
    }
}
