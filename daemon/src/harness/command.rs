//! The `command` harness: any program that takes the prompt and the workspace and writes an
//! ATIF trajectory, for agents skillwatch has no adapter for.
//!
//! Contract: the program runs in the workspace with the scrubbed, isolated environment plus
//! `SKILLWATCH_PROMPT`, `SKILLWATCH_MODEL`, `SKILLWATCH_WORKSPACE`, `SKILLWATCH_SKILLS_DIR` and
//! `SKILLWATCH_TRAJECTORY` (the file to write, outside the workspace); the same values can be put
//! into its arguments as `{prompt}`, `{model}`, `{workspace}`, `{skills_dir}`, `{trajectory}`.
//! Skills are staged in `skills_dir` (default `.agents/skills`). Exit status 0 and a valid ATIF
//! v1.x file mean success; tokens and cost come from the file's metrics.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use skillwatch_core::trajectory::{NormalizedRun, ParseWarning, TokenUsage, Trajectory};
use tokio::sync::OnceCell;

use super::cli;
use super::env::{HostEnv, TrialEnv};
use super::process::{Exit, Invocation, read_capped};
use super::{
    BoxFuture, ErrorKind, Harness, HarnessError, HarnessInfo, TrialError, TrialOutcome, TrialSpec,
};

/// How to run a command harness.
#[derive(Debug, Clone)]
pub struct CommandConfig {
    /// The program.
    pub program: PathBuf,
    /// Its arguments, with `{prompt}`-style placeholders.
    pub args: Vec<String>,
    /// Where skills are staged, relative to the workspace.
    pub skills_dir: PathBuf,
    /// The version recorded with trials; by default a hash of the program file, so editing
    /// the program invalidates reused baselines.
    pub version: Option<String>,
    /// Further host variables to pass through (e.g. the agent's API key).
    pub env_allow: Vec<String>,
    /// The environment trials draw from.
    pub host_env: HostEnv,
}

impl CommandConfig {
    /// A config for `program` with no arguments and the default skills dir.
    pub fn new(program: impl Into<PathBuf>) -> CommandConfig {
        CommandConfig {
            program: program.into(),
            args: Vec::new(),
            skills_dir: ".agents/skills".into(),
            version: None,
            env_allow: Vec::new(),
            host_env: HostEnv::current(),
        }
    }
}

/// The command adapter.
#[derive(Debug)]
pub struct CommandHarness {
    config: CommandConfig,
    version: OnceCell<String>,
}

impl CommandHarness {
    /// An adapter running `config.program`.
    pub fn new(config: CommandConfig) -> CommandHarness {
        CommandHarness {
            config,
            version: OnceCell::new(),
        }
    }

    fn invocation(&self, spec: &TrialSpec, env: TrialEnv, trajectory: &Path) -> Invocation {
        let c = &self.config;
        let values = [
            ("SKILLWATCH_PROMPT", "{prompt}", spec.prompt.clone()),
            ("SKILLWATCH_MODEL", "{model}", spec.model.clone()),
            (
                "SKILLWATCH_WORKSPACE",
                "{workspace}",
                spec.workspace.display().to_string(),
            ),
            (
                "SKILLWATCH_SKILLS_DIR",
                "{skills_dir}",
                c.skills_dir.display().to_string(),
            ),
            (
                "SKILLWATCH_TRAJECTORY",
                "{trajectory}",
                trajectory.display().to_string(),
            ),
        ];
        let mut env = env;
        for (var, _, value) in &values {
            env.set(var, value.clone());
        }
        let args = c
            .args
            .iter()
            .map(|a| {
                values
                    .iter()
                    .fold(a.clone(), |acc, (_, key, value)| acc.replace(key, value))
                    .into()
            })
            .collect();
        Invocation {
            program: resolve_program(&c.program, env.get("PATH")),
            args,
            env: env.into_vec(),
            cwd: spec.workspace.clone(),
        }
    }

