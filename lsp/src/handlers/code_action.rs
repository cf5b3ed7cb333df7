//! textDocument/codeAction: one quick fix per finding in the requested range whose rule offers
//! a mechanical repair (`Diagnostic.fix` in core), an "Ignore SWnnn on this line" per finding
//! (a `skillwatch-ignore` comment above it), and a `source.fixAll.skillwatch` action that
//! applies every fix of the document, round after round, as `check --fix` does (editors run it
//! on save with `"editor.codeActionsOnSave"`). Findings are recomputed
//! on the current text, so a fix never applies to positions from an older version.

use std::collections::HashMap;

use skillwatch_core::checks::{
    Category, CheckOptions, Diagnostic, Edit, Fix, Shape, catalog, fix_rounds, ignore, keeps_text,
};
use skillwatch_core::evalspec::FileKind;
use skillwatch_core::text::{Span, bom_len};
use tower_lsp_server::ls_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, Range, TextEdit, WorkspaceEdit,
};

use crate::documents::{Document, DocumentKind};
use crate::handlers::diagnostics;

/// The rule reporting a SKILL.md without frontmatter. core offers no fix for it (what to
/// write is the author's), so the server offers a skeleton to fill in.
const FRONTMATTER_MISSING: &str = "SW101";

/// The kind of the fix-all action: a sub-kind of `source.fixAll`, so an editor asking for
/// every fix-all (`source.fixAll`) or for skillwatch's alone gets it.
pub const FIX_ALL: &str = "source.fixAll.skillwatch";

/// The quick fixes for findings that overlap `range`, and the fix-all action, as far as
/// `only` (the client's `context.only`) asks for them. With no `only`, the fix-all action is
/// offered when the document has more than one fix.
pub fn code_actions(
    doc: &Document,
    range: Range,
    only: Option<&[CodeActionKind]>,
    options: &CheckOptions,
) -> Vec<CodeActionOrCommand> {
    let wants = |kind: &str| {
        only.is_none_or(|kinds| {
            kinds
                .iter()
                .any(|k| kind == k.as_str() || kind.starts_with(&format!("{}.", k.as_str())))
        })
    };
    let mut findings = diagnostics::check(doc, options);
    for finding in &mut findings {
        if finding.fix.is_none() && finding.rule == FRONTMATTER_MISSING {
            finding.fix = frontmatter_skeleton(doc);
        }
    }
    let mut actions = Vec::new();
    if wants(CodeActionKind::QUICKFIX.as_str()) {
        let here: Vec<&Diagnostic> = findings
            .iter()
            .filter(|finding| overlaps(doc.range_of(finding.span), range))
            .collect();
        actions.extend(quick_fixes(doc, &here));
        actions.extend(silence(doc, &here));
    }
    if wants(super::optimize::KIND)
        && let Some(action) = super::optimize::code_action(doc, range)
    {
        actions.push(CodeActionOrCommand::CodeAction(action));
    }
    let fixable = findings.iter().filter(|f| f.fix.is_some()).count();
    if wants(FIX_ALL) && (only.is_some() || fixable > 1) {
        actions.extend(fix_all(doc, findings, options));
    }
    actions
}

/// One quick fix per distinct repair: two rules often propose the same one (SW106 and SW108
/// both "Set name to ..."), which is offered once, for both findings.
/// A fix that would replace the author's text (`--fix` leaves it to them) is offered but not
/// preferred, so an editor's "apply the preferred fix" never picks it unasked.
fn quick_fixes(doc: &Document, findings: &[&Diagnostic]) -> Vec<CodeActionOrCommand> {
    let shape = shape_of(doc);
    let mut offered: Vec<(&Fix, CodeAction)> = Vec::new();
    for finding in findings {
        let Some(fix) = &finding.fix else { continue };
        let diagnostic = diagnostics::to_lsp(doc, finding);
        if let Some((_, action)) = offered.iter_mut().find(|(f, _)| *f == fix) {
            action
                .diagnostics
                .get_or_insert_with(Vec::new)
                .push(diagnostic);
            continue;
        }
        offered.push((
            fix,
            CodeAction {
                title: fix.title.clone(),
                kind: Some(CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![diagnostic]),
                edit: Some(workspace_edit(doc, &fix.edits)),
                is_preferred: Some(keeps_text(shape, &doc.text, fix)),
                ..CodeAction::default()
            },
        ));
    }
    offered
        .into_iter()
        .map(|(_, action)| CodeActionOrCommand::CodeAction(action))
        .collect()
}

