//! End-to-end: `skillwatch lsp` over stdio publishes diagnostics on open and after incremental
//! changes with UTF-16 ranges, explains fields on hover, completes keys, and fixes `name`.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use skillwatch_core::skill::{Frontmatter, SkillDocument};
use skillwatch_tests::lsp::{LspClient, file_uri, utf16_position};
use skillwatch_tests::{skillwatch, stderr};

/// A skill folder named `name` with no files yet.
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

fn find<'a>(diagnostics: &'a [Value], code: &str) -> &'a Value {
    diagnostics
        .iter()
        .find(|d| d["code"] == code)
        .unwrap_or_else(|| panic!("no {code} in {diagnostics:#?}"))
}

/// The code action titled `title` the server offers for `diagnostic`.
fn quick_fix(client: &mut LspClient, uri: &str, diagnostic: &Value, title: &str) -> Value {
    let actions = client.request(
        "textDocument/codeAction",
        json!({
            "textDocument": {"uri": uri},
            "range": diagnostic["range"],
            "context": {"diagnostics": [diagnostic]}
        }),
    );
    actions
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["title"] == title)
        .unwrap_or_else(|| panic!("no `{title}` in {actions:#}"))
        .clone()
}

/// Send `edit` (from a code action) as version 2 of the document and return the diagnostics
/// published for it.
fn apply_edit(client: &mut LspClient, uri: &str, edit: &Value) -> Vec<Value> {
    client.notify(
        "textDocument/didChange",
        json!({
            "textDocument": {"uri": uri, "version": 2},
            "contentChanges": [{"range": edit["range"], "text": edit["newText"]}]
        }),
    );
    client.diagnostics(uri, Some(2))
}

fn range_json(text: &str, start: usize, end: usize) -> Value {
    let (l0, c0) = utf16_position(text, start);
    let (l1, c1) = utf16_position(text, end);
    json!({"start": {"line": l0, "character": c0}, "end": {"line": l1, "character": c1}})
}

#[test]
fn diagnostics_on_open_and_after_incremental_changes_use_utf16_ranges() {
    let root = tempfile::tempdir().unwrap();
    let dir = skill_dir(root.path(), "demo");
    // the wrong name sits after an emoji and an accented letter on the same line, so UTF-16,
    // character and byte columns all differ
    let text = "---\n{description: \"😀 é: pick me\", name: wrong}\n---\n# Demo\n";
    let mut client = LspClient::initialized(Value::Null);
    let uri = client.open(&dir.join("SKILL.md"), "markdown", text);

    let diagnostics = client.diagnostics(&uri, Some(1));
    let mismatch = find(&diagnostics, "SW108");
    let at = text.find("wrong").unwrap();
    assert_eq!(
        mismatch["range"],
        range_json(text, at, at + "wrong".len()),
        "{mismatch:#}"
    );
    assert_eq!(mismatch["severity"], 1);
    assert_eq!(mismatch["source"], "skillwatch");
    assert!(mismatch["message"].as_str().unwrap().contains("wrong"));

    // an incremental edit, addressed in UTF-16 units, replaces `wrong` with the folder name
    client.notify(
        "textDocument/didChange",
        json!({
            "textDocument": {"uri": uri, "version": 2},
            "contentChanges": [{"range": range_json(text, at, at + 5), "text": "demo"}]
        }),
    );
    let diagnostics = client.diagnostics(&uri, Some(2));
    assert!(
        !codes(&diagnostics).contains(&"SW108".to_string()),
        "{diagnostics:#?}"
    );

    // break the YAML after the emoji: the parser's error position arrives in UTF-16
    let edited = text.replace("wrong", "demo");
    let at = edited.find("pick").unwrap();
    client.notify(
        "textDocument/didChange",
        json!({
            "textDocument": {"uri": uri, "version": 3},
            "contentChanges": [{"range": range_json(&edited, at, at), "text": "\", x: [a}"}]
        }),
    );
    let diagnostics = client.diagnostics(&uri, Some(3));
    let mut changed = edited.clone();
    changed.insert_str(at, "\", x: [a}");
    let parsed = SkillDocument::parse(changed.clone());
    let Frontmatter::Invalid { error, .. } = &parsed.frontmatter else {
        panic!("expected invalid YAML: {changed}")
    };
    let invalid = find(&diagnostics, "SW102");
    assert_eq!(
        invalid["range"],
        range_json(&changed, error.span.start, error.span.end),
        "{invalid:#}"
    );
    // the error sits after the emoji on its line, where UTF-16 and byte columns differ
    assert_eq!(invalid["range"]["start"]["line"], 1, "{invalid:#}");
    let emoji = changed.find('😀').unwrap();
    assert!(error.span.start > emoji, "{invalid:#}");
    assert!(client.shutdown().success());
}

