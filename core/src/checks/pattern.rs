//! The heuristics' regexes, compiled one way. A Unicode `\b` makes the regex crate's lazy DFA
//! give up on the first non-ASCII character and fall back to a far slower engine; skill text
//! is full of non-ASCII (em dashes, arrows, names), so every `\b` here means an ASCII word
//! boundary. The patterns only ever anchor on ASCII words.

use regex::Regex;

/// Compile a built-in pattern with ASCII word boundaries. Panics on an invalid pattern, which
/// the unit tests of every rule module would catch at once.
pub(crate) fn compile(pattern: &str) -> Regex {
    Regex::new(&pattern.replace(r"\b", r"(?-u:\b)")).expect("valid built-in regex")
}

/// The lines of `text` that contain a match of `anchors`, each once, in order, as byte
/// ranges without the line terminator. Expensive patterns (many alternatives, case folding,
/// `[^\n]*` runs) then run on those few lines instead of the whole file: `anchors` is a plain
/// literal alternation, which the regex crate scans at memchr speed.
///
/// `lower` is `text` with ASCII letters lowercased (same length, same offsets), so the anchors
/// can be lowercase literals matched case-sensitively: case folding would defeat the fast
/// literal search.
pub(crate) fn anchored_lines(text: &str, lower: &str, anchors: &Regex) -> Vec<(usize, usize)> {
    debug_assert_eq!(text.len(), lower.len());
    let mut out: Vec<(usize, usize)> = Vec::new();
    let mut from = 0;
    // After a hit, resume at the next line: one search per anchored line, not per anchor.
    while let Some(m) = anchors.find_at(lower, from) {
        let bytes = text.as_bytes();
        let start = memchr::memrchr(b'\n', &bytes[..m.start()]).map_or(0, |i| i + 1);
        let end = memchr::memchr(b'\n', &bytes[m.end()..]).map_or(text.len(), |i| m.end() + i);
        out.push((start, end));
        from = end + 1;
        if from >= text.len() {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_boundaries_work_next_to_non_ascii_text() {
        let re = compile(r"\bkey\b");
        assert!(re.is_match("é key é"));
        assert!(!re.is_match("monkey"));
    }

    #[test]
    fn anchored_lines_are_whole_and_unique() {
        let text = "a curl b curl\nnothing\nwget x\n";
        let lines: Vec<&str> = anchored_lines(text, text, &compile("curl|wget"))
            .into_iter()
            .map(|(s, e)| &text[s..e])
            .collect();
        assert_eq!(lines, vec!["a curl b curl", "wget x"]);
    }
}
