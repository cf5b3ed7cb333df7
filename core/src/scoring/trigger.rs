//! Trigger rates: from each trial's decision (which skill the agent picked first, or none) to
//! the per-query and overall rates `skillwatch trigger` reports, each a Wilson interval (a
//! rate near 0 or 1 is the usual case here, where the normal approximation leaves [0, 1]).
//!
//! - trigger rate of a query: trials where the agent picked the skill / decided trials;
//! - recall: the same over every trial of the positive queries;
//! - false-trigger rate: over every trial of the negative and near-miss queries (near misses
//!   also alone, since they are where a too-broad description shows);
//! - picked instead: for each other skill, how many trials picked it first.
//!
//! A trial whose decision could not be seen (the agent failed to start, timed out before any
//! action) is counted apart and left out of every rate, never scored as "not triggered".
//! Trials are pooled across queries, so with several runs per query the overall intervals
//! treat runs of one query as independent: the per-query rates show when they are not.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::rate_difference::{Better, Counts, PairedQuery, RateChange, rate_change};
use super::stats::{Interval, wilson_interval};
use super::verdict::{Verdict, VerdictParams};
use crate::evalspec::{TriggerKind, TriggerQuery};
use crate::trajectory::Decision;

/// The interval level of every rate.
pub const TRIGGER_LEVEL: f64 = 0.95;

/// One trial's result as the rates need it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TriggerTrial {
    /// Index of the query.
    pub query: usize,
    /// What the agent did first; `None` when that could not be seen.
    pub decision: Option<Decision>,
    /// Prompt plus output tokens the trial cost, as the harness reported them.
    pub tokens: u64,
    /// Model requests the trial made (agent steps).
    pub turns: u32,
    /// Wall-clock time of the agent.
    pub wall_ms: u64,
    /// Whether the agent was stopped once its decision was visible.
    pub stopped_early: bool,
}

/// One query's rates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueryRate {
    /// The query.
    pub query: TriggerQuery,
    /// Trials where the agent picked the skill.
    pub triggered: u64,
    /// Trials whose decision was seen.
    pub decided: u64,
    /// Trials whose decision could not be seen.
    pub undecided: u64,
    /// The trigger rate with its interval; `None` with no decided trial.
    pub rate: Option<Interval>,
    /// Other skills picked first, with how often.
    pub picked_instead: BTreeMap<String, u64>,
    /// Whether the query's expectation held in every decided trial.
    pub as_expected: bool,
}

/// A rate over pooled trials.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PooledRate {
    /// Trials counted as hits (triggered).
    pub hits: u64,
    /// Decided trials.
    pub trials: u64,
    /// The rate with its interval; `None` with no trial.
    pub interval: Option<Interval>,
}

/// Everything the report shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TriggerSummary {
    /// Per query, in the queries' order.
    pub queries: Vec<QueryRate>,
    /// Triggered over decided trials of the positive queries.
    pub recall: PooledRate,
    /// Triggered over decided trials of the negative and near-miss queries.
    pub false_trigger: PooledRate,
    /// Triggered over decided trials of the near-miss queries alone.
    pub near_miss_false_trigger: PooledRate,
    /// Other skills picked first, over all trials.
    pub picked_instead: BTreeMap<String, u64>,
    /// Trials whose decision could not be seen.
    pub undecided: u64,
    /// Mean tokens per trial.
    pub mean_tokens: f64,
    /// Mean model requests per trial.
    pub mean_turns: f64,
    /// Mean seconds per trial.
    pub mean_seconds: f64,
}

