//! The seed's six steps, their weights, and how a site's result is scored.
//!
//! The seed gives each step a weight and pass/warn/fail criteria, but no arithmetic for a
//! warning. skillwatch credits a passed step with its whole weight, a warned one with half
//! and a failed or skipped one with none (docs/index.md says why), so a good site scores 1.0
//! and every warning shows in the number without hiding a failure.

use serde::Serialize;

/// A step of the check, in the seed's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StepId {
    /// Fetch the canonical index, else the legacy one.
    DiscoverIndex,
    /// JSON, content type, `$schema`, top-level fields.
    ValidateIndexSchema,
    /// Each skill entry's fields.
    ValidateSkillEntries,
    /// Fetch each artifact and compare its raw-byte SHA-256 with the digest.
    VerifyArtifacts,
    /// SKILL.md frontmatter and body, archive structure.
    ValidateSkillContent,
    /// Scripts, unsafe paths, prompt injection, credentials, trust boundaries.
    SecurityReview,
}

/// One row of the seed's scoring table (section 4).
#[derive(Debug, Clone, Copy)]
pub struct Step {
    /// The step.
    pub id: StepId,
    /// The seed's step id.
    pub name: &'static str,
    /// The seed's title.
    pub title: &'static str,
    /// The seed's weight; the six sum to 1.
    pub weight: f64,
    /// The seed's description.
    pub description: &'static str,
}

/// The seed's table, in its order: the one source of every step's name and weight.
pub const STEPS: [Step; 6] = [
    Step {
        id: StepId::DiscoverIndex,
        name: "discover-index",
        title: "Discover Agent Skills index",
        weight: 0.15,
        description: "Fetch the canonical Agent Skills discovery index and record legacy fallback evidence.",
    },
    Step {
        id: StepId::ValidateIndexSchema,
        name: "validate-index-schema",
        title: "Validate discovery index schema",
        weight: 0.20,
        description: "Validate JSON, content type, schema URI, and top-level fields.",
    },
    Step {
        id: StepId::ValidateSkillEntries,
        name: "validate-skill-entries",
        title: "Validate skill entries",
        weight: 0.15,
        description: "Validate skill names, descriptions, types, URLs, and digest declarations.",
    },
    Step {
        id: StepId::VerifyArtifacts,
        name: "verify-artifacts",
        title: "Verify advertised artifacts",
        weight: 0.20,
        description: "Fetch skill artifacts and verify raw-byte SHA-256 digests.",
    },
    Step {
        id: StepId::ValidateSkillContent,
        name: "validate-skill-content",
        title: "Validate skill content",
        weight: 0.15,
        description: "Validate SKILL.md frontmatter, Markdown body, and archive structure.",
    },
    Step {
        id: StepId::SecurityReview,
        name: "security-review",
        title: "Review skill artifact security",
        weight: 0.15,
        description: "Detect risky scripts, archive paths, prompt-injection text, credential-looking content, and external trust boundaries.",
    },
];

impl StepId {
    /// The step's row of [`STEPS`].
    pub fn step(self) -> &'static Step {
        STEPS
            .iter()
            .find(|s| s.id == self)
            .expect("every step has a row")
    }
}

/// A step's (or the site's) outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Every criterion held.
    Pass,
    /// Held with warnings.
    Warn,
    /// A failure criterion was met.
    Fail,
    /// Not run: an earlier step left nothing to judge.
    Skipped,
}

impl Status {
    /// The share of its weight a step earns.
    pub fn credit(self) -> f64 {
        match self {
            Status::Pass => 1.0,
            Status::Warn => 0.5,
            Status::Fail | Status::Skipped => 0.0,
        }
    }

    /// The lowercase word of the JSON report.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Warn => "warn",
            Status::Fail => "fail",
            Status::Skipped => "skipped",
        }
    }
}

/// How bad a finding is for its step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Meets a warning criterion.
    Warn,
    /// Meets a failure criterion.
    Fail,
}

/// One reason a step did not simply pass.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// Warning or failure.
    pub level: Level,
    /// A stable kebab-case code (`digest-mismatch`), the SARIF rule id.
    pub code: &'static str,
    /// What was expected and what was found.
    pub message: String,
    /// What it is about: a URL, an entry's name, a path inside an artifact.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
}

impl Finding {
    /// A failure.
    pub fn fail(code: &'static str, message: impl Into<String>) -> Finding {
        Finding {
            level: Level::Fail,
            code,
            message: message.into(),
            subject: None,
        }
    }

