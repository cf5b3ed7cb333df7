//! A small JSON reader that keeps the byte span of every value, producing the same spanned tree
//! as [`crate::yaml`], so eval files in either format share one pointer lookup and one schema
//! validation path.
//!
//! Why not parse JSON with the YAML parser (JSON is nearly YAML 1.2)? Its error messages speak
//! YAML ("mapping values are not allowed here") to someone who wrote JSON, and it accepts
//! things JSON does not (comments, trailing commas, unquoted keys). An author editing
//! evals.json should get the error a JSON tool would give, at the byte where it happens.

use crate::text::Span;
use crate::yaml::{Entry, Node, Scalar, Style, Value, YamlError};

/// Nesting deeper than this is refused: real eval files nest five levels, and recursion on
/// hostile input must not overflow the stack.
pub const MAX_DEPTH: usize = 256;

/// Parse one JSON document. Errors carry the byte offset of the offending character and a
/// message naming what was expected and what was found.
pub fn parse(text: &str) -> Result<Node, YamlError> {
    let mut reader = Reader {
        bytes: text.as_bytes(),
        text,
        pos: 0,
        depth: 0,
    };
    reader.skip_bom();
    reader.skip_ws();
    if reader.pos >= reader.bytes.len() {
        return Err(reader.error("expected a JSON value, found the end of the file"));
    }
    let node = reader.value()?;
    reader.skip_ws();
    if reader.pos < reader.bytes.len() {
        return Err(reader.error(&format!(
            "expected the end of the file after the top-level value, found {}",
            reader.found()
        )));
    }
    Ok(node)
}

/// Parse JSON Lines (SkillEvaluator's `evals.jsonl`): one JSON value per line, blank lines
/// allowed, read as a list whose items keep their spans in the whole text. A value written
/// over several lines is refused, as a line-by-line reader would refuse it.
pub fn parse_lines(text: &str) -> Result<Node, YamlError> {
    let mut reader = Reader {
        bytes: text.as_bytes(),
        text,
        pos: 0,
        depth: 0,
    };
    reader.skip_bom();
    let mut items = Vec::new();
    loop {
        reader.skip_blank();
        match reader.bytes.get(reader.pos) {
            None => break,
            Some(b'\n') => {
                reader.pos += 1;
                continue;
            }
            Some(_) => {}
        }
        let start = reader.pos;
        let node = reader.value()?;
        if text[start..reader.pos].contains('\n') {
            reader.pos = start;
            return Err(reader.error(
                "expected one JSON value per line (JSON Lines), found a value that spans several lines",
            ));
        }
        reader.skip_blank();
        if !matches!(reader.bytes.get(reader.pos), None | Some(b'\n')) {
            return Err(reader.error(&format!(
                "expected the end of the line after a JSON value (JSON Lines: one value per line), found {}",
                reader.found()
            )));
        }
        items.push(node);
    }
    let span = Span::new(
        items.first().map_or(0, |n| n.span.start),
        items.last().map_or(0, |n| n.span.end),
    );
    Ok(Node {
        span,
        value: Value::Sequence(items),
    })
}

struct Reader<'a> {
    bytes: &'a [u8],
    text: &'a str,
    pos: usize,
    depth: usize,
}

