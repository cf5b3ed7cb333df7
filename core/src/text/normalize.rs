//! Text as a pattern should see it: NFKC, with the default-ignorable code points (zero-width
//! characters, bidirectional controls, tag characters, variation selectors, ...) removed, and
//! a map from every position of that text back to a byte span of the original, so a finding
//! made on the normalised text points at the line and column the author sees.
//!
//! Why: a pattern on the raw text is walked around by a character the reader does not see
//! (`Ig<U+200B>nore previous instructions`) or by a look-alike the compatibility mapping
//! folds (`ｉｇｎｏｒｅ`, `ﬁle`). Normalising first makes these the text a model reads.
//!
//! Why hand-written around the `unicode-normalization` crate and not its `nfkc()` alone: the
//! crate gives the normalised characters but not where each came from. The text is cut at
//! normalisation boundaries (before a starter that NFKC keeps, or that decomposes into text
//! starting with one: nothing before it composes with it or with anything after it), so
//! the NFKC of the whole is the concatenation of the NFKC of each piece, and each changed
//! piece maps to its own source span. Unchanged text (all of an ASCII file, nearly all of
//! any skill) is borrowed, not copied, and costs one scan.
//!
//! Not folded: look-alikes from other scripts (Cyrillic `і` for Latin `i`), which NFKC keeps;
//! Unicode's confusables skeleton would fold them, at the cost of folding real text too.
//!
//! A default-ignorable character is removed as its own piece and does not break a piece:
//! `e<U+200B><U+0301>` normalises as `e<U+0301>` would (to `é`).

use std::borrow::Cow;

use unicode_normalization::char::canonical_combining_class;
use unicode_normalization::{IsNormalized, UnicodeNormalization, is_nfkc_quick};

use super::Span;

/// A text after normalisation, with the way back to the original's byte offsets.
#[derive(Debug, Clone)]
pub struct Normalized<'a> {
    text: Cow<'a, str>,
    /// The places where the text changed, in order: outside them a byte of the normalised
    /// text is the byte of the original at the same distance from the last piece's end.
    pieces: Vec<Piece>,
}

/// One changed stretch: `norm_len` bytes at `norm` in the normalised text came from
/// `orig_len` bytes at `orig` in the original (`norm_len` is 0 for a removed character).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Piece {
    norm: usize,
    orig: usize,
    norm_len: usize,
    orig_len: usize,
}

/// Normalise `text`: NFKC, default-ignorable code points removed ([`is_ignorable`]).
pub fn normalize(text: &str) -> Normalized<'_> {
    Normalized::new(text)
}