#[test]
fn emoji_in_a_name_gives_a_utf16_end_column() {
    let root = tempfile::tempdir().unwrap();
    let dir = skill_dir(root.path(), "demo");
    let text = "---\nname: \"😀é-x\"\ndescription: d\n---\n";
    let mut client = LspClient::initialized(Value::Null);
    let uri = client.open(&dir.join("SKILL.md"), "markdown", text);
    let diagnostics = client.diagnostics(&uri, Some(1));
    let format = find(&diagnostics, "SW106");
    let start = text.find('"').unwrap();
    let end = text[start + 1..].find('"').unwrap() + start + 2;
    assert_eq!(format["range"], range_json(text, start, end), "{format:#}");
    // 6 + 7 UTF-16 units, not 6 + 10 bytes or 6 + 6 characters
    assert_eq!(format["range"]["end"]["character"], 13);
    assert!(client.shutdown().success());
}

#[test]
fn every_diagnostic_links_to_its_rules_section() {
    let root = tempfile::tempdir().unwrap();
    let dir = skill_dir(root.path(), "demo");
    let text = "---\nname: Demo Skill\ndescription: d: e\n---\n";
    let mut client = LspClient::initialized(Value::Null);
    let uri = client.open(&dir.join("SKILL.md"), "markdown", text);
    let diagnostics = client.diagnostics(&uri, Some(1));
    assert!(!diagnostics.is_empty());
    let page = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/rules.md"),
    )
    .unwrap();
    for d in &diagnostics {
        let href = d["codeDescription"]["href"]
            .as_str()
            .unwrap_or_else(|| panic!("{d:#}"));
        let (address, anchor) = href.split_once('#').unwrap();
        assert!(address.ends_with("/docs/rules.md"), "{href}");
        let code = d["code"].as_str().unwrap();
        assert!(anchor.starts_with(&code.to_ascii_lowercase()), "{href}");
        // the section is on the page, under the heading GitHub makes that anchor of
        let name = &anchor[code.len() + 1..];
        assert!(page.contains(&format!("\n## {code} {name}\n")), "{href}");
    }
    assert!(client.shutdown().success());
}

#[test]
fn code_action_quotes_a_value_whose_colon_broke_the_yaml() {
    let root = tempfile::tempdir().unwrap();
    let dir = skill_dir(root.path(), "pdf-tools");
    let text = "---\nname: pdf-tools\ndescription: Extracts tables. Use when: a PDF has tables\n---\nBody\n";
    let mut client = LspClient::initialized(Value::Null);
    let uri = client.open(&dir.join("SKILL.md"), "markdown", text);
    let diagnostics = client.diagnostics(&uri, Some(1));
    let invalid = find(&diagnostics, "SW102").clone();
    assert!(
        invalid["message"]
            .as_str()
            .unwrap()
            .contains("which YAML reads as a nested mapping: quote it"),
        "{invalid:#}"
    );
    // The range covers the offending colon, so the editor draws it.
    let colon = text.find("when:").unwrap() + 4;
    assert_eq!(invalid["range"], range_json(text, colon, colon + 1));
    let action = quick_fix(
        &mut client,
        &uri,
        &invalid,
        "Quote the value of `description`",
    );
    let edits = action["edit"]["changes"][&uri].as_array().unwrap();
    let value = "Extracts tables. Use when: a PDF has tables";
    let at = text.find(value).unwrap();
    assert_eq!(edits[0]["range"], range_json(text, at, at + value.len()));
    assert_eq!(edits[0]["newText"], format!("'{value}'"));

    // applying the edit clears the finding
    let diagnostics = apply_edit(&mut client, &uri, &edits[0]);
    assert!(
        !codes(&diagnostics).contains(&"SW102".to_string()),
        "{diagnostics:#?}"
    );
    assert!(client.shutdown().success());
}

