//! The ring of tenants ([`KeyRing::for_tenants`]): one ring holding many
//! tenants' keyed rings, each call handed to the ring of its context's
//! tenant.

use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, RwLock};

use super::{KeyRing, RingOptions, TenantMap, DEFAULT_WARN_AT};
use crate::context::Context;
use crate::error::{AleError, Result};

impl KeyRing {
    /// A ring of tenants, holding none yet: every call goes to the keyed
    /// ring of its context's tenant ([`KeyRing::set_tenant`]).
    pub fn for_tenants(options: RingOptions) -> Self {
        Self {
            keys: Vec::new(),
            secrets: 0,
            options,
            warn_at: AtomicU64::new(DEFAULT_WARN_AT),
            warned: AtomicBool::new(false),
            tenants: Some(RwLock::new(TenantMap::default())),
            id_texts: Vec::new(),
        }
    }

    /// Makes `ring` (keyed, with this ring's IV length) the ring of `tenant`,
    /// replacing the one it had. `ALE_INVALID_INPUT` on a ring that is not of
    /// tenants, or for a `ring` that does not fit.
    pub fn set_tenant(&self, tenant: &str, ring: Arc<KeyRing>) -> Result<()> {
        let tenants = self.tenant_map()?;
        Context::new(tenant, "-", "-")?;
        if ring.tenants.is_some() || ring.keys.first().and_then(|k| k.id).is_none() {
            return Err(AleError::InvalidInput(
                "a tenant's ring must have key ids (options.keyIds)".into(),
            ));
        }
        if ring.options.iv_length != self.options.iv_length {
            return Err(AleError::InvalidInput(
                "a tenant's ring must have the IV length of the ring of tenants".into(),
            ));
        }
        tenants
            .write()
            .map_err(|_| AleError::Internal)?
            .insert(tenant.into(), ring);
        Ok(())
    }

    /// Drops the ring of `tenant`: its keys are wiped once no call is using
    /// them. Returns whether it held one.
    pub fn remove_tenant(&self, tenant: &str) -> Result<bool> {
        let removed = self
            .tenant_map()?
            .write()
            .map_err(|_| AleError::Internal)?
            .remove(tenant);
        Ok(removed.is_some())
    }

    /// How many tenants a ring of tenants holds; 0 for any other ring.
    pub fn tenant_count(&self) -> usize {
        self.tenants
            .as_ref()
            .and_then(|t| t.read().ok().map(|m| m.len()))
            .unwrap_or(0)
    }

    pub(super) fn tenant_map(&self) -> Result<&RwLock<TenantMap>> {
        self.tenants.as_ref().ok_or_else(|| {
            AleError::InvalidInput("this ring is not a ring of tenants (KeyRing.forTenants)".into())
        })
    }

    /// For a ring of tenants, `op` on the ring of the context's tenant;
    /// `None` for any other ring.
    ///
    /// The read lock is held for the whole of `op`: an `Arc` clone instead
    /// would add two atomic read-modify-writes to every call, a measurable
    /// share of a 256 B one (docs/performance.md, "Keys per tenant"). A long
    /// `op` holding it would delay `set_tenant`, so callers that run long
    /// work off the calling thread take the tenant's ring first
    /// ([`KeyRing::resolve`]) and run on that.
    pub(super) fn delegate<R>(
        &self,
        ctx: &Context<'_>,
        op: impl FnOnce(&KeyRing) -> Result<R>,
    ) -> Option<Result<R>> {
        let tenants = self.tenants.as_ref()?;
        let Ok(map) = tenants.read() else {
            return Some(Err(AleError::Internal));
        };
        Some(match map.get(ctx.parts()[0]) {
            Some(ring) => op(ring),
            None => Err(AleError::KeyNotLoaded),
        })
    }

    /// The ring that serves `ctx`: for a ring of tenants, the ring of the
    /// context's tenant (`ALE_KEY_NOT_LOADED` when it holds none); any other
    /// ring serves every context itself.
    pub fn resolve(self: &Arc<Self>, ctx: &Context<'_>) -> Result<Arc<KeyRing>> {
        let Some(tenants) = self.tenants.as_ref() else {
            return Ok(Arc::clone(self));
        };
        let map = tenants.read().map_err(|_| AleError::Internal)?;
        map.get(ctx.parts()[0])
            .cloned()
            .ok_or(AleError::KeyNotLoaded)
    }
}
