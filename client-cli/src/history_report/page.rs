//! The document: one HTML file with its stylesheet inline and no script, so it opens from
//! disk, reads without JavaScript, and loads nothing (its Content-Security-Policy forbids
//! every fetch, so an agent output quoted in a trajectory cannot make the page load anything
//! either). The drill-down is `<details>` elements, which need no script.

use maud::{DOCTYPE, Markup, PreEscaped, html};
use skillwatch_core::plural::count;
use skillwatch_daemon::store::time::format_rfc3339;
use skillwatch_daemon::store::{Judgment, StoredJudgment, Verdict as JudgeVerdict};

use super::charts;
use super::trajectory;
use super::{CaseView, LatestRun, Report, SkillReport, TrialView};
use crate::cmd::history_db::{interval, rate, short_hash, signed};
use skillwatch_core::scoring::case_test::CaseFinding;

/// The page as text.
pub fn render(report: &Report) -> String {
    let page = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'";
                title { "skillwatch report" }
                style { (CSS) (charts::CSS) }
            }
            body {
                header {
                    h1 { "skillwatch report" }
                    p.muted {
                        (count(report.skills.len(), "skill"))
                        " from " code { (report.db) } " · made " (format_rfc3339(report.generated_ms))
                        " · lifts are the outcome lift (with-skill minus baseline, metrics on [0, 1]) unless a run was made with " code { "--scoring-profile aces" } "; verdicts follow docs/scoring.md"
                    }
                    @if report.omitted.trajectories + report.omitted.outputs > 0 {
                        p.muted { (count(report.omitted.trajectories, "trajectory")) " and " (count(report.omitted.outputs, "output"))
                            " were left out to keep this file small (" code { "--detail-mb" } " raises the limit)." }
                    }
                    @if report.omitted.trials > 0 {
                        p.muted { (count(report.omitted.trials, "trial")) " past " (trajectory::MAX_ATTEMPTS)
                            " attempts per case are counted in the charts and tallies but not detailed." }
                    }
                }
                nav {
                    ul {
                        li { a href="#overview" { "Skills × models" } }
                        @for (i, s) in report.skills.iter().enumerate() {
                            li { a href=(format!("#{}", anchor(i))) { (s.name) } }
                        }
                    }
                }
                main {
                    section #overview {
                        h2 { "Skills × models" }
                        @if report.columns.is_empty() {
                            p.muted { "No completed run in this history yet: " code { "skillwatch run SKILL" } " makes one." }
                        } @else {
                            (charts::heatmap(report))
                        }
                    }
                    @for (i, skill) in report.skills.iter().enumerate() {
                        (skill_section(report, skill, &anchor(i)))
                    }
                }
            }
        }
    };
    page.into_string()
}

fn anchor(i: usize) -> String {
    format!("skill-{i}")
}

fn skill_section(report: &Report, skill: &SkillReport, id: &str) -> Markup {
    let keys: Vec<_> = skill.latest.iter().map(LatestRun::key).collect();
    html! {
        section.skill id=(id) {
            h2 { (skill.name) }
            (probe_runs(skill))
            (failed_runs(skill))
            @if skill.latest.is_empty() {
                p.muted { "No completed run of this skill yet." }
            } @else {
                (latest_table(skill))
                h3 { "Latest lift per case" }
                (charts::legend(report, &keys))
                (charts::forest(report, skill))
                h3 { "Lift over time" }
                (charts::timeline(report, skill))
                (regression_list(skill))
                h3 { "Pass rates, baseline against with skill" }
                (charts::pass_rates(report, &skill.latest))
                (security(skill))
                h3 { "Cases and trials" }
                @for run in &skill.latest {
                    (run_drilldown(run))
                }
            }
        }
    }
}

