//! The form text is matched on: NFKC, then full case folding (Unicode's
//! CaseFolding.txt, statuses C and F), then NFKC again (folding can leave a
//! sequence that is not NFKC); with accent folding, every combining mark
//! (General_Category M) is dropped from the canonical decomposition first.
//!
//! Both steps are stable for assigned characters under Unicode's
//! normalization and case-folding stability policies, so the JS backend,
//! which normalizes with the engine's ICU and folds with a table generated
//! from this crate's data, gives the same form for every character both
//! know (a test compares them over every code point).

use super::standalone::{alone, lone_form, starts_segment, Alone};
use crate::scratch::wipe_text;
use caseless::Caseless;
use unicode_normalization::char::is_combining_mark;
use unicode_normalization::{is_nfkc_quick, IsNormalized, UnicodeNormalization};

/// What matching ignores beyond case and compatibility forms.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Folding {
    /// Drop accents and other combining marks: `Müller` matches `muller`.
    /// Off by default: in scripts that write vowels as marks (Devanagari,
    /// Thai), dropping them merges words that differ.
    pub accents: bool,
}

/// `text` in matching form, written into `out` (replacing its contents).
///
/// The text is plaintext, and so is every form of it: `out` grows through
/// [`reserve_wiping`], which wipes the allocation it leaves, and the
/// intermediate copies are wiped before they are dropped.
pub fn normalize_into(text: &str, folding: Folding, out: &mut String) {
    out.clear();
    reserve_wiping(out, text.len());
    // ASCII is its own NFKC, and folds by lowering: the common case, with no
    // iterator chain.
    if text.is_ascii() {
        out.push_str(text);
        out.make_ascii_lowercase();
        return;
    }
    if folding.accents {
        let bare = text.nfkd().filter(|c| !is_combining_mark(*c));
        let chain = bare
            .default_case_fold()
            .nfkd()
            .filter(|c| !is_combining_mark(*c))
            .nfkc();
        for c in chain {
            push_wiping(out, c);
        }
        return;
    }
    // NFKC and folding work within segments that start at a character that
    // takes its form alone, or at one of the few others nothing before can
    // combine with or move past either (standalone.rs: `İ`), in the text or
    // in its fold. A segment that is one character (most of mixed text)
    // folds by one lookup; any other goes through the passes. A run of
    // ASCII is copied lowered in one step: each of its characters takes its
    // form alone, and only its last can be followed by a mark (marks are
    // not ASCII), so the last starts a segment as any other does.
    let (mut segment, mut lone, mut room) = (0, None, String::new());
    let mut at = 0;
    while let Some(c) = text[at..].chars().next() {
        if c.is_ascii() {
            let end = at + text[at..].bytes().take_while(u8::is_ascii).count();
            close(&text[segment..at], lone, out, &mut room);
            reserve_wiping(out, end - 1 - at);
            let start = out.len();
            out.push_str(&text[at..end - 1]);
            out[start..].make_ascii_lowercase();
            (segment, at) = (end - 1, end);
            lone = alone(char::from(text.as_bytes()[segment]));
            continue;
        }
        match alone(c) {
            Some(form) => {
                close(&text[segment..at], lone, out, &mut room);
                (segment, lone) = (at, Some(form));
            }
            None if starts_segment(c) => {
                close(&text[segment..at], lone, out, &mut room);
                (segment, lone) = (at, None);
            }
            None => lone = None,
        }
        at += c.len_utf8();
    }
    close(&text[segment..], lone, out, &mut room);
    wipe_text(&mut room);
}

/// Appends the form of `segment`: `lone`'s when the segment is that one
/// character, else what the passes give, made in `room` (the caller wipes
/// it, all of its capacity, once the text is done).
fn close(segment: &str, lone: Option<Alone>, out: &mut String, room: &mut String) {
    match lone {
        Some(form) => form.fold(|c| push_wiping(out, c)),
        None if segment.is_empty() => {}
        // A segment of one character that starts a segment without taking
        // its form alone (`İ`, whose fold ends with a combining dot): its
        // form, made once.
        None => match lone_form(segment) {
            Some(form) => {
                reserve_wiping(out, form.len());
                out.push_str(form);
            }
            None => {
                room.clear();
                passes(segment, room);
                reserve_wiping(out, room.len());
                out.push_str(room);
            }
        },
    }
}