#[test]
fn code_action_sets_the_name_to_the_folder_name() {
    let root = tempfile::tempdir().unwrap();
    let dir = skill_dir(root.path(), "pdf-tools");
    let text = "---\nname: pdf-toolz\ndescription: Extracts text from PDF files.\n---\nBody\n";
    let mut client = LspClient::initialized(Value::Null);
    let uri = client.open(&dir.join("SKILL.md"), "markdown", text);
    let diagnostics = client.diagnostics(&uri, Some(1));
    let mismatch = find(&diagnostics, "SW108").clone();

    let action = quick_fix(&mut client, &uri, &mismatch, "Set name to `pdf-tools`");
    assert_eq!(action["kind"], "quickfix");
    let edits = action["edit"]["changes"][&uri].as_array().unwrap();
    assert_eq!(edits.len(), 1);
    let at = text.find("pdf-toolz").unwrap();
    assert_eq!(
        edits[0]["range"],
        range_json(text, at, at + "pdf-toolz".len())
    );
    assert_eq!(edits[0]["newText"], "pdf-tools");

    // applying the edit clears the finding
    let diagnostics = apply_edit(&mut client, &uri, &edits[0]);
    assert!(
        !codes(&diagnostics).contains(&"SW108".to_string()),
        "{diagnostics:#?}"
    );
    assert!(client.shutdown().success());
}

#[test]
fn ignore_comments_silence_one_line_and_unused_ones_are_flagged() {
    let root = tempfile::tempdir().unwrap();
    let dir = skill_dir(root.path(), "inv");
    let text = "---\nname: inv\ndescription: Extracts tables from PDF invoices. Use when the \
                user asks for invoice tables.\n---\n# Invoices\n\nRead https://billing.acme.dev/api \
                for the list.\n";
    let mut client = LspClient::initialized(Value::Null);
    let uri = client.open(&dir.join("SKILL.md"), "markdown", text);
    let diagnostics = client.diagnostics(&uri, Some(1));
    let url = find(&diagnostics, "SW307").clone();

    let action = quick_fix(
        &mut client,
        &uri,
        &url,
        "Ignore SW307 on this line (skillwatch-ignore comment)",
    );
    assert_eq!(action["kind"], "quickfix");
    let edit = &action["edit"]["changes"][&uri][0];
    assert_eq!(edit["newText"], "<!-- skillwatch-ignore SW307 -->\n");
    let line = text.find("Read https").unwrap();
    assert_eq!(edit["range"], range_json(text, line, line));
    let after = apply_edit(&mut client, &uri, edit);
    assert!(!codes(&after).contains(&"SW307".to_string()), "{after:#?}");
    assert!(!codes(&after).contains(&"SW002".to_string()), "{after:#?}");

    // once the link goes, the comment silences nothing: SW002, whose fix removes the line
    let link = "https://billing.acme.dev/api";
    let mut edited = text.to_string();
    edited.insert_str(line, "<!-- skillwatch-ignore SW307 -->\n");
    let start = edited.find(link).unwrap();
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 3}, "contentChanges": [
            {"range": range_json(&edited, start, start + link.len()), "text": "the billing API"}]}),
    );
    let unused = client.diagnostics(&uri, Some(3));
    let stale = find(&unused, "SW002").clone();
    assert_eq!(stale["severity"], 2, "a warning: {stale}");
    assert_eq!(stale["tags"], json!([1]), "faded as unnecessary: {stale}");
    let edited = edited.replace(link, "the billing API");
    let removal = quick_fix(&mut client, &uri, &stale, "Remove the unused id");
    let edit = &removal["edit"]["changes"][&uri][0];
    let comment = edited.find("<!--").unwrap();
    assert_eq!(
        edit["range"],
        range_json(&edited, comment, edited.find("Read the").unwrap())
    );
    assert_eq!(edit["newText"], "");
    assert!(client.shutdown().success());
}

/// The code actions the server offers for the whole of `uri` when the client asks only for
/// `kinds`.
fn actions_of_kinds(client: &mut LspClient, uri: &str, kinds: &[&str]) -> Vec<Value> {
    let everywhere =
        json!({"start": {"line": 0, "character": 0}, "end": {"line": 99, "character": 0}});
    let actions = client.request(
        "textDocument/codeAction",
        json!({
            "textDocument": {"uri": uri},
            "range": everywhere,
            "context": {"diagnostics": [], "only": kinds}
        }),
    );
    actions.as_array().unwrap().clone()
}

