//! The ring's unit tests (beside it, so that keys.rs holds the ring alone).
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
    // written by a ring with the default maximum
    let long = ring(&[S1])
        .encrypt(&"x".repeat(60), &ctx())
        .expect("encrypt");
    assert!(long.len() > 100);
    assert_eq!(
        small.decrypt(&long, &ctx()),
        Err(AleError::EnvelopeTooLarge { max: 100 })
    );
    assert!(ring(&[S1]).decrypt(&long, &ctx()).is_ok());
}

#[test]
fn a_value_whose_envelope_would_be_refused_is_not_encrypted() {
    for ring in [small_ring(None), small_ring(Some([7; 16]))] {
        let longest = (0..200)
            .take_while(|&n| {
                ring.encrypt(&"x".repeat(n), &ctx())
                    .is_ok_and(|e| ring.decrypt(&e, &ctx()).is_ok())
            })
            .last()
            .expect("a short value fits");
        let fits = ring.encrypt(&"x".repeat(longest), &ctx()).expect("fits");
        // 100 characters: v1 with 38 bytes, v2 with 21 (16-byte IVs)
        assert_eq!(fits.len(), 100, "the longest value fills the maximum");
        let mut plaintext = "y".repeat(longest + 1).into_bytes();
        let (mut aad, mut out) = (Vec::new(), Vec::new());
        assert_eq!(
            ring.seal_into(&mut plaintext, &ctx(), &mut aad, &mut out),
            Err(AleError::ValueTooLarge { max: 100 })
        );
        assert!(plaintext.iter().all(|&b| b == 0), "the plaintext is wiped");
        assert!(out.is_empty());
    }
}

/// A ring whose longest envelope is 100 characters: v1, or v2 under `id`.
fn small_ring(id: Option<KeyId>) -> KeyRing {
    let options = RingOptions {
        max_envelope_len: 100,
        ..RingOptions::default()
    };
    let ring = KeyRing::from_secrets(&[S1], options).expect("ring");
    match id {
        None => ring,
        Some(id) => ring.with_key_ids(&[id]).expect("ids"),
    }
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

    // a ciphertext that does not decode is malformed, with a key to try or
    // none (the node:crypto backend decodes it first)
    let cut = |e: &str| format!("{}A", &e[..=e.rfind(':').expect("parts")]);
    let v1 = super::tests::ring(&[S1])
        .encrypt("carol", &ctx())
        .expect("encrypt");
    for (r, e) in [(&other, cut(&env)), (&ring, cut(&v1))] {
        let code = r.decrypt(&e, &ctx()).err().map(|e| e.code());
        assert_eq!(code, Some("ALE_MALFORMED_ENVELOPE"), "{e}");
    }

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
fn column_keys_follow_the_index_key_even_when_kept_before_it_changed() {
    use crate::search::tokens::Kind;
    let token = |ring: &KeyRing| {
        ring.column_tokens(0, &ctx())
            .expect("a key")
            .token(Kind::Word, b"muller")
    };
    let index = [5u8; 32];
    let ring = keyed(&[[1u8; 32]], &[[1; 16]]);
    let own = token(&ring);
    assert_eq!(token(&ring), own, "kept");
    let indexed = ring.with_index_key(&index);
    let expected = token(&keyed(&[[1u8; 32]], &[[1; 16]]).with_index_key(&index));
    assert_ne!(expected, own);
    assert_eq!(token(&indexed), expected);
}
