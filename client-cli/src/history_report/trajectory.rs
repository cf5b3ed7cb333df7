//! A trial's trajectory in the drill-down: its ATIF steps (messages, tool calls,
//! observations), each text cut to a length a reader scans, and a budget over the whole page
//! (trajectories and outputs, the drill-down's bulk) so a large history still renders into a
//! file of a few MB. What the budget cannot hold is named, with the flag that raises it.

use maud::{Markup, html};
use skillwatch_core::trajectory::atif::{self, StepSource};
use skillwatch_daemon::store::{Store, StoreError, StoredTrial};

/// Characters of one message, reasoning, tool argument or observation shown.
pub const TEXT_CHARS: usize = 1_500;
/// Characters of a trial's output shown.
pub const OUTPUT_CHARS: usize = 4_000;
/// Steps of one trajectory shown (the first ones, then how many more there were).
pub const MAX_STEPS: usize = 60;
/// Attempts per case and condition detailed in the drill-down (the case's tally counts all).
pub const MAX_ATTEMPTS: u32 = 10;

/// The bytes of trajectory and output text the page may still take.
pub struct Budget {
    remaining: usize,
    omitted: usize,
    omitted_outputs: usize,
}

impl Budget {
    /// A budget of `bytes`.
    pub fn new(bytes: usize) -> Budget {
        Budget {
            remaining: bytes,
            omitted: 0,
            omitted_outputs: 0,
        }
    }

    /// Trajectories left out so far.
    pub fn omitted(&self) -> usize {
        self.omitted
    }

    /// Outputs left out so far.
    pub fn omitted_outputs(&self) -> usize {
        self.omitted_outputs
    }

    /// `text` when the budget still holds it (charged), else `None` (counted).
    pub fn output(&mut self, text: String) -> Option<String> {
        if text.len() > self.remaining {
            self.remaining = 0;
            self.omitted_outputs += 1;
            return None;
        }
        self.remaining -= text.len();
        Some(text)
    }
}

/// What the drill-down shows of a trajectory.
pub enum TrajectoryView {
    /// The trial kept none.
    None,
    /// Its first steps, and how many there were in all.
    Steps {
        /// The steps shown.
        steps: Vec<StepView>,
        /// Steps in the trajectory.
        total: usize,
    },
    /// A stored trajectory that is not ATIF JSON: its text, cut.
    Raw(String),
    /// Left out: the page's budget was spent.
    Omitted,
    /// It could not be read (damaged): why.
    Unreadable(String),
}

/// One step, cut for display.
pub struct StepView {
    /// The step's number.
    pub id: u32,
    /// `system`, `user` or `agent`.
    pub source: &'static str,
    /// Its message.
    pub message: String,
    /// Its reasoning, when it has some.
    pub reasoning: Option<String>,
    /// Its tool calls: (function, arguments as JSON).
    pub calls: Vec<(String, String)>,
    /// What its tool calls returned.
    pub observations: Vec<String>,
}

/// Read and cut `trial`'s trajectory, charging it to `budget`.
pub fn view(
    store: &Store,
    trial: &StoredTrial,
    budget: &mut Budget,
) -> Result<TrajectoryView, StoreError> {
    let Some(sha) = &trial.trajectory_sha256 else {
        return Ok(TrajectoryView::None);
    };
    if budget.remaining == 0 {
        budget.omitted += 1;
        return Ok(TrajectoryView::Omitted);
    }
    let stored = match store.trajectory(sha) {
        Ok(Some(t)) => t,
        Ok(None) => return Ok(TrajectoryView::None),
        Err(e @ StoreError::Trajectory { .. }) => {
            return Ok(TrajectoryView::Unreadable(e.to_string()));
        }
        Err(e) => return Err(e),
    };
    let view = match serde_json::from_slice::<atif::Trajectory>(&stored.bytes) {
        Ok(t) => TrajectoryView::Steps {
            total: t.steps.len(),
            steps: t.steps.iter().take(MAX_STEPS).map(step).collect(),
        },
        Err(_) => TrajectoryView::Raw(cut(&String::from_utf8_lossy(&stored.bytes), TEXT_CHARS * 4)),
    };
    let cost = size(&view);
    if cost > budget.remaining {
        budget.remaining = 0;
        budget.omitted += 1;
        return Ok(TrajectoryView::Omitted);
    }
    budget.remaining -= cost;
    Ok(view)
}

