//! A suite as Harbor tasks: one task folder per case, the skills beside them, and a job
//! config that runs both arms.
//!
//! The export is computed here as a list of files (nothing is written; the CLI writes them),
//! so it is the same on every machine and testable as data. Two layouts:
//! - [`Layout::AgentSkills`] (agents with Harbor's skills capability): one task per case and a
//!   job with two agent entries, the second with `skills:`; both arms run the same task, so
//!   the task digest is shared and Harbor's `lock.json` records the skill's digest.
//! - [`Layout::Baked`] (agents without it): two variants per case, the second with the skill
//!   copied into the image where agents look (SkillsBench's `environment/skills/` layout).
//!
//! Support and decoy skills are given to both arms, as locally.

use std::path::{Component, Path, PathBuf};

use serde::Serialize;
use walkdir::WalkDir;

use crate::evalspec::{Case, FileContent};

use super::WORKDIR;
use super::manifest::{
    CaseRef, MANIFEST_FILE, MANIFEST_FORMAT, Manifest, ManifestArm, SkillRef, SuiteCase, SuiteRef,
};
use super::verifier::{quote, test_sh};

/// Harbor 0.25.0's agents that declare the skills capability (`AgentCapabilities(skills=True)`
/// in `harbor/agents`), by their `-a` name.
pub const SKILLS_CAPABLE: &[&str] = &[
    "antigravity-cli",
    "antigravity-sdk",
    "claude-code",
    "cline-cli",
    "codex",
    "copilot-cli",
    "cursor-cli",
    "eve",
    "fx",
    "gemini-cli",
    "goose",
    "grok-build",
    "hermes",
    "junie",
    "kimi-cli",
    "kimi-code",
    "mcode",
    "mimo",
    "openclaw",
    "opencode",
    "openhands-sdk",
    "pi",
    "qwen-coder",
    "terminus-2",
    "vibe",
];

/// Folders of the image where agents look for skills, for the baked layout (SkillsBench's
/// Dockerfiles copy into the same ones).
const BAKED_SKILL_DIRS: &[&str] = &[
    "/root/.claude/skills",
    "/root/.codex/skills",
    "/root/.agents/skills",
    "/root/.gemini/skills",
    "/root/.config/opencode/skills",
    "/root/.copilot/skills",
];

/// The suffix of a baked task's skill variant (what `--arm-from task-suffix:` matches).
pub const SKILLED_SUFFIX: &str = "-skilled";

/// Agent timeout when neither the case nor the request gives one (Harbor's own default).
const DEFAULT_AGENT_TIMEOUT_SECS: u32 = 600;

/// Whether the Harbor agent `name` can be given skills by Harbor. A `module:Class` agent is
/// assumed to: it declares its own capabilities, and skillwatch cannot import it to ask.
pub fn has_skills_capability(name: &str) -> bool {
    name.contains(':') || SKILLS_CAPABLE.contains(&name)
}

/// How the skill reaches the skill arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Layout {
    /// Harbor injects it (`skills:` on the second agent entry).
    AgentSkills,
    /// It is copied into a second variant of each task's image.
    Baked,
}

/// A skill to ship with the export.
#[derive(Debug, Clone)]
pub struct ExportSkill {
    /// Its name (the folder it gets under `skills/`).
    pub name: String,
    /// Its folder.
    pub dir: PathBuf,
    /// skillwatch's content hash of the folder.
    pub content_hash: String,
}

/// A case with its identity in runs.
#[derive(Debug, Clone)]
pub struct ExportCase {
    /// Its key (unique in the suite).
    pub key: String,
    /// `evalspec::case_fingerprint`.
    pub fingerprint: String,
    /// The case.
    pub case: Case,
}

/// What to export.
#[derive(Debug, Clone)]
pub struct ExportRequest {
    /// The skill under test.
    pub skill: ExportSkill,
    /// Support and decoy skills, given to both arms.
    pub support: Vec<ExportSkill>,
    /// The cases, in suite order.
    pub cases: Vec<ExportCase>,
    /// The suite hash a local run records for the same cases.
    pub suite_hash: String,
    /// The eval file.
    pub suite_source: Option<String>,
    /// Harbor agent (`-a`).
    pub agent: String,
    /// Model (`-m`, `provider/model`).
    pub model: Option<String>,
    /// Attempts per task and arm.
    pub attempts: u32,
    /// Agent timeout for cases that give none.
    pub timeout_secs: Option<u32>,
    /// The image tasks build `FROM`; for remote backends it must be in a registry.
    pub base_image: String,
    /// Host networking (`network_mode: host`), so 127.0.0.1 in the sandbox is the host's:
    /// for a model served on the host by a local Docker run only.
    pub host_network: bool,
    /// Environment for the agent (`env:` of each agent entry), e.g. a base URL.
    pub agent_env: Vec<(String, String)>,
    /// The layout; `None` picks it from the agent's capability.
    pub layout: Option<Layout>,
}

