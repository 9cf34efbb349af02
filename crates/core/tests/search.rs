//! The search index has no false negative: whenever the exact test says a
//! value matches a query, the value's tokens hold every token of the query
//! (so the database returns it as a candidate). Random multi-script text,
//! with case, compatibility and combining forms mixed in, and queries cut
//! from it, so that most of them match.

use ale_core::search::index::{query_tokens, value_tokens, Indexes, Query};
use ale_core::search::matching::matches;
use ale_core::search::normalize::Folding;
use ale_core::search::tokens::ColumnTokens;
use ale_core::Context;
use proptest::prelude::*;

const ALL: Indexes = Indexes {
    contains: true,
    prefix: true,
    words: true,
};

/// Characters that stress the folding: case pairs with one-to-many folds
/// (ß, ẞ, ŉ, İ), final sigma, compatibility forms (ﬁ, fullwidth, halfwidth
/// katakana, ℃), a combining diaeresis, scripts without case, punctuation.
const LETTERS: &[char] = &[
    'a', 'b', 'c', 'A', 'B', 'ä', 'Ä', 'ß', 'ẞ', 'ŉ', 'İ', 'ı', 'i', 'σ', 'ς', 'Σ', 'ﬁ', 'Ａ', 'ﾀ',
    'タ', '東', '京', 'д', 'Д', 'न', 'म', '्', '\u{308}', '℃', '1',
];
const BETWEEN: &[char] = &[' ', ' ', '-', '.', '\'', '@', '*'];

/// Up to `max` words of up to 10 characters, each followed by a separator
/// or not: words longer than the indexed prefixes come up often.
fn text(max: usize) -> impl Strategy<Value = String> {
    let word = (
        proptest::collection::vec(proptest::sample::select(LETTERS), 1..10),
        proptest::option::of(proptest::sample::select(BETWEEN)),
    );
    proptest::collection::vec(word, 0..max).prop_map(|words| {
        words
            .into_iter()
            .flat_map(|(w, sep)| w.into_iter().chain(sep))
            .collect()
    })
}

fn found(value: &str, query: Query<'_>, folding: Folding) -> Option<bool> {
    let column = ColumnTokens::new(
        &[9; 32],
        &Context::new("acme", "notes", "body").expect("valid"),
    );
    let (mut scratch, mut stored, mut wanted) = (String::new(), Vec::new(), Vec::new());
    value_tokens(&column, value, ALL, folding, &mut scratch, &mut stored);
    // a query the index refuses (too short, no word) has no answer to check
    query_tokens(&column, query, ALL, folding, &mut wanted).ok()?;
    Some(wanted.iter().all(|t| stored.binary_search(t).is_ok()))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn every_match_is_a_candidate(value in text(5), start in 0usize..40, len in 0usize..12, accents: bool, extra in text(1)) {
        let folding = Folding { accents };
        let chars: Vec<char> = value.chars().collect();
        let start = start.min(chars.len());
        let end = (start + len).min(chars.len());
        let cut: String = chars[start..end].iter().collect();
        for q in [cut.clone(), format!("{cut}{extra}"), extra.clone()] {
            for query in [Query::Contains(&q), Query::Prefix(&q), Query::Words(&q)] {
                if matches(&value, query, folding) {
                    prop_assert_ne!(found(&value, query, folding), Some(false), "{:?} matches {:?} but is no candidate", value, query);
                }
            }
        }
    }
}