/// NFKC, folding, NFKC, written into `out` (empty; it grows through
/// [`reserve_wiping`]), each NFKC pass skipped
/// when Unicode's quick check already answers "yes" (most text is stored
/// composed): the check reads a table entry a character, where the pass
/// decomposes, reorders and recomposes (docs/performance.md, "Search
/// tokens, per value"). A "maybe" or "no" runs the pass; the result is the
/// same either way.
fn passes(text: &str, out: &mut String) {
    reserve_wiping(out, text.len());
    if is_nfkc_quick(text.chars()) == IsNormalized::Yes {
        fold_into(text.chars(), out);
    } else {
        fold_into(text.nfkc(), out);
    }
    if is_nfkc_quick(out.chars()) != IsNormalized::Yes {
        let mut folded = std::mem::replace(out, String::with_capacity(out.len()));
        for c in folded.nfkc() {
            push_wiping(out, c);
        }
        wipe_text(&mut folded);
    }
}

/// Full case folding, with ASCII lowered in place: caseless looks every
/// character up in its table, and mixed text is often half ASCII (spaces,
/// digits, punctuation, Latin letters).
fn fold_into(chars: impl Iterator<Item = char>, out: &mut String) {
    for c in chars {
        if c.is_ascii() {
            push_wiping(out, c.to_ascii_lowercase());
        } else {
            for folded in std::iter::once(c).default_case_fold() {
                push_wiping(out, folded);
            }
        }
    }
}

/// Appends `c`, doubling `out`'s room through [`reserve_wiping`] when it
/// is full.
#[inline]
fn push_wiping(out: &mut String, c: char) {
    if out.capacity() - out.len() < c.len_utf8() {
        reserve_wiping(out, out.capacity().max(64));
    }
    out.push(c);
}

/// Makes room for `more` bytes after `out`'s contents. `String`'s own
/// growth frees the old allocation as it is; this moves the contents to
/// the new one and wipes the old (all of its capacity, what a previous
/// value left there included).
fn reserve_wiping(out: &mut String, more: usize) {
    if out.capacity() - out.len() >= more {
        return;
    }
    let mut bigger = String::with_capacity(out.len() + more);
    bigger.push_str(out);
    wipe_text(out);
    *out = bigger;
}

