//! Fixes: which ones bulk fixing may apply, and how it applies them together and round by
//! round.
//!
//! Invariant: bulk fixing never loses the author's text ([`keep`]). `check --fix`, `check
//! --diff` and the editor's fix-all all go through [`fix_rounds`], which takes a fix only if
//! the text it leaves still says everything the text before said, alone and together with
//! the other fixes of its round.
//! - A fix that would replace what the author wrote (`name: pdf-tool` set to the folder's
//!   `pdf-tools`) is the author's call: the editor still offers it as a quick fix to choose,
//!   bulk fixing never applies it, and the finding says so ([`annotate`]).
//! - Two fixes that rewrite the same text differently conflict: bulk fixing applies neither,
//!   and both findings say why.

mod keep;

pub use keep::Shape;

use super::{Diagnostic, Edit, Fix};
use keep::Authored;

/// Say in the message of each of `diagnostics` (findings in `text`, a file of `shape`) whose
/// fix bulk fixing will leave alone why it does: the fix loses text, or conflicts with
/// another.
pub(crate) fn annotate(shape: Shape, text: &str, diagnostics: &mut [Diagnostic]) {
    if diagnostics.iter().all(|d| d.fix.is_none()) {
        return;
    }
    let before = Authored::of(shape, text);
    let fixes: Vec<Option<&Fix>> = diagnostics.iter().map(|d| d.fix.as_ref()).collect();
    let notes: Vec<Option<String>> = fixes
        .iter()
        .enumerate()
        .map(|(i, fix)| {
            let fix = (*fix)?;
            if let Some(j) = conflicting(&fixes, i) {
                let other = &diagnostics[j];
                let title = other.fix.as_ref().map_or("", |f| f.title.as_str());
                return Some(format!(
                    "{}'s fix `{title}` rewrites the same text differently",
                    other.rule
                ));
            }
            let after = fix.apply(text)?;
            let lost = before.kept_in(&Authored::of(shape, &after)).err()?;
            Some(format!("its fix would replace {lost}"))
        })
        .collect();
    for (d, note) in diagnostics.iter_mut().zip(notes) {
        if let Some(note) = note {
            d.message
                .push_str(&format!(" (`--fix` leaves this to you: {note})"));
        }
    }
}

/// Whether `after` still says everything `before` (a file of `shape`) said, by the rule
/// bulk fixing obeys ([`keep`]); if not, a short quote of the first text lost.
pub fn text_kept(shape: Shape, before: &str, after: &str) -> Result<(), String> {
    Authored::of(shape, before).kept_in(&Authored::of(shape, after))
}

/// Whether applying `fix` to `text` (a file of `shape`) keeps all the author wrote: what
/// bulk fixing asks of each fix. The editor marks such quick fixes preferred.
pub fn keeps_text(shape: Shape, text: &str, fix: &Fix) -> bool {
    fix.apply(text)
        .is_some_and(|after| text_kept(shape, text, &after).is_ok())
}

/// The index of another fix of `fixes` that replaces the same text as fix `i` with a
/// different text. (Fixes that merely touch, one inside the other, and insertions at one
/// place are applied in successive rounds.)
fn conflicting(fixes: &[Option<&Fix>], i: usize) -> Option<usize> {
    let a = fixes[i]?;
    fixes.iter().enumerate().position(|(j, b)| {
        j != i
            && b.is_some_and(|b| {
                a.edits.iter().any(|x| {
                    !x.span.is_empty()
                        && b.edits
                            .iter()
                            .any(|y| x.span == y.span && x.replacement != y.replacement)
                })
            })
    })
}

