//! `@sveltycms/ale`: the Node-API addon. It converts JS values to and from
//! the core crate (`crates/core`), which does all the work.
//!
//! The files are floors, and imports only go down (CONTRIBUTING.md draws
//! them): `error`; `js/` (raw Node-API, text, buffers); `scratch`,
//! `secrets`, `global_ring`, `budget`; `ops`; `job`; `class`; `api/`, the
//! `#[napi]` surface; and `callbacks/`, the fast paths, installed below.

// Floor by floor, bottom first. napi-rs expands `#[napi] impl KeyRing` in
// `api/ring.rs` only after it has seen the struct in `class.rs`.
mod error;
mod js;

// process warnings queued after the call, below the IV budget that uses them
mod budget;
mod warning;
// Only the `#[napi]` exports reach it (see `mod api` below).
#[cfg_attr(test, allow(dead_code))]
mod global_ring;
mod scratch;
mod secrets;

mod ops;

mod job;

mod class;

// A unit-test build has no module registration, so nothing uses the
// `#[napi]` exports there.
#[cfg_attr(test, allow(dead_code))]
mod api;

mod ffi;

mod callbacks;

/// Runs once per module load, after napi-rs has registered everything.
#[napi_derive::napi(module_exports)]
pub fn init(exports: napi::bindgen_prelude::Object, env: napi::Env) -> napi::Result<()> {
    use napi::bindgen_prelude::JsValue;
    // SAFETY: module registration; `exports` is this module's.
    unsafe { callbacks::install(env.raw(), exports.raw()) }
        .map_err(|e| napi::Error::from_reason(e.reason))
}
