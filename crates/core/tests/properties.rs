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
