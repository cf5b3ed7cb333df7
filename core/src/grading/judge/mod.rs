//! LLM judging: independent rubric scores of one trial, and pairwise comparison of a
//! baseline and a with-skill trial with position swap.
//!
//! Grading stays pure: the caller supplies a [`JudgeClient`] (the runner's transport to an
//! OpenAI-compatible endpoint or to a harness), this module builds the prompts, asks, parses
//! the replies robustly ([`extract`]) and merges the two orderings. A judge that fails after
//! its retries is a [`JudgeFailure`]: the runner records it as a judge error, never as a
//! skill failure, and `skillwatch rejudge` can try again later without re-running agents.
//!
//! Position swap (anchors-evals.md b1.8): the pairwise judge runs twice, forward (A = baseline,
//! B = skill) and reverse (A = skill, B = baseline). When both orderings name the same overall
//! winner the verdict stands (at the smaller of the two magnitudes); a criterion whose two
//! orderings disagree becomes a tie. When the overall winners disagree the pairwise verdict is
//! position-biased and is not used at all: scores fall back to the independent judge's (see
//! [`PairwiseResult::compat_judgment`]), rather than skill-validator's rule of turning
//! everything into a tie, which zeroes 70% of its improvement score (dotnet/skills#475).

pub mod extract;
pub mod prompt;

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::evalspec::Case;
use crate::scoring::compat::{Magnitude, PairwiseJudgment, PairwiseVerdict, Winner};

pub use prompt::Response;

/// A judge model's reply, or why the call failed (transport, HTTP status, empty answer).
pub type JudgeFuture<'a> = Pin<Box<dyn Future<Output = Result<String, String>> + Send + 'a>>;

/// A model's reply with the tokens the call used, as the transport reports them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The reply text.
    pub text: String,
    /// What the call used; `None` when the transport does not say (it cannot be budgeted).
    pub usage: Option<crate::trajectory::TokenUsage>,
}

/// An [`Answer`], or why the call failed.
pub type AnswerFuture<'a> = Pin<Box<dyn Future<Output = Result<Answer, String>> + Send + 'a>>;

/// How grading reaches a judge model. Implemented by the runner (OpenAI-compatible endpoint,
/// or any harness); tests implement it over a mock model server.
pub trait JudgeClient: Send + Sync {
    /// The judge model's name, recorded with every verdict.
    fn model(&self) -> &str;
    /// One completion: a system prompt and a user message in, the reply text out.
    fn ask<'a>(&'a self, system: &'a str, user: &'a str) -> JudgeFuture<'a>;
    /// [`JudgeClient::ask`] with what the call used, for callers that budget their calls (the
    /// description optimiser's proposer). A transport that cannot tell says `None`.
    fn ask_counted<'a>(&'a self, system: &'a str, user: &'a str) -> AnswerFuture<'a> {
        Box::pin(async move {
            let text = self.ask(system, user).await?;
            Ok(Answer { text, usage: None })
        })
    }
}

/// Retries after a failed or unparsable reply, per call (skill-validator's 2).
pub const JUDGE_RETRIES: u32 = 2;

/// A judge call that did not give a usable verdict after its retries.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("judge {model}: {message}")]
pub struct JudgeFailure {
    /// The judge model.
    pub model: String,
    /// What went wrong on the last attempt, and how many were made.
    pub message: String,
}

/// One rubric criterion's independent score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CriterionScore {
    /// The criterion.
    pub criterion: String,
    /// 1-5.
    pub score: f64,
    /// Why.
    pub reasoning: Option<String>,
}

/// One yes/no expectation's verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExpectationVerdict {
    /// The expectation.
    pub expectation: String,
    /// Whether the agent's work satisfies it.
    pub satisfied: bool,
    /// Why.
    pub reasoning: Option<String>,
}

/// The independent judge's verdict on one trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndependentScores {
    /// Per rubric criterion, in the case's order (criteria the judge skipped are absent).
    pub rubric: Vec<CriterionScore>,
    /// 1-5.
    pub overall: f64,
    /// Why.
    pub overall_reasoning: Option<String>,
    /// 1-5 match against the expected output, when the case has one and the judge gave it.
    pub goal: Option<f64>,
    /// Per expectation, in the case's order.
    pub expectations: Vec<ExpectationVerdict>,
}

