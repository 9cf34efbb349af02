//! What a binding's ring object holds: one ring ([`KeyRing`]) or a ring of
//! tenants ([`TenantRings`]), with the IV-budget warning of the object.
//!
//! The hot operations start here, and each is one match: the ring itself,
//! or the ring of the context's tenant. Their bodies are the ring's
//! (`keys.rs`, `text.rs`); nothing here seals or opens.

use std::sync::Arc;

use crate::binary;
use crate::budget::IvBudget;
use crate::context::Context;
use crate::envelope::{self, CodeUnit};
use crate::error::{AleError, Result};
use crate::keys::{KeyRing, RingOptions, BLIND_INDEX_LEN};
use crate::tenants::TenantRings;
use crate::text::Opened;

/// Which rings serve the calls.
enum Serves {
    One(Arc<KeyRing>),
    Tenants(TenantRings),
}

/// One ring, or a ring per tenant, behind one set of operations.
pub struct Rings {
    serves: Serves,
    budget: IvBudget,
}

impl Rings {
    /// Calls served by `ring`.
    pub fn one(ring: KeyRing) -> Self {
        Rings {
            serves: Serves::One(Arc::new(ring)),
            budget: IvBudget::default(),
        }
    }

    /// Calls served by the ring of their context's tenant, none held yet.
    pub fn of_tenants(options: RingOptions) -> Self {
        Rings {
            serves: Serves::Tenants(TenantRings::new(options)),
            budget: IvBudget::default(),
        }
    }

    /// The one ring; `None` for a ring of tenants.
    pub fn ring(&self) -> Option<&KeyRing> {
        match &self.serves {
            Serves::One(ring) => Some(ring),
            Serves::Tenants(_) => None,
        }
    }

    /// The ring of tenants; `ALE_INVALID_INPUT` for one ring.
    pub fn tenants(&self) -> Result<&TenantRings> {
        match &self.serves {
            Serves::Tenants(tenants) => Ok(tenants),
            Serves::One(_) => Err(AleError::InvalidInput(
                "this ring is not a ring of tenants (KeyRing.forTenants)".into(),
            )),
        }
    }

    /// The warning about the primary key's encryption count.
    pub fn budget(&self) -> &IvBudget {
        &self.budget
    }

    pub fn options(&self) -> RingOptions {
        match &self.serves {
            Serves::One(ring) => ring.options(),
            Serves::Tenants(tenants) => tenants.options(),
        }
    }

    /// Bytes of a binary envelope's header as these rings write it (a
    /// tenant's ring is keyed).
    pub fn binary_header_len(&self) -> usize {
        match &self.serves {
            Serves::One(ring) => ring.binary_header_len(),
            Serves::Tenants(t) => binary::header_len(t.options().iv_length, true),
        }
    }

    /// `ALE_ENVELOPE_TOO_LARGE` for a stored value longer than the maximum;
    /// the binding asks before copying one.
    pub fn check_envelope_len(&self, chars: usize) -> Result<()> {
        crate::keys::check_envelope_len(&self.options(), chars)
    }

    /// `op` on the ring that serves `ctx`.
    #[inline]
    pub fn serve<R>(&self, ctx: &Context<'_>, op: impl FnOnce(&KeyRing) -> Result<R>) -> Result<R> {
        match &self.serves {
            Serves::One(ring) => op(ring),
            Serves::Tenants(tenants) => tenants.serve(ctx, op),
        }
    }

    /// The ring that serves `ctx`, for work that runs off the calling thread
    /// ([`TenantRings::serve`] says why).
    pub fn resolve(&self, ctx: &Context<'_>) -> Result<Arc<KeyRing>> {
        match &self.serves {
            Serves::One(ring) => Ok(Arc::clone(ring)),
            Serves::Tenants(tenants) => tenants.get(ctx),
        }
    }

    /// [`KeyRing::seal_into`] on the ring that serves `ctx`. A ring of
    /// tenants reads a value within its own maximum length as well as its
    /// tenant's, so it refuses to write a longer one (after the tenant's
    /// ring sealed it: the rings' maximums differ only where set so).
    #[inline]
    pub fn seal(
        &self,
        plaintext: &mut [u8],
        ctx: &Context<'_>,
        aad: &mut Vec<u8>,
        out: &mut Vec<u8>,
    ) -> Result<u64> {
        self.seal_within(plaintext, ctx, aad, out, usize::MAX)
            .map(|count| count.unwrap_or_default())
    }

