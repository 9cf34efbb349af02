//! Loading the shared Wycheproof vectors (`../shared/testdata/wycheproof`).
//! They are read at test time, never copied into the repository.

use std::path::PathBuf;

/// Parsed JSON of one vector file, or `None` (with a loud notice) when the
/// shared folder is absent outside CI. Under `CI=true` a missing file fails.
pub fn load(name: &str) -> Option<serde_json::Value> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/testdata/wycheproof")
        .join(name);
    match std::fs::read_to_string(&path) {
        Ok(text) => Some(serde_json::from_str(&text).expect("vector file is valid JSON")),
        Err(e) if std::env::var("CI").as_deref() != Ok("true") => {
            eprintln!(
                "\n!!! SKIPPING Wycheproof vectors: {} ({e})\n",
                path.display()
            );
            None
        }
        Err(e) => panic!(
            "CI=true but the Wycheproof vectors are missing at {}: {e}",
            path.display()
        ),
    }
}

pub fn hex(s: &serde_json::Value) -> Vec<u8> {
    let s = s.as_str().expect("hex string");
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}