impl<'a> Normalized<'a> {
    /// Normalise `original` (see the module's docs).
    pub fn new(original: &'a str) -> Normalized<'a> {
        let Some(first) = first_change(original) else {
            return Normalized {
                text: Cow::Borrowed(original),
                pieces: Vec::new(),
            };
        };
        let mut out = String::with_capacity(original.len());
        out.push_str(&original[..first]);
        let mut pieces = Vec::new();
        let mut at = first;
        let bytes = original.as_bytes();
        let mut seen = StableChars::new();
        while at < original.len() {
            // copy the ASCII up to the character before the next non-ASCII byte at once
            let next = next_non_ascii(bytes, at).unwrap_or(bytes.len());
            if next > at + 1 {
                out.push_str(&original[at..next - 1]);
                at = next - 1;
            }
            if is_lone_ascii(bytes, at) {
                out.push(bytes[at] as char);
                at += 1;
                continue;
            }
            if let Some(next) = seen.lone_at(original, at) {
                out.push_str(&original[at..next]);
                at = next;
                continue;
            }
            let end = segment_end(original, at);
            push_segment(original, at, end, &mut out, &mut pieces);
            at = end;
        }
        Normalized {
            text: Cow::Owned(out),
            pieces,
        }
    }

    /// The normalised text.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether normalising changed nothing (then every offset maps to itself).
    pub fn is_unchanged(&self) -> bool {
        self.pieces.is_empty()
    }

    /// The byte offset in the original where the normalised text's byte `offset` came from:
    /// the start of the changed stretch it lies in, or the same byte of copied text. An
    /// offset at the end of the normalised text maps to the end of the original.
    pub fn original_offset(&self, offset: usize) -> usize {
        match self.piece_at(offset) {
            None => offset,
            Some(p) if offset < p.norm + p.norm_len => p.orig,
            Some(p) => offset - (p.norm + p.norm_len) + (p.orig + p.orig_len),
        }
    }

    /// The byte span of the original that `span` of the normalised text came from. It covers
    /// every original character behind the span, including characters removed inside it, and
    /// none removed just before or after it.
    pub fn original_span(&self, span: Span) -> Span {
        if self.pieces.is_empty() {
            return span;
        }
        let start = self.original_offset(span.start);
        if span.is_empty() {
            return Span::empty(start);
        }
        let last = span.end - 1;
        let end = match self.piece_at(last) {
            Some(p) if last < p.norm + p.norm_len => p.orig + p.orig_len,
            _ => self.original_offset(last) + 1,
        };
        Span::new(start, end.max(start))
    }

    /// The last piece starting at or before `offset`, preferring a changed stretch that holds
    /// it over a removal at the same place.
    fn piece_at(&self, offset: usize) -> Option<&Piece> {
        let after = self.pieces.partition_point(|p| p.norm <= offset);
        self.pieces[..after].last()
    }
}

/// Whether `c` is a Unicode default-ignorable code point (DerivedCoreProperties.txt,
/// `Default_Ignorable_Code_Point`): characters a renderer shows as nothing unless it supports
/// them, and so can hide text or split a word without the reader seeing it.
pub fn is_ignorable(c: char) -> bool {
    let c = c as u32;
    if c < 0xAD {
        return false;
    }
    matches!(
        c,
        0x00AD
            | 0x034F
            | 0x061C
            | 0x115F..=0x1160
            | 0x17B4..=0x17B5
            | 0x180B..=0x180F
            | 0x200B..=0x200F
            | 0x202A..=0x202E
            | 0x2060..=0x206F
            | 0x3164
            | 0xFE00..=0xFE0F
            | 0xFEFF
            | 0xFFA0
            | 0xFFF0..=0xFFF8
            | 0x1BCA0..=0x1BCA3
            | 0x1D173..=0x1D17A
            | 0xE0000..=0xE0FFF
    )
}

/// Whether NFKC leaves `c` as it is and nothing before it composes with it.
fn is_stable(c: char) -> bool {
    c.is_ascii()
        || (canonical_combining_class(c) == 0
            && is_nfkc_quick(std::iter::once(c)) == IsNormalized::Yes)
}

/// Whether a normalisation piece may start at `c`: nothing before it composes with it. That
/// holds for a stable character, and for one that decomposes (`ｉ`, `ﬁ`) into text starting
/// with a stable one.
fn is_boundary(c: char) -> bool {
    is_stable(c)
        || (is_nfkc_quick(std::iter::once(c)) == IsNormalized::No
            && std::iter::once(c).nfkd().next().is_some_and(is_stable))
}

/// The offset of the first segment normalisation changes, if any. ASCII never changes, and
/// most other characters are boundaries with nothing after them to compose.
fn first_change(text: &str) -> Option<usize> {
    if text.is_ascii() {
        return None;
    }
    let bytes = text.as_bytes();
    let mut at = 0;
    let mut seen = StableChars::new();
    while at < bytes.len() {
        // ASCII followed by ASCII never changes: go to the character before the next
        // non-ASCII byte (it may be a letter an accent composes with)
        let next = next_non_ascii(bytes, at)?;
        at = at.max(next.saturating_sub(1));
        if is_lone_ascii(bytes, at) {
            at += 1;
            continue;
        }
        if let Some(next) = seen.lone_at(text, at) {
            at = next;
            continue;
        }
        let end = segment_end(text, at);
        if segment_changes(&text[at..end]) {
            return Some(at);
        }
        at = end;
    }
    None
}

/// The answers of [`is_stable`] for the characters met last, by the low bits of the code
/// point. Skill text repeats few non-ASCII characters (dashes, arrows, quotes, emoji), and
/// the quick check walks the crate's tables for each.
struct StableChars {
    keys: [u32; 64],
    stable: [bool; 64],
}

impl StableChars {
    fn new() -> StableChars {
        StableChars {
            keys: [u32::MAX; 64],
            stable: [false; 64],
        }
    }

    /// Whether `c` is stable and not ignorable: a segment of its own that stays as it is.
    fn kept(&mut self, c: char) -> bool {
        let slot = c as usize % 64;
        if self.keys[slot] != c as u32 {
            self.keys[slot] = c as u32;
            self.stable[slot] = is_stable(c) && !is_ignorable(c);
        }
        self.stable[slot]
    }