/// Ask for the independent verdict on one trial, retrying failed or unparsable replies.
pub async fn judge_independent(
    client: &dyn JudgeClient,
    case: &Case,
    response: Response<'_>,
) -> Result<IndependentScores, JudgeFailure> {
    let user = prompt::independent_user(case, response);
    ask_parsed(client, prompt::INDEPENDENT_SYSTEM, &user, |reply| {
        parse_independent(reply, case)
    })
    .await
}

/// Read an independent verdict; scores are clamped to [1, 5] and unreadable ones become 3
/// (skill-validator's rule), but a reply without an overall score is refused.
pub fn parse_independent(reply: &str, case: &Case) -> Result<IndependentScores, String> {
    let map = extract::extract_object(reply, &["overall_score"])?;
    let overall = map
        .get("overall_score")
        .map(score)
        .ok_or("expected overall_score in the judge's reply, found none")?;
    let criteria = prompt::rubric(case);
    let rubric = items(&map, "rubric_scores")
        .iter()
        .enumerate()
        .filter_map(|(i, item)| {
            let criterion = text(item, "criterion").or_else(|| criteria.get(i).cloned())?;
            Some(CriterionScore {
                criterion,
                score: item.get("score").map_or(3.0, score),
                reasoning: text(item, "reasoning"),
            })
        })
        .take(criteria.len())
        .collect();
    let wanted = prompt::expectations(case);
    let expectations = items(&map, "expectations")
        .iter()
        .enumerate()
        .filter_map(|(i, item)| {
            Some(ExpectationVerdict {
                expectation: wanted.get(i)?.clone(),
                satisfied: truthy(item.get("satisfied")?)?,
                reasoning: text(item, "reasoning"),
            })
        })
        .collect();
    Ok(IndependentScores {
        rubric,
        overall,
        overall_reasoning: text_of(&map, "overall_reasoning"),
        goal: case
            .judged
            .expected_output
            .as_ref()
            .and(map.get("goal_score"))
            .map(score),
        expectations,
    })
}

/// One criterion compared in both orderings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CriterionComparison {
    /// The criterion.
    pub criterion: String,
    /// The merged verdict; `None` when the two orderings disagreed.
    pub verdict: Option<PairwiseVerdict>,
    /// What the forward ordering said, in baseline/skill terms.
    pub forward: PairwiseVerdict,
    /// What the reverse ordering said, in baseline/skill terms.
    pub reverse: PairwiseVerdict,
    /// The forward judge's reasoning.
    pub reasoning: Option<String>,
}

/// A pairwise comparison of a (baseline, skill) trial pair, both orderings merged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairwiseResult {
    /// Per rubric criterion.
    pub criteria: Vec<CriterionComparison>,
    /// The merged overall verdict; `None` when position-swap inconsistent.
    pub overall: Option<PairwiseVerdict>,
    /// The forward overall verdict.
    pub forward: PairwiseVerdict,
    /// The reverse overall verdict.
    pub reverse: PairwiseVerdict,
    /// The forward judge's overall reasoning.
    pub reasoning: Option<String>,
}

impl PairwiseResult {
    /// Whether both orderings named the same overall winner.
    pub fn consistent(&self) -> bool {
        self.overall.is_some()
    }

    /// The judgment the compat score uses: `None` when position-swap inconsistent, so the
    /// score falls back to the independent judge; criteria that disagreed count as ties.
    pub fn compat_judgment(&self) -> Option<PairwiseJudgment> {
        let overall = self.overall?;
        Some(PairwiseJudgment {
            rubric: self
                .criteria
                .iter()
                .map(|c| c.verdict.unwrap_or(TIE))
                .collect(),
            overall,
            position_swap_consistent: true,
        })
    }

    /// "Position-swap inconsistent: forward=skill, reverse=baseline", for records.
    pub fn inconsistency(forward: PairwiseVerdict, reverse: PairwiseVerdict) -> String {
        format!(
            "Position-swap inconsistent: forward={}, reverse={}",
            winner_word(forward.winner),
            winner_word(reverse.winner)
        )
    }
}

