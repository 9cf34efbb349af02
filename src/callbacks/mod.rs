//! The fast paths: direct Node-API callbacks that replace napi-rs's glue for
//! the hot calls, and checked wrappers for the rest of `KeyRing.prototype`.
//! Only `lib.rs` imports this folder, through [`install`].

mod checked;
mod direct;
mod install;
mod search;

pub use install::install;