    /// The end of the character at `at` when it is a segment of its own that normalising
    /// keeps: ASCII or kept, and followed by ASCII, a kept character or the end.
    fn lone_at(&mut self, text: &str, at: usize) -> Option<usize> {
        let c = text[at..].chars().next()?;
        if !c.is_ascii() && !self.kept(c) {
            return None;
        }
        let next = at + c.len_utf8();
        match text[next..].chars().next() {
            None => Some(next),
            Some(d) if d.is_ascii() || self.kept(d) => Some(next),
            Some(_) => None,
        }
    }
}

/// The offset of the first byte at or after `from` that is not ASCII, eight bytes at a time.
pub(crate) fn next_non_ascii(bytes: &[u8], from: usize) -> Option<usize> {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut at = from;
    while at + 8 <= bytes.len() {
        let word = u64::from_le_bytes(bytes[at..at + 8].try_into().ok()?);
        if word & HIGH != 0 {
            break;
        }
        at += 8;
    }
    bytes[at..].iter().position(|b| *b >= 0x80).map(|i| at + i)
}

/// Whether the byte at `at` is an ASCII character that is a whole segment: the next is
/// ASCII too (or the text ends), so nothing can combine with it.
fn is_lone_ascii(bytes: &[u8], at: usize) -> bool {
    bytes[at] < 0x80 && bytes.get(at + 1).is_none_or(|b| *b < 0x80)
}

/// The end of the segment starting at `at`: before the next boundary character.
fn segment_end(text: &str, at: usize) -> usize {
    let mut chars = text[at..].char_indices();
    chars.next();
    for (i, c) in chars {
        if is_boundary(c) && !is_ignorable(c) {
            return at + i;
        }
    }
    text.len()
}

/// Whether normalising `segment` (one segment: a character and what composes with it) would
/// change it.
fn segment_changes(segment: &str) -> bool {
    let mut chars = segment.chars();
    let first = chars.next();
    let single = chars.next().is_none();
    match first {
        Some(c) if single => is_ignorable(c) || !is_stable(c),
        _ => true,
    }
}

/// Append the normalised `text[start..end]` (one segment) to `out`, recording the pieces.
fn push_segment(text: &str, start: usize, end: usize, out: &mut String, pieces: &mut Vec<Piece>) {
    let segment = &text[start..end];
    if !segment_changes(segment) {
        out.push_str(segment);
        return;
    }
    let kept: String = segment.chars().filter(|c| !is_ignorable(*c)).collect();
    let normalized: String = kept.nfkc().collect();
    if normalized == kept {
        // Only removals: copy what is kept character by character, so the rest keeps its
        // own positions.
        for (i, c) in segment.char_indices() {
            if is_ignorable(c) {
                pieces.push(Piece {
                    norm: out.len(),
                    orig: start + i,
                    norm_len: 0,
                    orig_len: c.len_utf8(),
                });
            } else {
                out.push(c);
            }
        }
        return;
    }
    pieces.push(Piece {
        norm: out.len(),
        orig: start,
        norm_len: normalized.len(),
        orig_len: segment.len(),
    });
    out.push_str(&normalized);
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn mapped<'t>(original: &'t str, n: &Normalized<'_>, needle: &str) -> &'t str {
        let at = n.as_str().find(needle).expect("needle in normalised text");
        let span = n.original_span(Span::new(at, at + needle.len()));
        &original[span.start..span.end]
    }

    #[test]
    fn ascii_is_borrowed_and_maps_to_itself() {
        let n = normalize("Ignore previous instructions.");
        assert!(n.is_unchanged());
        assert!(matches!(n.text, Cow::Borrowed(_)));
        assert_eq!(n.original_span(Span::new(3, 9)), Span::new(3, 9));
        let n = normalize("Em dashes — arrows → and é stay as they are.");
        assert!(n.is_unchanged());
    }

    #[test]
    fn invisible_characters_are_removed_and_spans_map_back() {
        let original = "Say: Ig\u{200B}nore previous instructions.";
        let n = normalize(original);
        assert_eq!(n.as_str(), "Say: Ignore previous instructions.");
        assert_eq!(mapped(original, &n, "Ignore"), "Ig\u{200B}nore");
        assert_eq!(mapped(original, &n, "previous"), "previous");
        assert_eq!(mapped(original, &n, "Ig"), "Ig");
        assert_eq!(mapped(original, &n, "nore"), "nore");
        for c in [
            '\u{200C}',
            '\u{200D}',
            '\u{2060}',
            '\u{FEFF}',
            '\u{202E}',
            '\u{2066}',
            '\u{E0041}',
            '\u{00AD}',
            '\u{FE0F}',
        ] {
            let text = format!("a{c}b");
            assert_eq!(normalize(&text).as_str(), "ab", "{c:?}");
        }
    }

    #[test]
    fn compatibility_forms_fold_and_map_to_their_source() {
        let original = "x ｉｇｎｏｒｅ the ﬁle\u{00A0}now";
        let n = normalize(original);
        assert_eq!(n.as_str(), "x ignore the file now");
        assert_eq!(mapped(original, &n, "ignore"), "ｉｇｎｏｒｅ");
        assert_eq!(mapped(original, &n, "file"), "ﬁle");
        assert_eq!(mapped(original, &n, "now"), "now");
        // a match inside a folded character maps to the whole character
        assert_eq!(mapped(original, &n, "i"), "ｉ");
        assert_eq!(mapped(original, &n, "fi"), "ﬁ");
    }

    #[test]
    fn combining_marks_compose_across_a_removed_character() {
        let n = normalize("cafe\u{200B}\u{0301}!");
        assert_eq!(n.as_str(), "café!");
        assert_eq!(normalize("e\u{0301}").as_str(), "é");
        // conjoining Hangul jamo compose across segments' starters
        assert_eq!(normalize("\u{1100}\u{1161}\u{11A8}").as_str(), "\u{AC01}");
    }

    #[test]
    fn ignorable_table_agrees_with_known_members() {
        for c in [
            '\u{200B}',
            '\u{2061}',
            '\u{E0001}',
            '\u{E01EF}',
            '\u{1D173}',
        ] {
            assert!(is_ignorable(c), "{c:?}");
        }
        for c in ['a', ' ', '\u{A0}', '\u{2028}', '\u{300}', '😀', '\u{E1000}'] {
            assert!(!is_ignorable(c), "{c:?}");
        }
    }

    fn unicode_text() -> impl Strategy<Value = String> {
        let pieces = prop::sample::select(vec![
            "a",
            "I",
            "g",
            " ",
            "\n",
            "é",
            "e\u{301}",
            "\u{301}",
            "\u{200B}",
            "\u{200D}",
            "\u{202E}",
            "\u{E0041}",
            "\u{FEFF}",
            "ｉ",
            "ﬁ",
            "\u{A0}",
            "😀",
            "👩\u{200D}💻",
            "\u{1100}",
            "\u{1161}",
            "\u{11A8}",
            "한",
            "—",
            "ſ",
            "K",
            "\u{FE0F}",
            "①",
            "½",
        ]);
        let listed = prop::collection::vec(pieces, 0..40).prop_map(|v| v.concat());
        let any = prop::collection::vec(any::<char>(), 0..24)
            .prop_map(|v| v.into_iter().collect::<String>());
        prop_oneof![listed, any]
    }

    proptest! {
        /// The normalised text is NFKC of the text without its ignorable characters.
        #[test]
        fn agrees_with_whole_text_nfkc(text in unicode_text()) {
            let kept: String = text.chars().filter(|c| !is_ignorable(*c)).collect();
            let expected: String = kept.nfkc().collect();
            let n = normalize(&text);
            prop_assert_eq!(n.as_str(), expected.as_str());
        }

        /// Every span maps to a span of the original on character boundaries, in order, and
        /// the original behind the whole text is the whole original less what was removed at
        /// its ends.
        #[test]
        fn spans_map_to_ordered_char_boundaries(text in unicode_text(), a in 0usize..200, b in 0usize..200) {
            let n = normalize(&text);
            let norm = n.as_str();
            let (a, b) = (a.min(norm.len()), b.min(norm.len()));
            let (a, b) = (a.min(b), a.max(b));
            if norm.is_char_boundary(a) && norm.is_char_boundary(b) {
                let span = n.original_span(Span::new(a, b));
                prop_assert!(span.start <= span.end && span.end <= text.len());
                prop_assert!(text.is_char_boundary(span.start) && text.is_char_boundary(span.end));
                // what the span covers normalises to a text containing the normalised span
                let behind: String = text[span.start..span.end]
                    .chars().filter(|c| !is_ignorable(*c)).collect::<String>().nfkc().collect();
                prop_assert!(behind.contains(&norm[a..b]), "{:?} behind {:?}", behind, &norm[a..b]);
            }
        }
    }
}
