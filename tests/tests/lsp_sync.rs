//! End-to-end: the server's picture of a document never drifts from the editor's. A batch of
//! changes with one bad change applies none of them (and says so); a lone `\r` is a line break
//! as the LSP specification says; a save is handled (re-checked, no warning); `exit` sent right
//! after `shutdown` still gets `shutdown` answered and a clean exit. Closing documents clears
//! their diagnostics and leaves the skill's other documents checked, and the server goes on
//! after it gives the closed documents' memory back.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use skillwatch_tests::lsp::LspClient;
use skillwatch_tests::wait;

fn skill_dir(root: &Path, name: &str) -> PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn codes(diagnostics: &[Value]) -> Vec<String> {
    diagnostics
        .iter()
        .map(|d| d["code"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn range(l0: u32, c0: u32, l1: u32, c1: u32) -> Value {
    json!({"start": {"line": l0, "character": c0}, "end": {"line": l1, "character": c1}})
}

const SKILL: &str = "---\nname: demo\ndescription: Turns CSV files into Markdown tables. Use when the user asks for a table from a CSV.\n---\n# Demo\n\nRead the CSV and print a table.\n";

#[test]
fn a_batch_with_one_bad_change_applies_none_of_it() {
    let root = tempfile::tempdir().unwrap();
    let dir = skill_dir(root.path(), "demo");
    let mut client = LspClient::initialized(Value::Null);
    let uri = client.open(&dir.join("SKILL.md"), "markdown", SKILL);
    let first = client.diagnostics(&uri, Some(1));
    assert!(!codes(&first).iter().any(|c| c == "SW108"), "{first:#?}");

    // change 1 would break the name (SW108: not the folder's name); change 2 is reversed
    client.notify(
        "textDocument/didChange",
        json!({
            "textDocument": {"uri": uri, "version": 2},
            "contentChanges": [
                {"range": range(1, 6, 1, 10), "text": "other"},
                {"range": range(6, 9, 6, 0), "text": "x"}
            ]
        }),
    );
    let refused = client.notification("window/showMessage", |p| p["type"] == 1);
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("refused an edit"),
        "{refused}"
    );
    // the next edit, on the text both sides agree on, lands where the editor put it
    client.notify(
        "textDocument/didChange",
        json!({
            "textDocument": {"uri": uri, "version": 3},
            "contentChanges": [{"range": range(6, 0, 6, 4), "text": "Open"}]
        }),
    );
    let after = client.diagnostics(&uri, Some(3));
    assert!(
        !codes(&after).iter().any(|c| c == "SW108"),
        "half of the refused batch was applied: {after:#?}"
    );
    // the server's text is the editor's: a fix offered now edits the right characters
    let hover = client.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": {"line": 1, "character": 2}}),
    );
    assert!(
        hover["contents"]["value"]
            .as_str()
            .unwrap()
            .contains("**`name`**")
    );
    assert!(client.shutdown().success());
}

#[test]
fn a_lone_carriage_return_is_a_line_break() {
    let root = tempfile::tempdir().unwrap();
    let dir = skill_dir(root.path(), "demo");
    let mut client = LspClient::initialized(Value::Null);
    // line 8 (0-based) holds the link: line 7 ends with a lone \r
    let text = format!("{SKILL}intro 😀\rSee [guide](references/missing.md) now.\n");
    let uri = client.open(&dir.join("SKILL.md"), "markdown", &text);
    let found = client.diagnostics(&uri, Some(1));
    let missing = found
        .iter()
        .find(|d| d["code"] == "SW211")
        .unwrap_or_else(|| panic!("no SW211 in {found:#?}"));
    assert_eq!(missing["range"], range(8, 12, 8, 33), "{missing:#}");

    // an edit at an LSP position after the lone \r lands there: `guide` becomes `Guide`
    client.notify(
        "textDocument/didChange",
        json!({
            "textDocument": {"uri": uri, "version": 2},
            "contentChanges": [{"range": range(8, 5, 8, 6), "text": "G"}]
        }),
    );
    let after = client.diagnostics(&uri, Some(2));
    let missing = after.iter().find(|d| d["code"] == "SW211").unwrap();
    assert_eq!(missing["range"], range(8, 12, 8, 33), "{missing:#}");
    let hover = client.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": {"line": 1, "character": 1}}),
    );
    assert!(
        hover["contents"]["value"]
            .as_str()
            .unwrap()
            .contains("`name`")
    );
    assert!(client.shutdown().success());
}

