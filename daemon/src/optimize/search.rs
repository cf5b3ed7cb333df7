//! The search loop: measure the current description on train and validation, then rounds of
//! proposals, each rewrite gated by the rules ([`skillwatch_core::optimize::admit`]), screened
//! on train and decided on validation ([`skillwatch_core::optimize::beats`]). Every
//! measurement is a trigger run of the engine (a child run of the optimisation's job); the
//! budget counts the measurements' trials and the proposer's calls, each predicted before it
//! starts; `stop` (a cancel, the daemon draining) lets the trials in flight finish and ends
//! the search with what it found.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use skillwatch_core::evalspec::TriggerQuery;
use skillwatch_core::optimize::{Split, passes_train};
use skillwatch_core::scoring::trigger::TriggerSummary;
use skillwatch_protocol::{
    Budget, Candidate, OptimizeProgress, OptimizeRequest, OptimizeSpent, Rates, StopReason,
    Stopped, TriggerRequest,
};
use tokio_util::sync::CancellationToken;

use super::proposer::{Proposal, Proposer, share};
use super::skill::Skill;
use crate::runner::RunError;
use crate::runs::{Engine, ProgressSink, RunEvent};
use crate::store::{RunStatus, Spent};
use skillwatch_core::optimize::Rewrite;
use skillwatch_core::optimize::{beats, score};
use skillwatch_core::scoring::VerdictParams;
use skillwatch_core::scoring::trigger::compare_summaries;

/// Where a search reports where it is. Called from the engine's task; keep it quick.
pub type OptimizeSink = Arc<dyn Fn(&OptimizeProgress) + Send + Sync>;

/// A description with its measurements.
pub(crate) struct Measured {
    pub(crate) text: String,
    /// Its `when_to_use` (`None`: the skill's own, or the harness does not read it).
    pub(crate) when_to_use: Option<String>,
    pub(crate) train: TriggerSummary,
    pub(crate) validation: TriggerSummary,
}

impl Measured {
    /// The rewrite it measured.
    pub(crate) fn rewrite(&self) -> Rewrite<'_> {
        Rewrite {
            description: &self.text,
            when_to_use: self.when_to_use.as_deref(),
        }
    }
}

/// The search's state.
pub(crate) struct Search<'e> {
    engine: &'e Engine,
    pub(crate) request: OptimizeRequest,
    pub(crate) skill: Skill,
    pub(crate) split: Split,
    /// What the measurements' trials spent (the proposer's calls are its own).
    pub(crate) spent: Spent,
    pub(crate) proposer: Proposer,
    pub(crate) candidates: Vec<Candidate>,
    pub(crate) stopped: Option<Stopped>,
    progress: OptimizeSink,
    stop: CancellationToken,
    round: usize,
}

