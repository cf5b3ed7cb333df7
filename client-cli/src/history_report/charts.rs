//! The page's charts as inline SVG: a forest plot of the latest lift per case and overall,
//! the lift over time per model with interval bands and regressions marked, a skill x model
//! heatmap, and pass rates baseline against with-skill. Each chart is marks on linear
//! scales; every mark carries a `<title>` (the browser's tooltip) with its numbers, so the
//! picture can always be read back as figures.

use maud::{Markup, PreEscaped, html};
use skillwatch_core::scoring::case_test::CaseFinding;
use skillwatch_core::scoring::{Interval, Verdict};
use skillwatch_daemon::store::time::format_rfc3339;

use super::{LatestRun, ModelKey, Report, SkillReport};
use crate::cmd::history_db::{interval as interval_text, signed};

/// Width of every chart in SVG units (the page scales it to the column).
const WIDTH: f64 = 760.0;
/// Left margin holding row labels.
const LABEL: f64 = 190.0;
/// Right margin.
const RIGHT: f64 = 24.0;

/// Colour-blind safe series colours (Okabe and Ito), by the series' place in the report.
const PALETTE: [&str; 7] = [
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
];

/// The colour of a series: stable across the page's charts.
pub fn color(report: &Report, key: &ModelKey) -> &'static str {
    let i = report.columns.iter().position(|k| k == key).unwrap_or(0);
    PALETTE[i % PALETTE.len()]
}

/// A linear map from a data range onto a pixel range.
#[derive(Clone, Copy)]
struct Scale {
    d0: f64,
    d1: f64,
    r0: f64,
    r1: f64,
}

impl Scale {
    fn new((d0, d1): (f64, f64), (r0, r1): (f64, f64)) -> Scale {
        let d1 = if (d1 - d0).abs() < f64::EPSILON {
            d0 + 1.0
        } else {
            d1
        };
        Scale { d0, d1, r0, r1 }
    }

    fn at(self, v: f64) -> f64 {
        let t = ((v - self.d0) / (self.d1 - self.d0)).clamp(0.0, 1.0);
        self.r0 + t * (self.r1 - self.r0)
    }
}

/// A coordinate with one decimal: enough for a screen, small in the file.
fn n(v: f64) -> String {
    format!("{v:.1}")
}

/// Vertical grid lines with their labels at `y_label`, for the lift axis.
fn lift_axis(x: Scale, top: f64, bottom: f64, ticks: &[f64]) -> Markup {
    html! {
        @for t in ticks {
            line class=(if *t == 0.0 { "zero" } else { "grid" })
                x1=(n(x.at(*t))) x2=(n(x.at(*t))) y1=(n(top)) y2=(n(bottom)) {}
            text.tick x=(n(x.at(*t))) y=(n(bottom + 14.0)) text-anchor="middle" { (format!("{t:+.1}")) }
        }
    }
}

/// A case's dot with a tooltip; a whisker for its interval and a ring in the verdict's colour
/// only when its exact test shows it worse or better (otherwise the lift of a few trials is
/// reported, not judged).
fn dot(
    x: Scale,
    y: f64,
    value: f64,
    ci: Option<&Interval>,
    color: &str,
    finding: CaseFinding,
    tip: &str,
) -> Markup {
    let ring = match finding {
        CaseFinding::Worse => Some(verdict_fill(Verdict::Regresses)),
        CaseFinding::Better => Some(verdict_fill(Verdict::Improves)),
        CaseFinding::NotShown => None,
    };
    html! {
        g {
            title { (tip) }
            @if let Some(ci) = ci {
                line.whisker x1=(n(x.at(ci.low))) x2=(n(x.at(ci.high))) y1=(n(y)) y2=(n(y)) stroke=(color) {}
            }
            @if let Some(ring) = ring {
                circle cx=(n(x.at(value))) cy=(n(y)) r="6.5" fill="none" stroke=(ring) stroke-width="2" {}
            }
            circle cx=(n(x.at(value))) cy=(n(y)) r="4" fill=(color) {}
        }
    }
}

