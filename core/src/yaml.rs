//! A YAML tree that remembers where every key and value came from.
//!
//! Diagnostics must point at the offending key or value, and JSON-Schema errors arrive as
//! instance paths that must be mapped back to the source; a plain `serde` deserialiser keeps no
//! positions, so we build our own small tree from `saphyr-parser`'s spanned events.
//!
//! Spans are byte offsets into the text that was parsed, shifted by the `base` the caller gives
//! (so a SKILL.md frontmatter's spans are offsets into the whole file).

use std::collections::HashMap;

use saphyr_parser::{Event, Parser, ScalarStyle};
use serde_json::Value as Json;

use crate::text::{LineIndex, Span, quoted_char};

/// How many nodes alias expansion may produce before the document is refused: a guard against
/// "billion laughs" documents, far above anything a real SKILL.md or eval file needs.
pub const MAX_EXPANDED_NODES: usize = 1_000_000;

/// One YAML value and the bytes it was written in.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// Where the value is written (for a quoted scalar, including its quotes).
    pub span: Span,
    /// The value itself.
    pub value: Value,
}

/// The shapes a YAML value can take. Scalars stay text until asked, because whether `1.0` is
/// a number or a version string is the reader's decision, not the parser's.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A scalar as written, with its style.
    Scalar(Scalar),
    /// A `- item` or `[a, b]` list.
    Sequence(Vec<Node>),
    /// A `key: value` or `{k: v}` map, in source order, duplicates kept (so they can be reported).
    Mapping(Vec<Entry>),
}

/// A `key: value` pair of a mapping.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The key node (usually a plain scalar).
    pub key: Node,
    /// The value node.
    pub value: Node,
}

/// A scalar's text and how it was written.
#[derive(Debug, Clone, PartialEq)]
pub struct Scalar {
    /// The scalar's content after YAML unescaping and folding.
    pub text: String,
    /// Plain, quoted or block.
    pub style: Style,
    /// An explicit tag such as `!!str`, if one was written.
    pub tag: Option<String>,
}

/// How a scalar was written; only plain scalars are resolved to null, bool or numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// `value`
    Plain,
    /// `'value'`
    SingleQuoted,
    /// `"value"`
    DoubleQuoted,
    /// `|` block
    Literal,
    /// `>` block
    Folded,
}

/// A scalar resolved by the YAML 1.2 core schema.
#[derive(Debug, Clone, PartialEq)]
pub enum Resolved<'a> {
    /// `null`, `~` or an empty plain scalar.
    Null,
    /// `true` / `false` in their core-schema spellings.
    Bool(bool),
    /// A decimal, octal (`0o`) or hex (`0x`) integer that fits in i64.
    Int(i64),
    /// A float, including `.inf` and `.nan`.
    Float(f64),
    /// Anything else, and every quoted or block scalar.
    Str(&'a str),
}

/// A parser event reduced to what the tree drops: anchors, tags, aliases and where each
/// collection opens and closes. StrictYAML (skills-ref's parser) refuses these constructs;
/// keeping them from the one parse saves the SW120 rule a second parse of the frontmatter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mark {
    /// Which event it was.
    pub kind: MarkKind,
    /// The event's span, as the tree's spans are computed.
    pub span: Span,
    /// Whether it carries an anchor (`&x`).
    pub anchored: bool,
    /// Whether it carries an explicit tag (`!!str`).
    pub tagged: bool,
}

/// The events a [`Mark`] records; stream and document events are left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkKind {
    /// A sequence or mapping starts (block or flow).
    Open,
    /// A sequence or mapping ends.
    Close,
    /// A scalar.
    Scalar,
    /// An alias (`*x`).
    Alias,
}

/// A document that could not be parsed, with the position the parser stopped at.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct YamlError {
    /// The character the parser gave up at (empty at a line end or the end of the text).
    pub span: Span,
    /// The parser's explanation, e.g. "mapping values are not allowed in this context".
    pub message: String,
    /// The `[` or `{` of the flow collection the parser was inside. A bracket never closed
    /// is only noticed where the text ends, lines away from the bracket to fix.
    pub opened: Option<Span>,
}

