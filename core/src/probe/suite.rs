//! The probe format: the built-in suite (`probes/v1/*.yaml`, embedded) and an author's own
//! `probes.yaml` beside the eval file, read with positions so every error names file:line:col.
//!
//! The JSON Schema (`schemas/probes.schema.json`, `skillwatch schema probes`) is the one
//! table of fields; the loader validates against it with the eval files' validator
//! (`evalspec::schema`), then reads the typed probes and checks what a schema cannot say:
//! unique ids, regexes that compile, placeholders that exist.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

use crate::evalspec::schema::Compiled;
use crate::scoring::skilltester::SecurityGroup;
use crate::text::{LineIndex, Span};
use crate::yaml;

/// The probe format's JSON Schema, as shipped.
pub const PROBES_SCHEMA: &str = include_str!("../../../schemas/probes.schema.json");

/// The built-in suite's version, stored with every probe run.
pub const BUILTIN_VERSION: &str = "v1";

/// The built-in suite's files: (path in the repository, text).
const BUILTIN: &[(&str, &str)] = &[
    (
        "probes/v1/abnormal_behavior_control.yaml",
        include_str!("../../../probes/v1/abnormal_behavior_control.yaml"),
    ),
    (
        "probes/v1/permission_boundary.yaml",
        include_str!("../../../probes/v1/permission_boundary.yaml"),
    ),
    (
        "probes/v1/sensitive_data_protection.yaml",
        include_str!("../../../probes/v1/sensitive_data_protection.yaml"),
    ),
];

/// File names an author's probes may have, in the folders eval files live in.
pub const AUTHOR_FILES: &[&str] = &["tests/probes.yaml", "evals/probes.yaml"];

/// Probe files larger than this are refused unread.
pub const MAX_PROBE_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// The placeholders a prompt or workspace file may use.
pub const PLACEHOLDERS: &[&str] = &[
    "skill.name",
    "skill.description",
    "honeypot_url",
    "outside_file",
];

/// One security probe.
#[derive(Debug, Clone, Serialize)]
pub struct Probe {
    /// Unique in the suite.
    pub id: String,
    /// SkillTester's reporting group.
    pub group: SecurityGroup,
    /// OWASP Agentic Top 10 categories.
    pub owasp: Vec<String>,
    /// One line about what the probe pushes the agent to do.
    pub title: Option<String>,
    /// The prompt template.
    pub prompt: String,
    /// Files staged in the workspace (templates) and paths outside it the probe allows.
    pub workspace: ProbeWorkspace,
    /// The probe fails when any of these is seen in the evidence.
    pub fail_when: Vec<Condition>,
    /// Where it was written.
    pub origin: Origin,
}

/// Where a probe was written: `file:line`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Origin {
    /// The file (repository path for built-in probes).
    pub file: String,
    /// 1-based line of the probe's entry.
    pub line: u32,
}

/// A probe's workspace.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProbeWorkspace {
    /// Files to create, relative to the workspace.
    #[serde(default)]
    pub files: Vec<ProbeFile>,
    /// Absolute paths (or prefixes) outside the workspace the skill may touch.
    #[serde(default)]
    pub allowed_paths: Vec<String>,
}

/// A workspace file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProbeFile {
    /// Relative path.
    pub path: String,
    /// Content template.
    pub content: String,
}

/// One failure condition, checked against evidence only.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Condition {
    /// A canary value in the answer, commands, tool arguments or honeypot requests.
    CanaryLeak,
    /// A read or write outside the workspace and the allowed paths.
    OutsideAccess,
    /// Any request reached the honeypot.
    HoneypotRequest,
    /// A shell command matched.
    Command(#[serde(with = "regex_text")] Regex),
    /// A tool call's arguments matched.
    Argument(#[serde(with = "regex_text")] Regex),
    /// The same shell command more than this many times.
    RepeatedCommand(u32),
    /// A workspace file matching this glob was created, changed or deleted.
    WorkspaceChanged(String),
}

mod regex_text {
    pub fn serialize<S: serde::Serializer>(r: &regex::Regex, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(r.as_str())
    }
}

/// A probe suite: the built-in probes, then the author's.
#[derive(Debug, Clone, Serialize)]
pub struct ProbeSuite {
    /// `v1`, or `v1+author:<hash>` when the skill adds its own.
    pub version: String,
    /// Every probe, built-in first.
    pub probes: Vec<Probe>,
}

/// One problem in a probe file, positioned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProbeError {
    /// The file.
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column (characters).
    pub column: u32,
    /// What was expected and what was found.
    pub message: String,
}

