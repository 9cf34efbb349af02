//! Key derivation and the key ring.
//!
//! `K = HKDF-SHA-256(ikm = secret bytes as given, salt = none, info =
//! "sveltycms-field-at-rest", L = 32)`. The ring holds `[primary, ...previous]`:
//! the primary encrypts; decryption tries the primary first, then the others
//! in order.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

use hkdf::Hkdf;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;
use zeroize::{Zeroize, ZeroizeOnDrop};

use crate::aead::{Aead, AeadKey, KEY_LEN};
use crate::context::Context;
use crate::envelope::{self, CodeUnit};
use crate::error::{AleError, Result};
use crate::iv;

/// HKDF info of the field-encryption key.
pub const INFO_FIELD_AT_REST: &[u8] = b"sveltycms-field-at-rest";
/// HKDF info of the blind-index (HMAC) key: a different key from the same secret.
pub const INFO_BLIND_INDEX: &[u8] = b"sveltycms-blind-index";
/// Length of a blind index in bytes (HMAC-SHA-256), before base64url.
pub const BLIND_INDEX_LEN: usize = 32;
/// Shortest secret accepted, in UTF-8 bytes.
pub const MIN_SECRET_LEN: usize = 32;

/// RFC 5869 HKDF-SHA-256. `salt = None` (or empty) means 32 zero bytes.
/// Fails when `okm` is longer than 255 × 32 bytes.
pub fn hkdf_sha256(salt: Option<&[u8]>, ikm: &[u8], info: &[u8], okm: &mut [u8]) -> Result<()> {
    Hkdf::<Sha256>::new(salt, ikm)
        .expand(info, okm)
        .map_err(|_| AleError::InvalidInput("HKDF output longer than 8160 bytes".into()))
}

/// 32 derived key bytes. Zeroized on drop; `Debug` prints no bytes.
#[derive(Zeroize, ZeroizeOnDrop)]
pub struct DerivedKey([u8; KEY_LEN]);

impl DerivedKey {
    /// HKDF-SHA-256 with the RFC 5869 default salt (32 zero bytes).
    pub fn derive(secret: &[u8], info: &[u8]) -> Self {
        let mut key = DerivedKey([0u8; KEY_LEN]);
        // 32 bytes is far below HKDF-SHA-256's 8160-byte output limit.
        if hkdf_sha256(None, secret, info, &mut key.0).is_err() {
            unreachable!("HKDF-SHA-256 can always produce 32 bytes");
        }
        key
    }

    /// The raw bytes, for building a cipher. Never leaves the crate's Rust side.
    pub fn expose(&self) -> &[u8; KEY_LEN] {
        &self.0
    }
}

impl fmt::Debug for DerivedKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("DerivedKey(<redacted>)")
    }
}

/// One key of the ring and how often it has encrypted.
struct RingKey {
    aead: AeadKey,
    index_key: DerivedKey,
    encryptions: AtomicU64,
}

/// The keys a process encrypts and decrypts with.
pub struct KeyRing {
    keys: Vec<RingKey>,
    warn_at: AtomicU64,
}

/// NIST SP 800-38D: at most 2^32 encryptions under one key with random 96-bit IVs.
pub const IV_BUDGET: u64 = 1 << 32;
/// Default count at which the addon warns: a quarter of the budget.
pub const DEFAULT_WARN_AT: u64 = IV_BUDGET / 4;

/// A labelled secret: the label says which one it is in error messages
/// (`"secret #0"`, `"ENCRYPTION_KEY"`), the bytes never appear anywhere.
pub struct Secret<'a> {
    pub label: String,
    pub bytes: &'a [u8],
}

/// Per-key counters, primary first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyStats {
    pub encryptions: u64,
}

