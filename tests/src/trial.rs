//! Helpers for harness tests: trial directories, skills on disk, the agent CLIs installed by
//! `.ci/run`, and a fake user HOME full of personal skills that must never reach a trial.

use std::path::{Path, PathBuf};
use std::time::Duration;

use skillwatch_daemon::harness::{SkillToStage, TrialSpec};
use tempfile::TempDir;

/// A text only the demo skill's SKILL.md holds: seeing it in a tool result means the model
/// loaded the skill.
pub const SKILL_MARKER: &str = "ALIGN-EVERY-COLUMN-7731";

/// The demo skill's name.
pub const SKILL_NAME: &str = "table-format";

/// The demo skill's description, as harnesses list it.
pub const SKILL_DESCRIPTION: &str = "Formats Markdown tables. Use when asked to format a table.";

/// A skill placed in the fake user's HOME; it must not be visible in any trial.
pub const LEAKED_SKILL: &str = "leaked-personal-skill";

/// A temporary root holding the skills, the workspace and the scratch dir of one trial.
pub struct TrialDirs {
    /// Keeps everything alive until the test ends.
    pub root: TempDir,
}

impl TrialDirs {
    /// A fresh root with an empty `workspace/` holding one setup file.
    pub fn new() -> TrialDirs {
        let root = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir_all(root.path().join("workspace")).expect("workspace");
        std::fs::write(
            root.path().join("workspace/table.md"),
            "|a|b|\n|-|-|\n|1|22|\n",
        )
        .expect("setup file");
        TrialDirs { root }
    }

    /// The workspace.
    pub fn workspace(&self) -> PathBuf {
        self.root.path().join("workspace")
    }

    /// A trial spec with `skills`, the given prompt and timeout, and scratch dir `name`.
    pub fn spec(
        &self,
        name: &str,
        prompt: &str,
        skills: Vec<SkillToStage>,
        timeout: Duration,
    ) -> TrialSpec {
        let scratch = self.root.path().join(name);
        std::fs::create_dir_all(&scratch).expect("scratch");
        TrialSpec {
            prompt: prompt.into(),
            model: "mock-model".into(),
            workspace: self.workspace(),
            scratch,
            skills,
            timeout,
            stop_when: None,
            plant: Default::default(),
        }
    }

    /// The demo skill, written under `skills-src/` and ready to stage.
    pub fn demo_skill(&self) -> SkillToStage {
        let dir = write_skill(
            &self.root.path().join("skills-src"),
            SKILL_NAME,
            SKILL_DESCRIPTION,
            SKILL_MARKER,
        );
        SkillToStage {
            name: SKILL_NAME.into(),
            source: dir,
        }
    }
}

impl Default for TrialDirs {
    fn default() -> TrialDirs {
        TrialDirs::new()
    }
}

/// Write `parent/name/SKILL.md` with the given description and a body holding `marker`.
pub fn write_skill(parent: &Path, name: &str, description: &str, marker: &str) -> PathBuf {
    let dir = parent.join(name);
    std::fs::create_dir_all(&dir).expect("skill dir");
    std::fs::write(
        dir.join("SKILL.md"),
        format!(
            "---\nname: {name}\ndescription: {description}\n---\n# Steps\n1. {marker}: pad cells so columns line up.\n"
        ),
    )
    .expect("SKILL.md");
    dir
}

/// A fake user HOME with a personal skill in every place a harness looks for one:
/// `~/.claude/skills`, `~/.agents/skills`, `~/.codex/skills`.
pub fn fake_home(parent: &Path) -> PathBuf {
    let home = parent.join("fake-user-home");
    for dir in [".claude/skills", ".agents/skills", ".codex/skills"] {
        write_skill(
            &home.join(dir),
            LEAKED_SKILL,
            "A personal skill of the user. Use for every task.",
            "PERSONAL-SKILL-BODY",
        );
    }
    home
}

/// Whether the caller asked to skip the real-CLI tests (`SKILLWATCH_SKIP_AGENT_CLIS=1`), for a
/// checkout where `.ci/run` has not installed them. Without it a missing CLI fails the test.
pub fn skip_agent_clis(test: &str) -> bool {
    let skip = std::env::var("SKILLWATCH_SKIP_AGENT_CLIS").is_ok_and(|v| v == "1");
    if skip {
        eprintln!("{test}: skipped (SKILLWATCH_SKIP_AGENT_CLIS=1)");
    }
    skip
}

/// An agent CLI installed by `.ci/run` (`npm install --prefix target/agent-clis`), or the one
/// named by `SKILLWATCH_<NAME>_BIN`. Panics with the install command when it is missing: these
/// tests must not pass without the real CLI.
pub fn agent_cli(name: &str) -> PathBuf {
    let var = format!("SKILLWATCH_{}_BIN", name.to_ascii_uppercase());
    if let Ok(path) = std::env::var(&var) {
        return PathBuf::from(path);
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let bin = root.join("target/agent-clis/node_modules/.bin").join(name);
    assert!(
        bin.exists(),
        "{} not found: expected the {name} CLI installed by .ci/run \
         (scripts/test pins them: npm install --prefix target/agent-clis @anthropic-ai/claude-code@2.1.328 \
         @openai/codex@0.169.0 @google/gemini-cli@0.61.0 opencode-ai@1.18.33 @github/copilot@1.0.102) \
         or a path in {var} (or set SKILLWATCH_SKIP_AGENT_CLIS=1 to skip these tests)",
        bin.display()
    );
    bin
}

/// Whether process `pid` is gone (a zombie awaiting its reaper counts as gone).
pub fn process_gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z'),
        Err(_) => true,
    }
}

/// Wait up to two seconds for `pid` to be gone.
pub async fn wait_gone(pid: i32) -> bool {
    for _ in 0..100 {
        if process_gone(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}
