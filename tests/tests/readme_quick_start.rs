//! The README's quick start, run as written (issue 36 item 4): its `sh` blocks are read from
//! README.md at test time, so the README and this test cannot drift, and run in order in a
//! fresh HOME and user runtime folder, with the built `skillwatch` and the pinned Claude Code
//! CLI on PATH (what the README's install steps put there). Each `text` block after a `sh`
//! block is the output it shows: every paragraph of it must appear, line for line, in what the
//! commands print, once the parts the README says vary are masked (times, and the order of the
//! trial lines). The command that starts the mock model server runs in the background, as in
//! the README's second terminal.
//!
//! What this cannot run as written: the commands run from a scratch folder holding a copy of
//! `examples/` (not the repository itself, which `skillwatch init` would write into), and the
//! mock's `cargo run` from the repository (cargo needs the workspace).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use skillwatch_tests::trial::{agent_cli, skip_agent_clis};
use skillwatch_tests::{skillwatch_bin, workspace_root};

/// A fenced block of the quick start: its language and text.
struct Block {
    lang: String,
    text: String,
}

/// The fenced blocks between `## Quick start` and the next `## ` heading.
fn quick_start_blocks(readme: &str) -> Vec<Block> {
    let start = readme
        .find("\n## Quick start")
        .expect("README has ## Quick start");
    let rest = &readme[start + 1..];
    let end = rest[3..].find("\n## ").map_or(rest.len(), |i| i + 3);
    let mut blocks = Vec::new();
    let mut open: Option<Block> = None;
    for line in rest[..end].lines() {
        match (&mut open, line.strip_prefix("```")) {
            (None, Some(lang)) => {
                open = Some(Block {
                    lang: lang.trim().to_string(),
                    text: String::new(),
                })
            }
            (Some(_), Some("")) => blocks.extend(open.take()),
            (Some(block), _) => {
                block.text.push_str(line);
                block.text.push('\n');
            }
            (None, None) => {}
        }
    }
    blocks
}

/// Times (`1.0 s`, `3.7 s`) masked, and each run of trial lines (`  case condition #n: ...`)
/// sorted: the parts of the output the README says vary.
fn normalized(text: &str) -> Vec<String> {
    let time = regex::Regex::new(r"\b\d+\.\d+ s\b").unwrap();
    let trial = regex::Regex::new(r"^  .* #\d+: ").unwrap();
    let mut out: Vec<String> = Vec::new();
    let mut trials: Vec<String> = Vec::new();
    for line in text.lines() {
        let line = time.replace_all(line.trim_end(), "<time> s").into_owned();
        if trial.is_match(&line) {
            trials.push(line);
            continue;
        }
        trials.sort();
        out.append(&mut trials);
        out.push(line);
    }
    trials.sort();
    out.append(&mut trials);
    out
}

/// Every paragraph of `shown` appears, line for line, in `printed` (both normalized).
fn assert_shows(command: &str, shown: &str, printed: &str) {
    let printed = normalized(printed);
    for paragraph in shown.split("\n\n").filter(|p| !p.trim().is_empty()) {
        let want = normalized(paragraph);
        let found = printed.windows(want.len()).any(|w| w == want.as_slice());
        assert!(
            found,
            "`{command}`: the README shows\n{}\n\nbut it printed\n{}",
            want.join("\n"),
            printed.join("\n")
        );
    }
}

/// The fresh user: HOME, runtime folder, PATH with `skillwatch` and `claude`, no keys.
struct User {
    home: PathBuf,
    runtime: PathBuf,
    path: String,
}

impl User {
    fn new(root: &Path) -> User {
        let (home, runtime, bin) = (root.join("home"), root.join("run"), root.join("bin"));
        for dir in [&home, &runtime, &bin] {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::os::unix::fs::symlink(skillwatch_bin(), bin.join("skillwatch")).unwrap();
        std::os::unix::fs::symlink(agent_cli("claude"), bin.join("claude")).unwrap();
        let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
        User {
            home,
            runtime,
            path,
        }
    }

    /// `sh -c script` in `cwd` as this user. Rust's own folders stay where they are (a fresh
    /// HOME has no toolchain; the README's reader has one).
    fn sh(&self, script: &str, cwd: &Path) -> Command {
        let real_home = PathBuf::from(std::env::var("HOME").unwrap_or_default());
        let mut cmd = Command::new("sh");
        cmd.args(["-c", script]).current_dir(cwd);
        for (var, default) in [("RUSTUP_HOME", ".rustup"), ("CARGO_HOME", ".cargo")] {
            let dir = std::env::var_os(var).unwrap_or_else(|| real_home.join(default).into());
            cmd.env(var, dir);
        }
        for var in [
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_BASE_URL",
            "OPENAI_API_KEY",
            "SKILLWATCH_NO_DAEMON",
            "NO_COLOR",
            "CARGO_TARGET_DIR",
        ] {
            cmd.env_remove(var);
        }
        cmd.env("HOME", &self.home)
            .env("XDG_RUNTIME_DIR", &self.runtime)
            .env("PATH", &self.path);
        cmd
    }
}

/// A background process killed when the test ends, however it ends.
struct Background(Child);

impl Drop for Background {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The daemon the quick start starts on demand, stopped when the test ends.
struct DaemonStop<'u>(&'u User, PathBuf);

impl Drop for DaemonStop<'_> {
    fn drop(&mut self) {
        let _ = self.0.sh("skillwatch daemon stop", &self.1).output();
    }
}

