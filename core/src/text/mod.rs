//! Source positions. Internally every position is a byte offset into the file's text; line and
//! column are computed only for display (CLI, SARIF) and UTF-16 columns only at the LSP boundary.

pub mod normalize;

use serde::{Deserialize, Serialize};

/// The sentence of `text` holding `start..end`: from after the last sentence end (`. `, `! `,
/// `? ` or a newline) to the next one. Prose rules read an order within its sentence, so
/// words of a neighbouring table row or bullet do not complete it.
pub(crate) fn sentence_around(text: &str, start: usize, end: usize) -> Span {
    let b = text.as_bytes();
    let is_end = |i: usize| {
        b[i] == b'\n'
            || matches!(b[i], b'.' | b'!' | b'?')
                && b.get(i + 1).is_none_or(|c| c.is_ascii_whitespace())
    };
    let from = (0..start).rev().find(|&i| is_end(i)).map_or(0, |i| i + 1);
    let to = (end..b.len()).find(|&i| is_end(i)).map_or(b.len(), |i| i);
    Span::new(from, to.max(end))
}

/// A half-open byte range `start..end` into one file's text.
///
/// Byte offsets are the one currency every layer shares: they survive edits elsewhere in the
/// file badly, but they are exact, cheap, and convertible to any editor's column unit.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize,
)]
pub struct Span {
    /// First byte of the range.
    pub start: usize,
    /// One past the last byte of the range.
    pub end: usize,
}

impl Span {
    /// A range from `start` to `end`; a reversed pair is normalised so a Span is never negative.
    pub fn new(start: usize, end: usize) -> Span {
        if end < start {
            Span {
                start: end,
                end: start,
            }
        } else {
            Span { start, end }
        }
    }

    /// An empty range at `offset`, for findings about something missing at a place.
    pub fn empty(offset: usize) -> Span {
        Span {
            start: offset,
            end: offset,
        }
    }

    /// The character at `offset` of `text`, or an empty range where there is none to show (a
    /// line end, the end of the text). A parser error points at one character, and an editor
    /// draws an empty range as almost nothing.
    pub fn char_at(text: &str, offset: usize) -> Span {
        match text.get(offset..).and_then(|rest| rest.chars().next()) {
            Some(c) if c != '\n' && c != '\r' => Span::new(offset, offset + c.len_utf8()),
            _ => Span::empty(offset),
        }
    }

    /// Number of bytes covered.
    pub fn len(&self) -> usize {
        self.end - self.start
    }

    /// True when the range covers no byte.
    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }

    /// The same range moved `delta` bytes later, for spans computed on a slice of a file.
    pub fn shifted(self, delta: usize) -> Span {
        Span {
            start: self.start + delta,
            end: self.end + delta,
        }
    }

    /// The smallest range that covers both.
    pub fn cover(self, other: Span) -> Span {
        Span {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }
}

/// A 1-based line and column, as compilers print them. `column` counts Unicode scalar values,
/// so a caret under a non-ASCII line lands where a terminal shows the character.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct LineCol {
    /// 1-based line number.
    pub line: u32,
    /// 1-based column, in characters.
    pub column: u32,
}

/// Offsets of line starts in one text, so offset -> line:col is a binary search, not a scan.
///
/// Lines end at `\n`, `\r\n` or a lone `\r`: the three line breaks of the LSP specification,
/// of YAML and of CommonMark, so a line number here is the line an editor shows.
#[derive(Debug, Clone)]
pub struct LineIndex {
    starts: Vec<usize>,
    len: usize,
}

impl LineIndex {
    /// Index `text`. Costs one pass over the bytes.
    pub fn new(text: &str) -> LineIndex {
        // The `memchr` crate's search is vectorised; `str::match_indices` is not.
        let bytes = text.as_bytes();
        let mut starts = vec![0];
        for i in memchr::memchr2_iter(b'\n', b'\r', bytes) {
            // a `\r` followed by `\n` is one break, counted at its `\n`
            if bytes[i] == b'\n' || bytes.get(i + 1) != Some(&b'\n') {
                starts.push(i + 1);
            }
        }
        LineIndex {
            starts,
            len: text.len(),
        }
    }

    /// Number of lines (a text ending in `\n` has an empty last line).
    pub fn line_count(&self) -> usize {
        self.starts.len()
    }

    /// 0-based line containing `offset` (clamped to the text).
    pub fn line_of(&self, offset: usize) -> usize {
        let offset = offset.min(self.len);
        match self.starts.binary_search(&offset) {
            Ok(line) => line,
            Err(next) => next - 1,
        }
    }

    /// Byte offset where 0-based `line` starts (clamped to the text's end).
    pub fn line_start(&self, line: usize) -> usize {
        self.starts.get(line).copied().unwrap_or(self.len)
    }

    /// Byte range of 0-based `line`'s content, without its `\n`, `\r\n` or `\r` terminator.
    pub fn line_span(&self, text: &str, line: usize) -> Span {
        let start = self.line_start(line);
        let Some(&next) = self.starts.get(line + 1) else {
            return Span::new(start, self.len.max(start));
        };
        let bytes = text.as_bytes();
        let mut end = next - 1; // the break's last byte
        if bytes.get(end) == Some(&b'\n') && end > start && bytes.get(end - 1) == Some(&b'\r') {
            end -= 1;
        }
        Span::new(start, end.max(start))
    }

    /// 1-based line and character column of `offset`. An offset inside a multi-byte character
    /// is moved back to that character's first byte.
    pub fn line_col(&self, text: &str, offset: usize) -> LineCol {
        let offset = floor_char_boundary(text, offset.min(text.len()));
        let line = self.line_of(offset);
        let start = self.line_start(line);
        let column = text[start..offset].chars().count();
        LineCol {
            line: line as u32 + 1,
            column: column as u32 + 1,
        }
    }