impl Reader<'_> {
    fn skip_bom(&mut self) {
        if self.text.starts_with('\u{feff}') {
            self.pos = '\u{feff}'.len_utf8();
        }
    }

    /// Spaces, tabs and carriage returns: the blanks within one line.
    fn skip_blank(&mut self) {
        while let Some(b' ' | b'\t' | b'\r') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    fn error(&self, message: &str) -> YamlError {
        YamlError {
            opened: None,
            span: Span::char_at(self.text, self.pos),
            message: message.to_string(),
        }
    }

    /// A short description of the character at the cursor, for "found ..." messages.
    fn found(&self) -> String {
        match self
            .text
            .get(self.pos..)
            .and_then(|rest| rest.chars().next())
        {
            None => "the end of the file".to_string(),
            Some(c) if c.is_control() => format!("the control character U+{:04X}", c as u32),
            Some(c) => format!("`{c}`"),
        }
    }

    fn value(&mut self) -> Result<Node, YamlError> {
        match self.bytes.get(self.pos) {
            Some(b'{') => self.nested(Self::object),
            Some(b'[') => self.nested(Self::array),
            Some(b'"') => {
                let start = self.pos;
                let text = self.string()?;
                Ok(scalar(Span::new(start, self.pos), text, Style::DoubleQuoted))
            }
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b't') => self.literal("true"),
            Some(b'f') => self.literal("false"),
            Some(b'n') => self.literal("null"),
            _ => Err(self.error(&format!(
                "expected a JSON value (object, array, string, number, true, false or null), found {}",
                self.found()
            ))),
        }
    }

    fn nested(
        &mut self,
        parse: fn(&mut Self) -> Result<Node, YamlError>,
    ) -> Result<Node, YamlError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error(&format!(
                "expected at most {MAX_DEPTH} levels of nesting, found more"
            )));
        }
        let node = parse(self);
        self.depth -= 1;
        node
    }

    fn object(&mut self) -> Result<Node, YamlError> {
        let start = self.pos;
        self.pos += 1;
        let mut entries = Vec::new();
        self.skip_ws();
        if self.bytes.get(self.pos) == Some(&b'}') {
            self.pos += 1;
            return Ok(mapping(Span::new(start, self.pos), entries));
        }
        loop {
            self.skip_ws();
            if self.bytes.get(self.pos) != Some(&b'"') {
                return Err(self.error(&format!(
                    "expected a member name in double quotes, found {}",
                    self.found()
                )));
            }
            let key_start = self.pos;
            let key = self.string()?;
            let key = scalar(Span::new(key_start, self.pos), key, Style::DoubleQuoted);
            self.skip_ws();
            if self.bytes.get(self.pos) != Some(&b':') {
                return Err(self.error(&format!(
                    "expected `:` after the member name, found {}",
                    self.found()
                )));
            }
            self.pos += 1;
            self.skip_ws();
            let value = self.value()?;
            entries.push(Entry { key, value });
            self.skip_ws();
            match self.bytes.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(mapping(Span::new(start, self.pos), entries));
                }
                _ => {
                    let mut error = self.error(&format!(
                        "expected `,` or `}}` after an object member, found {}",
                        self.found()
                    ));
                    error.opened = Some(Span::new(start, start + 1));
                    return Err(error);
                }
            }
        }
    }

    fn array(&mut self) -> Result<Node, YamlError> {
        let start = self.pos;
        self.pos += 1;
        let mut items = Vec::new();
        self.skip_ws();
        if self.bytes.get(self.pos) == Some(&b']') {
            self.pos += 1;
            return Ok(sequence(Span::new(start, self.pos), items));
        }
        loop {
            self.skip_ws();
            items.push(self.value()?);
            self.skip_ws();
            match self.bytes.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(sequence(Span::new(start, self.pos), items));
                }
                _ => {
                    let mut error = self.error(&format!(
                        "expected `,` or `]` after an array element, found {}",
                        self.found()
                    ));
                    error.opened = Some(Span::new(start, start + 1));
                    return Err(error);
                }
            }
        }
    }

    fn literal(&mut self, word: &str) -> Result<Node, YamlError> {
        let start = self.pos;
        if self.bytes[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(scalar(
                Span::new(start, self.pos),
                word.to_string(),
                Style::Plain,
            ))
        } else {
            Err(self.error(&format!(
                "expected a JSON value, found {} (did you mean `{word}`?)",
                self.found()
            )))
        }
    }

    fn number(&mut self) -> Result<Node, YamlError> {
        let start = self.pos;
        if self.bytes.get(self.pos) == Some(&b'-') {
            self.pos += 1;
        }
        match self.bytes.get(self.pos) {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(self.error(&format!("expected a digit, found {}", self.found()))),
        }
        if self.bytes.get(self.pos) == Some(&b'.') {
            self.pos += 1;
            self.required_digits("after the decimal point")?;
        }
        if let Some(b'e' | b'E') = self.bytes.get(self.pos) {
            self.pos += 1;
            if let Some(b'+' | b'-') = self.bytes.get(self.pos) {
                self.pos += 1;
            }
            self.required_digits("in the exponent")?;
        }
        let text = self.text[start..self.pos].to_string();
        Ok(scalar(Span::new(start, self.pos), text, Style::Plain))
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    fn required_digits(&mut self, place: &str) -> Result<(), YamlError> {
        if !matches!(self.bytes.get(self.pos), Some(b'0'..=b'9')) {
            return Err(self.error(&format!("expected a digit {place}, found {}", self.found())));
        }
        self.digits();
        Ok(())
    }

    /// A string starting at the opening quote; leaves the cursor after the closing quote.
    fn string(&mut self) -> Result<String, YamlError> {
        let open = self.pos;
        self.pos += 1;
        let mut out = String::new();
        loop {
            let run_start = self.pos;
            self.pos += plain_run_len(&self.bytes[run_start..]);
            // A string without escapes is one run: pushed into the empty `out`, it is copied
            // once, into an allocation of its size.
            out.push_str(&self.text[run_start..self.pos]);
            match self.bytes.get(self.pos) {
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'\\') => out.push(self.escape()?),
                Some(_) => {
                    return Err(self.error(&format!(
                        "expected a closing `\"` or an escaped character, found {} inside a string \
                         (write it as an escape such as `\\n`)",
                        self.found()
                    )));
                }
                None => {
                    return Err(YamlError {
                        opened: None,
                        span: Span::empty(open),
                        message: "expected a closing `\"` for the string that starts here, \
                                  found the end of the file"
                            .into(),
                    });
                }
            }
        }
    }

    fn escape(&mut self) -> Result<char, YamlError> {
        self.pos += 1;
        let c = match self.bytes.get(self.pos) {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => return self.unicode_escape(),
            _ => {
                return Err(self.error(&format!(
                    "expected an escape (`\\\"`, `\\\\`, `\\/`, `\\b`, `\\f`, `\\n`, `\\r`, `\\t` \
                     or `\\uXXXX`), found {}",
                    self.found()
                )));
            }
        };
        self.pos += 1;
        Ok(c)
    }

    /// `\uXXXX`, with a surrogate pair read as one character. The cursor is on the `u`.
    fn unicode_escape(&mut self) -> Result<char, YamlError> {
        let start = self.pos - 1;
        self.pos += 1;
        let high = self.hex4()?;
        let code = if (0xD800..0xDC00).contains(&high) {
            if !self.bytes[self.pos..].starts_with(b"\\u") {
                return Err(YamlError {
                    opened: None,
                    span: Span::new(start, self.pos),
                    message: "expected a low surrogate `\\uDC00`-`\\uDFFF` after this high \
                              surrogate, found none"
                        .into(),
                });
            }
            self.pos += 2;
            let low = self.hex4()?;
            if !(0xDC00..0xE000).contains(&low) {
                return Err(YamlError {
                    opened: None,
                    span: Span::new(start, self.pos),
                    message: format!(
                        "expected a low surrogate `\\uDC00`-`\\uDFFF`, found `\\u{low:04X}`"
                    ),
                });
            }
            0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
        } else {
            high
        };
        char::from_u32(code).ok_or_else(|| YamlError {
            opened: None,
            span: Span::new(start, self.pos),
            message: format!(
                "expected a Unicode scalar value, found the lone surrogate U+{code:04X}"
            ),
        })
    }

    fn hex4(&mut self) -> Result<u32, YamlError> {
        let digits = self.bytes.get(self.pos..self.pos + 4);
        let value = digits
            .filter(|d| d.iter().all(u8::is_ascii_hexdigit))
            .and_then(|d| u32::from_str_radix(std::str::from_utf8(d).ok()?, 16).ok());
        match value {
            Some(v) => {
                self.pos += 4;
                Ok(v)
            }
            None => Err(self.error("expected four hexadecimal digits after `\\u`")),
        }
    }
}