fn latest_table(skill: &SkillReport) -> Markup {
    html! {
        table {
            thead { tr {
                th { "model" } th { "harness" } th.num { "lift" } th { "interval" } th { "verdict" }
                th { "pass rate baseline → skill" } th { "skill read" } th.num { "utility U" } th { "runs" } th { "last run" }
            } }
            tbody {
                @for run in &skill.latest {
                    @let h = &run.lift.headline;
                    @let o = h.profile(run.lift.run.profile());
                    tr {
                        td { (run.lift.run.model) } td { (run.lift.run.harness) }
                        td.num { (signed(o.lift)) } td { (interval(o.interval.as_ref())) }
                        td class=(verdict_class(o.verdict.verdict)) title=(o.verdict.reason) { (o.verdict.label()) }
                        td { (rate(h.baseline_pass_rate.as_ref())) " → " (rate(h.skill_pass_rate.as_ref())) }
                        td { (rate(h.invocation_rate.as_ref())) }
                        td.num { (h.utility.map_or("—".into(), |u| format!("{u:.1}"))) }
                        td { (run.lift.completed_runs) }
                        td { "run " (run.lift.run.id) " · " (format_rfc3339(run.lift.run.started_ms)) " · skill " (short_hash(&run.lift.run.skill_hash)) }
                    }
                    @if let Some(arm) = &h.plugin {
                        @let p = arm.profile(run.lift.run.profile());
                        // the plugin arm of the same run, against the same baseline
                        tr.plugin-arm {
                            td colspan="2" { "plugin arm (all its skills)" }
                            td.num { (signed(p.lift)) } td { (interval(p.interval.as_ref())) }
                            td class=(verdict_class(p.verdict.verdict)) title=(p.verdict.reason) { (p.verdict.label()) }
                            td { (rate(h.baseline_pass_rate.as_ref())) " → " (rate(arm.pass_rate.as_ref())) }
                            td colspan="4" {}
                        }
                    }
                }
            }
        }
    }
}

fn verdict_class(v: skillwatch_core::scoring::Verdict) -> &'static str {
    use skillwatch_core::scoring::Verdict;
    match v {
        Verdict::Improves => "good",
        Verdict::Regresses => "bad",
        _ => "muted",
    }
}

fn regression_list(skill: &SkillReport) -> Markup {
    html! {
        @if skill.regressions.is_empty() {
            p.muted { "No run's lift fell significantly against the run before it." }
        } @else {
            ul.regressions {
                @for r in &skill.regressions {
                    li.bad { "▼ " (r.reason) }
                }
            }
        }
    }
}

fn security(skill: &SkillReport) -> Markup {
    let with: Vec<_> = skill
        .latest
        .iter()
        .filter_map(|r| r.lift.headline.security.as_ref().map(|s| (r, s)))
        .collect();
    html! {
        @if !with.is_empty() {
            h3 { "Security (SkillTester S)" }
            table {
                thead { tr { th { "model" } th.num { "S" } th { "status" } th { "groups (passed / probes)" } } }
                tbody {
                    @for (run, s) in &with {
                        tr {
                            td { (run.key().label()) }
                            td.num { (format!("{:.1}", s.score)) }
                            td { (format!("{:?}", s.status).to_lowercase()) }
                            td { @for g in &s.groups { (format!("{:?}", g.group)) " " (g.passed) "/" (g.total) " " } }
                        }
                    }
                }
            }
        }
    }
}

/// The newest probe run per model: S, status, groups, and each failed probe with its
/// evidence (stored redacted: canary values are `[canary:NAME]`).
/// The models whose newest run failed, said before any older lift on them.
fn failed_runs(skill: &SkillReport) -> Markup {
    html! {
        @if !skill.failed.is_empty() {
            ul.failed {
                @for f in &skill.failed {
                    li {
                        strong { "Run " (f.run.id) " failed" }
                        " on " (f.run.model) " (" (f.run.harness) "), "
                        (format_rfc3339(f.run.started_ms)) ": " (f.errors) " of "
                        (count(f.trials, "trial")) " errored, so no case was scored on both sides; "
                        code { "skillwatch show " (f.run.id) } " says why."
                    }
                }
            }
        }
    }
}

