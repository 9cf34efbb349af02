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
//! A seal that fails wipes the plaintext it was given; an open that fails
//! leaves no plaintext in `out`. A ring per tenant is [`crate::tenants`]'s.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

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
use crate::search::columns::ColumnKeys;
use crate::search::tokens::ColumnTokens;
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
    /// The key ids of a keyed ring with their text forms, in the order of
    /// `keys`: seals copy the primary's text, and opens match a value's id
    /// against them ([`envelope::parse_with`]), rather than encode or
    /// decode an id for every value.
    id_texts: Vec<(KeyId, [u8; envelope::KEY_ID_B64_LEN])>,
    /// The search token keys of the columns it served (search/columns.rs).
    columns: ColumnKeys,
}

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
            id_texts: Vec::new(),
            columns: ColumnKeys::default(),
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
        // Column keys come from the index keys just replaced.
        self.columns = ColumnKeys::default();
        self
    }

    /// Bytes of a binary envelope's header as this ring writes it.
    pub fn binary_header_len(&self) -> usize {
        binary::header_len(self.options.iv_length, self.is_keyed())
    }

    /// Whether the ring's keys have ids ([`KeyRing::with_key_ids`]).
    pub fn is_keyed(&self) -> bool {
        !self.id_texts.is_empty()
    }

    /// Number of secrets, primary included (legacy fallbacks not counted).
    pub fn secret_count(&self) -> usize {
        self.secrets
    }

    /// Number of keys decryption tries: the secrets' keys, then fallbacks.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Always false: a ring has at least its primary.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    pub fn options(&self) -> RingOptions {
        self.options
    }

    /// The length of the text envelope this ring writes for `plaintext_len`
    /// bytes of plaintext.
    pub fn envelope_len(&self, plaintext_len: usize) -> usize {
        envelope::encoded_len(
            self.options.iv_length,
            !self.id_texts.is_empty(),
            plaintext_len,
        )
    }

    /// Encrypts `plaintext` in place under the primary key and writes the
    /// envelope into `out`. `plaintext` holds ciphertext afterwards, or
    /// zeros when the seal fails. Returns the primary key's encryption count
    /// including this one.
    pub fn seal_into(
        &self,
        plaintext: &mut [u8],
        ctx: &Context<'_>,
        aad: &mut Vec<u8>,
        out: &mut Vec<u8>,
    ) -> Result<u64> {
        let primary = &self.keys[0];
        let id_text = self.id_texts.first().map(|(_, text)| text);
        // An envelope that decryption would refuse is not written: stored,
        // it could never be read again.
        let max = self.options.max_envelope_len;
        if self.envelope_len(plaintext.len()) > max {
            plaintext.zeroize();
            return Err(AleError::ValueTooLarge { max });
        }
        write_aad(primary.id.as_ref(), ctx, aad);
        let sealed = Iv::random(self.options.iv_length)
            .and_then(|iv| Ok((primary.aead.seal_in_place(&iv, aad, plaintext)?, iv)));
        let (tag, iv) = sealed.inspect_err(|_| plaintext.zeroize())?;
        let count = primary.encryptions.fetch_add(1, Ordering::Relaxed) + 1;
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
    /// header. `buf` holds the binary envelope afterwards, or zeros when the
    /// seal fails. Returns the primary key's encryption count.
    pub fn seal_binary(&self, buf: &mut [u8], ctx: &Context<'_>, aad: &mut Vec<u8>) -> Result<u64> {
        let header = self.binary_header_len();
        if buf.len() < header {
            buf.zeroize();
            return Err(AleError::Internal);
        }
        let primary = &self.keys[0];
        write_aad(primary.id.as_ref(), ctx, aad);
        let (head, plaintext) = buf.split_at_mut(header);
        let sealed = Iv::random(self.options.iv_length)
            .and_then(|iv| Ok((primary.aead.seal_in_place(&iv, aad, plaintext)?, iv)));
        let (tag, iv) = sealed.inspect_err(|_| plaintext.zeroize())?;
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
        let mut tried = false;
        for (index, key) in self.keys.iter().enumerate().filter(|(_, k)| named(k)) {
            tried = true;
            fill(out)?;
            if key.aead.open_in_place(iv, aad, out, tag).is_ok() {
                key.decryptions.fetch_add(1, Ordering::Relaxed);
                return Ok(index);
            }
        }
        // No key to try: a ciphertext that does not decode is still
        // ALE_MALFORMED_ENVELOPE, as when a key is tried (and as the
        // node:crypto backend, which decodes it first, says).
        if !tried {
            fill(out)?;
        }
        out.clear();
        Err(if key_id.is_some() && !tried {
            AleError::KeyNotLoaded
        } else {
            AleError::AuthFailed
        })
    }

    /// `ALE_ENVELOPE_TOO_LARGE` for a stored value of more than the ring's
    /// maximum length in characters; the binding asks before copying one.
    pub fn check_envelope_len(&self, chars: usize) -> Result<()> {
        check_envelope_len(&self.options, chars)
    }

    /// Checks that `envelope` is a well-formed envelope of a supported
    /// version, without any key: the same checks as decryption, minus the tag.
    pub fn check_envelope<C: CodeUnit>(envelope: &[C]) -> Result<()> {
        let parts = envelope::parse(envelope)?;
        envelope::check_ciphertext(parts.ciphertext_b64)
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

    /// The search tokens of `ctx`'s column under the blind-index key of
    /// secret `index` (0 = primary; search/tokens.rs). `ALE_INVALID_INPUT`
    /// past the last secret.
    /// Derived once per column and kept with the ring.
    pub fn column_tokens(&self, index: usize, ctx: &Context<'_>) -> Result<Arc<ColumnTokens>> {
        self.columns.get_or_derive(index, ctx, || {
            let key = self
                .keys
                .get(index)
                .and_then(|k| k.index_key.as_ref())
                .ok_or_else(|| AleError::InvalidInput("no key at that index".into()))?;
            Ok(ColumnTokens::new(key.expose(), ctx))
        })
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
        crate::utf8::check_text(&mut out)?;
        // Checked: UTF-8. Should that ever be wrong, the bytes are wiped too.
        String::from_utf8(out).map_err(|e| {
            e.into_bytes().zeroize();
            AleError::Internal
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

/// `ALE_ENVELOPE_TOO_LARGE` for a stored value of more than `options`'
/// maximum length in characters.
pub fn check_envelope_len(options: &RingOptions, chars: usize) -> Result<()> {
    let max = options.max_envelope_len;
    if chars > max {
        return Err(AleError::EnvelopeTooLarge { max });
    }
    Ok(())
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