    async fn run_trial(&self, spec: &TrialSpec) -> TrialOutcome {
        let mut info = HarnessInfo {
            name: "command".into(),
            version: "unknown".into(),
        };
        match self.cached_version().await {
            Ok(v) => info.version = v,
            Err(e) => {
                return TrialOutcome::not_started(
                    info,
                    TrialError::new(ErrorKind::Spawn, e.to_string()),
                );
            }
        }
        let dirs = match cli::prepare(spec, &self.config.skills_dir) {
            Ok(d) => d,
            Err(e) => return TrialOutcome::not_started(info, e),
        };
        let trajectory_path = spec.scratch.join("trajectory.json");
        let mut env = TrialEnv::scrubbed(&self.config.host_env, &[], &self.config.env_allow);
        env.isolate(&dirs);
        let inv = self.invocation(spec, env, &trajectory_path);
        let mut finished = match cli::run_agent(&inv, spec, None).await {
            Ok(f) => f,
            Err(e) => return TrialOutcome::not_started(info, e),
        };
        finished.logs.trajectory = Some(trajectory_path.clone());
        let expect_file = finished.process.exit == Exit::Code(0);
        let run = match read_trajectory(&trajectory_path) {
            Ok(run) => Some(run),
            Err(e) => {
                if expect_file || trajectory_path.exists() {
                    finished.errors.push(e);
                }
                None
            }
        };
        let mut outcome = cli::outcome(info, finished, run, &trajectory_path);
        if outcome.final_output.is_empty() {
            outcome.final_output = self.stdout_text(&outcome);
        }
        outcome
    }

    /// The program's stdout, the answer of agents that print rather than record it.
    fn stdout_text(&self, outcome: &TrialOutcome) -> String {
        outcome
            .logs
            .stdout
            .as_deref()
            .and_then(|p| read_capped(p, cli::MAX_OUTPUT_BYTES).ok())
            .map(|(t, _)| t.trim().to_owned())
            .unwrap_or_default()
    }

    async fn cached_version(&self) -> Result<String, HarnessError> {
        self.version
            .get_or_try_init(|| async {
                if let Some(v) = &self.config.version {
                    return Ok(v.clone());
                }
                let path = resolve_program(&self.config.program, self.config.host_env.get("PATH"));
                let bytes = std::fs::read(&path).map_err(|source| HarnessError::Spawn {
                    program: path.display().to_string(),
                    source,
                })?;
                let digest = Sha256::digest(&bytes);
                let hex: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
                Ok(format!("sha256:{hex}"))
            })
            .await
            .cloned()
    }
}

/// Read and validate an ATIF file into a normalized run. Errors say where the file is wrong.
fn read_trajectory(path: &Path) -> Result<NormalizedRun, TrialError> {
    let output_err = |msg: String| TrialError::new(ErrorKind::Output, msg);
    let (text, cut) = read_capped(path, cli::MAX_OUTPUT_BYTES)
        .map_err(|e| output_err(format!("{}: {e}", path.display())))?;
    if !path.exists() {
        return Err(output_err(format!(
            "{}: expected an ATIF trajectory written by the command, found no file",
            path.display()
        )));
    }
    if cut {
        return Err(output_err(format!(
            "{}: expected at most {} bytes, found a larger file",
            path.display(),
            cli::MAX_OUTPUT_BYTES
        )));
    }
    let trajectory: Trajectory = serde_json::from_str(&text).map_err(|e| {
        output_err(format!(
            "{}:{}:{}: expected an ATIF trajectory, {e}",
            path.display(),
            e.line(),
            e.column()
        ))
    })?;
    let problems = trajectory.validate();
    if !problems.is_empty() {
        let list: Vec<String> = problems.iter().map(ToString::to_string).collect();
        return Err(output_err(format!(
            "{}: not a valid ATIF trajectory: {}",
            path.display(),
            list.join("; ")
        )));
    }
    Ok(normalized(trajectory))
}

