//! Loader profiles: what each harness version does with a skill, measured, not assumed. The
//! one table of them is [`PROFILES`]; the static checks (SW223, SW224, SW225) read it for the
//! harnesses `[check] harnesses` names, and tests/tests/loader_profiles.rs runs the pinned
//! CLIs on its probe skills with `skillwatch loads` and fails
//! when a CLI no longer does what its row says.
//!
//! Measured on 2026-11-28 with [`REMEASURE`]; the probe holds a 1,100-character description,
//! a repeated `description` key, a plain scalar with `: ` inside (`Use when: ...`, invalid
//! YAML that lenient loaders read anyway), unclosed quotes, a skill without `name`, and 40
//! skills of 846-character descriptions (about 35,000 characters of listing).

use serde::Serialize;

/// How this table is re-measured: the test that runs `skillwatch loads` on the probe with the
/// CLIs `scripts/test` pins, printing every difference (`skillwatch loads DIR... --json` on
/// your own skills does the same measurement).
pub const REMEASURE: &str = "cargo test -p skillwatch-tests --test e2e loader_profiles";

/// The date of the measurements in [`PROFILES`].
pub const MEASURED: &str = "2026-11-28";

/// What a harness does with a long description.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DescriptionLimit {
    /// Shown whole, as far as measured.
    Whole {
        /// The longest description measured whole.
        checked: usize,
    },
    /// Cut to its first `kept` characters, `ellipsis` after them.
    Cut {
        /// Characters kept.
        kept: usize,
        /// What follows them.
        ellipsis: &'static str,
    },
    /// The whole skill left out of the listing, without a word.
    Dropped {
        /// The longest description still listed.
        over: usize,
    },
}

/// What a harness does with frontmatter that is not valid YAML.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum YamlRule {
    /// Reads `description: Use when: x` (a plain scalar with `: `) as the text.
    Lenient,
    /// Leaves such a skill out.
    Strict,
}

/// What a harness does with a key written twice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DuplicateKey {
    /// The last value is used.
    LastWins,
    /// The skill is left out.
    Dropped,
}

/// How a harness lists many skills.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Listing {
    /// Every description whole (the 40-skill probe listed whole).
    Whole,
    /// Past a budget, skills are listed by name only, in listing order.
    NamesPastBudget {
        /// Skills of the probe's 40 listed with their description.
        probe_with_description: usize,
    },
    /// Past a budget, every description is shortened alike.
    Shortened {
        /// What each probe description (846 characters) was shortened to, about.
        probe_kept: usize,
    },
}

/// One harness version's loader.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LoaderProfile {
    /// The harness (`claude-code`, `codex`, `gemini-cli`, `opencode`, `copilot-cli`).
    pub harness: &'static str,
    /// Its name in messages.
    pub label: &'static str,
    /// The CLI version measured.
    pub version: &'static str,
    /// Where it reads a project's skills (relative to the working directory).
    pub reads_from: &'static [&'static str],
    /// Long descriptions.
    pub description: DescriptionLimit,
    /// Invalid YAML.
    pub yaml: YamlRule,
    /// Repeated keys.
    pub duplicate_key: DuplicateKey,
    /// A skill without `name`: listed under its folder's name, or left out.
    pub needs_name: bool,
    /// Many skills.
    pub listing: Listing,
    /// Its own skills listed beside the project's (none of them can be turned off).
    pub own_skills: usize,
    /// Lists `when_to_use` after the description (` - when_to_use`, within the same cut), so
    /// it is part of what the agent picks a skill by (Claude Code's documented frontmatter).
    pub when_to_use: bool,
}

/// The table.
pub const PROFILES: &[LoaderProfile] = &[
    LoaderProfile {
        harness: "claude-code",
        label: "Claude Code",
        version: "2.1.328",
        reads_from: &[".claude/skills (and every parent folder's)"],
        description: DescriptionLimit::Cut {
            kept: 1535,
            ellipsis: "\u{2026}",
        },
        yaml: YamlRule::Lenient,
        duplicate_key: DuplicateKey::LastWins,
        needs_name: false,
        listing: Listing::NamesPastBudget {
            probe_with_description: 1,
        },
        own_skills: 13,
        when_to_use: true,
    },
    LoaderProfile {
        harness: "codex",
        label: "Codex",
        version: "0.169.0",
        reads_from: &[".agents/skills (up to the git root)"],
        description: DescriptionLimit::Cut {
            kept: 1021,
            ellipsis: "...",
        },
        yaml: YamlRule::Lenient,
        duplicate_key: DuplicateKey::Dropped,
        needs_name: false,
        listing: Listing::Shortened { probe_kept: 474 },
        own_skills: 4,
        when_to_use: false,
    },
    LoaderProfile {
        harness: "gemini-cli",
        label: "Gemini CLI",
        version: "0.61.0",
        reads_from: &[".gemini/skills", ".agents/skills"],
        description: DescriptionLimit::Whole { checked: 1100 },
        yaml: YamlRule::Lenient,
        duplicate_key: DuplicateKey::LastWins,
        needs_name: true,
        listing: Listing::Whole,
        own_skills: 2,
        when_to_use: false,
    },
    LoaderProfile {
        harness: "opencode",
        label: "OpenCode",
        version: "1.18.33",
        reads_from: &[".opencode/skills", ".claude/skills", ".agents/skills"],
        description: DescriptionLimit::Whole { checked: 1100 },
        yaml: YamlRule::Lenient,
        duplicate_key: DuplicateKey::Dropped,
        needs_name: true,
        listing: Listing::Whole,
        own_skills: 1,
        when_to_use: false,
    },
    LoaderProfile {
        harness: "copilot-cli",
        label: "Copilot CLI",
        version: "1.0.102",
        reads_from: &[".github/skills", ".agents/skills", ".claude/skills"],
        description: DescriptionLimit::Dropped { over: 1024 },
        yaml: YamlRule::Strict,
        duplicate_key: DuplicateKey::Dropped,
        needs_name: false,
        listing: Listing::NamesPastBudget {
            probe_with_description: 15,
        },
        own_skills: 2,
        when_to_use: false,
    },
];

/// The harnesses a check targets when `[check] harnesses` does not say: every one a skill
/// ships to, since an author publishes one skill to all of them and each loader differs.
pub const DEFAULT_TARGETS: &[&str] = &[
    "claude-code",
    "codex",
    "copilot-cli",
    "gemini-cli",
    "opencode",
];

/// Whether `harness` shows `when_to_use` to the agent (by its profile; a harness without one,
/// such as the built-in OpenAI-compatible agent, does not).
pub fn reads_when_to_use(harness: &str) -> bool {
    profile(harness).is_some_and(|p| p.when_to_use)
}

/// The profile of `harness`.
pub fn profile(harness: &str) -> Option<&'static LoaderProfile> {
    PROFILES.iter().find(|p| p.harness == harness)
}