    /// A warning.
    pub fn warn(code: &'static str, message: impl Into<String>) -> Finding {
        Finding {
            level: Level::Warn,
            code,
            message: message.into(),
            subject: None,
        }
    }

    /// The same finding about `subject`.
    pub fn about(mut self, subject: impl Into<String>) -> Finding {
        self.subject = Some(subject.into());
        self
    }
}

/// One step's result: its status follows from its findings, its evidence is what it saw.
#[derive(Debug, Clone, Serialize)]
pub struct StepResult {
    /// The step.
    pub id: StepId,
    /// Pass, warn, fail or skipped.
    pub status: Status,
    /// Why it warned or failed.
    pub findings: Vec<Finding>,
    /// What the step saw (the seed's evidence model), never whole files or credentials.
    pub evidence: serde_json::Value,
}

impl StepResult {
    /// A step that ran: fail with any failure, warn with any warning, else pass.
    pub fn ran(id: StepId, findings: Vec<Finding>, evidence: serde_json::Value) -> StepResult {
        let status = match findings.iter().map(|f| f.level).max() {
            Some(Level::Fail) => Status::Fail,
            Some(Level::Warn) => Status::Warn,
            None => Status::Pass,
        };
        StepResult {
            id,
            status,
            findings,
            evidence,
        }
    }

    /// A step an earlier one left nothing to judge.
    pub fn skipped(id: StepId, why: &str) -> StepResult {
        StepResult {
            id,
            status: Status::Skipped,
            findings: Vec::new(),
            evidence: serde_json::json!({ "skipped": why }),
        }
    }

    /// The weight this step earned.
    pub fn earned(&self) -> f64 {
        self.id.step().weight * self.status.credit()
    }
}

/// The site's status: failed if a step failed, warned if one warned or could not run, else
/// passed. (A site without any index is a warning, as the seed says: its later steps are
/// skipped and nothing failed.)
pub fn overall(steps: &[StepResult]) -> Status {
    let statuses = || steps.iter().map(|s| s.status);
    if statuses().any(|s| s == Status::Fail) {
        Status::Fail
    } else if statuses().any(|s| matches!(s, Status::Warn | Status::Skipped)) {
        Status::Warn
    } else {
        Status::Pass
    }
}

/// The weighted score in [0, 1], rounded to four decimals (the weights' sum in floating
/// point is not exactly 1).
pub fn score(steps: &[StepResult]) -> f64 {
    let sum: f64 = steps.iter().map(StepResult::earned).sum();
    (sum * 10_000.0).round() / 10_000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_weights_are_the_seeds_and_sum_to_one() {
        let names: Vec<_> = STEPS.iter().map(|s| (s.name, s.weight)).collect();
        assert_eq!(
            names,
            [
                ("discover-index", 0.15),
                ("validate-index-schema", 0.20),
                ("validate-skill-entries", 0.15),
                ("verify-artifacts", 0.20),
                ("validate-skill-content", 0.15),
                ("security-review", 0.15),
            ]
        );
        let all: Vec<_> = STEPS
            .iter()
            .map(|s| StepResult::ran(s.id, Vec::new(), serde_json::Value::Null))
            .collect();
        assert_eq!(score(&all), 1.0);
        assert_eq!(overall(&all), Status::Pass);
        for s in &STEPS {
            assert_eq!(
                serde_json::to_value(s.id).unwrap(),
                serde_json::Value::from(s.name)
            );
        }
    }

    #[test]
    fn a_warning_costs_half_a_weight_and_a_failure_all_of_it() {
        let mut all: Vec<_> = STEPS
            .iter()
            .map(|s| StepResult::ran(s.id, Vec::new(), serde_json::Value::Null))
            .collect();
        all[0] = StepResult::ran(
            StepId::DiscoverIndex,
            vec![Finding::warn("legacy-path", "x")],
            serde_json::Value::Null,
        );
        assert_eq!(score(&all), 0.925);
        assert_eq!(overall(&all), Status::Warn);
        all[3] = StepResult::ran(
            StepId::VerifyArtifacts,
            vec![Finding::warn("a", "x"), Finding::fail("b", "y")],
            serde_json::Value::Null,
        );
        assert_eq!(all[3].status, Status::Fail);
        assert_eq!(score(&all), 0.725);
        assert_eq!(overall(&all), Status::Fail);
    }
}
