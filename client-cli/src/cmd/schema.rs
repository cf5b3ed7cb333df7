//! `skillwatch schema eval-yaml|evals-json|vally-eval|vally-experiment|waza-eval|waza-task|skill-up-eval|skill-up-case|check-output|index-check-output|vet-card|agent-skills-discovery|probes`:
//! print a JSON Schema: of an eval file format, so editors without skillwatch
//! (yaml-language-server, VS Code's JSON support) can validate eval files with the same rules
//! `skillwatch check` applies; of `check --json`'s, `index check --json`'s or `vet --card --json`'s report, for
//! scripts that read them; of the discovery index `index build` writes; or of the security probes `skillwatch probe` reads.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Context;
use skillwatch_core::evalspec::{Dialect, schema};

/// Arguments of `skillwatch schema`.
#[derive(clap::Args)]
pub struct Args {
    /// Which format's schema to print.
    #[arg(value_enum)]
    format: SchemaFormat,
}

/// The formats with a published schema.
#[derive(Clone, Copy, clap::ValueEnum)]
enum SchemaFormat {
    /// skill-validator's tests/eval.yaml.
    EvalYaml,
    /// evals/evals.json (agentskills.io, skill-creator, ACES; legacy shapes included).
    EvalsJson,
    /// A Microsoft Vally eval spec (`stimuli:`, eval.vally.yaml).
    VallyEval,
    /// A Microsoft Vally experiment (`variants:`).
    VallyExperiment,
    /// A microsoft/waza eval.yaml (`tasks:`, `metrics:`).
    WazaEval,
    /// A microsoft/waza task file (`inputs.prompt`).
    WazaTask,
    /// An alibaba/skill-up eval.yaml (`cases.files`).
    SkillUpEval,
    /// An alibaba/skill-up case file (`input.prompt`).
    SkillUpCase,
    /// The report of `skillwatch check --json`.
    CheckOutput,
    /// The report of `skillwatch index check --json`.
    IndexCheckOutput,
    /// The capability cards of `skillwatch vet --card --json`.
    VetCard,
    /// An Agent Skills Discovery v0.2.0 index (.well-known/agent-skills/index.json).
    AgentSkillsDiscovery,
    /// Security probes (probes/v1/*.yaml, a skill's tests/probes.yaml).
    Probes,
}

/// The report of `skillwatch check --json` (JSON Schema 2020-12), as shipped.
pub const CHECK_OUTPUT_SCHEMA: &str = include_str!("../../../schemas/check-output.schema.json");

/// The report of `skillwatch index check --json` (JSON Schema 2020-12), as shipped.
pub const INDEX_CHECK_OUTPUT_SCHEMA: &str =
    include_str!("../../../schemas/index-check-output.schema.json");

/// The capability cards of `skillwatch vet --card --json` (JSON Schema 2020-12), as shipped.
pub const VET_CARD_SCHEMA: &str = include_str!("../../../schemas/vet-card.schema.json");

/// Print the schema (JSON, as shipped in the repository's `schemas/` folder) to stdout.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let text = match args.format {
        SchemaFormat::EvalYaml => schema::schema_text(Dialect::SkillValidator),
        SchemaFormat::EvalsJson => schema::schema_text(Dialect::EvalsJson),
        SchemaFormat::VallyEval => schema::schema_text(Dialect::Vally),
        SchemaFormat::VallyExperiment => schema::schema_text(Dialect::VallyExperiment),
        SchemaFormat::WazaEval => schema::schema_text(Dialect::Waza),
        SchemaFormat::WazaTask => schema::schema_text(Dialect::WazaTask),
        SchemaFormat::SkillUpEval => schema::schema_text(Dialect::SkillUp),
        SchemaFormat::SkillUpCase => schema::schema_text(Dialect::SkillUpCase),
        SchemaFormat::CheckOutput => CHECK_OUTPUT_SCHEMA,
        SchemaFormat::IndexCheckOutput => INDEX_CHECK_OUTPUT_SCHEMA,
        SchemaFormat::VetCard => VET_CARD_SCHEMA,
        SchemaFormat::AgentSkillsDiscovery => skillwatch_core::index::DISCOVERY_SCHEMA,
        SchemaFormat::Probes => skillwatch_core::probe::PROBES_SCHEMA,
    };
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .context("cannot write the schema to stdout")?;
    Ok(ExitCode::SUCCESS)
}