impl<'e> Search<'e> {
    pub(crate) fn new(
        engine: &'e Engine,
        request: &OptimizeRequest,
        skill: Skill,
        split: Split,
        progress: OptimizeSink,
        stop: CancellationToken,
    ) -> Result<Search<'e>, RunError> {
        let mut request = request.clone();
        request.trigger.record = false;
        let proposer = Proposer::new(&request, engine, skill.name.clone())?;
        Ok(Search {
            engine,
            request,
            skill,
            split,
            spent: Spent::default(),
            proposer,
            candidates: Vec::new(),
            stopped: None,
            progress,
            stop,
            round: 0,
        })
    }

    /// Rounds of proposals from `start`: the best description found, if any beat it.
    pub(crate) async fn rounds(&mut self, start: &Measured) -> Result<Option<Measured>, RunError> {
        let mut best: Option<Measured> = None;
        for round in 1..=self.request.rounds {
            self.round = round;
            let current = best.as_ref().unwrap_or(start);
            if let Some(stopped) = self.before_proposal(round) {
                self.stopped = Some(stopped);
                return Ok(best);
            }
            self.tell(None, format!("round {round}: asking for rewrites"));
            let (text, train) = (current.text.clone(), current.train.clone());
            let when = current
                .when_to_use
                .clone()
                .or(self.skill.when_to_use.clone());
            let n = self.request.candidates;
            let proposals = self
                .proposer
                .propose(&text, when.as_deref(), &train, n)
                .await?;
            match self.round_of(round, current, proposals).await? {
                Some(winner) => best = Some(winner),
                None => return Ok(best),
            }
            if self.stopped.is_some() {
                return Ok(best);
            }
        }
        let done = skillwatch_core::plural::count(self.request.rounds, "round");
        self.stopped = Some(stop(StopReason::Rounds, format!("{done} done (--rounds)")));
        Ok(best)
    }

    /// Why the search stops before the proposal of `round`: a cancel, or the budget.
    fn before_proposal(&self, round: usize) -> Option<Stopped> {
        if self.stop.is_cancelled() {
            let detail = format!("cancelled before the proposal of round {round}");
            return Some(stop(StopReason::Cancelled, detail));
        }
        self.proposal_unaffordable(round)
            .map(|detail| stop(StopReason::Budget, detail))
    }

    /// One round: gate, screen on train, decide on validation. `None`: no winner (the
    /// reason is in `stopped`).
    async fn round_of(
        &mut self,
        round: usize,
        current: &Measured,
        proposals: Vec<Proposal>,
    ) -> Result<Option<Measured>, RunError> {
        let mut winners: Vec<Measured> = Vec::new();
        for proposal in proposals {
            if let Some(m) = self.candidate(round, current, &proposal).await? {
                winners.push(m);
            }
            if self.stopped.is_some() {
                break;
            }
        }
        let winner = rank(winners);
        match &winner {
            Some(w) => {
                for c in self.candidates.iter_mut().filter(|c| c.round == round) {
                    if c.description == w.text && c.when_to_use == w.when_to_use {
                        c.outcome = "chosen: beats the current description on validation".into();
                    }
                }
            }
            None if self.stopped.is_none() => {
                let detail = format!(
                    "no candidate of round {round} beat the current description on validation \
                     by the interval"
                );
                self.stopped = Some(stop(StopReason::NoBetter, detail));
            }
            None => {}
        }
        Ok(winner)
    }

    /// One proposal: refused unmeasured when it breaks a rule, else screened; the
    /// measurement when it beats `current` on validation.
    async fn candidate(
        &mut self,
        round: usize,
        current: &Measured,
        proposal: &Proposal,
    ) -> Result<Option<Measured>, RunError> {
        let number = self.candidates.len() + 1;
        let mut c = Candidate {
            number,
            round,
            description: proposal.description.trim().to_owned(),
            when_to_use: proposal.when_to_use.as_deref().map(|w| w.trim().to_owned()),
            refused: None,
            train: None,
            validation: None,
            change: None,
            outcome: String::new(),
        };
        let rewrite = Rewrite {
            description: &c.description,
            when_to_use: c.when_to_use.as_deref(),
        };
        let measured = match self.skill.admit(&rewrite) {
            Err(reason) => {
                c.outcome = format!("refused unmeasured: {reason}");
                c.refused = Some(reason);
                None
            }
            Ok(()) => self.screen(&mut c, current).await?,
        };
        self.tell(
            Some(number),
            format!("candidate {number} (round {round}): {}", c.outcome),
        );
        self.candidates.push(c);
        Ok(measured)
    }

    /// Measure a candidate on train, and on validation when it does better there; the
    /// measurement when it beats `current` on validation.
    async fn screen(
        &mut self,
        c: &mut Candidate,
        current: &Measured,
    ) -> Result<Option<Measured>, RunError> {
        let label = format!("candidate {}", c.number);
        let train_side = self.split.train.clone();
        let on_train = format!("{label} on train");
        let arm = Some((c.description.clone(), c.when_to_use.clone()));
        let Some(train) = self.measure(arm.clone(), &train_side, &on_train).await? else {
            c.outcome = format!("not measured: {}", self.stopped_word());
            return Ok(None);
        };
        c.train = Some(Rates::of(&train));
        if !passes_train(&current.train, &train) {
            c.outcome = "no better than the current description on train".into();
            return Ok(None);
        }
        let val_side = self.split.validation.clone();
        let on_val = format!("{label} on validation");
        let Some(validation) = self.measure(arm, &val_side, &on_val).await? else {
            c.outcome = format!("not decided: {}", self.stopped_word());
            return Ok(None);
        };
        Ok(decide(c, current, train, validation))
    }

    fn stopped_word(&self) -> &'static str {
        match self.stopped.as_ref().map(|s| s.reason) {
            Some(StopReason::Cancelled) => "cancelled",
            _ => "budget",
        }
    }

    /// The current description on both sides.
    pub(crate) async fn measure_both(&mut self) -> Result<Option<Measured>, RunError> {
        let (train_side, val_side) = (self.split.train.clone(), self.split.validation.clone());
        let label = "the current description";
        let on_train = format!("{label} on train");
        let Some(train) = self.measure(None, &train_side, &on_train).await? else {
            return Ok(None);
        };
        let on_val = format!("{label} on validation");
        let Some(validation) = self.measure(None, &val_side, &on_val).await? else {
            return Ok(None);
        };
        Ok(Some(Measured {
            text: self.skill.description.clone(),
            when_to_use: None,
            train,
            validation,
        }))
    }

    /// One trigger run of `queries` with `description` (the skill's own when `None`), a child
    /// run of the job: not started when stopped or when the budget left cannot pay for it as
    /// predicted; `None` then, or when it ended part way (the reason is in `stopped`).
    async fn measure(
        &mut self,
        arm: Option<(String, Option<String>)>,
        queries: &[TriggerQuery],
        label: &str,
    ) -> Result<Option<TriggerSummary>, RunError> {
        let trials = (queries.len() * self.request.trigger.runs.max(1) as usize) as u64;
        if let Some(stopped) = self.before_measurement(trials, label) {
            self.stopped = Some(stopped);
            return Ok(None);
        }
        let request = self.child(arm, queries);
        self.tell(None, format!("measuring {label}: {trials} trials"));
        let sink = self.child_sink(label, trials);
        let started = self.engine.plan(&request).await?;
        let started = started.draining_on(self.stop.clone()).begin().await?;
        let report = started.execute(sink, CancellationToken::new()).await?;
        add(&mut self.spent, &report.spent);
        if report.status != RunStatus::Completed {
            let detail = format!("{label} ended {}", report.status);
            self.stopped = Some(stop(StopReason::Cancelled, detail));
            return Ok(None);
        }
        if let Some(s) = &report.stop {
            let detail = format!("{label} stopped part way ({})", s.detail);
            self.stopped = Some(stop(StopReason::Budget, detail));
            return Ok(None);
        }
        Ok(Some(report.summary))
    }

    /// Why a measurement of `trials` does not start: a cancel, or the budget.
    fn before_measurement(&self, trials: u64, label: &str) -> Option<Stopped> {
        if self.stop.is_cancelled() {
            return Some(stop(
                StopReason::Cancelled,
                format!("cancelled before {label}"),
            ));
        }
        self.unaffordable(trials, label)
            .map(|detail| stop(StopReason::Budget, detail))
    }

    /// The trigger request of one measurement, with what is left of the budget.
    fn child(
        &self,
        arm: Option<(String, Option<String>)>,
        queries: &[TriggerQuery],
    ) -> TriggerRequest {
        let mut request = self.request.trigger.clone();
        let (description, when_to_use) = arm.unzip();
        request.description = description;
        request.when_to_use = when_to_use.flatten();
        request.only_queries = queries.iter().map(|q| q.query.clone()).collect();
        request.budget = self.left();
        request
    }

    /// The child run's events as the search's progress: each finished trial counts.
    fn child_sink(&self, label: &str, trials: u64) -> ProgressSink {
        let (progress, base) = (self.progress.clone(), self.snapshot(None, String::new()));
        let done = Arc::new(AtomicU64::new(0));
        let label = label.to_owned();
        Arc::new(move |event: &RunEvent| {
            if let RunEvent::TrialFinished { .. } = event {
                let n = done.fetch_add(1, Ordering::SeqCst) + 1;
                let mut p = base.clone();
                p.trials += n;
                p.measuring = Some([n, trials]);
                p.step = format!("measuring {label}: {n}/{trials} trials");
                progress(&p);
            }
        })
    }

    /// Everything spent: the trials and the proposer's calls.
    pub(crate) fn spent_all(&self) -> OptimizeSpent {
        OptimizeSpent::of(share(&self.spent), self.proposer.share())
    }

    /// What is left of the budget: trials count measurements only, tokens and cost count
    /// the proposer's calls too.
    fn left(&self) -> Budget {
        let (b, all) = (self.request.budget(), self.spent_all());
        Budget {
            max_trials: b
                .max_trials
                .map(|m| m.saturating_sub(self.spent.trials as u32)),
            max_tokens: b.max_tokens.map(|m| m.saturating_sub(all.tokens)),
            max_cost_usd: b.max_cost_usd.map(|m| (m - all.cost_usd).max(0.0)),
            ..b
        }
    }

    /// Why a measurement of `trials` trials would cross the budget, predicted from what a
    /// trial cost so far (nothing is predicted before the first measurement: the engine's own
    /// gate stops that one part way if it must).
    fn unaffordable(&self, trials: u64, label: &str) -> Option<String> {
        let done = self.spent.trials;
        if done == 0 {
            return None;
        }
        let left = self.left();
        if left.max_trials.is_some_and(|m| u64::from(m) < trials) {
            let m = left.max_trials.unwrap_or(0);
            return Some(format!("{label} needs {trials} trials, {m} left"));
        }
        let tokens = self.spent.tokens().div_ceil(done) * trials;
        if let Some(m) = left.max_tokens.filter(|m| *m < tokens) {
            return Some(format!(
                "{label} needs about {tokens} tokens ({trials} trials), {m} left"
            ));
        }
        let cost = self.spent.cost_usd / done as f64 * trials as f64;
        if let Some(m) = left.max_cost_usd.filter(|m| *m < cost) {
            return Some(format!(
                "{label} needs about ${cost:.4} ({trials} trials), ${m:.4} left"
            ));
        }
        None
    }

    /// Why the proposal of `round` would cross the budget, predicted from what a proposer
    /// call cost so far; before the first call, only a budget already spent stops it (as
    /// the engine's gate does with nothing to predict from).
    fn proposal_unaffordable(&self, round: usize) -> Option<String> {
        let (left, p) = (self.left(), self.proposer.spent());
        let label = format!("the proposal of round {round}");
        if p.trials == 0 {
            let spent = left.max_tokens == Some(0) || left.max_cost_usd.is_some_and(|m| m <= 0.0);
            return spent.then(|| format!("{label}: the budget is spent"));
        }
        let tokens = p.tokens().div_ceil(p.trials);
        if let Some(m) = left.max_tokens.filter(|m| *m < tokens) {
            return Some(format!("{label} needs about {tokens} tokens, {m} left"));
        }
        let cost = p.cost_usd / p.trials as f64;
        if let Some(m) = left.max_cost_usd.filter(|m| *m < cost) {
            return Some(format!("{label} needs about ${cost:.4}, ${m:.4} left"));
        }
        None
    }

    fn snapshot(&self, candidate: Option<usize>, step: String) -> OptimizeProgress {
        OptimizeProgress {
            round: self.round,
            candidate,
            step,
            trials: self.spent.trials,
            measuring: None,
            spent: self.spent_all(),
        }
    }

    /// Tell where the search is.
    fn tell(&self, candidate: Option<usize>, step: String) {
        (self.progress)(&self.snapshot(candidate, step));
    }
}

