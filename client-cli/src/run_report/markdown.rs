//! Markdown for a pull request comment or `$GITHUB_STEP_SUMMARY`: the headline first, then the
//! per-case table, then per-metric details folded away.

use std::fmt::Write;

use skillwatch_daemon::runner::RunReport;

use super::{
    beside, case_test, compat_lines, exclusions, harness_line, other_profile, pass_at_k_lines,
    passes, per_case_line, plugin_line, score, tally_line, trouble, unread_note, utility,
};
use crate::cmd::history_db::{design, interval, signed};
use skillwatch_core::scoring::case_test::CaseFinding;

/// The run as markdown.
pub fn markdown(r: &RunReport) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "## skillwatch: `{}` on `{}`\n",
        escape(&r.run.skill),
        escape(&r.run.model)
    );
    let _ = writeln!(o, "{}\n", headline(r));
    case_table(&mut o, r);
    if let Some(line) = per_case_line(r) {
        let _ = writeln!(o, "\nPer case: {line} (p is Holm-adjusted).");
    }
    o.push('\n');
    metrics(&mut o, r);
    let _ = writeln!(
        o,
        "<sub>run {} · {} · {} · judge: {} · skill {} · {}</sub>",
        r.run.id,
        harness_line(r),
        tally_line(r),
        r.run.judge_model.as_deref().unwrap_or("none"),
        &r.run.skill_hash.chars().take(15).collect::<String>(),
        r.run.tool_version
    );
    o
}

/// The per-case table; with a plugin arm, its side and lift in two more columns.
fn case_table(o: &mut String, r: &RunReport) {
    let plugin = r.cases.iter().any(|c| c.plugin.is_some());
    let (head, rule) = match plugin {
        true => (" plugin arm | plugin lift |", "---|---:|"),
        false => ("", ""),
    };
    let _ = writeln!(
        o,
        "| case | baseline | with skill | lift | exact test |{head} skill read |"
    );
    let _ = writeln!(o, "|---|---|---|---:|---|{rule}---:|");
    let cell = |s| {
        let t = trouble(s);
        let t = if t.is_empty() { t } else { format!(" ({t})") };
        format!("{} · {}{t}", passes(s), score(s))
    };
    for c in &r.cases {
        let arm = match plugin {
            true => format!(
                " {} | {} |",
                c.plugin.as_ref().map_or_else(|| "—".to_owned(), cell),
                signed(c.plugin_lift)
            ),
            false => String::new(),
        };
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {} |{arm} {}/{} |",
            escape(&c.case),
            cell(&c.baseline),
            cell(&c.skill),
            signed(c.lift),
            finding_cell(r, &c.case),
            c.skill.invoked,
            c.skill.trials
        );
    }
}

/// What the case's own exact test shows, with its Holm-adjusted p.
fn finding_cell(r: &RunReport, case: &str) -> String {
    let Some(test) = case_test(r, case) else {
        return "—".into();
    };
    let p = test.adjusted_p;
    match test.finding {
        CaseFinding::Worse => format!("**worse**, p = {p:.3}"),
        CaseFinding::Better => format!("better, p = {p:.3}"),
        CaseFinding::NotShown => format!("not shown, p = {p:.3}"),
    }
}

fn headline(r: &RunReport) -> String {
    let Some(s) = &r.summary else {
        return format!(
            "**Skill Lift not measured** ({}) · verdict **{}**",
            r.summary_error.as_deref().unwrap_or("no scored pairs"),
            r.verdict.label()
        );
    };
    let h = &s.headline;
    let p = h.profile(r.profile);
    let mut line = format!(
        "**{} {}** {} · verdict **{}** · {}",
        r.profile.label(),
        signed(p.lift),
        interval(p.interval.as_ref()),
        r.verdict.label(),
        design(p.cases, h.attempts),
    );
    let _ = write!(line, "\n\n{}", r.verdict.reason);
    if let Some(plugin) = plugin_line(r) {
        let _ = write!(line, "\n\n**Plugin Lift** {plugin}");
    }
    if let Some(note) = unread_note(r) {
        let _ = write!(line, "\n\n{note}");
    }
    let _ = write!(
        line,
        "\n\nBeside it: {} · utility U {}",
        beside(h),
        utility(h)
    );
    if let Some(other) = other_profile(r) {
        let _ = write!(line, "\n\n{other}");
    }
    for l in pass_at_k_lines(h) {
        let _ = write!(line, "\n\n{l}");
    }
    if p.excluded.total() > 0 {
        let _ = write!(line, " · {}", exclusions(&p.excluded));
    }
    for l in compat_lines(r) {
        let _ = write!(line, "\n\n{}", l.trim());
    }
    line
}

fn metrics(o: &mut String, r: &RunReport) {
    let Some(s) = &r.summary else { return };
    if s.lift.metrics.is_empty() {
        return;
    }
    let _ = writeln!(o, "<details><summary>Lift per metric</summary>\n");
    let _ = writeln!(o, "| metric | baseline | with skill | lift | interval |");
    let _ = writeln!(o, "|---|---:|---:|---:|---|");
    for m in &s.lift.metrics {
        let _ = writeln!(
            o,
            "| {} | {:.2} | {:.2} | {} | {} |",
            m.metric,
            m.baseline_mean,
            m.skill_mean,
            signed(Some(m.lift)),
            interval(m.summary.t_interval.as_ref())
        );
    }
    let _ = writeln!(o, "\n</details>\n");
}

/// Table cells cannot hold `|` or newlines.
pub(super) fn escape(s: &str) -> String {
    s.replace('|', "\\|").replace(['\n', '\r'], " ")
}
