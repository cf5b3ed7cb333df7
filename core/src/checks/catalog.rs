//! Every rule skillwatch knows, by stable id. Ids never change meaning and are never reused:
//! users silence or raise them by id in `skillwatch.toml`, editor settings and CI flags.
//!
//! Ranges: `SW1xx` the specification, `SW2xx` quality, `SW3xx` security (SKILL.md rules,
//! in [`SKILL_MD_RULES`]); `SW4xx` eval files (in [`EVAL_FILE_RULES`]); `SW5xx` results
//! over time (in [`RESULT_RULES`]: reported by the daemon and the language server from the
//! history, never by `skillwatch check`, which reads no history); `SW0xx` the inline
//! `skillwatch-ignore` comments themselves (in [`DIRECTIVE_RULES`]).

use super::{Category, Profile, Rule, Severity};

/// Rules about a skill's SKILL.md and folder.
pub static SKILL_MD_RULES: &[Rule] = &[
    // --- SW1xx: the Agent Skills specification (agentskills.io) and harness extensions ---
    Rule {
        id: "SW100",
        name: "skill-md-readable",
        category: Category::Spec,
        severity: Severity::Error,
        summary: "SKILL.md must be a readable UTF-8 text file of reasonable size.",
    },
    Rule {
        id: "SW101",
        name: "frontmatter-missing",
        category: Category::Spec,
        severity: Severity::Error,
        summary: "SKILL.md must start with YAML frontmatter between `---` lines.",
    },
    Rule {
        id: "SW102",
        name: "frontmatter-valid-yaml",
        category: Category::Spec,
        severity: Severity::Error,
        summary: "The frontmatter between the `---` fences must be valid YAML.",
    },
    Rule {
        id: "SW103",
        name: "frontmatter-unterminated",
        category: Category::Spec,
        severity: Severity::Error,
        summary: "The frontmatter must be closed by a second `---` line.",
    },
    Rule {
        id: "SW104",
        name: "frontmatter-not-mapping",
        category: Category::Spec,
        severity: Severity::Error,
        summary: "The frontmatter must be a YAML mapping of fields (`key: value` lines).",
    },
    Rule {
        id: "SW105",
        name: "name-missing",
        category: Category::Spec,
        severity: Severity::Error,
        summary: "The required `name` field is missing.",
    },
    Rule {
        id: "SW106",
        name: "name-format",
        category: Category::Spec,
        severity: Severity::Error,
        summary: "`name` must be lowercase letters, digits and single hyphens, not starting or ending with a hyphen.",
    },
    Rule {
        id: "SW107",
        name: "name-too-long",
        category: Category::Spec,
        severity: Severity::Error,
        summary: "`name` must be at most 64 characters.",
    },
    Rule {
        id: "SW108",
        name: "name-matches-folder",
        category: Category::Spec,
        severity: Severity::Error,
        summary: "`name` must equal the name of the skill's folder.",
    },
    Rule {
        id: "SW109",
        name: "description-missing",
        category: Category::Spec,
        severity: Severity::Error,
        summary: "The required `description` field is missing.",
    },
    Rule {
        id: "SW110",
        name: "description-empty",
        category: Category::Spec,
        severity: Severity::Error,
        summary: "`description` must not be empty.",
    },
    Rule {
        id: "SW111",
        name: "description-too-long",
        category: Category::Spec,
        severity: Severity::Error,
        summary: "`description` must be at most 1024 characters.",
    },
    Rule {
        id: "SW112",
        name: "compatibility-length",
        category: Category::Spec,
        severity: Severity::Error,
        summary: "`compatibility`, when present, must be 1 to 500 characters.",
    },
    Rule {
        id: "SW113",
        name: "field-type",
        category: Category::Spec,
        severity: Severity::Error,
        summary: "A specification field has the wrong YAML type (e.g. a list where a string is required).",
    },
    Rule {
        id: "SW114",
        name: "field-not-string",
        category: Category::Spec,
        severity: Severity::Warning,
        summary: "A text field is written as a number, boolean or null; quote it so every YAML reader sees the same text.",
    },
    Rule {
        id: "SW115",
        name: "metadata-value-not-string",
        category: Category::Spec,
        severity: Severity::Warning,
        summary: "`metadata` is a map from string keys to string values; this value is not a string.",
    },
    Rule {
        id: "SW116",
        name: "unknown-field",
        category: Category::Spec,
        severity: Severity::Warning,
        summary: "A frontmatter field the active profile does not define; move it under `metadata`.",
    },
    Rule {
        id: "SW117",
        name: "duplicate-field",
        category: Category::Spec,
        severity: Severity::Error,
        summary: "A frontmatter key appears twice; YAML requires unique keys and readers disagree on which wins.",
    },
    Rule {
        id: "SW118",
        name: "harness-field-value",
        category: Category::Spec,
        severity: Severity::Warning,
        summary: "A Claude Code frontmatter field has a value Claude Code does not accept.",
    },
    Rule {
        id: "SW119",
        name: "name-not-ascii",
        category: Category::Spec,
        severity: Severity::Warning,
        summary: "`name` has non-ASCII letters: the reference validator accepts them, most harnesses accept only a-z, 0-9 and `-`.",
    },
    Rule {
        id: "SW120",
        name: "strict-yaml-subset",
        category: Category::Spec,
        severity: Severity::Info,
        summary: "The frontmatter uses YAML the reference validator skills-ref refuses: flow `[...]`/`{...}` collections, anchors, aliases or tags.",
    },
    Rule {
        id: "SW121",
        name: "byte-order-mark",
        category: Category::Spec,
        severity: Severity::Info,
        summary: "SKILL.md starts with a UTF-8 byte-order mark, so it does not start with `---` for readers that keep it.",
    },
    Rule {
        id: "SW122",
        name: "claude-api-constraints",
        category: Category::Spec,
        severity: Severity::Warning,
        summary: "`name` contains a word the Claude API reserves (`anthropic`, `claude`), or `description` contains an XML tag; the Claude API refuses such skills.",
    },
    Rule {
        id: "SW123",
        name: "claude-code-substitution",
        category: Category::Spec,
        severity: Severity::Warning,
        summary: "The body holds text Claude Code substitutes with the skill's arguments (`$1`, `$ARGUMENTS`, `$ARGUMENTS[0]`), code blocks included.",
    },
    // --- SW2xx: quality (seed 002 heuristics, SkillsBench profile) ---
    Rule {
        id: "SW201",
        name: "description-no-trigger",
        category: Category::Quality,
        severity: Severity::Warning,
        summary: "`description` does not say when to use the skill; agents choose skills by it.",
    },
    Rule {
        id: "SW202",
        name: "description-too-short",
        category: Category::Quality,
        severity: Severity::Warning,
        summary: "`description` is too short to tell an agent what the skill does and when to use it.",
    },
    Rule {
        id: "SW203",
        name: "description-vague",
        category: Category::Quality,
        severity: Severity::Warning,
        summary: "`description` is generic (\"helps with\", \"various tasks\") instead of naming concrete tasks and keywords.",
    },
    Rule {
        id: "SW204",
        name: "body-too-thin",
        category: Category::Quality,
        severity: Severity::Warning,
        summary: "The body is too short (under 200 tokens) to guide an agent through the task.",
    },
    Rule {
        id: "SW205",
        name: "body-too-many-lines",
        category: Category::Quality,
        severity: Severity::Warning,
        summary: "SKILL.md is over 500 lines; move detail to referenced files (progressive disclosure).",
    },
    Rule {
        id: "SW206",
        name: "body-over-token-budget",
        category: Category::Quality,
        severity: Severity::Warning,
        summary: "The body is over 5,000 tokens, the specification's recommended ceiling for loaded instructions.",
    },
    Rule {
        id: "SW207",
        name: "body-above-sweet-spot",
        category: Category::Quality,
        severity: Severity::Info,
        summary: "The body is over 2,500 tokens, above the 800-2,500 token range where skills helped most in SkillsBench.",
    },
    Rule {
        id: "SW208",
        name: "no-workflow",
        category: Category::Quality,
        severity: Severity::Info,
        summary: "The body has no numbered steps or workflow section for the agent to follow.",
    },
    Rule {
        id: "SW209",
        name: "no-examples",
        category: Category::Quality,
        severity: Severity::Info,
        summary: "The body has no example (no code block and no example section).",
    },
    Rule {
        id: "SW210",
        name: "no-headings",
        category: Category::Quality,
        severity: Severity::Info,
        summary: "The body has no Markdown headings, so neither agent nor author can navigate it.",
    },
    Rule {
        id: "SW211",
        name: "file-reference-missing",
        category: Category::Quality,
        severity: Severity::Warning,
        summary: "A relative file reference points at a file the skill folder does not contain.",
    },
    Rule {
        id: "SW212",
        name: "file-reference-nested",
        category: Category::Quality,
        severity: Severity::Info,
        summary: "A referenced file refers on to further files; keep references one level deep from SKILL.md.",
    },
    Rule {
        id: "SW213",
        name: "windows-path",
        category: Category::Quality,
        severity: Severity::Warning,
        summary: "A file reference uses Windows `\\` separators; use `/`, which works on every platform.",
    },
    Rule {
        id: "SW214",
        name: "compatibility-not-actionable",
        category: Category::Quality,
        severity: Severity::Warning,
        summary: "`compatibility` names no product, tool, package, version or access need an agent could act on.",
    },
    Rule {
        id: "SW215",
        name: "absolute-path-link",
        category: Category::Quality,
        severity: Severity::Warning,
        summary: "A link to an absolute path on one machine (`/Users/...`, `/home/...`, `C:\\...`, `file://`); link relative to the skill folder.",
    },
    // --- SW22x: the skills an agent sees together (checks::skill_set) ---
    Rule {
        id: "SW220",
        name: "duplicate-skill-name",
        category: Category::Quality,
        severity: Severity::Error,
        summary: "Another skill in the same folder has the same `name`: an agent lists one name for two skills.",
    },
    Rule {
        id: "SW221",
        name: "similar-descriptions",
        category: Category::Quality,
        severity: Severity::Warning,
        summary: "The description shares most of its words with a skill beside it: an agent may not tell which to pick.",
    },
    Rule {
        id: "SW222",
        name: "listing-over-budget",
        category: Category::Quality,
        severity: Severity::Info,
        summary: "The skills of this folder overflow Claude Code's skill listing, and this skill's description would be dropped from it.",
    },
    Rule {
        id: "SW223",
        name: "listing-description-cut",
        category: Category::Quality,
        severity: Severity::Warning,
        summary: "A targeted harness cuts the description (Claude Code with `when_to_use` at 1,536, Codex at 1,024); the end never reaches the agent.",
    },
    Rule {
        id: "SW224",
        name: "harness-drops-skill",
        category: Category::Quality,
        severity: Severity::Warning,
        summary: "A targeted harness leaves the skill out of its listing without a word (a description over its limit, a repeated key, YAML it cannot read, no `name`).",
    },
    // --- SW3xx: security (seed 002 static review) ---
    Rule {
        id: "SW301",
        name: "credential",
        category: Category::Security,
        severity: Severity::Error,
        summary: "Credential-looking text (cloud, API or chat tokens, private keys) in the skill; it is public to every user of the skill.",
    },
    Rule {
        id: "SW302",
        name: "prompt-injection",
        category: Category::Security,
        severity: Severity::Error,
        summary: "Prompt-injection-like instruction: overriding prior instructions, hiding actions from the user, or disabling safeguards.",
    },
    Rule {
        id: "SW303",
        name: "remote-code-execution",
        category: Category::Security,
        severity: Severity::Warning,
        summary: "Downloads code and runs it in one step (`curl ... | sh`), with no chance to review it.",
    },
    Rule {
        id: "SW304",
        name: "broad-tool-grant",
        category: Category::Security,
        severity: Severity::Warning,
        summary: "`allowed-tools` pre-approves unrestricted shell or every tool (`Bash`, `Bash(*)`, `*`).",
    },
    Rule {
        id: "SW305",
        name: "hooks",
        category: Category::Security,
        severity: Severity::Warning,
        summary: "The skill declares hooks: shell commands the harness runs on events, outside the model's control.",
    },
    Rule {
        id: "SW306",
        name: "dynamic-shell-context",
        category: Category::Security,
        severity: Severity::Warning,
        summary: "A ``!`command` `` runs a shell command when the skill loads and pastes its output into the prompt.",
    },
    Rule {
        id: "SW307",
        name: "external-url",
        category: Category::Security,
        severity: Severity::Info,
        summary: "The skill points the agent at an external host: an extra trust boundary to review.",
    },
    Rule {
        id: "SW308",
        name: "scripts-present",
        category: Category::Security,
        severity: Severity::Info,
        summary: "The skill ships a scripts/ folder: code an agent may run, to review like any dependency.",
    },
    Rule {
        id: "SW309",
        name: "risky-command",
        category: Category::Security,
        severity: Severity::Warning,
        summary: "A destructive or obfuscated shell pattern (`rm -rf /`, `chmod 777`, decode-and-execute, disabled TLS checks).",
    },
    Rule {
        id: "SW310",
        name: "invisible-character",
        category: Category::Security,
        severity: Severity::Warning,
        summary: "Invisible or bidirectional characters in the skill's text: bidi controls, tag characters and variation-selector runs hide text (errors); zero-width characters split words (warnings).",
    },
    Rule {
        id: "SW311",
        name: "symlink",
        category: Category::Security,
        severity: Severity::Warning,
        summary: "A symlink in the skill folder; one that leads out of the folder is an error, and what it points at is never read.",
    },
    // --- SW32x: behaviour classes of `skillwatch vet` (and `check --vet`), see docs/vet/ ---
    Rule {
        id: "SW320",
        name: "secret-exfiltration",
        category: Category::Security,
        severity: Severity::Error,
        summary: "The environment, a credential file or a secret flows to the network (HTTP body or URL, upload, socket, scp, DNS lookup of a built name). Vet only.",
    },
    Rule {
        id: "SW321",
        name: "reverse-shell",
        category: Category::Security,
        severity: Severity::Error,
        summary: "A shell is handed to a network peer (`/dev/tcp`, `nc -e`, socket + dup2 + pty, mkfifo pipes). Vet only.",
    },
    Rule {
        id: "SW322",
        name: "remote-code-download-run",
        category: Category::Security,
        severity: Severity::Error,
        summary: "Downloaded code is run, in one step or several (`curl -o x.sh` then `bash x.sh`, `exec(urlopen(...).read())`). Vet only.",
    },
    Rule {
        id: "SW323",
        name: "obfuscated-payload",
        category: Category::Security,
        severity: Severity::Error,
        summary: "An encoded or obfuscated payload (base64, hex, rot13, char codes, compression, reversed text) is decoded and run. Vet only.",
    },
    Rule {
        id: "SW324",
        name: "privilege-escalation",
        category: Category::Security,
        severity: Severity::Error,
        summary: "Grants itself privileges: sudoers or polkit rules, setuid bits, `sudo -S` with a piped password, the host's root mounted into a container. Vet only.",
    },
    Rule {
        id: "SW325",
        name: "persistence-tampering",
        category: Category::Security,
        severity: Severity::Error,
        summary: "Writes code that fetches or runs something into shell profiles, cron, systemd or launchd units, SSH authorized_keys, git hooks, the agent's own settings or other skills. Vet only.",
    },
    Rule {
        id: "SW326",
        name: "crypto-miner",
        category: Category::Security,
        severity: Severity::Error,
        summary: "Runs, fetches or configures a cryptocurrency miner (miner binaries, stratum URLs, mining pools, wallet addresses). Vet only.",
    },
    Rule {
        id: "SW327",
        name: "typosquatted-package",
        category: Category::Security,
        severity: Severity::Error,
        summary: "Installs a package whose name is a near miss of a popular PyPI or npm package (one edit, or look-alike characters). Vet only.",
    },
    Rule {
        id: "SW328",
        name: "dependency-confusion",
        category: Category::Security,
        severity: Severity::Error,
        summary: "Installs an internal-looking package where a public index can serve it (`--extra-index-url`, no private index), or from an index on plain HTTP, a bare IP or a tunnel. Vet only.",
    },
    Rule {
        id: "SW329",
        name: "unvetted-code",
        category: Category::Security,
        severity: Severity::Warning,
        summary: "A script, Markdown file or code block too large for vet to read (a file over 1 MiB, a code unit over 512 KiB): the agent can still run or read it, so the skill is not called clean. Vet only.",
    },
    Rule {
        id: "SW330",
        name: "destructive-operation",
        category: Category::Security,
        severity: Severity::Error,
        summary: "Destroys what a skill has no business destroying: the home folder or the user's files, the system, every repository, a raw disk (errors); a database, a shared branch's history, a cluster or a bucket (warnings, errors when the skill also says not to ask or not to tell). Vet only.",
    },
    Rule {
        id: "SW331",
        name: "agent-config-tampering",
        category: Category::Security,
        severity: Severity::Error,
        summary: "Changes the agent's own configuration: permissions widened or approvals switched off (errors), hooks or MCP servers that fetch or run code (errors), other hooks, MCP servers and settings (warnings); in code, or as an order in the skill's text. Vet only.",
    },
    Rule {
        id: "SW332",
        name: "skill-name-typosquat",
        category: Category::Security,
        severity: Severity::Warning,
        summary: "The skill's name is one slip from a well-known skill's (`skill-creater`, `xslx`) and it reaches an outside address: how a look-alike wins installs meant for the real one. Vet only.",
    },
    Rule {
        id: "SW333",
        name: "credential-store-read",
        category: Category::Security,
        severity: Severity::Warning,
        summary: "Reads a store of credentials an honest skill does not open (browser cookies and logins, keychains, wallets, private keys, another process's environment, agents' and CLIs' tokens) with no sink vet can see, or asks the user for a password, code or recovery key. Vet only.",
    },
    Rule {
        id: "SW334",
        name: "code-backdoor",
        category: Category::Security,
        severity: Severity::Error,
        summary: "Tells the agent to weaken the code it writes for the user (plant a master password, a hidden account or a bypass token, switch an authentication or verification check off), hands over a web shell, or switches a protection of the machine off. Vet only.",
    },
    Rule {
        id: "SW335",
        name: "unfamiliar-host",
        category: Category::Security,
        severity: Severity::Warning,
        summary: "The skill's code (a script, a code block, a config file) names a host that is not a well-known service: find out who runs it before installing. Vet only.",
    },
];

