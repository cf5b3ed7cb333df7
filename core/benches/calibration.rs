//! Calibration of skillwatch's verdicts and intervals by simulation, longer than the unit
//! test (core/src/scoring/calibration.rs): the designs docs/scoring.md reports, 10,000
//! bootstrap resamples and sign-flip patterns as in production.
//!
//! `cargo bench -p skillwatch-core --bench calibration [-- --skills N --seed S --only BLOCK]`
//!
//! Prints one markdown table per block (BLOCK names one: `aa`, `drop`, `equivalence`, `plan`,
//! `suite`):
//! - `aa`: per design (cases x attempts), the share of A/A runs and comparisons given a
//!   verdict ("improves" or "regresses"; nominal at most 5%) with its 95% Wilson upper bound,
//!   for the t and the bootstrap interval, the share given "no change", the coverage of a known
//!   lift of 0.2 and the power to find it, with pass/fail outcomes only and with a second
//!   outcome metric;
//! - `drop`: skills that truly lower the pass rate by 0.2 (1.0 -> 0.8): how often each
//!   verdict is given;
//! - `equivalence`: where an A/A run can be called "no change", and the equivalence test's
//!   size at its margin (a true drop of exactly 0.05);
//! - `plan`: `plan` after a run without spread, and the power its suggested design has;
//! - `suite`: the pass-rate intervals' coverage at 3 attempts per case. The share of A/A
//!   runs of 87-case suites whose JUnit report fails is client-cli's `junit_aa` check (it
//!   needs the JUnit writer, which lives there).

use std::time::Instant;

use skillwatch_core::scoring::calibration::{
    CalibrationParams, CalibrationReport, Design, Outcomes, Rate, history_of, plan_check, simulate,
    simulate_scenario,
};

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

fn number(name: &str) -> Option<u64> {
    arg(name).map(|v| {
        v.parse()
            .unwrap_or_else(|_| panic!("{name} expects a number, found {v}"))
    })
}

const DESIGNS: [(usize, u32); 10] = [
    (2, 1),
    (3, 1),
    (5, 1),
    (5, 5),
    (6, 1),
    (8, 3),
    (10, 1),
    (10, 3),
    (20, 1),
    (20, 3),
];

fn pct(r: &Rate) -> String {
    format!("{:.1}%", r.rate() * 100.0)
}

fn with_upper(r: &Rate) -> String {
    format!("{:.1}% (≤ {:.1}%)", r.rate() * 100.0, r.upper() * 100.0)
}

