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
    // punctuation mark (docs/performance.md, "Search: reading a search index back, and the word test").
    if c.is_ascii() {
        c.is_ascii_alphanumeric()
    } else {
        c.is_alphanumeric() || is_combining_mark(c)
    }
}

/// The words of `text`, in order, repeats included.
pub fn words(text: &str) -> Words<'_> {
    let ascii = text.is_ascii().then(|| AsciiRuns::new(text.as_bytes()));
    Words { text, at: 0, ascii }
}

/// [`words`]: the runs of word characters, each a slice of the text, with
/// no allocation.
#[derive(Clone)]
pub struct Words<'a> {
    text: &'a str,
    /// Where the next search starts (text that is not ASCII).
    at: usize,
    /// Every character one byte: the runs come from bit masks, with no
    /// decoding and no branch a byte (docs/performance.md, "Search: reading a search index back, and the word test").
    ascii: Option<AsciiRuns>,
}

impl<'a> Iterator for Words<'a> {
    type Item = &'a str;

    // Always inlined, as is the ASCII runs' step: left to itself, the
    // compiler kept this a call in the index's loop, a call a word
    // (docs/performance.md, "Search tokens, per value").
    #[inline(always)]
    fn next(&mut self) -> Option<&'a str> {
        if let Some(runs) = &mut self.ascii {
            let (start, end) = runs.next(self.text.as_bytes())?;
            return Some(&self.text[start..end]);
        }
        let rest = &self.text[self.at..];
        let start = rest.find(is_word_char)?;
        let end = rest[start..]
            .find(|c: char| !is_word_char(c))
            .map_or(rest.len(), |len| start + len);
        self.at += end;
        Some(&rest[start..end])
    }

    /// At most a word every two bytes (a character and a separator) of
    /// what is left, and the run the masks have open.
    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = match &self.ascii {
            Some(runs) => self.text.len().saturating_sub(runs.base),
            None => self.text.len() - self.at,
        };
        (0, Some(left.div_ceil(2) + 1))
    }
}

/// The runs of ASCII letters and digits in a byte string, found 64 bytes at
/// a time: a mask of the chunk's word bytes gives where runs start and end,
/// and each is one `trailing_zeros` away.
#[derive(Clone)]
struct AsciiRuns {
    /// The current chunk's offset in the text.
    base: usize,
    /// Bits of the current chunk where a run starts, and where one ends
    /// (the first byte after it), not yet given out.
    starts: u64,
    ends: u64,
    /// Whether the last byte of the current chunk is a word byte.
    carry: bool,
    /// The start of the run being read, once its start was seen.
    open: Option<usize>,
}

impl AsciiRuns {
    /// `bytes` must be ASCII: `word_bytes`'s arithmetic has no room for a
    /// byte of 0x80 or more.
    fn new(bytes: &[u8]) -> Self {
        debug_assert!(bytes.is_ascii());
        let mut runs = AsciiRuns {
            base: 0,
            starts: 0,
            ends: 0,
            carry: false,
            open: None,
        };
        runs.load(bytes);
        runs
    }

    /// Reads the chunk at `base`.
    #[inline]
    fn load(&mut self, bytes: &[u8]) {
        let mut mask = 0u64;
        for k in 0..8 {
            let at = self.base + 8 * k;
            if at >= bytes.len() {
                break;
            }
            mask |= word_bytes(bytes, at) << (8 * k);
        }
        let before = mask << 1 | u64::from(self.carry);
        self.starts = mask & !before;
        self.ends = !mask & before;
        self.carry = mask >> 63 == 1;
    }

    /// The next run, as a byte range.
    #[inline(always)]
    fn next(&mut self, bytes: &[u8]) -> Option<(usize, usize)> {
        loop {
            match self.open {
                None if self.starts != 0 => {
                    let at = self.starts.trailing_zeros();
                    self.starts &= self.starts - 1;
                    self.open = Some(self.base + at as usize);
                }
                Some(start) if self.ends != 0 => {
                    let at = self.ends.trailing_zeros();
                    self.ends &= self.ends - 1;
                    self.open = None;
                    return Some((start, self.base + at as usize));
                }
                _ if self.base + 64 < bytes.len() => {
                    self.base += 64;
                    self.load(bytes);
                }
                // The text ends: inside a run, the run ends with it.
                open => {
                    self.open = None;
                    self.base = bytes.len();
                    return open.map(|start| (start, bytes.len()));
                }
            }
        }
    }
}