fn probe_runs(skill: &SkillReport) -> Markup {
    html! {
        @if !skill.probes.is_empty() {
            h3 { "Security probes (skillwatch probe)" }
            table.probes {
                thead { tr { th { "model" } th { "probe run" } th.num { "S" } th { "status" } th { "groups (passed / probes)" } th { "failed" } } }
                tbody {
                    @for p in &skill.probes {
                        tr {
                            td { (p.run.model) " (" (p.run.harness) ")" }
                            td { (p.run.id) " · " (format_rfc3339(p.run.started_ms)) }
                            @if let Some(s) = &p.security {
                                td.num { (format!("{:.1}", s.score)) }
                                td { (s.status.label()) }
                                td { @for g in &s.groups { (g.group.as_str()) " " (g.passed) "/" (g.total) " " } }
                            } @else {
                                td.num { "—" }
                                td { "not measured" }
                                td { }
                            }
                            td { (failed_probes(p).join(", ")) }
                        }
                    }
                }
            }
            @for p in &skill.probes {
                @for o in p.run.outcomes.iter().filter(|o| !o.findings.is_empty()) {
                    details.probe {
                        summary { code { (o.probe) } " failed on " (p.run.model) " · " (o.group.as_str()) " · " (o.owasp.join(", ")) }
                        ul {
                            @for f in &o.findings {
                                li { (format!("{:?}", f.kind)) " at " (f.location) ": " code { (f.evidence) } }
                            }
                        }
                    }
                }
            }
        }
    }
}

fn failed_probes(p: &skillwatch_daemon::probe::ProbeReport) -> Vec<&str> {
    p.run
        .outcomes
        .iter()
        .filter(|o| o.outcome == skillwatch_daemon::store::ProbeOutcome::Failed)
        .map(|o| o.probe.as_str())
        .collect()
}

fn run_drilldown(run: &LatestRun) -> Markup {
    let info = &run.lift.run;
    html! {
        details.run {
            summary {
                strong { (info.model) } " (" (info.harness) ") · run " (info.id) " · "
                (count(run.cases.len(), "case")) " · " (count(info.trial_count, "trial"))
            }
            @let tested = run.cases.iter().filter(|c| c.test.is_some()).count();
            @for case in &run.cases {
                (case_drilldown(case, info.id.0, tested))
            }
        }
    }
}

fn case_drilldown(case: &CaseView, run: i64, tested: usize) -> Markup {
    let class = match case.finding() {
        CaseFinding::Worse => "bad",
        CaseFinding::Better => "good",
        CaseFinding::NotShown => "",
    };
    html! {
        details.case {
            summary {
                code { (case.id) } " · " span class=(class) { "lift " (signed(case.lift)) }
                @if let Some(ci) = case.shown_interval() { " " (interval(Some(ci))) }
                " · " (case.counts_and_finding(tested))
            }
            @for j in &case.pairwise {
                (pairwise(j))
            }
            @for t in &case.trials {
                (trial_drilldown(t, run))
            }
            @if case.hidden > 0 {
                p.muted { (count(case.hidden, "more trial")) " (attempts past " (trajectory::MAX_ATTEMPTS) ") are counted above, not shown; "
                    code { "skillwatch history SKILL --trials" } " lists them." }
            }
        }
    }
}

fn pairwise(j: &StoredJudgment) -> Markup {
    html! {
        div.judgment {
            span.tag { "pairwise judge · attempt " (j.attempt) } " " (judgment(&j.judgment))
        }
    }
}

fn judgment(j: &Judgment) -> Markup {
    let verdict = match &j.verdict {
        JudgeVerdict::Score { score } => format!("score {score}"),
        JudgeVerdict::Preference { winner, magnitude } => format!("prefers {winner} ({magnitude})"),
        JudgeVerdict::Failed { error } => format!("judge failed: {error}"),
    };
    html! {
        (j.criterion.as_deref().unwrap_or("overall")) ": " strong { (verdict) } " · " (j.judge_model)
        @if let Some(r) = &j.reasoning { pre.reasoning { (trajectory::cut(r, trajectory::TEXT_CHARS)) } }
    }
}

