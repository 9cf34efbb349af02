//! One ring and a ring of tenants behind the same operations.
use std::sync::Arc;

use super::Rings;
use crate::context::Context;
use crate::envelope::KeyId;
use crate::error::{AleError, Result};
use crate::iv::IvLength;
use crate::keys::{position_label, KeyRing, RingOptions, Secret};
use crate::secret::SecretValue;

fn twelve() -> RingOptions {
    RingOptions {
        iv_length: IvLength::Bits96,
        ..RingOptions::default()
    }
}

fn keyed(secret: [u8; 32], id: KeyId) -> KeyRing {
    let labelled = [Secret {
        label: position_label(0),
        value: SecretValue::Bytes(&secret),
    }];
    KeyRing::new(labelled, twelve())
        .and_then(|r| r.with_key_ids(&[id]))
        .expect("ring")
}

/// `Rings::open` as text, for short assertions.
fn open(rings: &Rings, envelope: &[u8], ctx: &Context<'_>) -> Result<Vec<u8>> {
    let (mut aad, mut out) = (Vec::new(), Vec::new());
    rings.open(envelope, ctx, &mut aad, &mut out).map(|_| out)
}

fn seal(rings: &Rings, text: &[u8], ctx: &Context<'_>) -> Result<Vec<u8>> {
    let (mut plaintext, mut aad, mut out) = (text.to_vec(), Vec::new(), Vec::new());
    rings
        .seal(&mut plaintext, ctx, &mut aad, &mut out)
        .map(|_| out)
}

#[test]
fn a_ring_of_tenants_hands_each_call_to_its_tenants_ring() {
    let rings = Rings::of_tenants(twelve());
    let tenants = rings.tenants().expect("of tenants");
    let (acme, globex) = (
        Context::new("acme", "users", "email").expect("valid"),
        Context::new("globex", "users", "email").expect("valid"),
    );
    assert_eq!(seal(&rings, b"x", &acme), Err(AleError::KeyNotLoaded));
    let acme_ring = Arc::new(keyed([1; 32], [1; 16]).with_index_key(&[3; 32]));
    tenants.set("acme", Arc::clone(&acme_ring)).expect("set");
    tenants
        .set("globex", Arc::new(keyed([2; 32], [2; 16])))
        .expect("set");
    assert_eq!(tenants.len(), 2);
    let env = seal(&rings, b"alice", &acme).expect("seal");
    assert!(env.starts_with(b"v2:AQEBAQEBAQEBAQEBAQEBAQ:"));
    let env_text = std::str::from_utf8(&env).expect("ASCII");
    assert_eq!(acme_ring.decrypt(env_text, &acme).as_deref(), Ok("alice"));
    assert_eq!(open(&rings, &env, &acme).as_deref(), Ok(&b"alice"[..]));
    // another tenant's context: its ring does not hold the key
    assert_eq!(open(&rings, &env, &globex), Err(AleError::KeyNotLoaded));
    let mut buf = vec![0u8; rings.binary_header_len()];
    buf.extend_from_slice(b"bytes");
    let mut aad = Vec::new();
    rings.seal_binary(&mut buf, &acme, &mut aad).expect("seal");
    let mut out = Vec::new();
    assert_eq!(
        acme_ring.open_binary_into(&buf, &acme, &mut aad, &mut out),
        Ok(0)
    );
    assert_eq!(
        rings.blind_index(0, b"x", &acme, &mut aad),
        acme_ring.blind_index(0, b"x", &acme, &mut aad)
    );
    assert_eq!(rings.index_count(&acme), Ok(1));
    assert!(Arc::ptr_eq(
        &rings.resolve(&acme).expect("held"),
        &acme_ring
    ));
    assert_eq!(tenants.remove("acme"), Ok(true));
    assert_eq!(tenants.remove("acme"), Ok(false));
    assert_eq!(open(&rings, &env, &acme), Err(AleError::KeyNotLoaded));
    assert_eq!(rings.resolve(&acme).err(), Some(AleError::KeyNotLoaded));
    assert_eq!(
        rings.blind_index(0, b"x", &acme, &mut aad),
        Err(AleError::KeyNotLoaded)
    );
}

#[test]
fn a_ring_of_tenants_takes_only_rings_that_fit() {
    let rings = Rings::of_tenants(twelve());
    let tenants = rings.tenants().expect("of tenants");
    let code = |r: Result<()>| r.err().map(|e| e.code());
    let unkeyed = KeyRing::from_secrets(&["0123456789abcdef0123456789abcdef"], twelve());
    assert_eq!(
        code(tenants.set("t", Arc::new(unkeyed.expect("ring")))),
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
        code(tenants.set("t", Arc::new(iv16))),
        Some("ALE_INVALID_INPUT")
    );
    assert_eq!(
        code(tenants.set("a:b", Arc::new(keyed([1; 32], [1; 16])))),
        Some("ALE_INVALID_CONTEXT")
    );
    let one = Rings::one(keyed([1; 32], [1; 16]));
    assert_eq!(
        one.tenants().err().map(|e| e.code()),
        Some("ALE_INVALID_INPUT")
    );
    assert!(one.ring().is_some() && rings.ring().is_none());
}