const TIE: PairwiseVerdict = PairwiseVerdict {
    winner: Winner::Tie,
    magnitude: Magnitude::Equal,
};

/// `baseline`, `skill` or `tie`.
pub fn winner_word(w: Winner) -> &'static str {
    match w {
        Winner::Baseline => "baseline",
        Winner::Skill => "skill",
        Winner::Tie => "tie",
    }
}

/// `much-better`, ... as the judge writes it.
pub fn magnitude_word(m: Magnitude) -> &'static str {
    match m {
        Magnitude::MuchBetter => "much-better",
        Magnitude::SlightlyBetter => "slightly-better",
        Magnitude::Equal => "equal",
        Magnitude::SlightlyWorse => "slightly-worse",
        Magnitude::MuchWorse => "much-worse",
    }
}

/// Compare the baseline and with-skill responses in both orderings (run concurrently).
pub async fn judge_pairwise(
    client: &dyn JudgeClient,
    case: &Case,
    baseline: Response<'_>,
    skill: Response<'_>,
) -> Result<PairwiseResult, JudgeFailure> {
    let forward_user = prompt::pairwise_user(case, baseline, skill);
    let reverse_user = prompt::pairwise_user(case, skill, baseline);
    let criteria = prompt::rubric(case);
    let forward = ask_parsed(client, prompt::PAIRWISE_SYSTEM, &forward_user, |r| {
        parse_pairwise(r, &criteria, false)
    });
    let reverse = ask_parsed(client, prompt::PAIRWISE_SYSTEM, &reverse_user, |r| {
        parse_pairwise(r, &criteria, true)
    });
    let (forward, reverse) = join2(forward, reverse).await;
    Ok(merge(forward?, reverse?, &criteria))
}

/// One ordering's reading, already in baseline/skill terms.
#[derive(Debug, Clone, PartialEq)]
pub struct Ordering {
    /// Per criterion, in the case's order (missing ones are ties).
    pub criteria: Vec<(PairwiseVerdict, Option<String>)>,
    /// Overall.
    pub overall: PairwiseVerdict,
    /// Overall reasoning.
    pub reasoning: Option<String>,
}

/// Read one pairwise reply; `swapped` means A was the skill run.
pub fn parse_pairwise(reply: &str, criteria: &[String], swapped: bool) -> Result<Ordering, String> {
    let map = extract::extract_object(reply, &["overall_winner"])?;
    let side = |v: Option<&Value>| -> Option<Winner> {
        let word = v?.as_str()?.trim().to_ascii_lowercase();
        let word = word.trim_start_matches("response ").trim();
        match (word, swapped) {
            ("a", false) | ("b", true) => Some(Winner::Baseline),
            ("b", false) | ("a", true) => Some(Winner::Skill),
            ("tie" | "equal" | "none" | "neither", _) => Some(Winner::Tie),
            _ => None,
        }
    };
    let overall_winner = side(map.get("overall_winner")).ok_or_else(|| {
        format!(
            "expected overall_winner \"A\", \"B\" or \"tie\", found {}",
            map.get("overall_winner")
                .map_or("nothing".into(), Value::to_string)
        )
    })?;
    let overall = verdict(overall_winner, map.get("overall_magnitude"));
    let results = items(&map, "rubric_results");
    let criteria = (0..criteria.len())
        .map(|i| match results.get(i) {
            Some(item) => (
                verdict(
                    side(item.get("winner")).unwrap_or(Winner::Tie),
                    item.get("magnitude"),
                ),
                text(item, "reasoning"),
            ),
            None => (TIE, None),
        })
        .collect();
    Ok(Ordering {
        criteria,
        overall,
        reasoning: text_of(&map, "overall_reasoning"),
    })
}