impl std::fmt::Display for ProbeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.file, self.line, self.column, self.message
        )
    }
}

/// Every problem found in the probe files, so an author fixes them in one pass.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
pub struct ProbeLoadError(pub Vec<ProbeError>);

/// The built-in suite (embedded in the binary).
pub fn builtin() -> &'static [Probe] {
    static SUITE: OnceLock<Vec<Probe>> = OnceLock::new();
    SUITE.get_or_init(|| {
        let mut out = Vec::new();
        for (file, text) in BUILTIN {
            out.extend(parse_probes(text, file).expect("the built-in suite loads (unit-tested)"));
        }
        out
    })
}

/// The suite for the skill in `skill_dir`: the built-in probes and the author's
/// (`tests/probes.yaml`, `evals/probes.yaml`). An author's probe may not reuse an id.
pub fn load_suite(skill_dir: &Path) -> Result<ProbeSuite, ProbeLoadError> {
    let mut probes = builtin().to_vec();
    let mut author_text = String::new();
    let mut errors = Vec::new();
    for rel in AUTHOR_FILES {
        let path = skill_dir.join(rel);
        if !path.is_file() {
            continue;
        }
        let text = match read(&path) {
            Ok(t) => t,
            Err(message) => {
                errors.push(ProbeError {
                    file: rel.to_string(),
                    line: 1,
                    column: 1,
                    message,
                });
                continue;
            }
        };
        match parse_probes(&text, rel) {
            Ok(found) => {
                author_text.push_str(&text);
                for p in found {
                    if probes.iter().any(|q| q.id == p.id) {
                        errors.push(ProbeError {
                            file: p.origin.file.clone(),
                            line: p.origin.line,
                            column: 1,
                            message: format!(
                                "expected a probe id not used by another probe, found `{}` again",
                                p.id
                            ),
                        });
                    } else {
                        probes.push(p);
                    }
                }
            }
            Err(e) => errors.extend(e.0),
        }
    }
    if !errors.is_empty() {
        return Err(ProbeLoadError(errors));
    }
    let version = if author_text.is_empty() {
        BUILTIN_VERSION.to_owned()
    } else {
        let hash = crate::skill::hash_bytes(author_text.as_bytes());
        format!("{BUILTIN_VERSION}+author:{}", &hash[7..19])
    };
    Ok(ProbeSuite { version, probes })
}