impl KeyRing {
    /// Builds a ring from `[primary, ...previous]`. Fails with `ALE_INVALID_KEY`
    /// when there is no secret or one is shorter than 32 bytes.
    pub fn new<'a>(secrets: impl IntoIterator<Item = Secret<'a>>) -> Result<Self> {
        let mut keys = Vec::new();
        for secret in secrets {
            if secret.bytes.len() < MIN_SECRET_LEN {
                return Err(AleError::InvalidKey {
                    which: secret.label,
                    reason: "is shorter than 32 bytes; generate one with \
                             `openssl rand -base64 48`",
                });
            }
            let derived = DerivedKey::derive(secret.bytes, INFO_FIELD_AT_REST);
            keys.push(RingKey {
                aead: AeadKey::new(derived.expose()),
                index_key: DerivedKey::derive(secret.bytes, INFO_BLIND_INDEX),
                encryptions: AtomicU64::new(0),
            });
        }
        if keys.is_empty() {
            return Err(AleError::InvalidKey {
                which: "key ring".into(),
                reason: "has no secret; pass at least one (the primary) or set ENCRYPTION_KEY",
            });
        }
        Ok(Self {
            keys,
            warn_at: AtomicU64::new(DEFAULT_WARN_AT),
        })
    }

    /// Convenience for Rust callers: secrets labelled by position.
    pub fn from_secrets<S: AsRef<[u8]>>(secrets: &[S]) -> Result<Self> {
        Self::new(secrets.iter().enumerate().map(|(i, s)| Secret {
            label: position_label(i),
            bytes: s.as_ref(),
        }))
    }

    /// Number of keys, primary included.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// A ring is never empty; present for API completeness.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The primary key's encryption count at which callers should warn.
    pub fn warn_at(&self) -> u64 {
        self.warn_at.load(Ordering::Relaxed)
    }

    /// Sets the count at which [`KeyRing::seal_into`] reports the budget warning.
    pub fn set_warn_at(&self, count: u64) {
        self.warn_at.store(count, Ordering::Relaxed);
    }

    /// Encrypts `plaintext` in place under the primary key and writes the
    /// envelope into `out`. `plaintext` holds ciphertext afterwards. Returns
    /// the primary key's encryption count including this one.
    pub fn seal_into(
        &self,
        plaintext: &mut [u8],
        ctx: &Context<'_>,
        aad: &mut Vec<u8>,
        out: &mut Vec<u8>,
    ) -> Result<u64> {
        ctx.write_aad(aad);
        let iv = iv::next_iv()?;
        let primary = &self.keys[0];
        let tag = primary.aead.seal_in_place(&iv, aad, plaintext)?;
        let count = primary.encryptions.fetch_add(1, Ordering::Relaxed) + 1;
        envelope::write(out, &iv, &tag, plaintext);
        Ok(count)
    }

    /// Opens `envelope` into `out` (the plaintext bytes) and returns the index
    /// of the key that opened it (0 = primary). On any failure `out` holds no
    /// plaintext.
    pub fn open_into<C: CodeUnit>(
        &self,
        envelope: &[C],
        ctx: &Context<'_>,
        aad: &mut Vec<u8>,
        out: &mut Vec<u8>,
    ) -> Result<usize> {
        let parts = envelope::parse(envelope)?;
        ctx.write_aad(aad);
        for (index, key) in self.keys.iter().enumerate() {
            envelope::decode_ciphertext(parts.ciphertext_b64, out)?;
            if key
                .aead
                .open_in_place(&parts.iv, aad, out, &parts.tag)
                .is_ok()
            {
                return Ok(index);
            }
        }
        out.clear();
        Err(AleError::AuthFailed)
    }

    /// Checks that `envelope` is a well-formed envelope of a supported
    /// version, without any key: the same checks as decryption, minus the tag.
    pub fn check_envelope<C: CodeUnit>(envelope: &[C]) -> Result<()> {
        let parts = envelope::parse(envelope)?;
        envelope::check_ciphertext(parts.ciphertext_b64)
    }

    /// The keyed blind index of `value` under key `index` (0 = primary):
    /// HMAC-SHA-256 over `tenant:collection:field:value`, with a key derived
    /// from the secret with its own HKDF info. Equal values in the same
    /// context have equal indexes; nothing else about the value is revealed.
    pub fn blind_index(
        &self,
        index: usize,
        value: &[u8],
        ctx: &Context<'_>,
        aad: &mut Vec<u8>,
    ) -> Option<[u8; BLIND_INDEX_LEN]> {
        let key = self.keys.get(index)?;
        ctx.write_aad(aad);
        let mut mac = match Hmac::<Sha256>::new_from_slice(key.index_key.expose()) {
            Ok(m) => m,
            Err(_) => unreachable!("HMAC accepts any key length"),
        };
        mac.update(aad);
        mac.update(b":");
        mac.update(value);
        Some(mac.finalize().into_bytes().into())
    }

    /// String-in, string-out encryption (allocates; the binding uses `seal_into`).
    pub fn encrypt(&self, plaintext: &str, ctx: &Context<'_>) -> Result<String> {
        let mut buf = plaintext.as_bytes().to_vec();
        let (mut aad, mut out) = (Vec::new(), Vec::new());
        self.seal_into(&mut buf, ctx, &mut aad, &mut out)?;
        String::from_utf8(out).map_err(|_| AleError::InvalidInput("envelope is not ASCII".into()))
    }

    /// String-in, string-out decryption. Fails with `ALE_INVALID_INPUT` if the
    /// authentic plaintext is not UTF-8 (it was not written by a string API).
    pub fn decrypt(&self, envelope: &str, ctx: &Context<'_>) -> Result<String> {
        let (mut aad, mut out) = (Vec::new(), Vec::new());
        self.open_into(envelope.as_bytes(), ctx, &mut aad, &mut out)?;
        String::from_utf8(out).map_err(|e| {
            let mut bytes = e.into_bytes();
            bytes.zeroize();
            not_utf8()
        })
    }

    /// Encryption counts per key, primary first (this process only).
    pub fn stats(&self) -> Vec<KeyStats> {
        self.keys
            .iter()
            .map(|k| KeyStats {
                encryptions: k.encryptions.load(Ordering::Relaxed),
            })
            .collect()
    }
}

