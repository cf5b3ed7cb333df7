//! SKILL.md: YAML frontmatter between `---` fences, then a Markdown body.

use std::fs::File;
#[cfg(not(any(target_os = "linux", target_os = "android")))]
use std::io::Read;
use std::path::Path;

use crate::text::{BOM, Span};
use crate::yaml::{self, Mark, Node, YamlError};

/// SKILL.md files larger than this are refused unread: no real skill comes close (the spec's
/// advice is under 500 lines), and reading a runaway file would stall the editor.
pub const MAX_SKILL_MD_BYTES: u64 = 64 * 1024 * 1024;

/// The characters that start a flow collection (`[`, `{`), an anchor (`&`), an alias (`*`) or
/// a tag (`!`): the YAML constructs skills-ref's StrictYAML refuses.
const STRICT_YAML_REFUSES: [char; 5] = ['[', '{', '&', '*', '!'];

/// A SKILL.md decoded and split into frontmatter and body.
///
/// All spans are byte offsets into `text`, which is the file's content without a leading BOM.
#[derive(Debug, Clone)]
pub struct SkillDocument {
    /// The file's text, BOM removed.
    pub text: String,
    /// Whether the file started with a UTF-8 byte-order mark (reported, then ignored).
    pub bom: bool,
    /// The line terminators the file uses.
    pub line_ending: LineEnding,
    /// The frontmatter, or why there is none.
    pub frontmatter: Frontmatter,
    /// The Markdown body after the closing fence (the whole text when there is no frontmatter).
    pub body: Span,
}

/// The state of a document's frontmatter. Every variant but `Parsed` is itself a finding.
#[derive(Debug, Clone)]
pub enum Frontmatter {
    /// The file does not start with a `---` line.
    Missing,
    /// A `---` opens the frontmatter but no closing `---` line follows.
    Unterminated {
        /// The opening fence.
        open: Span,
    },
    /// The fences are there but the YAML between them does not parse.
    Invalid {
        /// The YAML text between the fences.
        span: Span,
        /// The parser's error, positioned in the file.
        error: YamlError,
    },
    /// Parsed YAML (which may still be the wrong shape, e.g. a list: that is a check's job).
    Parsed {
        /// The YAML text between the fences.
        span: Span,
        /// The YAML tree.
        root: Node,
        /// The parser's events the tree does not keep (anchors, tags, flow collections),
        /// for the rule on YAML that skills-ref refuses; empty when the YAML holds none of
        /// `STRICT_YAML_REFUSES` (then it has none of those constructs).
        marks: Vec<Mark>,
    },
}

/// Which line terminators a file uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineEnding {
    /// `\n` only (or no line break at all).
    Lf,
    /// `\r\n` only.
    CrLf,
    /// Both kinds.
    Mixed,
}

/// Why a file's bytes are not a document we can check.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    /// The file could not be read at all.
    #[error("cannot read file: {0}")]
    Io(String),
    /// The file is larger than [`MAX_SKILL_MD_BYTES`].
    #[error("file is {size} bytes, more than the {limit} bytes skillwatch reads")]
    TooLarge {
        /// Size on disk.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// The file holds NUL bytes: a binary file, not Markdown.
    #[error("binary file: NUL byte at offset {offset}")]
    Binary {
        /// Offset of the first NUL byte.
        offset: usize,
    },
    /// The file is not valid UTF-8.
    #[error("invalid UTF-8 at byte {offset}")]
    InvalidUtf8 {
        /// Offset of the first byte that is not part of a valid UTF-8 sequence.
        offset: usize,
    },
    /// The file is a symlink out of its skill folder: what it points at is not the skill's,
    /// and is not read (see [`super::link`]).
    #[error("symlink to `{target}`, outside the skill folder: not read")]
    SymlinkOutside {
        /// The link's target as written.
        target: String,
    },
}

impl LoadError {
    /// The byte offset the error points at, if it has one.
    pub fn offset(&self) -> Option<usize> {
        match self {
            LoadError::Binary { offset } | LoadError::InvalidUtf8 { offset } => Some(*offset),
            _ => None,
        }
    }
}

/// Read and parse a SKILL.md from disk.
pub fn load_document(path: &Path) -> Result<SkillDocument, LoadError> {
    Ok(SkillDocument::parse(read_skill_md(path)?))
}

