//! End-to-end: lift from the editor with no hand-written config. The "▶ Run paired eval" lens
//! on a skill without a harness or model asks the editor (`skillwatch/pickRun`, or
//! `window/showMessageRequest` for other clients) with the harnesses found on this machine,
//! runs the choice at once, saves it to skillwatch.toml when asked to, and the lens then shows
//! the new lift. The harness is the real `openai` loop against the mock chat-completions server,
//! found through `OPENAI_BASE_URL` and its `/v1/models`.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};
use skillwatch_tests::daemon::{DaemonFixture, model};
use skillwatch_tests::lsp::{LspClient, file_uri};
use skillwatch_tests::mock::{MockServer, openai_chat};
use skillwatch_tests::run::{eval_yaml, skill_md};
use skillwatch_tests::stdout;
use skillwatch_tests::trial::SKILL_NAME;

/// A PATH with the system's tools but no agent CLI of this checkout.
const SYSTEM_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

struct Setup {
    _root: tempfile::TempDir,
    skill: PathBuf,
    db: PathBuf,
    server: MockServer,
}

fn setup(cases: usize) -> Setup {
    let server = openai_chat::server_listing(
        model(&[], Duration::from_millis(1)),
        &["model-a", "model-b"],
    );
    let root = tempfile::tempdir().unwrap();
    let skill = root.path().join(SKILL_NAME);
    std::fs::create_dir_all(skill.join("tests")).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        skill_md("pad cells so columns line up"),
    )
    .unwrap();
    std::fs::write(skill.join("tests/eval.yaml"), eval_yaml(cases, "")).unwrap();
    Setup {
        db: root.path().join("history.sqlite3"),
        skill,
        _root: root,
        server,
    }
}

impl Setup {
    fn lsp(&self, env_url: bool, experimental: Value) -> LspClient {
        let url = format!("{}/v1", self.server.url());
        let mut env = vec![("PATH", SYSTEM_PATH)];
        if env_url {
            env.push(("OPENAI_BASE_URL", &url));
        }
        let mut client = LspClient::spawn_with_env(&env);
        client.initialize_with(
            json!({"historyDb": self.db, "historyPollMs": 0}),
            experimental,
        );
        client
    }

    fn open_skill(&self, client: &mut LspClient) -> String {
        let path = self.skill.join("SKILL.md");
        client.open(&path, "markdown", &std::fs::read_to_string(&path).unwrap())
    }

    fn config(&self) -> PathBuf {
        self.skill.join("skillwatch.toml")
    }
}

fn lens_titles(client: &mut LspClient, uri: &str) -> (Vec<String>, Value) {
    let lenses = client.request(
        "textDocument/codeLens",
        json!({"textDocument": {"uri": uri}}),
    );
    let titles = lenses
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["command"]["title"].as_str().unwrap().to_string())
        .collect();
    (titles, lenses)
}

/// Run the "▶ Run paired eval" lens as an editor does, and wait for the run to end.
fn run_lens(client: &mut LspClient, uri: &str) -> Value {
    let (titles, lenses) = lens_titles(client, uri);
    let run = titles
        .iter()
        .position(|t| t == "▶ Run paired eval")
        .unwrap();
    let command = &lenses[run]["command"];
    client.request(
        "workspace/executeCommand",
        json!({"command": command["command"], "arguments": command["arguments"]}),
    );
    client.notification("skillwatch/runFinished", |_| true)
}

fn requests_of<'c>(client: &'c LspClient, method: &str) -> Vec<&'c Value> {
    client
        .server_requests
        .iter()
        .filter(|(m, _)| m == method)
        .map(|(_, p)| p)
        .collect()
}