/// Totals from `final_metrics` when the file has them, else summed over the steps.
fn normalized(trajectory: Trajectory) -> NormalizedRun {
    let from_steps = trajectory
        .steps
        .iter()
        .filter_map(|s| s.metrics.as_ref())
        .map(TokenUsage::from_metrics)
        .fold(TokenUsage::default(), |a, b| a + b);
    let fm = trajectory.final_metrics.as_ref();
    let usage = fm
        .and_then(TokenUsage::from_final_metrics)
        .unwrap_or(from_steps);
    let step_cost: Option<f64> = trajectory
        .steps
        .iter()
        .filter_map(|s| s.metrics.as_ref()?.cost_usd)
        .reduce(|a, b| a + b);
    let cost_usd = fm.and_then(|m| m.total_cost_usd).or(step_cost);
    NormalizedRun {
        final_output: trajectory.final_agent_text().unwrap_or_default(),
        harness_version: Some(trajectory.agent.version.clone()),
        trajectory,
        usage,
        cost_usd,
        errors: Vec::new(),
        notices: Vec::new(),
        warnings: Vec::<ParseWarning>::new(),
        visible_skills: None,
        ended: true,
        api_stall: None,
    }
}

/// A bare program name looked up in `path` (the trial's PATH), so the program found is the one
/// the trial would run; paths with a `/` are used as given.
fn resolve_program(program: &Path, path: Option<&str>) -> PathBuf {
    if program.components().count() > 1 || program.is_absolute() {
        return program.to_path_buf();
    }
    path.unwrap_or("")
        .split(':')
        .map(|dir| Path::new(dir).join(program))
        .find(|candidate| candidate.is_file())
        .unwrap_or_else(|| program.to_path_buf())
}

impl Harness for CommandHarness {
    fn name(&self) -> &str {
        "command"
    }

    fn skills_dir(&self) -> &Path {
        &self.config.skills_dir
    }

    fn version(&self) -> BoxFuture<'_, Result<String, HarnessError>> {
        Box::pin(self.cached_version())
    }

    fn run<'a>(&'a self, spec: &'a TrialSpec) -> BoxFuture<'a, TrialOutcome> {
        Box::pin(self.run_trial(spec))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_trajectory_files_get_located_errors() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("t.json");
        let e = read_trajectory(&p).unwrap_err();
        assert!(e.message.contains("found no file"), "{}", e.message);
        std::fs::write(
            &p,
            "{\n  \"schema_version\": \"ATIF-v1.8\",\n  \"steps\": 3\n}",
        )
        .unwrap();
        let e = read_trajectory(&p).unwrap_err();
        assert!(e.message.contains("t.json:3:"), "{}", e.message);
        std::fs::write(
            &p,
            r#"{"schema_version":"ATIF-v1.8","agent":{"name":"a","version":"1"},"steps":[{"step_id":2,"source":"user","message":""}]}"#,
        )
        .unwrap();
        let e = read_trajectory(&p).unwrap_err();
        assert!(
            e.message.contains("steps[0].step_id: expected 1, found 2"),
            "{}",
            e.message
        );
        std::fs::write(&p, [0xff, 0xfe, 0x00]).unwrap();
        assert!(read_trajectory(&p).is_err());
    }

    #[test]
    fn placeholders_are_substituted_in_args_and_env() {
        let mut config = CommandConfig::new("/bin/agent");
        config.args = vec!["--task={prompt}".into(), "{trajectory}".into()];
        config.host_env = HostEnv::from_pairs([("PATH", "/bin")]);
        let h = CommandHarness::new(config);
        let spec = TrialSpec {
            prompt: "do it".into(),
            model: "m".into(),
            workspace: "/ws".into(),
            scratch: "/scratch".into(),
            skills: vec![],
            timeout: std::time::Duration::from_secs(1),
            stop_when: None,
            plant: Default::default(),
        };
        let env = TrialEnv::scrubbed(&h.config.host_env, &[], &[]);
        let inv = h.invocation(&spec, env, Path::new("/scratch/t.json"));
        assert_eq!(inv.args, vec!["--task=do it", "/scratch/t.json"]);
        assert!(inv.env.contains(&("SKILLWATCH_MODEL".into(), "m".into())));
    }
}
