//! Diagnostic, Rule and Fix: what a check reports and how it can be repaired.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::text::Span;

/// How bad a finding is. `Error` makes `skillwatch check` exit 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// A violation of the specification or a high-confidence security risk.
    Error,
    /// A likely problem: quality, portability or a risk that needs review.
    Warning,
    /// Review evidence that is not a problem by itself (e.g. `scripts/` present).
    Info,
}

impl Severity {
    /// The lowercase word used in human output and config files.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

/// What a rule is about, for grouping in reports and for whole-category settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Category {
    /// The Agent Skills specification (agentskills.io) and harness extensions.
    Spec,
    /// Heuristics on how useful the skill will be to an agent.
    Quality,
    /// Static security review of the skill's text and tool grants.
    Security,
    /// Eval files: tests/eval.yaml and evals/evals.json.
    Eval,
    /// Measured results over time: a skill whose lift regressed on a new model.
    Results,
    /// The inline `skillwatch-ignore` comments themselves.
    Directive,
}

/// One entry of the rule catalog. Ids are stable forever: they appear in user config and CI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Rule {
    /// Stable id, `SW` + three digits: 1xx spec, 2xx quality, 3xx security, 4xx eval files,
    /// 5xx results.
    pub id: &'static str,
    /// A kebab-case name that says what the rule checks (`name-matches-folder`).
    pub name: &'static str,
    /// The rule's group.
    pub category: Category,
    /// Severity under the default profile.
    pub severity: Severity,
    /// One sentence for `--explain`, hovers and SARIF's rule metadata.
    pub summary: &'static str,
}

/// One finding at one place in one file.
///
/// Serializes with `rule` as its id string; deserializing looks the id up in the catalog, so a
/// diagnostic that crossed a process boundary (daemon RPC, a JSON report) still points at the
/// one static [`Rule`], and an id this build does not know is refused rather than invented.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// The catalog entry's id (`SW101`).
    pub rule: &'static str,
    /// Severity after profile and user overrides.
    pub severity: Severity,
    /// The file the finding is in.
    pub path: PathBuf,
    /// Byte range in that file's text (empty when pointing at a place, e.g. a missing key).
    pub span: Span,
    /// One line naming the offending value and what was expected.
    pub message: String,
    /// A repair that is safe to apply without review, when one exists.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<Fix>,
}

/// A mechanical repair: a title for the editor's menu and the edits to apply together.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fix {
    /// What applying the fix does, as an imperative ("Rename to `pdf-tools`").
    pub title: String,
    /// Non-overlapping replacements in the diagnostic's file.
    pub edits: Vec<Edit>,
}

/// Replace the bytes of `span` with `replacement`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Edit {
    /// Range to replace (empty for an insertion).
    pub span: Span,
    /// New text.
    pub replacement: String,
}

impl Diagnostic {
    /// The catalog entry this diagnostic was raised by (None only for an id missing from the
    /// catalog, which the catalog's tests rule out for every id the checks emit).
    pub fn rule_info(&self) -> Option<&'static Rule> {
        super::catalog::rule(self.rule)
    }
}

impl Fix {
    /// Whether the edits can be applied to `text`: each in range and on character boundaries,
    /// none overlapping another. Asked without building the new text.
    pub fn fits(&self, text: &str) -> bool {
        let mut spans: Vec<Span> = self.edits.iter().map(|e| e.span).collect();
        spans.sort_by_key(|s| (s.start, s.end));
        spans.windows(2).all(|pair| pair[0].end <= pair[1].start)
            && spans.iter().all(|s| text.get(s.start..s.end).is_some())
    }

    /// Apply the edits to `text`, last first so earlier offsets stay valid. Returns None when
    /// the edits do not [fit](Self::fits) the text.
    pub fn apply(&self, text: &str) -> Option<String> {
        if !self.fits(text) {
            return None;
        }
        let mut edits: Vec<&Edit> = self.edits.iter().collect();
        edits.sort_by_key(|e| (e.span.start, e.span.end));
        let mut out = text.to_string();
        for edit in edits.iter().rev() {
            out.replace_range(edit.span.start..edit.span.end, &edit.replacement);
        }
        Some(out)
    }
}

