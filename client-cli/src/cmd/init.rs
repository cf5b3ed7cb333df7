//! `skillwatch init [NAME]`: scaffold a skill folder that `skillwatch check` passes and
//! `skillwatch run` can measure: a SKILL.md with a working example task, eval cases in either
//! format, and (when none applies yet) a skillwatch.toml whose `[models]` says how to pick a
//! harness. The templates are files beside this module, with `{name}` and `{title}` the only
//! placeholders (so plain replacement serves; no template engine is needed). Nothing existing
//! is overwritten: every file is checked first, and none is written if one exists.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use skillwatch_core::checks::{CheckOptions, Severity, check_skill_dir, spec};
use skillwatch_core::config;

const SKILL_MD: &str = include_str!("init/SKILL.md.template");
const EVAL_YAML: &str = include_str!("init/eval.yaml.template");
const EVALS_JSON: &str = include_str!("init/evals.json.template");
const SKILLWATCH_TOML: &str = include_str!("init/skillwatch.toml.template");

/// Arguments of `skillwatch init`.
#[derive(clap::Args)]
pub struct Args {
    /// The skill's name, and the folder created for it (lowercase letters, digits and single
    /// hyphens). Without it, the current folder becomes the skill, named after it.
    name: Option<String>,
    /// The eval file to write.
    #[arg(long, value_enum, default_value_t = EvalFormat::EvalYaml)]
    format: EvalFormat,
}

/// The eval file formats `init` can write.
#[derive(Clone, Copy, clap::ValueEnum)]
enum EvalFormat {
    /// tests/eval.yaml (skill-validator's format).
    EvalYaml,
    /// evals/evals.json (agentskills.io, skill-creator, ACES).
    EvalsJson,
}

/// Write the skill folder, then check it and say what to do next.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let cwd = std::env::current_dir().context("cannot read the current folder")?;
    let (dir, name) = match &args.name {
        Some(name) => (cwd.join(name), name.clone()),
        None => {
            let name = cwd
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .context("the current folder has no name to give the skill: pass NAME")?;
            (cwd.clone(), name)
        }
    };
    let problems = spec::name_problems(&name);
    if !problems.is_empty() {
        bail!(
            "`{name}` cannot be a skill's name: {}; use lowercase letters, digits and single \
             hyphens (e.g. `meeting-notes`)",
            problems.join(", ")
        );
    }
    let files = plan(&dir, &name, args.format);
    let existing: Vec<String> = files
        .iter()
        .filter(|(path, _)| path.exists())
        .map(|(path, _)| shown(path, &cwd))
        .collect();
    if !existing.is_empty() {
        bail!(
            "refusing to overwrite {}: `skillwatch init` only creates new files",
            existing.join(", ")
        );
    }
    for (path, text) in &files {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))?;
        errln!("created {}", shown(path, &cwd));
    }
    report(&dir, &name, &cwd)
}

/// The files to write: the skill's, and a skillwatch.toml beside the skill folder when no
/// skillwatch.toml applies to it yet.
fn plan(dir: &Path, name: &str, format: EvalFormat) -> Vec<(PathBuf, String)> {
    let fill = |template: &str| {
        template
            .replace("{name}", name)
            .replace("{title}", &title(name))
    };
    let mut files = vec![(dir.join("SKILL.md"), fill(SKILL_MD))];
    files.push(match format {
        EvalFormat::EvalYaml => (dir.join("tests/eval.yaml"), fill(EVAL_YAML)),
        EvalFormat::EvalsJson => (dir.join("evals/evals.json"), fill(EVALS_JSON)),
    });
    let above = dir.parent().unwrap_or(dir);
    if config::nearest(above).is_none() {
        files.push((above.join(config::FILE_NAME), fill(SKILLWATCH_TOML)));
    }
    files
}

/// `meeting-notes` as a heading: `Meeting notes`.
fn title(name: &str) -> String {
    let words = name.replace('-', " ");
    let mut chars = words.chars();
    chars
        .next()
        .map(|first| first.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// Check what was written (it must pass), and print the next steps.
fn report(dir: &Path, name: &str, cwd: &Path) -> anyhow::Result<ExitCode> {
    let reports = check_skill_dir(dir, &CheckOptions::default());
    let errors: Vec<String> = reports
        .iter()
        .flat_map(|r| &r.diagnostics)
        .filter(|d| d.severity == Severity::Error)
        .map(|d| format!("{}: {} {}", d.path.display(), d.rule, d.message))
        .collect();
    if !errors.is_empty() {
        bail!(
            "the new skill does not pass `skillwatch check`:\n{}",
            errors.join("\n")
        );
    }
    let at = shown(dir, cwd);
    let at = if at.is_empty() { ".".to_string() } else { at };
    errln!(
        "\n`{name}` is ready and passes `skillwatch check {at}`. Next:\n  \
         1. replace the example task in {at}/SKILL.md and its eval cases with your own;\n  \
         2. measure it: skillwatch run {at} --harness claude-code --model claude-sonnet-4-5\n     \
         (or --harness codex, or --harness openai --base-url http://localhost:11434/v1 for a \
         local model; see `skillwatch run --help`)"
    );
    Ok(ExitCode::SUCCESS)
}

/// `path` relative to `cwd` when it is below it.
fn shown(path: &Path, cwd: &Path) -> String {
    path.strip_prefix(cwd).unwrap_or(path).display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_read_as_headings() {
        assert_eq!(title("meeting-notes"), "Meeting notes");
        assert_eq!(title("x"), "X");
    }
}
