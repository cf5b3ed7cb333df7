//! Reading typed fields out of the spanned tree, with errors that say what was expected, what
//! was found, and where. Shared by the eval.yaml and evals.json readers.

use std::num::{NonZeroU32, NonZeroU64};

use crate::text::Span;
use crate::yaml::{Node, Resolved, Value};

use super::ParseError;

/// How scalar text fields are read. YAML authors write `value: 42` and skill-validator reads
/// it as the text "42"; in JSON a number is not a string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Texts {
    /// Any non-null scalar, as written (eval.yaml).
    AnyScalar,
    /// Only strings (evals.json).
    StringsOnly,
}

/// A mapping node's view with the JSON pointer it lives at, for messages.
pub(crate) struct Fields<'a> {
    pub node: &'a Node,
    pub pointer: String,
    pub texts: Texts,
}

impl<'a> Fields<'a> {
    /// `node` must be a mapping.
    pub fn new(node: &'a Node, pointer: String, texts: Texts) -> Result<Fields<'a>, ParseError> {
        if node.as_mapping().is_none() {
            return Err(ParseError::shape(
                node.span,
                format!(
                    "{}: expected a mapping of fields, found {}",
                    display_pointer(&pointer),
                    node.type_name()
                ),
            ));
        }
        Ok(Fields {
            node,
            pointer,
            texts,
        })
    }

    /// The value node of `key`, if present (the last one if the key is repeated).
    pub fn get(&self, key: &str) -> Option<&'a Node> {
        self.node
            .as_mapping()?
            .iter()
            .rev()
            .find(|e| e.key.as_key() == Some(key))
            .map(|e| &e.value)
    }

    /// The value of `key`, treating an explicit `null` like absence.
    pub fn present(&self, key: &str) -> Option<&'a Node> {
        self.get(key).filter(|n| !n.is_null())
    }

    /// True when the key is written, even with a null value.
    pub fn has(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    pub fn path(&self, key: &str) -> String {
        let mut out = String::with_capacity(self.pointer.len() + 1 + key.len());
        out.push_str(&self.pointer);
        out.push('/');
        // JSON Pointer escaping; keys almost never need it, so skip the two copies `replace`
        // would make.
        if key.contains(['~', '/']) {
            out.push_str(&key.replace('~', "~0").replace('/', "~1"));
        } else {
            out.push_str(key);
        }
        out
    }

    fn missing(&self, key: &str, expected: &str) -> ParseError {
        ParseError::shape(
            self.node.span,
            format!(
                "{}: expected `{key}` ({expected}), found no such field",
                display_pointer(&self.pointer)
            ),
        )
    }

    fn wrong(&self, key: &str, node: &Node, expected: &str) -> ParseError {
        ParseError::shape(
            node.span,
            format!(
                "{}: expected {expected}, found {}",
                display_pointer(&self.path(key)),
                describe(node)
            ),
        )
    }

    /// A required text that is not blank.
    pub fn required_text(&self, key: &str) -> Result<String, ParseError> {
        match self.present(key) {
            None => Err(self.missing(key, "a non-empty string")),
            Some(node) => self.text_of(key, node),
        }
    }

    /// An optional text; blank is an error when present.
    pub fn optional_text(&self, key: &str) -> Result<Option<String>, ParseError> {
        self.present(key)
            .map(|node| self.text_of(key, node))
            .transpose()
    }

    /// An optional text where blank is allowed (e.g. inline file content).
    pub fn optional_raw_text(&self, key: &str) -> Result<Option<String>, ParseError> {
        match self.present(key) {
            None => Ok(None),
            Some(node) => match scalar_text(node, self.texts) {
                Some(text) => Ok(Some(text.to_string())),
                None => Err(self.wrong(key, node, "a string")),
            },
        }
    }

    fn text_of(&self, key: &str, node: &Node) -> Result<String, ParseError> {
        match scalar_text(node, self.texts) {
            Some(text) if !text.trim().is_empty() => Ok(text.to_string()),
            Some(_) => Err(self.wrong(key, node, "a non-empty string")),
            None => Err(self.wrong(key, node, "a string")),
        }
    }

    /// An optional list of non-blank texts (absent or null is empty).
    pub fn text_list(&self, key: &str) -> Result<Vec<String>, ParseError> {
        let Some(node) = self.present(key) else {
            return Ok(Vec::new());
        };
        let items = node
            .as_sequence()
            .ok_or_else(|| self.wrong(key, node, "a list of strings"))?;
        items
            .iter()
            .enumerate()
            .map(|(i, item)| match scalar_text(item, self.texts) {
                Some(text) if !text.trim().is_empty() => Ok(text.to_string()),
                _ => Err(ParseError::shape(
                    item.span,
                    format!(
                        "{}/{i}: expected a non-empty string, found {}",
                        display_pointer(&self.path(key)),
                        describe(item)
                    ),
                )),
            })
            .collect()
    }

    /// An optional boolean.
    pub fn optional_bool(&self, key: &str) -> Result<Option<bool>, ParseError> {
        match self.present(key) {
            None => Ok(None),
            Some(node) => match node.as_scalar().map(|s| s.resolve()) {
                Some(Resolved::Bool(b)) => Ok(Some(b)),
                _ => Err(self.wrong(key, node, "true or false")),
            },
        }
    }

    /// An optional integer that must be at least 1.
    pub fn optional_positive(&self, key: &str) -> Result<Option<NonZeroU64>, ParseError> {
        match self.present(key) {
            None => Ok(None),
            Some(node) => match integer(node) {
                Some(i) if i > 0 => Ok(NonZeroU64::new(i as u64)),
                Some(_) => Err(self.wrong(key, node, "a whole number greater than 0")),
                None => Err(self.wrong(key, node, "a whole number")),
            },
        }
    }

    /// An optional integer in 1..=u32::MAX.
    pub fn optional_positive_u32(&self, key: &str) -> Result<Option<NonZeroU32>, ParseError> {
        match self.optional_positive(key)? {
            None => Ok(None),
            Some(v) => NonZeroU32::new(u32::try_from(v.get()).unwrap_or(0))
                .map(Some)
                .ok_or_else(|| {
                    let node = self.get(key).expect("present");
                    self.wrong(key, node, "a whole number up to 4294967295")
                }),
        }
    }
}