#[test]
fn fix_all_applies_every_round_in_one_edit_as_check_fix_does() {
    let root = tempfile::tempdir().unwrap();
    let dir = skill_dir(root.path(), "inv");
    let text = "---\nname: Inv\ndescription: Extracts tables from PDF invoices. Use when the \
                user asks for invoice tables.\nversion: 1.2.0\ntags: [billing, pdf]\n---\nBody\n";
    let mut client = LspClient::initialized(Value::Null);
    let uri = client.open(&dir.join("SKILL.md"), "markdown", text);
    let diagnostics = client.diagnostics(&uri, Some(1));
    for code in ["SW106", "SW116", "SW120"] {
        find(&diagnostics, code);
    }
    let quick_only = actions_of_kinds(&mut client, &uri, &["quickfix"]);
    assert!(!quick_only.is_empty());
    assert!(
        quick_only.iter().all(|a| a["kind"] == "quickfix"),
        "{quick_only:#?}"
    );

    // the fixes of `tags` overlap (make it a block list, move it under metadata): the second
    // waits for a round on the fixed text, and the action holds both rounds
    let actions = actions_of_kinds(&mut client, &uri, &["source.fixAll"]);
    assert_eq!(actions.len(), 1, "{actions:#?}");
    let action = &actions[0];
    assert_eq!(action["kind"], "source.fixAll.skillwatch");
    assert_eq!(action["title"], "Fix all skillwatch findings (4 fixes)");
    let edits = action["edit"]["changes"][&uri].as_array().unwrap();
    assert_eq!(edits.len(), 1, "one edit over the changed part: {edits:#?}");
    // it starts at the first change (line 2, `name`), not at the top of the file
    assert_eq!(
        edits[0]["range"]["start"],
        json!({"line": 1, "character": 6})
    );
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [
            {"range": edits[0]["range"], "text": edits[0]["newText"]}]}),
    );
    let left = codes(&client.diagnostics(&uri, Some(2)));
    for code in ["SW106", "SW108", "SW116", "SW120"] {
        assert!(!left.contains(&code.to_string()), "{left:?}");
    }
    assert!(actions_of_kinds(&mut client, &uri, &["source.fixAll"]).is_empty());

    // the same text as `check --fix` writes
    let other = tempfile::tempdir().unwrap();
    let cli_dir = skill_dir(other.path(), "inv");
    std::fs::write(cli_dir.join("SKILL.md"), text).unwrap();
    let out = skillwatch(&["check", "--fix", cli_dir.to_str().unwrap()], None);
    assert!(
        stderr(&out).contains("fixed 4 findings in 1 file"),
        "{}",
        stderr(&out)
    );
    let mut expected = text.to_string();
    let (start, end) = (
        offset_of(text, &edits[0]["range"]["start"]),
        offset_of(text, &edits[0]["range"]["end"]),
    );
    expected.replace_range(start..end, edits[0]["newText"].as_str().unwrap());
    assert_eq!(
        std::fs::read_to_string(cli_dir.join("SKILL.md")).unwrap(),
        expected
    );
    assert!(client.shutdown().success());
}

/// The editor's fix-all keeps the author's text as `check --fix` does (the two reported
/// cases: fields joined on one line, misspelt keys), and a repair two rules propose is
/// offered once; one that would replace the author's name is offered, but not preferred.
#[test]
fn fix_all_keeps_the_authors_text_and_quick_fixes_appear_once() {
    let root = tempfile::tempdir().unwrap();
    let dir = skill_dir(root.path(), "pdf");
    let text = "---\nname: pdf-tools description: Extract text. Use when reading PDFs.\n\
                descripton: x\n---\nBody\n";
    let mut client = LspClient::initialized(Value::Null);
    let uri = client.open(&dir.join("SKILL.md"), "markdown", text);
    client.diagnostics(&uri, Some(1));
    let actions = actions_of_kinds(&mut client, &uri, &["source.fixAll"]);
    let edit = &actions[0]["edit"]["changes"][&uri][0];
    let mut fixed = text.to_string();
    let (start, end) = (
        offset_of(text, &edit["range"]["start"]),
        offset_of(text, &edit["range"]["end"]),
    );
    fixed.replace_range(start..end, edit["newText"].as_str().unwrap());
    assert_eq!(
        fixed,
        "---\nname: pdf-tools\ndescription: Extract text. Use when reading PDFs.\n\
         metadata:\n  descripton: \"x\"\n---\nBody\n",
        "the description on its own line, the name kept, the near miss of a field already set \
         moved under metadata"
    );
    let cli = tempfile::tempdir().unwrap();
    let cli_dir = skill_dir(cli.path(), "pdf");
    std::fs::write(cli_dir.join("SKILL.md"), text).unwrap();
    skillwatch(&["check", "--fix", cli_dir.to_str().unwrap()], None);
    assert_eq!(
        std::fs::read_to_string(cli_dir.join("SKILL.md")).unwrap(),
        fixed
    );

    // on the fixed text, SW106 and SW108 both propose `Set name to `pdf``: one action
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": "---\nname: PDF_Tools\ndescription: Extract text. Use when reading PDFs.\n---\nBody\n"}]}),
    );
    let diagnostics = client.diagnostics(&uri, Some(2));
    let sw106 = find(&diagnostics, "SW106").clone();
    let quick = actions_of_kinds(&mut client, &uri, &["quickfix"]);
    let set_name: Vec<&Value> = quick
        .iter()
        .filter(|a| a["title"].as_str().unwrap().starts_with("Set name"))
        .collect();
    assert_eq!(set_name.len(), 1, "{quick:#?}");
    assert_eq!(set_name[0]["diagnostics"].as_array().unwrap().len(), 2);
    assert_eq!(
        set_name[0]["isPreferred"], false,
        "it replaces `PDF_Tools` by `pdf`"
    );
    assert!(
        sw106["message"]
            .as_str()
            .unwrap()
            .contains("`--fix` leaves this to you")
    );
    assert!(client.shutdown().success());
}

