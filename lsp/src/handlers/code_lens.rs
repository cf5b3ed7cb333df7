//! textDocument/codeLens: the lift history right above the skill.
//!
//! SKILL.md gets, on its first line, one lens per model with the latest lift ("Lift +0.21
//! [+0.12, +0.30] 95% n=12 · improves · claude-sonnet-4.5 · 5 runs · 2 days ago": the
//! interval with its level and n, and the verdict, as the CLI prints them) that opens the
//! history, and after it, when the skill was probed on that harness and model, the security
//! lens ("Security 92 · Caution · claude-sonnet-4.5"); then a lens that starts a paired run;
//! eval files get, above each case, that case's last result.

use std::path::Path;
use std::time::SystemTime;

use serde_json::json;
use skillwatch_core::plural::count;
use skillwatch_core::skill::SkillDocument;
use skillwatch_core::yaml::{self, Node};
use skillwatch_protocol::{LensFailed, LensSecurity};
use tower_lsp_server::ls_types::{CodeLens, Command, Position, Range};

use crate::documents::{Document, DocumentKind};
use crate::handlers::commands::{RUN_EVAL, SHOW_HISTORY};
use crate::history::{CaseResult, History, HistoryError, ModelLift};

/// The lenses of `doc`, reading the history through `history`.
pub fn code_lenses(doc: &Document, history: &History, now: SystemTime) -> Vec<CodeLens> {
    let Some(skill_dir) = doc.skill_dir() else {
        return Vec::new();
    };
    match doc.kind {
        DocumentKind::SkillMd => {
            let mut lenses = skill_lenses(&skill_dir, history, now);
            lenses.extend(trigger_lenses(doc, &skill_dir, history));
            lenses
        }
        DocumentKind::EvalYaml | DocumentKind::EvalsJson => {
            case_lenses(doc, &skill_dir, history, now)
        }
    }
}

fn skill_lenses(skill_dir: &Path, history: &History, now: SystemTime) -> Vec<CodeLens> {
    let top = Range::new(Position::new(0, 0), Position::new(0, 0));
    let dir = skill_dir.display().to_string();
    // a model whose newest run failed says so first, above any older lift on it
    let failed: Vec<CodeLens> = history
        .skill_failures(skill_dir)
        .unwrap_or_default()
        .iter()
        .map(|f| {
            lens(
                top,
                &failed_title(f, now),
                SHOW_HISTORY,
                json!([dir, f.model]),
            )
        })
        .collect();
    let mut lenses = match history.skill_lifts(skill_dir) {
        Ok(lifts) if lifts.is_empty() && !failed.is_empty() => Vec::new(),
        Ok(lifts) if lifts.is_empty() => vec![lens(top, "No runs yet", SHOW_HISTORY, json!([dir]))],
        Ok(lifts) => lifts
            .iter()
            .flat_map(|lift| {
                let arguments = json!([dir, lift.model]);
                let security = lift.security.as_ref().map(|s| {
                    lens(
                        top,
                        &security_title(s, &lift.model),
                        SHOW_HISTORY,
                        arguments.clone(),
                    )
                });
                [
                    Some(lens(
                        top,
                        &lift_title(lift, now),
                        SHOW_HISTORY,
                        arguments.clone(),
                    )),
                    security,
                ]
                .into_iter()
                .flatten()
            })
            .collect(),
        Err(error) => vec![lens(
            top,
            &history_error_title(&error),
            SHOW_HISTORY,
            json!([dir]),
        )],
    };
    lenses.splice(0..0, failed);
    lenses.push(lens(top, "▶ Run paired eval", RUN_EVAL, json!([dir])));
    lenses
}

/// "Last run failed: 4 of 4 trials errored · claude-sonnet-4.5 · 2 minutes ago · run 7".
pub fn failed_title(failed: &LensFailed, now: SystemTime) -> String {
    let finished = SystemTime::UNIX_EPOCH
        + std::time::Duration::from_millis(u64::try_from(failed.finished_ms).unwrap_or(0));
    format!(
        "Last run failed: {} of {} errored · {} · {} · run {}",
        failed.errors,
        count(failed.trials, "trial"),
        failed.model,
        ago(finished, now),
        failed.run
    )
}

/// On the `description:` line, one lens per (harness, model) with the newest trigger rates
/// ("Triggers 18/20 [0.70, 0.97] · false 1/10 · model"); none before the first trigger run.
fn trigger_lenses(doc: &Document, skill_dir: &Path, history: &History) -> Vec<CodeLens> {
    let parsed = SkillDocument::parse(doc.text.clone());
    let Some(entry) = parsed
        .frontmatter_root()
        .and_then(|root| root.get("description"))
    else {
        return Vec::new();
    };
    let bom = doc.text.len() - parsed.text.len();
    let line = doc.position_of(entry.key.span.start + bom).line;
    let range = Range::new(Position::new(line, 0), Position::new(line, 0));
    let Ok(triggers) = history.skill_triggers(skill_dir) else {
        return Vec::new();
    };
    let dir = skill_dir.display().to_string();
    triggers
        .iter()
        .map(|t| {
            lens(
                range,
                &format!("{} · {}", t.title(), t.model),
                SHOW_HISTORY,
                json!([dir, t.model]),
            )
        })
        .collect()
}

