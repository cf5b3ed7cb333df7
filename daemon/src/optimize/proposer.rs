//! The model that proposes rewrites of a description: the `[judge]` of skillwatch.toml when
//! there is one, else the agent's own harness run as a judge (through `AgentRun`, as every
//! agent is started). Each call's tokens are counted, because the budget counts them beside
//! the trials (a proposer that rewrites long descriptions can cost as much as the trials).

use std::sync::Arc;

use skillwatch_core::grading::judge::JudgeClient;
use skillwatch_core::scoring::trigger::TriggerSummary;
use skillwatch_protocol::{OptimizeRequest, Share};

use crate::runner::{JudgeMeter, Metered, RunError, judge_client};
use crate::runs::Engine;
use crate::runs::budget::countable;
use crate::store::{Spend, Spent};

pub(crate) const PROPOSER_SYSTEM: &str = "You improve the description of an agent skill: the \
one text an agent sees before it decides whether to load the skill. Rewrite it so the agent \
picks the skill for the requests it should and leaves it alone for the others. Describe what \
the skill does and when to use it in general terms: do not quote or list the example requests, \
they stand for many others. Keep it under 1000 characters, plain text, no instructions to the \
agent. Reply with JSON only: {\"candidates\": [\"...\", ...]}. When you are also given the \
skill's `when_to_use` (text the agent's harness lists after the description), rewrite both under \
the same rules and reply {\"candidates\": [{\"description\": \"...\", \"when_to_use\": \"...\"}, ...]}.";

/// One proposed rewrite.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Proposal {
    pub(crate) description: String,
    /// `None`: `when_to_use` left as it is.
    pub(crate) when_to_use: Option<String>,
}

/// The proposer and what its calls spent.
pub(crate) struct Proposer {
    /// Counted at the proposer model's price (what its calls cost against the cost limit).
    client: Arc<dyn JudgeClient>,
    meter: JudgeMeter,
    skill: String,
    /// Each call and what it spent, for the budget, the report and the ledger.
    pub(crate) calls: Vec<Spend>,
    _temp: tempfile::TempDir,
}

impl Proposer {
    /// The proposer `request` names; a cost limit on a proposer with no price is refused
    /// before anything runs, as the engine refuses one on an unpriced agent model.
    pub(crate) fn new(
        request: &OptimizeRequest,
        engine: &Engine,
        skill: String,
    ) -> Result<Proposer, RunError> {
        let mut budget = request.budget();
        budget.price = request.proposer_price;
        countable(&budget, &request.proposer.model).map_err(|message| RunError::Settings {
            message: format!("{message} (the proposer's)"),
        })?;
        let temp = tempfile::Builder::new()
            .prefix("skillwatch-proposer-")
            .tempdir_in(engine.temp_dir())
            .map_err(|source| RunError::Io {
                context: "creating the proposer's folder".into(),
                source,
            })?;
        let client = judge_client(&request.proposer, engine.host(), temp.path().to_path_buf())?;
        let (client, meter) = Metered::wrap(client, request.proposer_price);
        Ok(Proposer {
            client,
            meter,
            skill,
            calls: Vec::new(),
            _temp: temp,
        })
    }

    /// The proposer model's name.
    pub(crate) fn model(&self) -> &str {
        self.client.model()
    }

    /// What its calls spent (`trials`: calls).
    pub(crate) fn spent(&self) -> Spent {
        let mut spent = Spent::default();
        self.calls.iter().for_each(|c| spent.add(c));
        spent
    }

    /// What its calls spent, as the report shows it.
    pub(crate) fn share(&self) -> Share {
        share(&self.spent())
    }