impl YamlError {
    /// The message, naming the line and column of [`opened`](Self::opened) when the parser
    /// gave up elsewhere. `text` is the text the spans index (the whole file).
    pub fn describe(&self, text: &str) -> String {
        let Some(open) = self.opened.filter(|o| o.start != self.span.start) else {
            return self.message.clone();
        };
        let Some(bracket) = text.get(open.start..open.start + 1) else {
            return self.message.clone();
        };
        let at = LineIndex::new(text).line_col(text, open.start);
        format!(
            "{} (inside the `{bracket}` at line {}, column {})",
            self.message, at.line, at.column
        )
    }
}

impl Scalar {
    /// Interpret the scalar per the YAML 1.2 core schema. Quoted and block scalars, and scalars
    /// tagged `!!str`, are always strings.
    pub fn resolve(&self) -> Resolved<'_> {
        if self.style != Style::Plain || self.tag.as_deref() == Some("tag:yaml.org,2002:str") {
            return Resolved::Str(&self.text);
        }
        resolve_plain(&self.text)
    }
}

fn resolve_plain(text: &str) -> Resolved<'_> {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Resolved::Null,
        "true" | "True" | "TRUE" => return Resolved::Bool(true),
        "false" | "False" | "FALSE" => return Resolved::Bool(false),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            return Resolved::Float(f64::INFINITY);
        }
        "-.inf" | "-.Inf" | "-.INF" => return Resolved::Float(f64::NEG_INFINITY),
        ".nan" | ".NaN" | ".NAN" => return Resolved::Float(f64::NAN),
        _ => {}
    }
    if let Some(int) = parse_int(text) {
        return Resolved::Int(int);
    }
    if looks_like_float(text)
        && let Ok(f) = text.parse::<f64>()
    {
        return Resolved::Float(f);
    }
    Resolved::Str(text)
}

fn parse_int(text: &str) -> Option<i64> {
    if let Some(hex) = text.strip_prefix("0x") {
        return i64::from_str_radix(hex, 16).ok();
    }
    if let Some(oct) = text.strip_prefix("0o") {
        return i64::from_str_radix(oct, 8).ok();
    }
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// The core schema's float pattern: `[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`.
fn looks_like_float(text: &str) -> bool {
    let body = text.strip_prefix(['-', '+']).unwrap_or(text);
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    let mantissa_ok = match mantissa.split_once('.') {
        Some((int, frac)) => {
            (!int.is_empty() || !frac.is_empty())
                && int.bytes().all(|b| b.is_ascii_digit())
                && frac.bytes().all(|b| b.is_ascii_digit())
                && !(int.is_empty() && frac.is_empty())
        }
        None => !mantissa.is_empty() && mantissa.bytes().all(|b| b.is_ascii_digit()),
    };
    let exponent_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['-', '+']).unwrap_or(e);
        !e.is_empty() && e.bytes().all(|b| b.is_ascii_digit())
    });
    mantissa_ok && exponent_ok
}

impl Node {
    /// The scalar, if this node is one.
    pub fn as_scalar(&self) -> Option<&Scalar> {
        match &self.value {
            Value::Scalar(s) => Some(s),
            _ => None,
        }
    }