fn trial_drilldown(view: &TrialView, run: i64) -> Markup {
    let t = &view.trial;
    let outcome = match t.passed {
        Some(true) => "passed",
        Some(false) => "failed",
        None => "ungraded",
    };
    let metrics: Vec<String> = t
        .metrics
        .iter()
        .map(|(m, v)| format!("{m} {v:.2}"))
        .collect();
    html! {
        details.trial {
            summary {
                span class=(format!("cond {}", t.condition)) { (t.condition) } " #" (t.attempt) " · " (t.status) " · "
                span class=(if t.passed == Some(false) { "bad" } else { "" }) { (outcome) }
                @if !metrics.is_empty() { " · " (metrics.join(", ")) }
                @if let Some(ms) = t.wall_ms { " · " (format!("{:.1} s", ms as f64 / 1000.0)) }
                @if let (Some(i), Some(o)) = (t.tokens.input, t.tokens.output) { " · " (i) "+" (o) " tokens" }
            }
            @if let Some(e) = &t.error_message { p.bad { "error: " (e) } }
            @if !view.checks.is_empty() {
                ul.checks {
                    @for c in &view.checks {
                        li class=(if c.passed { "good" } else { "bad" }) {
                            (if c.passed { "✓ " } else { "✗ " }) (c.description)
                            @if let Some(m) = &c.message { span.muted { " — " (m) } }
                        }
                    }
                }
            }
            @for j in &view.judgments { div.judgment { span.tag { "judge" } " " (judgment(j)) } }
            @if let Some(o) = &view.output {
                details { summary { "output" } pre { (o) } }
            } @else if view.output_omitted {
                p.muted { "output left out to keep this file small" }
            }
            details { summary { "trajectory" } (trajectory::markup(&view.trajectory, run, t.id.0)) }
        }
    }
}

const CSS: PreEscaped<&str> = PreEscaped(
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;color:#1d1d1f;margin:0 auto;max-width:1040px;padding:1rem 1.5rem 3rem}
h1{font-size:1.6rem;margin:.5rem 0}h2{border-bottom:1px solid #ddd;padding-bottom:.2rem;margin-top:2.2rem}h3{font-size:1.05rem;margin:1.4rem 0 .3rem}
nav ul{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:.3rem 1rem}a{color:#0057a8}
table{border-collapse:collapse;width:100%;font-size:13px}th,td{border-bottom:1px solid #e6e6e6;padding:.3rem .45rem;text-align:left;vertical-align:top}
th{background:#f6f6f6}.num{text-align:right;font-variant-numeric:tabular-nums}
.muted{color:#6b6b6b}.good{color:#1a7f37}.bad{color:#b42318}
code{font:12px ui-monospace,SFMono-Regular,Menlo,monospace}
pre{white-space:pre-wrap;word-break:break-word;background:#f7f7f9;border:1px solid #ececf0;padding:.4rem .55rem;margin:.25rem 0;font:12px ui-monospace,Menlo,monospace;max-height:24rem;overflow:auto}
details{margin:.25rem 0 .25rem .2rem}details>summary{cursor:pointer}details.run{border:1px solid #e3e3e3;border-radius:6px;padding:.4rem .6rem;margin:.5rem 0}
details.case,details.trial{margin-left:1rem}
ul.legend{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:.2rem 1.2rem;margin:.2rem 0}
.swatch{display:inline-block;width:.8rem;height:.8rem;border-radius:2px;margin-right:.35rem;vertical-align:-1px}
.tag{font-size:11px;text-transform:uppercase;letter-spacing:.03em;color:#555;background:#eef;border-radius:3px;padding:0 .3rem}
.cond.skill{color:#0057a8;font-weight:600}.cond.baseline{color:#555;font-weight:600}
ol.steps{padding-left:1.2rem}li.step{margin:.35rem 0}li.step.user .tag{background:#efe}li.step.system .tag{background:#eee}
ul.checks{margin:.2rem 0;padding-left:1.2rem}.judgment{margin:.25rem 0}ul.regressions{padding-left:1rem;list-style:none}
",
);