/// "Ignore SW307 on this line" for each of `findings` (one per rule and line): a
/// `skillwatch-ignore` comment above the finding's line (see core's `checks::ignore`), where
/// one can go without changing what the file says. Not for the directive rules themselves,
/// nor in evals.json (JSON has no comments).
fn silence(doc: &Document, findings: &[&Diagnostic]) -> Vec<CodeActionOrCommand> {
    // editors ask for actions at every cursor move, mostly where there is no finding: the
    // document is parsed for a comment's place only when one may be offered
    if findings.is_empty() {
        return Vec::new();
    }
    let target = match doc.kind {
        DocumentKind::SkillMd => ignore::Target::SkillMd,
        DocumentKind::EvalYaml => ignore::Target::EvalYaml,
        DocumentKind::EvalsJson => return Vec::new(),
    };
    // core reads a SKILL.md without its BOM; the editor's text may hold one
    let shift = bom_len(&doc.text);
    let silencer = ignore::Silencer::new(target, &doc.text[shift..]);
    let mut offered = Vec::new();
    let mut actions = Vec::new();
    for finding in findings {
        let Some(rule) = catalog::rule(finding.rule) else {
            continue;
        };
        let Some(mut edit) = (rule.category != Category::Directive)
            .then(|| silencer.edit(finding.span.start.saturating_sub(shift), rule.id))
            .flatten()
        else {
            continue;
        };
        edit.span = edit.span.shifted(shift);
        if offered.contains(&(edit.span, rule.id)) {
            continue;
        }
        offered.push((edit.span, rule.id));
        actions.push(CodeActionOrCommand::CodeAction(CodeAction {
            title: format!(
                "Ignore {} on this line (skillwatch-ignore comment)",
                rule.id
            ),
            kind: Some(CodeActionKind::QUICKFIX),
            diagnostics: Some(vec![diagnostics::to_lsp(doc, finding)]),
            edit: Some(workspace_edit(doc, &[edit])),
            ..CodeAction::default()
        }));
    }
    actions
}

/// What the document is, for the fixes' rule on keeping the author's text.
fn shape_of(doc: &Document) -> Shape {
    match doc.kind {
        DocumentKind::SkillMd => Shape::SkillMd,
        DocumentKind::EvalYaml => Shape::Eval(FileKind::EvalYaml),
        DocumentKind::EvalsJson => Shape::Eval(FileKind::EvalsJson),
    }
}

/// "Fix all skillwatch findings": every fix, round after round as `check --fix` takes them
/// ([`fix_rounds`], the text checked again after each round), as one edit over the part of
/// the document that changes. Rounds after the first cost a check each; most documents
/// settle in one or two.
fn fix_all(
    doc: &Document,
    findings: Vec<Diagnostic>,
    options: &CheckOptions,
) -> Option<CodeActionOrCommand> {
    let (rounds, fixed) = fix_rounds(shape_of(doc), &doc.text, findings, |text| {
        diagnostics::check(&doc.with_text(text.to_owned()), options)
    })?;
    let count: usize = rounds.iter().map(|r| r.taken.len()).sum();
    let title = match count {
        1 => "Fix all skillwatch findings (1 fix)".to_string(),
        n => format!("Fix all skillwatch findings ({n} fixes)"),
    };
    let (span, replacement) = changed_part(&doc.text, &fixed);
    let edit = Edit {
        span,
        replacement: replacement.to_owned(),
    };
    Some(CodeActionOrCommand::CodeAction(CodeAction {
        title,
        kind: Some(CodeActionKind::from(FIX_ALL)),
        // the findings of the current text it fixes; later rounds' are not in it yet
        diagnostics: Some(
            rounds[0]
                .taken
                .iter()
                .map(|f| diagnostics::to_lsp(doc, f))
                .collect(),
        ),
        edit: Some(workspace_edit(doc, &[edit])),
        ..CodeAction::default()
    }))
}

