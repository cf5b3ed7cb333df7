//! Just enough Markdown for the heuristics: which lines are inside fenced code, headings,
//! numbered steps, link targets and inline code. A line scanner rather than a CommonMark
//! parser: the rules need spans and a few line kinds, and this runs on every keystroke.

use crate::text::Span;

/// One line of the body.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Line<'t> {
    /// The line's content (terminator excluded), as an absolute span in the file.
    pub span: Span,
    /// The content.
    pub text: &'t str,
    /// Inside a fenced code block, or a fence line itself.
    pub code: bool,
}

/// The body split into lines, with fence state.
pub(crate) struct Body<'t> {
    /// The whole file's text (spans index it).
    pub text: &'t str,
    /// The part of `text` that was scanned.
    pub span: Span,
    /// Every line, in order.
    pub lines: Vec<Line<'t>>,
    /// Number of fenced code blocks.
    pub code_blocks: usize,
}

impl<'t> Body<'t> {
    /// Scan `text[span]`.
    pub fn scan(text: &'t str, span: Span) -> Body<'t> {
        let scanned = &text.as_bytes()[span.start..span.end];
        // One vectorised count sizes the line list exactly; `memchr` then finds each end.
        let mut lines = Vec::with_capacity(memchr::memchr_iter(b'\n', scanned).count() + 1);
        let mut open: Option<(char, usize)> = None;
        let mut code_blocks = 0;
        let mut pos = span.start;
        while pos < span.end {
            let next = memchr::memchr(b'\n', &scanned[pos - span.start..])
                .map_or(span.end, |i| pos + i + 1);
            let mut end = if next > pos && text.as_bytes()[next - 1] == b'\n' {
                next - 1
            } else {
                next
            };
            if end > pos && text.as_bytes()[end - 1] == b'\r' {
                end -= 1;
            }
            let content = &text[pos..end];
            let fence = fence_of(content);
            let code = match (open, fence) {
                (None, Some(f)) => {
                    open = Some(f);
                    code_blocks += 1;
                    true
                }
                (Some((c, n)), Some((fc, fn_)))
                    if c == fc && fn_ >= n && is_bare_fence(content) =>
                {
                    open = None;
                    true
                }
                (Some(_), _) => true,
                (None, None) => false,
            };
            lines.push(Line {
                span: Span::new(pos, end),
                text: content,
                code,
            });
            pos = next;
        }
        Body {
            text,
            span,
            lines,
            code_blocks,
        }
    }

    /// The scanned text.
    pub fn slice(&self) -> &'t str {
        &self.text[self.span.start..self.span.end]
    }

    /// Whether `offset` (into the file) is inside a fenced code block. Offsets outside the
    /// scanned part are prose.
    pub fn is_code_at(&self, offset: usize) -> bool {
        let i = self.lines.partition_point(|l| l.span.start <= offset);
        i > 0 && self.lines[i - 1].code && offset <= self.lines[i - 1].span.end
    }

    /// Lines outside code blocks.
    pub fn prose(&self) -> impl Iterator<Item = &Line<'t>> {
        self.lines.iter().filter(|l| !l.code)
    }

    /// Heading lines outside code, with their level and title.
    pub fn headings(&self) -> impl Iterator<Item = (&Line<'t>, &'t str)> {
        self.prose().filter_map(|l| heading(l.text).map(|t| (l, t)))
    }

    /// True when some prose line is a numbered list item (`1. Do x`, `2) Do y`).
    pub fn has_numbered_steps(&self) -> bool {
        self.prose().any(|l| is_numbered_item(l.text))
    }
}

fn fence_of(line: &str) -> Option<(char, usize)> {
    // Most lines start with an ASCII character that is neither white space nor a fence
    // character: `trim_start` would keep it first, so no fence, without the Unicode walk.
    if let Some(&b) = line.as_bytes().first()
        && b.is_ascii()
        && !b.is_ascii_whitespace()
        && b != b'\x0b'
        && b != b'`'
        && b != b'~'
    {
        return None;
    }
    let trimmed = line.trim_start();
    let c = trimmed.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let n = trimmed.chars().take_while(|x| *x == c).count();
    // A backtick fence's info string may not contain backticks (CommonMark).
    if n < 3 || (c == '`' && trimmed[n..].contains('`')) {
        return None;
    }
    Some((c, n))
}