/// The byte offset of an LSP position in ASCII `text`.
fn offset_of(text: &str, position: &Value) -> usize {
    let line = position["line"].as_u64().unwrap() as usize;
    let character = position["character"].as_u64().unwrap() as usize;
    text.split_inclusive('\n')
        .take(line)
        .map(str::len)
        .sum::<usize>()
        + character
}

#[test]
fn hover_explains_frontmatter_keys_and_eval_fields() {
    let root = tempfile::tempdir().unwrap();
    let dir = skill_dir(root.path(), "demo");
    let mut client = LspClient::initialized(Value::Null);
    let text = "---\nname: demo\ndescription: Does a thing.\n---\n";
    let uri = client.open(&dir.join("SKILL.md"), "markdown", text);
    let hover = client.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": {"line": 2, "character": 3}}),
    );
    let value = hover["contents"]["value"].as_str().unwrap();
    assert!(value.contains("**`description`**"), "{value}");
    assert!(value.contains("1-1024 characters"), "{value}");
    assert_eq!(hover["range"]["start"], json!({"line": 2, "character": 0}));
    assert_eq!(hover["range"]["end"], json!({"line": 2, "character": 11}));

    std::fs::create_dir_all(dir.join("tests")).unwrap();
    let eval = "scenarios:\n  - name: first\n    prompt: Do it\n    assertions:\n      - type: output_not_matches\n        pattern: \"error\"\n";
    let uri = client.open(&dir.join("tests/eval.yaml"), "yaml", eval);
    let hover = client.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": {"line": 4, "character": 16}}),
    );
    let value = hover["contents"]["value"].as_str().unwrap();
    assert!(
        value.contains("output_not_matches") && value.contains("`pattern`"),
        "{value}"
    );
    let nothing = client.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": {"line": 2, "character": 14}}),
    );
    assert_eq!(nothing, Value::Null);
    assert!(client.shutdown().success());
}

#[test]
fn completion_offers_missing_keys_assertion_types_and_their_fields() {
    let root = tempfile::tempdir().unwrap();
    let dir = skill_dir(root.path(), "demo");
    let mut client = LspClient::initialized(Value::Null);
    let text = "---\nname: demo\nde\n---\n";
    let uri = client.open(&dir.join("SKILL.md"), "markdown", text);
    let items = client.request(
        "textDocument/completion",
        json!({"textDocument": {"uri": uri}, "position": {"line": 2, "character": 2}}),
    );
    let labels: Vec<&str> = items
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, vec!["description"]);
    assert_eq!(items[0]["textEdit"]["newText"], "description: ");

    std::fs::create_dir_all(dir.join("tests")).unwrap();
    let eval = "scenarios:\n  - name: first\n    assertions:\n      - type: file_\n";
    let uri = client.open(&dir.join("tests/eval.yaml"), "yaml", eval);
    let items = client.request(
        "textDocument/completion",
        json!({"textDocument": {"uri": uri}, "position": {"line": 3, "character": 19}}),
    );
    let labels: Vec<&str> = items
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["label"].as_str().unwrap())
        .collect();
    assert_eq!(
        labels,
        vec![
            "file_exists",
            "file_not_exists",
            "file_contains",
            "file_not_contains"
        ]
    );
    // fields of the assertion being written: `file_contains` needs `path` and `value`
    client.notify(
        "textDocument/didChange",
        json!({
            "textDocument": {"uri": uri, "version": 2},
            "contentChanges": [{"text": "scenarios:\n  - name: first\n    assertions:\n      - type: file_contains\n        \n"}]
        }),
    );
    let items = client.request(
        "textDocument/completion",
        json!({"textDocument": {"uri": uri}, "position": {"line": 4, "character": 8}}),
    );
    let labels: Vec<&str> = items
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, vec!["type", "path", "value"]);
    assert!(client.shutdown().success());
}

