//! `skillwatch loads SKILL_DIR... [--harness H]...`: will these skills load, and how, in each
//! agent CLI installed here? Each CLI runs once against a local capture server (nothing leaves
//! the machine) with the skills and their siblings staged; the report says per skill and CLI
//! version: listed whole, description cut (at which character), name only, dropped, or not
//! parsed, read from the request the CLI sent its model.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use skillwatch_core::loaders::Outcome;
use skillwatch_daemon::harness::HostEnv;
use skillwatch_daemon::loads::{self, DEFAULT_TIMEOUT, HarnessLoads, LoadsRequest, MEASURABLE};
use skillwatch_daemon::runner::HarnessKind;

/// Arguments of `skillwatch loads`.
#[derive(clap::Args)]
#[command(
    after_help = "Exit status: 0 every skill is listed whole everywhere, 1 a skill is \
cut, listed by name only, dropped or not parsed somewhere, 2 bad usage or nothing to measure.\n\
Harnesses: claude-code, codex, gemini-cli, opencode, copilot-cli (their CLIs on PATH)."
)]
pub struct Args {
    /// Skill folders (each holding a SKILL.md); the skills beside each are staged too.
    #[arg(required = true)]
    pub skills: Vec<PathBuf>,

    /// Measure only this harness (repeatable; default: every one installed).
    #[arg(long = "harness", value_name = "H")]
    pub harnesses: Vec<String>,

    /// Seconds one CLI may take.
    #[arg(long, value_name = "SECS", default_value_t = DEFAULT_TIMEOUT.as_secs())]
    pub timeout: u64,

    /// Print JSON.
    #[arg(long)]
    pub json: bool,

    /// Write each CLI's captured model request to DIR/<harness>.json.
    #[arg(long, value_name = "DIR")]
    pub keep_requests: Option<PathBuf>,
}

/// Measure and report.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut skills = Vec::new();
    for dir in &args.skills {
        let dir = dir
            .canonicalize()
            .with_context(|| format!("{}", dir.display()))?;
        if !dir.join("SKILL.md").is_file() {
            bail!(
                "{}: expected a skill folder with a SKILL.md, found none",
                dir.display()
            );
        }
        skills.push(dir);
    }
    let host = HostEnv::current();
    let mut harnesses = loads::installed(&host);
    if !args.harnesses.is_empty() {
        for name in &args.harnesses {
            let known = HarnessKind::parse(name)
                .filter(|k| MEASURABLE.iter().any(|(m, _)| m == k))
                .with_context(|| format!("--harness {name}: expected one of claude-code, codex, gemini-cli, opencode, copilot-cli"))?;
            if !harnesses.iter().any(|(k, _)| *k == known) {
                bail!("--harness {name}: its CLI is not on PATH");
            }
        }
        harnesses.retain(|(k, _)| args.harnesses.iter().any(|n| n == k.as_str()));
    }
    if harnesses.is_empty() {
        bail!("no agent CLI on PATH to measure (claude, codex, gemini, opencode, copilot)");
    }
    let request = LoadsRequest {
        skills,
        harnesses,
        timeout: Duration::from_secs(args.timeout),
        host,
    };
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    let measured = runtime.block_on(loads::measure(&request));
    if let Some(dir) = &args.keep_requests {
        std::fs::create_dir_all(dir).with_context(|| format!("{}", dir.display()))?;
        for h in &measured {
            if let Some(body) = &h.request {
                let path = dir.join(format!("{}.json", h.harness));
                std::fs::write(&path, serde_json::to_string_pretty(body)?)
                    .with_context(|| format!("{}", path.display()))?;
            }
        }
    }
    let text = match args.json {
        true => format!("{}\n", serde_json::to_string_pretty(&measured)?),
        false => human(&measured),
    };
    std::io::Write::write_all(&mut std::io::stdout().lock(), text.as_bytes())?;
    let clean = measured
        .iter()
        .all(|h| h.error.is_none() && h.skills.iter().all(|s| s.outcome == Outcome::Listed));
    Ok(if clean {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn human(measured: &[HarnessLoads]) -> String {
    let mut out = String::new();
    for h in measured {
        out.push_str(&format!(
            "{} {} ({} staged, {} listed)\n",
            h.harness, h.version, h.staged, h.listed
        ));
        if let Some(e) = &h.error {
            out.push_str(&format!("  not measured: {e}\n"));
            continue;
        }
        for s in &h.skills {
            let what = match &s.outcome {
                Outcome::Listed => "listed in full".to_owned(),
                Outcome::DescriptionCut { kept } => format!(
                    "description cut at character {kept} of {}",
                    s.description_chars
                ),
                Outcome::NameOnly => "listed by name only (no description)".to_owned(),
                Outcome::DescriptionChanged { shown } => {
                    format!("listed with another description: {shown:?}")
                }
                Outcome::Dropped => "dropped (not listed)".to_owned(),
                Outcome::NotParsed => "not parsed (invalid frontmatter; not listed)".to_owned(),
            };
            out.push_str(&format!("  {}: {what}\n", s.skill.display()));
        }
    }
    out
}
