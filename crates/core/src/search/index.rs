//! What a searchable column stores for a value, and what a query looks up:
//! sets of tokens (search/tokens.rs) over the value's normalized grams. A
//! row is a candidate when its set holds every token of the query; the
//! exact test on the decrypted value (search/matching.rs) decides.

use super::grams::{self, MIN_CONTAINS};
use super::normalize::{normalize_into, Folding};
use super::sorting::sort_distinct;
use super::tokens::{ColumnTokens, Kind, Token};
use crate::error::{AleError, Result};

/// The indexes a column keeps. Each costs tokens per value: a trigram per
/// character for `contains`, up to six per word for `prefix`, one per word
/// for `words`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Indexes {
    pub contains: bool,
    pub prefix: bool,
    pub words: bool,
}

/// A query, as its text was given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Query<'a> {
    /// The value holds this text.
    Contains(&'a str),
    /// The value, or one of its words, starts with this text.
    Prefix(&'a str),
    /// Every word of this text is a word of the value; a word written with
    /// a trailing `*` is a word prefix (`müll*`).
    Words(&'a str),
}

/// The distinct tokens of `value`, sorted, into `out` (replacing its
/// contents); `scratch` holds its normalized form afterwards.
pub fn value_tokens(
    column: &ColumnTokens,
    value: &str,
    indexes: Indexes,
    folding: Folding,
    scratch: &mut String,
    out: &mut Vec<Token>,
) {
    out.clear();
    normalize_into(value, folding, scratch);
    let text = scratch.as_str();
    if indexes.contains {
        column.tokens_into(
            Kind::Contains,
            grams::trigrams(text).map(str::as_bytes),
            out,
        );
    }
    if indexes.words {
        column.tokens_into(Kind::Word, grams::words(text).map(str::as_bytes), out);
    }
    if indexes.prefix {
        let prefixes = grams::words(text).flat_map(grams::prefixes);
        column.tokens_into(Kind::Prefix, prefixes.map(str::as_bytes), out);
    }
    sort_distinct(out);
}

/// The tokens a value must all hold to match `query`, sorted and distinct,
/// into `out`. `ALE_INVALID_INPUT` when `indexes` cannot serve it: a
/// "contains" query of fewer than three characters (it has no trigram), a
/// "words" query with no word, or one that needs an index the column does
/// not keep. A "prefix" query is served by the prefix index when it has a
/// word, and by the trigrams when it has three characters (and the column
/// keeps them), whichever is there.
pub fn query_tokens(
    column: &ColumnTokens,
    query: Query<'_>,
    indexes: Indexes,
    folding: Folding,
    out: &mut Vec<Token>,
) -> Result<()> {
    out.clear();
    // The query's normalized form is plaintext too: wiped however this returns.
    let mut text = zeroize::Zeroizing::new(String::new());
    match query {
        Query::Contains(q) => {
            normalize_into(q, folding, &mut text);
            contains(column, &text, indexes, out)?;
        }
        Query::Prefix(q) => {
            normalize_into(q, folding, &mut text);
            let mut words = grams::words(&text);
            match (words.next(), words.next()) {
                // one word and nothing else: its prefix token
                (Some(word), None) if word.len() == text.len() && indexes.prefix => {
                    column.tokens_into(Kind::Prefix, [grams::query_prefix(word).as_bytes()], out);
                }
                // spaces or punctuation in it: its trigrams, where the column keeps them
                _ if indexes.contains && text.chars().count() >= MIN_CONTAINS => {
                    contains(column, &text, indexes, out)?;
                }
                // else each word's prefix token ("J.", "anna s"): a match
                // starts at a word start or at 0, so each word of the query
                // starts a word of the value
                (Some(_), _) if indexes.prefix => {
                    let prefixes = grams::words(&text).map(grams::query_prefix);
                    column.tokens_into(Kind::Prefix, prefixes.map(str::as_bytes), out);
                }
                (Some(_), _) => return Err(missing("prefix")),
                (None, _) => return Err(AleError::InvalidInput(PREFIX_WITHOUT_WORD.into())),
            }
        }
        Query::Words(q) => {
            // Each term needs the index it looks up: a column that keeps
            // prefixes alone serves `müll*`, one that keeps words alone `müller`.
            for term in q.split_whitespace() {
                let (term, prefix) = match term.strip_suffix('*') {
                    Some(stem) => (stem, true),
                    None => (term, false),
                };
                normalize_into(term, folding, &mut text);
                let words: Vec<&str> = grams::words(&text).collect();
                for (i, word) in words.iter().enumerate() {
                    // a term that normalizes to several words ("o'brien*"):
                    // only its last word is a prefix
                    if prefix && i + 1 == words.len() {
                        if !indexes.prefix {
                            return Err(missing("prefix"));
                        }
                        column.tokens_into(
                            Kind::Prefix,
                            [grams::query_prefix(word).as_bytes()],
                            out,
                        );
                    } else {
                        if !indexes.words {
                            return Err(missing("words"));
                        }
                        column.tokens_into(Kind::Word, [word.as_bytes()], out);
                    }
                }
            }
        }
    }
    if out.is_empty() {
        return Err(AleError::InvalidInput(
            "the search query has no word to look up".into(),
        ));
    }
    out.sort_unstable();
    out.dedup();
    Ok(())
}

fn contains(
    column: &ColumnTokens,
    text: &str,
    indexes: Indexes,
    out: &mut Vec<Token>,
) -> Result<()> {
    if !indexes.contains {
        return Err(missing("contains"));
    }
    if text.chars().count() < MIN_CONTAINS {
        return Err(AleError::InvalidInput(
            "a contains query needs at least 3 characters: a shorter one has no trigram to look up (use a prefix query)".into(),
        ));
    }
    column.tokens_into(
        Kind::Contains,
        grams::trigrams(text).map(str::as_bytes),
        out,
    );
    Ok(())
}

/// Why a prefix query with no word is refused when trigrams cannot serve it.
const PREFIX_WITHOUT_WORD: &str =
    "a prefix query with no word (only spaces and punctuation) needs 3 characters or more and the column's contains index";

fn missing(index: &str) -> AleError {
    AleError::InvalidInput(format!(
        "this query needs the column's {index} index, which it does not keep"
    ))
}

#[cfg(test)]
mod tests {
    use super::{query_tokens, value_tokens, Indexes, Query};
    use crate::context::Context;
    use crate::search::normalize::Folding;
    use crate::search::tokens::ColumnTokens;

    const ALL: Indexes = Indexes {
        contains: true,
        prefix: true,
        words: true,
    };

    fn column() -> ColumnTokens {
        ColumnTokens::new(
            &[3; 32],
            &Context::new("acme", "users", "name").expect("valid"),
        )
    }

    fn holds(value: &str, query: Query<'_>) -> bool {
        let (column, mut scratch, mut stored, mut wanted) =
            (column(), String::new(), Vec::new(), Vec::new());
        value_tokens(
            &column,
            value,
            ALL,
            Folding::default(),
            &mut scratch,
            &mut stored,
        );
        query_tokens(&column, query, ALL, Folding::default(), &mut wanted).expect("a query");
        wanted.iter().all(|t| stored.binary_search(t).is_ok())
    }

    #[test]
    fn a_value_holds_the_tokens_of_every_query_it_matches() {
        let value = "Jürgen Müller-Lüdenscheidt <j.mueller@acme.test>";
        for q in ["müll", "MÜLLER", "ller-lü", "@acme.", "ürg"] {
            assert!(holds(value, Query::Contains(q)), "contains {q}");
        }
        for q in ["jür", "Mül", "lüdensch", "j", "acme"] {
            assert!(holds(value, Query::Prefix(q)), "prefix {q}");
        }
        for q in ["müller jürgen", "MÜLL*", "acme test", "lüd* j"] {
            assert!(holds(value, Query::Words(q)), "words {q}");
        }
        // and not the tokens of queries it does not match (no false negative is possible, false positives are rare)
        assert!(!holds(value, Query::Contains("mueller x")));
        assert!(!holds(value, Query::Words("müller schmidt")));
        assert!(!holds(value, Query::Prefix("zed")));
    }

    #[test]
    fn queries_an_index_cannot_serve_are_refused() {
        let column = column();
        let code = |query, indexes| {
            let r = query_tokens(&column, query, indexes, Folding::default(), &mut Vec::new());
            r.err().map(|e| e.code())
        };
        let words_only = Indexes {
            contains: false,
            prefix: false,
            words: true,
        };
        let refused = Some("ALE_INVALID_INPUT");
        assert_eq!(code(Query::Contains("ab"), ALL), refused, "no trigram");
        assert_eq!(code(Query::Words(" , "), ALL), refused, "no word");
        assert_eq!(code(Query::Words("mül*"), words_only), refused);
        assert_eq!(code(Query::Contains("müller"), words_only), refused);
        assert_eq!(code(Query::Words("müller"), words_only), None);
        // prefixes alone serve a word search of prefixes, and no whole word
        let prefixes_only = Indexes {
            contains: false,
            prefix: true,
            words: false,
        };
        assert_eq!(code(Query::Words("mül* jür*"), prefixes_only), None);
        assert_eq!(code(Query::Words("müller"), prefixes_only), refused);
        assert_eq!(code(Query::Words("jür* müller"), prefixes_only), refused);
        let (mut by_words, mut by_prefix) = (Vec::new(), Vec::new());
        let query =
            |q, out: &mut Vec<_>| query_tokens(&column, q, prefixes_only, Folding::default(), out);
        query(Query::Words("Mül*"), &mut by_words).expect("served");
        query(Query::Prefix("mül"), &mut by_prefix).expect("served");
        assert_eq!(by_words, by_prefix, "the prefix query's token");
    }

    #[test]
    fn a_prefix_query_of_several_words_or_punctuation_looks_up_each_words_prefix() {
        // search-as-you-type: "J.", "(a", "anna s", too short for trigrams
        // or on a column that keeps none; each word starts a word of the value
        let column = column();
        let prefixes_only = Indexes {
            contains: false,
            prefix: true,
            words: false,
        };
        let held = |value: &str, q: &str, indexes: Indexes| {
            let (mut scratch, mut stored, mut wanted) = (String::new(), Vec::new(), Vec::new());
            let folding = Folding::default();
            value_tokens(&column, value, indexes, folding, &mut scratch, &mut stored);
            query_tokens(&column, Query::Prefix(q), indexes, folding, &mut wanted).expect("served");
            wanted.iter().all(|t| stored.binary_search(t).is_ok())
        };
        for (value, q) in [
            ("J. Smith", "J."),
            ("J. Smith", "j. sm"),
            ("(a) first", "(a"),
            ("Anna Svensson", "anna s"),
            ("Anna Svensson", "anna svensson"),
            ("Σ ω", "Σ "),
        ] {
            for indexes in [ALL, prefixes_only] {
                assert!(held(value, q, indexes), "{q:?} in {value:?}");
            }
        }
        assert!(!held("Anna Berg", "anna s", prefixes_only));
        // refused: no word and too short for trigrams; words, and no prefix index to look them up
        let words_only = Indexes {
            contains: false,
            prefix: false,
            words: true,
        };
        for (q, indexes, why) in [("-.", ALL, "no word"), ("J.", words_only, "prefix index")] {
            let r = query_tokens(
                &column,
                Query::Prefix(q),
                indexes,
                Folding::default(),
                &mut Vec::new(),
            );
            let e = r.expect_err(q);
            assert_eq!(e.code(), "ALE_INVALID_INPUT");
            assert!(e.to_string().contains(why), "{q}: {e}");
        }
    }
}