#[test]
fn a_save_is_checked_again_without_a_warning() {
    let root = tempfile::tempdir().unwrap();
    let dir = skill_dir(root.path(), "demo");
    let mut client = LspClient::initialized(Value::Null);
    let text = format!("{SKILL}See [guide](references/guide.md).\n");
    let path = dir.join("SKILL.md");
    std::fs::write(&path, &text).unwrap();
    let uri = client.open(&path, "markdown", &text);
    let before = client.diagnostics(&uri, Some(1));
    assert!(codes(&before).contains(&"SW211".to_string()), "{before:#?}");

    // the referenced file is saved beside it; saving SKILL.md checks it again
    std::fs::create_dir_all(dir.join("references")).unwrap();
    std::fs::write(dir.join("references/guide.md"), "# Guide\n").unwrap();
    client.notify(
        "textDocument/didSave",
        json!({"textDocument": {"uri": uri}}),
    );
    let after = client.diagnostics(&uri, Some(1));
    assert!(!codes(&after).contains(&"SW211".to_string()), "{after:#?}");
    client.request("shutdown", Value::Null);
    client.notify("exit", Value::Null);
    assert_eq!(client.wait_exit().code(), Some(0));
    let log = client.stderr_at_exit();
    assert!(
        !log.contains("WARN") && !log.contains("not implemented"),
        "{log}"
    );
}

#[test]
fn exit_right_after_shutdown_still_answers_shutdown() {
    for round in 0..12 {
        let mut client = LspClient::initialized(Value::Null);
        // both at once, as editors do on quit: no waiting for the reply in between
        let id = client.send_request("shutdown", Value::Null);
        client.notify("exit", Value::Null);
        let reply = client.response(id);
        assert_eq!(reply.get("error"), None, "round {round}: {reply}");
        assert_eq!(reply["result"], Value::Null, "round {round}");
        assert_eq!(client.wait_exit().code(), Some(0), "round {round}");
    }
}

/// Two documents of one skill: closing one clears its diagnostics and leaves the other checked;
/// after the last closes and the server has given the memory back (a moment later), the
/// skill opened again is checked again.
#[test]
fn closing_documents_clears_them_and_keeps_the_rest() {
    let root = tempfile::tempdir().unwrap();
    let dir = skill_dir(root.path(), "demo");
    std::fs::create_dir_all(dir.join("tests")).unwrap();
    let skill = SKILL.replace("name: demo", "name: other"); // SW108: not the folder's name
    let eval = "scenarios:\n  - name: a\n    prompt: p\n    assertions:\n      - type: output_matches\n        pattern: \"([\"\n";
    // (the server's debug line says when it has given the memory back)
    let mut client = LspClient::spawn_with_env(&[("SKILLWATCH_LOG", "info,skillwatch_lsp=debug")]);
    client.initialize(Value::Null);
    let skill_uri = client.open(&dir.join("SKILL.md"), "markdown", &skill);
    assert!(codes(&client.diagnostics(&skill_uri, Some(1))).contains(&"SW108".to_string()));
    let eval_uri = client.open(&dir.join("tests/eval.yaml"), "yaml", eval);
    let bad_pattern = |d: &[Value]| codes(d).iter().any(|c| c.starts_with("SW4"));
    assert!(bad_pattern(&client.diagnostics(&eval_uri, Some(1))));

    let cleared = |client: &mut LspClient, uri: &str| {
        client.notify(
            "textDocument/didClose",
            json!({"textDocument": {"uri": uri}}),
        );
        client.notification("textDocument/publishDiagnostics", |p| {
            p["uri"] == uri && p["diagnostics"].as_array().is_some_and(Vec::is_empty)
        });
    };
    cleared(&mut client, &skill_uri);
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": eval_uri, "version": 2}, "contentChanges": [{"text": eval}]}),
    );
    assert!(bad_pattern(&client.diagnostics(&eval_uri, Some(2))));
    cleared(&mut client, &eval_uri);

    // once the server has given the closed documents' memory back, after the second close
    wait::until("the server to give the memory back", || {
        let log = client.stderr();
        wait::when(log.contains("gave free memory back closes=2"), || log)
    });
    let reopened = client.open(&dir.join("SKILL.md"), "markdown", &skill);
    assert!(codes(&client.diagnostics(&reopened, Some(1))).contains(&"SW108".to_string()));
    assert!(client.shutdown().success());
}
