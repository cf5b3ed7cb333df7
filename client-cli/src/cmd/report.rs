//! `skillwatch report [SKILL...] --html FILE`: the history as one self-contained HTML page
//! (charts of lift per case, over time and per model, pass rates, security, and every trial of
//! the latest runs down to its trajectory). See `history_report` for what the page holds.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use skillwatch_core::plural::count;
use skillwatch_daemon::store::time::now_ms;

use super::history_db::{DbArgs, skill_name};
use crate::history_report;

/// Arguments of `skillwatch report`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Skills to show, by name or folder [default: every skill in the history].
    skills: Vec<String>,
    /// Write the report to FILE as one HTML page that opens from disk (no network, no script).
    #[arg(long, value_name = "FILE", required = true)]
    html: PathBuf,
    /// Megabytes of trajectory and output text the drill-down may embed; trials past it are
    /// listed without them.
    #[arg(long, value_name = "MB", default_value_t = 3.0)]
    detail_mb: f64,
    #[command(flatten)]
    db: DbArgs,
}

/// Read the history, render the page, write it.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if !(args.detail_mb >= 0.0 && args.detail_mb.is_finite()) {
        bail!(
            "--detail-mb must be a number of megabytes >= 0, found {}",
            args.detail_mb
        );
    }
    let store = args.db.open_existing()?;
    let mut skills = Vec::new();
    for arg in &args.skills {
        let name = skill_name(arg)?;
        if !store.has_skill(&name)? {
            let known: Vec<String> = store.skills()?.into_iter().map(|s| s.name).collect();
            bail!(
                "no skill named `{name}` in {}; it knows: {}",
                store.path().display(),
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            );
        }
        skills.push(name);
    }
    let budget = (args.detail_mb * 1_000_000.0) as usize;
    let report = history_report::gather(&store, &skills, budget, now_ms())?;
    let page = history_report::render(&report);
    write_whole(&args.html, page.as_bytes())?;
    errln!(
        "wrote {} ({} KB): {}, {}",
        args.html.display(),
        page.len().div_ceil(1000),
        count(report.skills.len(), "skill"),
        count(report.columns.len(), "model"),
    );
    Ok(ExitCode::SUCCESS)
}

/// Write through a temporary file beside `path` and rename it over, so a reader never sees
/// half a page and an existing report survives a failed write.
fn write_whole(path: &std::path::Path, bytes: &[u8]) -> anyhow::Result<()> {
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    let name = path
        .file_name()
        .with_context(|| format!("{}: expected a file name", path.display()))?;
    let tmp = parent.join(format!(
        ".{}.tmp-{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    std::fs::write(&tmp, bytes).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| {
        let _ = std::fs::remove_file(&tmp);
        format!("moving the report to {}", path.display())
    })
}