/// The forest plot: per case and overall, the latest lift of every model with its interval.
pub fn forest(report: &Report, skill: &SkillReport) -> Markup {
    let mut cases: Vec<&str> = Vec::new();
    for run in &skill.latest {
        for c in &run.cases {
            if !cases.contains(&c.id.as_str()) {
                cases.push(&c.id);
            }
        }
    }
    let models = skill.latest.len().max(1) as f64;
    let row = 10.0 + 9.0 * models;
    let top = 10.0;
    let rows = cases.len() as f64 + 1.0;
    let bottom = top + row * rows;
    let x = Scale::new((-1.0, 1.0), (LABEL, WIDTH - RIGHT));
    let label = format!(
        "Forest plot for {}: latest outcome lift per case and overall, per model, with intervals",
        skill.name
    );
    html! {
        svg.chart viewBox=(format!("0 0 {WIDTH} {}", n(bottom + 24.0))) role="img" aria-label=(label) {
            title { (label) }
            (lift_axis(x, top, bottom, &[-1.0, -0.5, 0.0, 0.5, 1.0]))
            @for (i, case) in cases.iter().enumerate() {
                @let y0 = top + row * i as f64;
                text.label x=(n(LABEL - 8.0)) y=(n(y0 + row / 2.0 + 4.0)) text-anchor="end" { (clip(case, 26)) }
                @for (m, run) in skill.latest.iter().enumerate() {
                    @let tested = run.cases.iter().filter(|c| c.test.is_some()).count();
                    @if let Some(c) = run.cases.iter().find(|c| c.id == *case) {
                        @if let Some(v) = c.lift {
                            (dot(x, y0 + 9.0 + 9.0 * m as f64, v, c.shown_interval(), color(report, &run.key()),
                                c.finding(),
                                &format!("{}: {case} lift {}{} · {}", run.key().label(), signed(Some(v)),
                                    c.shown_interval().map_or_else(String::new, |ci| format!(" {}", interval_text(Some(ci)))),
                                    c.counts_and_finding(tested))))
                        }
                    }
                }
            }
            @let y0 = top + row * cases.len() as f64;
            line.sep x1=(n(LABEL - 180.0)) x2=(n(WIDTH - RIGHT)) y1=(n(y0)) y2=(n(y0)) {}
            text.label.strong x=(n(LABEL - 8.0)) y=(n(y0 + row / 2.0 + 4.0)) text-anchor="end" { "overall" }
            @for (m, run) in skill.latest.iter().enumerate() {
                @let o = run.lift.headline.profile(run.lift.run.profile());
                @if let Some(v) = o.lift {
                    @let y = y0 + 9.0 + 9.0 * m as f64;
                    g {
                        title { (run.key().label()) ": lift " (signed(Some(v))) " " (interval_text(o.interval.as_ref())) " · " (o.verdict.label()) }
                        @if let Some(ci) = &o.interval {
                            line.whisker.thick x1=(n(x.at(ci.low))) x2=(n(x.at(ci.high))) y1=(n(y)) y2=(n(y)) stroke=(color(report, &run.key())) {}
                        }
                        (diamond(x.at(v), y, 6.0, color(report, &run.key())))
                    }
                }
            }
        }
    }
}

fn diamond(cx: f64, cy: f64, r: f64, color: &str) -> Markup {
    html! {
        polygon points=(format!("{},{} {},{} {},{} {},{}", n(cx), n(cy - r), n(cx + r), n(cy), n(cx), n(cy + r), n(cx - r), n(cy)))
            fill=(color) {}
    }
}