/// [`normalize_into`], allocating.
pub fn normalize(text: &str, folding: Folding) -> String {
    let mut out = String::with_capacity(text.len());
    normalize_into(text, folding, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::{normalize, Folding};

    const PLAIN: Folding = Folding { accents: false };
    const BARE: Folding = Folding { accents: true };

    #[test]
    fn case_and_compatibility_forms_fold() {
        assert_eq!(normalize("Hello WORLD", PLAIN), "hello world");
        // full folding: ß is ss, ﬁ (a compatibility ligature) is fi, Σ and final ς are σ
        assert_eq!(
            normalize("Straße ﬁle ΟΔΟΣ οδος", PLAIN),
            "strasse file οδοσ οδοσ"
        );
        // fullwidth forms and the Kelvin sign are their plain letters
        assert_eq!(normalize("ＡＢＣ \u{212A}", PLAIN), "abc k");
        // İ folds to i and a combining dot, which NFKC keeps
        assert_eq!(normalize("İ", PLAIN), "i\u{307}");
        assert_eq!(normalize("Ǆ", PLAIN), "dž");
    }

    #[test]
    fn composed_and_decomposed_text_match() {
        assert_eq!(
            normalize("Mu\u{308}ller", PLAIN),
            normalize("Müller", PLAIN)
        );
        assert_eq!(normalize("Müller", PLAIN), "müller");
    }

    #[test]
    fn accents_fold_only_when_asked() {
        assert_eq!(normalize("Müller Ærø café", BARE), "muller ærø cafe");
        assert_eq!(normalize("Mu\u{308}ller", BARE), "muller");
        assert_eq!(normalize("ﬁancée", BARE), "fiancee");
        assert_ne!(normalize("Müller", PLAIN), normalize("Muller", PLAIN));
    }

    /// The form the quick-check skips must give: NFKC, full folding, NFKC,
    /// with no pass skipped.
    fn every_pass(text: &str) -> String {
        use caseless::Caseless;
        use unicode_normalization::UnicodeNormalization;
        text.nfkc().default_case_fold().nfkc().collect()
    }

    #[test]
    fn skipping_passes_changes_nothing() {
        let mut out = String::new();
        for c in (0..=0x10FFFFu32).filter_map(char::from_u32) {
            for text in [
                c.to_string(),
                format!("a{c}a"),
                format!("{c}{c}"),
                format!("A{c}\u{308}"),
                format!("\u{301}{c}\u{323}"),
            ] {
                super::normalize_into(&text, PLAIN, &mut out);
                assert_eq!(out, every_pass(&text), "U+{:04X} in {text:?}", c as u32);
            }
        }
    }

    /// Text mixed from characters that take their form alone and ones that
    /// do not (combining marks, Hangul jamo, halfwidth kana and their
    /// voicing marks, ligatures, İ and others a segment starts at, ß, final
    /// sigma): the segments give what the passes over the whole text give.
    #[test]
    fn segments_give_the_whole_texts_form() {
        let pool: Vec<char> = "aZ 9-ßİǰΐᾷẖῤıIJΣσςÅA\u{30A}e\u{301}\u{327}\u{308}\u{342}\u{345}\u{307}\u{30C}\u{313}\u{314}ﬁ①ﾀﾞﾟ\u{3099}か\u{1100}\u{1161}\u{11A8}가ᅡ東Ω\u{212B}ǅИй\u{306}\u{B47}\u{B3E}\u{9C7}\u{9BE}\u{D46}\u{D3E}\u{DD9}\u{DCF}"
            .chars()
            .collect();
        let mut state = 0x2545_F491_4F6C_DD1D_u64;
        let mut out = String::new();
        for _ in 0..50_000 {
            let mut text = String::new();
            for _ in 0..1 + (state >> 60) {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                text.push(pool[(state >> 33) as usize % pool.len()]);
            }
            super::normalize_into(&text, PLAIN, &mut out);
            assert_eq!(out, every_pass(&text), "{text:?}");
        }
    }

    /// Every composite NFKC gives: its fold begins with a starter that
    /// composes with nothing before it (the segments' argument in
    /// standalone.rs); and a canonical pair, alone, after a letter and
    /// before a mark, or between characters that fold by lookup, gives what
    /// the passes give.
    #[test]
    fn canonical_pairs_give_the_whole_texts_form() {
        use caseless::Caseless;
        use unicode_normalization::char::{canonical_combining_class, decompose_canonical};
        use unicode_normalization::{is_nfkc_quick, IsNormalized};
        let mut out = String::new();
        let mut pairs = 0;
        for c in (0..=0x10FFFFu32).filter_map(char::from_u32) {
            let mut parts = Vec::new();
            decompose_canonical(c, |d| parts.push(d));
            if parts.len() < 2 {
                continue;
            }
            // A composite NFKC can give: a starter its quick check keeps.
            let kept = canonical_combining_class(c) == 0
                && is_nfkc_quick(std::iter::once(c)) == IsNormalized::Yes;
            let first = std::iter::once(c).default_case_fold().next().unwrap_or(c);
            assert!(
                !kept
                    || canonical_combining_class(first) == 0
                        && is_nfkc_quick(std::iter::once(first)) != IsNormalized::Maybe,
                "the fold of U+{:04X} begins with U+{:04X}",
                c as u32,
                first as u32
            );
            let pair: String = parts.iter().collect();
            for text in [pair.clone(), format!("a{pair}\u{301}"), format!("Σ{pair}ß")] {
                super::normalize_into(&text, PLAIN, &mut out);
                assert_eq!(out, every_pass(&text), "{text:?}");
            }
            pairs += 1;
        }
        assert!(pairs > 2_000, "{pairs} composites");
    }

    #[test]
    fn growing_keeps_the_text() {
        // NFKC writes U+FDFA as 18 characters: several growths from a small buffer
        let text = "\u{FDFA}".repeat(40);
        let mut out = String::with_capacity(1);
        super::normalize_into(&text, PLAIN, &mut out);
        assert_eq!(out, every_pass(&text));
    }

    #[test]
    fn scripts_without_case_are_kept() {
        assert_eq!(normalize("東京タワー", PLAIN), "東京タワー");
        // halfwidth katakana is its fullwidth form under NFKC
        assert_eq!(normalize("ﾀﾜｰ", PLAIN), "タワー");
        assert_eq!(normalize("Москва", PLAIN), "москва");
    }
}
