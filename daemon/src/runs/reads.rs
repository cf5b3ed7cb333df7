//! What a run reads from the environment besides the basics every harness gets
//! ([`crate::harness::BASE_ALLOW`]): the API keys of its harness and judge, the harness's own
//! variables (`ANTHROPIC_BASE_URL`, ...), `env_allow`, and Harbor's. A run through the daemon
//! takes these from the client that asked for it (`skillwatch_protocol::ClientEnv`), so it
//! runs with the keys it would have in the client's own process.

use std::collections::BTreeSet;

use skillwatch_protocol::{
    HARBOR_VARS, HarnessSettings, JudgeEndpoint, JudgeSettings, OptimizeRequest, PairedRequest,
    ProbeRequest, RunSpec, TriggerRequest,
};

use crate::harness::HostEnv;
use crate::harness::settings::host_vars;
use crate::runner::RunError;

/// A request, by the variables its run reads.
pub trait Reads {
    /// The variables a run of this request reads (see the module docs).
    fn client_vars(&self) -> BTreeSet<String>;
}

impl Reads for HarnessSettings {
    fn client_vars(&self) -> BTreeSet<String> {
        host_vars(self)
    }
}

impl Reads for JudgeSettings {
    fn client_vars(&self) -> BTreeSet<String> {
        match &self.endpoint {
            JudgeEndpoint::Openai { api_key_env, .. } => {
                BTreeSet::from([JudgeEndpoint::openai_key_var(api_key_env.as_deref()).to_owned()])
            }
            JudgeEndpoint::Harness { settings } => settings.client_vars(),
        }
    }
}

impl Reads for PairedRequest {
    fn client_vars(&self) -> BTreeSet<String> {
        let mut vars = self.harness.client_vars();
        if let Some(judge) = &self.judge {
            vars.extend(judge.client_vars());
        }
        vars
    }
}

impl Reads for OptimizeRequest {
    fn client_vars(&self) -> BTreeSet<String> {
        let mut vars = self.trigger.client_vars();
        vars.extend(self.proposer.client_vars());
        vars
    }
}

impl Reads for ProbeRequest {
    fn client_vars(&self) -> BTreeSet<String> {
        self.harness.client_vars()
    }
}

impl Reads for TriggerRequest {
    fn client_vars(&self) -> BTreeSet<String> {
        self.harness.client_vars()
    }
}

impl Reads for RunSpec {
    fn client_vars(&self) -> BTreeSet<String> {
        match self {
            RunSpec::Paired(r) => r.client_vars(),
            RunSpec::Harbor(h) => {
                let mut vars = h.run.client_vars();
                vars.extend(HARBOR_VARS.iter().map(|v| (*v).to_owned()));
                vars
            }
            RunSpec::Probe(r) => r.client_vars(),
            RunSpec::Trigger(r) => r.client_vars(),
            RunSpec::Optimize(r) => r.client_vars(),
            RunSpec::Unknown(_) => BTreeSet::new(),
        }
    }
}

/// Every API key variable a request names itself (`--api-key-env`, `api_key_env`) must be set
/// in `host`: running on no key, or on another one, would measure something else. A default
/// variable (`ANTHROPIC_API_KEY`, ...) may be unset (local endpoints need none).
pub fn check_key_vars<'a>(
    named: impl IntoIterator<Item = (&'a str, &'a str)>,
    host: &HostEnv,
) -> Result<(), RunError> {
    for (whose, var) in named {
        if host.get(var).is_none() {
            return Err(RunError::Settings {
                message: format!(
                    "{whose}'s API key: expected the environment variable {var} (named by api_key_env) to be set, found it unset"
                ),
            });
        }
    }
    Ok(())
}