/// The lift of every completed run over time, one line per model with its interval band;
/// regressions against the run before are marked.
pub fn timeline(report: &Report, skill: &SkillReport) -> Markup {
    let points = skill.series.iter().flat_map(|s| &s.points);
    let (mut t0, mut t1) = (i64::MAX, i64::MIN);
    let (mut lo, mut hi) = (0.0f64, 0.0f64);
    for p in points {
        t0 = t0.min(p.at_ms);
        t1 = t1.max(p.at_ms);
        if let Some(ci) = &p.verdict.interval {
            lo = lo.min(ci.low);
            hi = hi.max(ci.high);
        }
        if let Some(e) = p.verdict.estimate {
            lo = lo.min(e);
            hi = hi.max(e);
        }
    }
    if t0 > t1 {
        return html! { p.muted { "No completed run yet." } };
    }
    let pad = (t1 - t0).max(1) as f64 * 0.04;
    let (lo, hi) = ((lo - 0.1).max(-1.0), (hi + 0.1).min(1.0));
    let (top, bottom, left) = (12.0, 212.0, 60.0);
    let x = Scale::new((t0 as f64 - pad, t1 as f64 + pad), (left, WIDTH - RIGHT));
    let y = Scale::new((lo, hi), (bottom, top));
    let label = format!(
        "Lift of {} over time per model, with interval bands; regressions marked",
        skill.name
    );
    let y_ticks: Vec<f64> = [-1.0, -0.5, 0.0, 0.5, 1.0]
        .into_iter()
        .filter(|t| *t >= lo - 1e-9 && *t <= hi + 1e-9)
        .collect();
    let x_ticks: Vec<i64> = if t0 == t1 {
        vec![t0]
    } else {
        (0..4).map(|i| t0 + (t1 - t0) * i / 3).collect()
    };
    html! {
        svg.chart viewBox=(format!("0 0 {WIDTH} {}", n(bottom + 28.0))) role="img" aria-label=(label) {
            title { (label) }
            @for t in &y_ticks {
                line class=(if *t == 0.0 { "zero" } else { "grid" }) x1=(n(left)) x2=(n(WIDTH - RIGHT)) y1=(n(y.at(*t))) y2=(n(y.at(*t))) {}
                text.tick x=(n(left - 6.0)) y=(n(y.at(*t) + 4.0)) text-anchor="end" { (format!("{t:+.1}")) }
            }
            @for (t, label) in x_ticks.iter().zip(tick_labels(&x_ticks)) {
                text.tick x=(n(x.at(*t as f64))) y=(n(bottom + 18.0)) text-anchor="middle" { (label) }
            }
            @for s in &skill.series {
                @let c = color(report, &s.key);
                @let band: Vec<(f64, f64, f64)> = s.points.iter()
                    .filter_map(|p| p.verdict.interval.map(|ci| (x.at(p.at_ms as f64), y.at(ci.low), y.at(ci.high))))
                    .collect();
                @if band.len() >= 2 {
                    polygon.band fill=(c) points=(band_points(&band)) {}
                }
                @let line: Vec<String> = s.points.iter()
                    .filter_map(|p| p.verdict.estimate.map(|e| format!("{},{}", n(x.at(p.at_ms as f64)), n(y.at(e)))))
                    .collect();
                @if line.len() >= 2 {
                    polyline.series stroke=(c) points=(line.join(" ")) {}
                }
                @for p in &s.points {
                    @if let Some(e) = p.verdict.estimate {
                        g {
                            title { "run " (p.run) " · " (s.key.label()) " · skill " (p.version) " · " (date(p.at_ms)) ": " (p.verdict.reason) }
                            @if let Some(ci) = &p.verdict.interval {
                                line.whisker x1=(n(x.at(p.at_ms as f64))) x2=(n(x.at(p.at_ms as f64))) y1=(n(y.at(ci.low))) y2=(n(y.at(ci.high))) stroke=(c) {}
                            }
                            circle cx=(n(x.at(p.at_ms as f64))) cy=(n(y.at(e))) r="4" fill=(decided_fill(p.verdict.verdict, c)) stroke=(c) stroke-width="2" {}
                        }
                    }
                }
            }
            @for r in &skill.regressions {
                @let (cx, cy) = (x.at(r.at_ms as f64), y.at(r.lift.unwrap_or(lo)));
                g.regression {
                    title { "regression: " (r.reason) }
                    polygon points=(format!("{},{} {},{} {},{}", n(cx - 7.0), n(cy - 16.0), n(cx + 7.0), n(cy - 16.0), n(cx), n(cy - 6.0))) {}
                }
            }
        }
    }
}