fn case_lenses(
    doc: &Document,
    skill_dir: &Path,
    history: &History,
    now: SystemTime,
) -> Vec<CodeLens> {
    let Ok(root) = yaml::parse(&doc.text, 0) else {
        return Vec::new();
    };
    let cases = case_anchors(doc.kind, &root);
    if cases.is_empty() {
        return Vec::new();
    }
    let results = history.case_results(skill_dir);
    let dir = skill_dir.display().to_string();
    cases
        .into_iter()
        .map(|(name, span)| {
            let position = doc.position_of(span.start);
            let range = Range::new(Position::new(position.line, 0), position);
            let title = match &results {
                Ok(results) => {
                    let mine: Vec<String> = results
                        .iter()
                        .filter(|r| r.case == name)
                        .map(|r| case_title(r, now))
                        .collect();
                    if mine.is_empty() {
                        "No runs yet".to_string()
                    } else {
                        mine.join(" | ")
                    }
                }
                Err(error) => history_error_title(error),
            };
            lens(
                range,
                &format!("{title} · ▶ run"),
                RUN_EVAL,
                json!([dir, name]),
            )
        })
        .collect()
}

/// Each case's name (eval.yaml) or id (evals.json) and the span of the case to put a lens on.
pub fn case_anchors(kind: DocumentKind, root: &Node) -> Vec<(String, skillwatch_core::text::Span)> {
    let (cases, key) = match kind {
        DocumentKind::EvalYaml => (root.get("scenarios").map(|e| &e.value), "name"),
        DocumentKind::EvalsJson => match root.as_sequence() {
            Some(_) => (Some(root), "id"),
            None => (root.get("evals").map(|e| &e.value), "id"),
        },
        DocumentKind::SkillMd => (None, ""),
    };
    let Some(items) = cases.and_then(Node::as_sequence) else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|item| {
            let value = &item.get(key)?.value;
            let name = value.as_scalar()?.text.clone();
            Some((name, item.span))
        })
        .collect()
}

fn lens(range: Range, title: &str, command: &str, arguments: serde_json::Value) -> CodeLens {
    let arguments = match arguments {
        serde_json::Value::Array(items) => items,
        other => vec![other],
    };
    CodeLens {
        range,
        command: Some(Command {
            title: title.to_string(),
            command: command.to_string(),
            arguments: Some(arguments),
        }),
        data: None,
    }
}

/// "Lift +0.21 [+0.12, +0.30] 95% n=12 · improves · claude-sonnet-4.5 · 5 runs · 2 days ago";
/// the verdict tells "inconclusive (n too small)" from "no change".
/// "Security 92 · Caution · claude-sonnet-4.5 · SDP-01 failed": S of the newest completed
/// probe run on the lift lens's model, rounded as the seed's examples print it.
pub fn security_title(s: &LensSecurity, model: &str) -> String {
    let value = match (s.score, s.status) {
        (Some(score), Some(status)) => format!("{score:.0} · {}", status.label()),
        _ => "not measured".into(),
    };
    let failed = match s.failed.as_slice() {
        [] => String::new(),
        [one] => format!(" · {one} failed"),
        many => format!(" · {} probes failed", many.len()),
    };
    format!("Security {value} · {model}{failed}")
}

pub fn lift_title(lift: &ModelLift, now: SystemTime) -> String {
    let interval = lift
        .interval
        .as_ref()
        .map(|i| {
            format!(
                " [{:+.2}, {:+.2}] {:.0}% n={}",
                i.low,
                i.high,
                i.level * 100.0,
                i.n
            )
        })
        .unwrap_or_default();
    let value = lift
        .lift
        .map_or_else(|| "n/a".to_string(), |l| format!("{l:+.2}"));
    let runs = count(lift.runs, "run");
    let verdict = lift
        .verdict
        .as_ref()
        .map_or_else(String::new, |v| format!(" · {v}"));
    let plugin = lift
        .plugin_lift
        .map_or_else(String::new, |p| format!(" · plugin arm {p:+.2}"));
    format!(
        "Lift {value}{interval}{verdict}{plugin} · {} · {runs} · {}",
        lift.model,
        ago(lift.finished_at, now)
    )
}