/// A SKILL.md's text, read and decoded as [`load_document`] reads it, without the parse: for
/// learning many skills' names (SW411's tree) at the cost of reading only.
pub(crate) fn read_skill_md(path: &Path) -> Result<String, LoadError> {
    refuse_link_out(path)?;
    decode(read_bounded(path, MAX_SKILL_MD_BYTES)?)
}

/// An error when `path` is a symlink that leads out of its folder (the skill folder, for a
/// SKILL.md). One `lstat`; the target is only resolved for a link.
fn refuse_link_out(path: &Path) -> Result<(), LoadError> {
    let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    if !is_link {
        return Ok(());
    }
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    match super::link::target_of(dir, path) {
        super::link::LinkTarget::Inside => Ok(()),
        _ => Err(LoadError::SymlinkOutside {
            target: super::link::written_target(path).display().to_string(),
        }),
    }
}

/// Read a whole file, refusing files above `limit` bytes before reading them.
///
/// The `size` bytes the stat promised are read and no more: no extra read to find the end of
/// the file, one system call saved per file over the thousands a corpus check reads. A file
/// that grows meanwhile is read as it was when the stat ran; one that shrinks is cut where
/// its data ends.
pub(crate) fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>, LoadError> {
    let file = File::open(path).map_err(|e| LoadError::Io(e.to_string()))?;
    read_bounded_file(file, limit)
}

/// [`read_bounded`] for a file already open (the skill folder's walk opens files relative to
/// their folder).
pub(crate) fn read_bounded_file(file: File, limit: u64) -> Result<Vec<u8>, LoadError> {
    let io = |e: std::io::Error| LoadError::Io(e.to_string());
    let size = file.metadata().map_err(io)?.len();
    if size > limit {
        return Err(LoadError::TooLarge { size, limit });
    }
    let mut bytes = Vec::with_capacity(size as usize);
    fill(&file, &mut bytes).map_err(io)?;
    // A capacity above `size` (the allocator's choice) may have taken more of a file that
    // grew meanwhile: the file is read as it was when the stat ran, as documented.
    bytes.truncate(size as usize);
    Ok(bytes)
}

