//! "Look for a better description": a code action on a SKILL.md's `description:` that runs
//! `skillwatch trigger SKILL --optimize`, the thin client of the description search (one job
//! of the daemon the server is linked to; the CLI starts one on demand), reads the job's typed
//! report ([`OptimizeReport`]) and, when it ends with a description that beat the current one
//! on validation, offers it: the validation rates in a message with "Apply" (a
//! `workspace/applyEdit` of the `description:` alone, on the text as it is then), and the diff
//! in `skillwatch/optimizeFinished` for clients that preview it.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;
use skillwatch_core::skill::SkillDocument;
use skillwatch_protocol::{OptimizeReport, Rates};
use tower_lsp_server::ls_types::{
    CodeAction, CodeActionKind, Command, MessageActionItem, MessageType, Range, TextEdit,
    WorkspaceEdit,
};

use crate::documents::{Document, DocumentKind};
use crate::ext::{OptimizeFinished, OptimizeFinishedParams};
use crate::state::State;

/// Run the description search of a skill: arguments `[skill]`.
pub const OPTIMIZE_DESCRIPTION: &str = "skillwatch.optimizeDescription";

/// The action's kind: a rewrite the author chooses to start.
pub const KIND: &str = "refactor.rewrite";

/// The action, when `range` touches the `description:` of a SKILL.md.
pub fn code_action(doc: &Document, range: Range) -> Option<CodeAction> {
    if doc.kind != DocumentKind::SkillMd {
        return None;
    }
    let skill = SkillDocument::parse(doc.text.clone());
    let (_, span) = skill.field_str("description")?;
    let line = doc.range_of(span).start.line;
    if line < range.start.line || line > range.end.line {
        return None;
    }
    Some(CodeAction {
        title: "Look for a better description".into(),
        kind: Some(CodeActionKind::from(KIND)),
        command: Some(Command {
            title: "Look for a better description".into(),
            command: OPTIMIZE_DESCRIPTION.into(),
            arguments: Some(vec![Value::String(doc.uri.to_string())]),
        }),
        ..CodeAction::default()
    })
}

/// Run the search for the skill in `skill_dir` and offer what it found.
pub async fn run(state: Arc<State>, skill_dir: String) {
    let mut args = vec![
        "trigger".to_string(),
        skill_dir.clone(),
        "--optimize".into(),
        "--json".into(),
    ];
    if let Some(db) = state.history_db() {
        args.extend(["--db".into(), db.display().to_string()]);
    }
    let outcome = super::commands::run_cli(&state.cli_path(), &args).await;
    let report: Option<OptimizeReport> = match &outcome {
        Ok(out) if out.success => serde_json::from_str(&out.stdout).ok(),
        _ => None,
    };
    let Some(report) = report else {
        let why = match &outcome {
            Ok(out) => out.last_line().to_string(),
            Err(e) => format!("could not start: {e}"),
        };
        let message = format!("Description search failed: {why}");
        return finish(&state, skill_dir, false, message, None, None).await;
    };
    let message = summary(&report);
    let (chosen, diff) = (report.chosen, report.diff);
    if let Some(text) = &chosen {
        offer(&state, &skill_dir, text, &message).await;
    }
    finish(&state, skill_dir, true, message, chosen, diff).await;
}

/// `Recall 2/8 -> 8/8, false triggers 0/4 -> 0/4 on validation (stopped: ...)`.
fn summary(report: &OptimizeReport) -> String {
    let rate = |side: &Option<Rates>, recall: bool| match side {
        Some(r) => {
            let p = if recall { &r.recall } else { &r.false_trigger };
            format!("{}/{}", p.hits, p.trials)
        }
        None => "-".into(),
    };
    let stopped = &report.stopped.detail;
    match &report.chosen {
        Some(_) => format!(
            "A better description: recall {} -> {}, false triggers {} -> {} on validation \
             ({stopped})",
            rate(&report.before, true),
            rate(&report.after, true),
            rate(&report.before, false),
            rate(&report.after, false)
        ),
        None => format!("No better description found ({stopped})"),
    }
}

/// Ask whether to apply `chosen`; on "Apply", edit the `description:` of SKILL.md as it is
/// now (the open buffer, else the file).
async fn offer(state: &State, skill_dir: &str, chosen: &str, message: &str) {
    let apply = "Apply";
    let answer = state
        .client
        .show_message_request(
            MessageType::INFO,
            format!("{message}. Apply it to SKILL.md?"),
            Some(vec![
                MessageActionItem {
                    title: apply.into(),
                    properties: Default::default(),
                },
                MessageActionItem {
                    title: "Dismiss".into(),
                    properties: Default::default(),
                },
            ]),
        )
        .await;
    if !matches!(answer, Ok(Some(a)) if a.title == apply) {
        return;
    }
    let path = std::path::Path::new(skill_dir).join(skillwatch_core::skill::SKILL_FILE);
    let Some(doc) = current(state, &path) else {
        return;
    };
    let Some(edit) = edit(&doc, chosen) else {
        return;
    };
    if let Err(e) = state.client.apply_edit(edit).await {
        tracing::warn!("workspace/applyEdit failed: {e}");
    }
}

/// SKILL.md at `path` as it is now: the open buffer, else the file.
fn current(state: &State, path: &std::path::Path) -> Option<Arc<Document>> {
    let same = |p: &std::path::Path| p == path || p.canonicalize().ok() == path.canonicalize().ok();
    let open = state
        .documents()
        .values()
        .find(|o| same(&o.doc.path))
        .map(|o| o.doc.clone());
    if open.is_some() {
        return open;
    }
    let text = std::fs::read_to_string(path).ok()?;
    let uri = tower_lsp_server::ls_types::Uri::from_file_path(path)?;
    Some(Arc::new(Document::new(
        uri,
        path.to_path_buf(),
        DocumentKind::SkillMd,
        0,
        text,
    )))
}

/// The edit that sets the `description:` of `doc` to `chosen`, touching nothing else.
fn edit(doc: &Document, chosen: &str) -> Option<WorkspaceEdit> {
    let new = SkillDocument::parse(doc.text.clone()).with_field_str("description", chosen)?;
    let (span, replacement) = super::code_action::changed_part(&doc.text, &new);
    Some(WorkspaceEdit {
        changes: Some(HashMap::from([(
            doc.uri.clone(),
            vec![TextEdit {
                range: doc.range_of(span),
                new_text: replacement.to_string(),
            }],
        )])),
        ..WorkspaceEdit::default()
    })
}

async fn finish(
    state: &State,
    skill_dir: String,
    success: bool,
    message: String,
    chosen: Option<String>,
    diff: Option<String>,
) {
    super::commands::show_outcome(state, success, &message).await;
    state
        .client
        .send_notification::<OptimizeFinished>(OptimizeFinishedParams {
            skill_dir,
            success,
            message,
            chosen,
            diff,
        })
        .await;
}
