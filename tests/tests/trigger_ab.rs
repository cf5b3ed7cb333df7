//! `skillwatch trigger --description-file`: the same queries with an alternative description,
//! paired by query. A scripted model that reads the listing picks the skill for every PDF
//! query when the alternative is listed and for half of them with the skill's own, so the
//! change and its interval are known exactly.

use std::sync::Arc;

use serde_json::{Value, json};
use skillwatch_tests::mock::{self, MockUsage, ModelReply, ModelRequest, Script};
use skillwatch_tests::{code, skillwatch, stderr, stdout};

use crate::trigger_history::{fixture, trigger};

const ALTERNATIVE: &str = "Splits, merges and reads any PDF: every .pdf task.";

fn listing_sensitive() -> Script {
    Arc::new(|req: &ModelRequest| {
        let usage = MockUsage::tokens(400, 10);
        if req.turn > 0 {
            return ModelReply::text("Done.", usage);
        }
        let alternative = req.mentions(&format!("- pdf-tools: {ALTERNATIVE}"));
        let own = req.mentions("- pdf-tools: Splits and merges PDF files. Use for PDFs.");
        let pdf = (0..8).find(|i| req.mentions(&format!("report-{i}.pdf")));
        let picks = match pdf {
            Some(i) => alternative || (own && i < 4),
            None => false,
        };
        if picks {
            ModelReply::tool("load_skill", json!({"name": "pdf-tools"}), usage)
        } else {
            ModelReply::text("Here is how.", usage)
        }
    })
}

#[test]
fn an_alternative_description_is_compared_query_by_query_with_an_interval() {
    let tmp = tempfile::tempdir().unwrap();
    let skill = fixture(tmp.path());
    let original = std::fs::read_to_string(skill.join("SKILL.md")).unwrap();
    let alt = tmp.path().join("alt.txt");
    std::fs::write(&alt, format!("{ALTERNATIVE}\n")).unwrap();
    let db = tmp.path().join("history.sqlite3");
    let server = mock::openai_chat::server(listing_sensitive());
    let run = |json: bool| {
        let mut extra = vec!["--description-file", alt.to_str().unwrap()];
        if json {
            extra.push("--json");
        }
        trigger(&skill, &server, "m", &db, &extra)
    };
    let out = run(true);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(report["reference"]["summary"]["recall"]["hits"], 4);
    assert_eq!(report["alternative"]["summary"]["recall"]["hits"], 8);
    assert_eq!(report["alternative"]["summary"]["false_trigger"]["hits"], 0);
    let recall = &report["change"]["recall"];
    assert_eq!(recall["queries"], 8);
    // Four of eight queries moved from 0 to 1, four stayed at 1: Agresti-Min's interval
    // with one run per query: centre 4/10, variance (4 + 1)/10 - 0.16.
    let i = &recall["interval"];
    assert_eq!(i["estimate"], 0.5);
    let half = 1.959963984540054 * ((0.5f64 - 0.16) / 10.0).sqrt();
    assert!(
        (i["low"].as_f64().unwrap() - (0.4 - half)).abs() < 1e-9,
        "{i}"
    );
    assert!(
        (i["high"].as_f64().unwrap() - (0.4 + half)).abs() < 1e-9,
        "{i}"
    );
    assert_eq!(i["method"]["kind"], "paired_adjusted_wald");
    assert_eq!(
        report["change"]["false_trigger"]["interval"]["estimate"],
        0.0
    );
    // The skill itself is untouched and neither arm is in the history.
    assert_eq!(
        std::fs::read_to_string(skill.join("SKILL.md")).unwrap(),
        original
    );
    let history = skillwatch(
        &["history", "pdf-tools", "--db", db.to_str().unwrap()],
        None,
    );
    assert_ne!(code(&history), 0, "no run recorded: {}", stdout(&history));

    let text = run(false);
    assert_eq!(code(&text), 0, "{}", stderr(&text));
    let text = stdout(&text);
    assert!(
        text.contains("Recall          50% -> 100%  +50 points"),
        "{text}"
    );
}
