//! The documents the editor has open: their text as the editor sees it (not as on disk), their
//! version, and which kind of skill file each one is.
//!
//! Text is kept as one `String` with byte offsets, like everything in `core`; LSP positions
//! (line + UTF-16 column) are converted at this boundary only, through [`LineIndex`].

use std::path::{Path, PathBuf};

use skillwatch_core::evalspec;
use skillwatch_core::skill::SKILL_FILE;
use skillwatch_core::text::{LineIndex, Span};
use tower_lsp_server::ls_types::{Position, Range, TextDocumentContentChangeEvent, Uri};

/// The kinds of file skillwatch understands. Decides which checks, hovers, completions and
/// lenses apply, so it is decided once, when the document opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DocumentKind {
    /// A skill's `SKILL.md`.
    SkillMd,
    /// A skill-validator `eval.yaml` (in a skill's `tests/` or a repository's tests tree).
    EvalYaml,
    /// An `evals/evals.json` (skill-creator / ACES).
    EvalsJson,
}

impl DocumentKind {
    /// The kind of the file at `path`, or `None` for a file skillwatch has nothing to say about.
    pub fn of_path(path: &Path) -> Option<DocumentKind> {
        let name = path.file_name()?.to_str()?;
        let parent = path.parent().and_then(Path::file_name);
        match name {
            SKILL_FILE => Some(DocumentKind::SkillMd),
            "eval.yaml" | "eval.yml" => Some(DocumentKind::EvalYaml),
            "evals.json" if parent.is_some_and(|p| p == "evals") => Some(DocumentKind::EvalsJson),
            // Vally's spec and experiment names (dotnet/skills: eval.vally.yaml)
            _ if [".eval.yaml", ".eval.yml", ".vally.yaml", ".experiment.yaml"]
                .iter()
                .any(|s| name.ends_with(s)) =>
            {
                Some(DocumentKind::EvalYaml)
            }
            // a waza task (tasks/ beside its eval.yaml) or a skill-up case (cases/ beside it)
            _ if (name.ends_with(".yaml") || name.ends_with(".yml"))
                && parent.is_some_and(|p| p == "tasks" || p == "cases")
                && path
                    .parent()
                    .and_then(Path::parent)
                    .is_some_and(|d| d.join("eval.yaml").is_file()) =>
            {
                Some(DocumentKind::EvalYaml)
            }
            _ => None,
        }
    }

    /// The syntax core reads a document of this kind in.
    pub fn file_kind(self) -> evalspec::FileKind {
        match self {
            DocumentKind::EvalsJson => evalspec::FileKind::EvalsJson,
            DocumentKind::SkillMd | DocumentKind::EvalYaml => evalspec::FileKind::EvalYaml,
        }
    }

    /// The skill folder of a waza task or skill-up case: the folder of the eval.yaml that
    /// lists it (waza: beside `tasks/`), or the folder above `evals/` (skill-up).
    fn member_skill_dir(path: &Path) -> Option<PathBuf> {
        let listing = path.parent()?.parent()?;
        if !matches!(path.parent()?.file_name()?.to_str()?, "tasks" | "cases") {
            return None;
        }
        if listing.join(SKILL_FILE).is_file() {
            return Some(listing.to_path_buf());
        }
        let above = listing.parent()?;
        above
            .join(SKILL_FILE)
            .is_file()
            .then(|| above.to_path_buf())
    }

    /// The skill folder a file of this kind belongs to (core's rule for eval files, which
    /// also maps a repository-level tests tree, `tests/<plugin>/<skill>/eval.yaml`, to
    /// `plugins/<plugin>/skills/<skill>`). For an eval file outside any skill, the folder
    /// above `tests/` or `evals/`, so its syntax and schema are still checked.
    pub fn skill_dir(self, path: &Path) -> Option<PathBuf> {
        let parent = path.parent()?;
        match self {
            DocumentKind::SkillMd => Some(parent.to_path_buf()),
            // waza keeps its eval.yaml beside SKILL.md
            DocumentKind::EvalYaml | DocumentKind::EvalsJson => (parent.join(SKILL_FILE).is_file())
                .then(|| parent.to_path_buf())
                .or_else(|| Self::member_skill_dir(path))
                .or_else(|| evalspec::skill_dir_for_eval_file(path))
                .or_else(|| parent.parent().map(Path::to_path_buf)),
        }
    }
}

