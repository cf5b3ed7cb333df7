//! SW501 lift-regressed: a warning on SKILL.md when the skill's newest model comparison (the
//! daemon's model-change rerun, compared with the previous model) says it regressed, e.g.
//! "lift fell from +0.21 to -0.02 on model X: regressed (change -0.23, 95% interval ...)".
//!
//! Comparisons are fetched per skill when its SKILL.md opens and whenever the history moves
//! (daemon events, or the database poll without a daemon), and kept in the state; the
//! diagnostics worker adds them to core's findings without any I/O on the typing path.

use std::path::PathBuf;
use std::sync::Arc;

use skillwatch_core::checks::{self, CheckOptions, catalog};
use skillwatch_core::skill::SkillDocument;
use skillwatch_core::text::Span;
use skillwatch_protocol::ModelComparison;
use tower_lsp_server::ls_types as lsp;

use crate::documents::{Document, DocumentKind};
use crate::handlers::diagnostics::to_lsp;
use crate::state::State;

/// The SW501 rule id.
pub const RULE: &str = "SW501";

/// Fetch the comparisons of the skill in `skill_dir` and re-check its open documents when
/// they changed.
pub async fn refresh(state: &Arc<State>, skill_dir: PathBuf) {
    let history = state.history();
    let dir = skill_dir.clone();
    // One read of the history at a time: an editor opening hundreds of skills at once would
    // otherwise get a blocking thread and a database connection per skill at the same time.
    let Ok(_turn) = history_reads().acquire().await else {
        return;
    };
    let found = tokio::task::spawn_blocking(move || history.comparisons(&dir)).await;
    match found {
        Ok(Ok(comparisons)) => {
            if state.set_regressions(skill_dir.clone(), comparisons) {
                state.recheck_skill(&skill_dir);
            }
        }
        Ok(Err(e)) => tracing::debug!(dir = %skill_dir.display(), "no comparisons: {e}"),
        Err(e) => tracing::warn!("reading comparisons failed: {e}"),
    }
}

/// The turn to read the history for [`refresh`].
fn history_reads() -> &'static tokio::sync::Semaphore {
    static TURN: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(1);
    &TURN
}

/// [`refresh`] every skill with an open SKILL.md.
pub async fn refresh_open(state: &Arc<State>) {
    for dir in state.open_skill_dirs() {
        refresh(state, dir).await;
    }
}

/// SW501 warnings for `doc` (a SKILL.md) from the skill's comparisons, after the user's rule
/// overrides (`"SW501": "off"` silences them). Placed on the `name` value, else line 1.
pub fn diagnostics(
    doc: &Document,
    comparisons: &[ModelComparison],
    options: &CheckOptions,
) -> Vec<lsp::Diagnostic> {
    if doc.kind != DocumentKind::SkillMd {
        return Vec::new();
    }
    let regressed: Vec<&ModelComparison> =
        comparisons.iter().filter(|c| c.verdict.fails()).collect();
    if regressed.is_empty() {
        return Vec::new();
    }
    let span = SkillDocument::parse(doc.text.clone())
        .field_str("name")
        .map(|(_, span)| span)
        .filter(|s| s.end <= doc.text.len())
        .unwrap_or_else(|| Span::new(0, doc.text.find('\n').unwrap_or(doc.text.len())));
    let mut found: Vec<checks::Diagnostic> = regressed
        .into_iter()
        .map(|c| checks::Diagnostic {
            rule: RULE,
            severity: catalog::severity(RULE, options.profile),
            path: doc.path.clone(),
            span,
            message: format!(
                "{} ({}, runs {} -> {})",
                c.headline(),
                c.harness,
                c.reference_run,
                c.candidate_run
            ),
            fix: None,
        })
        .collect();
    options.apply_overrides(&mut found);
    found.iter().map(|d| to_lsp(doc, d)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use skillwatch_core::scoring::{Interval, IntervalMethod, Verdict};

    fn comparison(verdict: Verdict) -> ModelComparison {
        ModelComparison {
            skill: "pdf".into(),
            skill_dir: None,
            harness: "openai".into(),
            reference_model: "old".into(),
            candidate_model: "new".into(),
            reference_run: 1,
            candidate_run: 2,
            reference_lift: Some(0.21),
            candidate_lift: Some(-0.02),
            difference: Some(-0.23),
            interval: Some(Interval {
                estimate: -0.23,
                low: -0.31,
                high: -0.15,
                level: 0.95,
                method: IntervalMethod::StudentT,
                n: 8,
            }),
            verdict,
            reason: "r".into(),
            compared_ms: 0,
        }
    }

    fn doc(dir: &std::path::Path) -> Document {
        let path = dir.join("SKILL.md");
        let uri = lsp::Uri::from_file_path(&path).unwrap();
        Document::new(
            uri,
            path,
            DocumentKind::SkillMd,
            1,
            "---\nname: pdf\n---\nbody\n".into(),
        )
    }

    #[test]
    fn a_regression_warns_on_the_name_with_the_numbers() {
        let tmp = tempfile::tempdir().unwrap();
        let doc = doc(tmp.path());
        let found = diagnostics(
            &doc,
            &[comparison(Verdict::Regresses)],
            &CheckOptions::default(),
        );
        assert_eq!(found.len(), 1);
        let d = &found[0];
        assert_eq!(d.severity, Some(lsp::DiagnosticSeverity::WARNING));
        assert_eq!(d.code, Some(lsp::NumberOrString::String(RULE.into())));
        assert_eq!(d.range.start, lsp::Position::new(1, 6));
        assert!(
            d.message
                .starts_with("lift fell from +0.21 to -0.02 on model new: regresses"),
            "{}",
            d.message
        );
        assert!(d.message.contains("[-0.31, -0.15]"), "{}", d.message);
    }

    #[test]
    fn other_verdicts_and_silenced_rules_give_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let doc = doc(tmp.path());
        for verdict in [
            Verdict::NoChange,
            Verdict::Inconclusive,
            Verdict::Improves,
            Verdict::NotMeasured,
        ] {
            assert!(diagnostics(&doc, &[comparison(verdict)], &CheckOptions::default()).is_empty());
        }
        let off = CheckOptions {
            overrides: vec![(RULE.to_string(), None)],
            ..CheckOptions::default()
        };
        assert!(diagnostics(&doc, &[comparison(Verdict::Regresses)], &off).is_empty());
    }
}