/// The mock's `cargo run`: `exec`, so that the process started is cargo, which execs the mock
/// (on Unix `cargo run` replaces itself), and the guard stops the mock itself. Its first line
/// of output, once it listens; a first build of the mock may take minutes.
fn start_background(user: &User, script: &str) -> (Background, String) {
    let mut child = user
        .sh(&format!("exec {}", script.trim()), &workspace_root())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the mock");
    let stdout = child.stdout.take().unwrap();
    let guard = Background(child);
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx
        .recv_timeout(Duration::from_secs(20 * 60))
        .expect("the mock prints its address within 20 minutes (it may build first)");
    (guard, line)
}

#[test]
fn the_readme_quick_start_gives_the_output_it_shows() {
    if skip_agent_clis("the_readme_quick_start_gives_the_output_it_shows") {
        return;
    }
    let readme = std::fs::read_to_string(workspace_root().join("README.md")).unwrap();
    let blocks = quick_start_blocks(&readme);
    assert!(
        blocks.iter().filter(|b| b.lang == "sh").count() >= 4,
        "quick start's sh blocks"
    );
    let tmp = tempfile::tempdir().unwrap();
    let user = User::new(tmp.path());
    let clone = tmp.path().join("clone");
    copy_dir(&workspace_root().join("examples"), &clone.join("examples"));
    let _daemon = DaemonStop(&user, clone.clone());
    let mut background = Vec::new();
    let mut exports = String::new();
    let mut ran = 0;
    for (i, block) in blocks.iter().enumerate() {
        if block.lang != "sh" {
            continue;
        }
        // the one long-running command: the mock, in its own terminal
        let printed = if block.text.trim_start().starts_with("cargo run") {
            let (guard, line) = start_background(&user, &block.text);
            background.push(guard);
            line
        } else {
            let out = user
                .sh(&format!("{exports}{}", block.text), &clone)
                .output()
                .unwrap();
            assert!(out.status.code().is_some(), "`{}` died", block.text.trim());
            // as a terminal shows them: the progress (stderr) came before the summary
            format!(
                "{}{}",
                String::from_utf8_lossy(&out.stderr),
                String::from_utf8_lossy(&out.stdout)
            )
        };
        for line in block.text.lines().filter(|l| l.starts_with("export ")) {
            exports.push_str(line);
            exports.push('\n');
        }
        if let Some(shown) = blocks.get(i + 1).filter(|b| b.lang == "text") {
            assert_shows(block.text.trim(), &shown.text, &printed);
            ran += 1;
        }
    }
    assert!(
        ran >= 3,
        "the quick start shows the output of check, the mock and run"
    );
}

fn copy_dir(from: &Path, to: &Path) {
    for entry in walkdir::WalkDir::new(from) {
        let entry = entry.unwrap();
        let dest = to.join(entry.path().strip_prefix(from).unwrap());
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
        } else {
            std::fs::copy(entry.path(), &dest).unwrap();
        }
    }
}

#[test]
fn normalizing_masks_times_and_orders_trial_lines() {
    let a = "run 1: x\n  b skill #0: completed, passed, 1.0 s\n  a baseline #0: completed, failed, 12.25 s\nx — run 1, completed, 3.7 s\n";
    let b = "run 1: x\n  a baseline #0: completed, failed, 0.9 s\n  b skill #0: completed, passed, 2.0 s\nx — run 1, completed, 4.2 s\n";
    assert_eq!(normalized(a), normalized(b));
    assert_ne!(normalized(a), normalized(&a.replace("passed", "failed")));
    assert_ne!(normalized("3 cases"), normalized("4 cases"));
}

#[test]
fn the_quick_start_blocks_are_read_in_order() {
    let readme =
        "# x\n## Quick start\n```sh\na\n```\n\n```text\nb\n\nc\n```\n## Next\n```sh\nz\n```\n";
    let blocks = quick_start_blocks(readme);
    let got: Vec<(&str, &str)> = blocks
        .iter()
        .map(|b| (b.lang.as_str(), b.text.as_str()))
        .collect();
    assert_eq!(got, [("sh", "a\n"), ("text", "b\n\nc\n")]);
}