/// "Last lift +0.45 · claude-sonnet-4.5 · 3 days ago" ("(edited since)" when stale).
pub fn case_title(result: &CaseResult, now: SystemTime) -> String {
    let lift = result
        .lift
        .map_or_else(|| "n/a".to_string(), |l| format!("{l:+.2}"));
    let stale = if result.stale { " (edited since)" } else { "" };
    format!(
        "Last lift {lift}{stale} · {} · {}",
        result.model,
        ago(result.finished_at, now)
    )
}

fn history_error_title(error: &HistoryError) -> String {
    match error {
        // before the first run the history does not exist yet: nothing is wrong
        HistoryError::Unavailable(_) => "No runs yet".to_string(),
        HistoryError::Store { .. } => format!("History unavailable: {error}"),
    }
}

/// A coarse relative time: "just now", "5 minutes ago", "2 days ago".
pub fn ago(then: SystemTime, now: SystemTime) -> String {
    let secs = now.duration_since(then).map_or(0, |d| d.as_secs());
    let (n, unit) = match secs {
        0..60 => return "just now".to_string(),
        60..3_600 => (secs / 60, "minute"),
        3_600..86_400 => (secs / 3_600, "hour"),
        86_400..2_592_000 => (secs / 86_400, "day"),
        2_592_000..31_536_000 => (secs / 2_592_000, "month"),
        _ => (secs / 31_536_000, "year"),
    };
    format!("{} ago", count(n, unit))
}

#[cfg(test)]
mod tests {
    use super::*;
    use skillwatch_core::scoring::{Interval, IntervalMethod};
    use std::time::Duration;

    #[test]
    fn lift_title_matches_the_issue_example() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(10 * 86_400);
        let interval = |low, high, n| Interval {
            estimate: (low + high) / 2.0,
            low,
            high,
            level: 0.95,
            method: IntervalMethod::StudentT,
            n,
        };
        let lift = ModelLift {
            model: "claude-sonnet-4.5".into(),
            harness: "claude-code".into(),
            lift: Some(0.21),
            interval: Some(interval(0.12, 0.30, 12)),
            verdict: Some("improves".into()),
            runs: 5,
            finished_at: now - Duration::from_secs(2 * 86_400 + 100),
            security: None,
            plugin_lift: None,
        };
        assert_eq!(
            lift_title(&lift, now),
            "Lift +0.21 [+0.12, +0.30] 95% n=12 · improves · claude-sonnet-4.5 · 5 runs · 2 days ago"
        );
        let small = ModelLift {
            lift: Some(0.5),
            interval: Some(interval(-0.8, 1.8, 3)),
            verdict: Some("inconclusive (n too small)".into()),
            runs: 1,
            ..lift
        };
        assert_eq!(
            lift_title(&small, now),
            "Lift +0.50 [-0.80, +1.80] 95% n=3 · inconclusive (n too small) · claude-sonnet-4.5 · 1 run · 2 days ago"
        );
        // a run with a plugin arm: its lift beside the skill's
        let plugin = ModelLift {
            plugin_lift: Some(1.0 / 3.0),
            ..small
        };
        assert!(
            lift_title(&plugin, now)
                .contains(" · inconclusive (n too small) · plugin arm +0.33 · claude-sonnet-4.5"),
            "{}",
            lift_title(&plugin, now)
        );
    }

    #[test]
    fn security_title_says_s_status_model_and_failures() {
        let s = LensSecurity {
            probe_run: 3,
            score: Some(92.59),
            status: Some(skillwatch_core::scoring::skilltester::SecurityStatus::Caution),
            failed: vec!["SDP-01".into(), "SDP-04".into()],
            finished_ms: 0,
        };
        assert_eq!(
            security_title(&s, "m"),
            "Security 93 · Caution · m · 2 probes failed"
        );
        let unmeasured = LensSecurity {
            score: None,
            status: None,
            failed: vec!["PB-01".into()],
            ..s
        };
        assert_eq!(
            security_title(&unmeasured, "m"),
            "Security not measured · m · PB-01 failed"
        );
    }

    #[test]
    fn relative_times() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let ago_secs = |s| ago(now - Duration::from_secs(s), now);
        assert_eq!(ago_secs(5), "just now");
        assert_eq!(ago_secs(60), "1 minute ago");
        assert_eq!(ago_secs(7_200), "2 hours ago");
        assert_eq!(ago(now + Duration::from_secs(5), now), "just now");
    }

    #[test]
    fn anchors_for_both_eval_formats() {
        let yaml_root = yaml::parse("scenarios:\n  - name: first\n  - name: second\n", 0).unwrap();
        let names: Vec<_> = case_anchors(DocumentKind::EvalYaml, &yaml_root)
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert_eq!(names, vec!["first", "second"]);
        let json_root = yaml::parse(r#"[{"id": "a-1"}, {"id": 2}]"#, 0).unwrap();
        let names: Vec<_> = case_anchors(DocumentKind::EvalsJson, &json_root)
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert_eq!(names, vec!["a-1", "2"]);
    }
}
