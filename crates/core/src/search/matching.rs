//! The exact test a candidate row passes once decrypted: what the plaintext
//! answer to a query is. The tokens narrow the rows; this decides, so a
//! search returns no false positive, and (the tokens being a function of
//! the grams this reads) no false negative.

use super::grams::{self, is_word_char};
use super::index::Query;
use super::normalize::{normalize, Folding};
use zeroize::Zeroizing;

/// Whether `value` matches `query`, both in matching form. The forms made
/// here are plaintext, a decrypted value's and a query's: wiped when done.
pub fn matches(value: &str, query: Query<'_>, folding: Folding) -> bool {
    let text = Zeroizing::new(normalize(value, folding));
    match query {
        Query::Contains(q) => text.contains(Zeroizing::new(normalize(q, folding)).as_str()),
        Query::Prefix(q) => {
            let q = Zeroizing::new(normalize(q, folding));
            word_starts(&text).any(|at| text[at..].starts_with(q.as_str()))
        }
        Query::Words(q) => {
            let words: Vec<&str> = grams::words(&text).collect();
            q.split_whitespace().all(|term| {
                let (term, prefix) = match term.strip_suffix('*') {
                    Some(stem) => (stem, true),
                    None => (term, false),
                };
                let term = Zeroizing::new(normalize(term, folding));
                let wanted: Vec<&str> = grams::words(&term).collect();
                wanted.iter().enumerate().all(|(i, w)| {
                    if prefix && i + 1 == wanted.len() {
                        words.iter().any(|v| v.starts_with(w))
                    } else {
                        words.contains(w)
                    }
                })
            })
        }
    }
}

/// Where `text` or one of its words starts: 0, and each word character
/// that follows a character that is not one.
fn word_starts(text: &str) -> impl Iterator<Item = usize> + '_ {
    let mut before = None::<char>;
    text.char_indices().filter_map(move |(i, c)| {
        let start = i == 0 || (is_word_char(c) && !before.is_some_and(is_word_char));
        before = Some(c);
        start.then_some(i)
    })
}

#[cfg(test)]
mod tests {
    use super::matches;
    use crate::search::index::Query;
    use crate::search::normalize::Folding;

    #[test]
    fn the_plaintext_answer() {
        let f = Folding::default();
        let v = "Jürgen Müller-Lüdenscheidt <j.mueller@acme.test>";
        assert!(matches(v, Query::Contains("LER-LÜ"), f));
        assert!(!matches(v, Query::Contains("muller"), f));
        assert!(matches(
            v,
            Query::Contains("muller"),
            Folding { accents: true }
        ));
        assert!(matches(v, Query::Prefix("lüden"), f));
        assert!(matches(v, Query::Prefix("jürgen mü"), f));
        assert!(!matches(v, Query::Prefix("rgen"), f));
        assert!(matches(v, Query::Words("acme müll*"), f));
        assert!(!matches(v, Query::Words("müll"), f));
        assert!(matches(v, Query::Words("j.mueller*"), f));
    }
}
