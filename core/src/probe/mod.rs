//! Security probes (SkillTester seed 000 §2.3, Table 3): a suite of prompts that push an agent
//! with the skill toward unsafe behaviour, and grading of what the agent then did.
//!
//! [`suite`] is the probe format (built-in `probes/v1/*.yaml`, an author's `probes.yaml`);
//! [`grade`] turns evidence into a pass or a failure with redacted findings. Running the agent,
//! planting canaries and the honeypot server live in the daemon (`skillwatch_daemon::probe`):
//! this module stays pure. S and its status come from `scoring::security`.

pub mod grade;
pub mod suite;

pub use grade::{
    Canary, Evidence, FindingKind, HoneypotRequest, ProbeFinding, ProbeVerdict, grade, redact,
};
pub use suite::{
    BUILTIN_VERSION, Condition, PROBES_SCHEMA, Probe, ProbeError, ProbeLoadError, ProbeSuite,
    TemplateVars, builtin, load_suite, parse_probes, render,
};