fn is_bare_fence(line: &str) -> bool {
    let t = line.trim();
    let c = t.chars().next().unwrap_or(' ');
    t.chars().all(|x| x == c)
}

/// The title of an ATX heading (`## Title`).
pub(crate) fn heading(line: &str) -> Option<&str> {
    let t = line.trim_start();
    let hashes = t.bytes().take_while(|b| *b == b'#').count();
    if !(1..=6).contains(&hashes) || line.len() - t.len() > 3 {
        return None;
    }
    let rest = &t[hashes..];
    (rest.is_empty() || rest.starts_with([' ', '\t'])).then(|| rest.trim())
}

fn is_numbered_item(line: &str) -> bool {
    let t = line.trim_start();
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    (1..=3).contains(&digits)
        && t[digits..].starts_with(['.', ')'])
        && t[digits + 1..].starts_with([' ', '\t'])
}

/// A link target in a prose line: `[text](target "title")`, `![alt](target)`, or a
/// reference definition `[id]: target`.
pub(crate) struct Link {
    /// The target as written (no angle brackets, no title).
    pub target: String,
    /// Where the target is in the file.
    pub span: Span,
}

/// Every link target on the prose lines of `body`: inline links and images (`](target)`,
/// `](<target> "title")`) and reference definitions (`[id]: target` at a line start).
///
/// Hand-written matchers rather than regexes: this runs over SKILL.md on every keystroke and
/// over every referenced file, and a regex with capture groups costs a backtracking pass per
/// match. They match exactly what these patterns match (a property test holds them to it):
/// inline `\]\(\s*(?:<([^>\n]*)>|([^)\s]+))(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)`, reference
/// definition `(?m)^[ \t]{0,3}\[[^\]\n]+\]:[ \t]*<?([^\s>]+)>?`.
pub(crate) fn links(body: &Body<'_>) -> Vec<Link> {
    let text = body.slice();
    let base = body.span.start;
    let mut out: Vec<Link> = link_targets(text)
        .map(|target| target.shifted(base))
        .filter(|span| !body.is_code_at(span.start))
        .map(|span| Link {
            target: text[span.start - base..span.end - base].to_string(),
            span,
        })
        .collect();
    out.sort_by_key(|l| l.span.start);
    out
}

/// The spans (offsets into `text`) of every link target [`links`] would find, code blocks
/// included, inline links first. Callers that only care about a few targets check
/// [`Body::is_code_at`] for those alone, and so need not scan the lines of a whole file.
pub(crate) fn link_targets(text: &str) -> impl Iterator<Item = Span> + '_ {
    let mut from = 0;
    // One searcher for the whole text: `memmem::find` would build one per link.
    let opener = memchr::memmem::Finder::new(b"](");
    let inline = std::iter::from_fn(move || {
        while let Some(i) = opener.find(&text.as_bytes()[from..]) {
            let at = from + i;
            match inline_link_at(text, at) {
                Some((target, end)) => {
                    from = end;
                    return Some(target);
                }
                None => from = at + 1,
            }
        }
        from = text.len();
        None
    });
    // A definition starts a line: try each line start, when there can be one at all.
    let starts = memchr::memmem::find(text.as_bytes(), b"]:").map(|_| {
        std::iter::once(0)
            .chain(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1))
            .filter(|s| *s < text.len())
    });
    let definitions = starts
        .into_iter()
        .flatten()
        .filter_map(move |line_start| reference_def_at(text, line_start));
    inline.chain(definitions)
}

/// The first offset at or after `pos` that is not Unicode white space (`\s`).
fn skip_space(text: &str, pos: usize) -> usize {
    // Most links have no space to skip: an ASCII byte other than white space ends the run
    // at once, as `trim_start` would (the only ASCII white space is `\t`..`\r` and ` `).
    if text
        .as_bytes()
        .get(pos)
        .is_none_or(|b| b.is_ascii() && !is_ascii_space(*b))
    {
        return pos;
    }
    let rest = &text[pos..];
    pos + (rest.len() - rest.trim_start().len())
}

/// The ASCII characters that are Unicode white space (`char::is_whitespace`, `\s`).
fn is_ascii_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t'..=b'\r')
}