/// Rules about eval files: tests/eval.yaml and evals/evals.json.
pub static EVAL_FILE_RULES: &[Rule] = &[
    Rule {
        id: "SW400",
        name: "eval-file-readable",
        category: Category::Eval,
        severity: Severity::Error,
        summary: "An eval file must be a readable UTF-8 text file of reasonable size.",
    },
    Rule {
        id: "SW401",
        name: "eval-file-syntax",
        category: Category::Eval,
        severity: Severity::Error,
        summary: "An eval file must be well-formed YAML (eval.yaml) or JSON (evals.json).",
    },
    Rule {
        id: "SW402",
        name: "eval-file-schema",
        category: Category::Eval,
        severity: Severity::Error,
        summary: "An eval file must match its format's schema (`skillwatch schema eval-yaml|evals-json`).",
    },
    Rule {
        id: "SW403",
        name: "eval-unknown-field",
        category: Category::Eval,
        severity: Severity::Warning,
        summary: "A field the eval format does not define is ignored by the tools that read it; usually a typo.",
    },
    Rule {
        id: "SW404",
        name: "eval-invalid-regex",
        category: Category::Eval,
        severity: Severity::Error,
        summary: "A pattern in output_matches / output_not_matches (or a *_pattern assertion) must be a valid regular expression.",
    },
    Rule {
        id: "SW405",
        name: "eval-missing-source",
        category: Category::Eval,
        severity: Severity::Error,
        summary: "A setup file `source` (or an evals.json `files` entry) must name an existing file; a Vally experiment arm's `environment.skills` entry must name a skill folder or a folder of skills.",
    },
    Rule {
        id: "SW406",
        name: "eval-duplicate-case",
        category: Category::Eval,
        severity: Severity::Error,
        summary: "Case names (eval.yaml) and ids (evals.json) must be unique within a file.",
    },
    Rule {
        id: "SW407",
        name: "eval-prompt-names-skill",
        category: Category::Eval,
        severity: Severity::Warning,
        summary: "A prompt that names the skill under test leaks the answer: the eval no longer shows the skill is found on its own.",
    },
    Rule {
        id: "SW408",
        name: "eval-negative-without-positive",
        category: Category::Eval,
        severity: Severity::Warning,
        summary: "A suite with negative cases (must not trigger) needs at least one positive case for the skill.",
    },
    Rule {
        id: "SW409",
        name: "eval-timeout-not-positive",
        category: Category::Eval,
        severity: Severity::Error,
        summary: "A scenario timeout must be a positive number of seconds.",
    },
    Rule {
        id: "SW410",
        name: "eval-empty-criterion",
        category: Category::Eval,
        severity: Severity::Warning,
        summary: "A rubric item, expected behaviour or expectation must say something for the judge to check.",
    },
    Rule {
        id: "SW411",
        name: "eval-unknown-expected-skill",
        category: Category::Eval,
        severity: Severity::Warning,
        summary: "`expected_skill` (and `acceptable_skills`) should name a skill in the same tree.",
    },
    Rule {
        id: "SW412",
        name: "evals-json-legacy-shape",
        category: Category::Eval,
        severity: Severity::Info,
        summary: "The legacy evals.json shapes still work; the agentskills.io shape `{skill_name, evals}` is preferred.",
    },
    Rule {
        id: "SW413",
        name: "evals-json-skill-name",
        category: Category::Eval,
        severity: Severity::Warning,
        summary: "evals.json `skill_name` should equal the skill's name.",
    },
    Rule {
        id: "SW414",
        name: "eval-no-cases",
        category: Category::Eval,
        severity: Severity::Warning,
        summary: "An eval file with no cases evaluates nothing.",
    },
    Rule {
        id: "SW415",
        name: "evals-json-dialect",
        category: Category::Eval,
        severity: Severity::Info,
        summary: "Which evals.json dialect a file writes (`assertions` of the agentskills.io guide, `expectations` of skill-creator, SkillEvaluator's YAML / JSON Lines variants) and what the other tools make of it.",
    },
    Rule {
        id: "SW416",
        name: "eval-not-run",
        category: Category::Eval,
        severity: Severity::Warning,
        summary: "Something an eval file asks for that skillwatch does not run (a pairwise grader, scoring weights, a second plugin arm, a run-command grader), or a run setting it takes from its own flags (info): said where it is written, never dropped silently.",
    },
];

