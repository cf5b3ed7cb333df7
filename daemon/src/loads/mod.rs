//! `skillwatch loads`: will these skills load, and how, in each harness installed here? Each
//! CLI runs once (through [`AgentRun`], like every agent) against a local capture server with
//! the skills and their siblings staged where it reads skills; the listing in its first
//! request to the model is read back ([`skillwatch_core::loaders`]) and each skill judged:
//! listed whole, description cut (at which character), listed by name only, dropped, or not
//! parsed. Nothing leaves the machine: the CLIs are pointed at the capture server only.

mod capture;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;
use skillwatch_core::checks::sibling_skills;
use skillwatch_core::loaders::{Outcome, Written, listed_skills, request_text};

use crate::harness::discover::on_path;
use crate::harness::{HostEnv, SkillToStage, TrialStatus};
use crate::runner::workspace::WorkspaceSource;
use crate::runner::{AgentRun, HarnessKind, HarnessSettings};

use capture::Capture;

/// The CLI harnesses `loads` can measure, with their executables' names.
pub const MEASURABLE: &[(HarnessKind, &str)] = &[
    (HarnessKind::ClaudeCode, "claude"),
    (HarnessKind::Codex, "codex"),
    (HarnessKind::GeminiCli, "gemini"),
    (HarnessKind::Opencode, "opencode"),
    (HarnessKind::CopilotCli, "copilot"),
];

/// The prompt of the one run (the capture server answers it whatever it says).
const PROMPT: &str = "Reply with OK.";

/// How long one CLI may take (Copilot CLI unpacks itself on its first run).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

/// What to measure.
#[derive(Debug, Clone)]
pub struct LoadsRequest {
    /// The skill folders to report on; their siblings are staged beside them.
    pub skills: Vec<PathBuf>,
    /// The harnesses, with their executables (see [`installed`]).
    pub harnesses: Vec<(HarnessKind, PathBuf)>,
    /// Per CLI run.
    pub timeout: Duration,
    /// The environment the CLIs draw from (no key of it is sent anywhere but the capture
    /// server).
    pub host: HostEnv,
}

/// One harness's answer.
#[derive(Debug, Clone, Serialize)]
pub struct HarnessLoads {
    /// The harness.
    pub harness: String,
    /// Its version.
    pub version: String,
    /// The executable run.
    pub program: PathBuf,
    /// How many skills were staged (the named ones and their siblings).
    pub staged: usize,
    /// How many skills the listing showed, the harness's own included.
    pub listed: usize,
    /// One row per named skill.
    pub skills: Vec<SkillLoads>,
    /// Why nothing could be measured, when so.
    pub error: Option<String>,
    /// The request the listing was read from, for `--keep-requests`.
    #[serde(skip)]
    pub request: Option<serde_json::Value>,
}

/// One skill in one harness.
#[derive(Debug, Clone, Serialize)]
pub struct SkillLoads {
    /// The skill folder.
    pub skill: PathBuf,
    /// The description's length in characters (the longest value when there are several).
    pub description_chars: usize,
    /// What the listing showed.
    #[serde(flatten)]
    pub outcome: Outcome,
}

/// The measurable CLIs on `host`'s `PATH`, in [`MEASURABLE`]'s order.
pub fn installed(host: &HostEnv) -> Vec<(HarnessKind, PathBuf)> {
    MEASURABLE
        .iter()
        .filter_map(|(kind, program)| Some((*kind, on_path(program, host.get("PATH"))?)))
        .collect()
}

/// Measure every harness of `request`, one after the other.
pub async fn measure(request: &LoadsRequest) -> Vec<HarnessLoads> {
    let staged = staging(&request.skills);
    let mut out = Vec::new();
    for (kind, program) in &request.harnesses {
        out.push(measure_one(request, *kind, program, &staged).await);
    }
    out
}