/// The text of a scalar per the reading mode; `None` for collections, nulls and (for JSON)
/// non-strings.
pub(crate) fn scalar_text(node: &Node, texts: Texts) -> Option<&str> {
    let scalar = node.as_scalar()?;
    match (scalar.resolve(), texts) {
        (Resolved::Null, _) => None,
        (Resolved::Str(s), _) => Some(s),
        (_, Texts::AnyScalar) => Some(&scalar.text),
        (_, Texts::StringsOnly) => None,
    }
}

/// An integer scalar (YAML core schema), or a JSON number with no fractional part.
pub(crate) fn integer(node: &Node) -> Option<i64> {
    match node.as_scalar()?.resolve() {
        Resolved::Int(i) => Some(i),
        Resolved::Float(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Some(f as i64),
        _ => None,
    }
}

/// "integer `5`", "list", "null": what a message says was found.
pub(crate) fn describe(node: &Node) -> String {
    match &node.value {
        Value::Scalar(s) => match s.resolve() {
            Resolved::Null => "null".to_string(),
            Resolved::Str(t) if t.trim().is_empty() => "an empty string".to_string(),
            _ => format!("{} `{}`", node.type_name(), shorten(&s.text, 40)),
        },
        Value::Sequence(_) => "a list".to_string(),
        Value::Mapping(_) => "a mapping".to_string(),
    }
}

/// `text` cut to `max` characters with an ellipsis, on one line.
pub(crate) fn shorten(text: &str, max: usize) -> String {
    let one_line = text.replace('\n', " ");
    if one_line.chars().count() <= max {
        one_line
    } else {
        let cut: String = one_line.chars().take(max).collect();
        format!("{cut}…")
    }
}

/// A JSON pointer as shown in messages: the root is `(top level)`.
pub(crate) fn display_pointer(pointer: &str) -> String {
    if pointer.is_empty() {
        "(top level)".to_string()
    } else {
        pointer.to_string()
    }
}

/// The span of a key of `node`'s mapping, for findings about the key itself.
pub(crate) fn key_span(node: &Node, key: &str) -> Option<Span> {
    node.as_mapping()?
        .iter()
        .rev()
        .find(|e| e.key.as_key() == Some(key))
        .map(|e| e.key.span)
}