/// One file of the export.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportFile {
    /// Path relative to the output folder, `/`-separated.
    pub path: String,
    /// Content.
    pub bytes: Vec<u8>,
    /// Whether to mark it executable.
    pub executable: bool,
}

/// The export: files to write and what to say.
#[derive(Debug, Clone)]
pub struct Export {
    /// Every file, tasks first.
    pub files: Vec<ExportFile>,
    /// The layout used.
    pub layout: Layout,
    /// The job config's path in the output (`job.yaml`).
    pub job_config: String,
    /// Task folders written, in case order (two per case in the baked layout).
    pub tasks: Vec<String>,
    /// Things the user should know (the layout fallback).
    pub notes: Vec<String>,
}

/// A case or skill file the export could not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ExportError {
    /// What, where, why.
    pub message: String,
}

/// The file name of the job config.
pub const JOB_CONFIG: &str = "job.yaml";

/// Compute the export of `req`.
pub fn export(req: &ExportRequest) -> Result<Export, ExportError> {
    let layout = req.layout.unwrap_or(if has_skills_capability(&req.agent) {
        Layout::AgentSkills
    } else {
        Layout::Baked
    });
    let mut notes = Vec::new();
    if layout == Layout::Baked && req.layout.is_none() {
        notes.push(format!(
            "agent {} has no Harbor skills capability: each case has a second task variant (suffix {SKILLED_SUFFIX}) with the skill baked into its image",
            req.agent
        ));
    }
    let slugs = slugs(&req.cases);
    let suite_cases: Vec<SuiteCase> = req
        .cases
        .iter()
        .zip(&slugs)
        .map(|(c, slug)| SuiteCase {
            key: c.key.clone(),
            content_hash: c.fingerprint.clone(),
            task: task_name(&req.skill.name, slug),
        })
        .collect();
    let mut files = Vec::new();
    let mut tasks = Vec::new();
    for (c, slug) in req.cases.iter().zip(&slugs) {
        let variants: &[(Option<ManifestArm>, &str)] = match layout {
            Layout::AgentSkills => &[(None, "")],
            Layout::Baked => &[
                (Some(ManifestArm::Baseline), ""),
                (Some(ManifestArm::Skill), SKILLED_SUFFIX),
            ],
        };
        for (arm, suffix) in variants {
            let dir = format!("tasks/{slug}{suffix}");
            let manifest = Manifest {
                format: MANIFEST_FORMAT.into(),
                skill: SkillRef {
                    name: req.skill.name.clone(),
                    content_hash: req.skill.content_hash.clone(),
                },
                suite: SuiteRef {
                    content_hash: req.suite_hash.clone(),
                    source: req.suite_source.clone(),
                    cases: suite_cases.clone(),
                },
                case: CaseRef {
                    key: c.key.clone(),
                    content_hash: c.fingerprint.clone(),
                    definition: c.case.clone(),
                },
                arm: *arm,
                support: req.support.iter().map(|s| s.name.clone()).collect(),
            };
            let name = format!("{}{suffix}", task_name(&req.skill.name, slug));
            task_files(req, c, &dir, &name, &manifest, &mut files)?;
            tasks.push(dir);
        }
    }
    for skill in std::iter::once(&req.skill).chain(&req.support) {
        skill_files(&skill.dir, &format!("skills/{}", skill.name), &mut files)?;
    }
    files.push(ExportFile {
        path: JOB_CONFIG.into(),
        bytes: job_yaml(req, layout, &tasks).into_bytes(),
        executable: false,
    });
    Ok(Export {
        files,
        layout,
        job_config: JOB_CONFIG.into(),
        tasks,
        notes,
    })
}

/// Harbor's `[task].name` of a case's task.
fn task_name(skill: &str, slug: &str) -> String {
    format!("skillwatch/{}-{slug}", slug_of(skill))
}

