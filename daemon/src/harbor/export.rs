//! A planned suite (`runner::plan_suite`, the seam every way of running shares) as a Harbor
//! export, and the export written to a folder: what `skillwatch export harbor` and
//! `skillwatch run --on harbor` both do, so the two cannot drift.

use std::path::{Path, PathBuf};

use skillwatch_core::harbor::{Export, ExportCase, ExportRequest, ExportSkill, Layout, export};

use crate::runner::{RunError, SuitePlan, plan_skill};

/// How to export, besides the suite.
#[derive(Debug, Clone)]
pub struct ExportOptions {
    /// Support and decoy skill folders, given to both arms.
    pub support: Vec<PathBuf>,
    /// Harbor agent (`-a`).
    pub agent: String,
    /// Model (`-m`, `provider/model`).
    pub model: Option<String>,
    /// Attempts per task and arm.
    pub attempts: u32,
    /// Agent timeout for cases that give none.
    pub timeout_secs: Option<u32>,
    /// The image tasks build `FROM`.
    pub base_image: String,
    /// `network_mode: host` (local Docker only).
    pub host_network: bool,
    /// Environment for the agent in every trial.
    pub agent_env: Vec<(String, String)>,
    /// The layout; `None` picks it from the agent's capability.
    pub layout: Option<Layout>,
}

/// The export of `plan` with `opts`.
pub fn export_suite(plan: &SuitePlan, opts: &ExportOptions) -> Result<Export, RunError> {
    let support = opts
        .support
        .iter()
        .map(|d| {
            let (s, hash) = plan_skill(d)?;
            Ok(ExportSkill {
                name: s.name,
                dir: s.source,
                content_hash: hash,
            })
        })
        .collect::<Result<Vec<_>, RunError>>()?;
    let req = ExportRequest {
        skill: ExportSkill {
            name: plan.target.name.clone(),
            dir: plan.skill_dir.clone(),
            content_hash: plan.skill_hash.clone(),
        },
        support,
        cases: plan
            .cases
            .iter()
            .zip(&plan.fingerprints)
            .map(|((key, case), fp)| ExportCase {
                key: key.clone(),
                fingerprint: fp.clone(),
                case: case.clone(),
            })
            .collect(),
        suite_hash: plan.suite_hash(),
        suite_source: plan.source(),
        agent: opts.agent.clone(),
        model: opts.model.clone(),
        attempts: opts.attempts,
        timeout_secs: opts.timeout_secs,
        base_image: opts.base_image.clone(),
        host_network: opts.host_network,
        agent_env: opts.agent_env.clone(),
        layout: opts.layout,
    };
    export(&req).map_err(|e| RunError::Settings { message: e.message })
}

/// Write `e` into `out`, which must be empty or absent.
pub fn write_export(out: &Path, e: &Export) -> Result<(), RunError> {
    let io = |context: String| move |source| RunError::Io { context, source };
    if out.exists()
        && std::fs::read_dir(out)
            .map_err(io(format!("reading {}", out.display())))?
            .next()
            .is_some()
    {
        return Err(RunError::Settings {
            message: format!(
                "{}: expected an empty or absent folder, found one with files (export into a new folder)",
                out.display()
            ),
        });
    }
    for f in &e.files {
        let path = out.join(&f.path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(io(format!("creating {}", parent.display())))?;
        }
        std::fs::write(&path, &f.bytes).map_err(io(format!("writing {}", path.display())))?;
        #[cfg(unix)]
        if f.executable {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
                .map_err(io(format!("making {} executable", path.display())))?;
        }
    }
    Ok(())
}
