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

/// The pinned agent CLIs and how to install them (what scripts/test does).
const AGENT_CLIS_HOW: &str = "scripts/test installs them: npm install --prefix target/agent-clis \
     @anthropic-ai/claude-code@2.1.328 @openai/codex@0.169.0 @google/gemini-cli@0.61.0 \
     opencode-ai@1.18.33 @github/copilot@1.0.102 (Node 20 or newer), and ripgrep for OpenCode; \
     or name them in SKILLWATCH_CLAUDE_BIN, SKILLWATCH_CODEX_BIN, SKILLWATCH_GEMINI_BIN, \
     SKILLWATCH_OPENCODE_BIN, SKILLWATCH_COPILOT_BIN";

/// Whether a test of the real agent CLIs must be skipped: true when one of the pinned CLIs
/// is missing outside CI (said visibly); in CI a missing CLI fails the test
/// ([`crate::needs`]). `_test` is kept for the callers; the banner names the running test.
pub fn skip_agent_clis(_test: &str) -> bool {
    let missing: Vec<String> = ["claude", "codex", "gemini", "opencode", "copilot"]
        .into_iter()
        .filter(|name| !agent_cli_path(name).exists())
        .map(|name| agent_cli_path(name).display().to_string())
        .collect();
    let what = format!("the pinned agent CLIs ({})", missing.join(", "));
    !crate::needs::met(missing.is_empty(), &what, AGENT_CLIS_HOW)
}

/// An agent CLI installed by scripts/test (`npm install --prefix target/agent-clis`), or the
/// one named by `SKILLWATCH_<NAME>_BIN`. Panics with the install command when it is missing
/// (a test calls [`skip_agent_clis`] first): these tests must not pass without the real CLI.
pub fn agent_cli(name: &str) -> PathBuf {
    let bin = agent_cli_path(name);
    assert!(
        bin.exists(),
        "{} not found: {AGENT_CLIS_HOW}",
        bin.display()
    );
    bin
}

fn agent_cli_path(name: &str) -> PathBuf {
    let var = format!("SKILLWATCH_{}_BIN", name.to_ascii_uppercase());
    if let Ok(path) = std::env::var(&var) {
        return PathBuf::from(path);
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    root.join("target/agent-clis/node_modules/.bin").join(name)
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

/// `pid`'s state line in /proc (name, state, parent...), for a failure message.
pub fn process_state(pid: i32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map_or_else(|_| format!("{pid}: gone"), |s| s.trim().to_string())
}

/// Whether `pid` is gone within [`crate::wait::PATIENCE`] (saying what it still was when
/// not): the processes it is used on sleep for minutes, so patience makes no wrong answer.
pub async fn wait_gone(pid: i32) -> bool {
    let gone = crate::wait::poll_async(crate::wait::PATIENCE, || async move {
        crate::wait::when(process_gone(pid), || process_state(pid))
    })
    .await;
    if let Err(seen) = &gone {
        eprintln!("process {pid} still runs: {seen}");
    }
    gone.is_ok()
}

/// `Ok` when `pid` runs with nothing on its way to end it: not a zombie, not exiting, no
/// signal pending; otherwise what it is. What the kernel sends as a process dies (a
/// parent-death signal, SIGHUP to a process group it orphans) is queued before that process
/// can be reaped, so right after reaping it this says whether that ends `pid`, without
/// waiting to see.
pub fn process_undisturbed(pid: i32) -> Result<(), String> {
    const PF_EXITING: u64 = 0x4;
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).map_err(|e| e.to_string())?;
    let fields: Vec<&str> = stat
        .rsplit(')')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    let (state, flags) = (
        fields.first(),
        fields.get(6).and_then(|f| f.parse::<u64>().ok()),
    );
    let status =
        std::fs::read_to_string(format!("/proc/{pid}/status")).map_err(|e| e.to_string())?;
    let pending = status
        .lines()
        .filter(|l| l.starts_with("SigPnd:") || l.starts_with("ShdPnd:"))
        .any(|l| {
            l.split_whitespace()
                .nth(1)
                .is_some_and(|m| !m.trim_start_matches('0').is_empty())
        });
    let dying = matches!(state, Some(&"Z") | Some(&"X"))
        || flags.is_none_or(|f| f & PF_EXITING != 0)
        || pending;
    crate::wait::when(!dying, || stat.trim().to_string())
}
