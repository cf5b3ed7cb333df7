//! `skillwatch export harbor SKILL_DIR --out DIR`: the skill's suite as Harbor tasks and a
//! job config running both arms (docs/harbor.md). The mapping is `core::harbor::export`; this
//! writes its files and prints how to run the job.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use skillwatch_core::evalspec::{FileKind, case_fingerprint, parse_suite, read_eval_text};
use skillwatch_core::harbor::{Export, Layout, SKILLED_SUFFIX};
use skillwatch_core::plural::count;
use skillwatch_daemon::harbor::{ExportOptions, export_suite, write_export};
use skillwatch_daemon::runner::{SuitePlan, plan_suite};

/// Arguments of `skillwatch export`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    target: Target,
}

#[derive(clap::Subcommand, Debug)]
enum Target {
    /// Write the suite as Harbor tasks (one per case) and a job config with both arms.
    Harbor(HarborArgs),
}

/// Arguments of `skillwatch export harbor`.
#[derive(clap::Args, Debug)]
pub struct HarborArgs {
    /// The skill folder.
    skill_dir: PathBuf,
    /// The eval file to export [default: the skill's tests/eval.yaml or evals/evals.json].
    #[arg(long, value_name = "FILE")]
    suite: Option<PathBuf>,
    /// Folder to write (created; must be empty or absent).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Harbor agent (`-a`): claude-code, codex, copilot-cli, opencode, ..., or module:Class.
    #[arg(long, default_value = "claude-code")]
    agent: String,
    /// Model (`-m`), as Harbor spells it: provider/model.
    #[arg(long)]
    model: Option<String>,
    /// Trials per task and arm.
    #[arg(long, default_value_t = 3)]
    attempts: u32,
    /// Agent timeout in seconds for cases that give none.
    #[arg(long)]
    timeout: Option<u32>,
    /// Image the tasks build FROM (for a remote backend it must be in a registry).
    #[arg(long, default_value = "debian:bookworm-slim")]
    base_image: String,
    /// Host networking in the sandbox, so a model server on the host's 127.0.0.1 is reachable
    /// (local Docker runs only).
    #[arg(long)]
    host_network: bool,
    /// Environment for the agent in every trial, KEY=VALUE (repeatable).
    #[arg(long = "agent-env", value_name = "KEY=VALUE")]
    agent_env: Vec<String>,
    /// Support or decoy skill folders, given to both arms (repeatable).
    #[arg(long = "support", value_name = "DIR")]
    support: Vec<PathBuf>,
    /// Bake the skill into a second variant of each task instead of Harbor's `skills:`
    /// (automatic for agents without Harbor's skills capability).
    #[arg(long)]
    baked: bool,
    /// Only these cases (repeatable).
    #[arg(long = "case", value_name = "ID")]
    cases: Vec<String>,
}

/// Run `skillwatch export`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.target {
        Target::Harbor(a) => harbor(a),
    }
}

fn harbor(a: HarborArgs) -> anyhow::Result<ExitCode> {
    let mut plan = plan_suite(&a.skill_dir, &a.cases)?;
    if let Some(file) = &a.suite {
        replace_suite(&mut plan, file, &a.cases)?;
    }
    let agent_env = a
        .agent_env
        .iter()
        .map(|kv| {
            kv.split_once('=')
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .with_context(|| format!("--agent-env: expected KEY=VALUE, found {kv:?}"))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let opts = ExportOptions {
        support: a.support.clone(),
        agent: a.agent.clone(),
        model: a.model.clone(),
        attempts: a.attempts,
        timeout_secs: a.timeout,
        base_image: a.base_image.clone(),
        host_network: a.host_network,
        agent_env,
        layout: a.baked.then_some(Layout::Baked),
    };
    let exported = export_suite(&plan, &opts)?;
    write_export(&a.out, &exported)?;
    print_summary(&a, &plan, &exported)?;
    Ok(ExitCode::SUCCESS)
}

/// Use the cases of `file` instead of the skill's own eval file.
fn replace_suite(plan: &mut SuitePlan, file: &Path, only: &[String]) -> anyhow::Result<()> {
    let kind = FileKind::of_path(file).with_context(|| {
        format!(
            "{}: expected an eval file named eval.yaml or evals.json",
            file.display()
        )
    })?;
    let text = read_eval_text(file).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
    let rel = skillwatch_core::evalspec::relative_path(
        &plan.skill_dir,
        &file.canonicalize().unwrap_or(file.to_path_buf()),
    );
    let suite = parse_suite(kind, &text, &rel)
        .map_err(|e| anyhow::anyhow!("{}: {}", file.display(), e.message))?;
    plan.cases = suite
        .cases
        .into_iter()
        .filter(|c| only.is_empty() || only.contains(&c.id))
        .map(|c| (c.id.clone(), c))
        .collect();
    if plan.cases.is_empty() {
        bail!(
            "{}: expected at least one eval case, found none",
            file.display()
        );
    }
    plan.fingerprints = plan
        .cases
        .iter()
        .map(|(_, c)| case_fingerprint(c, &plan.skill_dir))
        .collect();
    Ok(())
}

fn print_summary(a: &HarborArgs, plan: &SuitePlan, e: &Export) -> anyhow::Result<()> {
    use std::fmt::Write as _;
    let mut s = String::new();
    let arms = match e.layout {
        Layout::AgentSkills => "two agent entries, the second with `skills:`".to_owned(),
        Layout::Baked => format!("one agent entry; skill arm = tasks ending in {SKILLED_SUFFIX}"),
    };
    writeln!(
        s,
        "{}: {} of {} -> {} ({arms}), {} per task and arm",
        a.out.display(),
        count(plan.cases.len(), "case"),
        plan.target.name,
        count(e.tasks.len(), "task"),
        count(a.attempts, "attempt"),
    )?;
    for n in &e.notes {
        writeln!(s, "note: {n}")?;
    }
    let out = a.out.display();
    writeln!(s, "run locally (Docker):")?;
    writeln!(s, "  cd {out} && harbor run -c {} -o jobs -y", e.job_config)?;
    writeln!(
        s,
        "run remotely (e.g. Daytona; needs pip install 'harbor[daytona]' and a FROM image in a registry):"
    )?;
    writeln!(
        s,
        "  cd {out} && harbor run -c {} -o jobs -y -e daytona -n 16",
        e.job_config
    )?;
    writeln!(s, "then: skillwatch import harbor {out}/jobs/<job-name>")?;
    crate::out::stdout(&s)
}