/// The length of the start of `s` before its first `)` or white space: a byte loop that
/// decodes a character only at a non-ASCII byte (the same as `find(|c| c == ')' ||
/// c.is_whitespace())`, which decodes every character).
fn target_len(s: &str) -> usize {
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b.is_ascii() {
            if b == b')' || is_ascii_space(b) {
                return i;
            }
            i += 1;
        } else {
            let c = s[i..]
                .chars()
                .next()
                .expect("a char starts at a non-ASCII lead byte");
            if c.is_whitespace() {
                return i;
            }
            i += c.len_utf8();
        }
    }
    bytes.len()
}

/// An inline link's target span and the offset after its `)`, for `text[at..]` starting
/// with `](`.
fn inline_link_at(text: &str, at: usize) -> Option<(Span, usize)> {
    let start = skip_space(text, at + 2);
    let rest = &text[start..];
    if let Some(inner) = rest.strip_prefix('<')
        && let Some(close) = inner.find(['>', '\n'])
        && inner.as_bytes()[close] == b'>'
        && let Some(end) = link_tail(text, start + 1 + close + 1)
    {
        return Some((Span::new(start + 1, start + 1 + close), end));
    }
    let len = target_len(rest);
    if len == 0 {
        return None;
    }
    link_tail(text, start + len).map(|end| (Span::new(start, start + len), end))
}

/// After a link target at `pos`: an optional `"title"` or `'title'` after white space, then
/// white space and `)`. The offset after the `)`.
fn link_tail(text: &str, pos: usize) -> Option<usize> {
    let gap = skip_space(text, pos);
    if gap > pos
        && let Some(quote @ ('"' | '\'')) = text[gap..].chars().next()
        && let Some(close) = text[gap + 1..].find(quote)
    {
        let after = skip_space(text, gap + 1 + close + 1);
        if text[after..].starts_with(')') {
            return Some(after + 1);
        }
    }
    text[gap..].starts_with(')').then_some(gap + 1)
}

/// The target span of a reference definition on the line starting at `line_start`.
fn reference_def_at(text: &str, line_start: usize) -> Option<Span> {
    let line = &text[line_start..];
    let indent = line
        .bytes()
        .take_while(|b| *b == b' ' || *b == b'\t')
        .count();
    let label = line[indent..].strip_prefix('[').filter(|_| indent <= 3)?;
    let close = label.find([']', '\n'])?;
    if close == 0 || !label[close..].starts_with("]:") {
        return None;
    }
    let after_colon = &label[close + 2..];
    let blanks = after_colon
        .bytes()
        .take_while(|b| *b == b' ' || *b == b'\t')
        .count();
    let value_start = line_start + indent + 1 + close + 2 + blanks;
    let value = &text[value_start..];
    let target_len = |s: &str| {
        s.find(|c: char| c == '>' || c.is_whitespace())
            .unwrap_or(s.len())
    };
    // `<?` takes the bracket when a target follows it; otherwise the bracket is the target.
    if let Some(inner) = value.strip_prefix('<') {
        let n = target_len(inner);
        if n > 0 {
            return Some(Span::new(value_start + 1, value_start + 1 + n));
        }
    }
    let n = target_len(value);
    (n > 0).then(|| Span::new(value_start, value_start + n))
}