    /// 0-based line and UTF-16 code-unit column of `offset`: the LSP's default position encoding.
    pub fn utf16_position(&self, text: &str, offset: usize) -> (u32, u32) {
        let offset = floor_char_boundary(text, offset.min(text.len()));
        let line = self.line_of(offset);
        let start = self.line_start(line);
        let col: usize = text[start..offset].chars().map(char::len_utf16).sum();
        (line as u32, col as u32)
    }

    /// Byte offset of a 0-based line and UTF-16 column, clamped to the line's end, so a client
    /// position past a line or inside a surrogate pair still maps to a valid char boundary.
    pub fn offset_of_utf16(&self, text: &str, line: u32, col: u32) -> usize {
        let line = line as usize;
        if line >= self.starts.len() {
            return self.len;
        }
        let span = self.line_span(text, line);
        let mut units = 0usize;
        for (i, ch) in text[span.start..span.end].char_indices() {
            if units >= col as usize {
                return span.start + i;
            }
            units += ch.len_utf16();
            if units > col as usize {
                return span.start + i;
            }
        }
        span.end
    }
}

/// The largest char boundary `<= offset`. (`str::floor_char_boundary` is not stable yet.)
pub fn floor_char_boundary(text: &str, offset: usize) -> usize {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

/// A UTF-8 byte-order mark. core reads a SKILL.md without it, so positions core reports are
/// shifted by [`bom_len`] wherever the text as stored (an editor's buffer, the file) keeps it.
pub const BOM: &str = "\u{feff}";

/// The length of the [`BOM`] `text` starts with: 0 when none.
pub fn bom_len(text: &str) -> usize {
    if text.starts_with(BOM) { BOM.len() } else { 0 }
}

/// One character as messages quote it, in Markdown backticks; a backtick itself needs double
/// ones (`` `@` `` but ``` `` ` `` ```).
pub fn quoted_char(c: char) -> String {
    if c == '`' {
        "`` ` ``".to_string()
    } else {
        format!("`{c}`")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_characters_and_skips_crlf() {
        let text = "ab\r\nçé x\n";
        let idx = LineIndex::new(text);
        assert_eq!(idx.line_col(text, 0), LineCol { line: 1, column: 1 });
        let x = text.find('x').unwrap();
        assert_eq!(idx.line_col(text, x), LineCol { line: 2, column: 4 });
        assert_eq!(idx.line_span(text, 0), Span::new(0, 2));
        assert_eq!(idx.line_count(), 3);
    }

    #[test]
    fn utf16_round_trip_with_emoji() {
        let text = "a😀b\nz";
        let idx = LineIndex::new(text);
        let b = text.find('b').unwrap();
        assert_eq!(idx.utf16_position(text, b), (0, 3));
        assert_eq!(idx.offset_of_utf16(text, 0, 3), b);
        // a column inside the surrogate pair maps to the emoji's start, a valid boundary
        assert_eq!(idx.offset_of_utf16(text, 0, 2), 1);
        assert_eq!(idx.offset_of_utf16(text, 0, 99), 6);
        assert_eq!(idx.offset_of_utf16(text, 7, 0), text.len());
    }

    #[test]
    fn a_lone_carriage_return_ends_a_line() {
        let text = "a\rb\r\nc\n\rd";
        let idx = LineIndex::new(text);
        assert_eq!(idx.line_count(), 5);
        let lines: Vec<&str> = (0..5)
            .map(|l| {
                let s = idx.line_span(text, l);
                &text[s.start..s.end]
            })
            .collect();
        assert_eq!(lines, ["a", "b", "c", "", "d"]);
        let d = text.find('d').unwrap();
        assert_eq!(idx.utf16_position(text, d), (4, 0));
        assert_eq!(idx.offset_of_utf16(text, 1, 5), 3);
    }

    /// Lines as the LSP specification defines them, split the slow way.
    fn lsp_lines(text: &str) -> Vec<&str> {
        let mut lines = Vec::new();
        let mut rest = text;
        while let Some(i) = rest.find(['\r', '\n']) {
            lines.push(&rest[..i]);
            let width = if rest[i..].starts_with("\r\n") { 2 } else { 1 };
            rest = &rest[i + width..];
        }
        lines.push(rest);
        lines
    }

    proptest::proptest! {
        #[test]
        fn lines_and_positions_follow_the_lsp_definition(
            parts in proptest::collection::vec(
                proptest::sample::select(vec!["a", "é", "😀", "\r", "\n", "\r\n", " "]),
                0..40,
            )
        ) {
            let text: String = parts.concat();
            let idx = LineIndex::new(&text);
            let expected = lsp_lines(&text);
            proptest::prop_assert_eq!(idx.line_count(), expected.len());
            for (line, content) in expected.iter().enumerate() {
                let span = idx.line_span(&text, line);
                proptest::prop_assert_eq!(&text[span.start..span.end], *content);
                let units = content.encode_utf16().count() as u32;
                proptest::prop_assert_eq!(
                    idx.offset_of_utf16(&text, line as u32, units),
                    span.end
                );
                proptest::prop_assert_eq!(
                    idx.utf16_position(&text, span.end),
                    (line as u32, units)
                );
            }
        }
    }

    #[test]
    fn offsets_inside_a_character_move_back() {
        let text = "é";
        let idx = LineIndex::new(text);
        assert_eq!(idx.line_col(text, 1), LineCol { line: 1, column: 1 });
    }
}
