//! The thread-pool form of `encrypt` and `decrypt` (`encryptAsync`,
//! `decryptAsync`). The value is copied out of the JS heap on the main
//! thread; `compute` runs the core's seal and open (`ale_core::text`) on
//! the tenant's ring, taken on the main thread.

use std::sync::Arc;

use ale_core::context::Context;
use ale_core::envelope;
use ale_core::error::AleError;
use ale_core::{KeyRing, Rings};
use napi::bindgen_prelude::AsyncTask;
use napi::{sys, Env, Task};
use zeroize::Zeroizing;

use crate::budget;
use crate::error::{coded_rejection, engine_refused, forced_compute_panic_point, to_js, Result};
use crate::js::raw::Created;
use crate::js::text::{ascii_to_js, read_envelope_utf16, read_utf8, text_to_js};
use crate::scratch::with_context;

/// Which way a job goes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Seal,
    Open,
}

/// An encryption or decryption on the thread pool.
pub struct Job {
    /// The ring called: its IV-budget warning follows a seal.
    ring: Arc<Rings>,
    /// The ring that does the work: for a ring of tenants, the tenant's
    /// ring, taken when the job is made, so that the work on the pool holds
    /// no lock of the ring of tenants (`None` when it holds none: the
    /// promise rejects with `refused`).
    target: Option<Arc<KeyRing>>,
    direction: Direction,
    context: [String; 3],
    bytes: Zeroizing<Vec<u8>>,
    units: Zeroizing<Vec<u16>>,
    /// The primary key's encryption count after a seal.
    count: u64,
    /// Whether an opened plaintext is ASCII.
    ascii: bool,
    /// An envelope refused while it was read: the promise rejects with it.
    refused: Option<AleError>,
}

impl Job {
    /// Reads the context and the value on the main thread.
    ///
    /// # Safety
    /// `env` and the values must be valid for the current callback.
    pub unsafe fn prepare(
        env: sys::napi_env,
        ring: &Arc<Rings>,
        value: sys::napi_value,
        ctx: [sys::napi_value; 3],
        direction: Direction,
    ) -> Result<AsyncTask<Job>> {
        let mut job = Job {
            ring: ring.clone(),
            target: None,
            direction,
            context: Default::default(),
            bytes: Zeroizing::new(Vec::new()),
            units: Zeroizing::new(Vec::new()),
            count: 0,
            ascii: false,
            refused: None,
        };
        // SAFETY: forwarded.
        unsafe {
            with_context(env, ctx, |_, c| {
                job.context = c.parts().map(str::to_owned);
                Ok(())
            })
        }?;
        match direction {
            Direction::Seal => {
                // SAFETY: `value` is an argument of the current callback.
                unsafe { read_utf8(env, value, &mut job.units, &mut job.bytes, "plaintext") }
                    .map(drop)
            }
            Direction::Open => {
                // SAFETY: as above.
                match unsafe { read_envelope_utf16(env, value, &mut job.units, ring) } {
                    // Whatever its length, a value refused by its first
                    // characters rejects the promise (as any value that fails
                    // to parse does), and one over the maximum length throws
                    // before a promise exists: the fallback's split.
                    Err(e @ (AleError::MalformedEnvelope(_) | AleError::UnsupportedVersion(_))) => {
                        job.refused = Some(e);
                        Ok(())
                    }
                    Ok(units) => match envelope::check_version(&job.units[..]) {
                        Err(e) => {
                            job.refused = Some(e);
                            Ok(())
                        }
                        Ok(()) => ring.check_envelope_len(units),
                    },
                    Err(e) => Err(e),
                }
            }
        }
        .map_err(to_js)?;
        if direction == Direction::Seal {
            zeroize::Zeroize::zeroize(&mut *job.units);
        }
        if job.refused.is_none() {
            let [t, c, f] = &job.context;
            match Context::new(t, c, f).and_then(|ctx| ring.resolve(&ctx)) {
                Ok(target) => job.target = Some(target),
                Err(e) => job.refused = Some(e),
            }
        }
        Ok(AsyncTask::new(job))
    }
}

impl Task for Job {
    type Output = std::result::Result<Zeroizing<Vec<u8>>, AleError>;
    type JsValue = Created;

    /// Runs on the thread pool, where no `catch_unwind` of napi-rs reaches:
    /// a panic becomes `ALE_INTERNAL` here instead of aborting the process.
    fn compute(&mut self) -> napi::Result<Self::Output> {
        if let Some(refused) = self.refused.take() {
            return Ok(Err(refused));
        }
        let Some(ring) = self.target.clone() else {
            return Ok(Err(AleError::Internal));
        };
        let run = || -> std::result::Result<Zeroizing<Vec<u8>>, AleError> {
            forced_compute_panic_point();
            let [t, c, f] = &self.context;
            let ctx = Context::new(t, c, f)?;
            let (mut aad, mut out) = (Vec::new(), Zeroizing::new(Vec::new()));
            match self.direction {
                Direction::Seal => {
                    self.count = ring.seal_into(&mut self.bytes, &ctx, &mut aad, &mut out)?;
                    self.ring.check_sealed_len(out.len())?;
                }
                Direction::Open => {
                    let opened = ring.open_text(&self.units[..], &ctx, &mut aad, &mut out)?;
                    self.ascii = opened.ascii;
                }
            }
            Ok(out)
        };
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(run));
        // The UTF-16 copy of an envelope is not secret, and a plaintext's
        // was wiped on the main thread already: nothing else to clean here.
        Ok(outcome.unwrap_or(Err(AleError::Internal)))
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> napi::Result<Created> {
        let raw = env.raw();
        let seal = self.direction == Direction::Seal;
        if seal && output.is_ok() {
            // SAFETY: the current env (the task's completion callback).
            unsafe { budget::after_seal(raw, &self.ring, self.count) };
        }
        let created = match output {
            // SAFETY: the current env; an envelope is ASCII.
            Ok(out) if seal => unsafe { ascii_to_js(raw, &out) },
            // SAFETY: the current env; `open_text` checked the text.
            Ok(out) => unsafe {
                text_to_js(raw, &out, self.ascii, &mut Zeroizing::new(Vec::new()))
            },
            Err(e) => return Err(coded_rejection(&env, e)),
        }
        .map_err(|e| coded_rejection(&env, engine_refused(e)))?;
        Ok(Created(created))
    }
}