fn read(path: &Path) -> Result<String, String> {
    let meta = std::fs::symlink_metadata(path).map_err(|e| format!("cannot read: {e}"))?;
    if meta.file_type().is_symlink() {
        return Err("expected a regular file, found a symlink (not followed)".into());
    }
    if meta.len() > MAX_PROBE_FILE_BYTES {
        return Err(format!(
            "expected at most {MAX_PROBE_FILE_BYTES} bytes, found {}",
            meta.len()
        ));
    }
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read: {e}"))?;
    crate::skill::decode(bytes).map_err(|e| e.to_string())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(rename = "$schema", default)]
    _schema: Option<String>,
    probes: Vec<RawProbe>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProbe {
    id: String,
    group: SecurityGroup,
    owasp: Vec<String>,
    #[serde(default)]
    title: Option<String>,
    prompt: String,
    #[serde(default)]
    workspace: ProbeWorkspace,
    fail_when: Vec<RawCondition>,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
enum RawCondition {
    // `true` is the only value the schema allows: the key alone says what to look for.
    CanaryLeak(serde::de::IgnoredAny),
    OutsideAccess(serde::de::IgnoredAny),
    HoneypotRequest(serde::de::IgnoredAny),
    Command(String),
    Argument(String),
    RepeatedCommand(u32),
    WorkspaceChanged(String),
}

/// Parse one probe file's text; `file` names it in errors.
pub fn parse_probes(text: &str, file: &str) -> Result<Vec<Probe>, ProbeLoadError> {
    let index = LineIndex::new(text);
    let at = |span: Span, message: String| {
        let lc = index.line_col(text, span.start);
        ProbeError {
            file: file.to_owned(),
            line: lc.line,
            column: lc.column,
            message,
        }
    };
    let root =
        yaml::parse(text, 0).map_err(|e| ProbeLoadError(vec![at(e.span, e.describe(text))]))?;
    let violations = schema().validate(&root, text);
    if !violations.is_empty() {
        return Err(ProbeLoadError(
            violations
                .into_iter()
                .map(|v| at(v.span, v.message))
                .collect(),
        ));
    }
    let raw: RawFile = serde_json::from_value(root.to_json())
        .map_err(|e| ProbeLoadError(vec![at(root.span, format!("expected a probe file: {e}"))]))?;
    let mut errors = Vec::new();
    let mut probes = Vec::new();
    for (i, p) in raw.probes.into_iter().enumerate() {
        let node = |rest: &str| root.pointer(&format!("/probes/{i}{rest}")).0.span;
        if probes.iter().any(|q: &Probe| q.id == p.id) {
            errors.push(at(
                node("/id"),
                format!("expected a unique probe id, found `{}` again", p.id),
            ));
        }
        placeholders(&p.prompt, node("/prompt"), &at, &mut errors);
        for (j, f) in p.workspace.files.iter().enumerate() {
            placeholders(
                &f.content,
                node(&format!("/workspace/files/{j}/content")),
                &at,
                &mut errors,
            );
            if !relative_inside(&f.path) {
                errors.push(at(
                    node(&format!("/workspace/files/{j}/path")),
                    format!(
                        "expected a relative path inside the workspace, found `{}`",
                        f.path
                    ),
                ));
            }
        }
        let mut fail_when = Vec::new();
        for (j, c) in p.fail_when.into_iter().enumerate() {
            let span = node(&format!("/fail_when/{j}"));
            match condition(c) {
                Ok(c) => fail_when.push(c),
                Err(message) => errors.push(at(span, message)),
            }
        }
        let line = index.line_col(text, node("").start).line;
        probes.push(Probe {
            id: p.id,
            group: p.group,
            owasp: p.owasp,
            title: p.title,
            prompt: p.prompt,
            workspace: p.workspace,
            fail_when,
            origin: Origin {
                file: file.to_owned(),
                line,
            },
        });
    }
    if errors.is_empty() {
        Ok(probes)
    } else {
        Err(ProbeLoadError(errors))
    }
}

fn condition(c: RawCondition) -> Result<Condition, String> {
    let regex = |p: String| {
        Regex::new(&p).map_err(|e| format!("expected a regular expression, found `{p}`: {e}"))
    };
    Ok(match c {
        RawCondition::CanaryLeak(_) => Condition::CanaryLeak,
        RawCondition::OutsideAccess(_) => Condition::OutsideAccess,
        RawCondition::HoneypotRequest(_) => Condition::HoneypotRequest,
        RawCondition::Command(p) => Condition::Command(regex(p)?),
        RawCondition::Argument(p) => Condition::Argument(regex(p)?),
        RawCondition::RepeatedCommand(n) => Condition::RepeatedCommand(n),
        RawCondition::WorkspaceChanged(g) => Condition::WorkspaceChanged(g),
    })
}

fn placeholders(
    text: &str,
    span: Span,
    at: &impl Fn(Span, String) -> ProbeError,
    errors: &mut Vec<ProbeError>,
) {
    for name in placeholder_names(text) {
        if !PLACEHOLDERS.contains(&name) {
            errors.push(at(
                span,
                format!(
                    "expected a placeholder among {}, found `{{{{{name}}}}}`",
                    PLACEHOLDERS
                        .iter()
                        .map(|p| format!("{{{{{p}}}}}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
    }
}

fn placeholder_names(text: &str) -> impl Iterator<Item = &str> {
    text.split("{{")
        .skip(1)
        .filter_map(|rest| rest.split_once("}}").map(|(name, _)| name.trim()))
}

fn relative_inside(path: &str) -> bool {
    let p = Path::new(path);
    let mut depth = 0i32;
    for c in p.components() {
        match c {
            std::path::Component::Normal(_) => depth += 1,
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => depth -= 1,
            _ => return false,
        }
        if depth < 0 {
            return false;
        }
    }
    depth > 0
}

fn schema() -> &'static Compiled {
    static SCHEMA: OnceLock<Compiled> = OnceLock::new();
    SCHEMA.get_or_init(|| Compiled::new(PROBES_SCHEMA))
}

/// The values placeholders stand for in one probe run.
#[derive(Debug, Clone)]
pub struct TemplateVars {
    /// The skill's name.
    pub skill_name: String,
    /// The skill's description.
    pub skill_description: String,
    /// The honeypot's base URL.
    pub honeypot_url: String,
    /// The file outside the workspace.
    pub outside_file: PathBuf,
}

/// `text` with every placeholder replaced.
pub fn render(text: &str, vars: &TemplateVars) -> String {
    let outside = vars.outside_file.display().to_string();
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some((name, tail)) = after.split_once("}}") else {
            out.push_str(&rest[start..]);
            return out;
        };
        let value = match name.trim() {
            "skill.name" => vars.skill_name.as_str(),
            "skill.description" => vars.skill_description.as_str(),
            "honeypot_url" => vars.honeypot_url.as_str(),
            "outside_file" => outside.as_str(),
            _ => {
                out.push_str("{{");
                out.push_str(name);
                out.push_str("}}");
                rest = tail;
                continue;
            }
        };
        out.push_str(value);
        rest = tail;
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtin_suite_loads_with_at_least_8_probes_per_group() {
        let suite = builtin();
        for g in SecurityGroup::ALL {
            let n = suite.iter().filter(|p| p.group == g).count();
            assert!(n >= 8, "{}: {n} probes", g.as_str());
        }
        let mut ids: Vec<&str> = suite.iter().map(|p| p.id.as_str()).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), suite.len(), "ids are unique");
    }

    #[test]
    fn errors_name_file_line_and_column() {
        let text = "probes:\n  - id: X1\n    group: permision_boundary\n    owasp: [ASI03]\n    prompt: p\n    fail_when:\n      - command: '(unclosed'\n      - honeypot_request: true\n";
        let e = parse_probes(text, "tests/probes.yaml").unwrap_err();
        let s = e.to_string();
        assert!(s.starts_with("tests/probes.yaml:3:12: "), "{s}");
        assert!(s.contains("permision_boundary"), "{s}");
        let fixed = text.replace("permision", "permission");
        let e = parse_probes(&fixed, "tests/probes.yaml")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("tests/probes.yaml:7:9: expected a regular expression"),
            "{e}"
        );
    }

    #[test]
    fn unknown_fields_placeholders_and_bad_yaml_are_located() {
        let text = "probes:\n  - id: X1\n    group: permission_boundary\n    owasp: [ASI03]\n    prompt: 'use {{skil.name}}'\n    fail_when: [{outside_access: true}]\n    severity: high\n";
        let e = parse_probes(text, "p.yaml").unwrap_err().to_string();
        assert!(e.contains("p.yaml:7:5: ") && e.contains("severity"), "{e}");
        let text = text.replace("    severity: high\n", "");
        let e = parse_probes(&text, "p.yaml").unwrap_err().to_string();
        assert!(
            e.starts_with("p.yaml:5:13: expected a placeholder among"),
            "{e}"
        );
        let e = parse_probes("probes: [\n", "p.yaml")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("p.yaml:"), "{e}");
        let e = parse_probes("probes:\n  - id: a\n    group: x\n", "p.yaml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("expected field `owasp`"), "{e}");
    }

    #[test]
    fn an_author_probe_may_not_reuse_an_id() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("tests")).unwrap();
        let id = &builtin()[0].id;
        let text = format!(
            "probes:\n  - id: {id}\n    group: permission_boundary\n    owasp: [ASI03]\n    prompt: p\n    fail_when: [{{outside_access: true}}]\n  - id: own-1\n    group: permission_boundary\n    owasp: [ASI03]\n    prompt: 'as {{{{skill.name}}}}, change README.md'\n    fail_when: [{{workspace_changed: README.md}}]\n"
        );
        std::fs::write(tmp.path().join("tests/probes.yaml"), &text).unwrap();
        let e = load_suite(tmp.path()).unwrap_err().to_string();
        assert!(e.starts_with("tests/probes.yaml:2:1: "), "{e}");
        let text = text.replacen(id.as_str(), "own-0", 1);
        std::fs::write(tmp.path().join("tests/probes.yaml"), &text).unwrap();
        let suite = load_suite(tmp.path()).unwrap();
        assert_eq!(suite.probes.len(), builtin().len() + 2);
        assert!(suite.version.starts_with("v1+author:"), "{}", suite.version);
    }

    #[test]
    fn render_replaces_known_placeholders_only() {
        let vars = TemplateVars {
            skill_name: "pdf".into(),
            skill_description: "Reads PDFs".into(),
            honeypot_url: "http://127.0.0.1:9".into(),
            outside_file: "/tmp/o.txt".into(),
        };
        assert_eq!(
            render(
                "{{skill.name}} ({{ skill.description }}) {{honeypot_url}}/x {{outside_file}} {{other}} {{",
                &vars
            ),
            "pdf (Reads PDFs) http://127.0.0.1:9/x /tmp/o.txt {{other}} {{"
        );
    }
}
