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

/// Apply as many of the fixes of `diagnostics` (findings in `text`) together as can be: in
/// order, each fix whose edits touch none taken before it. Two rules often propose the same
/// repair (SW106 and SW108 both set `name`): a fix equal to one taken is skipped, not counted.
/// Returns the new text and the findings whose fixes were taken, `None` when none was. The
/// fixes left out may apply once the text is checked again (their spans were computed for the
/// old text).
fn apply_fixes<'d>(
    text: &str,
    diagnostics: &'d [Diagnostic],
) -> Option<(String, Vec<&'d Diagnostic>)> {
    let mut taken: Vec<(&Diagnostic, &Fix)> = Vec::new();
    for d in diagnostics {
        let Some(fix) = &d.fix else { continue };
        let overlaps = |e: &Edit| {
            taken.iter().flat_map(|(_, t)| &t.edits).any(|t| {
                (e.span.start < t.span.end && t.span.start < e.span.end) || e.span == t.span
            })
        };
        let repeated = taken.iter().any(|(_, t)| t.edits == fix.edits);
        if !repeated && !fix.edits.iter().any(overlaps) && fix.fits(text) {
            taken.push((d, fix));
        }
    }
    if taken.is_empty() {
        return None;
    }
    let all = Fix {
        title: String::new(),
        edits: taken
            .iter()
            .flat_map(|(_, f)| f.edits.iter().cloned())
            .collect(),
    };
    Some((
        all.apply(text)?,
        taken.into_iter().map(|(d, _)| d).collect(),
    ))
}

/// So [`super::CheckOptions::apply_overrides`] takes findings and silenced findings alike.
impl AsMut<Diagnostic> for Diagnostic {
    fn as_mut(&mut self) -> &mut Diagnostic {
        self
    }
}

/// Rounds of [`fix_rounds`] at most: a repair that never settles (one fix undoing another)
/// stops here.
pub const MAX_FIX_ROUNDS: usize = 10;

/// One round of [`fix_rounds`]: the text it applied to, and the findings (in that text)
/// whose fixes it took.
#[derive(Debug, Clone)]
pub struct FixRound {
    /// The text before this round.
    pub text: String,
    /// The findings fixed, their spans in `text`.
    pub taken: Vec<Diagnostic>,
}

/// Apply fixes round after round until none applies: each round takes what
/// `apply_fixes` takes together, and `recheck` finds the findings of the new text, where
/// the fixes left out (they touched a taken one) and the findings a fix uncovered (quoting a
/// value that broke the YAML reveals the fields' own findings) apply next. Returns the rounds
/// and the final text, `None` when nothing applies. The command line's `--fix` and the
/// editor's fix-all both go through here, so they fix the same way.
pub fn fix_rounds(
    text: &str,
    findings: Vec<Diagnostic>,
    mut recheck: impl FnMut(&str) -> Vec<Diagnostic>,
) -> Option<(Vec<FixRound>, String)> {
    let mut rounds = Vec::new();
    let mut text = text.to_owned();
    let mut findings = findings;
    while rounds.len() < MAX_FIX_ROUNDS {
        let Some((new, taken)) = apply_fixes(&text, &findings) else {
            break;
        };
        let taken = taken.into_iter().cloned().collect();
        rounds.push(FixRound {
            text: std::mem::replace(&mut text, new),
            taken,
        });
        findings = recheck(&text);
    }
    (!rounds.is_empty()).then_some((rounds, text))
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

    fn with_fix(fix: Fix) -> Diagnostic {
        Diagnostic {
            fix: Some(fix),
            ..sample()
        }
    }

    fn replace(start: usize, end: usize, with: &str) -> Fix {
        Fix {
            title: format!("{start}..{end}"),
            edits: vec![Edit {
                span: Span::new(start, end),
                replacement: with.into(),
            }],
        }
    }

    #[test]
    fn fixes_apply_together_when_apart_and_wait_when_they_touch() {
        let fixes = [
            replace(4, 6, "NAME"),
            replace(0, 1, "A"),
            replace(4, 6, "NAME"), // the same repair from a second rule
            replace(5, 7, "x"),    // overlaps the first: left for the next round
            replace(9, 9, "!"),    // an insertion
            replace(9, 9, "?"),    // a second insertion at the same place waits
            replace(20, 21, "z"),  // out of range: never taken
        ];
        let findings: Vec<Diagnostic> = fixes.into_iter().map(with_fix).collect();
        let (text, taken) = apply_fixes("abc name xyz", &findings).unwrap();
        let positions: Vec<usize> = taken
            .iter()
            .map(|t| findings.iter().position(|f| std::ptr::eq(f, *t)).unwrap())
            .collect();
        assert_eq!(
            (text.as_str(), positions),
            ("Abc NAMEme !xyz", vec![0, 1, 4])
        );
        assert_eq!(apply_fixes("abc", &[with_fix(replace(5, 6, ""))]), None);
        assert_eq!(apply_fixes("abc", &[]), None);
        // a finding without a fix is passed over
        let unfixable = Diagnostic {
            fix: None,
            ..sample()
        };
        assert_eq!(apply_fixes("abc", &[unfixable]), None);
    }

    #[test]
    fn rounds_go_on_while_the_recheck_finds_fixes_and_stop_at_the_limit() {
        // each `a` becomes `b` one per round: the recheck finds the next `a`
        let next_a = |text: &str| -> Vec<Diagnostic> {
            text.find('a')
                .map(|i| with_fix(replace(i, i + 1, "b")))
                .into_iter()
                .collect()
        };
        let (rounds, text) = fix_rounds("xaxa", next_a("xaxa"), next_a).unwrap();
        assert_eq!(text, "xbxb");
        let seen: Vec<(&str, usize)> = rounds
            .iter()
            .map(|r| {
                (
                    r.text.as_str(),
                    r.taken[0].fix.as_ref().unwrap().edits[0].span.start,
                )
            })
            .collect();
        assert_eq!(seen, [("xaxa", 1), ("xbxa", 3)]);
        assert!(fix_rounds("xbxb", next_a("xbxb"), next_a).is_none());
        // a repair that never settles stops after MAX_FIX_ROUNDS
        let flip = |text: &str| {
            vec![with_fix(replace(
                0,
                1,
                if text.starts_with('a') { "b" } else { "a" },
            ))]
        };
        let (rounds, _) = fix_rounds("a", flip("a"), flip).unwrap();
        assert_eq!(rounds.len(), MAX_FIX_ROUNDS);
    }
}
