//! The project's search vectors (`testdata/search.json`, made with
//! node:crypto alone by `scripts/make-search-vectors.mjs`): each value's
//! tokens and the words a SQLite or MySQL index column stores for it. The
//! addon and the node:crypto fallback read the same file
//! (`__test__/search-vectors.test.mjs`).

use std::path::PathBuf;

use ale_core::context::Context;
use ale_core::keys::{KeyRing, RingOptions, Secret};
use ale_core::search::index::{value_tokens, Indexes};
use ale_core::search::normalize::Folding;
use ale_core::search::words::write_words;
use ale_core::secret::SecretValue;
use serde_json::Value;

fn vectors() -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/search.json");
    let text = std::fs::read_to_string(&path).expect("testdata/search.json is in the repository");
    serde_json::from_str(&text).expect("valid JSON")
}

fn text(v: &Value) -> &str {
    v.as_str().expect("a string")
}

fn flag(options: &Value, name: &str) -> bool {
    options[name].as_bool().expect("a boolean option")
}

#[test]
fn each_value_has_the_independent_constructions_tokens_and_words() {
    let doc = vectors();
    let secret = text(&doc["secretHex"]);
    let bytes: Vec<u8> = (0..secret.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&secret[i..i + 2], 16).expect("hex"))
        .collect();
    let ring = KeyRing::new(
        [Secret {
            label: "search vectors".into(),
            value: SecretValue::Bytes(&bytes),
        }],
        RingOptions::default(),
    )
    .expect("the ring builds");
    let parts: Vec<&str> = doc["context"]
        .as_array()
        .expect("context")
        .iter()
        .map(text)
        .collect();
    let ctx = Context::new(parts[0], parts[1], parts[2]).expect("context");
    let column = ring.column_tokens(0, &ctx).expect("the column's tokens");
    let cases = doc["vectors"].as_array().expect("vectors");
    assert!(cases.len() >= 11);
    for case in cases {
        let value = text(&case["value"]);
        let options = &case["options"];
        let indexes = Indexes {
            contains: flag(options, "contains"),
            prefix: flag(options, "prefix"),
            words: flag(options, "words"),
        };
        let folding = Folding {
            accents: flag(options, "accents"),
        };
        let (mut scratch, mut tokens) = (String::new(), Vec::new());
        value_tokens(&column, value, indexes, folding, &mut scratch, &mut tokens);
        let hex: Vec<String> = tokens.iter().map(|t| format!("{t:016x}")).collect();
        let expected: Vec<&str> = case["tokens"]
            .as_array()
            .expect("tokens")
            .iter()
            .map(text)
            .collect();
        assert_eq!(hex, expected, "{value}");
        assert_eq!(scratch, text(&case["form"]), "{value}: its matching form");
        let mut words = Vec::new();
        write_words(&tokens, &mut words);
        assert_eq!(
            std::str::from_utf8(&words),
            Ok(text(&case["words"])),
            "{value}"
        );
    }
}
