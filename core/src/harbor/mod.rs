//! Harbor both ways: a skillwatch suite as Harbor tasks, and Harbor's job output as trials.
//!
//! Harbor (PyPI `harbor`, 0.25.0 checked) runs sandboxed agent trials in Docker or on hosted
//! backends; skillwatch uses it to scale a paired evaluation past one machine. This module is
//! the mapping alone, plain data in and out (it reads files it is pointed at, never writes or
//! spawns), so it is tested on real Harbor output files; writing the export, starting Harbor
//! and storing trials belong to the CLI and the daemon.
//!
//! | skillwatch | Harbor |
//! |---|---|
//! | case | task (`tasks/<slug>/`, one per case) |
//! | arm (baseline, skill) | agent entry of the job (the second adds the skill under `skills:`), or a task variant with the skill baked into the image ([`Layout::Baked`]) |
//! | attempt | trial (`n_attempts` per task and agent entry) |
//! | file assertions | `tests/test.sh` → `reward.json` (`reward` plus one key per assertion) |
//! | output assertions, constraints, invocation, security | graded on import from the trajectory |
//! | judged criteria | never in the sandbox: judged on import (`skillwatch rejudge`) |
//!
//! Each task's `tests/skillwatch.json` ([`Manifest`]) carries the case, its identity and the
//! suite's, and the verifier copies it to `/logs/verifier/`, so a job folder alone (from any
//! machine) says which case and suite each trial belongs to; Harbor's absolute paths
//! (`trial_uri`, task paths) are never read.

mod export;
mod job;
mod manifest;
mod trial;
mod verifier;

pub use export::{
    Export, ExportCase, ExportError, ExportFile, ExportRequest, ExportSkill, JOB_CONFIG, Layout,
    SKILLED_SUFFIX, SKILLS_CAPABLE, export, has_skills_capability,
};
pub use job::{
    CANCELLED, JobMeta, JobScan, ScanError, TrialDir, TrialLock, TrialResult, read_trial_dir,
    scan_job,
};
pub use manifest::{MANIFEST_FILE, MANIFEST_FORMAT, Manifest, ManifestArm, SuiteCase};
pub use trial::{Arm, ArmRule, HarborTrial, TrialStatus, epoch_us, grade, read_trial};
pub use verifier::{REWARD_KEY, assertion_key, sandbox_checked, test_sh};

/// The folder `/app` the exported tasks' agents work in (Harbor's `[environment].workdir`).
pub const WORKDIR: &str = "/app";