/// The skills beside the edited one count: a sibling folder with the same `name` (SW220)
/// and one whose description says nearly the same (SW221), on the buffer's own text.
#[test]
fn skills_beside_the_edited_one_are_checked_as_a_set() {
    let root = tempfile::tempdir().unwrap();
    let description =
        "Generates synthetic body MRI volumes with NV-Generate. Not for production training data.";
    for (folder, name, described) in [
        (
            "mri-body",
            "mri",
            "Converts DICOM series to NIfTI files for later review.",
        ),
        (
            "mri-brain",
            "mri-brain",
            &description.replace("body", "brain"),
        ),
    ] {
        let dir = skill_dir(root.path(), folder);
        let text = format!("---\nname: {name}\ndescription: {described}\n---\nBody\n");
        std::fs::write(dir.join("SKILL.md"), text).unwrap();
    }
    let dir = root.path().join("mri");
    std::fs::create_dir(&dir).unwrap();
    let text = format!("---\nname: mri\ndescription: {description}\n---\nBody\n");
    let mut client = LspClient::initialized(Value::Null);
    let uri = client.open(&dir.join("SKILL.md"), "markdown", &text);
    let diagnostics = client.diagnostics(&uri, Some(1));
    let duplicate = find(&diagnostics, "SW220");
    assert!(
        duplicate["message"].as_str().unwrap().contains("mri-body"),
        "{duplicate}"
    );
    let similar = find(&diagnostics, "SW221");
    assert!(
        similar["message"]
            .as_str()
            .unwrap()
            .contains("`mri-brain`'s"),
        "{similar}"
    );
    // the buffer's own text counts, not the file on disk: a new description clears SW221
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": "---\nname: mri\ndescription: Plots training curves from TensorBoard logs into PNG files.\n---\nBody\n"}]}),
    );
    let left = codes(&client.diagnostics(&uri, Some(2)));
    assert!(
        left.contains(&"SW220".to_string()) && !left.contains(&"SW221".to_string()),
        "{left:?}"
    );
    assert!(client.shutdown().success());
}

#[test]
fn settings_silence_and_raise_rules() {
    let root = tempfile::tempdir().unwrap();
    let dir = skill_dir(root.path(), "demo");
    let text = "---\nname: other\ndescription: d\n---\n";
    let mut client = LspClient::initialized(json!({"rules": {"SW108": "off"}}));
    let uri = client.open(&dir.join("SKILL.md"), "markdown", text);
    let diagnostics = client.diagnostics(&uri, Some(1));
    assert!(
        !codes(&diagnostics).contains(&"SW108".to_string()),
        "{diagnostics:#?}"
    );

    client.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"skillwatch": {"rules": {"SW108": "info"}}}}),
    );
    let params = client.notification("textDocument/publishDiagnostics", |p| {
        p["uri"] == uri
            && p["diagnostics"]
                .as_array()
                .is_some_and(|d| d.iter().any(|d| d["code"] == "SW108"))
    });
    assert_eq!(
        find(params["diagnostics"].as_array().unwrap(), "SW108")["severity"],
        3
    );

    // a bad setting is reported and the previous settings stay
    client.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"skillwatch": {"rules": {"SW108": "loud"}}}}),
    );
    let message = client.notification("window/showMessage", |_| true);
    assert!(
        message["message"].as_str().unwrap().contains("loud"),
        "{message}"
    );
    assert!(client.shutdown().success());
}

/// Wait for the diagnostics of `uri` that `accept` takes (earlier publications are skipped).
fn diagnostics_when(
    client: &mut LspClient,
    uri: &str,
    accept: impl Fn(&[Value]) -> bool,
) -> Vec<Value> {
    let params = client.notification("textDocument/publishDiagnostics", |p| {
        p["uri"] == uri && p["diagnostics"].as_array().is_some_and(|d| accept(d))
    });
    params["diagnostics"].as_array().unwrap().clone()
}

