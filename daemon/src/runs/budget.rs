//! Budgets, enforced by the engine for every kind of run: before each trial starts, the gate
//! asks whether it, with the trials still in flight, would cross a limit (`max_trials`,
//! `max_tokens`, `max_cost_usd`); when it would, no new trial starts, the started ones finish,
//! and the run ends `stopped: budget` with what it spent.
//!
//! What a trial will take is not known before it runs, so the gate predicts it: the mean of
//! the run's finished trials, or before any has finished, the mean of this skill's trials of
//! the same kind on the same model in the history (the `spending` ledger). With no prediction
//! at all, one trial runs at a time until one has finished. Tokens are the harness's own usage
//! figures (input, cached input as part of it, output); cost is those tokens at the model's
//! price ([`super::prices`]). A paired run's judge calls count too, at the judge model's price,
//! as each is made: they are not predicted, so a judged run can end a judge call's worth over
//! its limit.

use skillwatch_core::trajectory::TokenUsage;
use skillwatch_protocol::{Budget, Price};

use crate::store::{Spend, Spent, Stop, StopReason, Tokens};

/// What one trial is expected to take: mean token counts.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Usage {
    /// Input tokens (cached included).
    pub input: f64,
    /// Of them, cached.
    pub cached: f64,
    /// Output tokens.
    pub output: f64,
}

impl Usage {
    /// Input and output tokens.
    pub fn tokens(&self) -> f64 {
        self.input + self.output
    }

    /// Their cost at `price`.
    pub fn cost(&self, price: &Price) -> f64 {
        price.cost(
            self.input.round() as u64,
            self.cached.round() as u64,
            self.output.round() as u64,
        )
    }
}

/// What a trial spent: the harness's counts on `model`, and their cost at `price`.
pub fn spend(model: &str, tokens: &TokenUsage, price: Option<&Price>) -> Spend {
    Spend {
        model: model.to_owned(),
        tokens: Tokens {
            input: Some(tokens.input),
            output: Some(tokens.output),
            cached: Some(tokens.cached.min(tokens.input)),
        },
        cost_usd: price.map(|p| p.cost(tokens.input, tokens.cached, tokens.output)),
    }
}

/// Whether a run on `model` can count `budget`: a cost limit needs the model's price.
pub fn countable(budget: &Budget, model: &str) -> Result<(), String> {
    if budget.max_cost_usd.is_some() && budget.price.is_none() {
        return Err(format!(
            "the cost limit: {}",
            super::prices::unpriced(model)
        ));
    }
    Ok(())
}

/// Whether the next trial may start.
#[derive(Debug, Clone, PartialEq)]
pub enum Admit {
    /// It may.
    Go,
    /// Not yet: nothing predicts what it takes, so it waits for a trial in flight to finish.
    Wait,
    /// It would cross a limit: the run starts no more trials.
    Stop(Stop),
}

/// The engine's budget gate for one run.
#[derive(Debug, Clone)]
pub struct Gate {
    budget: Budget,
    /// What the run spent, this invocation's finished trials included.
    spent: Spent,
    /// What this invocation's finished trials took, for the mean.
    here: (u64, Usage),
    /// The prediction before any trial finished here.
    prior: Option<Usage>,
    in_flight: u64,
}

impl Gate {
    /// A gate for a run under `budget` that has spent `before` already (a resumed run), with
    /// `prior` predicting a trial from the history. A cost limit without a price is refused:
    /// the run cannot know what it spends.
    pub fn new(
        budget: Budget,
        model: &str,
        before: Spent,
        prior: Option<Usage>,
    ) -> Result<Gate, String> {
        if budget.max_cost_usd.is_some() && budget.price.is_none() {
            return Err(format!(
                "the cost limit: {}",
                super::prices::unpriced(model)
            ));
        }
        Ok(Gate {
            budget,
            spent: before,
            here: (0, Usage::default()),
            prior,
            in_flight: 0,
        })
    }

    /// The limits.
    pub fn budget(&self) -> &Budget {
        &self.budget
    }

    /// What one more trial is expected to take: the mean of this run's finished trials, else
    /// the history's.
    pub fn per_trial(&self) -> Option<Usage> {
        let (n, sum) = self.here;
        if n == 0 {
            return self.prior;
        }
        let n = n as f64;
        Some(Usage {
            input: sum.input / n,
            cached: sum.cached / n,
            output: sum.output / n,
        })
    }