/// Rules about measured results: emitted from the history of paired runs (the daemon's
/// model-change comparisons), on the skill's SKILL.md.
pub static RESULT_RULES: &[Rule] = &[Rule {
    id: "SW501",
    name: "lift-regressed",
    category: Category::Results,
    severity: Severity::Warning,
    summary: "The skill's lift fell significantly on a new model compared with the previous one.",
}];

/// Rules about `skillwatch-ignore` comments (see `checks::ignore`), in any checked file.
pub static DIRECTIVE_RULES: &[Rule] = &[
    Rule {
        id: "SW001",
        name: "ignore-unknown-rule",
        category: Category::Directive,
        severity: Severity::Warning,
        summary: "A `skillwatch-ignore` comment must name the rules it silences by id (`SW301`).",
    },
    Rule {
        id: "SW002",
        name: "ignore-unused",
        category: Category::Directive,
        severity: Severity::Warning,
        summary: "A `skillwatch-ignore` id that silences nothing should go, before it hides a new finding.",
    },
];

/// Severities that differ from a rule's default under a profile. The strict `agentskills`
/// profile makes everything the reference validator `skills-ref` rejects an error.
static PROFILE_SEVERITIES: &[(Profile, &str, Severity)] = &[
    (Profile::AgentSkills, "SW116", Severity::Error),
    (Profile::AgentSkills, "SW120", Severity::Error),
    (Profile::AgentSkills, "SW121", Severity::Error),
];

