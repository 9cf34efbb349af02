//! The key ring: the keys a process encrypts and decrypts with.
//!
//! Each configured secret resolves to one key (see [`crate::secret`]); a
//! passphrase also brings decrypt-only legacy keys. The ring holds, in the
//! order decryption tries them:
//! - the secrets' keys, `[primary, ...previous]`: index `i < secret_count()` is
//!   secret `i`, and only index 0 encrypts;
//! - then the legacy fallbacks of every passphrase, secret by secret.
//!
//! Every secret also has a blind-index key,
//! `HKDF-SHA-256(ikm = its 32-byte key, salt = none, info = "sveltycms-blind-index")`,
//! so the index never uses the AES key itself.
//!
//! A ring may give its secrets' keys ids ([`KeyRing::with_key_ids`]): it then
//! writes `v2` envelopes that name the primary's id, opens a `v2` value with
//! the key it names only, and binds the id into the AEAD's additional data
//! (`key id ‖ tenant:collection:field`). Such a ring may also take its
//! blind-index key from a separate secret ([`KeyRing::with_index_key`]), so
//! that the index outlives a rotation of the data keys.
//!
//! A ring of tenants ([`KeyRing::for_tenants`]) holds one keyed ring per
//! tenant, added and removed while it is in use, and hands every call to
//! the ring of the context's tenant (`ALE_KEY_NOT_LOADED` for a tenant it
//! does not hold). One such ring serves every tenant of a key store, so a
//! loaded tenant costs its keys and a map entry, not an object of its own.

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;
use zeroize::Zeroize;

use crate::aead::{Aead, AeadKey};
use crate::binary;
use crate::context::Context;
use crate::envelope::{self, CodeUnit, KeyId};
use crate::error::{AleError, Result};
use crate::iv::{Iv, IvLength};
use crate::scratch;
use crate::secret::{self, KeyBytes, KeyKind, SecretValue};

// The ring of tenants: its constructor, its map and the delegation to a
// tenant's ring, in an impl of their own.
mod tenants;

/// HKDF info of the blind-index (HMAC) key, derived from a secret's AES key.
pub const INFO_BLIND_INDEX: &[u8] = b"sveltycms-blind-index";
/// Length of a blind index in bytes (HMAC-SHA-256), before base64url.
pub const BLIND_INDEX_LEN: usize = 32;

/// One key of the ring and what it has done in this process.
struct RingKey {
    aead: AeadKey,
    /// The id `v2` envelopes name it by; `None` for a `v1` ring.
    id: Option<KeyId>,
    /// Which secret it comes from (0 = the primary).
    secret: usize,
    kind: KeyKind,
    /// `None` for legacy fallbacks, which never index.
    index_key: Option<KeyBytes>,
    encryptions: AtomicU64,
    decryptions: AtomicU64,
}

/// How a ring writes and what it reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RingOptions {
    /// The IV length new envelopes get. Default: 16 bytes, the only length
    /// deployed SveltyCMS releases read. Both lengths are always read.
    pub iv_length: IvLength,
    /// Whether passphrases' legacy keys (SHA-256, lenient base64) are tried
    /// when decrypting. Default: true; turn off once every value is rotated.
    pub legacy_fallbacks: bool,
    /// The longest stored value, in characters, that decryption reads: a
    /// longer one is refused with `ALE_ENVELOPE_TOO_LARGE` before it is
    /// copied, so a hostile value cannot exhaust memory. Default
    /// [`DEFAULT_MAX_ENVELOPE_LEN`].
    pub max_envelope_len: usize,
}

/// 2^27 characters: the envelope of about 96 MiB of plaintext.
pub const DEFAULT_MAX_ENVELOPE_LEN: usize = 1 << 27;

impl Default for RingOptions {
    fn default() -> Self {
        RingOptions {
            iv_length: IvLength::Bits128,
            legacy_fallbacks: true,
            max_envelope_len: DEFAULT_MAX_ENVELOPE_LEN,
        }
    }
}

/// The keys a process encrypts and decrypts with.
pub struct KeyRing {
    keys: Vec<RingKey>,
    secrets: usize,
    options: RingOptions,
    warn_at: AtomicU64,
    warned: AtomicBool,
    /// `Some` for a ring of tenants: the keyed ring of each tenant.
    tenants: Option<RwLock<TenantMap>>,
    /// The key ids of a keyed ring with their text forms, in the order of
    /// `keys`: seals copy the primary's text, and opens match a value's id
    /// against them ([`envelope::parse_with`]), rather than encode or
    /// decode an id for every value.
    id_texts: Vec<(KeyId, [u8; envelope::KEY_ID_B64_LEN])>,
}