    /// Whether the next trial may start now.
    pub fn admit(&self) -> Admit {
        let b = &self.budget;
        let n = self.in_flight + 1;
        if let Some(max) = b.max_trials
            && self.spent.trials + n > u64::from(max)
        {
            return self.stop(format!(
                "the trial limit of {max} is reached ({} run{})",
                self.spent.trials,
                if self.in_flight > 0 {
                    format!(", {} in flight", self.in_flight)
                } else {
                    String::new()
                }
            ));
        }
        if b.max_tokens.is_none() && b.max_cost_usd.is_none() {
            return Admit::Go;
        }
        let Some(per) = self.per_trial() else {
            return if self.in_flight > 0 {
                Admit::Wait
            } else {
                self.over_already()
            };
        };
        if let Some(max) = b.max_tokens {
            let next = self.spent.tokens() as f64 + n as f64 * per.tokens();
            if next > max as f64 {
                return self.stop(format!(
                    "the next trial (about {:.0} tokens) would cross the token limit of {max} ({} spent{})",
                    per.tokens(),
                    self.spent.tokens(),
                    self.flight_note()
                ));
            }
        }
        if let (Some(max), Some(price)) = (b.max_cost_usd, b.price.as_ref()) {
            let next = self.spent.cost_usd + n as f64 * per.cost(price);
            if next > max {
                return self.stop(format!(
                    "the next trial (about ${:.4}) would cross the cost limit of ${max} (${:.4} spent{})",
                    per.cost(price),
                    self.spent.cost_usd,
                    self.flight_note()
                ));
            }
        }
        Admit::Go
    }

    /// With nothing to predict from and nothing in flight: stop only when a limit is already
    /// reached.
    fn over_already(&self) -> Admit {
        let b = &self.budget;
        if let Some(max) = b.max_tokens
            && self.spent.tokens() >= max
        {
            return self.stop(format!(
                "the token limit of {max} is reached ({} spent)",
                self.spent.tokens()
            ));
        }
        if let Some(max) = b.max_cost_usd
            && self.spent.cost_usd >= max
        {
            return self.stop(format!(
                "the cost limit of ${max} is reached (${:.4} spent)",
                self.spent.cost_usd
            ));
        }
        Admit::Go
    }

    fn flight_note(&self) -> String {
        match self.in_flight {
            0 => String::new(),
            n => format!(", {n} more in flight"),
        }
    }

    fn stop(&self, detail: String) -> Admit {
        Admit::Stop(Stop {
            reason: StopReason::Budget,
            detail,
            limits: serde_json::to_value(self.budget).unwrap_or_default(),
        })
    }

    /// A trial started.
    pub fn started(&mut self) {
        self.in_flight += 1;
    }

    /// A trial finished, having spent `spend`.
    pub fn finished(&mut self, spend: &Spend) {
        self.in_flight = self.in_flight.saturating_sub(1);
        self.spent.add(spend);
        let t = &spend.tokens;
        let (n, sum) = &mut self.here;
        *n += 1;
        sum.input += t.input.unwrap_or(0) as f64;
        sum.cached += t.cached.unwrap_or(0) as f64;
        sum.output += t.output.unwrap_or(0) as f64;
    }

    /// A judge call of the run spent `spend`: it counts against the token and cost limits,
    /// not the trial limit, and not in the mean a trial is predicted from (the gate does not
    /// predict judge calls; it counts each once made).
    pub fn judged(&mut self, spend: &Spend) {
        self.spent.add_judge(spend);
    }

    /// A trial ended without spending anything the gate can count (it never started an
    /// agent, or was cancelled).
    pub fn abandoned(&mut self) {
        self.in_flight = self.in_flight.saturating_sub(1);
    }