/// Filled for a decided verdict, hollow when the data could not tell.
fn decided_fill(v: Verdict, color: &str) -> &str {
    match v {
        Verdict::Improves | Verdict::Regresses | Verdict::NoChange => color,
        Verdict::Inconclusive | Verdict::NotMeasured => "#ffffff",
    }
}

/// The band's outline: along the upper bounds, back along the lower ones.
fn band_points(band: &[(f64, f64, f64)]) -> String {
    let upper = band
        .iter()
        .map(|(x, _, hi)| format!("{},{}", n(*x), n(*hi)));
    let lower = band
        .iter()
        .rev()
        .map(|(x, lo, _)| format!("{},{}", n(*x), n(*lo)));
    upper.chain(lower).collect::<Vec<_>>().join(" ")
}

fn date(ms: i64) -> String {
    format_rfc3339(ms).chars().take(10).collect()
}

/// Labels for time ticks, as coarse as keeps distinct ticks apart: the date when the ticks
/// fall on different days, else the date with hours and minutes, else the time to the second
/// (runs minutes apart all fell on one date and read as one tick repeated).
fn tick_labels(ticks: &[i64]) -> Vec<String> {
    let formats: [fn(&str) -> String; 3] = [
        |t| t[..10].to_string(),
        |t| format!("{} {}", &t[5..10], &t[11..16]),
        |t| format!("{} {}", &t[5..10], &t[11..19]),
    ];
    let stamps: Vec<String> = ticks.iter().map(|t| format_rfc3339(*t)).collect();
    let mut distinct = ticks.to_vec();
    distinct.dedup();
    formats
        .iter()
        .map(|f| stamps.iter().map(|s| f(s)).collect::<Vec<String>>())
        .find(|labels| {
            let mut unique = labels.clone();
            unique.dedup();
            unique.len() == distinct.len()
        })
        .unwrap_or_else(|| stamps.iter().map(|s| formats[2](s)).collect())
}

/// The skill x model heatmap of the latest outcome lift. A cell's colour is its verdict's
/// (the verdict rule of docs/scoring.md), never the estimate's: a +0.500 that is
/// "inconclusive" must not look like an improvement. Each cell holds the lift, the verdict,
/// and on a third line the verdict's qualifier ("n too small"), so no text is wider than its
/// cell (`tests/tests/report_html.rs` measures it in Chromium).
pub fn heatmap(report: &Report) -> Markup {
    let (cell_w, cell_h, head) = (HEAT_CELL_W, 56.0, 46.0);
    let width = LABEL + cell_w * report.columns.len() as f64 + RIGHT;
    let height = head + cell_h * report.skills.len() as f64 + 8.0;
    let label = "Heatmap of the latest outcome lift per skill and model, coloured by verdict";
    html! {
        svg.chart.heatmap viewBox=(format!("0 0 {} {}", n(width), n(height))) style=(format!("max-width:{}px", n(width))) role="img" aria-label=(label) {
            title { (label) }
            @for (j, key) in report.columns.iter().enumerate() {
                @let cx = LABEL + cell_w * (j as f64 + 0.5);
                g.head {
                    title { (key.label()) }
                    text.label x=(n(cx)) y="18" text-anchor="middle" { (clip(&key.model, 18)) }
                    text.tick x=(n(cx)) y="34" text-anchor="middle" { (clip(&key.harness, 20)) }
                }
            }
            @for (i, skill) in report.skills.iter().enumerate() {
                @let y0 = head + cell_h * i as f64;
                text.label x=(n(LABEL - 8.0)) y=(n(y0 + cell_h / 2.0 + 4.0)) text-anchor="end" { (clip(&skill.name, 26)) }
                @for (j, key) in report.columns.iter().enumerate() {
                    @let x0 = LABEL + cell_w * j as f64;
                    @let run = skill.latest.iter().find(|r| r.key() == *key);
                    @let o = run.map(|r| r.lift.headline.profile(r.lift.run.profile()));
                    @let verdict = o.map_or(Verdict::NotMeasured, |o| o.verdict.verdict);
                    @let ink = verdict_ink(verdict);
                    @let cx = n(x0 + cell_w / 2.0);
                    g.cell data-verdict=(verdict.code()) {
                        title { (skill.name) " on " (key.label()) ": "
                            (o.map_or_else(|| "no completed run".to_string(), |o| o.verdict.reason.clone())) }
                        rect x=(n(x0 + 1.0)) y=(n(y0 + 1.0)) width=(n(cell_w - 2.0)) height=(n(cell_h - 2.0))
                            fill=(o.map_or("#f4f4f4", |_| verdict_fill(verdict))) {}
                        text.cell x=(cx) y=(n(y0 + 18.0)) text-anchor="middle" fill=(ink) { (o.map_or("—".into(), |o| signed(o.lift))) }
                        @if let Some(o) = o {
                            text.small x=(cx) y=(n(y0 + 33.0)) text-anchor="middle" fill=(ink) { (o.verdict.verdict.as_str()) }
                            @if o.verdict.needed_cases.is_some() {
                                text.small x=(cx) y=(n(y0 + 46.0)) text-anchor="middle" fill=(ink) { "(n too small)" }
                            }
                        }
                    }
                }
            }
        }
        ul.legend {
            @for v in [Verdict::Improves, Verdict::Regresses, Verdict::NoChange, Verdict::Inconclusive, Verdict::NotMeasured] {
                li { span.swatch style=(format!("background:{};border:1px solid #ccc", verdict_fill(v))) {} (v.as_str()) }
            }
        }
    }
}

