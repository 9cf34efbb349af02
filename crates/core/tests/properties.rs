//! Property tests of the envelope contract (proptest).

use ale_core::iv::IvLength;
use ale_core::keys::RingOptions;
use ale_core::{AleError, Context, KeyRing};
use proptest::prelude::*;

const SECRET: &str = "property-secret-0123456789-abcdef";

fn ring() -> KeyRing {
    KeyRing::from_secrets(&[SECRET], RingOptions::default()).expect("ring")
}

/// A ring writing 16-byte IVs (the default) or 12-byte ones.
fn ring_with(wide_iv: bool) -> KeyRing {
    let iv_length = if wide_iv {
        IvLength::Bits128
    } else {
        IvLength::Bits96
    };
    KeyRing::from_secrets(
        &[SECRET],
        RingOptions {
            iv_length,
            ..RingOptions::default()
        },
    )
    .expect("ring")
}

/// The codes a stored value that is not a genuine envelope may get.
fn is_rejection(e: &AleError) -> bool {
    matches!(
        e.code(),
        "ALE_MALFORMED_ENVELOPE" | "ALE_UNSUPPORTED_VERSION" | "ALE_AUTH_FAILED"
    )
}

/// A valid context part: non-empty, no ':'.
fn part() -> impl Strategy<Value = String> {
    "[^:]{1,24}"
}

