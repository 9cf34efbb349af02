//! The `#[napi]` surface: what napi-rs registers and types. Each item only
//! converts its arguments and calls `ops`, `secrets` or the core.

pub mod envelope;
pub mod global;
pub mod range;
pub mod ring;
pub mod search;
pub mod search_args;
pub mod search_options;