/// One open document.
#[derive(Debug, Clone)]
pub struct Document {
    /// The editor's URI for it.
    pub uri: Uri,
    /// Its file path (documents without one are not tracked).
    pub path: PathBuf,
    /// What kind of skill file it is.
    pub kind: DocumentKind,
    /// The skill folder it belongs to, resolved once at open (resolution may search the
    /// repository for eval files in a tests tree).
    pub skill_dir: Option<PathBuf>,
    /// The editor's version number; diagnostics are published for it.
    pub version: i32,
    /// The current text.
    pub text: String,
    /// Line starts of `text`, rebuilt on every change.
    pub lines: LineIndex,
}

/// Why an edit from the editor could not be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    /// The range's end lies before its start.
    #[error("expected a range whose end follows its start, found {start:?}..{end:?}")]
    ReversedRange {
        /// Start as sent.
        start: (u32, u32),
        /// End as sent.
        end: (u32, u32),
    },
}

impl Document {
    /// The same document holding `text` instead: what a check of a text not yet in the editor
    /// (a fix's result) needs, without resolving the skill folder again.
    pub fn with_text(&self, text: String) -> Document {
        Document {
            uri: self.uri.clone(),
            path: self.path.clone(),
            kind: self.kind,
            skill_dir: self.skill_dir.clone(),
            version: self.version,
            lines: LineIndex::new(&text),
            text,
        }
    }

    /// Which tool's format the document is written in, from its current text (a line scan of
    /// its top-level keys: cheap enough for every hover and completion).
    pub fn dialect(&self) -> evalspec::Dialect {
        evalspec::dialect::detect(self.kind.file_kind(), &self.text, &self.path).dialect
    }

    /// A document as opened by the editor.
    pub fn new(uri: Uri, path: PathBuf, kind: DocumentKind, version: i32, text: String) -> Self {
        let lines = LineIndex::new(&text);
        let skill_dir = kind.skill_dir(&path);
        Document {
            uri,
            path,
            skill_dir,
            kind,
            version,
            text,
            lines,
        }
    }

    /// The document after the editor's changes, applied in order (incremental ranges or a whole
    /// new text), at the new version. All or nothing: when one change cannot be applied, the
    /// error is returned and `self` is untouched, so the server never holds a text that is
    /// half of a batch the editor applied whole.
    pub fn with_changes(
        &self,
        version: i32,
        changes: Vec<TextDocumentContentChangeEvent>,
    ) -> Result<Document, EditError> {
        let mut text = self.text.clone();
        let mut lines = self.lines.clone();
        for change in changes {
            match change.range {
                None => text = change.text,
                Some(range) => {
                    let span = span_of(&text, &lines, range)?;
                    text.replace_range(span.start..span.end, &change.text);
                }
            }
            lines = LineIndex::new(&text);
        }
        Ok(Document {
            uri: self.uri.clone(),
            path: self.path.clone(),
            kind: self.kind,
            skill_dir: self.skill_dir.clone(),
            version,
            text,
            lines,
        })
    }

    /// The byte span of an LSP range (positions past a line's end are clamped to it).
    pub fn span_of(&self, range: Range) -> Result<Span, EditError> {
        span_of(&self.text, &self.lines, range)
    }

    /// The byte offset of an LSP position.
    pub fn offset_of(&self, position: Position) -> usize {
        self.lines
            .offset_of_utf16(&self.text, position.line, position.character)
    }

    /// The LSP position (UTF-16 columns) of a byte offset.
    pub fn position_of(&self, offset: usize) -> Position {
        let (line, character) = self.lines.utf16_position(&self.text, offset);
        Position { line, character }
    }

    /// The LSP range of a byte span.
    pub fn range_of(&self, span: Span) -> Range {
        Range {
            start: self.position_of(span.start),
            end: self.position_of(span.end),
        }
    }

    /// The skill folder this document belongs to.
    pub fn skill_dir(&self) -> Option<PathBuf> {
        self.skill_dir.clone()
    }

    /// The folder whose skillwatch.toml governs this document: its skill's, else its own.
    pub fn config_dir(&self) -> &Path {
        self.skill_dir
            .as_deref()
            .or(self.path.parent())
            .unwrap_or(&self.path)
    }
}