    /// Up to `n` rewrites of `current` (and of `when_to_use`, when given: the harness reads
    /// it), measured on train as `train`, from its train failures.
    pub(crate) async fn propose(
        &mut self,
        current: &str,
        when_to_use: Option<&str>,
        train: &TriggerSummary,
        n: usize,
    ) -> Result<Vec<Proposal>, RunError> {
        let mut user = prompt(&self.skill, current, train, n);
        if let Some(w) = when_to_use {
            user.push_str(&format!(
                "\nCurrent when_to_use: {w}\nRewrite it with each description."
            ));
        }
        let model = self.client.model().to_owned();
        let failed = |e: String| RunError::Settings {
            message: format!("the proposer ({model}): {e}"),
        };
        let answer = self.client.ask_counted(PROPOSER_SYSTEM, &user).await;
        self.count();
        let answer = answer.map_err(failed)?;
        let mut out = parse_candidates(&answer.text);
        if when_to_use.is_none() {
            out.iter_mut().for_each(|p| p.when_to_use = None);
        }
        out.truncate(n.max(1));
        if out.is_empty() {
            let head: String = answer.text.chars().take(200).collect();
            return Err(failed(format!(
                "expected JSON {{\"candidates\": [...]}}, found: {head}"
            )));
        }
        Ok(out)
    }

    /// Count the calls the meter saw (one answered call; a call whose usage the transport
    /// does not report is unpriced, with no tokens).
    fn count(&mut self) {
        self.calls.extend(self.meter.take());
    }
}

/// A store `Spent` as one side of the report.
pub(crate) fn share(s: &Spent) -> Share {
    Share {
        count: s.trials,
        tokens: s.tokens(),
        cost_usd: s.cost_usd,
        unpriced: s.unpriced,
    }
}

/// The proposer's user message: the current description and the train queries it got wrong.
fn prompt(skill: &str, current: &str, train: &TriggerSummary, n: usize) -> String {
    let failures: Vec<String> = train
        .queries
        .iter()
        .filter(|q| !q.as_expected)
        .map(|q| {
            let want = if q.query.kind.should_trigger() {
                "should use the skill, did not"
            } else {
                "should not use the skill, did"
            };
            format!("- {} ({want})", q.query.query.replace('\n', " "))
        })
        .collect();
    let failures = if failures.is_empty() {
        "(none)".to_owned()
    } else {
        failures.join("\n")
    };
    format!(
        "Skill `{skill}`.\nCurrent description: {current}\n\nRequests it got wrong:\n{failures}\n\n\
         Propose {n} rewritten descriptions."
    )
}

/// The candidates of a proposer's reply: the JSON object in it (code fences and words around
/// it allowed); each a description, or an object with a description and a `when_to_use`.
fn parse_candidates(reply: &str) -> Vec<Proposal> {
    let (Some(start), Some(end)) = (reply.find('{'), reply.rfind('}')) else {
        return Vec::new();
    };
    let Some(json) = reply.get(start..=end) else {
        return Vec::new();
    };
    serde_json::from_str::<serde_json::Value>(json)
        .ok()
        .and_then(|v| {
            v.get("candidates")?.as_array().map(|items| {
                items
                    .iter()
                    .filter_map(proposal)
                    .filter(|p| !p.description.trim().is_empty())
                    .collect()
            })
        })
        .unwrap_or_default()
}

/// One item of the reply's `candidates`.
fn proposal(item: &serde_json::Value) -> Option<Proposal> {
    if let Some(text) = item.as_str() {
        return Some(Proposal {
            description: text.to_owned(),
            when_to_use: None,
        });
    }
    let field = |f: &str| item.get(f)?.as_str().map(str::to_owned);
    Some(Proposal {
        description: field("description")?,
        when_to_use: field("when_to_use").filter(|w| !w.trim().is_empty()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_are_read_from_a_fenced_reply() {
        let reply = "Here:\n```json\n{\"candidates\": [\"A\", \"\", \"B\"]}\n```";
        let texts: Vec<String> = parse_candidates(reply)
            .into_iter()
            .map(|p| p.description)
            .collect();
        assert_eq!(texts, vec!["A", "B"]);
        let both =
            r#"{"candidates": [{"description": "D", "when_to_use": "W"}, {"when_to_use": "x"}]}"#;
        assert_eq!(
            parse_candidates(both),
            vec![Proposal {
                description: "D".into(),
                when_to_use: Some("W".into())
            }]
        );
        assert!(parse_candidates("no json").is_empty());
        assert!(parse_candidates("{\"other\": 1}").is_empty());
    }
}