#[test]
fn the_check_table_of_skillwatch_toml_applies_and_its_edits_recheck() {
    let root = tempfile::tempdir().unwrap();
    let dir = skill_dir(root.path(), "demo");
    let config = root.path().join("skillwatch.toml");
    std::fs::write(&config, "[check]\nrules = { SW108 = \"off\" }\n").unwrap();
    let text = "---\nname: other\ndescription: d\n---\n";
    let mut client = LspClient::initialized(json!(null));
    client.wait_for("the watcher registration", |m| {
        m["method"] == "client/registerCapability"
            && m["params"]["registrations"][0]["registerOptions"]["watchers"][0]["globPattern"]
                == "**/skillwatch.toml"
    });
    let uri = client.open(&dir.join("SKILL.md"), "markdown", text);
    let first = client.diagnostics(&uri, Some(1));
    assert!(!codes(&first).contains(&"SW108".to_string()), "{first:#?}");

    // an edit of the file, reported by the client's watcher, re-checks open documents
    std::fs::write(&config, "[check]\nrules = { SW108 = \"info\" }\n").unwrap();
    let changed = json!({"changes": [{"uri": file_uri(&config), "type": 2}]});
    client.notify("workspace/didChangeWatchedFiles", changed.clone());
    let info = diagnostics_when(&mut client, &uri, |d| {
        d.iter().any(|d| d["code"] == "SW108")
    });
    assert_eq!(find(&info, "SW108")["severity"], 3);

    // a broken table is shown on the document, and the rules fall back to the defaults
    std::fs::write(&config, "[check]\nrules = { SW1088 = \"info\" }\n").unwrap();
    client.notify("workspace/didChangeWatchedFiles", changed);
    let broken = diagnostics_when(&mut client, &uri, |d| {
        d.iter()
            .any(|d| d["message"].as_str().unwrap_or("").contains("SW1088"))
    });
    let warning = broken
        .iter()
        .find(|d| d["message"].as_str().unwrap().contains("SW1088"))
        .unwrap();
    let message = warning["message"].as_str().unwrap();
    assert!(
        message.contains("skillwatch.toml:2:11: unknown rule `SW1088`")
            && message.ends_with("its [check] settings are not applied"),
        "{message}"
    );
    assert_eq!(warning["severity"], 2);
    assert_eq!(find(&broken, "SW108")["severity"], 1);

    // the editor's settings speak after the file
    std::fs::write(&config, "[check]\nrules = { SW108 = \"info\" }\n").unwrap();
    client.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"skillwatch": {"rules": {"SW108": "warning"}}}}),
    );
    let editor = diagnostics_when(&mut client, &uri, |d| {
        d.iter().any(|d| d["code"] == "SW108" && d["severity"] == 2)
    });
    assert!(
        editor
            .iter()
            .all(|d| !d["message"].as_str().unwrap().contains("skillwatch.toml")),
        "{editor:#?}"
    );
    assert!(client.shutdown().success());
}

#[test]
fn eval_files_get_diagnostics_on_open_and_change() {
    let root = tempfile::tempdir().unwrap();
    let dir = skill_dir(root.path(), "demo");
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: demo\ndescription: d\n---\n",
    )
    .unwrap();
    std::fs::create_dir_all(dir.join("tests")).unwrap();
    let mut client = LspClient::initialized(Value::Null);
    let text = "scenarios:\n  - name: \"é😀\"\n    prompt: Summarise the file\n    assertions:\n      - type: output_matches\n        pattern: \"([unclosed\"\n";
    let uri = client.open(&dir.join("tests/eval.yaml"), "yaml", text);
    let diagnostics = client.diagnostics(&uri, Some(1));
    let pattern = text.find("\"([unclosed\"").unwrap();
    let regex = diagnostics
        .iter()
        .find(|d| d["range"]["start"]["line"] == 5)
        .unwrap_or_else(|| panic!("no finding on the pattern line: {diagnostics:#?}"));
    assert!(
        regex["code"].as_str().unwrap().starts_with("SW4"),
        "{regex:#}"
    );
    assert_eq!(
        regex["range"]["start"],
        range_json(text, pattern, pattern)["start"],
        "{regex:#}"
    );

    // fix the regex with an incremental edit: the finding goes away
    let inner = pattern + 1;
    client.notify(
        "textDocument/didChange",
        json!({
            "textDocument": {"uri": uri, "version": 2},
            "contentChanges": [{"range": range_json(text, inner, inner + 2), "text": ""}]
        }),
    );
    let diagnostics = client.diagnostics(&uri, Some(2));
    assert!(
        diagnostics.iter().all(|d| d["range"]["start"]["line"] != 5),
        "{diagnostics:#?}"
    );

    // evals.json with a syntax error
    std::fs::create_dir_all(dir.join("evals")).unwrap();
    let json_text =
        "{\"skill_name\": \"demo\", \"evals\": [{\"id\": 1, \"prompt\": \"😀\" \"x\"}]}";
    let uri = client.open(&dir.join("evals/evals.json"), "json", json_text);
    let diagnostics = client.diagnostics(&uri, Some(1));
    assert!(
        diagnostics.iter().any(|d| d["severity"] == 1),
        "{diagnostics:#?}"
    );
    assert!(client.shutdown().success());
}