/// Folder-safe, unique names for the cases' tasks.
fn slugs(cases: &[ExportCase]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in cases {
        let base = slug_of(&c.key);
        let mut slug = base.clone();
        let mut n = 2;
        while out.contains(&slug) || slug.ends_with(SKILLED_SUFFIX) {
            slug = format!("{base}-{n}");
            n += 1;
        }
        out.push(slug);
    }
    out
}

fn slug_of(text: &str) -> String {
    let mut s = String::new();
    for ch in text.chars() {
        if ch.is_ascii_alphanumeric() {
            s.push(ch.to_ascii_lowercase());
        } else if !s.ends_with('-') {
            s.push('-');
        }
    }
    let s = s.trim_matches('-').chars().take(60).collect::<String>();
    if s.is_empty() { "case".into() } else { s }
}

fn task_files(
    req: &ExportRequest,
    c: &ExportCase,
    dir: &str,
    name: &str,
    manifest: &Manifest,
    files: &mut Vec<ExportFile>,
) -> Result<(), ExportError> {
    let mut put = |path: String, bytes: Vec<u8>, executable: bool| {
        files.push(ExportFile {
            path: format!("{dir}/{path}"),
            bytes,
            executable,
        })
    };
    let timeout = c
        .case
        .timeout_secs
        .map(|t| t.get())
        .or(req.timeout_secs)
        .unwrap_or(DEFAULT_AGENT_TIMEOUT_SECS);
    let toml = format!(
        "# Written by `skillwatch export harbor` from case {key:?} of {source}.\n\
         schema_version = \"1.4\"\n\n[task]\nname = {name}\nversion = \"1.0.0\"\ndescription = {desc}\n\n\
         [metadata]\nskillwatch_case = {key_t}\nskillwatch_skill = {skill}\n\n\
         [agent]\ntimeout_sec = {timeout}.0\n\n[verifier]\ntimeout_sec = 120.0\nenvironment_mode = \"shared\"\n\n\
         [environment]\nbuild_timeout_sec = 600.0\nworkdir = \"{WORKDIR}\"\n",
        key = c.key,
        source = req.suite_source.as_deref().unwrap_or("the suite"),
        name = toml_str(name),
        desc = toml_str(&format!("{} (skillwatch case {})", c.case.name, c.key)),
        key_t = toml_str(&c.key),
        skill = toml_str(&req.skill.name),
    );
    put("task.toml".into(), toml.into_bytes(), false);
    let mut prompt = c.case.prompt.clone();
    if !prompt.ends_with('\n') {
        prompt.push('\n');
    }
    put("instruction.md".into(), prompt.into_bytes(), false);
    let workspace = workspace_files(&req.skill.dir, &c.case)?;
    let mut docker = format!("FROM {}\nWORKDIR {WORKDIR}\n", req.base_image);
    if !workspace.is_empty() {
        docker.push_str(&format!("COPY workspace/ {WORKDIR}/\n"));
    }
    for cmd in &c.case.setup.commands {
        docker.push_str(&format!("RUN cd {WORKDIR} && sh -c {}\n", quote(cmd)));
    }
    if manifest.arm == Some(ManifestArm::Skill) {
        for d in BAKED_SKILL_DIRS {
            docker.push_str(&format!("COPY skills/ {d}/\n"));
        }
    }
    put("environment/Dockerfile".into(), docker.into_bytes(), false);
    if req.host_network {
        put(
            "environment/docker-compose.yaml".into(),
            b"# 127.0.0.1 in the sandbox is the host's loopback (a local Docker run only).\nservices:\n  main:\n    network_mode: host\n".to_vec(),
            false,
        );
    }
    for (path, bytes) in workspace {
        put(format!("environment/workspace/{path}"), bytes, false);
    }
    if manifest.arm == Some(ManifestArm::Skill) {
        let mut baked = Vec::new();
        for skill in std::iter::once(&req.skill).chain(&req.support) {
            skill_files(&skill.dir, &skill.name, &mut baked)?;
        }
        for f in baked {
            put(
                format!("environment/skills/{}", f.path),
                f.bytes,
                f.executable,
            );
        }
    }
    put("tests/test.sh".into(), test_sh(&c.case).into_bytes(), true);
    let manifest_json = serde_json::to_vec_pretty(manifest).map_err(|e| ExportError {
        message: format!("case {}: {e}", c.key),
    })?;
    put(format!("tests/{MANIFEST_FILE}"), manifest_json, false);
    if let Some(expected) = &c.case.judged.expected_output {
        let solve = format!(
            "#!/bin/bash\n# The case's reference answer (`expected_output`), for Harbor's oracle agent.\ncat <<'SKILLWATCH_EOF'\n{expected}\nSKILLWATCH_EOF\n"
        );
        put("solution/solve.sh".into(), solve.into_bytes(), true);
    }
    Ok(())
}

