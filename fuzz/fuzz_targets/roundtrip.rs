//! encrypt → decrypt with arbitrary contexts and plaintext. The input is
//! split at 0xFF bytes into tenant, collection, field and plaintext.
#![no_main]

use ale_core::keys::{RingOptions, Secret};
use ale_core::secret::SecretValue;
use ale_core::{AleError, Context, KeyRing};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

fn ring() -> &'static KeyRing {
    static RING: OnceLock<KeyRing> = OnceLock::new();
    RING.get_or_init(|| {
        KeyRing::from_secrets(
            &["fuzz-secret-0123456789-abcdefghijkl"],
            RingOptions::default(),
        )
        .expect("valid")
    })
}

/// A ring whose one key has an id: it writes `v2`.
fn keyed() -> &'static KeyRing {
    static RING: OnceLock<KeyRing> = OnceLock::new();
    RING.get_or_init(|| {
        let secret = Secret {
            label: "keyed".into(),
            value: SecretValue::Bytes(&[0x5A; 32]),
        };
        KeyRing::new([secret], RingOptions::default())
            .and_then(|r| r.with_key_ids(&[[0xA5; 16]]))
            .expect("valid key")
    })
}

fuzz_target!(|data: &[u8]| {
    let mut parts = data.splitn(4, |&b| b == 0xFF);
    let (Some(t), Some(c), Some(f)) = (parts.next(), parts.next(), parts.next()) else {
        return;
    };
    let plaintext = parts.next().unwrap_or_default();
    let (Ok(t), Ok(c), Ok(f)) = (
        std::str::from_utf8(t),
        std::str::from_utf8(c),
        std::str::from_utf8(f),
    ) else {
        return;
    };
    let ctx = match Context::new(t, c, f) {
        Ok(ctx) => ctx,
        Err(e) => {
            assert_eq!(e.code(), "ALE_INVALID_CONTEXT");
            assert!(
                t.is_empty()
                    || c.is_empty()
                    || f.is_empty()
                    || [t, c, f].iter().any(|p| p.contains(':'))
            );
            return;
        }
    };
    let (mut aad, mut sealed, mut opened) = (Vec::new(), Vec::new(), Vec::new());
    // v2: the keyed ring names its key, and reads it back
    let mut buf = plaintext.to_vec();
    keyed()
        .seal_into(&mut buf, &ctx, &mut aad, &mut sealed)
        .expect("seal");
    assert!(sealed.is_ascii() && sealed.starts_with(b"v2:"));
    assert_eq!(
        keyed().open_into(&sealed[..], &ctx, &mut aad, &mut opened),
        Ok(0)
    );
    assert_eq!(opened, plaintext);
    assert_eq!(
        ring().open_into(&sealed[..], &ctx, &mut aad, &mut opened),
        Err(AleError::KeyNotLoaded)
    );
    let mut buf = plaintext.to_vec();
    ring()
        .seal_into(&mut buf, &ctx, &mut aad, &mut sealed)
        .expect("seal");
    assert!(sealed.is_ascii() && sealed.starts_with(b"v1:"));
    assert_eq!(
        ring().open_into(&sealed[..], &ctx, &mut aad, &mut opened),
        Ok(0)
    );
    assert_eq!(opened, plaintext);
    // The same envelope under a different field fails.
    let other = format!("{f}x");
    let moved = Context::new(t, c, &other).expect("still valid");
    assert_eq!(
        ring().open_into(&sealed[..], &moved, &mut aad, &mut opened),
        Err(AleError::AuthFailed)
    );
});