/// A ring of tenants that reads envelopes of up to 100 characters.
fn tenants_reading_100() -> Rings {
    Rings::of_tenants(RingOptions {
        max_envelope_len: 100,
        ..twelve()
    })
}

#[test]
fn a_ring_of_tenants_writes_no_value_longer_than_it_reads() {
    let rings = tenants_reading_100();
    let ctx = Context::new("acme", "users", "email").expect("valid");
    // the tenant's own ring reads up to the default maximum
    let tenants = rings.tenants().expect("of tenants");
    tenants
        .set("acme", Arc::new(keyed([1; 32], [1; 16])))
        .expect("set");
    let longest = (0..200)
        .take_while(|&n| seal(&rings, &vec![b'x'; n], &ctx).is_ok())
        .last()
        .expect("a short value fits");
    let fits = seal(&rings, &vec![b'x'; longest], &ctx).expect("fits");
    assert_eq!(fits.len(), 100, "the longest value fills the maximum");
    assert_eq!(
        open(&rings, &fits, &ctx).as_deref(),
        Ok(&vec![b'x'; longest][..])
    );
    assert_eq!(
        seal(&rings, &vec![b'x'; longest + 1], &ctx),
        Err(AleError::ValueTooLarge { max: 100 })
    );
}

#[test]
fn a_ring_of_tenants_refuses_what_is_no_envelope_before_it_looks_for_the_tenant() {
    let rings = tenants_reading_100();
    let ctx = Context::new("nobody", "users", "email").expect("valid");
    let code = |r: Result<Vec<u8>>| r.err().map(|e| e.code());
    assert_eq!(
        code(open(&rings, b"x", &ctx)),
        Some("ALE_MALFORMED_ENVELOPE")
    );
    assert_eq!(
        code(open(&rings, b"v9:a:b:c", &ctx)),
        Some("ALE_UNSUPPORTED_VERSION")
    );
    let long = format!("v2:{}", "A".repeat(100));
    assert_eq!(
        code(open(&rings, long.as_bytes(), &ctx)),
        Some("ALE_ENVELOPE_TOO_LARGE")
    );
    assert_eq!(
        code(open(&rings, b"v2:x:y:z", &ctx)),
        Some("ALE_KEY_NOT_LOADED")
    );
}

#[test]
fn a_failed_seal_leaves_no_plaintext_and_a_failed_open_none_either() {
    // A tenant it does not hold: the plaintext it was given is wiped.
    let rings = Rings::of_tenants(twelve());
    let ctx = Context::new("nobody", "users", "email").expect("valid");
    let (mut plaintext, mut aad, mut out) = (b"secret".to_vec(), Vec::new(), Vec::new());
    assert!(rings
        .seal(&mut plaintext, &ctx, &mut aad, &mut out)
        .is_err());
    assert_eq!(plaintext, [0; 6]);
    let mut buf = vec![7u8; rings.binary_header_len() + 6];
    assert!(rings.seal_binary(&mut buf, &ctx, &mut aad).is_err());
    assert!(buf.iter().all(|&b| b == 0));
    // Authentic bytes that are not UTF-8: refused, and nothing left in `out`.
    let one = Rings::one(keyed([1; 32], [1; 16]));
    let mut bytes = vec![0u8; one.binary_header_len()];
    bytes.extend_from_slice(&[b'a', 0xFF]);
    one.seal_binary(&mut bytes, &ctx, &mut aad).expect("seal");
    let refused = one.open_binary(&bytes, &ctx, &mut aad, &mut out);
    assert_eq!(refused.err().map(|e| e.code()), Some("ALE_INVALID_INPUT"));
    assert!(out.is_empty());
}

#[test]
fn a_text_envelope_of_bytes_that_are_not_utf8_is_refused_as_text_and_still_names_its_key() {
    let ctx = Context::new("acme", "users", "email").expect("valid");
    let ring = Arc::new(keyed([1; 32], [1; 16]));
    let rings = Rings::of_tenants(twelve());
    rings
        .tenants()
        .expect("of tenants")
        .set("acme", Arc::clone(&ring))
        .expect("set");
    let (mut plaintext, mut aad, mut envelope) = (vec![b'a', 0xFF], Vec::new(), Vec::new());
    ring.seal_into(&mut plaintext, &ctx, &mut aad, &mut envelope)
        .expect("seal");
    let mut out = Vec::new();
    for refused in [
        rings.open(&envelope[..], &ctx, &mut aad, &mut out).err(),
        ring.decrypt(std::str::from_utf8(&envelope).expect("ASCII"), &ctx)
            .err(),
    ] {
        assert_eq!(refused.map(|e| e.code()), Some("ALE_INVALID_INPUT"));
        assert!(out.is_empty());
    }
    // keyIndex reads the key, whatever the plaintext (the caller wipes it)
    assert_eq!(
        rings.open_bytes(&envelope[..], &ctx, &mut aad, &mut out),
        Ok(0)
    );
    assert_eq!(out, [b'a', 0xFF]);
}