/// Width of a heatmap cell in SVG units.
const HEAT_CELL_W: f64 = 128.0;

/// A verdict's colour: blue for improves, red for regresses (the palette's ends), a pale
/// green for no change, light grey for inconclusive and not measured.
pub fn verdict_fill(v: Verdict) -> &'static str {
    match v {
        Verdict::Improves => "#2166ac",
        Verdict::Regresses => "#b2182b",
        Verdict::NoChange => "#d5e8d4",
        Verdict::Inconclusive => "#e6e6e6",
        Verdict::NotMeasured => "#f4f4f4",
    }
}

/// Text colour readable on [`verdict_fill`].
fn verdict_ink(v: Verdict) -> &'static str {
    match v {
        Verdict::Improves | Verdict::Regresses => "#ffffff",
        _ => "#111111",
    }
}

/// Pass rates baseline against with-skill per model, with their Wilson intervals.
pub fn pass_rates(report: &Report, latest: &[LatestRun]) -> Markup {
    let rows: Vec<(&LatestRun, &Interval, &Interval)> = latest
        .iter()
        .filter_map(|r| {
            let h = &r.lift.headline;
            Some((
                r,
                h.baseline_pass_rate.as_ref()?,
                h.skill_pass_rate.as_ref()?,
            ))
        })
        .collect();
    if rows.is_empty() {
        return html! { p.muted { "No graded pass/fail outcomes in the latest runs." } };
    }
    let (top, row) = (10.0, 30.0);
    let bottom = top + row * rows.len() as f64;
    let x = Scale::new((0.0, 1.0), (LABEL, WIDTH - RIGHT));
    let label = "Pass rates, baseline against with-skill, per model, with Wilson intervals";
    html! {
        svg.chart viewBox=(format!("0 0 {WIDTH} {}", n(bottom + 24.0))) role="img" aria-label=(label) {
            title { (label) }
            @for t in [0.0, 0.25, 0.5, 0.75, 1.0] {
                line.grid x1=(n(x.at(t))) x2=(n(x.at(t))) y1=(n(top)) y2=(n(bottom)) {}
                text.tick x=(n(x.at(t))) y=(n(bottom + 14.0)) text-anchor="middle" { (format!("{:.0}%", t * 100.0)) }
            }
            @for (i, (run, base, with)) in rows.iter().enumerate() {
                @let y = top + row * (i as f64 + 0.5);
                @let c = color(report, &run.key());
                text.label x=(n(LABEL - 8.0)) y=(n(y + 4.0)) text-anchor="end" { (clip(&run.key().label(), 28)) }
                line.link x1=(n(x.at(base.estimate))) x2=(n(x.at(with.estimate))) y1=(n(y)) y2=(n(y)) {}
                g {
                    title { "baseline " (rate(base)) }
                    line.whisker x1=(n(x.at(base.low))) x2=(n(x.at(base.high))) y1=(n(y - 5.0)) y2=(n(y - 5.0)) stroke="#777777" {}
                    rect x=(n(x.at(base.estimate) - 4.0)) y=(n(y - 9.0)) width="8" height="8" fill="#777777" {}
                }
                g {
                    title { "with skill " (rate(with)) }
                    line.whisker x1=(n(x.at(with.low))) x2=(n(x.at(with.high))) y1=(n(y + 5.0)) y2=(n(y + 5.0)) stroke=(c) {}
                    circle cx=(n(x.at(with.estimate))) cy=(n(y + 5.0)) r="4.5" fill=(c) {}
                }
            }
        }
    }
}

