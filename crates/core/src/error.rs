//! The one error type of the crate, with its stable `ALE_*` codes.
//!
//! Every message is written for the person who has to act on it. None of them
//! ever contains key material, plaintext, or the envelope being decoded: the
//! variants only carry static text and small numbers.

use std::fmt;

/// Everything that can go wrong, one variant per `ALE_*` code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AleError {
    /// A secret is missing, too short or not a string. `which` names it by
    /// position or by variable name, never by value.
    InvalidKey { which: String, reason: &'static str },
    /// tenant, collection or field is empty or contains `:`.
    InvalidContext {
        part: &'static str,
        reason: &'static str,
    },
    /// The stored value is not a well-formed envelope.
    MalformedEnvelope(&'static str),
    /// The stored bytes are not a well-formed binary envelope (same code).
    MalformedBinary(&'static str),
    /// A well-formed `v<N>:` prefix, but a version this build cannot read.
    UnsupportedVersion(u64),
    /// Tag check failed: tampered data, wrong context, or no key in the ring fits.
    AuthFailed,
    /// A v2 value names a key id that the ring does not hold.
    KeyNotLoaded,
    /// The process-wide ring is used before `initKeyRing`.
    NotInitialized,
    /// An argument of the wrong type, or text that cannot be carried exactly.
    InvalidInput(String),
    /// A string argument (named by `what`) holds a lone UTF-16 surrogate,
    /// which no UTF-8 encoding can carry without changing it. Same code as
    /// [`AleError::InvalidInput`]; a variant of its own so that callers can
    /// tell it apart without reading the message.
    LoneSurrogate { what: String },
    /// The operating system's random number generator failed.
    RngUnavailable,
    /// A bug: a panic caught at the boundary, or a broken internal invariant.
    Internal,
    /// A stored value longer than the ring's maximum envelope length, refused
    /// before it is copied.
    EnvelopeTooLarge { max: usize },
    /// A value whose envelope would be longer than the ring's maximum
    /// envelope length, refused before it is encrypted: decryption would
    /// refuse what was stored. Same code as [`AleError::EnvelopeTooLarge`].
    ValueTooLarge { max: usize },
    /// The JavaScript engine refused an operation: out of memory, a string
    /// longer than it allows, or an environment that is shutting down.
    Engine(String),
}

impl AleError {
    /// The stable code that JS sees as `error.code`.
    pub fn code(&self) -> &'static str {
        match self {
            AleError::InvalidKey { .. } => "ALE_INVALID_KEY",
            AleError::InvalidContext { .. } => "ALE_INVALID_CONTEXT",
            AleError::MalformedEnvelope(_) | AleError::MalformedBinary(_) => {
                "ALE_MALFORMED_ENVELOPE"
            }
            AleError::UnsupportedVersion(_) => "ALE_UNSUPPORTED_VERSION",
            AleError::AuthFailed => "ALE_AUTH_FAILED",
            AleError::KeyNotLoaded => "ALE_KEY_NOT_LOADED",
            AleError::NotInitialized => "ALE_NOT_INITIALIZED",
            AleError::InvalidInput(_) | AleError::LoneSurrogate { .. } => "ALE_INVALID_INPUT",
            AleError::RngUnavailable => "ALE_RNG_UNAVAILABLE",
            AleError::Internal => "ALE_INTERNAL",
            AleError::EnvelopeTooLarge { .. } | AleError::ValueTooLarge { .. } => {
                "ALE_ENVELOPE_TOO_LARGE"
            }
            AleError::Engine(_) => "ALE_ENGINE_FAILURE",
        }
    }
}

impl fmt::Display for AleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AleError::InvalidKey { which, reason } => write!(f, "{which}: {reason}"),
            AleError::InvalidContext { part, reason } => write!(
                f,
                "invalid encryption context: {part} {reason} (tenant, collection and field \
                 must each be non-empty and must not contain ':')"
            ),
            AleError::MalformedEnvelope(reason) => write!(
                f,
                "malformed envelope: {reason} (expected v1:<iv>:<tag>:<ciphertext> or \
                 v2:<key id>:<iv>:<tag>:<ciphertext> in unpadded base64url)"
            ),
            AleError::MalformedBinary(reason) => write!(
                f,
                "malformed binary envelope: {reason} (expected the version byte 0x01, or 0x02 \
                 and a 16-byte key id, then the IV length 16 or 12, the IV, a 16-byte tag and \
                 the ciphertext)"
            ),
            AleError::UnsupportedVersion(v) => write!(
                f,
                "unsupported envelope version v{v}: this build reads v1 and v2; upgrade \
                 @sveltycms/ale to read it"
            ),
            AleError::AuthFailed => f.write_str(
                "authentication failed: the value was altered, belongs to another \
                 tenant/collection/field, or was written under a key that is not in the ring",
            ),
            AleError::KeyNotLoaded => f.write_str(
                "a key of the tenant is not loaded (the tenant's, or the one a v2 envelope \
                 names): load the tenant's keys first, with withTenant(tenantId, fn) or \
                 keys.load(tenantId)",
            ),
            AleError::NotInitialized => f.write_str(
                "the process-wide key ring is not initialized: call initKeyRing() (it reads \
                 ENCRYPTION_KEY) before encrypt()/decrypt(), or use a KeyRing instance",
            ),
            AleError::InvalidInput(reason) => write!(f, "invalid input: {reason}"),
            AleError::LoneSurrogate { what } => write!(
                f,
                "invalid input: {what} contains a lone UTF-16 surrogate, which cannot be stored \
                 as text without changing it; repair the string first \
                 (String.prototype.toWellFormed)"
            ),
            AleError::RngUnavailable => f.write_str(
                "the operating system's random number generator failed; nothing was encrypted",
            ),
            AleError::Internal => {
                f.write_str("internal error in @sveltycms/ale (a bug: please report it)")
            }
            AleError::EnvelopeTooLarge { max } => write!(
                f,
                "the stored value is longer than the maximum envelope length ({max} characters) \
                 and was not read; raise the ring's maxEnvelopeLength if values this large are \
                 expected"
            ),
            AleError::ValueTooLarge { max } => write!(
                f,
                "the value's envelope would be longer than the maximum envelope length ({max} \
                 characters), which decryption refuses, so it was not encrypted; raise \
                 maxEnvelopeLength on every ring that writes or reads values this large"
            ),
            AleError::Engine(reason) => write!(f, "the JavaScript engine refused: {reason}"),
        }
    }
}

impl std::error::Error for AleError {}

pub type Result<T> = std::result::Result<T, AleError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_has_a_distinct_code() {
        let all = [
            AleError::InvalidKey {
                which: "secret #0".into(),
                reason: "x",
            },
            AleError::InvalidContext {
                part: "tenantId",
                reason: "is empty",
            },
            AleError::MalformedEnvelope("x"),
            AleError::MalformedBinary("x"),
            AleError::UnsupportedVersion(2),
            AleError::AuthFailed,
            AleError::KeyNotLoaded,
            AleError::NotInitialized,
            AleError::InvalidInput("x".into()),
            AleError::LoneSurrogate { what: "x".into() },
            AleError::RngUnavailable,
            AleError::Internal,
            AleError::EnvelopeTooLarge { max: 1 },
            AleError::ValueTooLarge { max: 1 },
            AleError::Engine("x".into()),
        ];
        let mut codes: Vec<_> = all.iter().map(AleError::code).collect();
        codes.sort_unstable();
        codes.dedup();
        // the text and binary forms' "malformed" share one code, and so do
        // the two kinds of invalid input and the two of too large
        assert_eq!(codes.len(), all.len() - 3);
        assert!(codes.iter().all(|c| c.starts_with("ALE_")));
    }
}