/// A named part of the bench.
type Block = (&'static str, fn(&Settings));

struct Settings {
    skills: usize,
    seed: u64,
}

fn main() {
    let settings = Settings {
        skills: number("--skills").unwrap_or(2_000) as usize,
        seed: number("--seed").unwrap_or(20_261_120),
    };
    let only = arg("--only");
    println!(
        "skillwatch verdict calibration: {} simulated runs (and run pairs) per design and scenario, seed {}\n",
        settings.skills, settings.seed
    );
    let blocks: [Block; 5] = [
        ("aa", aa),
        ("drop", drop),
        ("equivalence", equivalence),
        ("plan", plan),
        ("suite", suite),
    ];
    for (name, block) in blocks {
        if only.as_deref().is_none_or(|o| o == name) {
            let start = Instant::now();
            block(&settings);
            eprintln!("{name}: {:.0} s", start.elapsed().as_secs_f64());
        }
    }
}

/// A/A and known-lift runs at the reported designs.
fn aa(s: &Settings) {
    println!(
        "## A/A and a known lift of 0.2\n\ndifficulty U(0.15, 0.65); 95% level; min effect 0.05\n"
    );
    let mut reports: Vec<(CalibrationReport, CalibrationReport)> = Vec::new();
    for (i, (cases, attempts)) in DESIGNS.into_iter().enumerate() {
        let params = CalibrationParams {
            skills: s.skills,
            design: Design { cases, attempts },
            process_metrics: true,
            seed: s.seed.wrapping_add(i as u64),
            ..CalibrationParams::default()
        };
        let with_checks = simulate(&params).expect("valid calibration settings");
        let pass_only = simulate(&CalibrationParams {
            outcomes: Outcomes::PassOnly,
            seed: params.seed.wrapping_add(1000),
            ..params
        })
        .expect("valid calibration settings");
        reports.push((with_checks, pass_only));
    }
    println!(
        "A/A (pass and a 4-check behavior_check): share of runs and comparisons given a verdict (Wilson 95% upper bound), and given 'no change'\n"
    );
    println!(
        "| design | run, t | run, bootstrap | compare, t | compare, bootstrap | run, pass/fail only, t | n too small | A/A 'no change' | ACES overall 'improves' |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for (r, p) in &reports {
        let d = r.params.design;
        println!(
            "| {}x{} | {} | {} | {} | {} | {} | {} | {} | {} |",
            d.cases,
            d.attempts,
            with_upper(&r.t.run_false_verdicts),
            with_upper(&r.bootstrap.run_false_verdicts),
            with_upper(&r.t.compare_false_verdicts),
            with_upper(&r.bootstrap.compare_false_verdicts),
            with_upper(&p.t.run_false_verdicts),
            pct(&r.too_small),
            pct(&r.t.run_no_change),
            pct(&r.aces_false_improves),
        );
    }
    println!(
        "\nKnown lift 0.2: coverage of the reported interval, and power (the share called 'improves'; for comparisons, a drop of 0.2 called 'regresses')\n"
    );
    println!(
        "| design | coverage, t | coverage, bootstrap | bootstrap offered | bootstrap coverage if it were | power run, pass/fail only | power run, pass + behavior_check | power compare (drop 0.2), pass + behavior_check |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for (r, p) in &reports {
        let d = r.params.design;
        println!(
            "| {}x{} | {} | {} | {} | {} | {} | {} | {} |",
            d.cases,
            d.attempts,
            pct(&r.t.coverage),
            pct(&r.bootstrap.coverage),
            if r.bootstrap_offered {
                "yes"
            } else {
                "no (t used)"
            },
            pct(&r.bootstrap_if_offered),
            pct(&p.t.run_power),
            pct(&r.t.run_power),
            pct(&r.t.compare_power),
        );
    }
    println!();
}

/// A true drop of 0.2 from a pass rate of 1.0: what each design calls it.
fn drop(s: &Settings) {
    println!(
        "## A true drop of 0.2 (every case 1.0 -> 0.8, pass/fail only)\n\nshare of runs per verdict, with 95% Wilson intervals\n"
    );
    println!("| design | no change | regresses | inconclusive | of which n too small |");
    println!("|---|---|---|---|---|");
    for (i, (cases, attempts)) in [(6, 1), (8, 1), (10, 1), (20, 1), (6, 3), (10, 3), (20, 3)]
        .into_iter()
        .enumerate()
    {
        let r = simulate_scenario(&CalibrationParams {
            skills: s.skills,
            design: Design { cases, attempts },
            outcomes: Outcomes::PassOnly,
            difficulty: (1.0, 1.0),
            effect: -0.2,
            seed: s.seed.wrapping_add(100 + i as u64),
            ..CalibrationParams::default()
        })
        .expect("valid settings");
        println!(
            "| {cases}x{attempts} | {} | {} | {} | {} |",
            r.no_change.with_interval(),
            r.regresses.with_interval(),
            r.inconclusive.with_interval(),
            pct(&r.too_small)
        );
    }
    println!();
}

/// Where "no change" can be shown, and how often it is wrongly shown at the margin.
fn equivalence(s: &Settings) {
    println!(
        "## 'No change': where an A/A run can show it, and the equivalence test's size at the margin\n"
    );
    println!("| scenario | design | A/A 'no change' | a true drop of 0.05 called 'no change' |");
    println!("|---|---|---|---|");
    let scenarios: [(&str, (f64, f64), Outcomes); 3] = [
        (
            "pass rate 0.95-1.0, pass/fail",
            (0.95, 1.0),
            Outcomes::PassOnly,
        ),
        (
            "pass rate 0.15-0.65, pass/fail",
            (0.15, 0.65),
            Outcomes::PassOnly,
        ),
        (
            "pass rate 0.15-0.65, pass + behavior_check",
            (0.15, 0.65),
            Outcomes::PassAndChecks,
        ),
    ];
    let designs = [(10, 3), (20, 3), (40, 3), (87, 3), (100, 5), (200, 10)];
    for (k, (name, difficulty, outcomes)) in scenarios.into_iter().enumerate() {
        for (i, (cases, attempts)) in designs.into_iter().enumerate() {
            let base = CalibrationParams {
                skills: (s.skills / 4).max(100),
                design: Design { cases, attempts },
                outcomes,
                difficulty,
                effect: 0.0,
                seed: s.seed.wrapping_add(200 + 10 * k as u64 + i as u64),
                ..CalibrationParams::default()
            };
            let aa = simulate_scenario(&base).expect("valid settings");
            let margin = simulate_scenario(&CalibrationParams {
                effect: -0.05,
                seed: base.seed.wrapping_add(7),
                ..base
            })
            .expect("valid settings");
            println!(
                "| {name} | {cases}x{attempts} | {} | {} |",
                aa.no_change.with_interval(),
                margin.no_change.with_interval()
            );
        }
    }
    println!();
}

/// `plan` after a run whose cases all moved alike, and the power of the design it suggests.
fn plan(s: &Settings) {
    println!(
        "## `plan` after a run without spread: the suggested design's stated and simulated power (1,000 runs each)\n"
    );
    println!(
        "| history (8 cases x 1) | truth simulated | attempts | cases suggested | stated power | simulated power |"
    );
    println!("|---|---|---|---|---|---|");
    let half: Vec<(bool, bool)> = (0..8).map(|i| (i < 4, i < 4)).collect();
    let all = vec![(true, true); 8];
    let all_passed = |truth: &'static str, difficulty: (f64, f64)| {
        (
            "every case passed on both sides",
            all.clone(),
            truth,
            difficulty,
            -0.1,
        )
    };
    // An all-pass history of 8 leaves every rate above about 0.7 plausible: the suggested
    // design's power is shown over a range of true rates, not at one.
    let cases = [
        (
            "4 passed and 4 failed on both sides",
            half,
            "pass rates U(0.25, 0.65), lift +0.1",
            (0.25, 0.65),
            0.1,
        ),
        all_passed("pass rates U(0.8, 1.0), drop 0.1", (0.8, 1.0)),
        all_passed("pass rates U(0.9, 1.0), drop 0.1", (0.9, 1.0)),
        all_passed("pass rates U(0.95, 1.0), drop 0.1", (0.95, 1.0)),
    ];
    for (i, (history, outcomes, truth, difficulty, effect)) in cases.into_iter().enumerate() {
        for attempts in [1, 3] {
            let check = plan_check(
                &history_of(&outcomes),
                attempts,
                &CalibrationParams {
                    skills: 1_000,
                    outcomes: Outcomes::PassOnly,
                    difficulty,
                    effect,
                    seed: s
                        .seed
                        .wrapping_add(300 + 10 * i as u64 + u64::from(attempts)),
                    ..CalibrationParams::default()
                },
            )
            .expect("valid settings");
            match check {
                Some(c) => println!(
                    "| {history} | {truth} | {attempts} | {} | {:.0}% | {} |",
                    c.cases,
                    c.stated_power * 100.0,
                    c.simulated.with_interval()
                ),
                None => println!("| {history} | {truth} | {attempts} | none | | |"),
            }
        }
    }
    println!();
}

/// The pass-rate intervals at 3 attempts per case. (Whether A/A runs of SkillsBench-sized
/// suites write a failing JUnit test case is measured through the JUnit writer itself, in
/// client-cli's `junit_aa` check, so this bench keeps no copy of the writer's rule.)
fn suite(s: &Settings) {
    println!(
        "## Pass-rate intervals at 3 attempts per case: coverage of the population pass rate (both arms; difficulty U(0.15, 0.65))\n"
    );
    println!("| design | clustered by case (reported) | Wilson over trials (before) |");
    println!("|---|---|---|");
    for (i, cases) in [6usize, 10, 20, 40, 87].into_iter().enumerate() {
        let r = simulate_scenario(&CalibrationParams {
            skills: s.skills,
            design: Design { cases, attempts: 3 },
            outcomes: Outcomes::PassOnly,
            effect: 0.2,
            seed: s.seed.wrapping_add(500 + i as u64),
            ..CalibrationParams::default()
        })
        .expect("valid settings");
        println!(
            "| {cases}x3 | {} | {} |",
            r.pass_rate_coverage.with_interval(),
            r.pooled_pass_rate_coverage.with_interval()
        );
    }
    println!();
}
