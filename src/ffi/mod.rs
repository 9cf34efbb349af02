//! The bun:ffi path: a C entry point that Bun's FFI calls for the hot
//! operations, and the registry that turns the numbers it passes into rings
//! and contexts. Only `callbacks/` imports it (to hand out tokens and the
//! library's path).

pub mod entry;
pub mod last;
pub mod registry;
