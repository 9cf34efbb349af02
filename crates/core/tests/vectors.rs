//! The project's envelope vectors (`testdata/envelopes.json`, made with
//! node:crypto alone by `scripts/make-vectors.mjs`): every envelope opens to
//! its plaintext, text and binary forms convert into each other, and every
//! failure gives its code. The addon and the node:crypto fallback read the
//! same file (`__test__/vectors.test.mjs`).

use std::path::PathBuf;

use ale_core::binary;
use ale_core::context::Context;
use ale_core::envelope::parse_key_id;
use ale_core::keys::{KeyRing, RingOptions, Secret};
use ale_core::secret::SecretValue;
use serde_json::Value;

/// Bytes from a JSON string of hex digits.
fn hex(v: &Value) -> Vec<u8> {
    let s = v.as_str().expect("hex string");
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

fn vectors() -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/envelopes.json");
    let text =
        std::fs::read_to_string(&path).expect("testdata/envelopes.json is in the repository");
    serde_json::from_str(&text).expect("valid JSON")
}

/// A ring from its description: text secrets (or hex bytes), `keyIds`, `maxEnvelopeLength`.
fn ring(spec: &Value) -> Result<KeyRing, &'static str> {
    let texts: Vec<String> = spec["secrets"].as_array().map_or_else(Vec::new, |a| {
        a.iter()
            .map(|s| s.as_str().expect("text").to_owned())
            .collect()
    });
    let bytes: Vec<Vec<u8>> = spec["secretsHex"]
        .as_array()
        .map_or_else(Vec::new, |a| a.iter().map(hex).collect());
    let secrets = texts
        .iter()
        .map(|t| SecretValue::Text(t))
        .chain(bytes.iter().map(|b| SecretValue::Bytes(b)))
        .enumerate()
        .map(|(i, value)| Secret {
            label: format!("secret #{i}"),
            value,
        });
    if let Some(given) = spec["options"].as_object() {
        // an option this reader does not apply would make its cases pass or fail for the wrong reason
        for name in given.keys() {
            assert!(
                ["maxEnvelopeLength", "keyIds"].contains(&name.as_str()),
                "an option the Rust reader does not apply: {name}"
            );
        }
    }
    let mut options = RingOptions::default();
    if let Some(max) = spec["options"]["maxEnvelopeLength"].as_u64() {
        options.max_envelope_len = usize::try_from(max).expect("small");
    }
    let mut ring = KeyRing::new(secrets, options).map_err(|e| e.code())?;
    if let Some(ids) = spec["options"]["keyIds"].as_array() {
        let ids: Vec<_> = ids
            .iter()
            .map(|id| parse_key_id(id.as_str().expect("id").as_bytes()).expect("a valid id"))
            .collect();
        ring = ring.with_key_ids(&ids).map_err(|e| e.code())?;
    }
    Ok(ring)
}

fn context(v: &Value) -> [String; 3] {
    let parts: Vec<String> = v
        .as_array()
        .expect("context")
        .iter()
        .map(|p| p.as_str().expect("part").to_owned())
        .collect();
    parts.try_into().expect("three parts")
}

#[test]
fn every_envelope_opens_and_converts() {
    let doc = vectors();
    let open = doc["open"].as_array().expect("open");
    assert!(open.len() >= 7);
    for case in open {
        let name = case["name"].as_str().expect("name");
        let ring =
            ring(&doc["rings"][case["ring"].as_str().expect("ring")]).expect("the ring builds");
        let [t, c, f] = context(&case["context"]);
        let ctx = Context::new(&t, &c, &f).expect("context");
        let text = case["text"].as_str().expect("text");
        let plaintext = case["plaintext"].as_str().expect("plaintext");
        assert_eq!(ring.decrypt(text, &ctx).as_deref(), Ok(plaintext), "{name}");
        let bin = hex(&case["binary"]);
        let (mut aad, mut out) = (Vec::new(), Vec::new());
        ring.open_binary_into(&bin, &ctx, &mut aad, &mut out)
            .expect(name);
        assert_eq!(out, plaintext.as_bytes(), "{name}: binary");
        let mut converted = Vec::new();
        binary::from_text(text.as_bytes(), &mut converted).expect(name);
        assert_eq!(converted, bin, "{name}: text to binary");
        binary::to_text(&bin, &mut converted).expect(name);
        assert_eq!(converted, text.as_bytes(), "{name}: binary to text");
    }
}

#[test]
fn every_failure_gives_its_code() {
    let doc = vectors();
    let errors = doc["errors"].as_array().expect("errors");
    assert!(errors.len() >= 15);
    for case in errors {
        let name = case["name"].as_str().expect("name");
        let expected = case["code"].as_str().expect("code");
        let ring =
            ring(&doc["rings"][case["ring"].as_str().expect("ring")]).expect("the ring builds");
        let [t, c, f] = context(&case["context"]);
        let got = match Context::new(&t, &c, &f) {
            Err(e) => e.code(),
            Ok(ctx) => {
                let result = if let Some(text) = case["text"].as_str() {
                    ring.decrypt(text, &ctx).map(drop)
                } else {
                    let (mut aad, mut out) = (Vec::new(), Vec::new());
                    ring.open_binary_into(&hex(&case["binary"]), &ctx, &mut aad, &mut out)
                        .map(drop)
                };
                result.err().map_or("no error", |e| e.code())
            }
        };
        assert_eq!(got, expected, "{name}");
    }
    for case in doc["badRings"].as_array().expect("badRings") {
        assert_eq!(ring(case).err(), case["code"].as_str(), "{}", case["name"]);
    }
}
