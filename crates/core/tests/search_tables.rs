//! The JS backend's copy of the Unicode data search uses
//! (`ts/fallback/search/tables.ts`) is written from this crate's: which
//! characters are word characters and combining marks, and what each
//! character case-folds to. So both backends cut and fold text alike
//! whatever Unicode version the JS engine has; only NFKC is the engine's
//! own (stable for every character both versions assign).
//!
//! `UPDATE_SEARCH_TABLES=1 cargo test -p ale-core --test search_tables`
//! rewrites the file after a change of the data or of the rules.

use std::fmt::Write;

use ale_core::search::grams::is_word_char;
use caseless::Caseless;
use unicode_normalization::char::is_combining_mark;

/// Every scalar value, in order.
fn chars() -> impl Iterator<Item = char> {
    (0..=0x10FFFF_u32).filter_map(char::from_u32)
}

/// The ranges of characters `pred` holds for, as `[first, last, …]`.
fn ranges(pred: impl Fn(char) -> bool) -> Vec<u32> {
    let mut out: Vec<u32> = Vec::new();
    for c in chars().filter(|c| pred(*c)) {
        let c = c as u32;
        match out.last_mut() {
            Some(last) if *last + 1 == c => *last = c,
            _ => out.extend([c, c]),
        }
    }
    out
}

fn render() -> String {
    let mut folds = String::new();
    for c in chars() {
        let folded: String = std::iter::once(c).default_case_fold().collect();
        if folded != c.to_string() {
            let units: Vec<String> = folded.chars().map(|f| (f as u32).to_string()).collect();
            write!(folds, "{},{};", c as u32, units.join(",")).expect("a String takes writes");
        }
    }
    let list = |v: Vec<u32>| v.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
    format!(
        "// Written by crates/core/tests/search_tables.rs from the core's Unicode data\n\
         // (caseless {fold_version:?}, unicode-normalization {norm_version:?}, Rust's char\n\
         // properties): do not edit. `UPDATE_SEARCH_TABLES=1 cargo test -p ale-core\n\
         // --test search_tables` rewrites it.\n\n\
         /** Ranges of word characters (Alphabetic, Numeric, General_Category M), as first, last, first, last, …. */\n\
         export const WORD_RANGES: readonly number[] = [{words}];\n\n\
         /** Ranges of combining marks (General_Category M), dropped by accent folding. */\n\
         export const MARK_RANGES: readonly number[] = [{marks}];\n\n\
         /** Full case folding (statuses C and F): `code point,folded code points…;` for every character that folds to something else. */\n\
         export const FOLDS = '{folds}';\n",
        fold_version = caseless::UNICODE_VERSION,
        norm_version = unicode_normalization::UNICODE_VERSION,
        words = list(ranges(is_word_char)),
        marks = list(ranges(is_combining_mark)),
    )
}

#[test]
fn the_js_backends_tables_are_the_cores() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../ts/fallback/search/tables.ts"
    );
    let want = render();
    if std::env::var_os("UPDATE_SEARCH_TABLES").is_some() {
        std::fs::write(path, &want).expect("write the tables");
    }
    let have = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        have == want,
        "ts/fallback/search/tables.ts is not what the core's data gives: run UPDATE_SEARCH_TABLES=1 cargo test -p ale-core --test search_tables"
    );
}