    /// [`Rings::seal`] when the envelope is at most `room` characters, with
    /// one lookup of the tenant's ring; `None`, and `plaintext` untouched,
    /// when it would be longer (a caller whose output memory is that size).
    #[inline]
    pub fn seal_within(
        &self,
        plaintext: &mut [u8],
        ctx: &Context<'_>,
        aad: &mut Vec<u8>,
        out: &mut Vec<u8>,
        room: usize,
    ) -> Result<Option<u64>> {
        let count = self
            .serve(ctx, |r| {
                if r.envelope_len(plaintext.len()) > room {
                    return Ok(None);
                }
                r.seal_into(plaintext, ctx, aad, out).map(Some)
            })
            .inspect_err(|_| zeroize::Zeroize::zeroize(plaintext))?;
        if count.is_some() {
            self.check_sealed_len(out.len())
                .inspect_err(|_| out.clear())?;
        }
        Ok(count)
    }

    /// `ALE_ENVELOPE_TOO_LARGE` for an envelope of `len` characters that
    /// this ring's tenant's ring sealed but this ring would not read (see
    /// [`Rings::seal`]); nothing for one ring, which checked it itself.
    pub fn check_sealed_len(&self, len: usize) -> Result<()> {
        let max = self.options().max_envelope_len;
        if len > max {
            return Err(AleError::ValueTooLarge { max });
        }
        Ok(())
    }

    /// [`KeyRing::open_text`] on the ring that serves `ctx`.
    #[inline]
    pub fn open<C: CodeUnit>(
        &self,
        envelope: &[C],
        ctx: &Context<'_>,
        aad: &mut Vec<u8>,
        out: &mut Vec<u8>,
    ) -> Result<Opened> {
        self.check_before_lookup(envelope)?;
        self.serve(ctx, |r| r.open_text(envelope, ctx, aad, out))
    }

    /// [`KeyRing::open_into`] on the ring that serves `ctx`: the plaintext's
    /// bytes, whatever they are (what `keyIndex` needs: the caller wipes
    /// them), and the index of the key that opened it.
    pub fn open_bytes<C: CodeUnit>(
        &self,
        envelope: &[C],
        ctx: &Context<'_>,
        aad: &mut Vec<u8>,
        out: &mut Vec<u8>,
    ) -> Result<usize> {
        self.check_before_lookup(envelope)?;
        self.serve(ctx, |r| r.open_into(envelope, ctx, aad, out))
    }

    /// A ring of tenants refuses a value that is no envelope, or too long,
    /// before it looks for the tenant, as one ring does (whose open checks
    /// these itself).
    fn check_before_lookup<C: CodeUnit>(&self, envelope: &[C]) -> Result<()> {
        if let Serves::Tenants(_) = self.serves {
            envelope::check_version(envelope)?;
            self.check_envelope_len(envelope.len())?;
        }
        Ok(())
    }

    /// [`KeyRing::seal_binary`] on the ring that serves `ctx`.
    #[inline]
    pub fn seal_binary(&self, buf: &mut [u8], ctx: &Context<'_>, aad: &mut Vec<u8>) -> Result<u64> {
        self.serve(ctx, |r| r.seal_binary(buf, ctx, aad))
            .inspect_err(|_| zeroize::Zeroize::zeroize(buf))
    }

    /// [`KeyRing::open_binary_text`] on the ring that serves `ctx`.
    #[inline]
    pub fn open_binary(
        &self,
        bytes: &[u8],
        ctx: &Context<'_>,
        aad: &mut Vec<u8>,
        out: &mut Vec<u8>,
    ) -> Result<Opened> {
        self.serve(ctx, |r| r.open_binary_text(bytes, ctx, aad, out))
    }

    /// How many blind indexes a value has in `ctx`: one per secret of the
    /// ring that serves it.
    pub fn index_count(&self, ctx: &Context<'_>) -> Result<usize> {
        self.serve(ctx, |r| Ok(r.secret_count()))
    }

    /// [`KeyRing::blind_index`] on the ring that serves `ctx`.
    pub fn blind_index(
        &self,
        index: usize,
        value: &[u8],
        ctx: &Context<'_>,
        aad: &mut Vec<u8>,
    ) -> Result<[u8; BLIND_INDEX_LEN]> {
        self.serve(ctx, |r| r.blind_index(index, value, ctx, aad))
    }
}

#[cfg(test)]
mod tests;
