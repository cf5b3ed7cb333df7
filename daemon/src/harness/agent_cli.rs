//! The seam the Gemini CLI, OpenCode and Copilot CLI adapters share: one configuration, one
//! cached version, one trial flow ([`super::cli::run_cli_trial`]); each CLI says only what
//! sets it apart ([`CliKind`]): where it reads skills, its key variables, its environment,
//! its arguments and its output format.

use std::path::{Path, PathBuf};

use skillwatch_core::trajectory::{NormalizedRun, RunContext};
use tokio::sync::OnceCell;

use super::cli::{self, CliHarness};
use super::env::{HostEnv, TrialDirs, TrialEnv};
use super::process::Invocation;
use super::{BoxFuture, Harness, HarnessError, TrialOutcome, TrialSpec};

/// How to run one of these CLIs.
#[derive(Debug, Clone)]
pub(crate) struct AgentCliConfig {
    /// The executable (looked up in `PATH` when a bare name).
    pub program: PathBuf,
    /// The model API's base URL: a local server, a gateway or a proxy.
    pub base_url: Option<String>,
    /// The API key for every trial; otherwise the host's key variables pass through.
    pub api_key: Option<String>,
    /// Extra arguments before the prompt.
    pub extra_args: Vec<String>,
    /// Further host variables to pass through.
    pub env_allow: Vec<String>,
    /// The environment trials draw from.
    pub host_env: HostEnv,
}

impl AgentCliConfig {
    /// Settings running `program` with every default.
    #[cfg(test)]
    pub(crate) fn new(program: impl Into<PathBuf>) -> AgentCliConfig {
        AgentCliConfig {
            program: program.into(),
            base_url: None,
            api_key: None,
            extra_args: Vec::new(),
            env_allow: Vec::new(),
            host_env: HostEnv::current(),
        }
    }
}

/// A trial's fresh HOME and the CLI's fresh config dir.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Dirs<'a> {
    /// The fresh HOME.
    pub home: &'a Path,
    /// The fresh config dir ([`CliKind::CONFIG_DIR`] in the scratch dir).
    pub config: &'a Path,
}

/// What one CLI adds to the shared flow.
pub(crate) trait CliKind: Send + Sync + std::fmt::Debug + 'static {
    /// The harness name recorded with trials (`gemini-cli`, `opencode`, `copilot-cli`).
    const NAME: &'static str;
    /// Where skills are staged, relative to the workspace.
    const SKILLS_DIR: &'static str;
    /// The fresh config dir's name in the scratch dir.
    const CONFIG_DIR: &'static str;
    /// Host variables the CLI may see besides [`super::BASE_ALLOW`]: its credentials.
    const ALLOW: &'static [&'static str];

    /// The CLI's own variables and files for a trial: endpoint, key, config dir, switches
    /// that keep it from the network and from updating itself.
    /// `model` is the trial's (empty when only the version is asked).
    fn setup(config: &AgentCliConfig, env: &mut TrialEnv, dirs: Dirs<'_>, model: &str);

    /// The arguments for `spec` (the prompt last).
    fn args(config: &AgentCliConfig, spec: &TrialSpec) -> Vec<String>;

    /// Read the CLI's stdout.
    fn parse(text: &str, ctx: &RunContext) -> NormalizedRun;
}

/// An adapter for the CLI `K`.
#[derive(Debug)]
pub(crate) struct AgentCli<K: CliKind> {
    config: AgentCliConfig,
    version: OnceCell<String>,
    kind: std::marker::PhantomData<K>,
}

impl<K: CliKind> AgentCli<K> {
    /// An adapter running the CLI as `config` says.
    pub(crate) fn new(config: AgentCliConfig) -> AgentCli<K> {
        AgentCli {
            config,
            version: OnceCell::new(),
            kind: std::marker::PhantomData,
        }
    }

    fn env(&self, dirs: &TrialDirs, config_dir: &Path, model: &str) -> TrialEnv {
        let c = &self.config;
        let mut env = TrialEnv::scrubbed(&c.host_env, K::ALLOW, &c.env_allow);
        env.isolate(dirs);
        let dirs = Dirs {
            home: &dirs.home,
            config: config_dir,
        };
        K::setup(c, &mut env, dirs, model);
        env
    }

    pub(crate) fn invocation(&self, spec: &TrialSpec, env: TrialEnv) -> Invocation {
        Invocation {
            program: self.config.program.clone(),
            args: K::args(&self.config, spec)
                .into_iter()
                .map(Into::into)
                .collect(),
            env: env.into_vec(),
            cwd: spec.workspace.clone(),
        }
    }

    async fn run_trial(&self, spec: &TrialSpec) -> TrialOutcome {
        let h = CliHarness {
            name: K::NAME,
            skills_dir: Path::new(K::SKILLS_DIR),
            config_dir: K::CONFIG_DIR,
        };
        let invocation = |dirs: &TrialDirs, config: &Path| {
            self.invocation(spec, self.env(dirs, config, &spec.model))
        };
        let version = self.cached_version().await;
        cli::run_cli_trial(h, version, spec, invocation, K::parse).await
    }

    async fn cached_version(&self) -> Result<String, HarnessError> {
        self.version
            .get_or_try_init(|| {
                cli::isolated_version(&self.config.program, K::CONFIG_DIR, |dirs, config| {
                    self.env(dirs, config, "").into_vec()
                })
            })
            .await
            .cloned()
    }
}

impl<K: CliKind> Harness for AgentCli<K> {
    fn name(&self) -> &str {
        K::NAME
    }

    fn skills_dir(&self) -> &Path {
        Path::new(K::SKILLS_DIR)
    }

    fn version(&self) -> BoxFuture<'_, Result<String, HarnessError>> {
        Box::pin(self.cached_version())
    }

    fn run<'a>(&'a self, spec: &'a TrialSpec) -> BoxFuture<'a, TrialOutcome> {
        Box::pin(self.run_trial(spec))
    }
}

/// The `name=value` form of a flag, so a prompt that starts with `-` is never read as one.
pub(crate) fn flag(name: &str, value: &str) -> String {
    format!("{name}={value}")
}

/// Where unpacked CLI packages are kept between trials (Copilot CLI unpacks 235 MB on its
/// first start in a HOME): the host's cache, shared by every trial, never a user's config.
pub(crate) fn shared_cache(host: &HostEnv, name: &str) -> PathBuf {
    let base = host
        .get("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| host.get("HOME").map(|h| Path::new(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("skillwatch").join(name)
}