fn step(s: &atif::Step) -> StepView {
    StepView {
        id: s.step_id,
        source: match s.source {
            StepSource::System => "system",
            StepSource::User => "user",
            StepSource::Agent => "agent",
        },
        message: cut(&s.message.text(), TEXT_CHARS),
        reasoning: s.reasoning_content.as_deref().map(|r| cut(r, TEXT_CHARS)),
        calls: s
            .calls()
            .iter()
            .map(|c| {
                let args = serde_json::to_string(&c.arguments).unwrap_or_default();
                (c.function_name.clone(), cut(&args, TEXT_CHARS))
            })
            .collect(),
        observations: s
            .observation
            .iter()
            .flat_map(|o| &o.results)
            .filter_map(|r| r.content.as_ref().map(|c| cut(&c.text(), TEXT_CHARS)))
            .collect(),
    }
}

fn size(view: &TrajectoryView) -> usize {
    match view {
        TrajectoryView::Steps { steps, .. } => steps
            .iter()
            .map(|s| {
                s.message.len()
                    + s.reasoning.as_ref().map_or(0, String::len)
                    + s.calls
                        .iter()
                        .map(|(f, a)| f.len() + a.len())
                        .sum::<usize>()
                    + s.observations.iter().map(String::len).sum::<usize>()
                    + 64
            })
            .sum(),
        TrajectoryView::Raw(text) | TrajectoryView::Unreadable(text) => text.len(),
        TrajectoryView::None | TrajectoryView::Omitted => 0,
    }
}

/// `text` cut to at most `chars` characters, saying how many more there were.
pub fn cut(text: &str, chars: usize) -> String {
    match text.char_indices().nth(chars) {
        None => text.to_string(),
        Some((at, _)) => {
            let rest = text[at..].chars().count();
            format!("{}… ({rest} more characters)", &text[..at])
        }
    }
}

/// The trajectory as nested HTML.
pub fn markup(view: &TrajectoryView, run: i64, trial: i64) -> Markup {
    html! {
        @match view {
            TrajectoryView::None => p.muted { "No trajectory was kept for this trial." },
            TrajectoryView::Omitted => p.muted {
                "Trajectory of run " (run) ", trial " (trial) " left out to keep this file small; "
                code { "--detail-mb" } " raises the limit."
            },
            TrajectoryView::Unreadable(why) => p.bad { "Trajectory unreadable: " (why) },
            TrajectoryView::Raw(text) => pre { (text) },
            TrajectoryView::Steps { steps, total } => {
                ol.steps {
                    @for s in steps {
                        li class=(format!("step {}", s.source)) {
                            span.tag { (s.source) " · step " (s.id) }
                            @if !s.message.is_empty() { pre { (s.message) } }
                            @if let Some(r) = &s.reasoning {
                                details { summary { "reasoning" } pre { (r) } }
                            }
                            @for (f, a) in &s.calls {
                                div.call { span.tag { "tool call" } " " code { (f) } pre { (a) } }
                            }
                            @for o in &s.observations {
                                div.obs { span.tag { "observation" } pre { (o) } }
                            }
                        }
                    }
                }
                @if *total > steps.len() {
                    p.muted { (total - steps.len()) " more steps not shown." }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_counts_characters_not_bytes() {
        assert_eq!(cut("héllo", 10), "héllo");
        assert_eq!(cut("héllo", 2), "hé… (3 more characters)");
        assert_eq!(cut("", 0), "");
    }

    #[test]
    fn untrusted_text_is_escaped() {
        let view = TrajectoryView::Raw("<script>alert(1)</script>".into());
        let html = markup(&view, 1, 2).into_string();
        assert!(!html.contains("<script>"), "{html}");
        assert!(html.contains("&lt;script&gt;"), "{html}");
    }
}
