//! SW222's listing budget against the real Claude Code CLI: the skills whose descriptions
//! `skillwatch` predicts Claude Code drops from its skill listing are exactly those the CLI
//! lists by name only in its first request to the model, for a model with the small budget
//! (`claude-sonnet-4-5`, 8,000 characters) and for Claude Code's default model (30,000), which
//! `check` assumes; and Claude Code's own listing is the size `HARNESS_LISTING_CHARS` says. A
//! new Claude Code version that changes either fails here, the signal to re-measure.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use skillwatch_core::checks::{HARNESS_LISTING_CHARS, ListingBudget, listing_width, visibility};
use skillwatch_tests::mock::{self, MockUsage, ModelReply, ModelRequest};
use skillwatch_tests::trial::{agent_cli, skip_agent_clis};
use skillwatch_tests::{skillwatch_bin, stdout};

/// The skills staged: enough 1,536-character descriptions to overflow even the default budget.
const STAGED: usize = 17;

/// [`STAGED`] skills of 1,536 listed characters each, as `.claude/skills` of a workspace.
fn workspace(root: &Path) -> (PathBuf, Vec<PathBuf>) {
    let skills = root.join("ws/.claude/skills");
    let when = "Read invoices quickly. ".repeat(80);
    let dirs = (0..STAGED)
        .map(|i| {
            let dir = skills.join(format!("s{i:02}"));
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(
                dir.join("SKILL.md"),
                format!(
                    "---\nname: s{i:02}\ndescription: Reads invoices.\nwhen_to_use: {when}\n---\n# s{i:02}\n"
                ),
            )
            .unwrap();
            dir
        })
        .collect();
    (root.join("ws"), dirs)
}

/// The listing Claude Code sent in its first model request: from its first `- ` line to the
/// end of its block (descriptions may span lines).
fn listing_sent(workspace: &Path, model: Option<&str>) -> String {
    let script = Arc::new(|_: &ModelRequest| ModelReply::text("ok", MockUsage::default()));
    let server = mock::anthropic::server(script);
    let config = tempfile::tempdir().unwrap();
    let out = Command::new(agent_cli("claude"))
        .current_dir(workspace)
        .args(["-p", "hi", "--output-format", "stream-json", "--verbose"])
        .args(model.map(|m| ["--model", m]).into_iter().flatten())
        .args(["--permission-mode", "bypassPermissions"])
        .env("CLAUDE_CONFIG_DIR", config.path())
        .env("ANTHROPIC_BASE_URL", server.url())
        .env("ANTHROPIC_API_KEY", "sk-test")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("IS_SANDBOX", "1")
        .env_remove("SLASH_COMMAND_TOOL_CHAR_BUDGET")
        .output()
        .expect("run claude");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let body = &server.bodies("/v1/messages")[0];
    // The listing is a system-reminder of the first user message for Claude models, and a
    // system message for other names.
    let texts = body["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter_map(|b| b["text"].as_str().map(str::to_string));
    let block = texts
        .into_iter()
        .find(|t| t.contains("available for use with the Skill tool"))
        .expect("the skill listing is in the first request");
    let header = block.find("available for use with the Skill tool").unwrap();
    let start = header + block[header..].find("\n- ").expect("a listed skill") + 1;
    let rest = &block[start..];
    let end = ["\n</system-reminder>", "\n\n"]
        .iter()
        .filter_map(|e| rest.find(e))
        .min()
        .unwrap_or(rest.len());
    rest[..end].to_string()
}

/// The name a listing line is for.
fn name_of(line: &str) -> &str {
    line[2..].split(": ").next().unwrap_or("")
}

/// Whether a listing line is one of the staged skills.
fn staged(line: &str) -> bool {
    (0..STAGED).any(|i| name_of(line) == format!("s{i:02}"))
}

/// The staged skills' lines of a listing.
fn staged_lines(listing: &str) -> Vec<&str> {
    listing
        .lines()
        .filter(|l| l.starts_with("- ") && staged(l))
        .collect()
}

/// The staged skills listed by name only.
fn by_name_only(listing: &str) -> BTreeSet<String> {
    staged_lines(listing)
        .into_iter()
        .filter(|l| staged(l) && !l.contains(": "))
        .map(|l| name_of(l).to_string())
        .collect()
}

/// The staged skills `visibility` says the listing drops under `model`'s budget.
fn predicted(dirs: &[PathBuf], model: Option<&str>) -> BTreeSet<String> {
    let budget = ListingBudget::for_model(model);
    (0..dirs.len())
        .filter(|i| {
            let others: Vec<PathBuf> = dirs.iter().filter(|d| *d != &dirs[*i]).cloned().collect();
            visibility(&dirs[*i], &others, budget).blocked()
        })
        .map(|i| format!("s{i:02}"))
        .collect()
}

#[test]
fn the_predicted_listing_is_the_one_claude_code_sends() {
    if skip_agent_clis("the_predicted_listing_is_the_one_claude_code_sends") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (ws, dirs) = workspace(tmp.path());

    let small = listing_sent(&ws, Some("claude-sonnet-4-5"));
    let dropped = by_name_only(&small);
    assert_eq!(
        dropped,
        predicted(&dirs, Some("claude-sonnet-4-5")),
        "{small}"
    );
    assert_eq!(
        dropped.len(),
        STAGED - 1,
        "only s00 keeps its description: {small}"
    );

    // Claude Code's own skills: the listing's width (as Claude Code measures it, line breaks
    // inside descriptions counting none) less ours, plus one line break per entry.
    let ours: usize = staged_lines(&small).iter().map(|l| listing_width(l)).sum();
    let entries = small.lines().filter(|l| l.starts_with("- ")).count();
    let own = listing_width(&small) - ours + (entries - STAGED);
    assert_eq!(own, HARNESS_LISTING_CHARS, "{small}");

    let default = listing_sent(&ws, None);
    assert_eq!(staged_lines(&default).len(), STAGED, "{default}");
    let dropped = by_name_only(&default);
    assert_eq!(dropped, predicted(&dirs, None), "{default}");
    assert_eq!(dropped, BTreeSet::from(["s15".into(), "s16".into()]));

    // `check` cannot know the model and assumes the default one: SW222 names the same two
    // (on each skill in `--json`; the terminal prints it once per folder)
    let check = Command::new(skillwatch_bin())
        .args([
            "check",
            "--json",
            ws.join(".claude/skills").to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_str(&stdout(&check)).unwrap();
    let reported: BTreeSet<String> = json["files"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| f["diagnostics"].as_array().unwrap())
        .filter(|d| d["rule"] == "SW222")
        .filter_map(|d| {
            d["path"]
                .as_str()?
                .split("/SKILL.md")
                .next()?
                .rsplit('/')
                .next()
        })
        .map(str::to_string)
        .collect();
    assert_eq!(reported, dropped, "{}", stdout(&check));
}
