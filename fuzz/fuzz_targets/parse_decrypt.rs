//! Envelope parsing plus decryption, on arbitrary input read both as bytes
//! and as UTF-16 code units (the addon's path). Must never panic, and must
//! never produce plaintext other than what the seed envelopes hold: the seed
//! corpus has envelopes of "seed-…" strings under this key and context, as
//! `v1` and (under [`KEYED`] with id [`KEY_ID`]) as `v2`.
#![no_main]

use ale_core::envelope;
use ale_core::keys::{RingOptions, Secret};
use ale_core::secret::SecretValue;
use ale_core::{Context, KeyRing};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

pub const SECRET: &str = "fuzz-secret-0123456789-abcdefghijkl";

pub const KEYED: [u8; 32] = [0x5A; 32];
pub const KEY_ID: [u8; 16] = [0xA5; 16];

fn ring() -> &'static KeyRing {
    static RING: OnceLock<KeyRing> = OnceLock::new();
    RING.get_or_init(|| {
        KeyRing::from_secrets(&[SECRET], RingOptions::default()).expect("valid secret")
    })
}

/// A ring whose one key has an id: it reads `v2` values only.
fn keyed() -> &'static KeyRing {
    static RING: OnceLock<KeyRing> = OnceLock::new();
    RING.get_or_init(|| {
        let secret = Secret {
            label: "keyed".into(),
            value: SecretValue::Bytes(&KEYED),
        };
        KeyRing::new([secret], RingOptions::default())
            .and_then(|r| r.with_key_ids(&[KEY_ID]))
            .expect("valid key")
    })
}

fuzz_target!(|data: &[u8]| {
    let ctx = Context::new("tenant", "collection", "field").expect("valid context");
    let (mut aad, mut out) = (Vec::new(), Vec::new());
    let as_bytes = ring().open_into(data, &ctx, &mut aad, &mut out);
    if as_bytes.is_ok() {
        assert!(out.starts_with(b"seed-"), "forged plaintext");
        assert!(KeyRing::check_envelope(data).is_ok());
    } else {
        assert!(
            out.is_empty() || out.iter().all(|&b| b == 0),
            "plaintext left after a failure"
        );
    }
    let wide: Vec<u16> = data
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    for r in [ring(), keyed()] {
        if r.open_into(data, &ctx, &mut aad, &mut out).is_ok() {
            assert!(out.starts_with(b"seed-"), "forged plaintext");
        } else {
            assert!(out.is_empty(), "plaintext left after a failure");
        }
        if r.open_binary_into(data, &ctx, &mut aad, &mut out).is_ok() {
            assert!(out.starts_with(b"seed-"), "forged plaintext (binary)");
        }
    }
    let as_units = ring().open_into(&wide[..], &ctx, &mut aad, &mut out);
    if as_units.is_ok() {
        assert!(out.starts_with(b"seed-"), "forged plaintext (UTF-16 path)");
    }
    // A parse that knows some ids (the keyed ring's shortcut) gives what a
    // plain parse gives, whichever id the input names.
    let known = [
        (KEY_ID, envelope::key_id_text(&KEY_ID)),
        ([0u8; 16], envelope::key_id_text(&[0u8; 16])),
    ];
    assert_eq!(envelope::parse_with(data, &known), envelope::parse(data));
    assert_eq!(
        envelope::parse_with(&wide[..], &known),
        envelope::parse(&wide[..])
    );
    // Both give what the scan alone gives (the in-place shortcut changes
    // only the work).
    assert_eq!(envelope::parse(data), envelope::parse_by_scan(data, &[]));
    assert_eq!(
        envelope::parse_with(&wide[..], &known),
        envelope::parse_by_scan(&wide[..], &known)
    );
    // The byte and UTF-16 parsers agree on ASCII input.
    if data.is_ascii() {
        let widened: Vec<u16> = data.iter().map(|&b| u16::from(b)).collect();
        let a = ring()
            .open_into(data, &ctx, &mut aad, &mut out)
            .map_err(|e| e.code());
        let b = ring()
            .open_into(&widened[..], &ctx, &mut aad, &mut out)
            .map_err(|e| e.code());
        assert_eq!(a, b);
    }
});
