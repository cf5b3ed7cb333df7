//! The terminal summary of a run: per case baseline vs skill, then the headline.

use std::fmt::Write;

use skillwatch_core::scoring::ScoringProfile;
use skillwatch_core::scoring::stats::PermutationMethod;
use skillwatch_daemon::runner::{CaseRow, RunReport};

use super::{
    beside, budget_lines, compat_lines, exclusions, harness_line, metric_names, other_profile,
    pass_at_k_lines, passes, per_case_line, plugin_line, score, status_word, tally_line, trouble,
    unread_note, utility,
};
use crate::cmd::history_db::{design, interval, signed};

/// The summary table and headline, as printed by `skillwatch run`.
pub fn text(r: &RunReport) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "{} on {} ({}) — run {}, {}, {:.1} s",
        r.run.skill,
        r.run.model,
        harness_line(r),
        r.run.id,
        status_word(r.run.status, r.stop.as_ref()),
        r.wall_ms as f64 / 1000.0
    );
    let _ = writeln!(o, "{}\n", tally_line(r));
    let width = r
        .cases
        .iter()
        .map(|c| c.case.chars().count())
        .max()
        .unwrap_or(4)
        .clamp(4, 40);
    let plugin = r.cases.iter().any(|c| c.plugin.is_some());
    let mut head = format!(
        "{:<width$}  {:<22}  {:<22}  {:>7}",
        "case", "baseline (pass, score)", "with skill (pass, score)", "lift"
    );
    if plugin {
        head.push_str(&format!(
            "  {:<22}  {:>7}",
            "plugin (pass, score)", "p. lift"
        ));
    }
    let _ = writeln!(o, "{head}  skill read");
    for c in &r.cases {
        let _ = writeln!(o, "{}", case_row(c, width, plugin));
    }
    o.push('\n');
    headline(&mut o, r);
    o
}

/// One case's row: both sides, the lift, with a plugin arm its side and lift, how often the
/// skill was read, and what went wrong.
fn case_row(c: &CaseRow, width: usize, plugin: bool) -> String {
    let side = |s| format!("{} {}", passes(s), score(s));
    let mut row = format!(
        "{:<width$}  {:<22}  {:<22}  {:>7}",
        shorten(&c.case, width),
        side(&c.baseline),
        side(&c.skill),
        signed(c.lift)
    );
    if plugin {
        let arm = c.plugin.as_ref().map_or_else(|| "—".to_owned(), side);
        row.push_str(&format!("  {arm:<22}  {:>7}", signed(c.plugin_lift)));
    }
    let notes = [Some(&c.baseline), Some(&c.skill), c.plugin.as_ref()]
        .into_iter()
        .flatten()
        .map(trouble)
        .filter(|t| !t.is_empty())
        .collect::<Vec<_>>()
        .join("; ");
    row.push_str(&format!("  {}/{}", c.skill.invoked, c.skill.trials));
    if !notes.is_empty() {
        row.push_str(&format!("  ({notes})"));
    }
    row
}

fn headline(o: &mut String, r: &RunReport) {
    match &r.summary {
        Some(s) => {
            let h = &s.headline;
            let p = h.profile(r.profile);
            let _ = writeln!(
                o,
                "{:<12} {} {}  ({})",
                label(r.profile),
                signed(p.lift),
                interval(p.interval.as_ref()),
                metric_names(p)
            );
            let _ = writeln!(o, "Design       {}", design(p.cases, h.attempts));
            if let Some(pv) = &p.p_value {
                let how = match pv.method {
                    PermutationMethod::ExactSignFlip { .. } => "exact sign-flip permutation",
                    PermutationMethod::MonteCarloSignFlip { .. } => {
                        "Monte-Carlo sign-flip permutation"
                    }
                };
                let _ = writeln!(o, "p-value      {:.4} ({how})", pv.p);
            }
            let _ = writeln!(o, "Beside it    {}", beside(h));
            if let Some(line) = per_case_line(r) {
                let _ = writeln!(o, "Per case     {line}");
            }
            if let Some(other) = other_profile(r) {
                let _ = writeln!(o, "{other}");
            }
            for line in pass_at_k_lines(h) {
                let _ = writeln!(o, "{line}");
            }
            // a run that measured nothing has no utility to show (its trials all errored)
            if r.run.status == skillwatch_daemon::store::RunStatus::Failed {
                let _ = writeln!(o, "Utility U    — (no case was scored on both sides)");
            } else {
                let _ = writeln!(o, "Utility U    {}", utility(h));
            }
            if p.excluded.total() > 0 {
                let _ = writeln!(o, "Excluded     {}", exclusions(&p.excluded));
            }
        }
        None => {
            let why = r.summary_error.as_deref().unwrap_or("no scored pairs");
            let _ = writeln!(o, "Skill Lift   not measured ({why})");
        }
    }
    for line in compat_lines(r) {
        let _ = writeln!(o, "{line}");
    }
    let _ = writeln!(o, "Verdict      {}", r.verdict.reason);
    if let Some(line) = plugin_line(r) {
        let _ = writeln!(o, "Plugin Lift  {line}");
    }
    for line in budget_lines(r.stop.as_ref(), &r.spent) {
        let _ = writeln!(o, "{line}");
    }
    if let Some(note) = unread_note(r) {
        let _ = writeln!(o, "Note         {note}");
    }
    if let Some(dir) = &r.workspaces {
        let _ = writeln!(o, "Workspaces   kept in {}", dir.display());
    }
}

fn label(profile: ScoringProfile) -> &'static str {
    match profile {
        ScoringProfile::Outcome => "Skill Lift",
        ScoringProfile::Aces => "ACES overall",
    }
}

fn shorten(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        return s.to_owned();
    }
    let mut out: String = s.chars().take(width.saturating_sub(1)).collect();
    out.push('…');
    out
}
