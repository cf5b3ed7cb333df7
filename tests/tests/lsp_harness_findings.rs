//! On save in the editor (the real LSP server over stdio), a description over a targeted
//! harness's limit gives that harness's finding, with the harness's name and the version its
//! loader profile was measured on; a harness the skill's skillwatch.toml does not target
//! says nothing.

use serde_json::{Value, json};
use skillwatch_tests::lsp::LspClient;

fn skill(description: &str) -> String {
    format!("---\nname: demo\ndescription: {description}\n---\n# Demo\n\nFormat the table.\n")
}

#[test]
fn a_description_over_a_targeted_harness_limit_is_reported_on_save_with_its_version() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(
        root.path().join("skillwatch.toml"),
        "[check]\nharnesses = [\"codex\", \"copilot-cli\"]\n",
    )
    .unwrap();
    let dir = root.path().join("demo");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("SKILL.md");
    let short = skill("Formats Markdown tables. Use when asked to format a table.");
    std::fs::write(&path, &short).unwrap();
    let mut client = LspClient::initialized(Value::Null);
    let uri = client.open(&path, "markdown", &short);
    let before = client.diagnostics(&uri, Some(1));
    assert!(
        before
            .iter()
            .all(|d| d["code"] != "SW223" && d["code"] != "SW224"),
        "{before:#?}"
    );

    let long: String =
        (0..200).map(|i| format!("Long{i:04} ")).collect::<String>()[..1100].to_string();
    let text = skill(&long);
    std::fs::write(&path, &text).unwrap();
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": text}]}),
    );
    client.notify(
        "textDocument/didSave",
        json!({"textDocument": {"uri": uri}}),
    );
    let after = client.diagnostics(&uri, Some(2));
    let message = |code: &str| -> Vec<String> {
        after
            .iter()
            .filter(|d| d["code"] == code)
            .map(|d| d["message"].as_str().unwrap().to_string())
            .collect()
    };
    let dropped = message("SW224");
    assert_eq!(dropped.len(), 1, "{after:#?}");
    assert!(
        dropped[0].starts_with("Copilot CLI 1.0.102 leaves this skill out of its listing")
            && dropped[0].contains("1,100 characters, over the 1,024"),
        "{dropped:?}"
    );
    let cut = message("SW223");
    assert_eq!(
        cut.len(),
        1,
        "Codex only (Claude Code is not targeted): {after:#?}"
    );
    assert!(
        cut[0]
            .starts_with("Codex 0.169.0 cuts this description at 1,021 characters (it has 1,100)"),
        "{cut:?}"
    );
    let range = &after.iter().find(|d| d["code"] == "SW224").unwrap()["range"];
    assert_eq!(range["start"]["line"], 2, "on the description: {range}");
    assert!(client.shutdown().success());
}