/// Rough token count as skill-validator estimates it: characters / 4.
pub(crate) fn estimate_tokens(text: &str) -> usize {
    text.chars().count().div_ceil(4)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(text: &str) -> Body<'_> {
        Body::scan(text, Span::new(0, text.len()))
    }

    #[test]
    fn fences_mark_code_lines() {
        let text = "# T\n```bash\n# not a heading\n```\n~~~\nx\n~~~\nafter\n";
        let body = scan(text);
        let code: Vec<bool> = body.lines.iter().map(|l| l.code).collect();
        assert_eq!(code, vec![false, true, true, true, true, true, true, false]);
        assert_eq!(body.code_blocks, 2);
        assert_eq!(body.headings().count(), 1);
    }

    #[test]
    fn longer_fences_need_longer_closers() {
        let body = scan("````\n```\nstill code\n````\nout\n");
        assert!(body.lines[2].code);
        assert!(!body.lines[4].code);
    }

    #[test]
    fn numbered_steps_and_headings() {
        let body = scan("intro\n1. first\n2) second\n#hashtag\n## Steps\n");
        assert!(body.has_numbered_steps());
        let titles: Vec<_> = body.headings().map(|(_, t)| t).collect();
        assert_eq!(titles, vec!["Steps"]);
        assert!(!scan("2024. was a year\n").has_numbered_steps());
    }

    #[test]
    fn links_have_spans() {
        let text = "See [ref](references/a.md \"t\") and ![i](<assets/x y.png>).\n[d]: docs/b.md\n```\n[c](code/c.md)\n```\n";
        let body = scan(text);
        let found: Vec<_> = links(&body)
            .into_iter()
            .map(|l| (l.target.clone(), &text[l.span.start..l.span.end]))
            .collect();
        assert_eq!(
            found,
            vec![
                ("references/a.md".to_string(), "references/a.md"),
                ("assets/x y.png".to_string(), "assets/x y.png"),
                ("docs/b.md".to_string(), "docs/b.md"),
            ]
        );
    }

    #[test]
    fn code_lookup_by_offset() {
        let text = "a\n```\ncode\n```\nb\n";
        let body = scan(text);
        assert!(!body.is_code_at(0));
        assert!(body.is_code_at(text.find("code").unwrap()));
        assert!(!body.is_code_at(text.rfind('b').unwrap()));
    }

    #[test]
    fn crlf_lines_exclude_the_terminator() {
        let text = "a\r\nb";
        let body = scan(text);
        assert_eq!(body.lines[0].text, "a");
        assert_eq!(body.lines[1].text, "b");
    }

    /// The patterns the hand-written matchers replace, run the regex way.
    fn links_by_regex(body: &Body<'_>) -> Vec<(String, Span)> {
        let inline = regex::Regex::new(
            r#"\]\(\s*(?:<([^>\n]*)>|([^)\s]+))(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)"#,
        )
        .unwrap();
        let definition =
            regex::Regex::new(r"(?m)^[ \t]{0,3}\[[^\]\n]+\]:[ \t]*<?([^\s>]+)>?").unwrap();
        let text = body.slice();
        let base = body.span.start;
        let mut out = Vec::new();
        let caps = inline
            .captures_iter(text)
            .filter_map(|c| c.get(1).or_else(|| c.get(2)))
            .chain(definition.captures_iter(text).filter_map(|c| c.get(1)));
        for m in caps {
            if !body.is_code_at(base + m.start()) {
                out.push((
                    m.as_str().to_string(),
                    Span::new(base + m.start(), base + m.end()),
                ));
            }
        }
        out.sort_by_key(|(_, span)| span.start);
        out
    }

    fn same_links_as_regex(text: &str, start: usize) {
        let body = Body::scan(text, Span::new(start, text.len()));
        let found: Vec<(String, Span)> = links(&body)
            .into_iter()
            .map(|l| (l.target, l.span))
            .collect();
        assert_eq!(found, links_by_regex(&body), "{text:?}");
    }

    #[test]
    fn link_matchers_agree_with_the_regexes_on_edge_cases() {
        for text in [
            "[a](<b> \"t\")",
            "[a](<b>x)",
            "[a](<b\nc>)",
            "[a]( \u{a0}b\u{2003})",
            "[a](b \"t\" x)",
            "[a](b 'unclosed)",
            "[a](b \"multi\nline\")",
            "[a](<>)",
            "[a]()",
            "[x]: <>",
            "[x]: <",
            "   [x]:<y> z",
            "    [x]: y",
            "\t[x]:\ty",
            "[]: y",
            "[x]:",
            "a](b)](c)",
            "```\n[a](b)\n```\n[c](d)",
        ] {
            same_links_as_regex(text, 0);
        }
    }

    proptest::proptest! {
        #[test]
        fn link_matchers_agree_with_the_regexes(
            text in "[\\[\\]()<>\"' \t\n\r:ab.#`\u{a0}\u{2003}é]{0,60}",
            start in 0usize..8,
        ) {
            let start = crate::text::floor_char_boundary(&text, start.min(text.len()));
            same_links_as_regex(&text, start);
        }
    }
}