/// Read `file` into the spare capacity of `bytes` until it is full or the file ends.
///
/// The bytes are read into uninitialised memory: a zeroed buffer (`vec![0; size]`) costs a
/// `memset` of every byte the `read` then overwrites (docs/benchmarks.md).
#[cfg(any(target_os = "linux", target_os = "android"))]
fn fill(file: &File, bytes: &mut Vec<u8>) -> std::io::Result<()> {
    while bytes.len() < bytes.capacity() {
        match rustix::io::read(file, rustix::buffer::spare_capacity(bytes)) {
            Ok(0) => break,
            Ok(_) | Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// [`fill`] where rustix is not built: into a zeroed buffer.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn fill(mut file: &File, bytes: &mut Vec<u8>) -> std::io::Result<()> {
    let size = bytes.capacity();
    bytes.resize(size, 0);
    let mut filled = 0;
    while filled < size {
        match file.read(&mut bytes[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    bytes.truncate(filled);
    Ok(())
}

/// Turn file bytes into text: binary files (a NUL byte) and invalid UTF-8 are refused with the
/// offset of the first bad byte.
pub fn decode(bytes: Vec<u8>) -> Result<String, LoadError> {
    // The `memchr` crate's search is vectorised (`<[u8]>::contains` is not).
    if let Some(offset) = memchr::memchr(0, &bytes) {
        return Err(LoadError::Binary { offset });
    }
    String::from_utf8(bytes).map_err(|e| LoadError::InvalidUtf8 {
        offset: e.utf8_error().valid_up_to(),
    })
}

impl SkillDocument {
    /// Split and parse a SKILL.md's text. Never fails: every problem is a [`Frontmatter`] state.
    pub fn parse(mut text: String) -> SkillDocument {
        let bom = text.starts_with(BOM);
        if bom {
            text.drain(..BOM.len());
        }
        let line_ending = line_ending_of(&text);
        let (frontmatter, body) = split_frontmatter(&text);
        SkillDocument {
            text,
            bom,
            line_ending,
            frontmatter,
            body,
        }
    }

    /// The Markdown body's text.
    pub fn body_text(&self) -> &str {
        &self.text[self.body.start..self.body.end]
    }

    /// The frontmatter's YAML tree, when it parsed.
    pub fn frontmatter_root(&self) -> Option<&Node> {
        match &self.frontmatter {
            Frontmatter::Parsed { root, .. } => Some(root),
            _ => None,
        }
    }

    /// The string value of a top-level frontmatter field and its span.
    pub fn field_str(&self, key: &str) -> Option<(&str, Span)> {
        let entry = self.frontmatter_root()?.get(key)?;
        entry.value.as_str().map(|s| (s, entry.value.span))
    }

    /// The text (BOM removed) with the top-level frontmatter field `key` set to the string
    /// `value`, everything else byte for byte as it was: what `skillwatch trigger
    /// --description-file` stages. The new value is written as a double-quoted scalar (a
    /// JSON string is one), so any text survives; `None` when the field is not there.
    pub fn with_field_str(&self, key: &str, value: &str) -> Option<String> {
        let entry = self.frontmatter_root()?.get(key)?;
        let (start, mut end) = (entry.key.span.start, entry.value.span.end);
        // A block scalar's span takes its last line break: keep the break.
        while end > start && matches!(self.text.as_bytes()[end - 1], b'\n' | b'\r') {
            end -= 1;
        }
        let quoted = serde_json::to_string(value).ok()?;
        let mut out = String::with_capacity(self.text.len() + quoted.len());
        out.push_str(self.text.get(..start)?);
        out.push_str(key);
        out.push_str(": ");
        out.push_str(&quoted);
        out.push_str(self.text.get(end..)?);
        Some(out)
    }

    /// The text a span covers (empty if the span is out of range or not on char boundaries).
    pub fn slice(&self, span: Span) -> &str {
        self.text.get(span.start..span.end).unwrap_or("")
    }
}

fn line_ending_of(text: &str) -> LineEnding {
    let bytes = text.as_bytes();
    // Almost every file has no `\r` at all: one (vectorised) memchr pass decides.
    if memchr::memchr(b'\r', bytes).is_none() {
        return LineEnding::Lf;
    }
    let lf = bytes.iter().filter(|b| **b == b'\n').count();
    let crlf = bytes.windows(2).filter(|w| w == b"\r\n").count();
    match (crlf, lf) {
        (0, _) => LineEnding::Lf,
        (c, l) if c == l => LineEnding::CrLf,
        _ => LineEnding::Mixed,
    }
}

/// A line of the text: its content span (terminator excluded) and where the next line starts.
fn lines(text: &str) -> impl Iterator<Item = (Span, usize)> + '_ {
    let mut pos = 0;
    std::iter::from_fn(move || {
        if pos >= text.len() {
            return None;
        }
        let start = pos;
        let (mut end, next) = match text[start..].find('\n') {
            Some(i) => (start + i, start + i + 1),
            None => (text.len(), text.len()),
        };
        if end > start && text.as_bytes()[end - 1] == b'\r' {
            end -= 1;
        }
        pos = next;
        Some((Span::new(start, end), next))
    })
}

fn is_fence(line: &str, closing: bool) -> bool {
    let line = line.trim_end_matches([' ', '\t']);
    line == "---" || (closing && line == "...")
}

/// Where the fences put the frontmatter, before any YAML is parsed.
enum Fences {
    /// The first line is not `---`.
    Missing,
    /// No closing fence after the opening one (`open`).
    Unterminated { open: Span },
    /// The YAML between the fences, and the body after the closing one.
    Closed { yaml: Span, body: Span },
}

fn fences(text: &str) -> Fences {
    let mut it = lines(text);
    let Some((first, yaml_start)) = it.next() else {
        return Fences::Missing;
    };
    if !is_fence(&text[first.start..first.end], false) {
        return Fences::Missing;
    }
    for (line, next) in it {
        if is_fence(&text[line.start..line.end], true) {
            return Fences::Closed {
                yaml: Span::new(yaml_start, line.start),
                body: Span::new(next, text.len()),
            };
        }
    }
    Fences::Unterminated { open: first }
}

/// The YAML text between a SKILL.md's fences, found exactly as [`SkillDocument::parse`]
/// finds it (after a leading BOM) but not parsed: for learning the `name` of many skills
/// without parsing each frontmatter (SW411's tree of skills).
pub(crate) fn frontmatter_text(text: &str) -> Option<&str> {
    let text = text.strip_prefix(BOM).unwrap_or(text);
    match fences(text) {
        Fences::Closed { yaml, .. } => Some(&text[yaml.start..yaml.end]),
        Fences::Missing | Fences::Unterminated { .. } => None,
    }
}

fn split_frontmatter(text: &str) -> (Frontmatter, Span) {
    let (span, body) = match fences(text) {
        Fences::Missing => return (Frontmatter::Missing, Span::new(0, text.len())),
        Fences::Unterminated { open } => {
            let end = Span::new(text.len(), text.len());
            return (Frontmatter::Unterminated { open }, end);
        }
        Fences::Closed { yaml, body } => (yaml, body),
    };
    let mut marks = Vec::new();
    let yaml = &text[span.start..span.end];
    // Only YAML with one of the characters that write a flow collection, an anchor, an
    // alias or a tag has events worth keeping; the rest (most SKILL.md) skips the work.
    let keep = yaml.contains(STRICT_YAML_REFUSES).then_some(&mut marks);
    let frontmatter = match yaml::parse_marked(yaml, span.start, keep) {
        Ok(root) => Frontmatter::Parsed { span, root, marks },
        Err(error) => Frontmatter::Invalid { span, error },
    };
    (frontmatter, body)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str) -> SkillDocument {
        SkillDocument::parse(text.to_string())
    }

    #[test]
    fn splits_frontmatter_and_body() {
        let d = doc("---\nname: a\ndescription: b\n---\n# Body\n");
        let root = d.frontmatter_root().unwrap();
        assert_eq!(root.get("name").unwrap().value.as_str(), Some("a"));
        assert_eq!(d.body_text(), "# Body\n");
        let (name, span) = d.field_str("name").unwrap();
        assert_eq!((name, d.slice(span)), ("a", "a"));
    }

    #[test]
    fn crlf_and_bom_are_handled() {
        let d = doc("\u{feff}---\r\nname: a\r\n---\r\nbody\r\n");
        assert!(d.bom);
        assert_eq!(d.line_ending, LineEnding::CrLf);
        assert_eq!(d.field_str("name").unwrap().0, "a");
        assert_eq!(d.body_text(), "body\r\n");
    }

    #[test]
    fn missing_unterminated_and_invalid() {
        assert!(matches!(
            doc("# Just markdown\n").frontmatter,
            Frontmatter::Missing
        ));
        assert!(matches!(doc("").frontmatter, Frontmatter::Missing));
        assert!(matches!(
            doc("---\nname: a\n").frontmatter,
            Frontmatter::Unterminated { .. }
        ));
        let d = doc("---\nname: [a\n---\n");
        let Frontmatter::Invalid { error, .. } = &d.frontmatter else {
            panic!("{d:?}")
        };
        assert!(error.span.start >= 4);
    }

    #[test]
    fn a_dashes_inside_a_value_do_not_close() {
        let d = doc("---\ndescription: a --- b\n---\nbody");
        assert_eq!(d.field_str("description").unwrap().0, "a --- b");
    }

    #[test]
    fn decode_reports_offsets() {
        assert_eq!(
            decode(b"ab\xffcd".to_vec()),
            Err(LoadError::InvalidUtf8 { offset: 2 })
        );
        assert_eq!(
            decode(b"a\0b".to_vec()),
            Err(LoadError::Binary { offset: 1 })
        );
    }

    #[test]
    fn a_field_is_replaced_and_everything_else_kept() {
        let alt = "Use for: PDFs \"and\" forms\nsecond line";
        for text in [
            "---\nname: pdf\ndescription: Old one.\nlicense: MIT\n---\n# Body\n",
            "---\nname: pdf\ndescription: >\n  Old folded\n  text.\nlicense: MIT\n---\n# Body\n",
            "---\nname: pdf\ndescription: |\n  Old block\nlicense: MIT\n---\n# Body\n",
            "---\nname: pdf\ndescription: 'Old: quoted'\nlicense: MIT\n---\n# Body\n",
        ] {
            let doc = SkillDocument::parse(text.into());
            let new = doc.with_field_str("description", alt).unwrap();
            let again = SkillDocument::parse(new.clone());
            assert_eq!(again.field_str("description").unwrap().0, alt, "{new}");
            assert_eq!(again.field_str("license").unwrap().0, "MIT", "{new}");
            assert_eq!(again.field_str("name").unwrap().0, "pdf", "{new}");
            assert!(new.ends_with("---\n# Body\n"), "{new}");
        }
        let none = SkillDocument::parse("---\nname: pdf\n---\n".into());
        assert_eq!(none.with_field_str("description", "x"), None);
    }
}