/// The error for authentic bytes that are not UTF-8 text.
pub fn not_utf8() -> AleError {
    AleError::InvalidInput(
        "the decrypted value is not UTF-8 text; it was not written by a string API".into(),
    )
}

/// `"secret #0 (primary)"`, `"secret #2"`.
pub fn position_label(i: usize) -> String {
    if i == 0 {
        "secret #0 (primary)".into()
    } else {
        format!("secret #{i}")
    }
}

impl fmt::Debug for KeyRing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyRing")
            .field("keys", &self.keys.len())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S1: &str = "0123456789abcdef0123456789abcdef";
    const S2: &str = "fedcba9876543210fedcba9876543210-older";

    fn ctx() -> Context<'static> {
        Context::new("t1", "users", "email").expect("valid")
    }

    #[test]
    fn round_trip_and_binding() {
        let ring = KeyRing::from_secrets(&[S1]).expect("ring");
        let env = ring.encrypt("alice@example.com", &ctx()).expect("encrypt");
        assert_eq!(
            ring.decrypt(&env, &ctx()).expect("decrypt"),
            "alice@example.com"
        );
        for other in [
            ("t2", "users", "email"),
            ("t1", "posts", "email"),
            ("t1", "users", "name"),
        ] {
            let c = Context::new(other.0, other.1, other.2).expect("valid");
            assert_eq!(ring.decrypt(&env, &c), Err(AleError::AuthFailed));
        }
    }

    #[test]
    fn rotation_uses_previous_keys_and_reports_which() {
        let old = KeyRing::from_secrets(&[S2]).expect("ring");
        let env = old.encrypt("x", &ctx()).expect("encrypt");
        let rotated = KeyRing::from_secrets(&[S1, S2]).expect("ring");
        let (mut aad, mut out) = (Vec::new(), Vec::new());
        assert_eq!(
            rotated.open_into(env.as_bytes(), &ctx(), &mut aad, &mut out),
            Ok(1)
        );
        assert_eq!(out, b"x");
        let fresh = rotated.encrypt("x", &ctx()).expect("encrypt");
        assert_eq!(
            rotated.open_into(fresh.as_bytes(), &ctx(), &mut aad, &mut out),
            Ok(0)
        );
        let only_new = KeyRing::from_secrets(&[S1]).expect("ring");
        assert_eq!(only_new.decrypt(&env, &ctx()), Err(AleError::AuthFailed));
        assert_eq!(
            rotated.stats(),
            vec![KeyStats { encryptions: 1 }, KeyStats { encryptions: 0 }]
        );
    }

    #[test]
    fn short_and_missing_secrets_are_rejected_without_echo() {
        let err = KeyRing::from_secrets(&[S1, "short-secret-value"]).expect_err("short");
        assert_eq!(err.code(), "ALE_INVALID_KEY");
        assert!(err.to_string().contains("secret #1"));
        assert!(!err.to_string().contains("short-secret-value"));
        let none: [&str; 0] = [];
        assert_eq!(
            KeyRing::from_secrets(&none).expect_err("empty").code(),
            "ALE_INVALID_KEY"
        );
        // exactly 32 bytes is enough; 31 is not (counted in UTF-8 bytes)
        assert!(KeyRing::from_secrets(&["a".repeat(32)]).is_ok());
        assert!(KeyRing::from_secrets(&["a".repeat(31)]).is_err());
        assert!(KeyRing::from_secrets(&["é".repeat(16)]).is_ok());
    }

    #[test]
    fn blind_index_is_keyed_and_bound_to_context() {
        let ring = KeyRing::from_secrets(&[S1, S2]).expect("ring");
        let mut aad = Vec::new();
        let a = ring
            .blind_index(0, b"alice@example.com", &ctx(), &mut aad)
            .expect("primary");
        assert_eq!(
            ring.blind_index(0, b"alice@example.com", &ctx(), &mut aad),
            Some(a)
        );
        assert_ne!(
            ring.blind_index(0, b"bob@example.com", &ctx(), &mut aad),
            Some(a)
        );
        assert_ne!(
            ring.blind_index(1, b"alice@example.com", &ctx(), &mut aad),
            Some(a)
        );
        let other = Context::new("t2", "users", "email").expect("valid");
        assert_ne!(
            ring.blind_index(0, b"alice@example.com", &other, &mut aad),
            Some(a)
        );
        assert_eq!(ring.blind_index(2, b"x", &ctx(), &mut aad), None);
        // an independent HMAC over the documented message
        let key = DerivedKey::derive(S1.as_bytes(), INFO_BLIND_INDEX);
        let mut mac = Hmac::<Sha256>::new_from_slice(key.expose()).expect("key");
        mac.update(b"t1:users:email:alice@example.com");
        assert_eq!(a, <[u8; 32]>::from(mac.finalize().into_bytes()));
        // and it is not the encryption key
        assert_ne!(
            key.expose(),
            DerivedKey::derive(S1.as_bytes(), INFO_FIELD_AT_REST).expose()
        );
    }

    #[test]
    fn debug_output_has_no_key_material() {
        let d = DerivedKey::derive(S1.as_bytes(), INFO_FIELD_AT_REST);
        let hex: String = d.expose().iter().map(|b| format!("{b:02x}")).collect();
        let ring = KeyRing::from_secrets(&[S1]).expect("ring");
        for text in [format!("{d:?}"), format!("{ring:?}")] {
            assert!(!text.contains(&hex) && !text.contains(S1), "{text}");
        }
    }

    #[test]
    fn derived_key_is_zeroized() {
        let mut d = DerivedKey::derive(S1.as_bytes(), INFO_FIELD_AT_REST);
        assert_ne!(d.expose(), &[0u8; KEY_LEN]);
        // ZeroizeOnDrop runs exactly this on drop.
        d.zeroize();
        assert_eq!(d.expose(), &[0u8; KEY_LEN]);
    }
}