pub(crate) fn stop(reason: StopReason, detail: String) -> Stopped {
    Stopped { reason, detail }
}

fn add(to: &mut Spent, more: &Spent) {
    to.trials += more.trials;
    to.tokens_in += more.tokens_in;
    to.tokens_out += more.tokens_out;
    to.cost_usd += more.cost_usd;
    to.unpriced += more.unpriced;
}

/// The best of a round's winners: the highest validation score, the shorter on a tie.
pub(crate) fn rank(mut winners: Vec<Measured>) -> Option<Measured> {
    winners.sort_by(|x, y| {
        score(&y.validation)
            .total_cmp(&score(&x.validation))
            .then(x.text.len().cmp(&y.text.len()))
    });
    winners.into_iter().next()
}

/// Decide a candidate measured on both sides against `current`, on validation only.
fn decide(
    c: &mut Candidate,
    current: &Measured,
    train: skillwatch_core::scoring::trigger::TriggerSummary,
    validation: skillwatch_core::scoring::trigger::TriggerSummary,
) -> Option<Measured> {
    c.validation = Some(Rates::of(&validation));
    let change = compare_summaries(&current.validation, &validation, &VerdictParams::default());
    let verdict = beats(&change);
    c.change = Some(change);
    match verdict {
        Ok(()) => {
            c.outcome = "beats the current description on validation".into();
            Some(Measured {
                text: c.description.clone(),
                when_to_use: c.when_to_use.clone(),
                train,
                validation,
            })
        }
        Err(why) => {
            c.outcome = format!("rejected on validation: {why}");
            None
        }
    }
}
