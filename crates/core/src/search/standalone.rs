//! Characters that take their matching form alone: nothing before such a
//! character can combine with it or move past it under NFKC, in the text or
//! in its fold, so normalization splits text before each of them, and one
//! that stands between two of them is just its case fold. Mixed text (Latin
//! with accents, Cyrillic, Greek, Japanese) is mostly such characters: a
//! table lookup each replaces normalization's passes of lookups (NFKC's
//! quick check, folding, the quick check again; docs/performance.md,
//! "Search tokens, per value").
//!
//! A character stands alone when it is a starter (canonical combining class
//! 0) that NFKC's quick check answers "yes" for (so it composes with nothing
//! before it), and every character of its fold is one as well. The segment
//! before it goes through the passes whole; what they make of it ends
//! before the split, and the split character's fold starts a new run that
//! composes with nothing before it. A segment's own first character may
//! compose with marks after it (`I` and a combining dot is `İ`); its fold
//! is then that composite's, which begins with a starter, as every case
//! fold of a composite does. A few starters NFKC's quick check keeps fold
//! to such a starter followed by a mark (`İ` is `i` and a combining dot
//! above): nothing before them combines with them or moves past them
//! either, so a segment starts at each of them too, but a mark after one
//! may combine with its fold, so it is not alone; a segment that is one of
//! them and nothing more has the character's own form, made once. The
//! table is made from the same crates' data the passes use, and tests
//! compare the two over every code point, every canonical pair, and mixed
//! text.

use caseless::Caseless;
use std::sync::OnceLock;
use unicode_normalization::char::canonical_combining_class;
use unicode_normalization::{is_nfkc_quick, IsNormalized, UnicodeNormalization};

/// The table's end: Latin, Greek, Cyrillic, Armenian, Hebrew, Arabic,
/// Indic scripts, Georgian, Hangul jamo, the general punctuation and
/// symbol blocks, CJK symbols, Hiragana and Katakana.
const TABLE_END: u32 = 0x3100;
/// CJK Unified Ideographs: starters that NFKC keeps and folding leaves as
/// they are (the test over every code point checks it).
const IDEOGRAPHS: std::ops::RangeInclusive<u32> = 0x4E00..=0x9FFF;
/// Entries that are not a fold's one character (the first two are
/// noncharacters, which no character folds to; U+FFFD folds to itself, and
/// nothing below the table's end folds to it).
const NOT_ALONE: u16 = 0xFFFF;
const FOLDS_TO_MORE: u16 = 0xFFFE;
/// A character a segment starts at that does not take its form alone:
/// a starter NFKC's quick check keeps, whose fold begins with one but goes
/// on with a mark (`İ` is `i` and a combining dot above).
const STARTS: u16 = 0xFFFD;

/// The form of a character that takes it alone.
// No Debug: a value is a character of plaintext.
#[derive(Clone, Copy)]
pub enum Alone {
    /// Its fold is this one character.
    One(char),
    /// Its fold is longer (`ß` is `ss`): this character, to fold.
    More(char),
}

impl Alone {
    /// Gives the form's characters to `push`.
    #[inline]
    pub fn fold(self, mut push: impl FnMut(char)) {
        match self {
            Alone::One(folded) => push(folded),
            Alone::More(c) => std::iter::once(c).default_case_fold().for_each(&mut push),
        }
    }
}

/// `c`'s form when it takes it alone, else None.
#[inline]
pub fn alone(c: char) -> Option<Alone> {
    let code = u32::from(c);
    if code < 0x80 {
        return Some(Alone::One(c.to_ascii_lowercase()));
    }
    if IDEOGRAPHS.contains(&code) {
        return Some(Alone::One(c));
    }
    match table().get(code as usize).copied()? {
        NOT_ALONE | STARTS => None,
        FOLDS_TO_MORE => Some(Alone::More(c)),
        one => char::from_u32(u32::from(one)).map(Alone::One),
    }
}

/// Whether a segment starts at `c`, which does not take its form alone
/// (`alone` gave None): nothing before it composes with it or moves past
/// it, in the text or in its fold, as for a character that does, but a mark
/// after it may (`İ`, then a combining mark).
#[inline]
pub fn starts_segment(c: char) -> bool {
    table().get(u32::from(c) as usize) == Some(&STARTS)
}

/// The form of `segment` when it is one character a segment starts at
/// ([`starts_segment`]) and nothing more, as the passes make it (NFKC,
/// folding, NFKC): `İ` before a character that takes its form alone or
/// starts a segment. Its form is the character's own, so it is made once.
pub fn lone_form(segment: &str) -> Option<&'static str> {
    let mut chars = segment.chars();
    let code = u32::from(chars.next()?);
    if chars.next().is_some() {
        return None;
    }
    let forms = lone_forms();
    let at = forms.binary_search_by_key(&code, |(c, _)| *c).ok()?;
    Some(&forms[at].1)
}

