//! The engine of `@sveltycms/ale`: application-layer encryption for SveltyCMS.
//!
//! Values are sealed with AES-256-GCM under a key resolved the way SveltyCMS
//! resolves `ENCRYPTION_KEY` ([`secret`]) and stored as
//! `v1:<iv>:<tag>:<ciphertext>` (unpadded base64url, 12- or 16-byte IV), or
//! as `v2:<key id>:<iv>:<tag>:<ciphertext>` under a key that has an id (a
//! tenant's own), with `tenant:collection:field` as additional data so that
//! a value moved to another tenant, collection or field no longer decrypts.
//!
//! This crate is plain Rust with no Node-API dependency, so `cargo test`
//! covers it without Node. The addon at the repository root is a thin
//! binding on top.

pub mod aead;
pub mod base64;
pub mod binary;
pub mod budget;
pub mod context;
pub mod envelope;
pub mod error;
pub mod iv;
pub mod keys;
pub mod near_miss;
pub mod previous;
pub mod rings;
pub mod scratch;
pub mod search;
pub mod secret;
pub mod tenants;
pub mod text;
pub mod utf8;

pub use context::Context;
pub use error::{AleError, Result};
pub use keys::KeyRing;
pub use rings::Rings;
pub use tenants::TenantRings;
