//! What to run, apart from how: a skill's cases with their keys and fingerprints, the suite's
//! hash and the skill's identity, worked out once for every way of executing them (local
//! trials here, a Harbor job through `skillwatch export harbor`), so a suite has one identity
//! whichever way it ran.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use skillwatch_core::evalspec::{Case, PluginArm, case_fingerprint, load_suite};
use skillwatch_core::skill::hash_bytes;

use super::RunError;
use crate::harness::SkillToStage;
use crate::runs::resolve::{hash_dir, skill_at, skill_to_stage};
use crate::store::CaseSpec;

/// A skill's suite as a run identifies it.
#[derive(Debug, Clone)]
pub struct SuitePlan {
    /// The skill folder, canonical.
    pub skill_dir: PathBuf,
    /// The skill under test (its name is what history groups by).
    pub target: SkillToStage,
    /// `sha256:<hex>` of the skill folder.
    pub skill_hash: String,
    /// The cases with their keys, in suite order.
    pub cases: Vec<(String, Case)>,
    /// Each case's fingerprint, in the same order.
    pub fingerprints: Vec<String>,
    /// The third condition, when the suite asks for one (a Vally experiment's plugin arm);
    /// `None` runs the two arms alone, as every other suite does.
    pub plugin: Option<PluginPlan>,
}

/// A plugin arm as a run stages it: every skill of the plugin together.
#[derive(Debug, Clone)]
pub struct PluginPlan {
    /// The experiment's name for the arm (`plugin`).
    pub name: String,
    /// The skills staged together, each with its content hash, in the order written (a
    /// folder of skills in name order).
    pub skills: Vec<(SkillToStage, String)>,
}

impl SuitePlan {
    /// The suite's hash, as every run of these cases records it.
    pub fn suite_hash(&self) -> String {
        suite_hash(&self.case_specs())
    }

    /// The cases as the history stores them.
    pub fn case_specs(&self) -> Vec<CaseSpec> {
        self.cases
            .iter()
            .zip(&self.fingerprints)
            .map(|((key, case), hash)| CaseSpec {
                key: key.clone(),
                content_hash: hash.clone(),
                definition: serde_json::to_value(case).ok(),
            })
            .collect()
    }

    /// The eval file of the first case.
    pub fn source(&self) -> Option<String> {
        self.cases.first().map(|(_, c)| c.origin.file.clone())
    }
}

/// Plan the cases of the skill in `skill_dir` (only those named in `only`, all when empty).
pub fn plan_suite(skill_dir: &Path, only: &[String]) -> Result<SuitePlan, RunError> {
    let (skill_dir, target) = skill_at(skill_dir)?;
    let (cases, plugin) = suite_cases(&skill_dir, only)?;
    let plugin = plugin
        .map(|arm| plugin_plan(&skill_dir, &arm))
        .transpose()?;
    let fingerprints = cases
        .iter()
        .map(|(_, c)| case_fingerprint(c, &skill_dir))
        .collect();
    let skill_hash = hash_dir(&skill_dir)?;
    Ok(SuitePlan {
        skill_dir,
        target,
        skill_hash,
        cases,
        fingerprints,
        plugin,
    })
}

/// The identity of a suite version: its case keys and hashes.
pub fn suite_hash(cases: &[CaseSpec]) -> String {
    hash_bytes(
        cases
            .iter()
            .map(|c| format!("{}={}", c.key, c.content_hash))
            .collect::<Vec<_>>()
            .join("\n")
            .as_bytes(),
    )
}

/// A support or decoy skill's name and content hash.
pub fn plan_skill(dir: &Path) -> Result<(SkillToStage, String), RunError> {
    Ok((skill_to_stage(dir)?, hash_dir(dir)?))
}

/// The skills of a plugin arm, found from the experiment's folder as Vally resolves them: a
/// path naming a skill folder is that skill, one naming a folder of skills (a plugin's
/// `skills/`) is every skill in it.
fn plugin_plan(skill_dir: &Path, arm: &PluginArm) -> Result<PluginPlan, RunError> {
    let experiment = skill_dir.join(&arm.file);
    let base = experiment.parent().unwrap_or(skill_dir);
    let mut skills = Vec::new();
    for path in &arm.skills {
        let found = skillwatch_core::evalspec::staged_skill_dirs(base, path, skill_dir);
        if found.is_empty() {
            return Err(RunError::Settings {
                message: format!(
                    "{}: the plugin arm `{}` stages `{path}`: expected a skill folder (with a \
                     SKILL.md) or a folder of skills, found neither (paths are relative to the \
                     experiment's folder, so this is {})",
                    arm_at(&experiment, arm),
                    arm.name,
                    base.join(path.trim()).display()
                ),
            });
        }
        for dir in found {
            skills.push(plan_skill(&dir)?);
        }
    }
    Ok(PluginPlan {
        name: arm.name.clone(),
        skills,
    })
}