/// Length of the run of string content at the start of `bytes`: up to the first `"`, `\\` or
/// control character (which JSON forbids unescaped), or the end. Same answer as a byte loop;
/// memchr2 finds the quote or backslash with SIMD, and the control-character test over the run
/// is a branch-free fold the compiler vectorises (a control character is rare, so its position
/// is searched only when the fold finds one).
fn plain_run_len(bytes: &[u8]) -> usize {
    let end = memchr::memchr2(b'"', b'\\', bytes).unwrap_or(bytes.len());
    let run = &bytes[..end];
    if run.iter().fold(false, |found, &b| found | (b < 0x20)) {
        run.iter().position(|&b| b < 0x20).unwrap_or(end)
    } else {
        end
    }
}

fn scalar(span: Span, text: String, style: Style) -> Node {
    Node {
        span,
        value: Value::Scalar(Scalar {
            text,
            style,
            tag: None,
        }),
    }
}

fn mapping(span: Span, entries: Vec<Entry>) -> Node {
    Node {
        span,
        value: Value::Mapping(entries),
    }
}

fn sequence(span: Span, items: Vec<Node>) -> Node {
    Node {
        span,
        value: Value::Sequence(items),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slice(text: &str, span: Span) -> &str {
        &text[span.start..span.end]
    }

    #[test]
    fn spans_cover_values_and_keys() {
        let text = r#"{"skill_name": "x", "evals": [{"id": 1, "prompt": "p\u00e9"}]}"#;
        let root = parse(text).unwrap();
        let (prompt, found) = root.pointer("/evals/0/prompt");
        assert!(found);
        assert_eq!(prompt.as_str(), Some("pé"));
        assert_eq!(slice(text, prompt.span), r#""p\u00e9""#);
        let evals = root.get("evals").unwrap();
        assert_eq!(slice(text, evals.key.span), r#""evals""#);
        assert_eq!(
            root.pointer("/evals/0/id").0.to_json(),
            serde_json::json!(1)
        );
        assert_eq!(root.span, Span::new(0, text.len()));
    }

    #[test]
    fn agrees_with_serde_json() {
        let text = r#" [ {"a": [1, -2.5e3, true, false, null, "\"\\\/\b\f\n\r\t\ud83d\ude00"]}, {} , [] ] "#;
        let ours = parse(text).unwrap().to_json();
        let theirs: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(ours, theirs);
    }

    #[test]
    fn errors_point_at_the_offending_byte() {
        let cases = [
            (r#"{"a": 1,}"#, 8, "member name"),
            (r#"{"a" 1}"#, 5, "`:`"),
            (r#"[1 2]"#, 3, "`,` or `]`"),
            (r#"{"a": tru}"#, 6, "`true`"),
            ("{\"a\": \"x\ny\"}", 8, "control character"),
            (r#"{"a": "x"#, 6, "closing"),
            (r#"{"a": 01}"#, 7, "`,` or `}`"),
            (r#"{"a": 1.}"#, 8, "decimal point"),
            (r#""\x""#, 2, "escape"),
            (r#""\ud800""#, 1, "low surrogate"),
            ("", 0, "end of the file"),
            ("{} {}", 3, "end of the file after"),
        ];
        for (text, offset, needle) in cases {
            let err = parse(text).unwrap_err();
            assert_eq!(err.span.start, offset, "{text:?}: {err:?}");
            assert!(err.message.contains(needle), "{text:?}: {}", err.message);
        }
    }

    #[test]
    fn an_unclosed_bracket_is_named_where_it_opens() {
        let text = "{\n  \"evals\": [\n    {\"id\": 1}\n\n";
        let err = parse(text).unwrap_err();
        assert_eq!(err.opened, Some(Span::new(13, 14)), "{err:?}");
        assert!(
            err.describe(text)
                .ends_with("found the end of the file (inside the `[` at line 2, column 12)"),
            "{}",
            err.describe(text)
        );
        let err = parse(r#"{"a": 1 "b": 2}"#).unwrap_err();
        assert_eq!(err.opened, Some(Span::new(0, 1)));
        // Errors that are not about a bracket name none.
        assert_eq!(parse(r#"{"a": tru}"#).unwrap_err().opened, None);
    }

    #[test]
    fn deep_nesting_is_refused_not_overflowed() {
        let text = "[".repeat(100_000);
        let err = parse(&text).unwrap_err();
        assert!(err.message.contains("nesting"), "{}", err.message);
    }

    #[test]
    fn bom_is_skipped_and_offsets_stay_bytes() {
        let text = "\u{feff}{\"k\": \"é\", \"n\": 2}";
        let root = parse(text).unwrap();
        let n = root.get("n").unwrap();
        assert_eq!(slice(text, n.value.span), "2");
    }
}