    /// The scalar's text when the node is a string per the core schema.
    pub fn as_str(&self) -> Option<&str> {
        match self.as_scalar()?.resolve() {
            Resolved::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The entries, if this node is a mapping.
    pub fn as_mapping(&self) -> Option<&[Entry]> {
        match &self.value {
            Value::Mapping(entries) => Some(entries),
            _ => None,
        }
    }

    /// The items, if this node is a sequence.
    pub fn as_sequence(&self) -> Option<&[Node]> {
        match &self.value {
            Value::Sequence(items) => Some(items),
            _ => None,
        }
    }

    /// True for a null scalar (`~`, `null`, or nothing at all).
    pub fn is_null(&self) -> bool {
        matches!(self.as_scalar().map(Scalar::resolve), Some(Resolved::Null))
    }

    /// The first entry whose key is the string `key`.
    pub fn get(&self, key: &str) -> Option<&Entry> {
        self.as_mapping()?
            .iter()
            .find(|e| e.key.as_key() == Some(key))
    }

    /// This node's text when used as a mapping key (any scalar, whatever it resolves to).
    pub fn as_key(&self) -> Option<&str> {
        self.as_scalar().map(|s| s.text.as_str())
    }

    /// A short name of the node's type for messages: "string", "list", "mapping", ...
    pub fn type_name(&self) -> &'static str {
        match &self.value {
            Value::Sequence(_) => "list",
            Value::Mapping(_) => "mapping",
            Value::Scalar(s) => match s.resolve() {
                Resolved::Null => "null",
                Resolved::Bool(_) => "boolean",
                Resolved::Int(_) => "integer",
                Resolved::Float(_) => "number",
                Resolved::Str(_) => "string",
            },
        }
    }

    /// The node as JSON, for JSON-Schema validation. Keys are stringified; a later duplicate
    /// key wins, as in most YAML loaders.
    pub fn to_json(&self) -> Json {
        match &self.value {
            Value::Scalar(s) => match s.resolve() {
                Resolved::Null => Json::Null,
                Resolved::Bool(b) => Json::Bool(b),
                Resolved::Int(i) => Json::from(i),
                Resolved::Float(f) => serde_json::Number::from_f64(f)
                    .map(Json::Number)
                    .unwrap_or_else(|| Json::String(s.text.clone())),
                Resolved::Str(t) => Json::String(t.to_string()),
            },
            Value::Sequence(items) => Json::Array(items.iter().map(Node::to_json).collect()),
            Value::Mapping(entries) => Json::Object(
                entries
                    .iter()
                    .map(|e| {
                        (
                            e.key.as_key().unwrap_or_default().to_string(),
                            e.value.to_json(),
                        )
                    })
                    .collect(),
            ),
        }
    }

    /// The node at a JSON Pointer (RFC 6901) such as `/scenarios/0/prompt`, for mapping a
    /// schema error's instance path back to source. Returns the deepest node reached and
    /// whether the whole pointer resolved.
    pub fn pointer(&self, pointer: &str) -> (&Node, bool) {
        let mut node = self;
        for raw in pointer.split('/').skip(1) {
            let token = raw.replace("~1", "/").replace("~0", "~");
            let next = match &node.value {
                Value::Mapping(entries) => entries
                    .iter()
                    .rev()
                    .find(|e| e.key.as_key() == Some(&token))
                    .map(|e| &e.value),
                Value::Sequence(items) => token.parse::<usize>().ok().and_then(|i| items.get(i)),
                Value::Scalar(_) => None,
            };
            match next {
                Some(n) => node = n,
                None => return (node, false),
            }
        }
        (node, true)
    }
}

/// Parse one YAML document from `text`. Spans are shifted by `base`, the offset of `text` in
/// its file. An empty or comment-only document parses as a null scalar.
pub fn parse(text: &str, base: usize) -> Result<Node, YamlError> {
    parse_marked(text, base, None)
}

/// [`parse`], also appending to `marks` the [`Mark`] of every collection, scalar and alias
/// event in order (when the parse fails, those before the error).
pub fn parse_marked(
    text: &str,
    base: usize,
    mut marks: Option<&mut Vec<Mark>>,
) -> Result<Node, YamlError> {
    let offsets = CharOffsets::new(text, base);
    let mut builder = Builder::default();
    let mut documents = 0usize;
    for event in Parser::new_from_str(text) {
        let (event, span) = event.map_err(|e| YamlError {
            opened: builder.open_bracket(text, base),
            span: Span::char_at(text, offsets.byte(e.marker().index()) - base).shifted(base),
            message: tidy_message(e.info()),
        })?;
        let mut span = Span::new(
            offsets.byte(span.start.index()),
            offsets.byte(span.end.index()),
        );
        // The parser's end of a flow collection runs on over a comment after its bracket.
        if matches!(event, Event::SequenceEnd | Event::MappingEnd)
            && matches!(text.as_bytes().get(span.start - base), Some(b']' | b'}'))
        {
            span.end = span.start + 1;
        }
        if let Event::DocumentStart(_) = event {
            documents += 1;
            if documents > 1 {
                return Err(YamlError {
                    opened: None,
                    span,
                    message: "expected a single YAML document, found a second one".into(),
                });
            }
        }
        if let Some(marks) = marks.as_deref_mut()
            && let Some(mark) = mark_of(&event, span)
        {
            marks.push(mark);
        }
        builder.on_event(event, span)?;
    }
    Ok(builder.root.unwrap_or(Node {
        span: Span::empty(base),
        value: Value::Scalar(Scalar {
            text: String::new(),
            style: Style::Plain,
            tag: None,
        }),
    }))
}

/// The parser's message, with its one mis-quoted form ("unexpected character: `@'") in
/// the backticks every other message uses.
fn tidy_message(info: &str) -> String {
    let one_char = info
        .strip_prefix("unexpected character: `")
        .and_then(|rest| rest.strip_suffix('\''))
        .and_then(|quoted| {
            let mut chars = quoted.chars();
            chars.next().filter(|_| chars.next().is_none())
        });
    match one_char {
        Some(c) => format!("unexpected character {}", quoted_char(c)),
        None => info.to_string(),
    }
}

fn mark_of(event: &Event<'_>, span: Span) -> Option<Mark> {
    let (kind, anchor, tagged) = match event {
        Event::SequenceStart(anchor, tag) | Event::MappingStart(anchor, tag) => {
            (MarkKind::Open, *anchor, tag.is_some())
        }
        Event::SequenceEnd | Event::MappingEnd => (MarkKind::Close, 0, false),
        Event::Scalar(_, _, anchor, tag) => (MarkKind::Scalar, *anchor, tag.is_some()),
        Event::Alias(_) => (MarkKind::Alias, 0, false),
        _ => return None,
    };
    Some(Mark {
        kind,
        span,
        anchored: anchor != 0,
        tagged,
    })
}

/// Converts saphyr's character indices to byte offsets. ASCII text (the common case) needs no
/// table.
struct CharOffsets {
    base: usize,
    table: Option<Vec<usize>>,
    len: usize,
}

impl CharOffsets {
    fn new(text: &str, base: usize) -> CharOffsets {
        let table = (!text.is_ascii()).then(|| text.char_indices().map(|(i, _)| i).collect());
        CharOffsets {
            base,
            table,
            len: text.len(),
        }
    }

