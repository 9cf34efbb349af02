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

    /// A ring of tenants, holding none yet: every call goes to the keyed
    /// ring of its context's tenant ([`KeyRing::set_tenant`]).
    pub fn for_tenants(options: RingOptions) -> Self {
        Self {
            keys: Vec::new(),
            secrets: 0,
            options,
            warn_at: AtomicU64::new(DEFAULT_WARN_AT),
            warned: AtomicBool::new(false),
            tenants: Some(RwLock::new(TenantMap::default())),
            id_texts: Vec::new(),
        }
    }

    /// Makes `ring` (keyed, with this ring's IV length) the ring of `tenant`,
    /// replacing the one it had. `ALE_INVALID_INPUT` on a ring that is not of
    /// tenants, or for a `ring` that does not fit.
    pub fn set_tenant(&self, tenant: &str, ring: Arc<KeyRing>) -> Result<()> {
        let tenants = self.tenant_map()?;
        Context::new(tenant, "-", "-")?;
        if ring.tenants.is_some() || ring.keys.first().and_then(|k| k.id).is_none() {
            return Err(AleError::InvalidInput(
                "a tenant's ring must have key ids (options.keyIds)".into(),
            ));
        }
        if ring.options.iv_length != self.options.iv_length {
            return Err(AleError::InvalidInput(
                "a tenant's ring must have the IV length of the ring of tenants".into(),
            ));
        }
        tenants
            .write()
            .map_err(|_| AleError::Internal)?
            .insert(tenant.into(), ring);
        Ok(())
    }

    /// Drops the ring of `tenant`: its keys are wiped once no call is using
    /// them. Returns whether it held one.
    pub fn remove_tenant(&self, tenant: &str) -> Result<bool> {
        let removed = self
            .tenant_map()?
            .write()
            .map_err(|_| AleError::Internal)?
            .remove(tenant);
        Ok(removed.is_some())
    }

    /// How many tenants a ring of tenants holds; 0 for any other ring.
    pub fn tenant_count(&self) -> usize {
        self.tenants
            .as_ref()
            .and_then(|t| t.read().ok().map(|m| m.len()))
            .unwrap_or(0)
    }

    fn tenant_map(&self) -> Result<&RwLock<TenantMap>> {
        self.tenants.as_ref().ok_or_else(|| {
            AleError::InvalidInput("this ring is not a ring of tenants (KeyRing.forTenants)".into())
        })
    }

    /// For a ring of tenants, `op` on the ring of the context's tenant;
    /// `None` for any other ring.
    ///
    /// The read lock is held for the whole of `op`: an `Arc` clone instead
    /// would add two atomic read-modify-writes to every call, a measurable
    /// share of a 256 B one (docs/performance.md, "Keys per tenant"). A long
    /// `op` holding it would delay `set_tenant`, so callers that run long
    /// work off the calling thread take the tenant's ring first
    /// ([`KeyRing::resolve`]) and run on that.
    fn delegate<R>(
        &self,
        ctx: &Context<'_>,
        op: impl FnOnce(&KeyRing) -> Result<R>,
    ) -> Option<Result<R>> {
        let tenants = self.tenants.as_ref()?;
        let Ok(map) = tenants.read() else {
            return Some(Err(AleError::Internal));
        };
        Some(match map.get(ctx.parts()[0]) {
            Some(ring) => op(ring),
            None => Err(AleError::KeyNotLoaded),
        })
    }

    /// The ring that serves `ctx`: for a ring of tenants, the ring of the
    /// context's tenant (`ALE_KEY_NOT_LOADED` when it holds none); any other
    /// ring serves every context itself.
    pub fn resolve(self: &Arc<Self>, ctx: &Context<'_>) -> Result<Arc<KeyRing>> {
        let Some(tenants) = self.tenants.as_ref() else {
            return Ok(Arc::clone(self));
        };
        let map = tenants.read().map_err(|_| AleError::Internal)?;
        map.get(ctx.parts()[0])
            .cloned()
            .ok_or(AleError::KeyNotLoaded)
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

    /// A ring is never empty; present for API completeness.
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
mod tests {
    use super::*;

    const S1: &str = "0123456789abcdef0123456789abcdef";
    const S2: &str = "fedcba9876543210fedcba9876543210-older";

    fn ctx() -> Context<'static> {
        Context::new("t1", "users", "email").expect("valid")
    }

    fn ring(secrets: &[&str]) -> KeyRing {
        KeyRing::from_secrets(secrets, RingOptions::default()).expect("ring")
    }

    #[test]
    fn round_trip_and_binding() {
        for iv_length in [IvLength::Bits128, IvLength::Bits96] {
            let options = RingOptions {
                iv_length,
                ..RingOptions::default()
            };
            let ring = KeyRing::from_secrets(&[S1], options).expect("ring");
            let env = ring.encrypt("alice@example.com", &ctx()).expect("encrypt");
            let iv_chars = env.split(':').nth(1).map(str::len);
            assert_eq!(
                iv_chars,
                Some(if iv_length == IvLength::Bits128 {
                    22
                } else {
                    16
                })
            );
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
    }

    #[test]
    fn rotation_uses_previous_keys_and_reports_which() {
        let old = ring(&[S2]);
        let env = old.encrypt("x", &ctx()).expect("encrypt");
        let rotated = ring(&[S1, S2]);
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
        assert_eq!(ring(&[S1]).decrypt(&env, &ctx()), Err(AleError::AuthFailed));
        let stats = rotated.stats();
        assert_eq!((stats[0].encryptions, stats[0].decryptions), (1, 1));
        assert_eq!(
            (stats[1].secret, stats[1].encryptions, stats[1].decryptions),
            (1, 0, 1)
        );
    }

    #[test]
    fn legacy_fallbacks_come_after_every_secret_and_can_be_turned_off() {
        // S1 and S2 are passphrases: each has a SHA-256 fallback.
        let ring2 = ring(&[S1, S2]);
        let kinds: Vec<_> = ring2.stats().iter().map(|k| (k.secret, k.kind)).collect();
        assert_eq!(
            kinds,
            [
                (0, KeyKind::Passphrase),
                (1, KeyKind::Passphrase),
                (0, KeyKind::LegacySha256),
                (1, KeyKind::LegacySha256)
            ]
        );
        assert_eq!((ring2.secret_count(), ring2.len()), (2, 4));
        // a value under SHA-256(S1) opens as key 2: "needs rotation"
        let legacy = KeyRing::new(
            [Secret {
                label: "k".into(),
                value: SecretValue::Bytes(&<[u8; 32]>::from(<Sha256 as sha2::Digest>::digest(S1))),
            }],
            RingOptions::default(),
        )
        .expect("ring");
        let env = legacy.encrypt("old", &ctx()).expect("encrypt");
        let (mut aad, mut out) = (Vec::new(), Vec::new());
        assert_eq!(
            ring2.open_into(env.as_bytes(), &ctx(), &mut aad, &mut out),
            Ok(2)
        );
        let strict = KeyRing::from_secrets(
            &[S1, S2],
            RingOptions {
                legacy_fallbacks: false,
                ..RingOptions::default()
            },
        )
        .expect("ring");
        assert_eq!(strict.len(), 2);
        assert_eq!(strict.decrypt(&env, &ctx()), Err(AleError::AuthFailed));
    }

    #[test]
    fn short_and_missing_secrets_are_rejected_without_echo() {
        let err = KeyRing::from_secrets(&[S1, "short-secret-value"], RingOptions::default())
            .expect_err("short");
        assert_eq!(err.code(), "ALE_INVALID_KEY");
        assert!(err.to_string().contains("secret #1"));
        assert!(!err.to_string().contains("short-secret-value"));
        let none: [&str; 0] = [];
        assert_eq!(
            KeyRing::from_secrets(&none, RingOptions::default())
                .expect_err("empty")
                .code(),
            "ALE_INVALID_KEY"
        );
    }

    #[test]
    fn blind_index_is_keyed_and_bound_to_context() {
        let ring = ring(&[S1, S2]);
        let mut aad = Vec::new();
        let a = ring
            .blind_index(0, b"alice@example.com", &ctx(), &mut aad)
            .expect("primary");
        assert_eq!(
            ring.blind_index(0, b"alice@example.com", &ctx(), &mut aad),
            Ok(a)
        );
        assert_ne!(
            ring.blind_index(0, b"bob@example.com", &ctx(), &mut aad),
            Ok(a)
        );
        assert_ne!(
            ring.blind_index(1, b"alice@example.com", &ctx(), &mut aad),
            Ok(a)
        );
        let other = Context::new("t2", "users", "email").expect("valid");
        assert_ne!(
            ring.blind_index(0, b"alice@example.com", &other, &mut aad),
            Ok(a)
        );
        // past the secrets (a legacy fallback, or nothing): no index
        for past in [2, 9] {
            assert_eq!(
                ring.blind_index(past, b"x", &ctx(), &mut aad)
                    .map_err(|e| e.code()),
                Err("ALE_INVALID_INPUT")
            );
        }
        // an independent HMAC over the documented message and key
        let aes = secret::resolve(SecretValue::Text(S1), "k")
            .expect("resolves")
            .key
            .1;
        let key = KeyBytes::hkdf(None, aes.expose(), b"sveltycms-blind-index");
        let mut mac = Hmac::<Sha256>::new_from_slice(key.expose()).expect("key");
        mac.update(b"t1:users:email:alice@example.com");
        assert_eq!(a, <[u8; 32]>::from(mac.finalize().into_bytes()));
        assert_ne!(key.expose(), aes.expose());
    }

    #[test]
    fn binary_envelopes_round_trip_bind_and_match_the_text_form() {
        for iv_length in [IvLength::Bits128, IvLength::Bits96] {
            let options = RingOptions {
                iv_length,
                ..RingOptions::default()
            };
            let ring = KeyRing::from_secrets(&[S1, S2], options).expect("ring");
            let plaintext = b"alice@example.com";
            let header = binary::header_len(iv_length, false);
            assert_eq!(ring.binary_header_len(), header);
            let mut buf = vec![0u8; header];
            buf.extend_from_slice(plaintext);
            let mut aad = Vec::new();
            assert_eq!(ring.seal_binary(&mut buf, &ctx(), &mut aad), Ok(1));
            assert_eq!(buf.len(), plaintext.len() + header);
            let mut out = Vec::new();
            assert_eq!(
                ring.open_binary_into(&buf, &ctx(), &mut aad, &mut out),
                Ok(0)
            );
            assert_eq!(out, plaintext);
            let moved = Context::new("t1", "users", "phone").expect("valid");
            assert_eq!(
                ring.open_binary_into(&buf, &moved, &mut aad, &mut out),
                Err(AleError::AuthFailed)
            );
            // the same value as text opens with the text API
            let mut text = Vec::new();
            binary::to_text(&buf, &mut text).expect("converts");
            assert_eq!(ring.open_into(&text[..], &ctx(), &mut aad, &mut out), Ok(0));
            assert_eq!(out, plaintext);
            let mut flipped = buf.clone();
            flipped[header] ^= 1;
            assert_eq!(
                ring.open_binary_into(&flipped, &ctx(), &mut aad, &mut out),
                Err(AleError::AuthFailed)
            );
            assert!(out.is_empty());
        }
    }

    #[test]
    fn a_value_over_the_maximum_length_is_refused_before_parsing() {
        let options = RingOptions {
            max_envelope_len: 100,
            ..RingOptions::default()
        };
        let small = KeyRing::from_secrets(&[S1], options).expect("ring");
        let fits = small.encrypt(&"x".repeat(30), &ctx()).expect("encrypt");
        assert!(fits.len() <= 100);
        assert!(small.decrypt(&fits, &ctx()).is_ok());
        let long = small.encrypt(&"x".repeat(60), &ctx()).expect("encrypt");
        assert!(long.len() > 100);
        assert_eq!(
            small.decrypt(&long, &ctx()),
            Err(AleError::EnvelopeTooLarge { max: 100 })
        );
        assert!(ring(&[S1]).decrypt(&long, &ctx()).is_ok());
    }

    #[test]
    fn the_budget_warning_fires_once_at_or_past_the_threshold() {
        let ring = ring(&[S1]);
        ring.set_warn_at(3);
        assert!(!ring.should_warn(2));
        // a batch may jump past the threshold without hitting it exactly
        assert!(ring.should_warn(5));
        assert!(!ring.should_warn(6));
        ring.set_warn_at(10);
        assert!(ring.should_warn(10));
        assert!(!ring.should_warn(10));
    }

    #[test]
    fn debug_output_has_no_key_material() {
        let ring = ring(&[S1]);
        let text = format!("{ring:?}");
        assert!(!text.contains(S1), "{text}");
        assert!(text.contains("secrets: 1"), "{text}");
    }

    fn keyed(secrets: &[[u8; 32]], ids: &[KeyId]) -> KeyRing {
        let options = RingOptions {
            iv_length: IvLength::Bits96,
            ..RingOptions::default()
        };
        let labelled = secrets.iter().enumerate().map(|(i, s)| Secret {
            label: position_label(i),
            value: SecretValue::Bytes(s),
        });
        KeyRing::new(labelled, options)
            .expect("ring")
            .with_key_ids(ids)
            .expect("ids")
    }

    #[test]
    fn a_keyed_ring_writes_v2_that_names_its_primary_and_binds_the_id() {
        let (k1, k2) = ([1u8; 32], [2u8; 32]);
        let (id1, id2) = ([0xA1u8; 16], [0xB2u8; 16]);
        let ring = keyed(&[k1, k2], &[id1, id2]);
        let env = ring.encrypt("alice", &ctx()).expect("encrypt");
        let parts = envelope::parse(env.as_bytes()).expect("parses");
        assert!(env.starts_with("v2:oaGhoaGhoaGhoaGhoaGhoQ:"), "{env}");
        assert_eq!(parts.key_id, Some(id1));
        assert_eq!(ring.decrypt(&env, &ctx()).as_deref(), Ok("alice"));

        // the previous key opens what it wrote, found by its id
        let old = keyed(&[k2], &[id2]);
        let old_env = old.encrypt("bob", &ctx()).expect("encrypt");
        let (mut aad, mut out) = (Vec::new(), Vec::new());
        assert_eq!(
            ring.open_into(old_env.as_bytes(), &ctx(), &mut aad, &mut out),
            Ok(1)
        );
        assert_eq!(out, b"bob");

        // a ring without that id: not loaded, and nothing in `out`
        let other = keyed(&[k1], &[[0xC3; 16]]);
        assert_eq!(
            other.open_into(env.as_bytes(), &ctx(), &mut aad, &mut out),
            Err(AleError::KeyNotLoaded)
        );
        assert!(out.is_empty());
        assert_eq!(
            super::tests::ring(&[S1]).decrypt(&env, &ctx()),
            Err(AleError::KeyNotLoaded)
        );

        // the id is authenticated: the same key under another id fails
        let renamed = keyed(&[k1], &[id2]);
        let swapped = env.replacen("oaGhoaGhoaGhoaGhoaGhoQ", "srKysrKysrKysrKysrKysg", 1);
        assert_eq!(renamed.decrypt(&swapped, &ctx()), Err(AleError::AuthFailed));

        // the AAD is id ‖ tenant:collection:field, under plain AES-256-GCM
        let mut aad = id1.to_vec();
        aad.extend_from_slice(b"t1:users:email");
        let mut ct = Vec::new();
        envelope::decode_ciphertext(parts.ciphertext_b64, &mut ct).expect("decodes");
        let independent = AeadKey::new(&k1);
        independent
            .open_in_place(&parts.iv, &aad, &mut ct, &parts.tag)
            .expect("opens with the documented AAD");
        assert_eq!(ct, b"alice");

        // a keyed ring reads no v1 value, even one its key wrote
        let plain = KeyRing::new(
            [Secret {
                label: "k".into(),
                value: SecretValue::Bytes(&k1),
            }],
            RingOptions::default(),
        )
        .expect("ring");
        let v1 = plain.encrypt("carol", &ctx()).expect("encrypt");
        assert_eq!(ring.decrypt(&v1, &ctx()), Err(AleError::AuthFailed));
    }

    #[test]
    fn keyed_binary_envelopes_round_trip_and_convert() {
        let ring = keyed(&[[7u8; 32]], &[[9u8; 16]]);
        let header = ring.binary_header_len();
        assert_eq!(header, 2 + 16 + 12 + 16);
        let mut buf = vec![0u8; header];
        buf.extend_from_slice(b"hello");
        let mut aad = Vec::new();
        ring.seal_binary(&mut buf, &ctx(), &mut aad).expect("seals");
        assert_eq!(buf[0], binary::VERSION_V2);
        let mut out = Vec::new();
        assert_eq!(
            ring.open_binary_into(&buf, &ctx(), &mut aad, &mut out),
            Ok(0)
        );
        assert_eq!(out, b"hello");
        let mut text = Vec::new();
        binary::to_text(&buf, &mut text).expect("converts");
        assert_eq!(ring.open_into(&text[..], &ctx(), &mut aad, &mut out), Ok(0));
        assert_eq!(out, b"hello");
    }

    #[test]
    fn key_ids_are_one_per_secret_and_distinct() {
        let ring = || {
            KeyRing::new(
                [[1u8; 32], [2u8; 32]]
                    .iter()
                    .enumerate()
                    .map(|(i, s)| Secret {
                        label: position_label(i),
                        value: SecretValue::Bytes(s),
                    }),
                RingOptions::default(),
            )
            .expect("ring")
        };
        for ids in [
            &[[1u8; 16]][..],
            &[[1; 16], [2; 16], [3; 16]],
            &[[1; 16], [1; 16]],
        ] {
            assert_eq!(
                ring().with_key_ids(ids).err().map(|e| e.code()),
                Some("ALE_INVALID_INPUT")
            );
        }
    }

    #[test]
    fn an_index_key_indexes_alike_under_every_data_key() {
        let index = [5u8; 32];
        let a = keyed(&[[1u8; 32]], &[[1; 16]]).with_index_key(&index);
        let b = keyed(&[[2u8; 32], [1u8; 32]], &[[2; 16], [1; 16]]).with_index_key(&index);
        let mut aad = Vec::new();
        let ia = a.blind_index(0, b"x", &ctx(), &mut aad);
        assert!(ia.is_ok());
        assert_eq!(b.blind_index(0, b"x", &ctx(), &mut aad), ia);
        assert_eq!(b.blind_index(1, b"x", &ctx(), &mut aad), ia);
        let unkeyed = keyed(&[[1u8; 32]], &[[1; 16]]);
        assert_ne!(unkeyed.blind_index(0, b"x", &ctx(), &mut aad), ia);
    }

    #[test]
    fn a_ring_of_tenants_hands_each_call_to_its_tenants_ring() {
        let options = RingOptions {
            iv_length: IvLength::Bits96,
            ..RingOptions::default()
        };
        let tenants = KeyRing::for_tenants(options);
        let (acme, globex) = (
            Context::new("acme", "users", "email").expect("valid"),
            Context::new("globex", "users", "email").expect("valid"),
        );
        assert_eq!(tenants.encrypt("x", &acme), Err(AleError::KeyNotLoaded));
        let acme_ring = Arc::new(keyed(&[[1; 32]], &[[1; 16]]).with_index_key(&[3; 32]));
        tenants
            .set_tenant("acme", Arc::clone(&acme_ring))
            .expect("set");
        tenants
            .set_tenant("globex", Arc::new(keyed(&[[2; 32]], &[[2; 16]])))
            .expect("set");
        assert_eq!(tenants.tenant_count(), 2);
        let env = tenants.encrypt("alice", &acme).expect("encrypt");
        assert!(env.starts_with("v2:AQEBAQEBAQEBAQEBAQEBAQ:"), "{env}");
        assert_eq!(acme_ring.decrypt(&env, &acme).as_deref(), Ok("alice"));
        assert_eq!(tenants.decrypt(&env, &acme).as_deref(), Ok("alice"));
        // another tenant's context: its ring does not hold the key
        assert_eq!(tenants.decrypt(&env, &globex), Err(AleError::KeyNotLoaded));
        let mut buf = vec![0u8; tenants.binary_header_len()];
        buf.extend_from_slice(b"bytes");
        let mut aad = Vec::new();
        tenants
            .seal_binary(&mut buf, &acme, &mut aad)
            .expect("seal");
        let mut out = Vec::new();
        assert_eq!(
            acme_ring.open_binary_into(&buf, &acme, &mut aad, &mut out),
            Ok(0)
        );
        assert_eq!(
            tenants.blind_index(0, b"x", &acme, &mut aad),
            acme_ring.blind_index(0, b"x", &acme, &mut aad)
        );
        assert_eq!(tenants.index_count(&acme), Ok(1));
        assert_eq!(tenants.remove_tenant("acme"), Ok(true));
        assert_eq!(tenants.remove_tenant("acme"), Ok(false));
        assert_eq!(tenants.decrypt(&env, &acme), Err(AleError::KeyNotLoaded));
        assert_eq!(
            tenants.blind_index(0, b"x", &acme, &mut aad),
            Err(AleError::KeyNotLoaded)
        );
        // what does not fit is refused
        let code = |r: Result<()>| r.err().map(|e| e.code());
        assert_eq!(
            code(tenants.set_tenant("t", Arc::new(ring(&[S1])))),
            Some("ALE_INVALID_INPUT")
        );
        let iv16 = KeyRing::new(
            [Secret {
                label: "k".into(),
                value: SecretValue::Bytes(&[4; 32]),
            }],
            RingOptions::default(),
        )
        .and_then(|r| r.with_key_ids(&[[4; 16]]))
        .expect("ring");
        assert_eq!(
            code(tenants.set_tenant("t", Arc::new(iv16))),
            Some("ALE_INVALID_INPUT")
        );
        assert_eq!(
            code(tenants.set_tenant("a:b", Arc::clone(&acme_ring))),
            Some("ALE_INVALID_CONTEXT")
        );
        assert_eq!(
            code(ring(&[S1]).set_tenant("t", acme_ring)),
            Some("ALE_INVALID_INPUT")
        );
    }
}