/// Apply as many of the fixes of `diagnostics` (findings in `text`) together as can be: in
/// order, each fix that `keeps` the author's text, conflicts with no other, and touches
/// none taken before it, as long as the result still keeps the text. Two rules often
/// propose the same repair (SW106 and SW108 both set `name`): a fix equal to one taken is
/// skipped, not counted. Returns the new text and the findings whose fixes were taken,
/// `None` when none was. The fixes left out for touching a taken one may apply once the
/// text is checked again (their spans were computed for the old text).
fn apply_fixes<'d>(
    text: &str,
    diagnostics: &'d [Diagnostic],
    keeps: impl Fn(&str) -> bool,
) -> Option<(String, Vec<&'d Diagnostic>)> {
    let fixes: Vec<Option<&Fix>> = diagnostics.iter().map(|d| d.fix.as_ref()).collect();
    let mut apart: Vec<(&Diagnostic, &Fix)> = Vec::new();
    for (i, d) in diagnostics.iter().enumerate() {
        let Some(fix) = fixes[i] else { continue };
        let overlaps = |e: &Edit| {
            apart.iter().flat_map(|(_, t)| &t.edits).any(|t| {
                (e.span.start < t.span.end && t.span.start < e.span.end) || e.span == t.span
            })
        };
        let repeated = apart.iter().any(|(_, t)| t.edits == fix.edits);
        if repeated || fix.edits.iter().any(overlaps) || conflicting(&fixes, i).is_some() {
            continue;
        }
        if fix.apply(text).is_some_and(|alone| keeps(&alone)) {
            apart.push((d, fix));
        }
    }
    let together = combined(text, &apart)?;
    if keeps(&together) {
        return Some((together, apart.into_iter().map(|(d, _)| d).collect()));
    }
    // Each fix keeps the text alone, but together some do not: take them one at a time,
    // each only if the result still keeps everything.
    let mut taken = Vec::new();
    let mut result = None;
    for pair in apart {
        taken.push(pair);
        match combined(text, &taken) {
            Some(new) if keeps(&new) => result = Some(new),
            _ => {
                taken.pop();
            }
        }
    }
    Some((result?, taken.into_iter().map(|(d, _)| d).collect()))
}