    /// What the run spent so far.
    pub fn spent(&self) -> Spent {
        self.spent
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trial(input: u64, output: u64) -> Spend {
        spend(
            "m",
            &TokenUsage {
                input,
                output,
                cached: 0,
            },
            Some(&PRICE),
        )
    }

    const PRICE: Price = Price {
        input: 1.0,
        cached: None,
        output: 10.0,
    };

    fn budget(tokens: Option<u64>, cost: Option<f64>) -> Budget {
        Budget {
            max_tokens: tokens,
            max_cost_usd: cost,
            price: Some(PRICE),
            ..Budget::default()
        }
    }

    /// Runs trials of 100 in + 20 out one at a time until the gate stops; how many ran.
    fn run_until_stopped(gate: &mut Gate, limit: usize) -> usize {
        let mut ran = 0;
        while ran < limit {
            match gate.admit() {
                Admit::Go => {
                    gate.started();
                    gate.finished(&trial(100, 20));
                    ran += 1;
                }
                Admit::Wait => unreachable!("one at a time"),
                Admit::Stop(_) => break,
            }
        }
        ran
    }

    #[test]
    fn the_token_limit_stops_at_the_trial_that_would_cross_it() {
        // 120 tokens a trial: 4 trials are 480; a fifth would make 600 > 500
        let mut gate = Gate::new(budget(Some(500), None), "m", Spent::default(), None).unwrap();
        assert_eq!(run_until_stopped(&mut gate, 100), 4);
        assert_eq!(gate.spent().tokens(), 480);
        let Admit::Stop(stop) = gate.admit() else {
            panic!("stopped")
        };
        assert!(
            stop.detail.contains("token limit of 500 (480 spent"),
            "{}",
            stop.detail
        );
        // exactly at the limit is within it
        let mut gate = Gate::new(budget(Some(600), None), "m", Spent::default(), None).unwrap();
        assert_eq!(run_until_stopped(&mut gate, 100), 5);
    }

    #[test]
    fn the_cost_limit_counts_tokens_at_the_price() {
        // a trial: 100 in at $1/M + 20 out at $10/M = $0.0003
        let mut gate = Gate::new(budget(None, Some(0.001)), "m", Spent::default(), None).unwrap();
        assert_eq!(run_until_stopped(&mut gate, 100), 3);
        assert!((gate.spent().cost_usd - 0.0009).abs() < 1e-12);
    }

    #[test]
    fn a_cost_limit_without_a_price_is_refused_before_anything_runs() {
        let b = Budget {
            max_cost_usd: Some(1.0),
            ..Budget::default()
        };
        let err = Gate::new(b, "mock-model", Spent::default(), None).unwrap_err();
        assert!(
            err.contains("no price is known for the model \"mock-model\""),
            "{err}"
        );
    }

    #[test]
    fn without_a_prediction_one_trial_runs_at_a_time() {
        let mut gate = Gate::new(budget(Some(1000), None), "m", Spent::default(), None).unwrap();
        assert_eq!(gate.admit(), Admit::Go);
        gate.started();
        assert_eq!(gate.admit(), Admit::Wait);
        gate.finished(&trial(100, 20));
        // now 120 a trial: 1 + 2 in flight + the next = 480 <= 1000
        for _ in 0..2 {
            assert_eq!(gate.admit(), Admit::Go);
            gate.started();
        }
        assert_eq!(gate.admit(), Admit::Go);
    }

    #[test]
    fn trials_in_flight_count_against_the_limit() {
        let prior = Usage {
            input: 100.0,
            cached: 0.0,
            output: 20.0,
        };
        let mut gate =
            Gate::new(budget(Some(300), None), "m", Spent::default(), Some(prior)).unwrap();
        gate.started();
        gate.started();
        let Admit::Stop(stop) = gate.admit() else {
            panic!("a third would make 360")
        };
        assert!(stop.detail.contains("2 more in flight"), "{}", stop.detail);
    }

    #[test]
    fn judge_calls_count_against_tokens_and_cost_but_not_trials_or_the_mean() {
        let b = Budget {
            max_trials: Some(3),
            ..budget(Some(500), None)
        };
        let mut gate = Gate::new(b, "m", Spent::default(), None).unwrap();
        for _ in 0..2 {
            assert_eq!(gate.admit(), Admit::Go);
            gate.started();
            gate.finished(&trial(100, 20));
            gate.judged(&trial(100, 20));
        }
        let spent = gate.spent();
        assert_eq!(
            (spent.trials, spent.judge_calls, spent.tokens()),
            (2, 2, 480)
        );
        assert!((spent.cost_usd - 0.0012).abs() < 1e-12);
        // a trial is still predicted at 120 (its own mean): 480 + 120 > 500 stops it, where
        // the trial limit (3) alone would have let a third start
        assert_eq!(gate.per_trial().unwrap().tokens(), 120.0);
        let Admit::Stop(stop) = gate.admit() else {
            panic!("the judge's tokens count")
        };
        assert!(stop.detail.contains("(480 spent"), "{}", stop.detail);
    }

    #[test]
    fn the_trial_limit_counts_what_a_resumed_run_spent() {
        let b = Budget {
            max_trials: Some(3),
            ..Budget::default()
        };
        let before = Spent {
            trials: 2,
            ..Spent::default()
        };
        let mut gate = Gate::new(b, "m", before, None).unwrap();
        assert_eq!(gate.admit(), Admit::Go);
        gate.started();
        assert!(matches!(gate.admit(), Admit::Stop(_)));
    }
}