/// One bit a byte for the (up to) eight bytes of `bytes` from `at`, which
/// must be ASCII (checked by the caller; see the sums below),
/// set for a letter or a digit; none past the end. Eight bytes are read as
/// one word (the last eight of the text when fewer remain, shifted down, so
/// nothing is copied out of the text) and tested together, branch-free.
#[inline]
fn word_bytes(bytes: &[u8], at: usize) -> u64 {
    const LOW: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let x = if let Some(word) = bytes[at..].first_chunk() {
        u64::from_le_bytes(*word)
    } else if let Some(word) = bytes.last_chunk() {
        u64::from_le_bytes(*word) >> (8 * (at + 8 - bytes.len()))
    } else {
        bytes[at..]
            .iter()
            .enumerate()
            .fold(0, |x, (i, &b)| x | u64::from(b) << (8 * i))
    };
    // Each byte is below 0x80 (ASCII), so adding up to 0x80 to it carries
    // into no other byte: the high bit of `x + (0x80 - lo)` says `x >= lo`,
    // that of `x + (0x7f - hi)` says `x > hi`.
    let within = |x: u64, lo: u8, hi: u8| {
        (x + LOW * u64::from(0x80 - lo)) & !(x + LOW * u64::from(0x7f - hi)) & HIGH
    };
    // Letters in either case: `| 0x20` lowers A-Z and leaves a-z.
    let word = within(x, b'0', b'9') | within(x | (LOW * 0x20), b'a', b'z');
    // The high bits gathered into the top byte, byte i's as bit i.
    word.wrapping_mul(0x0002_0408_1020_4081) >> 56
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
        let ascii: Vec<&str> = words("Lorem ipsum, dolor-sit 42.amet").collect();
        assert_eq!(ascii, ["Lorem", "ipsum", "dolor", "sit", "42", "amet"]);
        assert_eq!(words("word").collect::<Vec<_>>(), ["word"]);
        assert_eq!(words("").count(), 0);
    }

    /// The next state of a 64-bit linear congruential generator (Knuth's
    /// MMIX constants): seeded text for the tests, the same on every run.
    fn step(state: &mut u64) -> u64 {
        *state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        *state
    }

    /// The masks' runs and the character-wise split agree on every length
    /// around the chunk's 64 bytes, and on random ASCII text.
    #[test]
    fn ascii_runs_are_the_character_split() {
        let by_chars = |text: &str| -> Vec<String> {
            text.split(|c: char| !super::is_word_char(c))
                .filter(|w| !w.is_empty())
                .map(str::to_owned)
                .collect()
        };
        let mut state = 1u64;
        for n in 0..300 {
            for _ in 0..20 {
                let text: String = (0..n)
                    .map(|_| char::from(b" a1,Z.-9"[(step(&mut state) >> 61) as usize]))
                    .collect();
                assert_eq!(
                    words(&text).map(str::to_owned).collect::<Vec<_>>(),
                    by_chars(&text),
                    "{text:?}"
                );
                // the upper bound holds before every step
                let mut it = words(&text);
                loop {
                    let hint = it.size_hint().1.unwrap_or(0);
                    assert!(
                        it.clone().count() <= hint,
                        "{text:?}: more words than the hint"
                    );
                    if it.next().is_none() {
                        break;
                    }
                }
            }
            let full = "w".repeat(n);
            assert_eq!(words(&full).count(), usize::from(n > 0), "{n} word bytes");
        }
    }

    /// The byte-wise split of ASCII text and the character-wise split of
    /// any other agree on every ASCII byte, at every place of texts of 1 to
    /// 17 bytes: through the whole eight-byte read, the shifted read of a
    /// text's last bytes, and the short text's.
    #[test]
    fn ascii_words_split_as_characters_do() {
        for byte in 0u8..0x80 {
            for len in 1..=17 {
                for at in 0..len {
                    let mut bytes = vec![b'a'; len];
                    bytes[at] = byte;
                    if at + 2 < len {
                        bytes[at + 2] = b' ';
                    }
                    let text = String::from_utf8(bytes).expect("ASCII");
                    let by_chars: Vec<&str> = text
                        .split(|c: char| !super::is_word_char(c))
                        .filter(|w| !w.is_empty())
                        .collect();
                    assert_eq!(
                        words(&text).collect::<Vec<_>>(),
                        by_chars,
                        "byte {byte:#x} at {at} of {len}"
                    );
                }
            }
        }
    }

    #[test]
    fn trigrams_are_every_run_of_three_characters() {
        let t: Vec<&str> = trigrams("müll").collect();
        assert_eq!(t, ["mül", "üll"]);
        assert_eq!(trigrams("ab").count(), 0);
        assert_eq!(trigrams("a b").collect::<Vec<_>>(), ["a b"]);
        assert_eq!(trigrams("東京タワー").count(), 3);
    }

    /// Random text of characters of one to four bytes, 0 to 39 of them:
    /// the trigrams are the windows of three decoded characters, from
    /// every start.
    #[test]
    fn trigrams_are_windows_of_characters_of_every_length() {
        let pool = ['a', 'ü', 'и', '東', 'タ', '😀', '𝔸', ' '];
        let mut state = 0x9E37_79B9_7F4A_7C15_u64;
        for len in 0..40 {
            let text: String = (0..len)
                .map(|_| pool[(step(&mut state) >> 33) as usize % pool.len()])
                .collect();
            let chars: Vec<(usize, char)> = text.char_indices().collect();
            let windows: Vec<&str> = chars
                .windows(3)
                .map(|w| &text[w[0].0..w[2].0 + w[2].1.len_utf8()])
                .collect();
            assert_eq!(trigrams(&text).collect::<Vec<_>>(), windows, "{text:?}");
        }
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