/// Every rule, SKILL.md rules first.
pub fn all_rules() -> impl Iterator<Item = &'static Rule> {
    SKILL_MD_RULES
        .iter()
        .chain(EVAL_FILE_RULES.iter())
        .chain(RESULT_RULES.iter())
        .chain(DIRECTIVE_RULES.iter())
}

/// The rule with this id, if any.
pub fn rule(id: &str) -> Option<&'static Rule> {
    all_rules().find(|r| r.id == id)
}

/// The severity of `id` under `profile` (Warning for an id not in the catalog, which cannot
/// happen for ids the checks emit: a unit test walks them).
pub fn severity(id: &str, profile: Profile) -> Severity {
    PROFILE_SEVERITIES
        .iter()
        .find(|(p, r, _)| *p == profile && *r == id)
        .map(|(_, _, s)| *s)
        .or_else(|| rule(id).map(|r| r.severity))
        .unwrap_or(Severity::Warning)
}

/// A longer explanation for `skillwatch check --explain ID`: why the rule exists and how to
/// satisfy it. Falls back to the rule's summary.
pub fn explain(id: &str) -> Option<&'static str> {
    EXPLANATIONS
        .iter()
        .find(|(r, _)| *r == id)
        .map(|(_, text)| *text)
        .or_else(|| rule(id).map(|r| r.summary))
}