/// `file:line:col` of the arm's name in the experiment, as `check` (SW405) points at it; the
/// file alone when it cannot be read again.
fn arm_at(experiment: &Path, arm: &PluginArm) -> String {
    let Ok(text) = std::fs::read_to_string(experiment) else {
        return experiment.display().to_string();
    };
    let at = skillwatch_core::text::LineIndex::new(&text).line_col(&text, arm.span.start);
    format!("{}:{}:{}", experiment.display(), at.line, at.column)
}

/// Cases with their keys in the run.
type Keyed = Vec<(String, Case)>;

/// The suite's cases with their keys in the run: case ids, made unique across eval files by
/// suffixing a repeated id with its file; filtered by `only` (all when empty). With them, the
/// suite's plugin arm, if it has one.
fn suite_cases(skill_dir: &Path, only: &[String]) -> Result<(Keyed, Option<PluginArm>), RunError> {
    let suite = load_suite(skill_dir)?;
    let mut seen = BTreeSet::new();
    let mut cases = Vec::new();
    for case in suite.cases {
        let key = if seen.insert(case.id.clone()) {
            case.id.clone()
        } else {
            format!("{} ({})", case.id, case.origin.file)
        };
        if only.is_empty() || only.contains(&case.id) || only.contains(&key) {
            cases.push((key, case));
        }
    }
    if cases.is_empty() {
        let message = if only.is_empty() {
            format!(
                "{}: expected at least one eval case, found none",
                skill_dir.display()
            )
        } else {
            format!(
                "{}: expected cases named {}, found none of them",
                skill_dir.display(),
                only.join(", ")
            )
        };
        return Err(RunError::NoCases { message });
    }
    Ok((cases, suite.plugin))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skill(dir: &Path, name: &str) {
        std::fs::create_dir_all(dir.join(name)).unwrap();
        let md = format!("---\nname: {name}\ndescription: d\n---\nbody\n");
        std::fs::write(dir.join(name).join("SKILL.md"), md).unwrap();
    }

    fn arm(skills: &[&str]) -> PluginArm {
        PluginArm {
            name: "plugin".into(),
            file: "../../../../x.experiment.yaml".into(),
            span: skillwatch_core::text::Span { start: 0, end: 0 },
            skills: skills.iter().map(|s| s.to_string()).collect(),
        }
    }

    /// A folder of skills is every skill in it, in name order; a skill folder is itself; a
    /// path that is neither stops the run naming the experiment, the arm and the path.
    #[test]
    fn a_plugin_arm_stages_each_skill_of_its_folders() {
        let tmp = tempfile::tempdir().unwrap();
        let skills = tmp.path().join("plugins/p/skills");
        for name in ["zeta", "alpha", "target"] {
            skill(&skills, name);
        }
        skill(&tmp.path().join("elsewhere"), "extra");
        std::fs::create_dir_all(skills.join("not-a-skill")).unwrap();
        let target = skills.join("target");
        let plan = plugin_plan(&target, &arm(&["plugins/p/skills", "elsewhere/extra"])).unwrap();
        let names: Vec<&str> = plan.skills.iter().map(|(s, _)| s.name.as_str()).collect();
        assert_eq!(names, ["alpha", "target", "zeta", "extra"]);
        assert!(
            plan.skills
                .iter()
                .all(|(_, hash)| hash.starts_with("sha256:"))
        );

        // `${eval.parent}` is the skill under test's folder, as Vally's dotnet/skills layout
        // has it
        let plan = plugin_plan(&target, &arm(&["plugins/p/skills/${eval.parent}"])).unwrap();
        let names: Vec<&str> = plan.skills.iter().map(|(s, _)| s.name.as_str()).collect();
        assert_eq!(names, ["target"]);

        // the error points at the arm as `check` does, file:line:col
        let text = "name: x\nvariants:\n  plugin:\n    environment: {}\n";
        std::fs::write(tmp.path().join("x.experiment.yaml"), text).unwrap();
        let mut missing = arm(&["plugins/q/skills"]);
        missing.span.start = text.find("plugin:").unwrap();
        let message = plugin_plan(&target, &missing).unwrap_err().to_string();
        assert!(
            message.contains(
                "x.experiment.yaml:3:3: the plugin arm `plugin` stages `plugins/q/skills`"
            ),
            "{message}"
        );
        assert!(message.contains("plugins/q/skills)"), "{message}");
    }
}
