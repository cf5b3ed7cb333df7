//! The judge prompts: skill-validator's layout (anchors-evals.md b1.8) — the task, each
//! response's output, metrics and session timeline, the numbered rubric — extended with the
//! case's expected output and its expectations (ACES `expected_behavior`), so one independent
//! call per trial scores accuracy, goal accuracy and the judged behavior checks.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::evalspec::{Case, CriterionKind};
use crate::trajectory::{StepSource, Trajectory};

/// skill-validator's rubric when a case gives none.
pub const DEFAULT_RUBRIC: &[&str] = &[
    "The agent completed the task correctly",
    "The response is clear and well-structured",
];

/// Timeline events kept: the first and last half of this many.
const MAX_EVENTS: usize = 80;
/// The timeline is cut to this many characters.
const MAX_TIMELINE_CHARS: usize = 30_000;
/// The final output is cut to this many characters.
const MAX_OUTPUT_CHARS: usize = 20_000;

/// What the judge sees of one trial.
#[derive(Debug, Clone, Copy)]
pub struct Response<'a> {
    /// The agent's final output.
    pub output: &'a str,
    /// What it did, when kept.
    pub trajectory: Option<&'a Trajectory>,
}

/// The rubric criteria of a case (the default pair when it has none).
pub fn rubric(case: &Case) -> Vec<String> {
    let own: Vec<String> = case
        .judged
        .criteria
        .iter()
        .filter(|c| c.kind == CriterionKind::Rubric)
        .map(|c| c.text.clone())
        .collect();
    if own.is_empty() {
        DEFAULT_RUBRIC.iter().map(|s| (*s).to_owned()).collect()
    } else {
        own
    }
}

/// The yes/no expectations of a case: `expected_behavior` statements, and `must_not` ones
/// phrased so that "satisfied" means the agent did not do it.
pub fn expectations(case: &Case) -> Vec<String> {
    case.judged
        .criteria
        .iter()
        .filter_map(|c| match c.kind {
            CriterionKind::Expectation => Some(c.text.clone()),
            CriterionKind::MustNot => Some(format!("The agent did NOT do this: {}", c.text)),
            CriterionKind::Rubric => None,
        })
        .collect()
}

/// System prompt of the independent judge.
pub const INDEPENDENT_SYSTEM: &str = "You are an impartial expert evaluating the work of an AI \
coding agent on one task. Judge the final result: correctness, completeness, and quality, and \
how the agent got there (recovering from errors, verifying its work). Do not reward length. \
Score each rubric criterion from 1 (very poor) to 5 (excellent), give an overall score from 1 \
to 5, and when an expected output is given, a goal score from 1 to 5 for how well the outcome \
matches it. For each expectation, say whether the agent's work satisfies it. Reply with ONLY a \
JSON object of this shape:\n\
{\"rubric_scores\": [{\"criterion\": \"...\", \"score\": 1, \"reasoning\": \"...\"}], \
\"overall_score\": 1, \"overall_reasoning\": \"...\", \"goal_score\": 1, \
\"expectations\": [{\"expectation\": \"...\", \"satisfied\": true, \"reasoning\": \"...\"}]}";

/// System prompt of the pairwise judge (skill-validator's, b1.8).
pub const PAIRWISE_SYSTEM: &str = "You compare two runs of an AI coding agent on the same \
task: Response A and Response B. For each rubric criterion decide which response is better \
(\"A\", \"B\" or \"tie\") and by how much, from the perspective of the winner: \"much-better\", \
\"slightly-better\" or \"equal\". Then give the overall winner the same way. Focus on the \
quality of the final result, recovery from errors and a methodical approach. Do NOT weigh token \
counts, tool-call counts or speed: those are scored separately. Only say much-better for \
genuinely large quality gaps. Reply with ONLY a JSON object of this shape:\n\
{\"rubric_results\": [{\"criterion\": \"...\", \"winner\": \"A\", \"magnitude\": \"slightly-better\", \
\"reasoning\": \"...\"}], \"overall_winner\": \"A\", \"overall_magnitude\": \"slightly-better\", \
\"overall_reasoning\": \"...\"}";

/// The user message of the independent judge for one trial.
pub fn independent_user(case: &Case, response: Response<'_>) -> String {
    let mut p = String::new();
    let _ = writeln!(p, "## Task Prompt\n\n{}\n", case.prompt);
    if let Some(expected) = &case.judged.expected_output {
        let _ = writeln!(p, "## Expected Output\n\n{expected}\n");
    }
    let _ = writeln!(p, "## Agent Response\n");
    write_response(&mut p, response);
    write_numbered(&mut p, "Rubric Criteria", &rubric(case));
    write_numbered(&mut p, "Expectations", &expectations(case));
    p
}

/// The user message of the pairwise judge, `a` shown first.
pub fn pairwise_user(case: &Case, a: Response<'_>, b: Response<'_>) -> String {
    let mut p = String::new();
    let _ = writeln!(p, "## Task Prompt\n\n{}\n", case.prompt);
    if let Some(expected) = &case.judged.expected_output {
        let _ = writeln!(p, "## Expected Output\n\n{expected}\n");
    }
    let _ = writeln!(p, "## Response A\n");
    write_response(&mut p, a);
    let _ = writeln!(p, "## Response B\n");
    write_response(&mut p, b);
    write_numbered(&mut p, "Rubric Criteria", &rubric(case));
    p
}

fn write_numbered(p: &mut String, title: &str, items: &[String]) {
    if items.is_empty() {
        return;
    }
    let _ = writeln!(p, "## {title}\n");
    for (i, item) in items.iter().enumerate() {
        let _ = writeln!(p, "{}. {item}", i + 1);
    }
    p.push('\n');
}

