//! The grams of normalized text (search/normalize.rs), each a slice of it:
//! - trigrams, every run of three characters, for "contains" (a query of
//!   three characters or more is found by its own trigrams);
//! - words, the runs of word characters, for word search;
//! - word prefixes of one to [`MAX_PREFIX`] characters, for "starts with"
//!   (a longer query is found by its first [`MAX_PREFIX`] characters).
//!
//! A word character is a letter, a digit or a combining mark (Unicode
//! Alphabetic, Numeric, or General_Category M), so the words of text
//! without spaces (Japanese, Thai) are its runs between punctuation.

use unicode_normalization::char::is_combining_mark;

/// The longest word prefix indexed, in characters.
pub const MAX_PREFIX: usize = 6;

/// The shortest "contains" query, in characters: one trigram.
pub const MIN_CONTAINS: usize = 3;

/// Whether `c` belongs to a word.
#[inline]
pub fn is_word_char(c: char) -> bool {
    // No ASCII character is a combining mark, and the marks' table is a
    // perfect-hash lookup that ASCII text would ask for every space and
    // punctuation mark (docs/performance.md, "Search").
    if c.is_ascii() {
        c.is_ascii_alphanumeric()
    } else {
        c.is_alphanumeric() || is_combining_mark(c)
    }
}

/// The words of `text`, in order, repeats included.
pub fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !is_word_char(c))
        .filter(|w| !w.is_empty())
}

/// Every run of three characters of `text`, in order, repeats included;
/// none when it has fewer than three.
pub fn trigrams(text: &str) -> Trigrams<'_> {
    Trigrams {
        text,
        at: 0,
        ascii: text.is_ascii(),
    }
}

/// [`trigrams`]: a window of three characters sliding one at a time, with
/// no allocation.
pub struct Trigrams<'a> {
    text: &'a str,
    at: usize,
    /// Every character one byte: the window is three bytes, with no
    /// decoding (most stored text, and the case the write gate measures).
    ascii: bool,
}

impl<'a> Iterator for Trigrams<'a> {
    type Item = &'a str;

    #[inline]
    fn next(&mut self) -> Option<&'a str> {
        if self.ascii {
            let gram = self.text.get(self.at..self.at + 3)?;
            self.at += 1;
            return Some(gram);
        }
        let mut chars = self.text[self.at..].chars();
        let first = chars.next()?.len_utf8();
        let rest = chars.next()?.len_utf8() + chars.next()?.len_utf8();
        let gram = &self.text[self.at..self.at + first + rest];
        self.at += first;
        Some(gram)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.text.len() - self.at;
        if self.ascii {
            let n = left.saturating_sub(2);
            (n, Some(n))
        } else {
            // at most a character a byte, at least one every four bytes
            ((left / 4).saturating_sub(2), Some(left.saturating_sub(2)))
        }
    }
}

/// The prefixes of `word` of one to [`MAX_PREFIX`] characters, shortest
/// first.
pub fn prefixes(word: &str) -> impl Iterator<Item = &str> {
    word.char_indices()
        .skip(1)
        .map(|(i, _)| i)
        .chain([word.len()])
        .take(MAX_PREFIX)
        .map(move |end| &word[..end])
}

/// The prefix of `word` a "starts with" query looks up: its first
/// [`MAX_PREFIX`] characters, or all of it.
pub fn query_prefix(word: &str) -> &str {
    prefixes(word).last().unwrap_or(word)
}

#[cfg(test)]
mod tests {
    use super::{prefixes, query_prefix, trigrams, words};

    #[test]
    fn words_are_runs_of_letters_digits_and_marks() {
        let w: Vec<&str> = words("müller, j. (2024) — 東京タワー; नमस्ते!").collect();
        assert_eq!(w, ["müller", "j", "2024", "東京タワー", "नमस्ते"]);
        assert_eq!(words("  ,, ").count(), 0);
    }

    #[test]
    fn trigrams_are_every_run_of_three_characters() {
        let t: Vec<&str> = trigrams("müll").collect();
        assert_eq!(t, ["mül", "üll"]);
        assert_eq!(trigrams("ab").count(), 0);
        assert_eq!(trigrams("a b").collect::<Vec<_>>(), ["a b"]);
        assert_eq!(trigrams("東京タワー").count(), 3);
    }

    #[test]
    fn prefixes_stop_at_six_characters() {
        assert_eq!(
            prefixes("müller").collect::<Vec<_>>(),
            ["m", "mü", "mül", "müll", "mülle", "müller"]
        );
        assert_eq!(prefixes("müllerstraße").count(), 6);
        assert_eq!(query_prefix("müllerstraße"), "müller");
        assert_eq!(query_prefix("mü"), "mü");
    }
}
