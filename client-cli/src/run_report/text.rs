//! The terminal summary of a run: per case baseline vs skill, then the headline.

use std::fmt::Write;

use skillwatch_daemon::runner::RunReport;

use super::{exclusions, harness_line, passes, score, tally_line, trouble};
use crate::cmd::history_db::{interval, rate, signed};

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
        r.run.status,
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
    let _ = writeln!(
        o,
        "{:<width$}  {:<22}  {:<22}  {:>7}  invoked",
        "case", "baseline (pass, score)", "with skill (pass, score)", "lift"
    );
    for c in &r.cases {
        let side = |s| format!("{} {}", passes(s), score(s));
        let notes = [trouble(&c.baseline), trouble(&c.skill)]
            .into_iter()
            .filter(|t| !t.is_empty())
            .collect::<Vec<_>>()
            .join("; ");
        let _ = writeln!(
            o,
            "{:<width$}  {:<22}  {:<22}  {:>7}  {}/{}{}",
            shorten(&c.case, width),
            side(&c.baseline),
            side(&c.skill),
            signed(c.lift),
            c.skill.invoked,
            c.skill.trials,
            if notes.is_empty() {
                String::new()
            } else {
                format!("  ({notes})")
            }
        );
    }
    o.push('\n');
    headline(&mut o, r);
    o
}

fn headline(o: &mut String, r: &RunReport) {
    match &r.summary {
        Some(s) => {
            let h = &s.headline;
            let band = h.band.map_or(String::new(), |b| {
                format!("  (ACES band: {})", format!("{b:?}").to_lowercase())
            });
            let _ = writeln!(
                o,
                "Skill Lift   {} {}{band}",
                signed(h.lift),
                interval(h.interval.as_ref())
            );
            if let Some(p) = &h.p_value {
                let _ = writeln!(o, "p-value      {:.4} (sign-flip permutation)", p.p);
            }
            let _ = writeln!(
                o,
                "Utility U    {}",
                h.utility.map_or("—".into(), |u| format!("{u:.1} / 100"))
            );
            let _ = writeln!(o, "Invoked      {}", rate(h.invocation_rate.as_ref()));
            if h.excluded.total() > 0 {
                let _ = writeln!(o, "Excluded     {}", exclusions(&h.excluded));
            }
        }
        None => {
            let why = r.summary_error.as_deref().unwrap_or("no scored pairs");
            let _ = writeln!(o, "Skill Lift   not measured ({why})");
        }
    }
    if let Some(c) = &r.compat {
        let _ = writeln!(
            o,
            "Compat       improvement score {:+.3}: {}",
            c.overall_improvement_score, c.reason
        );
    }
    let _ = writeln!(o, "Verdict      {}", r.verdict.word());
    if let Some(dir) = &r.workspaces {
        let _ = writeln!(o, "Workspaces   kept in {}", dir.display());
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