/// The rings of a ring of tenants, by tenant. foldhash (randomly seeded per
/// process) instead of SipHash: the lookup is on every call, and tenant ids
/// come from the application, not from whoever sends requests.
type TenantMap = foldhash::HashMap<Box<str>, Arc<KeyRing>>;

/// NIST SP 800-38D: at most 2^32 encryptions under one key with random IVs.
pub const IV_BUDGET: u64 = 1 << 32;
/// Default count at which the addon warns: a quarter of the budget.
pub const DEFAULT_WARN_AT: u64 = IV_BUDGET / 4;

/// A labelled secret: the label says which one it is in error messages
/// (`"secret #0"`, `"ENCRYPTION_KEY"`); the value never appears anywhere.
pub struct Secret<'a> {
    pub label: String,
    pub value: SecretValue<'a>,
}

/// One key's description and counters (this process only).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyStats {
    /// The secret it comes from: 0 = primary, more = previous.
    pub secret: usize,
    pub kind: KeyKind,
    pub encryptions: u64,
    pub decryptions: u64,
}

impl KeyRing {
    /// Builds a ring from `[primary, ...previous]`. Fails with
    /// `ALE_INVALID_KEY` when there is no secret or one does not resolve.
    pub fn new<'a>(
        secrets: impl IntoIterator<Item = Secret<'a>>,
        options: RingOptions,
    ) -> Result<Self> {
        let mut keys = Vec::new();
        let mut fallbacks = Vec::new();
        for (index, secret) in secrets.into_iter().enumerate() {
            let resolved = secret::resolve(secret.value, &secret.label)?;
            let (kind, key) = resolved.key;
            keys.push(RingKey::new(
                index,
                kind,
                &key,
                Some(KeyBytes::hkdf(None, key.expose(), INFO_BLIND_INDEX)),
            ));
            if options.legacy_fallbacks {
                fallbacks.extend(
                    resolved
                        .fallbacks
                        .iter()
                        .map(|(kind, key)| RingKey::new(index, *kind, key, None)),
                );
            }
        }
        let secrets = keys.len();
        if secrets == 0 {
            return Err(AleError::InvalidKey {
                which: "key ring".into(),
                reason: "has no secret; pass at least one (the primary) or set ENCRYPTION_KEY",
            });
        }
        keys.append(&mut fallbacks);
        Ok(Self {
            keys,
            secrets,
            options,
            warn_at: AtomicU64::new(DEFAULT_WARN_AT),
            warned: AtomicBool::new(false),
            tenants: None,
            id_texts: Vec::new(),
        })
    }

    /// Convenience for Rust callers: text secrets labelled by position.
    pub fn from_secrets<S: AsRef<str>>(secrets: &[S], options: RingOptions) -> Result<Self> {
        Self::new(
            secrets.iter().enumerate().map(|(i, s)| Secret {
                label: position_label(i),
                value: SecretValue::Text(s.as_ref()),
            }),
            options,
        )
    }

    /// Gives the secrets' keys ids, `ids[i]` to secret `i`, so that the ring
    /// writes `v2` envelopes naming its primary. The ids must be distinct and
    /// one per secret (`ALE_INVALID_INPUT`). Legacy fallbacks are dropped:
    /// they belong to passphrases, which a keyed ring has no use for.
    pub fn with_key_ids(mut self, ids: &[KeyId]) -> Result<Self> {
        if ids.len() != self.secrets {
            return Err(AleError::InvalidInput(
                "options.keyIds must give exactly one key id per secret".into(),
            ));
        }
        if ids.iter().enumerate().any(|(i, id)| ids[..i].contains(id)) {
            return Err(AleError::InvalidInput(
                "options.keyIds must be distinct".into(),
            ));
        }
        self.keys.truncate(self.secrets);
        for (key, id) in self.keys.iter_mut().zip(ids) {
            key.id = Some(*id);
        }
        self.id_texts = ids
            .iter()
            .map(|id| (*id, envelope::key_id_text(id)))
            .collect();
        Ok(self)
    }

    /// Derives every secret's blind-index key from `index_secret` instead of
    /// from the secret itself (same HKDF), so that every key of the ring
    /// indexes alike and a rotation of the data keys keeps old indexes valid.
    pub fn with_index_key(mut self, index_secret: &[u8; crate::aead::KEY_LEN]) -> Self {
        for key in &mut self.keys[..self.secrets] {
            key.index_key = Some(KeyBytes::hkdf(None, index_secret, INFO_BLIND_INDEX));
        }
        self
    }

    /// Bytes of a binary envelope's header as this ring writes it.
    pub fn binary_header_len(&self) -> usize {
        let keyed = self.tenants.is_some() || self.keys.first().is_some_and(|k| k.id.is_some());
        binary::header_len(self.options.iv_length, keyed)
    }

    /// Number of secrets, primary included (legacy fallbacks not counted).
    pub fn secret_count(&self) -> usize {
        self.secrets
    }

    /// Number of keys decryption tries: the secrets' keys, then fallbacks.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether the ring holds no key of its own: only a ring of tenants
    /// ([`KeyRing::for_tenants`]), whose keys are its tenants' rings'.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    pub fn options(&self) -> RingOptions {
        self.options
    }

    /// The primary key's encryption count at which callers should warn.
    pub fn warn_at(&self) -> u64 {
        self.warn_at.load(Ordering::Relaxed)
    }

    /// Sets the count at which [`KeyRing::should_warn`] first says yes, and
    /// re-arms the warning.
    pub fn set_warn_at(&self, count: u64) {
        self.warn_at.store(count, Ordering::Relaxed);
        self.warned.store(false, Ordering::Relaxed);
    }

    /// True exactly once: for the first encryption count, as returned by
    /// [`KeyRing::seal_into`], that reaches or passes the warning threshold,
    /// whichever path (single, batch, async) produced it.
    pub fn should_warn(&self, count: u64) -> bool {
        count >= self.warn_at() && !self.warned.swap(true, Ordering::Relaxed)
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
        if let Some(done) = self.delegate(ctx, |r| r.seal_into(plaintext, ctx, aad, out)) {
            return done;
        }
        let primary = &self.keys[0];
        write_aad(primary.id.as_ref(), ctx, aad);
        let iv = Iv::random(self.options.iv_length)?;
        let tag = primary.aead.seal_in_place(&iv, aad, plaintext)?;
        let count = primary.encryptions.fetch_add(1, Ordering::Relaxed) + 1;
        let id_text = self.id_texts.first().map(|(_, text)| text);
        debug_assert_eq!(self.id_texts.first().map(|(id, _)| id), primary.id.as_ref());
        envelope::write_with(out, id_text, &iv, &tag, plaintext);
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
        envelope::check_version(envelope)?;
        self.check_envelope_len(envelope.len())?;
        if let Some(done) = self.delegate(ctx, |r| r.open_into(envelope, ctx, aad, out)) {
            return done;
        }
        let parts = envelope::parse_with(envelope, &self.id_texts)?;
        self.open_with(
            parts.key_id.as_ref(),
            &parts.iv,
            &parts.tag,
            ctx,
            aad,
            out,
            |out| envelope::decode_ciphertext(parts.ciphertext_b64, out),
        )
    }

    /// Encrypts, in place, the plaintext that follows a binary envelope's
    /// header in `buf` (`buf[self.binary_header_len()..]`), then writes the
    /// header. `buf` holds the binary envelope afterwards. Returns the
    /// primary key's encryption count.
    pub fn seal_binary(&self, buf: &mut [u8], ctx: &Context<'_>, aad: &mut Vec<u8>) -> Result<u64> {
        if let Some(done) = self.delegate(ctx, |r| r.seal_binary(buf, ctx, aad)) {
            return done;
        }
        let header = self.binary_header_len();
        if buf.len() < header {
            return Err(AleError::Internal);
        }
        let primary = &self.keys[0];
        write_aad(primary.id.as_ref(), ctx, aad);
        let iv = Iv::random(self.options.iv_length)?;
        let (head, plaintext) = buf.split_at_mut(header);
        let tag = primary.aead.seal_in_place(&iv, aad, plaintext)?;
        let count = primary.encryptions.fetch_add(1, Ordering::Relaxed) + 1;
        binary::write_header(head, primary.id.as_ref(), &iv, &tag);
        Ok(count)
    }

    /// [`KeyRing::open_into`] for a binary envelope. `bytes` is not changed.
    pub fn open_binary_into(
        &self,
        bytes: &[u8],
        ctx: &Context<'_>,
        aad: &mut Vec<u8>,
        out: &mut Vec<u8>,
    ) -> Result<usize> {
        if let Some(done) = self.delegate(ctx, |r| r.open_binary_into(bytes, ctx, aad, out)) {
            return done;
        }
        let parts = binary::parse(bytes)?;
        self.open_with(
            parts.key_id.as_ref(),
            &parts.iv,
            &parts.tag,
            ctx,
            aad,
            out,
            |out| {
                out.clear();
                scratch::reserve(out, parts.ciphertext.len());
                out.extend_from_slice(parts.ciphertext);
                Ok(())
            },
        )
    }

    /// The key loop of both forms: `fill` puts the ciphertext into `out`
    /// before each try, since a failed try wipes it. A `v2` value (`key_id`)
    /// is tried with the key it names only; a `v1` value with every key that
    /// has no id.
    #[allow(clippy::too_many_arguments)]
    fn open_with(
        &self,
        key_id: Option<&KeyId>,
        iv: &Iv,
        tag: &[u8; crate::aead::TAG_LEN],
        ctx: &Context<'_>,
        aad: &mut Vec<u8>,
        out: &mut Vec<u8>,
        fill: impl Fn(&mut Vec<u8>) -> Result<()>,
    ) -> Result<usize> {
        write_aad(key_id, ctx, aad);
        let named = |k: &RingKey| k.id.as_ref() == key_id;
        if key_id.is_some() && !self.keys.iter().any(named) {
            out.clear();
            return Err(AleError::KeyNotLoaded);
        }
        for (index, key) in self.keys.iter().enumerate().filter(|(_, k)| named(k)) {
            fill(out)?;
            if key.aead.open_in_place(iv, aad, out, tag).is_ok() {
                key.decryptions.fetch_add(1, Ordering::Relaxed);
                return Ok(index);
            }
        }
        out.clear();
        Err(AleError::AuthFailed)
    }

    /// `ALE_ENVELOPE_TOO_LARGE` for a stored value of more than the ring's
    /// maximum length in characters; the binding asks before copying one.
    pub fn check_envelope_len(&self, chars: usize) -> Result<()> {
        let max = self.options.max_envelope_len;
        if chars > max {
            return Err(AleError::EnvelopeTooLarge { max });
        }
        Ok(())
    }

    /// Checks that `envelope` is a well-formed envelope of a supported
    /// version, without any key: the same checks as decryption, minus the tag.
    pub fn check_envelope<C: CodeUnit>(envelope: &[C]) -> Result<()> {
        let parts = envelope::parse(envelope)?;
        envelope::check_ciphertext(parts.ciphertext_b64)
    }

    /// How many blind indexes `value` has in `ctx`: one per secret (the
    /// tenant's secrets, in a ring of tenants).
    pub fn index_count(&self, ctx: &Context<'_>) -> Result<usize> {
        self.delegate(ctx, |r| Ok(r.secrets))
            .unwrap_or(Ok(self.secrets))
    }

    /// The keyed blind index of `value` under secret `index` (0 = primary):
    /// HMAC-SHA-256 over `tenant:collection:field:value`, with the secret's
    /// blind-index key. Equal values in the same context have equal indexes;
    /// nothing else about the value is revealed. `ALE_INVALID_INPUT` past
    /// the last secret.
    pub fn blind_index(
        &self,
        index: usize,
        value: &[u8],
        ctx: &Context<'_>,
        aad: &mut Vec<u8>,
    ) -> Result<[u8; BLIND_INDEX_LEN]> {
        if let Some(done) = self.delegate(ctx, |r| r.blind_index(index, value, ctx, aad)) {
            return done;
        }
        let key = self
            .keys
            .get(index)
            .and_then(|k| k.index_key.as_ref())
            .ok_or_else(|| AleError::InvalidInput("no key at that index".into()))?;
        ctx.write_aad(aad);
        let mut mac = match Hmac::<Sha256>::new_from_slice(key.expose()) {
            Ok(m) => m,
            Err(_) => unreachable!("HMAC accepts any key length"),
        };
        mac.update(aad);
        mac.update(b":");
        mac.update(value);
        Ok(mac.finalize().into_bytes().into())
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

    /// Every key in decryption order, with its counters (this process only).
    pub fn stats(&self) -> Vec<KeyStats> {
        self.keys
            .iter()
            .map(|k| KeyStats {
                secret: k.secret,
                kind: k.kind,
                encryptions: k.encryptions.load(Ordering::Relaxed),
                decryptions: k.decryptions.load(Ordering::Relaxed),
            })
            .collect()
    }
}

/// The AEAD's additional data: the key id of a `v2` value, then the context.
fn write_aad(key_id: Option<&KeyId>, ctx: &Context<'_>, aad: &mut Vec<u8>) {
    match key_id {
        None => ctx.write_aad(aad),
        Some(id) => ctx.write_aad_after(id, aad),
    }
}

impl RingKey {
    fn new(secret: usize, kind: KeyKind, key: &KeyBytes, index_key: Option<KeyBytes>) -> Self {
        RingKey {
            aead: AeadKey::new(key.expose()),
            id: None,
            secret,
            kind,
            index_key,
            encryptions: AtomicU64::new(0),
            decryptions: AtomicU64::new(0),
        }
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
            .field("secrets", &self.secrets)
            .field("keys", &self.keys.len())
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests;