/// Check, hover and completion know the same fields, core's table (`skillwatch_core::fields`):
/// every frontmatter key the table has is accepted by the check (no SW116), explained on hover
/// and offered by completion; under `agentskills` exactly Claude Code's keys are refused and
/// no longer offered; every evals.json case field is accepted and explained.
#[test]
fn check_hover_and_completion_know_the_same_fields() {
    use skillwatch_core::fields::{Origin, Place};
    let root = tempfile::tempdir().unwrap();
    let dir = skill_dir(root.path(), "demo");
    let table = Place::Frontmatter.fields();
    let mut text = String::from("---\n");
    for field in table {
        let value = match field.name {
            "name" => "demo",
            "description" => "Turns CSV files into tables. Use when asked for a table.",
            _ if !field.value_hint.is_empty() => field.value_hint,
            _ => "x",
        };
        text.push_str(&format!("{}: {value}\n", field.name));
    }
    text.push_str("---\n# Demo\n");
    for (profile, refused) in [
        ("default", vec![]),
        (
            "agentskills",
            table
                .iter()
                .filter(|f| f.origin == Origin::ClaudeCode)
                .map(|f| f.name)
                .collect::<Vec<_>>(),
        ),
    ] {
        let mut client = LspClient::initialized(json!({"profile": profile}));
        let uri = client.open(&dir.join("SKILL.md"), "markdown", &text);
        let found = client.diagnostics(&uri, Some(1));
        let unknown: Vec<&str> = found
            .iter()
            .filter(|d| d["code"] == "SW116")
            .map(|d| {
                let line = d["range"]["start"]["line"].as_u64().unwrap() as usize;
                text.lines().nth(line).unwrap().split(':').next().unwrap()
            })
            .collect();
        assert_eq!(unknown, refused, "{profile}: {found:#?}");
        for (line, field) in table.iter().enumerate() {
            let hover = client.request(
                "textDocument/hover",
                json!({"textDocument": {"uri": uri}, "position": {"line": line + 1, "character": 1}}),
            );
            let value = hover["contents"]["value"].as_str().unwrap_or_default();
            assert!(
                value.contains(&format!("**`{}`**", field.name)),
                "{profile}: {hover}"
            );
        }
        let blank = "---\n\n---\n";
        let other = skill_dir(root.path(), &format!("blank-{profile}"));
        let uri = client.open(&other.join("SKILL.md"), "markdown", blank);
        let items = client.request(
            "textDocument/completion",
            json!({"textDocument": {"uri": uri}, "position": {"line": 1, "character": 0}}),
        );
        let offered: Vec<&str> = items
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["label"].as_str().unwrap())
            .collect();
        let accepted: Vec<&str> = table
            .iter()
            .map(|f| f.name)
            .filter(|n| !refused.contains(n))
            .collect();
        assert_eq!(offered, accepted, "{profile}");
        assert!(client.shutdown().success());
    }

    // evals.json: every case field is accepted by the check and explained on hover
    let case_fields = Place::Case.fields();
    let mut case = serde_json::Map::new();
    for field in case_fields {
        let value = match field.name {
            "id" => json!("first"),
            "files" | "expected_references" => json!([]),
            "should_trigger" => json!(true),
            "expected_skill" => json!("demo"),
            "acceptable_skills" | "acceptable_alternates" => json!(["demo"]),
            "assertions" | "expectations" | "must_not" | "expected_behavior" => {
                json!(["The table has a header row."])
            }
            _ => json!("Make a table from data.csv"),
        };
        case.insert(field.name.to_string(), value);
    }
    let evals =
        serde_json::to_string_pretty(&json!({"skill_name": "demo", "evals": [case]})).unwrap();
    std::fs::create_dir_all(dir.join("evals")).unwrap();
    let mut client = LspClient::initialized(Value::Null);
    let uri = client.open(&dir.join("evals/evals.json"), "json", &evals);
    let found = client.diagnostics(&uri, Some(1));
    assert!(
        !found
            .iter()
            .any(|d| d["message"].as_str().unwrap().contains("unknown field")),
        "{found:#?}"
    );
    for field in case_fields {
        let at = evals.find(&format!("\"{}\":", field.name)).unwrap() + 1;
        let (line, character) = utf16_position(&evals, at);
        let hover = client.request(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}),
        );
        let value = hover["contents"]["value"].as_str().unwrap_or_default();
        assert!(value.contains(&format!("**`{}`**", field.name)), "{hover}");
    }
    assert!(client.shutdown().success());
}
