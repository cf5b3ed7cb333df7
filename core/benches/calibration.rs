//! Calibration of skillwatch's verdicts and intervals by simulation, longer than the unit
//! test (core/src/scoring/calibration.rs): the designs docs/scoring.md reports, 10,000
//! bootstrap resamples and sign-flip patterns as in production.
//!
//! `cargo bench -p skillwatch-core --bench calibration [-- --skills N --seed S]`
//!
//! Prints one markdown table per block. Per design (cases x attempts): the rate at which A/A
//! runs and A/A comparisons get a verdict ("improves" or "regresses"; nominal at most 5%) with
//! its 95% Wilson upper bound, for the t and the bootstrap interval; the coverage of a known
//! lift of 0.2 by the reported interval (nominal 95%); the power to call that lift (runs) and
//! a drop of it (comparisons); and the share of runs too small for any verdict.

use std::time::Instant;

use skillwatch_core::scoring::calibration::{
    CalibrationParams, CalibrationReport, Design, Rate, simulate,
};

fn arg(name: &str) -> Option<u64> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(|v| {
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

fn main() {
    let skills = arg("--skills").unwrap_or(2_000) as usize;
    let seed = arg("--seed").unwrap_or(20_261_120);
    println!(
        "skillwatch verdict calibration: {skills} simulated runs (and run pairs) per design and scenario, seed {seed}"
    );
    println!(
        "known lift 0.2; difficulty U(0.15, 0.65); pass/fail plus a 4-check behavior_check per trial; 95% level; min effect 0.05\n"
    );
    let mut reports: Vec<(CalibrationReport, f64)> = Vec::new();
    for (i, (cases, attempts)) in DESIGNS.into_iter().enumerate() {
        let params = CalibrationParams {
            skills,
            design: Design { cases, attempts },
            process_metrics: true,
            seed: seed.wrapping_add(i as u64),
            ..CalibrationParams::default()
        };
        let start = Instant::now();
        let r = simulate(&params).expect("valid calibration settings");
        let secs = start.elapsed().as_secs_f64();
        eprintln!("{cases}x{attempts}: {secs:.0} s");
        reports.push((r, secs));
    }
    println!("A/A: share of runs and comparisons given a verdict (Wilson 95% upper bound)\n");
    println!(
        "| design | run, t | run, bootstrap | compare, t | compare, bootstrap | n too small | ACES overall 'improves' |"
    );
    println!("|---|---|---|---|---|---|---|");
    for (r, _) in &reports {
        let d = r.params.design;
        println!(
            "| {}x{} | {} | {} | {} | {} | {} | {} |",
            d.cases,
            d.attempts,
            with_upper(&r.t.run_false_verdicts),
            with_upper(&r.bootstrap.run_false_verdicts),
            with_upper(&r.t.compare_false_verdicts),
            with_upper(&r.bootstrap.compare_false_verdicts),
            pct(&r.too_small),
            pct(&r.aces_false_improves),
        );
    }
    println!("\nKnown lift 0.2: coverage of the reported interval, and power\n");
    println!(
        "| design | coverage, t | coverage, bootstrap | bootstrap offered | bootstrap coverage if it were | power run, t | power run, bootstrap | power compare (drop 0.2), t | seconds |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for (r, secs) in &reports {
        let d = r.params.design;
        println!(
            "| {}x{} | {} | {} | {} | {} | {} | {} | {} | {:.0} |",
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
            pct(&r.t.run_power),
            pct(&r.bootstrap.run_power),
            pct(&r.t.compare_power),
            secs
        );
    }
}