fn b64(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

fn unb64(s: &str) -> Vec<u8> {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(s)
        .expect("canonical")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_text_and_contexts_round_trip(text in any::<String>(), t in part(), c in part(), f in part()) {
        let ring = ring();
        let ctx = Context::new(&t, &c, &f).expect("valid context");
        let env = ring.encrypt(&text, &ctx).expect("encrypt");
        prop_assert_eq!(ring.decrypt(&env, &ctx).expect("decrypt"), text);
    }

    #[test]
    fn any_single_bit_flip_fails_authentication(text in ".{0,64}", wide_iv in any::<bool>(), part_index in 1usize..4, bit in any::<prop::sample::Index>()) {
        let ring = ring_with(wide_iv);
        let ctx = Context::new("t", "c", "f").expect("valid");
        let env = ring.encrypt(&text, &ctx).expect("encrypt");
        let mut parts: Vec<String> = env.split(':').map(str::to_owned).collect();
        let mut bytes = unb64(&parts[part_index]);
        prop_assume!(!bytes.is_empty());
        let bit = bit.index(bytes.len() * 8);
        bytes[bit / 8] ^= 1 << (bit % 8);
        parts[part_index] = b64(&bytes);
        prop_assert_eq!(ring.decrypt(&parts.join(":"), &ctx), Err(AleError::AuthFailed));
    }

    /// Mutating the envelope string arbitrarily never yields other plaintext:
    /// either a coded error, or (when the mutation is a no-op) the original.
    #[test]
    fn any_other_string_is_rejected_or_equal(text in ".{0,48}", wide_iv in any::<bool>(), edits in prop::collection::vec((any::<prop::sample::Index>(), any::<char>(), 0u8..3), 1..4)) {
        let ring = ring_with(wide_iv);
        let ctx = Context::new("t", "c", "f").expect("valid");
        let env = ring.encrypt(&text, &ctx).expect("encrypt");
        let mut chars: Vec<char> = env.chars().collect();
        for (at, ch, kind) in edits {
            let i = at.index(chars.len() + 1);
            match kind {
                0 if i < chars.len() => chars[i] = ch,
                1 => chars.insert(i, ch),
                _ if i < chars.len() => { chars.remove(i); }
                _ => chars.push(ch),
            }
        }
        let mutated: String = chars.into_iter().collect();
        match ring.decrypt(&mutated, &ctx) {
            Ok(plain) => prop_assert_eq!(plain, text, "a mutated envelope decrypted to other plaintext"),
            Err(e) => prop_assert!(is_rejection(&e), "unexpected code {}", e.code()),
        }
    }

    /// Arbitrary strings never panic the parser; each is classified.
    #[test]
    fn arbitrary_input_is_classified(s in any::<String>()) {
        let ring = ring();
        let ctx = Context::new("t", "c", "f").expect("valid");
        let err = ring.decrypt(&s, &ctx).expect_err("random text is not an envelope");
        prop_assert!(is_rejection(&err), "unexpected code {}", err.code());
    }
}

/// Whether parsing `text` as the IV, the tag and the key id of an envelope
/// gives what the base64 crate's strict decoding of it gives: the same
/// bytes, or a refusal. Both parse paths (in place, and the scan), from
/// bytes and from UTF-16.
fn short_parts_decode_as_the_base64_crate(text: &str) -> Result<(), TestCaseError> {
    use ale_core::envelope::{parse, parse_by_scan, parse_key_id};
    let want = {
        use base64::Engine;
        base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(text)
            .ok()
    };
    let tag = b64(&[0x5A; 16]);
    let iv = b64(&[0xA5; 16]);
    let as_iv = format!("v1:{text}:{tag}:AAAA");
    let as_tag = format!("v1:{iv}:{text}:AAAA");
    let wide = |s: &str| s.encode_utf16().collect::<Vec<u16>>();
    // What a parse gave for the part, or None when it refused.
    let ivs = [
        parse(as_iv.as_bytes())
            .ok()
            .map(|p| p.iv.as_bytes().to_vec()),
        parse_by_scan(as_iv.as_bytes(), &[])
            .ok()
            .map(|p| p.iv.as_bytes().to_vec()),
        parse(&wide(&as_iv)[..])
            .ok()
            .map(|p| p.iv.as_bytes().to_vec()),
        parse_by_scan(&wide(&as_iv)[..], &[])
            .ok()
            .map(|p| p.iv.as_bytes().to_vec()),
    ];
    let tags = [
        parse(as_tag.as_bytes()).ok().map(|p| p.tag.to_vec()),
        parse_by_scan(as_tag.as_bytes(), &[])
            .ok()
            .map(|p| p.tag.to_vec()),
        parse(&wide(&as_tag)[..]).ok().map(|p| p.tag.to_vec()),
        parse_by_scan(&wide(&as_tag)[..], &[])
            .ok()
            .map(|p| p.tag.to_vec()),
    ];
    let ids = [
        parse_key_id(text.as_bytes()).ok().map(|id| id.to_vec()),
        parse_key_id(&wide(text)[..]).ok().map(|id| id.to_vec()),
    ];
    // An IV is 12 or 16 bytes; a tag and a key id are 16.
    let want_iv = want.clone().filter(|w| matches!(w.len(), 12 | 16));
    let want16 = want.filter(|w| w.len() == 16);
    for got in ivs {
        prop_assert_eq!(&got, &want_iv, "as the IV");
    }
    for got in tags {
        prop_assert_eq!(&got, &want16, "as the tag");
    }
    for got in ids {
        prop_assert_eq!(&got, &want16, "as a key id");
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn ivs_tags_and_key_ids_decode_as_the_base64_crate_decodes(
        text in "[A-Za-z0-9_-]{16}|[A-Za-z0-9_-]{22}|[A-Za-z0-9_-]{15,23}"
    ) {
        short_parts_decode_as_the_base64_crate(&text)?;
    }

    // Characters one byte off the alphabet's, Latin-1 ones, and U+0141,
    // whose low byte is 'A': a decoder that read UTF-16 units as bytes
    // would take it for 'A'.
    #[test]
    fn a_foreign_character_in_an_iv_tag_or_key_id_is_refused(
        text in "[A-Za-z0-9_-]{16}|[A-Za-z0-9_-]{22}",
        at in any::<prop::sample::Index>(),
        foreign in prop::sample::select(vec!['=', '+', '/', ' ', '.', '@', '`', '{', '\u{C1}', '\u{100}', '\u{141}']),
    ) {
        let mut chars: Vec<char> = text.chars().collect();
        let i = at.index(chars.len());
        chars[i] = foreign;
        let text: String = chars.into_iter().collect();
        short_parts_decode_as_the_base64_crate(&text)?;
    }

    #[test]
    fn written_ivs_and_tags_parse_back(iv in prop::collection::vec(any::<u8>(), 16), tag in any::<[u8; 16]>(), wide_iv in any::<bool>()) {
        let iv = &iv[..if wide_iv { 16 } else { 12 }];
        short_parts_decode_as_the_base64_crate(&b64(iv))?;
        short_parts_decode_as_the_base64_crate(&b64(&tag))?;
    }
}