/// The rates of `trials` of `queries` for the skill named `skill`.
pub fn summarize(skill: &str, queries: &[TriggerQuery], trials: &[TriggerTrial]) -> TriggerSummary {
    let picked =
        |t: &TriggerTrial| matches!(&t.decision, Some(Decision::Picked { skill: s }) if s == skill);
    let rows: Vec<QueryRate> = queries
        .iter()
        .enumerate()
        .map(|(i, q)| {
            let own: Vec<&TriggerTrial> = trials.iter().filter(|t| t.query == i).collect();
            let decided = own.iter().filter(|t| t.decision.is_some()).count() as u64;
            let triggered = own.iter().filter(|t| picked(t)).count() as u64;
            QueryRate {
                query: q.clone(),
                triggered,
                decided,
                undecided: own.len() as u64 - decided,
                rate: wilson_interval(triggered, decided, TRIGGER_LEVEL).ok(),
                picked_instead: others(skill, own.iter().copied()),
                as_expected: if q.kind.should_trigger() {
                    triggered == decided
                } else {
                    triggered == 0
                },
            }
        })
        .collect();
    let pooled = |keep: &dyn Fn(TriggerKind) -> bool| {
        let (hits, n) = rows
            .iter()
            .filter(|r| keep(r.query.kind))
            .fold((0, 0), |(h, n), r| (h + r.triggered, n + r.decided));
        PooledRate {
            hits,
            trials: n,
            interval: wilson_interval(hits, n, TRIGGER_LEVEL).ok(),
        }
    };
    let n = trials.len().max(1) as f64;
    TriggerSummary {
        recall: pooled(&|k| k == TriggerKind::Positive),
        false_trigger: pooled(&|k| k != TriggerKind::Positive),
        near_miss_false_trigger: pooled(&|k| k == TriggerKind::NearMiss),
        picked_instead: others(skill, trials.iter()),
        undecided: rows.iter().map(|r| r.undecided).sum(),
        mean_tokens: trials.iter().map(|t| t.tokens as f64).sum::<f64>() / n,
        mean_turns: trials.iter().map(|t| f64::from(t.turns)).sum::<f64>() / n,
        mean_seconds: trials
            .iter()
            .map(|t| t.wall_ms as f64 / 1000.0)
            .sum::<f64>()
            / n,
        queries: rows,
    }
}

/// Two trigger runs of the same queries compared query by query: a description and its
/// alternative, or one skill version on two models.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TriggerChange {
    /// Recall over the positive queries.
    pub recall: RateChange,
    /// The false-trigger rate over the negative and near-miss queries.
    pub false_trigger: RateChange,
    /// Queries asked in only one of the runs (left out).
    pub unpaired: usize,
}

impl TriggerChange {
    /// The worse of the two verdicts: a fall in recall or a rise in false triggers is a
    /// regression whichever the other does.
    pub fn verdict(&self) -> Verdict {
        let both = [
            self.recall.decision.verdict,
            self.false_trigger.decision.verdict,
        ];
        if both.contains(&Verdict::Regresses) {
            Verdict::Regresses
        } else if both.contains(&Verdict::Improves) {
            Verdict::Improves
        } else if both.iter().all(|v| *v == Verdict::NotMeasured) {
            Verdict::NotMeasured
        } else if both.contains(&Verdict::Inconclusive) {
            Verdict::Inconclusive
        } else {
            Verdict::NoChange
        }
    }
}

/// Compare `after` with `before` by query (same text and kind), each query's trials in one
/// arm against its trials in the other ([`super::rate_difference`]).
pub fn compare_summaries(
    before: &TriggerSummary,
    after: &TriggerSummary,
    params: &VerdictParams,
) -> TriggerChange {
    let counts = |q: &QueryRate| Counts {
        hits: q.triggered,
        trials: q.decided,
    };
    let mut positives = Vec::new();
    let mut negatives = Vec::new();
    let mut unpaired = 0;
    for b in &before.queries {
        let Some(a) = after
            .queries
            .iter()
            .find(|a| a.query.query == b.query.query && a.query.kind == b.query.kind)
        else {
            unpaired += 1;
            continue;
        };
        let pair = PairedQuery {
            before: counts(b),
            after: counts(a),
        };
        if b.query.kind.should_trigger() {
            positives.push(pair);
        } else {
            negatives.push(pair);
        }
    }
    unpaired += after
        .queries
        .iter()
        .filter(|a| {
            !before
                .queries
                .iter()
                .any(|b| a.query.query == b.query.query && a.query.kind == b.query.kind)
        })
        .count();
    TriggerChange {
        recall: rate_change(&positives, Better::Higher, params, "recall"),
        false_trigger: rate_change(&negatives, Better::Lower, params, "false-trigger rate"),
        unpaired,
    }
}

