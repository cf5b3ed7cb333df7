use std::sync::Mutex;
use std::task::{Context, Waker};

use super::*;
use crate::evalspec::{FileKind, parse_suite};

/// A judge answering from a list of replies (or errors), one per call, recording prompts.
struct Scripted {
    replies: Mutex<Vec<Result<String, String>>>,
    asked: Mutex<Vec<String>>,
}

impl Scripted {
    fn new(replies: Vec<Result<&str, &str>>) -> Scripted {
        Scripted {
            replies: Mutex::new(
                replies
                    .into_iter()
                    .rev()
                    .map(|r| r.map(str::to_owned).map_err(str::to_owned))
                    .collect(),
            ),
            asked: Mutex::new(Vec::new()),
        }
    }
}

impl JudgeClient for Scripted {
    fn model(&self) -> &str {
        "judge-1"
    }
    fn ask<'a>(&'a self, _system: &'a str, user: &'a str) -> JudgeFuture<'a> {
        self.asked.lock().unwrap().push(user.to_owned());
        let reply = self
            .replies
            .lock()
            .unwrap()
            .pop()
            .unwrap_or(Err("no more replies".into()));
        Box::pin(async move { reply })
    }
}

fn block_on<F: Future>(f: F) -> F::Output {
    let mut f = Box::pin(f);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
    }
}

fn case() -> Case {
    let yaml = "scenarios:\n  - name: a\n    prompt: Make a CSV\n    rubric:\n      - Has a header\n      - Numbers are right\n";
    parse_suite(FileKind::EvalYaml, yaml, "t")
        .unwrap()
        .cases
        .remove(0)
}

fn response(output: &str) -> Response<'_> {
    Response {
        output,
        trajectory: None,
    }
}

#[test]
fn independent_scores_are_parsed_clamped_and_retried() {
    let judge = Scripted::new(vec![
        Err("HTTP 429"),
        Ok("no json here"),
        Ok(
            "```json\n{\"rubric_scores\": [{\"criterion\": \"Has a header\", \"score\": 7}, {\"score\": \"2\"}], \"overall_score\": 4, \"overall_reasoning\": \"ok\"}\n```",
        ),
    ]);
    let s = block_on(judge_independent(&judge, &case(), response("csv"))).unwrap();
    assert_eq!(s.overall, 4.0);
    assert_eq!(s.rubric.len(), 2);
    assert_eq!((s.rubric[0].score, s.rubric[1].score), (5.0, 2.0));
    assert_eq!(s.rubric[1].criterion, "Numbers are right");
    assert_eq!(s.goal, None, "no expected output, no goal score");
    assert_eq!(judge.asked.lock().unwrap().len(), 3);
}

#[test]
fn a_judge_that_keeps_failing_is_a_judge_failure() {
    let judge = Scripted::new(vec![Err("HTTP 500"), Err("HTTP 500"), Ok("{\"score\": 1}")]);
    let e = block_on(judge_independent(&judge, &case(), response("csv"))).unwrap_err();
    assert_eq!(e.model, "judge-1");
    assert!(
        e.message
            .contains("expected a JSON object with overall_score"),
        "{e}"
    );
    assert!(e.message.contains("after 3 attempts"), "{e}");
}

fn pairwise_reply(overall: &str, first: &str) -> String {
    format!(
        "{{\"rubric_results\": [{{\"criterion\": \"Has a header\", \"winner\": \"{first}\", \"magnitude\": \"much_better\"}}, {{\"winner\": \"tie\", \"magnitude\": \"equal\"}}], \"overall_winner\": \"{overall}\", \"overall_magnitude\": \"Much better\", \"overall_reasoning\": \"r\"}}"
    )
}

#[test]
fn consistent_orderings_keep_the_verdict() {
    // Forward A = baseline: B (skill) wins; reverse A = skill: A wins. Same winner: skill.
    let f = pairwise_reply("B", "B");
    let r = pairwise_reply("A", "A");
    let judge = Scripted::new(vec![Ok(&f), Ok(&r)]);
    let p = block_on(judge_pairwise(
        &judge,
        &case(),
        response("b"),
        response("s"),
    ))
    .unwrap();
    assert!(p.consistent());
    let overall = p.overall.unwrap();
    assert_eq!(
        (overall.winner, overall.magnitude),
        (Winner::Skill, Magnitude::MuchBetter)
    );
    let compat = p.compat_judgment().unwrap();
    assert_eq!(compat.rubric[0].winner, Winner::Skill);
    assert_eq!(compat.rubric[1].winner, Winner::Tie);
    let asked = judge.asked.lock().unwrap();
    let a_first = |u: &str, text: &str| u.find("## Response A").unwrap() < u.find(text).unwrap();
    assert!(
        asked
            .iter()
            .any(|u| u.contains("### Output\n\nb") && a_first(u, "b\n"))
    );
}

#[test]
fn inconsistent_orderings_fall_back_instead_of_tying_everything() {
    // Both orderings prefer whatever is shown first: position bias.
    let f = pairwise_reply("A", "A");
    let r = pairwise_reply("A", "B");
    let judge = Scripted::new(vec![Ok(&f), Ok(&r)]);
    let p = block_on(judge_pairwise(
        &judge,
        &case(),
        response("b"),
        response("s"),
    ))
    .unwrap();
    assert!(!p.consistent());
    assert_eq!(
        p.compat_judgment(),
        None,
        "the compat score uses independent scores"
    );
    assert_eq!(
        PairwiseResult::inconsistency(p.forward, p.reverse),
        "Position-swap inconsistent: forward=baseline, reverse=skill"
    );
    // The first criterion: forward A (baseline), reverse B (baseline): consistent.
    assert_eq!(p.criteria[0].verdict.unwrap().winner, Winner::Baseline);
}

#[test]
fn expectations_and_goal_scores_are_read_in_case_order() {
    let json = r#"[{"id": 1, "prompt": "Do X", "expected_output": "X done", "assertions": ["Says X", "Mentions Y"]}]"#;
    let c = parse_suite(FileKind::EvalsJson, json, "evals/evals.json")
        .unwrap()
        .cases
        .remove(0);
    let reply = r#"{"overall_score": 5, "goal_score": 4, "expectations": [{"satisfied": "yes"}, {"satisfied": false}]}"#;
    let s = parse_independent(reply, &c).unwrap();
    assert_eq!(s.goal, Some(4.0));
    let got: Vec<(&str, bool)> = s
        .expectations
        .iter()
        .map(|e| (e.expectation.as_str(), e.satisfied))
        .collect();
    assert_eq!(got, vec![("Says X", true), ("Mentions Y", false)]);
}