    fn byte(&self, char_index: usize) -> usize {
        let local = match &self.table {
            None => char_index.min(self.len),
            Some(table) => table.get(char_index).copied().unwrap_or(self.len),
        };
        self.base + local
    }
}

enum Frame {
    Sequence {
        start: Span,
        anchor: usize,
        items: Vec<Node>,
    },
    Mapping {
        start: Span,
        anchor: usize,
        entries: Vec<Entry>,
        pending_key: Option<Node>,
    },
}

#[derive(Default)]
struct Builder {
    stack: Vec<Frame>,
    anchors: HashMap<usize, Node>,
    root: Option<Node>,
    expanded: usize,
}

impl Builder {
    /// The innermost open collection's `[` or `{`, when it is a flow collection.
    fn open_bracket(&self, text: &str, base: usize) -> Option<Span> {
        let start = match self.stack.last()? {
            Frame::Sequence { start, .. } | Frame::Mapping { start, .. } => start.start,
        };
        let byte = text.as_bytes().get(start.checked_sub(base)?)?;
        matches!(byte, b'[' | b'{').then(|| Span::new(start, start + 1))
    }

    fn on_event(&mut self, event: Event<'_>, span: Span) -> Result<(), YamlError> {
        match event {
            Event::Scalar(text, style, anchor, tag) => {
                let tag = tag.map(|t| format!("{}{}", expand_handle(&t.handle), t.suffix));
                let scalar = Scalar {
                    text: text.into_owned(),
                    style: style_of(style),
                    tag,
                };
                self.push(
                    Node {
                        span,
                        value: Value::Scalar(scalar),
                    },
                    anchor,
                )?;
            }
            Event::SequenceStart(anchor, _) => self.stack.push(Frame::Sequence {
                start: span,
                anchor,
                items: Vec::new(),
            }),
            Event::MappingStart(anchor, _) => self.stack.push(Frame::Mapping {
                start: span,
                anchor,
                entries: Vec::new(),
                pending_key: None,
            }),
            Event::SequenceEnd | Event::MappingEnd => self.close(span)?,
            Event::Alias(id) => {
                let node = self.anchors.get(&id).cloned().ok_or_else(|| YamlError {
                    opened: None,
                    span,
                    message: "alias refers to an unknown anchor".into(),
                })?;
                self.expanded += count_nodes(&node);
                if self.expanded > MAX_EXPANDED_NODES {
                    return Err(YamlError {
                        opened: None,
                        span,
                        message: format!("aliases expand to more than {MAX_EXPANDED_NODES} nodes"),
                    });
                }
                self.push(
                    Node {
                        span,
                        value: node.value,
                    },
                    0,
                )?;
            }
            _ => {}
        }
        Ok(())
    }