/// The span of `old` that differs from `new` (their common start and end left out, cut at
/// character boundaries) and what replaces it, so the edit keeps the editor's cursor and
/// folds outside the change.
pub(crate) fn changed_part<'n>(old: &str, new: &'n str) -> (Span, &'n str) {
    let mut start = old
        .bytes()
        .zip(new.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    while !old.is_char_boundary(start) {
        start -= 1;
    }
    let most = old.len().min(new.len()) - start;
    let mut end = old
        .bytes()
        .rev()
        .zip(new.bytes().rev())
        .take(most)
        .take_while(|(a, b)| a == b)
        .count();
    while !old.is_char_boundary(old.len() - end) || !new.is_char_boundary(new.len() - end) {
        end -= 1;
    }
    (
        Span::new(start, old.len() - end),
        &new[start..new.len() - end],
    )
}

fn workspace_edit(doc: &Document, edits: &[Edit]) -> WorkspaceEdit {
    let edits = edits
        .iter()
        .map(|edit| TextEdit {
            range: doc.range_of(edit.span),
            new_text: edit.replacement.clone(),
        })
        .collect();
    WorkspaceEdit {
        changes: Some(HashMap::from([(doc.uri.clone(), edits)])),
        ..WorkspaceEdit::default()
    }
}

/// "Add frontmatter skeleton": `name` set to the folder name and an empty `description` (which
/// its own rule then asks the author to fill), in the file's line-ending style.
fn frontmatter_skeleton(doc: &Document) -> Option<Fix> {
    let name = doc.skill_dir()?.file_name()?.to_str()?.to_string();
    let nl = if doc.text.contains("\r\n") {
        "\r\n"
    } else {
        "\n"
    };
    Some(Fix {
        title: "Add frontmatter skeleton (name, description)".to_string(),
        edits: vec![Edit {
            span: Span::empty(0),
            replacement: format!("---{nl}name: {name}{nl}description: {nl}---{nl}"),
        }],
    })
}

/// Whether two ranges share a position (touching counts: a cursor at a finding's end
/// still offers its fix).
fn overlaps(a: Range, b: Range) -> bool {
    a.start <= b.end && b.start <= a.end
}

#[cfg(test)]
mod tests {
    use super::*;
    use tower_lsp_server::ls_types::{Position, Uri};

    #[test]
    fn a_missing_frontmatter_gets_a_skeleton() {
        let dir = tempfile::tempdir().unwrap();
        let skill = dir.path().join("pdf-tools");
        std::fs::create_dir(&skill).unwrap();
        let path = skill.join("SKILL.md");
        let uri = Uri::from_file_path(&path).unwrap();
        let doc = Document::new(
            uri.clone(),
            path,
            DocumentKind::SkillMd,
            1,
            "# PDF\r\n".into(),
        );
        let everywhere = Range::new(Position::new(0, 0), Position::new(1, 0));
        let actions = code_actions(&doc, everywhere, None, &CheckOptions::default());
        let skeleton = actions
            .iter()
            .find_map(|a| match a {
                CodeActionOrCommand::CodeAction(a) if a.title.starts_with("Add frontmatter") => {
                    Some(a)
                }
                _ => None,
            })
            .unwrap_or_else(|| panic!("{actions:?}"));
        let edits = &skeleton.edit.as_ref().unwrap().changes.as_ref().unwrap()[&uri];
        assert_eq!(
            edits[0].new_text,
            "---\r\nname: pdf-tools\r\ndescription: \r\n---\r\n"
        );
    }

    #[test]
    fn the_edit_covers_only_the_changed_part() {
        fn cut(old: &str, new: &str) -> (String, String) {
            let (span, with) = changed_part(old, new);
            (old[span.start..span.end].to_string(), with.to_string())
        }
        assert_eq!(
            cut("name: Other\nx", "name: inv\nx"),
            ("Other".into(), "inv".into())
        );
        assert_eq!(cut("abc", "abc"), ("".into(), "".into()));
        assert_eq!(
            cut("tags: [a]\n", "tags:\n  - a\n"),
            (" [a]".into(), "\n  - a".into())
        );
        // the common end never overlaps the common start
        assert_eq!(cut("aa", "aaa"), ("".into(), "a".into()));
        // cut at character boundaries: é and è share their first byte
        assert_eq!(cut("café!", "cafè!"), ("é".into(), "è".into()));
        assert_eq!(cut("é", ""), ("é".into(), "".into()));
    }
}
