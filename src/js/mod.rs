//! Helpers for JS values: raw Node-API calls, strings in and out, bytes in
//! and Buffers out. They know nothing of rings' operations.

pub mod buffer;
pub mod raw;
pub mod text;
