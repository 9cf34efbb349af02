//! A ring of tenants: one keyed ring per tenant, added and removed while it
//! is in use, each call served by the ring of its context's tenant
//! (`ALE_KEY_NOT_LOADED` for a tenant it does not hold). One such map serves
//! every tenant of a key store, so a loaded tenant costs its keys and a map
//! entry, not an object of its own.

use std::sync::{Arc, RwLock};

use crate::context::Context;
use crate::error::{AleError, Result};
use crate::keys::{KeyRing, RingOptions};

/// The rings of tenants, by tenant. foldhash (randomly seeded per process)
/// instead of SipHash: the lookup is on every call, and tenant ids come from
/// the application, not from whoever sends requests.
type TenantMap = foldhash::HashMap<Box<str>, Arc<KeyRing>>;

/// Each tenant's keyed ring, all with the same IV length.
pub struct TenantRings {
    options: RingOptions,
    map: RwLock<TenantMap>,
}

impl TenantRings {
    /// A ring of tenants holding none yet. `options` gives the IV length
    /// every tenant's ring must have and the longest envelope read.
    pub fn new(options: RingOptions) -> Self {
        TenantRings {
            options,
            map: RwLock::new(TenantMap::default()),
        }
    }

    pub fn options(&self) -> RingOptions {
        self.options
    }

    /// Makes `ring` (keyed, with this ring's IV length) the ring of `tenant`,
    /// replacing the one it had. `ALE_INVALID_INPUT` for a `ring` that does
    /// not fit, `ALE_INVALID_CONTEXT` for a tenant id no context can hold.
    pub fn set(&self, tenant: &str, ring: Arc<KeyRing>) -> Result<()> {
        Context::new(tenant, "-", "-")?;
        if !ring.is_keyed() {
            return Err(AleError::InvalidInput(
                "a tenant's ring must have key ids (options.keyIds)".into(),
            ));
        }
        if ring.options().iv_length != self.options.iv_length {
            return Err(AleError::InvalidInput(
                "a tenant's ring must have the IV length of the ring of tenants".into(),
            ));
        }
        self.map
            .write()
            .map_err(|_| AleError::Internal)?
            .insert(tenant.into(), ring);
        Ok(())
    }

    /// Drops the ring of `tenant`: its keys are wiped once no call is using
    /// them. Returns whether it held one.
    pub fn remove(&self, tenant: &str) -> Result<bool> {
        let removed = self
            .map
            .write()
            .map_err(|_| AleError::Internal)?
            .remove(tenant);
        Ok(removed.is_some())
    }

    /// How many tenants it holds.
    pub fn len(&self) -> usize {
        self.map.read().map(|m| m.len()).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `op` on the ring of the context's tenant.
    ///
    /// The read lock is held for the whole of `op`: an `Arc` clone instead
    /// would add two atomic read-modify-writes to every call, a measurable
    /// share of a 256 B one (docs/performance.md, "Keys per tenant"). A long
    /// `op` holding it would delay [`TenantRings::set`], so callers that run
    /// long work off the calling thread take the tenant's ring first
    /// ([`TenantRings::get`]) and run on that.
    pub fn serve<R>(&self, ctx: &Context<'_>, op: impl FnOnce(&KeyRing) -> Result<R>) -> Result<R> {
        let map = self.map.read().map_err(|_| AleError::Internal)?;
        match map.get(ctx.parts()[0]) {
            Some(ring) => op(ring),
            None => Err(AleError::KeyNotLoaded),
        }
    }

    /// The ring of the context's tenant (`ALE_KEY_NOT_LOADED` when it holds
    /// none).
    pub fn get(&self, ctx: &Context<'_>) -> Result<Arc<KeyRing>> {
        let map = self.map.read().map_err(|_| AleError::Internal)?;
        map.get(ctx.parts()[0])
            .cloned()
            .ok_or(AleError::KeyNotLoaded)
    }
}