/// Merge the two orderings (see the module docs).
pub fn merge(forward: Ordering, reverse: Ordering, criteria: &[String]) -> PairwiseResult {
    let agree = |f: PairwiseVerdict, r: PairwiseVerdict| -> Option<PairwiseVerdict> {
        (f.winner == r.winner).then(|| {
            let weaker = if f.magnitude.score().abs() <= r.magnitude.score().abs() {
                f.magnitude
            } else {
                r.magnitude
            };
            PairwiseVerdict {
                winner: f.winner,
                magnitude: if f.winner == Winner::Tie {
                    Magnitude::Equal
                } else {
                    weaker
                },
            }
        })
    };
    let comparisons = criteria
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let (f, reasoning) = forward.criteria.get(i).cloned().unwrap_or((TIE, None));
            let (r, _) = reverse.criteria.get(i).cloned().unwrap_or((TIE, None));
            CriterionComparison {
                criterion: c.clone(),
                verdict: agree(f, r),
                forward: f,
                reverse: r,
                reasoning,
            }
        })
        .collect();
    PairwiseResult {
        criteria: comparisons,
        overall: agree(forward.overall, reverse.overall),
        forward: forward.overall,
        reverse: reverse.overall,
        reasoning: forward.reasoning,
    }
}

fn verdict(winner: Winner, magnitude: Option<&Value>) -> PairwiseVerdict {
    let word = magnitude
        .and_then(Value::as_str)
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
        .replace(['_', ' '], "-");
    let magnitude = match word.as_str() {
        "much-better" => Magnitude::MuchBetter,
        "slightly-better" | "better" => Magnitude::SlightlyBetter,
        "slightly-worse" => Magnitude::SlightlyWorse,
        "much-worse" => Magnitude::MuchWorse,
        _ => Magnitude::Equal,
    };
    if winner == Winner::Tie {
        return TIE;
    }
    PairwiseVerdict { winner, magnitude }
}

/// Ask, parse, and retry up to [`JUDGE_RETRIES`] times on a failed call or a bad reply.
async fn ask_parsed<T>(
    client: &dyn JudgeClient,
    system: &str,
    user: &str,
    parse: impl Fn(&str) -> Result<T, String>,
) -> Result<T, JudgeFailure> {
    let mut last = String::new();
    for attempt in 0..=JUDGE_RETRIES {
        match client.ask(system, user).await {
            Ok(reply) => match parse(&reply) {
                Ok(v) => return Ok(v),
                Err(e) => last = e,
            },
            Err(e) => last = e,
        }
        if attempt == JUDGE_RETRIES {
            break;
        }
    }
    Err(JudgeFailure {
        model: client.model().to_owned(),
        message: format!("{last} (after {} attempts)", JUDGE_RETRIES + 1),
    })
}

/// Poll two futures to completion together (std has no stable join).
async fn join2<A: Future, B: Future>(a: A, b: B) -> (A::Output, B::Output) {
    let (mut a, mut b) = (Box::pin(a), Box::pin(b));
    let (mut ra, mut rb) = (None, None);
    std::future::poll_fn(move |cx| {
        if ra.is_none()
            && let Poll::Ready(v) = a.as_mut().poll(cx)
        {
            ra = Some(v);
        }
        if rb.is_none()
            && let Poll::Ready(v) = b.as_mut().poll(cx)
        {
            rb = Some(v);
        }
        if ra.is_some() && rb.is_some() {
            Poll::Ready((ra.take().expect("set"), rb.take().expect("set")))
        } else {
            Poll::Pending
        }
    })
    .await
}

fn items<'a>(map: &'a Map<String, Value>, key: &str) -> Vec<&'a Value> {
    map.get(key)
        .and_then(Value::as_array)
        .map(|a| a.iter().collect())
        .unwrap_or_default()
}

fn text(item: &Value, key: &str) -> Option<String> {
    item.get(key).and_then(Value::as_str).map(str::to_owned)
}

fn text_of(map: &Map<String, Value>, key: &str) -> Option<String> {
    map.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// A 1-5 score from a number or numeric text; out of range is clamped, unreadable is 3.
fn score(v: &Value) -> f64 {
    let n = match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    };
    match n {
        Some(x) if x.is_finite() => x.clamp(1.0, 5.0),
        _ => 3.0,
    }
}

fn truthy(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "true" | "yes" | "pass" | "passed" | "satisfied" => Some(true),
            "false" | "no" | "fail" | "failed" | "not satisfied" => Some(false),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests;
