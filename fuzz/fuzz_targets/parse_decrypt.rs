//! Envelope parsing plus decryption, on arbitrary input read both as bytes
//! and as UTF-16 code units (the addon's path). Must never panic, and must
//! never produce plaintext other than what the seed envelopes hold: the seed
//! corpus has envelopes of "seed-…" strings under this key and context.
#![no_main]

use ale_core::keys::RingOptions;
use ale_core::{Context, KeyRing};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

pub const SECRET: &str = "fuzz-secret-0123456789-abcdefghijkl";

fn ring() -> &'static KeyRing {
    static RING: OnceLock<KeyRing> = OnceLock::new();
    RING.get_or_init(|| {
        KeyRing::from_secrets(&[SECRET], RingOptions::default()).expect("valid secret")
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
    let as_units = ring().open_into(&wide[..], &ctx, &mut aad, &mut out);
    if as_units.is_ok() {
        assert!(out.starts_with(b"seed-"), "forged plaintext (UTF-16 path)");
    }
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