fn write_response(p: &mut String, r: Response<'_>) {
    let _ = writeln!(
        p,
        "### Output\n\n{}\n",
        cut(r.output.trim(), MAX_OUTPUT_CHARS)
    );
    let Some(t) = r.trajectory else {
        let _ = writeln!(p, "### Session Timeline\n\n(not recorded)\n");
        return;
    };
    let mut tools: BTreeMap<&str, usize> = BTreeMap::new();
    for (_, call) in t.tool_calls() {
        *tools.entry(call.function_name.as_str()).or_default() += 1;
    }
    let used: Vec<String> = tools.iter().map(|(n, c)| format!("{n} ×{c}")).collect();
    let _ = writeln!(
        p,
        "### Metrics\n\n- Tools used: {}\n",
        if used.is_empty() {
            "none".to_owned()
        } else {
            used.join(", ")
        }
    );
    let _ = writeln!(p, "### Session Timeline\n\n{}\n", timeline(t));
}

/// skill-validator's timeline: one line per event, long texts cut, at most [`MAX_EVENTS`]
/// events (head and tail) and [`MAX_TIMELINE_CHARS`] characters.
pub fn timeline(t: &Trajectory) -> String {
    let mut events = Vec::new();
    for step in &t.steps {
        let text = step.message.text();
        match step.source {
            StepSource::User => events.push(format!("[USER] {}", cut(&text, 200))),
            StepSource::System => {}
            StepSource::Agent => {
                let names: Vec<&str> = step
                    .calls()
                    .iter()
                    .map(|c| c.function_name.as_str())
                    .collect();
                let called = if names.is_empty() {
                    String::new()
                } else {
                    format!(" (called tools: {})", names.join(", "))
                };
                if !text.trim().is_empty() || !names.is_empty() {
                    events.push(format!("[ASSISTANT] {}{called}", cut(&text, 400)));
                }
                for call in step.calls() {
                    let args = serde_json::Value::Object(call.arguments.clone()).to_string();
                    events.push(format!(
                        "[TOOL START] {}: {}",
                        call.function_name,
                        cut(&args, 200)
                    ));
                }
                for result in step.observation.iter().flat_map(|o| &o.results) {
                    let content = result
                        .content
                        .as_ref()
                        .map(|c| c.text())
                        .unwrap_or_default();
                    events.push(format!("[TOOL OK] {}", cut(&content, 200)));
                }
            }
        }
    }
    if events.len() > MAX_EVENTS {
        let omitted = events.len() - MAX_EVENTS;
        let tail = events.split_off(events.len() - MAX_EVENTS / 2);
        events.truncate(MAX_EVENTS / 2);
        events.push(format!("… ({omitted} events omitted) …"));
        events.extend(tail);
    }
    cut(&events.join("\n"), MAX_TIMELINE_CHARS)
}

/// At most `max` characters of `text`, single-line events kept on one line.
fn cut(text: &str, max: usize) -> String {
    let mut s: String = text.chars().take(max).collect();
    if text.chars().count() > max {
        s.push('…');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evalspec::{FileKind, parse_suite};
    use crate::trajectory::{Agent, Step, ToolCall};

    fn case() -> Case {
        let yaml = "scenarios:\n  - name: a\n    prompt: Make a CSV\n    rubric:\n      - Has a header row\n";
        parse_suite(FileKind::EvalYaml, yaml, "t")
            .unwrap()
            .cases
            .remove(0)
    }

    #[test]
    fn independent_prompt_has_task_output_timeline_and_rubric() {
        let mut t = Trajectory::new(Agent {
            name: "a".into(),
            version: "1".into(),
            model_name: None,
            tool_definitions: None,
            extra: None,
        });
        t.push(Step::new(0, StepSource::User, "Make a CSV"));
        let mut s = Step::new(0, StepSource::Agent, "writing");
        s.tool_calls = Some(vec![ToolCall {
            tool_call_id: "1".into(),
            function_name: "Write".into(),
            arguments: serde_json::json!({"file_path": "a.csv"})
                .as_object()
                .cloned()
                .unwrap(),
            extra: None,
        }]);
        t.push(s);
        let p = independent_user(
            &case(),
            Response {
                output: "done",
                trajectory: Some(&t),
            },
        );
        for part in [
            "## Task Prompt\n\nMake a CSV",
            "### Output\n\ndone",
            "- Tools used: Write ×1",
            "[ASSISTANT] writing (called tools: Write)",
            "[TOOL START] Write: {\"file_path\":\"a.csv\"}",
            "## Rubric Criteria\n\n1. Has a header row",
        ] {
            assert!(p.contains(part), "missing {part:?} in\n{p}");
        }
        assert!(!p.contains("## Expectations"));
    }

    #[test]
    fn cases_without_rubric_get_the_default_pair() {
        let mut c = case();
        c.judged.criteria.clear();
        assert_eq!(rubric(&c), DEFAULT_RUBRIC);
    }

    #[test]
    fn long_timelines_keep_head_and_tail() {
        let mut t = Trajectory::new(Agent {
            name: "a".into(),
            version: "1".into(),
            model_name: None,
            tool_definitions: None,
            extra: None,
        });
        for i in 0..200 {
            t.push(Step::new(0, StepSource::Agent, format!("step {i}")));
        }
        let tl = timeline(&t);
        assert!(tl.contains("[ASSISTANT] step 0\n") && tl.contains("[ASSISTANT] step 199"));
        assert!(tl.contains("… (120 events omitted) …"));
        assert!(!tl.contains("step 100\n"));
    }
}