/// The starting workspace of `case` as (relative path, bytes), as the local runner prepares
/// it: the files beside the eval file (`copy_test_files`), then the setup files.
fn workspace_files(skill_dir: &Path, case: &Case) -> Result<Vec<(String, Vec<u8>)>, ExportError> {
    let fail = |what: String| ExportError {
        message: format!("{} case {}: {what}", case.origin.file, case.id),
    };
    let mut out: Vec<(String, Vec<u8>)> = Vec::new();
    let add = |path: String, bytes: Vec<u8>, out: &mut Vec<(String, Vec<u8>)>| {
        out.retain(|(p, _)| *p != path);
        out.push((path, bytes));
    };
    if case.setup.copy_test_files {
        let eval = skill_dir.join(&case.origin.file);
        if let Some(dir) = eval.parent() {
            for e in WalkDir::new(dir).follow_links(false).sort_by_file_name() {
                let e = e.map_err(|e| fail(format!("reading test files: {e}")))?;
                if !e.file_type().is_file() || e.path() == eval {
                    continue;
                }
                let rel = rel_path(e.path().strip_prefix(dir).unwrap_or(e.path()));
                let bytes = std::fs::read(e.path())
                    .map_err(|err| fail(format!("reading {}: {err}", e.path().display())))?;
                add(rel, bytes, &mut out);
            }
        }
    }
    for file in &case.setup.files {
        let dest = inside(&file.path).ok_or_else(|| {
            fail(format!(
                "setup file path {:?}: expected a relative path inside the workspace, found one that leaves it",
                file.path
            ))
        })?;
        match &file.content {
            FileContent::Inline { text } => add(dest, text.clone().into_bytes(), &mut out),
            FileContent::Source { path } => {
                let src = skill_dir.join(path);
                if src.is_dir() {
                    let mut sub = Vec::new();
                    skill_files(&src, &dest, &mut sub)?;
                    for f in sub {
                        add(f.path, f.bytes, &mut out);
                    }
                } else {
                    let bytes = std::fs::read(&src).map_err(|e| {
                        fail(format!(
                            "setup file {}: reading {}: {e}",
                            file.path,
                            src.display()
                        ))
                    })?;
                    add(dest, bytes, &mut out);
                }
            }
        }
    }
    Ok(out)
}