fn others<'t>(
    skill: &str,
    trials: impl Iterator<Item = &'t TriggerTrial>,
) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for t in trials {
        if let Some(Decision::Picked { skill: s }) = &t.decision
            && s != skill
        {
            *out.entry(s.clone()).or_insert(0) += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(text: &str, kind: TriggerKind) -> TriggerQuery {
        TriggerQuery {
            query: text.into(),
            kind,
            origin: String::new(),
        }
    }

    fn t(query: usize, decision: Option<Decision>) -> TriggerTrial {
        TriggerTrial {
            query,
            decision,
            tokens: 100,
            turns: 1,
            wall_ms: 500,
            stopped_early: true,
        }
    }

    #[test]
    fn rates_pool_by_kind_and_leave_undecided_trials_out() {
        let pick = |s: &str| Some(Decision::Picked { skill: s.into() });
        let queries = [
            q("split a pdf", TriggerKind::Positive),
            q("weather", TriggerKind::Negative),
            q("edit a docx", TriggerKind::NearMiss),
        ];
        let trials = [
            t(0, pick("pdf")),
            t(0, Some(Decision::Answered)),
            t(0, None),
            t(
                1,
                Some(Decision::OtherAction {
                    tool: "Bash".into(),
                }),
            ),
            t(1, Some(Decision::Answered)),
            t(2, pick("docx")),
            t(2, pick("pdf")),
        ];
        let s = summarize("pdf", &queries, &trials);
        assert_eq!((s.recall.hits, s.recall.trials), (1, 2));
        assert_eq!((s.false_trigger.hits, s.false_trigger.trials), (1, 4));
        assert_eq!(
            (
                s.near_miss_false_trigger.hits,
                s.near_miss_false_trigger.trials
            ),
            (1, 2)
        );
        assert_eq!(s.undecided, 1);
        assert_eq!(s.queries[0].undecided, 1);
        assert!(!s.queries[0].as_expected && s.queries[1].as_expected);
        assert_eq!(s.picked_instead, BTreeMap::from([("docx".to_string(), 1)]));
        let r = s.recall.interval.unwrap();
        assert_eq!(r.estimate, 0.5);
        assert!(r.low < 0.5 && r.high > 0.5 && r.n == 2);
        assert!((s.mean_seconds - 0.5).abs() < 1e-12);
    }

    #[test]
    fn two_runs_compare_by_query_and_a_rise_in_false_triggers_regresses() {
        let mut queries: Vec<TriggerQuery> = (0..8)
            .map(|i| q(&format!("pdf task {i}"), TriggerKind::Positive))
            .collect();
        queries.extend((0..8).map(|i| q(&format!("docx task {i}"), TriggerKind::NearMiss)));
        let pick = || {
            Some(Decision::Picked {
                skill: "pdf".into(),
            })
        };
        let run = |recall: usize, false_triggers: usize| {
            let trials: Vec<TriggerTrial> = (0..16)
                .map(|i| {
                    let hit = if i < 8 {
                        i < recall
                    } else {
                        i - 8 < false_triggers
                    };
                    t(
                        i,
                        if hit {
                            pick()
                        } else {
                            Some(Decision::Answered)
                        },
                    )
                })
                .collect();
            summarize("pdf", &queries, &trials)
        };
        let before = run(8, 0);
        let after = run(8, 8);
        let c = compare_summaries(&before, &after, &VerdictParams::default());
        assert_eq!(
            (c.recall.queries, c.false_trigger.queries, c.unpaired),
            (8, 8, 0)
        );
        assert_eq!(
            c.recall.decision.verdict,
            Verdict::Inconclusive,
            "{}",
            c.recall.decision.reason
        );
        assert_eq!(c.false_trigger.decision.verdict, Verdict::Regresses);
        assert_eq!(c.verdict(), Verdict::Regresses);
        assert_eq!(c.false_trigger.interval.unwrap().estimate, 1.0);
        // A query asked in one run only is left out and counted.
        let mut other = queries.clone();
        other[0].query = "reworded".into();
        let fewer = summarize("pdf", &other, &[]);
        assert_eq!(
            compare_summaries(&before, &fewer, &VerdictParams::default()).unpaired,
            2
        );
    }
}