static EXPLANATIONS: &[(&str, &str)] = &[
    (
        "SW415",
        "evals.json is written in two dialects (agentskills/agentskills#459, open): the \
agentskills.io guide calls a case's checks `assertions`, Anthropic skill-creator's \
references/schemas.md calls them `expectations`. NVIDIA SkillEvaluator maps `assertions` to the \
behaviours it checks and ignores `expectations`; skill-creator's grader looks for \
`expectations`. skillwatch reads both as judged criteria. SkillEvaluator also reads \
`evals.jsonl`, `evals.yaml` and `eval/dataset.*`, which the other tools do not. The finding says \
which the file writes, so an author sharing the file with another tool knows what that tool \
will grade; write the name the tools you use read (or both).",
    ),
    (
        "SW416",
        "skillwatch reads other tools' eval files as they are (docs/evals.md). What a file asks \
for that the one suite model cannot express is said where it is written instead of dropped: \
Vally's `pairwise` and `run-command` graders, `scoring` weights and thresholds, an experiment's \
variants other than its baseline, skilled and plugin arms (the plugin arm runs as a third \
condition; a second one does not), waza's `metrics` \
weights and `code` graders, skill-up's script judges. Such findings are warnings, since the \
measurement differs from the other tool's; run settings skillwatch takes from its own flags \
(`runs`, `model`, `judge_model`) are infos.",
    ),
    (
        "SW220",
        "Agents install skills side by side (`.claude/skills/`, a plugin's `skills/`, \
`~/.codex/skills/`) and list them by `name`. Two skill folders beside each other with the same \
`name` leave the agent one entry for two skills: which one loads depends on the harness. \
skillwatch checks the folders with a SKILL.md in the same parent folder; rename one skill (and \
its folder: the specification wants them equal).",
    ),
    (
        "SW221",
        "An agent picks a skill by its description. When two skills beside each other describe \
themselves in mostly the same words, the choice rests on the few words that differ, which the \
finding lists. The measure is the share of content words the two descriptions have in common \
(Jaccard index of the two sets of words, common function words such as `the`, `use`, `when` \
left out); 60% or more is reported. Say in each description what sets it apart (the input it \
takes, the case it is for, what it is not for).",
    ),
    (
        "SW222",
        "Claude Code shows the model one line per skill, `- name: description` (the description \
with ` - when_to_use` appended, cut to 1,536 characters), within a budget of 1% of the model's \
context window in characters: 8,000 for `claude-sonnet-4-6`, `claude-opus-4-6` and older \
models (200,000 tokens at 4 characters a token), 30,000 for newer models and aliases such as \
`sonnet` (1,000,000 tokens at 3), 40,000 with `[1m]` (Claude Code 2.1.328: settings \
`skillListingMaxDescChars`, `skillListingBudgetFraction`; the environment variable \
`SLASH_COMMAND_TOOL_CHAR_BUDGET` replaces the budget). Its own built-in skills come first, \
always with their descriptions (6,209 characters in 2.1.328), so on an 8,000 budget about \
1,800 are left for installed skills. Over the budget, every skill keeps its name and \
descriptions are kept in order of recent use while they fit; the others are listed by name \
only, and the model no longer knows when to use them. `check` cannot know the model and \
assumes Claude Code's default one (30,000; the message says what is left on the older \
models); `skillwatch trigger` uses its `--model`'s. skillwatch counts the \
skills of one folder (skills with `disable-model-invocation: true` are not listed to the \
model) and, with no history of use, keeps descriptions in the folder's order. Whatever else \
the user has installed shares the same budget, so this is the best case. Shorten \
descriptions, or split the folder.",
    ),
    (
        "SW223",
        "Harnesses cut long descriptions in the listing the model picks skills from. Claude Code \
lists each skill with its description and ` - when_to_use`, cut to 1,536 characters \
(`skillListingMaxDescChars`); Codex 0.169 cuts the description at 1,021 characters and adds \
`...`. What comes after never reaches the model when it decides which skill to use. Put what \
decides the choice first. Each finding names the harness and the version measured \
(`core/src/loaders/profiles.rs`, re-measured with `skillwatch loads`); `[check] harnesses` \
picks the harnesses spoken for.",
    ),
    (
        "SW224",
        "Some harnesses leave a skill out of their listing without a word, so the agent never \
learns it exists. Measured on the pinned CLIs (`skillwatch loads`, 2026-11-28): Copilot CLI \
1.0.102 drops a skill whose description is over 1,024 characters, and one whose frontmatter is \
not strict YAML (`description: Use when: x` unquoted, which the other harnesses read anyway); \
Codex 0.169, OpenCode 1.18 and Copilot CLI drop a skill with a repeated key (Claude Code and \
Gemini CLI take the last value); Gemini CLI 0.61 and OpenCode drop a skill without `name`. \
`[check] harnesses = [\"claude-code\", \"codex\", \"copilot-cli\", \"gemini-cli\", \"opencode\"]` \
(the default: every harness a skill ships to) picks the harnesses spoken for.",
    ),
    (
        "SW001",
        "A `skillwatch-ignore` comment silences the named rules on one line: alone on its line \
(after a comment opener such as `<!--` or `#`) it covers the next line, after other text its own \
line. Name each rule by id, separated by spaces or commas; anything after the ids is a reason \
for the reader: `<!-- skillwatch-ignore SW307: our own docs site -->` in the Markdown body, \
`# skillwatch-ignore SW116` in the frontmatter or an eval.yaml. A directive that names no id, \
or an id that is not a rule (a typo, a lowercase `sw301`), silences nothing and is reported. To \
silence a rule everywhere use `[check] rules = { SW307 = \"off\" }` in skillwatch.toml.",
    ),
    (
        "SW002",
        "A `skillwatch-ignore` id whose line has no finding of that rule any more (the text was \
fixed, or moved away from the line the comment covers). Left in place it would silence the next, \
unrelated finding there, so it is reported, with a fix that removes the id (or the comment line \
when it was the only one). SKILL.md and eval files are always checked for unused ids; a script \
or reference file is only when it has a finding.",
    ),
    (
        "SW501",
        "After a model change (a new model in skillwatch.toml, or `skillwatch rerun --all --model M`) \
the daemon reruns every tracked skill and compares each case's outcome lift on the new model \
with the previous one. The skill is flagged when the verdict rule says `regresses` \
(docs/scoring.md): enough shared cases for the exact sign-flip test to reach 95% (at least 6), \
that test and the interval of the mean per-case change both excluding 0, and a drop of at \
least 0.05 (so neither a tiny significant drop nor a large noisy one fails). Look at the cases \
that fell (`skillwatch compare SKILL --model OLD --model NEW`): the new model may already do \
what the skill teaches, or follow its instructions differently.",
    ),
    (
        "SW101",
        "Every Agent Skills client reads `name` and `description` from YAML frontmatter at the very \
start of SKILL.md:\n\n    ---\n    name: pdf-tools\n    description: Extract text from PDFs. Use when the user mentions PDFs.\n    ---\n\nWithout it the skill is not discovered at all.",
    ),
    (
        "SW102",
        "A frontmatter that is not YAML gives no `name` or `description`, so no client loads the \
skill. The usual cause is a `: ` inside a plain value (`description: Use when: ...`), which YAML \
reads as a nested mapping; the fix quotes the value (`description: 'Use when: ...'`), as it \
does for a value starting with `` ` ``, `@`, `%` or `*` (an alias to YAML). An \
unclosed `[` or `{` is reported where the text ends, with the line of the bracket.",
    ),
    (
        "SW106",
        "The specification allows lowercase letters, digits and hyphens in `name`, with no hyphen at \
either end and no two hyphens in a row (`pdf-tools`, not `PDF_Tools`, `-pdf` or `pdf--tools`). \
Harnesses use the name as an identifier and a slash command.",
    ),
    (
        "SW108",
        "The specification requires `name` to equal the skill's folder name; clients key skills by \
folder and some refuse a mismatch. The fix sets `name` to the folder name; rename the folder \
instead if the name is the one you want.",
    ),
    (
        "SW116",
        "The Agent Skills specification defines six fields: name, description, license, \
compatibility, metadata and allowed-tools. The default profile also knows Claude Code's documented \
fields (when_to_use, argument-hint, arguments, disable-model-invocation, user-invocable, model, \
effort, context, agent, hooks, paths, shell). Anything else belongs under `metadata`, a string map \
clients may use freely:\n\n    metadata:\n      version: \"1.2\"\n      tags: \"pdf, forms\"\n\nUnder \
`--profile agentskills` every field beyond the six is an error, as in the reference validator \
skills-ref. The fix moves a scalar or a list of scalars under `metadata` as a string; when \
`metadata` already holds the same value (a copy kept at the top level for another harness), it \
removes the copy instead. Claude Code reads its own fields only at the top level: under \
`--profile agentskills`, moving one changes what Claude Code does.",
    ),
    (
        "SW120",
        "skills-ref parses frontmatter with StrictYAML, which refuses flow collections (`[a, b]`, \
`{k: v}`), anchors, aliases and explicit tags even though they are valid YAML. Write lists as block \
sequences (one `- item` per line) and mappings as block mappings (one `key: value` per line); \
the fix does this for a one-line collection of plain or quoted scalars, keeping a comment after \
it on the key's line. Under metadata a list can also be one string. This is an error under \
`--profile agentskills`, where skillwatch agrees with skills-ref.",
    ),
    (
        "SW201",
        "Agents see only `name` and `description` when choosing a skill. Say what the skill does and \
when to use it, with the words a user would type: \"... Use when the user asks to fill a PDF form \
or mentions AcroForms.\"",
    ),
    (
        "SW204",
        "Token counts are estimated as characters / 4, as skill-validator does. Skills under about \
200 tokens rarely change what an agent does; add the workflow, inputs, outputs and an example.",
    ),
    (
        "SW207",
        "SkillsBench (84 tasks, 7,308 trajectories) found detailed (800-2,500 tokens) and compact \
skills helped most, and comprehensive ones (over 5,000 tokens) hurt. Move reference material into \
files the body links to.",
    ),
    (
        "SW212",
        "Agents read files linked from SKILL.md when needed, but may read only part of a file that is \
itself linked from a linked file. Link every file the agent needs directly from SKILL.md.",
    ),
    (
        "SW301",
        "Anything in a skill is shared with everyone who installs it and is sent to the model. Revoke \
the credential, remove it, and have the skill read it from an environment variable. skillwatch never \
prints the full value.",
    ),
    (
        "SW310",
        "A model reads every code point of a skill; a person reviewing it sees only what an editor \
or a web page draws. Bidirectional controls (U+202A-U+202E, U+2066-U+2069) reorder what is shown \
(the Trojan Source attack), so reviewed code is not the code that runs; tag characters \
(U+E0000-U+E007F) and runs of variation selectors spell a whole text no one sees (ASCII \
smuggling): these are errors, and the message shows what tag characters spell. Zero-width \
spaces, joiners and word joiners, a byte-order mark inside the text and the other \
default-ignorable format characters split a word so a reader or a pattern misses it: warnings. \
Not reported: a joiner inside an emoji sequence, a flag's tag sequence, one variation selector \
after a character, joiners between letters of scripts that use them (Persian, Indic, Thai), \
directional marks on right-to-left lines, soft hyphens. SW302 reads the text with these \
characters removed, so hiding an instruction with them does not hide it from skillwatch.",
    ),
    (
        "SW311",
        "A skill is copied, zipped and installed on other machines, where a symlink either breaks \
or points at whatever its target path holds there: `SKILL.md -> /etc/passwd` or \
`references/notes.md -> ~/.ssh/id_rsa` hands the agent a file that is not part of the skill. \
Seed 002's archive rule refuses symlinks in skill archives. skillwatch reports every link in the \
skill folder: one that leads out of the folder (or nowhere, by a path that leaves it) is an \
error, and its target is never read, checked or printed; one inside the folder, or dangling \
inside it, is a warning (installers and archives may not keep it). Copy the file into the skill \
instead of linking it.",
    ),
    (
        "SW123",
        "When a skill is invoked with arguments (`/pdf-tools report.pdf`), Claude Code replaces \
`$ARGUMENTS` with all of them, `$ARGUMENTS[N]` and `$N` with the Nth (counted from 0), and the \
names listed in `arguments` with theirs, everywhere in the body, code blocks included, before the \
model reads it (code.claude.com/docs/en/skills, \"Pass arguments to skills\"). A shell or awk \
`$1` in an example then reaches the model as the user's argument, or as nothing. Reported: `$N` \
in a code block or inline code when the skill declares neither `arguments` nor `argument-hint` \
(a warning: put the command in a script under scripts/, which is not substituted); `$ARGUMENTS` \
when the skill declares neither (information: other harnesses leave it as written, and \
`argument-hint` tells users what to pass). `$5` in prose is taken for a price.",
    ),
    (
        "SW215",
        "A skill is installed on other machines: a link to `/Users/alice/...`, `/home/bob/...`, \
`C:\\Users\\...` or `file:///...` points at a file that exists only on the author's machine (or at \
someone else's file there). Link relative to the skill folder (`references/setup.md`), or use a \
URL for a public page.",
    ),
    (
        "SW320",
        "Vetting follows values from where they come from (the environment, credential files such as ~/.aws/credentials or ~/.ssh/id_*, secret-named variables) to where they go (request bodies and URLs, uploads, sockets, scp/rsync, DNS lookups of built host names, files embedded then uploaded). The whole environment or a credential file reaching the network is an error. A single secret-named variable sent to a host that is not its own vendor's (`$OPENAI_API_KEY` to a host without `openai` in it) is an error when the host is known, a warning when it is not; in an `Authorization` header to its own API it is what keys are for. Orders in prose that move a class of the user's secrets (credential stores, `.env` files, keys, seed phrases, every API key) to an outside address or into a document, note or ticket are warnings, errors with orders not to ask or tell. See docs/vet/SW320.md.",
    ),
    (
        "SW321",
        "A reverse or bind shell gives a remote party a command line on the user's machine. Found: redirections to /dev/tcp or /dev/udp, `nc -e`/`ncat --exec`, `socat exec:`, a socket whose descriptors are duplicated onto a spawned shell (Python, Node), a PowerShell TCPClient stream run as commands. See docs/vet/SW321.md.",
    ),
    (
        "SW322",
        "Downloaded code runs with the user's rights and can change at any time after review. Vetting follows the download into pipes (`curl | sh`), substitutions (`sh -c \"$(curl ...)\"`, `bash <(curl ...)`), files (`curl -o x.sh` then `bash x.sh`; `wget` then `chmod +x` then `./x`; across code blocks and scripts) and code (`exec(urlopen(u).read())`, `eval(await (await fetch(u)).text())`). Data piped to a formatter or parser (`| jq`, `| python -m json.tool`) is not run and is not reported. See docs/vet/SW322.md.",
    ),
    (
        "SW323",
        "Encoding a command hides it from a reader; decoding and running it is an attack's signature. Vetting decodes base64, hex, rot13, char codes and reversed strings it can read and analyses what they run, so the inner behaviour is reported too. Decoding data to look at it (`base64 -d cert.b64 > cert.pem`) is not reported. See docs/vet/SW323.md.",
    ),
    (
        "SW324",
        "A skill has no reason to change who may do what on the machine. Found: writes to /etc/sudoers, sudoers.d or polkit rules, `NOPASSWD` rules, setuid/setgid bits (`chmod u+s`, `chmod 4755`), `sudo -S` fed a password, the host's root mounted into a privileged container, adding the user to sudo/wheel. Plain `sudo apt-get install` is not reported. See docs/vet/SW324.md.",
    ),
    (
        "SW325",
        "Persistence outlives the session: shell profiles, cron, systemd and launchd units, SSH authorized_keys, git hooks, and for agents their own settings (permissions, hooks), instruction files and other skills. A write there is reported when what is written fetches, runs or opens access (a URL, curl/wget, nc, /dev/tcp, a decoded payload, a hard-coded SSH key), or when it changes the agent's settings or another skill. `export PATH=...` appended to ~/.bashrc is not. See docs/vet/SW325.md.",
    ),
    (
        "SW326",
        "Miners turn the user's machine into someone else's income. Found in code: miner binaries run or fetched (xmrig, cpuminer, ...), stratum URLs, known pools, Monero wallet addresses, `--donate-level`. A command that only looks for or stops a miner (`pgrep xmrig`, `pkill xmrig`, grep) is not reported. See docs/vet/SW326.md.",
    ),
    (
        "SW327",
        "Typosquats are published under names one slip away from popular packages (`reqeusts`, `lodahs`, homoglyphs like `requ3sts`). Vetting compares each name a skill installs (pip, uv, poetry, npm, pnpm, yarn, npx, bun) or declares in a manifest (requirements files, package.json, pyproject.toml, Cargo.toml, a Gemfile, go.mod, a workflow's `uses:`; a Gemfile or workflow quoted in a code block too) with bundled lists of the most used PyPI and npm packages, crates, gems, Go modules and GitHub Actions. See docs/vet/SW327.md.",
    ),
    (
        "SW328",
        "Dependency confusion publishes a company's internal package names on the public index with a higher version. `--extra-index-url` makes pip search both indexes and take the highest version; an internal-looking name installed with no private index comes from the public one. An index on plain HTTP, a bare IP or a tunnel serves whatever its owner wants. `--index-url` of a private index (which replaces the public one) is not reported. See docs/vet/SW328.md.",
    ),
    (
        "SW330",
        "A skill runs with the user's rights; deleting their home folder, their documents, every git repository below home, the system's folders, or writing over a raw disk (`dd of=/dev/sda`, `mkfs`, `wipefs`) is never what a skill is for, and these are errors wherever they are written (shell, Python `shutil.rmtree`, Node `fs.rmSync`, PowerShell `Remove-Item -Recurse`, `find ~ -name .git -exec rm -rf {} +`). Dropping a database, force-pushing over a shared branch (`main`, `master`, `release/*`), deleting every resource of a cluster or a bucket, `terraform destroy` can be what a devops skill is asked to do: warnings, unless the skill's text also tells the agent not to ask for confirmation or not to tell the user, which makes them errors. A test or scratch database (`DROP DATABASE IF EXISTS app_test`), build folders, caches below home and `--force-with-lease` are not reported. Orders in prose that destroy what is the user's (home folders, every table or backup, production data, resources across all contexts) without asking are warnings, errors with orders not to ask or tell. See docs/vet/SW330.md.",
    ),
    (
        "SW331",
        "An agent's configuration decides what it may do without asking: `~/.claude/settings.json`, `.claude/settings.local.json`, `~/.claude.json`, `.mcp.json`, `~/.codex/config.toml`, `~/.gemini/settings.json`, `.cursor/mcp.json`, `.vscode/settings.json` and their kin. A skill that widens permissions (`Bash(*)`, `defaultMode: bypassPermissions`), switches approvals or sandboxes off (`approval_policy = \"never\"`, `danger-full-access`, `chat.tools.autoApprove`, `autoAccept`), or adds a hook or MCP server that fetches or runs code, takes the user out of the loop for every later session: errors. Other hooks, MCP servers and setting changes, and orders in the user's global instruction files, are warnings to review; a project's own CLAUDE.md or AGENTS.md conventions are not reported. The same orders written in prose (\"open ~/.claude/settings.json and set defaultMode to bypassPermissions\") are reported too. Reading the settings is not. See docs/vet/SW331.md.",
    ),
    (
        "SW332",
        "Skills are installed by name from registries and repositories; a name one edit from a well-known skill's (a letter missing, doubled, swapped or replaced by a look-alike) is how a copy gets installed instead of the original. Vetting compares the skill's `name:` with a bundled list of well-known skills (Anthropic's public skills and the most installed community ones) and reports a near miss when the skill also reaches an outside address. The same holds for text that claims someone else's name or an official status (\"the official Anthropic PDF skill\", \"the maintained fork of ...\") while handing data to an address. A warning: the name alone proves nothing. See docs/vet/SW332.md.",
    ),
    (
        "SW333",
        "Browser cookie and login databases, keychains, crypto wallets, SSH private keys, `/proc/*/environ`, `.git-credentials`, `.netrc`, and the token files of agents and CLIs hold other parties' credentials; infostealers read exactly these. When a skill reads one and vet finds where it goes, SW320 reports the flow as an error; when vet finds no sink (the data may leave through code vet cannot follow), the read alone is a warning. The same rule covers the user asked, through the agent, for what only they hold (a password, PIN, one-time or MFA code, recovery key or phrase, private key, personal access token: \"ask the user for their SSO password and the MFA code\"), read by the parts of a sentence, and a password dialog the skill draws itself (`osascript ... with hidden answer`): a warning, an error when the same step names an outside address; a text that warns of the trick (\"IT will never ask for your password\") is not reported. See docs/vet/SW333.md.",
    ),
    (
        "SW334",
        "A skill can attack the user without running anything itself: it tells the agent how to write the user's code, and the agent plants the backdoor. An order to add a master password, a hidden admin account, a fallback or bypass token or hard-coded credentials to the code the agent writes is an error; an order to switch an authentication, authorization, signature, certificate, CSRF or rate-limit check off is an error when it applies to every project or handler the agent writes or when the text wants it kept quiet, otherwise a warning (a prototype may skip CSRF on purpose). What decides is the parts of a sentence (a verb of planting with a secret or an account; a verb of switching off with a check), not a phrase; a prohibition (\"never disable TLS verification\") or a description of attacks is not an order. A password or token compared with a fixed string in code the skill hands over as a template is a warning. What a weakening does, ordered in prose (MD5 or plaintext for passwords, secrets logged, fail-open checks, `cluster-admin`, SSH open to 0.0.0.0/0, security tests skipped, a route that runs request input), is a warning, an error with a cover story or kept from review. Also warnings: a protection of the user's machine switched off in code (Gatekeeper, SIP, Defender or an exclusion from it, SELinux, a firewall, a root certificate trusted) or in prose (\"tell the user to disable their antivirus\"), and code handed over in any language that runs a command taken from a request (a web shell) or accepts a password by a fixed suffix. See docs/vet/SW334.md.",
    ),
    (
        "SW335",
        "Attacks in skills send to and run from hosts of their authors; honest skills talk to their vendors' services (GitHub, PyPI, Slack, Sentry, a cloud's API) or to a host the user configures. Vetting lists every host the skill's code names (scripts, fenced code blocks, config files; not prose, not comment lines) and reports, as a warning, each one that is neither on a bundled list of well-known services (code hosting, registries, clouds, AI vendors, developer SaaS, standards bodies) nor a private or placeholder name. It does not say the host is hostile: it says nobody the reviewer knows runs it. Platforms where anyone gets an address (`github.io`, `herokuapp.com`, `workers.dev`) are reported; a bucket under `amazonaws.com` is not. Skills that teach about attacks are not reported. See docs/vet/SW335.md.",
    ),
    (
        "SW302",
        "Text that tells the agent to ignore earlier instructions (\"disregard all prior guidance\"), \
take another persona (\"you are no longer Claude\"), keep actions from the user, or send secrets \
out is how a malicious skill takes over an agent. skillwatch reads the text as a model does: after \
NFKC, with invisible characters removed (`Ig<U+200B>nore`, fullwidth letters), and points at the \
characters as written. An order to send data to a URL or address inside an HTML comment, an image's \
alt text or an `<IMPORTANT>`/`<SYSTEM>`-style block (places a reader does not see) is an error too. \
SKILL.md, the skill's Markdown and text files, its eval files and scripts/ are read. A skill that \
teaches about attacks stays silent when its sentence frames the text as one (\"never ...\", \"such \
as\", \"e.g.\", \"example\", \"attack\", \"injection\"); text only quoted or in a code block is a \
warning to review.",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_well_formed() {
        let mut ids: Vec<_> = all_rules().map(|r| r.id).collect();
        for id in &ids {
            assert!(id.len() == 5 && id.starts_with("SW"), "{id}");
            assert!(id[2..].bytes().all(|b| b.is_ascii_digit()), "{id}");
        }
        let n = ids.len();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), n, "duplicate rule id");
    }

    #[test]
    fn skill_md_rule_ids_match_their_category() {
        for r in SKILL_MD_RULES
            .iter()
            .chain(RESULT_RULES)
            .chain(DIRECTIVE_RULES)
        {
            let expected = match r.category {
                Category::Directive => '0',
                Category::Spec => '1',
                Category::Quality => '2',
                Category::Security => '3',
                Category::Eval => '4',
                Category::Results => '5',
            };
            assert_eq!(r.id.as_bytes()[2] as char, expected, "{}", r.id);
            assert!(
                r.name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b == b'-' || b.is_ascii_digit())
            );
        }
    }

    #[test]
    fn profile_severities_and_explanations_name_real_rules() {
        for (_, id, _) in PROFILE_SEVERITIES {
            assert!(rule(id).is_some(), "{id}");
        }
        for (id, _) in EXPLANATIONS {
            assert!(rule(id).is_some(), "{id}");
        }
        assert_eq!(severity("SW116", Profile::Default), Severity::Warning);
        assert_eq!(severity("SW116", Profile::AgentSkills), Severity::Error);
        assert_eq!(severity("SW101", Profile::AgentSkills), Severity::Error);
        assert!(explain("SW116").unwrap().contains("metadata"));
        assert_eq!(explain("SW107"), Some(rule("SW107").unwrap().summary));
        assert_eq!(explain("SW999"), None);
    }
}