fn rate(ci: &Interval) -> String {
    crate::cmd::history_db::rate(Some(ci))
}

/// A legend of the series colours.
pub fn legend(report: &Report, keys: &[ModelKey]) -> Markup {
    html! {
        ul.legend {
            @for k in keys {
                li { span.swatch style=(format!("background:{}", color(report, k))) {} (k.label()) }
            }
        }
    }
}

/// `text` cut to `chars` characters with an ellipsis (the tooltip keeps the whole).
fn clip(text: &str, chars: usize) -> String {
    if text.chars().count() <= chars {
        text.to_string()
    } else {
        let kept: String = text.chars().take(chars.saturating_sub(1)).collect();
        format!("{kept}…")
    }
}

/// Inline CSS for the charts' classes (part of the page's one stylesheet).
pub const CSS: PreEscaped<&str> = PreEscaped(
    "svg.chart{width:100%;height:auto;display:block;margin:.5rem 0 1rem;font:12px system-ui,sans-serif}
svg .grid{stroke:#e3e3e3}svg .zero{stroke:#555;stroke-dasharray:3 3}svg .sep{stroke:#bbb}
svg .tick{fill:#666;font-size:11px}svg .label{fill:#222}svg .strong{font-weight:600}
svg .cell{font-weight:600}svg .small{font-size:10.5px}svg .whisker{stroke-width:2}svg .thick{stroke-width:3}
svg .band{fill-opacity:.15;stroke:none}svg .series{fill:none;stroke-width:2}
svg .link{stroke:#bbb;stroke-width:1.5}svg .regression polygon{fill:#c0392b}",
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scales_map_and_clamp() {
        let s = Scale::new((-1.0, 1.0), (0.0, 200.0));
        assert_eq!(s.at(0.0), 100.0);
        assert_eq!(s.at(2.0), 200.0);
        // A range of one value does not divide by zero.
        assert_eq!(Scale::new((3.0, 3.0), (0.0, 10.0)).at(3.0), 0.0);
    }

    #[test]
    fn verdicts_have_their_own_colours() {
        let all = [
            Verdict::Improves,
            Verdict::Regresses,
            Verdict::NoChange,
            Verdict::Inconclusive,
        ];
        for (i, a) in all.iter().enumerate() {
            for b in &all[i + 1..] {
                assert_ne!(verdict_fill(*a), verdict_fill(*b));
            }
        }
    }

    #[test]
    fn tick_labels_keep_close_runs_apart() {
        let day = 86_400_000;
        let t0 = 1_795_000_000_000; // a whole second
        assert_eq!(
            tick_labels(&[t0, t0 + 3 * day]),
            vec![date(t0), date(t0 + 3 * day)]
        );
        // Runs minutes apart: hours and minutes, all different.
        let minutes: Vec<i64> = (0..4).map(|i| t0 + i * 5 * 60_000).collect();
        let labels = tick_labels(&minutes);
        let mut unique = labels.clone();
        unique.dedup();
        assert_eq!(unique.len(), 4, "{labels:?}");
        assert!(labels[0].contains(':'), "{labels:?}");
        // Seconds apart: to the second.
        let seconds: Vec<i64> = (0..4).map(|i| t0 + i * 7_000).collect();
        let labels = tick_labels(&seconds);
        assert_eq!(labels[1].len(), "11-20 10:00:07".len(), "{labels:?}");
        assert_ne!(labels[0], labels[1]);
    }
}