#[test]
fn a_run_with_no_config_asks_runs_the_choice_and_saves_it() {
    let s = setup(3);
    let mut client = s.lsp(true, json!({"skillwatch": {"pickRun": true}}));
    client.answer = Box::new(|method, params| {
        if method != "skillwatch/pickRun" {
            return Value::Null;
        }
        let index = params["choices"]
            .as_array()
            .unwrap()
            .iter()
            .position(|c| c["label"] == "openai · model-a")
            .expect("model-a offered");
        json!({"index": index, "save": true})
    });
    let uri = s.open_skill(&mut client);
    let (titles, _) = lens_titles(&mut client, &uri);
    assert_eq!(titles, ["No runs yet", "▶ Run paired eval"]);

    let finished = run_lens(&mut client, &uri);
    assert_eq!(finished["success"], true, "{finished}");
    let asked = requests_of(&client, "skillwatch/pickRun");
    assert_eq!(asked.len(), 1);
    let choices: Vec<&str> = asked[0]["choices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["label"].as_str().unwrap())
        .collect();
    assert_eq!(choices, ["openai · model-a", "openai · model-b"]);
    assert_eq!(
        asked[0]["choices"][0]["found"],
        format!("OPENAI_BASE_URL={}/v1", s.server.url())
    );
    assert_eq!(asked[0]["saveTo"], s.config().display().to_string());
    assert!(!requests_of(&client, "window/workDoneProgress/create").is_empty());

    // the lens shows the new lift, with its interval's level and n
    client.wait_for("lens refresh", |m| {
        m["method"] == "workspace/codeLens/refresh"
    });
    let (titles, _) = lens_titles(&mut client, &uri);
    assert!(
        titles[0].starts_with("Lift +") && titles[0].contains(" · model-a · 1 run · "),
        "{titles:?}"
    );
    assert!(titles[0].contains("95% n=3"), "{titles:?}");

    // the choice is in skillwatch.toml, commented, and read as the run settings
    let saved = std::fs::read_to_string(s.config()).unwrap();
    assert!(saved.starts_with("# Chosen in the editor"), "{saved}");
    for line in [
        "harness = \"openai\"",
        "model = \"model-a\"",
        &format!("base_url = \"{}/v1\"", s.server.url()),
        "openai = [\"model-a\"]",
    ] {
        assert!(saved.contains(line), "{line} in {saved}");
    }

    // the next run asks nothing; a palette command may name the skill by a file's URI
    client.request(
        "workspace/executeCommand",
        json!({"command": "skillwatch.runEval", "arguments": [file_uri(&s.skill.join("tests/eval.yaml"))]}),
    );
    let again = client.notification("skillwatch/runFinished", |_| true);
    assert_eq!(again["success"], true, "{again}");
    assert_eq!(requests_of(&client, "skillwatch/pickRun").len(), 1);
    assert!(client.shutdown().success());
}

#[test]
fn other_clients_are_asked_with_message_requests_and_nothing_is_saved_unasked() {
    let s = setup(2);
    let mut client = s.lsp(true, Value::Null);
    client.answer = Box::new(|method, params| {
        if method != "window/showMessageRequest" {
            return Value::Null;
        }
        let actions = params["actions"].as_array().unwrap();
        let wanted = if params["message"].as_str().unwrap().starts_with("Save ") {
            "Not now"
        } else {
            "openai · model-b"
        };
        actions
            .iter()
            .find(|a| a["title"] == wanted)
            .cloned()
            .unwrap_or(Value::Null)
    });
    let uri = s.open_skill(&mut client);
    // the command palette sends no argument: the open skill is the one run
    let started = client.request(
        "workspace/executeCommand",
        json!({"command": "skillwatch.runEval", "arguments": []}),
    );
    assert_eq!(started["skillDir"], s.skill.display().to_string());
    let finished = client.notification("skillwatch/runFinished", |_| true);
    assert_eq!(finished["success"], true, "{finished}");
    let asked = requests_of(&client, "window/showMessageRequest");
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert!(!s.config().exists(), "saved without being asked to");
    client.wait_for("lens refresh", |m| {
        m["method"] == "workspace/codeLens/refresh"
    });
    let (titles, _) = lens_titles(&mut client, &uri);
    assert!(titles[0].contains(" · model-b · "), "{titles:?}");
    assert!(client.shutdown().success());
}

#[test]
fn with_no_harness_anywhere_the_author_is_told_what_to_do() {
    let s = setup(1);
    let mut client = s.lsp(false, json!({"skillwatch": {"pickRun": true}}));
    let uri = s.open_skill(&mut client);
    let finished = run_lens(&mut client, &uri);
    assert_eq!(finished["success"], false);
    let message = finished["message"].as_str().unwrap();
    assert!(
        message.contains("no harness found") && message.contains("OPENAI_BASE_URL"),
        "{message}"
    );
    assert!(requests_of(&client, "skillwatch/pickRun").is_empty());
    let shown = client.notification("window/showMessage", |p| p["type"] == 1);
    assert_eq!(shown["message"], message);
    assert!(client.shutdown().success());
}

#[test]
fn a_lens_run_on_a_daemon_started_elsewhere_uses_the_editors_key() {
    let server = openai_chat::server(model(&[], Duration::from_millis(1)));
    let mut fx = DaemonFixture::new();
    fx.write_config(&format!(
        "[run]\nharness = \"openai\"\nmodel = \"model-a\"\n\n[harness.openai]\nbase_url = \"{}/v1\"\n",
        server.url()
    ));
    let skill = fx.add_skill("alpha", 1).canonicalize().unwrap();
    // the daemon was started by a `skillwatch run` in another shell, with another key
    fx.start_with_env(&[("OPENAI_API_KEY", "sk-daemon")]);
    let (mut client, uri) =
        fx.lsp_on_with_env(&skill.join("SKILL.md"), &[("OPENAI_API_KEY", "sk-editor")]);
    let finished = run_lens(&mut client, &uri);
    assert_eq!(finished["success"], true, "{finished}");
    let keys: Vec<Option<String>> = server
        .requests()
        .iter()
        .map(|r| r.authorization.clone())
        .collect();
    assert!(!keys.is_empty());
    assert!(
        keys.iter()
            .all(|k| k.as_deref() == Some("Bearer sk-editor")),
        "{keys:?}"
    );
    assert!(client.shutdown().success());
}

#[test]
fn a_lens_run_that_measured_nothing_says_why() {
    use std::os::unix::fs::PermissionsExt;
    let mut fx = DaemonFixture::new();
    let agent = fx.root.path().join("agent.sh");
    std::fs::write(&agent, "#!/bin/sh\necho 'Not logged in' >&2; exit 3\n").unwrap();
    std::fs::set_permissions(&agent, std::fs::Permissions::from_mode(0o755)).unwrap();
    fx.write_config(&format!(
        "[run]\nharness = \"command\"\nmodel = \"m\"\n\n[harness.command]\nprogram = \"{}\"\n",
        agent.display()
    ));
    let skill = fx.add_skill("alpha", 1).canonicalize().unwrap();
    fx.start();
    let (mut client, uri) = fx.lsp_on(&skill.join("SKILL.md"));
    let finished = run_lens(&mut client, &uri);
    assert_eq!(finished["success"], false, "{finished}");
    let message = finished["message"].as_str().unwrap();
    assert!(
        message.contains("measured nothing: 2 of its 2 trials failed with an error")
            && message.contains("expected exit status 0, found 3"),
        "{message}"
    );
    // the job list says so too
    let status = fx.cli(&["status"]);
    assert!(stdout(&status).contains("failed"), "{}", stdout(&status));
    assert!(client.shutdown().success());
}