/// So [`super::CheckOptions::apply_overrides`] takes findings and silenced findings alike.
impl AsMut<Diagnostic> for Diagnostic {
    fn as_mut(&mut self) -> &mut Diagnostic {
        self
    }
}

/// A diagnostic as it arrives over the wire: the rule id still a string, so deserializing
/// borrows nothing and the id can be checked against the catalog.
#[derive(Deserialize)]
struct WireDiagnostic {
    rule: String,
    severity: Severity,
    path: PathBuf,
    span: Span,
    message: String,
    #[serde(default)]
    fix: Option<Fix>,
}

impl<'de> Deserialize<'de> for Diagnostic {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Diagnostic, D::Error> {
        let wire = WireDiagnostic::deserialize(deserializer)?;
        Diagnostic::try_from(wire).map_err(serde::de::Error::custom)
    }
}

impl TryFrom<WireDiagnostic> for Diagnostic {
    type Error = String;

    fn try_from(wire: WireDiagnostic) -> Result<Diagnostic, String> {
        let rule = super::catalog::rule(&wire.rule)
            .ok_or_else(|| format!("unknown rule id `{}`", wire.rule))?;
        Ok(Diagnostic {
            rule: rule.id,
            severity: wire.severity,
            path: wire.path,
            span: wire.span,
            message: wire.message,
            fix: wire.fix,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Diagnostic {
        Diagnostic {
            rule: "SW102",
            severity: Severity::Error,
            path: PathBuf::from("a/SKILL.md"),
            span: Span::new(4, 9),
            message: "frontmatter is not valid YAML".into(),
            fix: Some(Fix {
                title: "Replace".into(),
                edits: vec![Edit {
                    span: Span::new(0, 1),
                    replacement: "x".into(),
                }],
            }),
        }
    }

    #[test]
    fn round_trips_through_json_by_catalog_id() {
        let d = sample();
        let json = serde_json::to_string(&d).unwrap();
        let back: Diagnostic = serde_json::from_str(&json).unwrap();
        assert_eq!(back, d);
        assert!(std::ptr::eq(
            back.rule,
            super::super::catalog::rule("SW102").unwrap().id
        ));
    }

    #[test]
    fn deserializes_from_owned_readers() {
        fn owned<T: serde::de::DeserializeOwned>() {}
        owned::<Diagnostic>();
        let bytes = serde_json::to_vec(&sample()).unwrap();
        let back: Diagnostic = serde_json::from_reader(bytes.as_slice()).unwrap();
        assert_eq!(back, sample());
    }

    #[test]
    fn unknown_rule_ids_are_refused() {
        let json = serde_json::to_string(&sample())
            .unwrap()
            .replace("SW102", "SW999");
        let err = serde_json::from_str::<Diagnostic>(&json).unwrap_err();
        assert!(err.to_string().contains("unknown rule id `SW999`"), "{err}");
    }

    #[test]
    fn fixes_apply_last_edit_first_and_refuse_overlaps() {
        let fix = Fix {
            title: "t".into(),
            edits: vec![
                Edit {
                    span: Span::new(0, 1),
                    replacement: "AB".into(),
                },
                Edit {
                    span: Span::new(2, 3),
                    replacement: "".into(),
                },
            ],
        };
        assert_eq!(fix.apply("abc").as_deref(), Some("ABb"));
        let overlapping = Fix {
            title: "t".into(),
            edits: vec![
                Edit {
                    span: Span::new(0, 2),
                    replacement: "x".into(),
                },
                Edit {
                    span: Span::new(1, 3),
                    replacement: "y".into(),
                },
            ],
        };
        assert_eq!(overlapping.apply("abc"), None);
        let outside = Fix {
            title: "t".into(),
            edits: vec![Edit {
                span: Span::new(5, 6),
                replacement: "".into(),
            }],
        };
        assert_eq!(outside.apply("abc"), None);
    }
}