fn span_of(text: &str, lines: &LineIndex, range: Range) -> Result<Span, EditError> {
    let start = lines.offset_of_utf16(text, range.start.line, range.start.character);
    let end = lines.offset_of_utf16(text, range.end.line, range.end.character);
    if end < start {
        return Err(EditError::ReversedRange {
            start: (range.start.line, range.start.character),
            end: (range.end.line, range.end.character),
        });
    }
    Ok(Span::new(start, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str) -> Document {
        let uri: Uri = "file:///s/demo/SKILL.md".parse().unwrap();
        Document::new(
            uri,
            "/s/demo/SKILL.md".into(),
            DocumentKind::SkillMd,
            1,
            text.into(),
        )
    }

    fn change(l0: u32, c0: u32, l1: u32, c1: u32, text: &str) -> TextDocumentContentChangeEvent {
        TextDocumentContentChangeEvent {
            range: Some(Range {
                start: Position {
                    line: l0,
                    character: c0,
                },
                end: Position {
                    line: l1,
                    character: c1,
                },
            }),
            range_length: None,
            text: text.into(),
        }
    }

    #[test]
    fn incremental_edits_count_utf16_units() {
        // "😀" is two UTF-16 units and four bytes; "é" is one unit and two bytes
        let d = doc("a😀b\né x\n");
        let d = d.with_changes(2, vec![change(0, 3, 0, 4, "B")]).unwrap();
        assert_eq!(d.text, "a😀B\né x\n");
        let d = d
            .with_changes(3, vec![change(1, 2, 1, 3, "yz"), change(0, 0, 0, 1, "")])
            .unwrap();
        assert_eq!(d.text, "😀B\né yz\n");
        assert_eq!(d.version, 3);
        let z = d.text.find('z').unwrap();
        assert_eq!(
            d.position_of(z),
            Position {
                line: 1,
                character: 3
            }
        );
    }

    #[test]
    fn full_replacement_and_reversed_ranges() {
        let d = doc("old");
        let d = d
            .with_changes(
                2,
                vec![TextDocumentContentChangeEvent {
                    range: None,
                    range_length: None,
                    text: "new\ntext".into(),
                }],
            )
            .unwrap();
        assert_eq!(d.lines.line_count(), 2);
        let err = d
            .with_changes(3, vec![change(1, 2, 0, 0, "x")])
            .unwrap_err();
        assert!(matches!(err, EditError::ReversedRange { .. }));
        assert_eq!(d.text, "new\ntext");
    }

    #[test]
    fn a_batch_with_a_bad_change_applies_none_of_it() {
        let d = doc("one\ntwo\n");
        let err = d
            .with_changes(2, vec![change(0, 0, 0, 3, "ONE"), change(1, 3, 1, 0, "x")])
            .unwrap_err();
        assert!(matches!(err, EditError::ReversedRange { .. }));
        assert_eq!((d.text.as_str(), d.version), ("one\ntwo\n", 1));
    }

    #[test]
    fn a_lone_carriage_return_is_a_line_break() {
        let d = doc("a\rb😀c\r\nd");
        let d = d.with_changes(2, vec![change(1, 3, 1, 4, "C")]).unwrap();
        assert_eq!(d.text, "a\rb😀C\r\nd");
        let at = d.text.find('d').unwrap();
        assert_eq!(
            d.position_of(at),
            Position {
                line: 2,
                character: 0
            }
        );
    }

    #[test]
    fn kinds_and_skill_dirs() {
        let kind = |p: &str| DocumentKind::of_path(Path::new(p));
        assert_eq!(kind("/a/pdf/SKILL.md"), Some(DocumentKind::SkillMd));
        assert_eq!(kind("/a/pdf/tests/eval.yaml"), Some(DocumentKind::EvalYaml));
        assert_eq!(
            kind("/a/pdf/evals/evals.json"),
            Some(DocumentKind::EvalsJson)
        );
        assert_eq!(kind("/a/pdf/other.json"), None);
        assert_eq!(kind("/a/pdf/evals.json"), None);
        assert_eq!(
            DocumentKind::EvalsJson.skill_dir(Path::new("/a/pdf/evals/evals.json")),
            Some(PathBuf::from("/a/pdf"))
        );
    }

    #[test]
    fn dotnet_tests_tree_maps_to_the_plugin_skill() {
        let root = tempfile::tempdir().unwrap();
        let skill = root.path().join("plugins/diag/skills/dump");
        std::fs::create_dir_all(&skill).unwrap();
        std::fs::write(skill.join("SKILL.md"), "---\nname: dump\n---\n").unwrap();
        let eval = root.path().join("tests/diag/dump/eval.yaml");
        assert_eq!(DocumentKind::EvalYaml.skill_dir(&eval), Some(skill));
    }
}