    fn close(&mut self, end: Span) -> Result<(), YamlError> {
        let frame = self.stack.pop().ok_or_else(|| YamlError {
            opened: None,
            span: end,
            message: "unbalanced end of collection".into(),
        })?;
        let (start, anchor, value, last_end) = match frame {
            Frame::Sequence {
                start,
                anchor,
                items,
            } => {
                let last = items.last().map(|n| n.span.end);
                (start, anchor, Value::Sequence(items), last)
            }
            Frame::Mapping {
                start,
                anchor,
                entries,
                ..
            } => {
                let last = entries.last().map(|e| e.value.span.end.max(e.key.span.end));
                (start, anchor, Value::Mapping(entries), last)
            }
        };
        // Flow collections end at their closing bracket; block collections have an empty end
        // event somewhere after their last child, so they end at that child.
        let end_offset = if end.is_empty() {
            last_end.unwrap_or(start.end)
        } else {
            end.end
        };
        let node = Node {
            span: Span::new(start.start, end_offset.max(start.start)),
            value,
        };
        self.push(node, anchor)
    }

    fn push(&mut self, node: Node, anchor: usize) -> Result<(), YamlError> {
        if anchor != 0 {
            self.anchors.insert(anchor, node.clone());
        }
        self.expanded += 1;
        match self.stack.last_mut() {
            None => self.root = Some(node),
            Some(Frame::Sequence { items, .. }) => items.push(node),
            Some(Frame::Mapping {
                entries,
                pending_key,
                ..
            }) => match pending_key.take() {
                None => *pending_key = Some(node),
                Some(key) => entries.push(Entry { key, value: node }),
            },
        }
        Ok(())
    }
}

fn count_nodes(node: &Node) -> usize {
    match &node.value {
        Value::Scalar(_) => 1,
        Value::Sequence(items) => 1 + items.iter().map(count_nodes).sum::<usize>(),
        Value::Mapping(entries) => {
            1 + entries
                .iter()
                .map(|e| count_nodes(&e.key) + count_nodes(&e.value))
                .sum::<usize>()
        }
    }
}

fn expand_handle(handle: &str) -> &str {
    if handle == "!!" {
        "tag:yaml.org,2002:"
    } else {
        handle
    }
}

fn style_of(style: ScalarStyle) -> Style {
    match style {
        ScalarStyle::Plain => Style::Plain,
        ScalarStyle::SingleQuoted => Style::SingleQuoted,
        ScalarStyle::DoubleQuoted => Style::DoubleQuoted,
        ScalarStyle::Literal => Style::Literal,
        ScalarStyle::Folded => Style::Folded,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slice(text: &str, span: Span) -> &str {
        &text[span.start..span.end]
    }

    #[test]
    fn keys_and_values_keep_their_spans() {
        let text = "name: my-skill\ndescription: \"Use when X\"\nlist:\n  - a\n  - b\n";
        let root = parse(text, 0).unwrap();
        let name = root.get("name").unwrap();
        assert_eq!(slice(text, name.key.span), "name");
        assert_eq!(slice(text, name.value.span), "my-skill");
        let desc = root.get("description").unwrap();
        assert_eq!(desc.value.as_str(), Some("Use when X"));
        assert_eq!(slice(text, desc.value.span), "\"Use when X\"");
        let list = root.get("list").unwrap();
        assert_eq!(list.value.as_sequence().unwrap().len(), 2);
        assert_eq!(slice(text, list.value.span), "- a\n  - b");
    }

    #[test]
    fn non_ascii_spans_are_bytes() {
        let text = "é: ü😀x\nk: v\n";
        let root = parse(text, 10).unwrap();
        let k = root.get("k").unwrap();
        assert_eq!(
            k.value.span,
            Span::new(10 + text.find('v').unwrap(), 11 + text.find('v').unwrap())
        );
        let first = &root.as_mapping().unwrap()[0];
        assert_eq!(
            &text[first.value.span.start - 10..first.value.span.end - 10],
            "ü😀x"
        );
    }

    #[test]
    fn core_schema_resolution() {
        let root = parse(
            "a: 1\nb: '1'\nc: 1.5\nd: true\ne: ~\nf: 1.0.2\ng: 0x1f\n",
            0,
        )
        .unwrap();
        let json = root.to_json();
        assert_eq!(json["a"], 1);
        assert_eq!(json["b"], "1");
        assert_eq!(json["c"], 1.5);
        assert_eq!(json["d"], true);
        assert!(json["e"].is_null());
        assert_eq!(json["f"], "1.0.2");
        assert_eq!(json["g"], 31);
    }

    #[test]
    fn errors_carry_positions() {
        let text = "name: a\n\tdescription: b\n";
        let err = parse(text, 0).unwrap_err();
        assert!(err.message.contains("tab"), "{err:?}");
        assert!(err.span.start <= text.len());
        let err = parse("a: b: c\n", 0).unwrap_err();
        assert!(!err.message.is_empty());
    }

    #[test]
    fn a_flow_error_names_its_bracket_and_a_block_error_none() {
        let text = "name: x\ndescription: [unclosed\nlicense: MIT\n";
        let err = parse(text, 0).unwrap_err();
        assert_eq!(err.opened, Some(Span::new(21, 22)), "{err:?}");
        assert!(
            err.describe(text)
                .ends_with(" (inside the `[` at line 2, column 14)"),
            "{}",
            err.describe(text)
        );
        // Spans are in the whole file's offsets when the frontmatter starts later.
        let file = format!("---\n{text}");
        let err = parse(&file[4..], 4).unwrap_err();
        assert_eq!(err.opened, Some(Span::new(25, 26)));
        assert!(
            err.describe(&file)
                .ends_with("(inside the `[` at line 3, column 14)")
        );
        let err = parse("a: {b: [1, 2}\n", 0).unwrap_err();
        assert_eq!(err.opened, Some(Span::new(7, 8)), "{err:?}");
        let err = parse("a: b: c\n", 0).unwrap_err();
        assert_eq!(err.opened, None);
        assert_eq!(err.describe("a: b: c\n"), err.message);
    }

    #[test]
    fn a_flow_collection_span_ends_at_its_bracket() {
        let text = "tags: [a, b]  # two\nm: {x: y} # one\n";
        let root = parse(text, 0).unwrap();
        assert_eq!(slice(text, root.get("tags").unwrap().value.span), "[a, b]");
        assert_eq!(slice(text, root.get("m").unwrap().value.span), "{x: y}");
    }

    #[test]
    fn an_error_covers_the_character_it_is_at() {
        let text = "a: b: c\n";
        assert_eq!(parse(text, 0).unwrap_err().span, Span::new(4, 5));
        let text = "x: 1\na: [b\n";
        let err = parse(text, 0).unwrap_err();
        assert_eq!(err.span, Span::empty(text.len()), "{err:?}");
        // In a frontmatter's offsets, after a character of two bytes.
        let file = "---\nk: é: c\n";
        assert_eq!(parse(&file[4..], 4).unwrap_err().span, Span::new(9, 10));
    }

    #[test]
    fn an_unexpected_character_is_in_backticks() {
        assert_eq!(
            parse("a: @b\n", 0).unwrap_err().message,
            "unexpected character `@`"
        );
        assert_eq!(
            parse("a: `b`\n", 0).unwrap_err().message,
            "unexpected character `` ` ``"
        );
    }

    #[test]
    fn pointer_resolves_into_nested_values() {
        let text = "scenarios:\n  - name: x\n    prompt: y\n";
        let root = parse(text, 0).unwrap();
        let (node, found) = root.pointer("/scenarios/0/prompt");
        assert!(found);
        assert_eq!(slice(text, node.span), "y");
        let (node, found) = root.pointer("/scenarios/0/missing");
        assert!(!found);
        assert_eq!(node.get("name").unwrap().value.as_str(), Some("x"));
    }

    #[test]
    fn aliases_expand_but_bombs_are_refused() {
        let root = parse("a: &x [1, 2]\nb: *x\n", 0).unwrap();
        assert_eq!(root.to_json()["b"], serde_json::json!([1, 2]));
        let mut bomb = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..8 {
            let prev = format!("*a{}", i - 1);
            bomb.push_str(&format!("a{i}: &a{i} [{}]\n", vec![prev; 10].join(", ")));
        }
        assert!(parse(&bomb, 0).unwrap_err().message.contains("expand"));
    }

    #[test]
    fn empty_document_is_null() {
        assert!(parse("", 0).unwrap().is_null());
        assert!(parse("# only a comment\n", 0).unwrap().is_null());
    }

    #[test]
    fn second_document_is_an_error() {
        assert!(parse("a: 1\n---\nb: 2\n", 0).is_err());
    }
}