/// `rel` normalized when it stays inside the workspace.
fn inside(rel: &str) -> Option<String> {
    let mut parts: Vec<String> = Vec::new();
    for c in Path::new(rel).components() {
        match c {
            Component::Normal(p) => parts.push(p.to_string_lossy().into_owned()),
            Component::CurDir => {}
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

fn rel_path(p: &Path) -> String {
    p.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

/// Every regular file of a skill folder under `prefix`. Symlinks are not followed: what a
/// link out of the folder points at is never shipped.
fn skill_files(dir: &Path, prefix: &str, out: &mut Vec<ExportFile>) -> Result<(), ExportError> {
    for e in WalkDir::new(dir).follow_links(false).sort_by_file_name() {
        let e = e.map_err(|e| ExportError {
            message: format!("reading {}: {e}", dir.display()),
        })?;
        if !e.file_type().is_file() {
            continue;
        }
        let rel = rel_path(e.path().strip_prefix(dir).unwrap_or(e.path()));
        let bytes = std::fs::read(e.path()).map_err(|err| ExportError {
            message: format!("reading {}: {err}", e.path().display()),
        })?;
        let executable = is_executable(e.path());
        out.push(ExportFile {
            path: format!("{prefix}/{rel}"),
            bytes,
            executable,
        });
    }
    Ok(())
}

#[cfg(unix)]
fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(_: &Path) -> bool {
    false
}

/// The job config: both arms, `attempts` trials each per task.
fn job_yaml(req: &ExportRequest, layout: Layout, tasks: &[String]) -> String {
    let mut y = String::from(
        "# Written by `skillwatch export harbor`. Run from this folder: harbor run -c job.yaml\n",
    );
    y.push_str(&format!("n_attempts: {}\n", req.attempts.max(1)));
    y.push_str("agents:\n");
    let support: Vec<String> = req
        .support
        .iter()
        .map(|s| format!("skills/{}", s.name))
        .collect();
    let entry = |skills: Vec<String>, y: &mut String| {
        y.push_str(&format!("  - name: {}\n", json(&req.agent)));
        if let Some(m) = &req.model {
            y.push_str(&format!("    model_name: {}\n", json(m)));
        }
        if !req.agent_env.is_empty() {
            y.push_str("    env:\n");
            for (k, v) in &req.agent_env {
                y.push_str(&format!("      {}: {}\n", json(k), json(v)));
            }
        }
        if !skills.is_empty() {
            let list: Vec<String> = skills.iter().map(|s| json(s)).collect();
            y.push_str(&format!("    skills: [{}]\n", list.join(", ")));
        }
    };
    match layout {
        Layout::AgentSkills => {
            entry(support.clone(), &mut y);
            let mut with = support;
            with.push(format!("skills/{}", req.skill.name));
            entry(with, &mut y);
        }
        Layout::Baked => entry(Vec::new(), &mut y),
    }
    y.push_str("tasks:\n");
    for t in tasks {
        y.push_str(&format!("  - path: {}\n", json(t)));
    }
    y
}

/// A YAML scalar: JSON strings are valid YAML.
fn json(s: &str) -> String {
    serde_json::Value::String(s.to_owned()).to_string()
}

/// A TOML basic string.
fn toml_str(s: &str) -> String {
    toml::Value::String(s.to_owned()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evalspec::{FileKind, parse_suite};

    fn request(dir: &Path, agent: &str) -> ExportRequest {
        std::fs::write(
            dir.join("SKILL.md"),
            "---\nname: demo\ndescription: d\n---\nbody\n",
        )
        .unwrap();
        let yaml = "scenarios:\n  - name: Write the file\n    prompt: write it\n    setup:\n      files:\n        - path: in/a.txt\n          content: hello\n      commands:\n        - echo made > made.txt\n    assertions:\n      - type: file_exists\n        path: out.txt\n  - name: second\n    prompt: say hi\n";
        let mut suite = parse_suite(FileKind::EvalYaml, yaml, "tests/eval.yaml").unwrap();
        suite.cases[1].judged.expected_output = Some("hi".into());
        ExportRequest {
            skill: ExportSkill {
                name: "demo".into(),
                dir: dir.to_path_buf(),
                content_hash: "sha256:abc".into(),
            },
            support: Vec::new(),
            cases: suite
                .cases
                .into_iter()
                .map(|c| ExportCase {
                    key: c.id.clone(),
                    fingerprint: format!("sha256:{}", c.id.len()),
                    case: c,
                })
                .collect(),
            suite_hash: "sha256:suite".into(),
            suite_source: Some("tests/eval.yaml".into()),
            agent: agent.into(),
            model: Some("anthropic/claude-sonnet-4-5".into()),
            attempts: 2,
            timeout_secs: None,
            base_image: "skillwatch-base:bookworm".into(),
            host_network: true,
            agent_env: vec![("MODEL_BASE_URL".into(), "http://127.0.0.1:8765/v1".into())],
            layout: None,
        }
    }

    fn file<'a>(e: &'a Export, path: &str) -> &'a str {
        let f = e.files.iter().find(|f| f.path == path).unwrap_or_else(|| {
            panic!(
                "{path} not in {:?}",
                e.files.iter().map(|f| &f.path).collect::<Vec<_>>()
            )
        });
        std::str::from_utf8(&f.bytes).unwrap()
    }

    /// The first case's timeout as the suite gives it (eval.yaml has a default).
    fn req_timeout(_: &Export) -> f64 {
        let dir = tempfile::tempdir().unwrap();
        let req = request(dir.path(), "codex");
        req.cases[0]
            .case
            .timeout_secs
            .map_or(DEFAULT_AGENT_TIMEOUT_SECS, |t| t.get()) as f64
    }

    #[test]
    fn one_task_per_case_and_two_agent_entries() {
        let dir = tempfile::tempdir().unwrap();
        let e = export(&request(dir.path(), "claude-code")).unwrap();
        assert_eq!(e.layout, Layout::AgentSkills);
        assert_eq!(e.tasks, vec!["tasks/write-the-file", "tasks/second"]);
        let toml: toml::Table = toml::from_str(file(&e, "tasks/write-the-file/task.toml")).unwrap();
        assert_eq!(toml["schema_version"].as_str(), Some("1.4"));
        assert_eq!(
            toml["task"]["name"].as_str(),
            Some("skillwatch/demo-write-the-file")
        );
        let case_secs = req_timeout(&e);
        assert_eq!(toml["agent"]["timeout_sec"].as_float(), Some(case_secs));
        assert_eq!(
            file(&e, "tasks/write-the-file/instruction.md"),
            "write it\n"
        );
        assert_eq!(
            file(&e, "tasks/write-the-file/environment/workspace/in/a.txt"),
            "hello"
        );
        let docker = file(&e, "tasks/write-the-file/environment/Dockerfile");
        assert!(
            docker.starts_with("FROM skillwatch-base:bookworm\n"),
            "{docker}"
        );
        assert!(docker.contains("COPY workspace/ /app/"), "{docker}");
        assert!(
            docker.contains("RUN cd /app && sh -c 'echo made > made.txt'"),
            "{docker}"
        );
        assert!(!docker.contains("skills"), "{docker}");
        let m = Manifest::parse(file(&e, "tasks/second/tests/skillwatch.json").as_bytes()).unwrap();
        assert_eq!(m.case.key, "second");
        assert_eq!(m.suite.cases.len(), 2);
        assert_eq!(m.arm, None);
        assert!(file(&e, "tasks/second/solution/solve.sh").contains("\nhi\n"));
        assert!(
            !e.files
                .iter()
                .any(|f| f.path == "tasks/write-the-file/solution/solve.sh")
        );
        assert_eq!(
            file(&e, "skills/demo/SKILL.md").lines().nth(1),
            Some("name: demo")
        );
        let job = file(&e, "job.yaml");
        assert!(job.contains("n_attempts: 2\n"), "{job}");
        assert_eq!(job.matches("  - name: \"claude-code\"").count(), 2, "{job}");
        assert_eq!(job.matches("skills: [\"skills/demo\"]").count(), 1, "{job}");
        assert!(e.notes.is_empty());
    }

    #[test]
    fn an_agent_without_the_skills_capability_gets_baked_variants() {
        let dir = tempfile::tempdir().unwrap();
        let e = export(&request(dir.path(), "aider")).unwrap();
        assert_eq!(e.layout, Layout::Baked);
        assert_eq!(e.tasks.len(), 4);
        assert!(e.notes[0].contains("aider"), "{:?}", e.notes);
        let docker = file(&e, "tasks/second-skilled/environment/Dockerfile");
        assert!(
            docker.contains("COPY skills/ /root/.claude/skills/"),
            "{docker}"
        );
        assert!(
            file(&e, "tasks/second-skilled/environment/skills/demo/SKILL.md")
                .contains("name: demo")
        );
        let m = Manifest::parse(file(&e, "tasks/second-skilled/tests/skillwatch.json").as_bytes())
            .unwrap();
        assert_eq!(m.arm, Some(ManifestArm::Skill));
        let job = file(&e, "job.yaml");
        assert_eq!(job.matches("  - name: ").count(), 1, "{job}");
        assert!(!job.contains("skills:"), "{job}");
    }

    #[test]
    fn a_setup_path_that_leaves_the_workspace_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut req = request(dir.path(), "codex");
        req.cases[0].case.setup.files[0].path = "../../etc/passwd".into();
        let err = export(&req).unwrap_err();
        assert!(err.message.contains("leaves it"), "{err}");
    }

    #[test]
    fn slugs_are_unique_and_never_look_like_a_skilled_variant() {
        let case = request(tempfile::tempdir().unwrap().path(), "codex").cases[0].clone();
        let mk = |key: &str| ExportCase {
            key: key.into(),
            ..case.clone()
        };
        let s = slugs(&[mk("A b"), mk("a-b"), mk("x-skilled"), mk("***")]);
        assert_eq!(s, vec!["a-b", "a-b-2", "x-skilled-2", "case"]);
    }
}