/// The named skills and their siblings, one per folder name (the first wins: two folders of
/// one name cannot be staged side by side).
fn staging(skills: &[PathBuf]) -> Vec<SkillToStage> {
    let mut seen = BTreeSet::new();
    skills
        .iter()
        .flat_map(|dir| std::iter::once(dir.clone()).chain(sibling_skills(dir)))
        .filter_map(|dir| {
            let name = dir.file_name()?.to_string_lossy().into_owned();
            seen.insert(name.clone())
                .then_some(SkillToStage { name, source: dir })
        })
        .collect()
}

/// The model a CLI is started with: a real name of its vendor's (some CLIs look the name up
/// for their context window and budgets), answered by the capture server all the same.
fn model(kind: HarnessKind) -> &'static str {
    match kind {
        HarnessKind::ClaudeCode => "claude-sonnet-4-5",
        HarnessKind::GeminiCli => "gemini-2.5-pro",
        HarnessKind::Opencode => "capture",
        _ => "gpt-5",
    }
}

async fn measure_one(
    request: &LoadsRequest,
    kind: HarnessKind,
    program: &Path,
    staged: &[SkillToStage],
) -> HarnessLoads {
    let mut result = HarnessLoads {
        harness: kind.as_str().to_owned(),
        version: "unknown".into(),
        program: program.to_path_buf(),
        staged: staged.len(),
        listed: 0,
        skills: Vec::new(),
        error: None,
        request: None,
    };
    let failed = |mut r: HarnessLoads, why: String| {
        r.error = Some(why);
        r
    };
    let capture = match Capture::start().await {
        Ok(c) => c,
        Err(e) => return failed(result, format!("starting the capture server: {e}")),
    };
    let mut settings = HarnessSettings::new(kind);
    settings.program = Some(program.to_path_buf());
    settings.base_url = Some(match kind {
        HarnessKind::ClaudeCode | HarnessKind::GeminiCli => capture.url(),
        _ => format!("{}/v1", capture.url()),
    });
    let key_var = kind.default_api_key_env().unwrap_or("OPENAI_API_KEY");
    let host = HostEnv::from_pairs(
        request
            .host
            .vars()
            .filter(|(k, _)| *k != key_var)
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .chain([(key_var.to_owned(), "skillwatch-loads".to_owned())]),
    );
    let harness = match crate::harness::settings::build(&settings, &host) {
        Ok(h) => h,
        Err(e) => return failed(result, e),
    };
    let root = match tempfile::Builder::new()
        .prefix("skillwatch-loads-")
        .tempdir()
    {
        Ok(r) => r,
        Err(e) => return failed(result, format!("creating a temporary folder: {e}")),
    };
    let skill_dir = staged.first().map_or(root.path(), |s| s.source.as_path());
    let run = AgentRun {
        harness: harness.as_ref(),
        workspace: WorkspaceSource::empty("loads", "loads"),
        skill_dir,
        host: &host,
        prompt: PROMPT,
        skills: staged.to_vec(),
        model: model(kind),
        timeout: request.timeout,
        plant: Default::default(),
        stop_when: None,
        retries: 1,
    };
    let done = run
        .run(|attempt| root.path().join(format!("try{attempt}")))
        .await;
    result.version = done.outcome.harness.version.clone();
    let Some(body) = capture
        .bodies()
        .into_iter()
        .max_by_key(|b| request_text(b).len())
    else {
        let why = match done.outcome.status {
            TrialStatus::Ok => "it sent no request to the model".to_owned(),
            _ => done
                .outcome
                .errors
                .iter()
                .map(|e| e.message.clone())
                .collect::<Vec<_>>()
                .join("; "),
        };
        return failed(result, format!("{}: {why}", kind.as_str()));
    };
    let listing = listed_skills(kind.as_str(), &request_text(&body));
    result.listed = listing.len();
    result.skills = request
        .skills
        .iter()
        .map(|dir| {
            let written = Written::read(dir);
            SkillLoads {
                skill: dir.clone(),
                description_chars: written
                    .descriptions
                    .iter()
                    .map(|d| d.chars().count())
                    .max()
                    .unwrap_or(0),
                outcome: written.outcome(&listing),
            }
        })
        .collect();
    result.request = Some(body);
    result
}