/// A character [`lone_forms`] holds, by its code point, and its form.
type LoneForm = (u32, Box<str>);

/// Every character a segment starts at that does not take its form alone,
/// with its form, in code point order; made on first use, after the table,
/// and kept for the process.
fn lone_forms() -> &'static [LoneForm] {
    static FORMS: OnceLock<Box<[LoneForm]>> = OnceLock::new();
    FORMS.get_or_init(|| {
        (0..TABLE_END)
            .filter_map(char::from_u32)
            .filter(|&c| starts_segment(c))
            .map(|c| {
                let form: String = std::iter::once(c)
                    .nfkc()
                    .default_case_fold()
                    .nfkc()
                    .collect();
                (u32::from(c), form.into_boxed_str())
            })
            .collect()
    })
}

/// Whether `c` is a starter that NFKC's quick check answers "yes" for.
fn starter_kept(c: char) -> bool {
    canonical_combining_class(c) == 0 && is_nfkc_quick(std::iter::once(c)) == IsNormalized::Yes
}

/// `c`'s entry: its fold's one character, FOLDS_TO_MORE, STARTS, or NOT_ALONE.
fn entry(c: char) -> u16 {
    if !starter_kept(c) {
        return NOT_ALONE;
    }
    let folded: Vec<char> = std::iter::once(c).default_case_fold().collect();
    if !folded.iter().all(|&f| starter_kept(f)) {
        return if folded.first().is_some_and(|&f| starter_kept(f)) {
            STARTS
        } else {
            NOT_ALONE
        };
    }
    match folded[..] {
        [one] => u16::try_from(u32::from(one))
            .ok()
            .filter(|&f| f < STARTS)
            .unwrap_or(FOLDS_TO_MORE),
        _ => FOLDS_TO_MORE,
    }
}

/// The table, made on first use from the crates' own data (its cost is in
/// docs/performance.md) and kept for the process.
fn table() -> &'static [u16] {
    static TABLE: OnceLock<Box<[u16]>> = OnceLock::new();
    TABLE.get_or_init(|| {
        (0..TABLE_END)
            .map(|code| char::from_u32(code).map_or(NOT_ALONE, entry))
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::alone;

    /// The text's form if every character takes it alone.
    fn fold_all(text: &str) -> Option<String> {
        let mut out = String::new();
        for c in text.chars() {
            alone(c)?.fold(|f| out.push(f));
        }
        Some(out)
    }

    #[test]
    fn common_scripts_stand_alone() {
        assert_eq!(
            fold_all("Jürgen Straße, Иван, Αθήνα? 東京タワー").as_deref(),
            Some("jürgen strasse, иван, αθήνα? 東京タワー")
        );
        // a combining mark, halfwidth katakana, a compatibility ligature,
        // and İ (its fold ends with a combining dot) do not
        for c in ['\u{308}', 'ﾀ', 'ﬁ', 'İ'] {
            assert!(alone(c).is_none(), "{c:?}");
        }
    }

    /// The characters a segment starts at without taking their form alone:
    /// the 25 of CaseFolding.txt's full (F) folds that begin with a starter
    /// and go on with a mark. Each fold begins with a starter NFKC's quick
    /// check keeps and holds a character that is not one (NFKC may compose
    /// them again: `ǰ`'s form is `ǰ`; the form's equality with the three
    /// passes is normalize.rs's test over every code point alone).
    #[test]
    fn the_characters_a_segment_starts_at_fold_to_a_starter_and_a_mark() {
        use caseless::Caseless;
        let forms = super::lone_forms();
        let chars: String = forms
            .iter()
            .filter_map(|(c, _)| char::from_u32(*c))
            .collect();
        assert_eq!(chars, "İǰΐΰẖẗẘẙὐὒὔὖᾶᾷῆῇῒῖῗῢῤῦῧῶῷ");
        for c in chars.chars() {
            let mut fold = std::iter::once(c).default_case_fold();
            assert!(fold.next().is_some_and(super::starter_kept), "{c:?}");
            assert!(fold.any(|f| !super::starter_kept(f)), "{c:?}");
        }
    }

    #[test]
    fn a_segment_starts_at_a_dotted_capital_i() {
        use super::{lone_form, starts_segment};
        // İ composes with nothing before it, and its fold begins with i: a
        // segment starts there, and alone it is its fold, i and a combining dot
        assert!(starts_segment('İ'));
        assert_eq!(lone_form("İ"), Some("i\u{307}"));
        // with a mark after it, the segment is longer: the passes make its form
        assert_eq!(lone_form("İ\u{301}"), None);
        // a mark, a halfwidth kana (its voicing mark composes with it) and a
        // character that takes its form alone do not start one this way
        for c in ['\u{308}', 'ﾀ', 'a', 'é'] {
            assert!(!starts_segment(c), "{c:?}");
            assert_eq!(lone_form(&c.to_string()), None, "{c:?}");
        }
    }
}