/// `text` with the edits of every fix of `taken` applied; None when there is none.
fn combined(text: &str, taken: &[(&Diagnostic, &Fix)]) -> Option<String> {
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
    all.apply(text)
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
/// editor's fix-all both go through here, so they fix the same way. `shape` says what the
/// text is, so that each round keeps its author's text ([`keep`]).
pub fn fix_rounds(
    shape: Shape,
    text: &str,
    findings: Vec<Diagnostic>,
    mut recheck: impl FnMut(&str) -> Vec<Diagnostic>,
) -> Option<(Vec<FixRound>, String)> {
    let mut rounds = Vec::new();
    let mut text = text.to_owned();
    let mut findings = findings;
    while rounds.len() < MAX_FIX_ROUNDS {
        let before = Authored::of(shape, &text);
        let keeps = |after: &str| before.kept_in(&Authored::of(shape, after)).is_ok();
        let Some((new, taken)) = apply_fixes(&text, &findings, keeps) else {
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

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::checks::Severity;
    use crate::text::Span;

    fn sample() -> Diagnostic {
        Diagnostic {
            rule: "SW102",
            severity: Severity::Error,
            path: PathBuf::from("a/SKILL.md"),
            span: Span::new(4, 9),
            message: "m".into(),
            fix: None,
        }
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
        let (text, taken) = apply_fixes("abc name xyz", &findings, |_| true).unwrap();
        let positions: Vec<usize> = taken
            .iter()
            .map(|t| findings.iter().position(|f| std::ptr::eq(f, *t)).unwrap())
            .collect();
        assert_eq!(
            (text.as_str(), positions),
            ("Abc NAMEme !xyz", vec![0, 1, 4])
        );
        assert_eq!(
            apply_fixes("abc", &[with_fix(replace(5, 6, ""))], |_| true),
            None
        );
        assert_eq!(apply_fixes("abc", &[], |_| true), None);
        // a finding without a fix is passed over
        let unfixable = Diagnostic {
            fix: None,
            ..sample()
        };
        assert_eq!(apply_fixes("abc", &[unfixable], |_| true), None);
    }

    #[test]
    fn rounds_go_on_while_the_recheck_finds_fixes_and_stop_at_the_limit() {
        // each `-` becomes `+` one per round: the recheck finds the next `-`
        let next = |text: &str| -> Vec<Diagnostic> {
            text.find('-')
                .map(|i| with_fix(replace(i, i + 1, "+")))
                .into_iter()
                .collect()
        };
        let (rounds, text) = fix_rounds(Shape::Plain, "x-x-", next("x-x-"), next).unwrap();
        assert_eq!(text, "x+x+");
        let seen: Vec<(&str, usize)> = rounds
            .iter()
            .map(|r| {
                (
                    r.text.as_str(),
                    r.taken[0].fix.as_ref().unwrap().edits[0].span.start,
                )
            })
            .collect();
        assert_eq!(seen, [("x-x-", 1), ("x+x-", 3)]);
        assert!(fix_rounds(Shape::Plain, "x+x+", next("x+x+"), next).is_none());
        // a repair that never settles stops after MAX_FIX_ROUNDS
        let flip = |text: &str| {
            vec![with_fix(replace(
                0,
                1,
                if text.starts_with('-') { "+" } else { "-" },
            ))]
        };
        let (rounds, _) = fix_rounds(Shape::Plain, "-", flip("-"), flip).unwrap();
        assert_eq!(rounds.len(), MAX_FIX_ROUNDS);
    }

    #[test]
    fn a_round_never_loses_words_even_when_each_fix_alone_would_not() {
        // each fix is fine alone, the two together are not (as `keeps` says): only the
        // first is taken, the second waits for the next round
        let keeps = |t: &str| !(t.contains('X') && t.contains('Y'));
        let findings = [with_fix(replace(0, 1, "X")), with_fix(replace(2, 3, "Y"))];
        let (text, taken) = apply_fixes("a b c", &findings, keeps).unwrap();
        assert_eq!((text.as_str(), taken.len()), ("X b c", 1));
        // a round whose every fix drops a word takes nothing
        let dropping = [with_fix(replace(0, 10, "alpha"))];
        assert!(
            fix_rounds(Shape::Plain, "alpha beta", dropping.to_vec(), |_| Vec::new(
            ))
            .is_none()
        );
    }

    #[test]
    fn lossy_and_conflicting_fixes_are_left_to_the_author_with_the_reason() {
        let text = "---\nname: pdf-tools\n---\nBody\n";
        let mut findings = vec![
            with_fix(replace(10, 19, "pdf")),
            Diagnostic {
                rule: "SW116",
                ..with_fix(replace(4, 8, "naam"))
            },
            with_fix(replace(4, 8, "nom")),
            with_fix(replace(10, 19, "pdf-tools-v2")),
        ];
        // the quick fixes stay (the editor offers them), each saying why --fix leaves it
        annotate(Shape::SkillMd, text, &mut findings);
        assert!(findings.iter().all(|f| f.fix.is_some()));
        let notes: Vec<&str> = findings
            .iter()
            .map(|f| f.message.strip_prefix("m").unwrap())
            .collect();
        assert_eq!(
            notes,
            [
                " (`--fix` leaves this to you: SW102's fix `10..19` rewrites the same text differently)",
                " (`--fix` leaves this to you: SW102's fix `4..8` rewrites the same text differently)",
                " (`--fix` leaves this to you: SW116's fix `4..8` rewrites the same text differently)",
                " (`--fix` leaves this to you: SW102's fix `10..19` rewrites the same text differently)",
            ]
        );
        let mut lossy = vec![with_fix(replace(10, 19, "pdf"))];
        annotate(Shape::SkillMd, text, &mut lossy);
        assert_eq!(
            lossy[0].message,
            "m (`--fix` leaves this to you: its fix would replace `pdf-tools`)"
        );
        assert!(!keeps_text(
            Shape::SkillMd,
            text,
            lossy[0].fix.as_ref().unwrap()
        ));
        // bulk fixing takes none of them; the same fix from two rules is no conflict
        assert!(fix_rounds(Shape::SkillMd, text, findings, |_| Vec::new()).is_none());
        let twice = vec![
            with_fix(replace(4, 8, "nom")),
            with_fix(replace(4, 8, "nom")),
        ];
        let (rounds, fixed) = fix_rounds(Shape::SkillMd, text, twice, |_| Vec::new()).unwrap();
        assert_eq!(
            (rounds[0].taken.len(), fixed.as_str()),
            (1, "---\nnom: pdf-tools\n---\nBody\n")
        );
    }
}
