//! The six steps of seed 002, in order, over a site the caller provides.
//!
//! This crate does no network I/O: a [`Site`] fetches (the CLI's bounded HTTP client, or a
//! built folder read as a static server would serve it) and stages an artifact's files in a
//! temporary folder, where `check`'s own rules run on them ([`crate::checks::check_skill_dir`]
//! with vetting on: a published skill is someone else's to whoever installs it). What each
//! step saw is its evidence; no evidence holds a whole file, a script body, a header or a
//! credential (messages of findings are redacted and cut short).

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Value, json};

use crate::checks::{self, Category, CheckOptions, InlineIgnore, Severity};
use crate::skill::{SKILL_FILE, SkillDocument};
use crate::text::LineIndex;

use super::archive::{self, ArchiveFile, Inspection};
use super::document::{self, ArtifactType, Entry, IndexDocument};
use super::steps::{self, Finding, Status, StepId, StepResult};
use super::urls::{self, Placement};
use super::{CANONICAL_PATH, LEGACY_PATH};

/// One response, as the site's fetcher saw it.
#[derive(Debug, Clone, Default)]
pub struct Fetched {
    /// The URL asked for.
    pub url: String,
    /// The URL answered from, after redirects.
    pub final_url: String,
    /// The HTTP status, when a response came.
    pub status: Option<u16>,
    /// The `Content-Type` header (media type and parameters), when sent.
    pub content_type: Option<String>,
    /// The body (empty on error).
    pub body: Vec<u8>,
    /// Why there is no usable response: a timeout, the size limit, the redirect limit, a
    /// refused URL, a connection error.
    pub error: Option<String>,
}

impl Fetched {
    /// A 200 with its whole body.
    pub fn ok(&self) -> bool {
        self.status == Some(200) && self.error.is_none()
    }

    /// The media type, lowercase, without parameters.
    pub fn media_type(&self) -> Option<String> {
        let ct = self.content_type.as_deref()?;
        Some(ct.split(';').next()?.trim().to_ascii_lowercase())
    }

    /// Status, content type, length and error: never the body or any header but the type.
    fn evidence(&self) -> Value {
        let mut v = json!({
            "url": self.url,
            "status": self.status,
            "content_type": self.content_type,
            "length": self.body.len(),
        });
        if self.final_url != self.url && !self.final_url.is_empty() {
            v["final_url"] = self.final_url.clone().into();
        }
        if let Some(e) = &self.error {
            v["error"] = e.clone().into();
        }
        v
    }
}

/// What the check needs from the world.
pub trait Site {
    /// Fetch an absolute URL, bounded (time, size, redirects), sending no credentials.
    fn fetch(&mut self, url: &str) -> Fetched;
    /// Write `files` into a new, empty folder named `name` inside a temporary folder (a
    /// separate parent per call) and return it; nothing outside the temporary folder.
    fn stage(&mut self, name: &str, files: &[ArchiveFile]) -> std::io::Result<PathBuf>;
}

/// Bounds of one check.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Archive limits.
    pub archive: archive::Limits,
    /// Artifacts fetched at most (the seed's "bounded set"); entries past it are not fetched.
    pub max_artifacts: usize,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            archive: archive::Limits::default(),
            max_artifacts: 100,
        }
    }
}

/// The whole result.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The origin checked (or the folder, read as that origin).
    pub target: String,
    /// The index URL selected, if any.
    pub index_url: Option<String>,
    /// Pass, warn or fail.
    pub status: Status,
    /// Weighted score in [0, 1].
    pub score: f64,
    /// The six steps, in order.
    pub steps: Vec<StepResult>,
}

impl Report {
    /// The steps as the JSON report lists them: each with the seed's name, title and weight.
    pub fn steps_json(&self) -> Value {
        self.steps
            .iter()
            .map(|s| {
                let row = s.id.step();
                json!({
                    "id": row.name,
                    "title": row.title,
                    "weight": row.weight,
                    "status": s.status,
                    "earned": (s.earned() * 10_000.0).round() / 10_000.0,
                    "findings": s.findings,
                    "evidence": s.evidence,
                })
            })
            .collect()
    }

    /// The step `id`'s result.
    pub fn step(&self, id: StepId) -> &StepResult {
        self.steps
            .iter()
            .find(|s| s.id == id)
            .expect("all six steps")
    }
}

/// Run the check on the site at `origin` (`https://example.com`, no trailing slash).
pub fn run(origin: &str, site: &mut impl Site, options: &Options) -> Report {
    let mut steps = Vec::new();
    let origin = origin.trim_end_matches('/');
    let (discover, selected) = discover(origin, site);
    steps.push(discover);
    let index_url = selected.as_ref().map(|f| f.final_url.clone());
    match selected {
        None => skip_from(
            &mut steps,
            StepId::ValidateIndexSchema,
            "no index was found",
        ),
        Some(fetched) => after_discovery(&fetched, site, options, &mut steps),
    }
    Report {
        target: origin.to_string(),
        index_url,
        status: steps::overall(&steps),
        score: steps::score(&steps),
        steps,
    }
}

fn after_discovery(
    fetched: &Fetched,
    site: &mut impl Site,
    options: &Options,
    steps: &mut Vec<StepResult>,
) {
    let (schema_step, doc) = validate_schema(fetched);
    steps.push(schema_step);
    let Some(doc) = doc else {
        return skip_from(
            steps,
            StepId::ValidateSkillEntries,
            "the index has no skills to judge",
        );
    };
    steps.push(validate_entries(&doc));
    let valid: Vec<&Entry> = doc.entries.iter().filter(|e| e.is_valid()).collect();
    if valid.is_empty() {
        return skip_from(steps, StepId::VerifyArtifacts, "no skill entry is valid");
    }
    let (verify, artifacts) = verify_artifacts(&fetched.final_url, &valid, site, options);
    steps.push(verify);
    let examined: Vec<&Artifact> = artifacts.iter().filter(|a| a.fetched.ok()).collect();
    if examined.is_empty() {
        return skip_from(
            steps,
            StepId::ValidateSkillContent,
            "no artifact could be fetched",
        );
    }
    let judged: Vec<Judged> = examined
        .iter()
        .map(|a| judge(a, site, &options.archive))
        .collect();
    steps.push(content_step(&judged));
    steps.push(security_step(&artifacts, &judged));
}

/// Mark every step from `from` on as skipped.
fn skip_from(steps: &mut Vec<StepResult>, from: StepId, why: &str) {
    let mut on = false;
    for row in &steps::STEPS {
        on |= row.id == from;
        if on {
            steps.push(StepResult::skipped(row.id, why));
        }
    }
}

// --- 1. discover-index ---

fn discover(origin: &str, site: &mut impl Site) -> (StepResult, Option<Fetched>) {
    let canonical = site.fetch(&format!("{origin}{CANONICAL_PATH}"));
    let mut checked = vec![path_evidence(CANONICAL_PATH, &canonical)];
    if canonical.ok() {
        let evidence = json!({"checked": checked, "selected": CANONICAL_PATH});
        return (
            StepResult::ran(StepId::DiscoverIndex, Vec::new(), evidence),
            Some(canonical),
        );
    }
    let legacy = site.fetch(&format!("{origin}{LEGACY_PATH}"));
    checked.push(path_evidence(LEGACY_PATH, &legacy));
    let why = unusable(&canonical);
    if legacy.ok() {
        let finding = Finding::warn(
            "legacy-path",
            format!(
                "no index at {CANONICAL_PATH} ({why}); found the legacy {LEGACY_PATH}: \
                 publish the index at the canonical path"
            ),
        )
        .about(legacy.url.clone());
        let evidence = json!({"checked": checked, "selected": LEGACY_PATH});
        return (
            StepResult::ran(StepId::DiscoverIndex, vec![finding], evidence),
            Some(legacy),
        );
    }
    let finding = Finding::warn(
        "index-not-found",
        format!(
            "no Agent Skills index: {CANONICAL_PATH} {why}, {LEGACY_PATH} {}",
            unusable(&legacy)
        ),
    );
    let evidence = json!({"checked": checked, "selected": null});
    (
        StepResult::ran(StepId::DiscoverIndex, vec![finding], evidence),
        None,
    )
}

fn path_evidence(path: &str, fetched: &Fetched) -> Value {
    let mut v = fetched.evidence();
    v["path"] = path.into();
    v
}

/// Why a response is not usable, for messages.
fn unusable(fetched: &Fetched) -> String {
    match (&fetched.error, fetched.status) {
        (Some(e), _) => e.clone(),
        (None, Some(status)) => format!("answered HTTP {status}"),
        (None, None) => "gave no response".to_string(),
    }
}

// --- 2. validate-index-schema ---

/// Media types an index may be served with: JSON itself passes, generic types warn.
fn index_media(media: Option<&str>) -> Result<(), Option<Finding>> {
    match media {
        Some("application/json") => Ok(()),
        Some(m) if m.starts_with("application/") && m.ends_with("+json") => Ok(()),
        Some(m @ ("text/json" | "text/plain" | "application/octet-stream")) => {
            Err(Some(Finding::warn(
                "content-type",
                format!(
                    "the index is served as `{m}`, a generic type; serve it as `application/json`"
                ),
            )))
        }
        None => Err(Some(Finding::warn(
            "content-type",
            "the index is served without a Content-Type; serve it as `application/json`",
        ))),
        Some(m) => Err(Some(Finding::fail(
            "content-type",
            format!(
                "the index is served as `{m}`, which is not JSON; serve it as `application/json`"
            ),
        ))),
    }
}

fn validate_schema(fetched: &Fetched) -> (StepResult, Option<IndexDocument>) {
    let mut findings = Vec::new();
    let media = fetched.media_type();
    if let Err(Some(f)) = index_media(media.as_deref()) {
        findings.push(f.about(fetched.final_url.clone()));
    }
    let mut evidence = json!({
        "url": fetched.final_url,
        "content_type": fetched.content_type,
        "length": fetched.body.len(),
    });
    let Ok(text) = std::str::from_utf8(&fetched.body) else {
        findings.push(Finding::fail("invalid-json", "the index is not UTF-8 text"));
        return (
            StepResult::ran(StepId::ValidateIndexSchema, findings, evidence),
            None,
        );
    };
    let doc = document::parse(text);
    if let Some(syntax) = &doc.syntax {
        let at = LineIndex::new(text).line_col(text, syntax.span.start);
        findings.push(Finding::fail(
            "invalid-json",
            format!(
                "{} (line {}, column {})",
                syntax.message, at.line, at.column
            ),
        ));
        return (
            StepResult::ran(StepId::ValidateIndexSchema, findings, evidence),
            None,
        );
    }
    for p in &doc.problems {
        findings.push(Finding::fail(p.code, p.message.clone()));
    }
    for p in &doc.unknown_fields {
        findings.push(Finding::warn("unknown-field", p.message.clone()));
    }
    let unknown: Vec<&str> = doc
        .unknown_fields
        .iter()
        .map(|p| p.pointer.trim_start_matches('/'))
        .collect();
    evidence["schema_uri"] = doc.schema_uri.clone().into();
    evidence["schema_uri_matches"] = (doc.schema_uri.as_deref() == Some(super::SCHEMA_URI)).into();
    evidence["skill_count"] = doc.entries.len().into();
    evidence["unknown_top_level_field_count"] = unknown.len().into();
    evidence["unknown_top_level_fields"] = json!(unknown);
    let go_on = !doc.entries.is_empty();
    let step = StepResult::ran(StepId::ValidateIndexSchema, findings, evidence);
    (step, go_on.then_some(doc))
}

// --- 3. validate-skill-entries ---

fn validate_entries(doc: &IndexDocument) -> StepResult {
    let mut findings = Vec::new();
    let mut invalid = Vec::new();
    let mut warned = Vec::new();
    for entry in &doc.entries {
        let label = entry.label();
        if !entry.is_valid() {
            let messages: Vec<&str> = entry.problems.iter().map(|p| p.message.as_str()).collect();
            findings.push(
                Finding::fail(
                    "invalid-entry",
                    format!("skill entry `{label}`: {}", messages.join("; ")),
                )
                .about(label.clone()),
            );
            invalid.push(
                json!({"index": entry.index, "name": entry.name, "problems": entry.problems}),
            );
        }
        if !entry.warnings.is_empty() {
            for w in &entry.warnings {
                findings.push(
                    Finding::warn(
                        "description-quality",
                        format!("skill entry `{label}`: {}", w.message),
                    )
                    .about(label.clone()),
                );
            }
            warned.push(
                json!({"index": entry.index, "name": entry.name, "warnings": entry.warnings}),
            );
        }
    }
    let valid = doc.entries.iter().filter(|e| e.is_valid()).count();
    let evidence = json!({
        "skill_count": doc.entries.len(),
        "valid_skill_count": valid,
        "invalid_entries": invalid,
        "warning_entries": warned,
    });
    StepResult::ran(StepId::ValidateSkillEntries, findings, evidence)
}

// --- 4. verify-artifacts ---

/// One fetched artifact.
struct Artifact {
    name: String,
    kind: ArtifactType,
    resolved: String,
    placement: Placement,
    fetched: Fetched,
}

fn verify_artifacts(
    index_url: &str,
    entries: &[&Entry],
    site: &mut impl Site,
    options: &Options,
) -> (StepResult, Vec<Artifact>) {
    let mut findings = Vec::new();
    let mut evidence = Vec::new();
    let mut artifacts = Vec::new();
    if entries.len() > options.max_artifacts {
        findings.push(Finding::warn(
            "too-many-skills",
            format!(
                "the index advertises {} valid skills; the first {} were fetched",
                entries.len(),
                options.max_artifacts
            ),
        ));
    }
    for entry in entries.iter().take(options.max_artifacts) {
        let name = entry.label();
        let (Some(url), Some(kind), Some(digest)) = (&entry.url, entry.kind, &entry.digest) else {
            continue;
        };
        let resolved = match urls::resolve(index_url, url) {
            Ok(r) => r,
            Err(e) => {
                findings.push(Finding::fail("url", e.to_string()).about(name.clone()));
                continue;
            }
        };
        let placement = urls::placement(index_url, &resolved);
        let fetched = site.fetch(&resolved);
        let mut row = fetched.evidence();
        row["name"] = name.clone().into();
        row["type"] = kind.as_str().into();
        row["advertised_url"] = url.clone().into();
        row["placement"] = json!(placement);
        row["advertised_digest"] = digest.clone().into();
        if fetched.ok() {
            let actual = super::digest_of(&fetched.body);
            let matches = &actual == digest;
            if !matches {
                findings.push(
                    Finding::fail(
                        "digest-mismatch",
                        format!(
                            "`{name}`: {resolved} has digest {actual}, the index advertises {digest}"
                        ),
                    )
                    .about(resolved.clone()),
                );
            }
            if let Some(f) = artifact_media(kind, fetched.media_type().as_deref()) {
                findings.push(f.about(resolved.clone()));
            }
            row["actual_digest"] = actual.into();
            row["digest_match"] = matches.into();
        } else {
            findings.push(
                Finding::fail(
                    if fetched.error.is_some() {
                        "fetch-failed"
                    } else {
                        "http-status"
                    },
                    format!("`{name}`: {resolved} {}", unusable(&fetched)),
                )
                .about(resolved.clone()),
            );
            row["actual_digest"] = Value::Null;
            row["digest_match"] = false.into();
        }
        evidence.push(row);
        artifacts.push(Artifact {
            name,
            kind,
            resolved,
            placement,
            fetched,
        });
    }
    let evidence = json!({ "artifacts": evidence });
    (
        StepResult::ran(StepId::VerifyArtifacts, findings, evidence),
        artifacts,
    )
}

/// A warning when an artifact's media type is not the kind's strongest.
fn artifact_media(kind: ArtifactType, media: Option<&str>) -> Option<Finding> {
    let strong: &[&str] = match kind {
        ArtifactType::SkillMd => &["text/markdown", "text/x-markdown", "text/plain"],
        ArtifactType::Archive => &[
            "application/zip",
            "application/gzip",
            "application/x-gzip",
            "application/x-tar",
            "application/x-gtar",
            "application/x-compressed-tar",
        ],
    };
    match media {
        Some(m) if strong.contains(&m) => None,
        shown => Some(Finding::warn(
            "artifact-content-type",
            format!(
                "a {} artifact is served as `{}`; expected one of {}",
                kind.as_str(),
                shown.unwrap_or("(no Content-Type)"),
                strong.join(", ")
            ),
        )),
    }
}

// --- 5 and 6: content and security, from one look at each artifact ---

/// What one artifact's content showed.
struct Judged {
    name: String,
    content: Vec<Finding>,
    security: Vec<Finding>,
    content_evidence: Value,
    security_evidence: Vec<Value>,
}

fn judge(artifact: &Artifact, site: &mut impl Site, limits: &archive::Limits) -> Judged {
    let mut judged = Judged {
        name: artifact.name.clone(),
        content: Vec::new(),
        security: Vec::new(),
        content_evidence: json!({"name": artifact.name, "type": artifact.kind.as_str()}),
        security_evidence: Vec::new(),
    };
    let files = match artifact.kind {
        ArtifactType::SkillMd => vec![ArchiveFile {
            path: SKILL_FILE.to_string(),
            bytes: artifact.fetched.body.clone(),
            executable: false,
        }],
        ArtifactType::Archive => match archive_files(artifact, limits, &mut judged) {
            Some(files) => files,
            None => return judged,
        },
    };
    let Some(skill_md) = files.iter().find(|f| f.path == SKILL_FILE) else {
        return judged;
    };
    frontmatter(&artifact.name, &skill_md.bytes, &mut judged);
    match site.stage(&artifact.name, &files) {
        Ok(dir) => run_check(&dir, &mut judged),
        Err(e) => judged.content.push(
            Finding::fail(
                "stage-failed",
                format!("`{}` could not be staged for checking: {e}", artifact.name),
            )
            .about(artifact.name.clone()),
        ),
    }
    judged
}

/// Inspect an archive: structure findings, and its safe files when a SKILL.md is at the root.
fn archive_files(
    artifact: &Artifact,
    limits: &archive::Limits,
    judged: &mut Judged,
) -> Option<Vec<ArchiveFile>> {
    let name = &artifact.name;
    let seen: Inspection = archive::inspect(&artifact.fetched.body, limits);
    judged.content_evidence["archive"] = json!(seen);
    if let Some(error) = &seen.error {
        judged.content.push(
            Finding::fail("archive-unreadable", format!("`{name}`: {error}")).about(name.clone()),
        );
    }
    if let Some(hit) = &seen.limit {
        judged.content.push(
            Finding::fail(
                "archive-limit",
                format!("`{name}`: over the {} limit: {}", hit.limit, hit.detail),
            )
            .about(name.clone()),
        );
    }
    for u in &seen.unsafe_paths {
        let message = format!("`{name}`: {}", u.describe());
        judged
            .content
            .push(Finding::fail("unsafe-path", message.clone()).about(name.clone()));
        judged
            .security
            .push(Finding::fail("unsafe-path", message).about(name.clone()));
        judged.security_evidence.push(
            json!({"skill": name, "kind": "unsafe-path", "path": u.path, "reason": u.reason}),
        );
    }
    for script in &seen.scripts {
        judged
            .security_evidence
            .push(json!({"skill": name, "kind": "script", "path": script}));
    }
    if seen.error.is_some() || seen.limit.is_some() {
        return None;
    }
    if !seen.root_skill_md {
        judged.content.push(
            Finding::fail(
                "root-skill-md-missing",
                format!("`{name}`: the archive has no SKILL.md at its root"),
            )
            .about(name.clone()),
        );
        return None;
    }
    if let Some(top) = &seen.wrapped_in {
        judged.content.push(
            Finding::warn(
                "wrapped-root",
                format!("`{name}`: SKILL.md is in the folder `{top}/`, not at the archive's root"),
            )
            .about(name.clone()),
        );
    }
    Some(seen.files)
}

/// Whether SKILL.md opens with YAML frontmatter holding `name` and `description`, and
/// whether that name is the entry's.
fn frontmatter(name: &str, bytes: &[u8], judged: &mut Judged) {
    let doc = std::str::from_utf8(bytes)
        .ok()
        .map(|t| SkillDocument::parse(t.to_string()));
    let fields = doc.as_ref().map(|d| {
        (
            d.field_str("name").map(|f| f.0.to_string()),
            d.field_str("description").is_some(),
        )
    });
    let valid = matches!(fields, Some((Some(_), true)));
    judged.content_evidence["frontmatter_valid"] = valid.into();
    judged.content_evidence["skill_md_bytes"] = bytes.len().into();
    if !valid {
        judged.content.push(
            Finding::fail(
                "frontmatter-invalid",
                format!(
                    "`{name}`: SKILL.md lacks YAML frontmatter with a `name` and a `description`"
                ),
            )
            .about(name.to_string()),
        );
    } else if let Some((Some(own), _)) = &fields
        && own != name
    {
        judged.content.push(
            Finding::fail(
                "name-mismatch",
                format!("`{name}`: SKILL.md is named `{own}`, the index advertises `{name}`"),
            )
            .about(name.to_string()),
        );
    }
}

/// `check`'s rules on the staged folder: specification and quality findings go to the
/// content step, security findings (with vetting's behaviour rules) to the security step.
fn run_check(dir: &Path, judged: &mut Judged) {
    let options = CheckOptions {
        vet: true,
        inline_ignore: InlineIgnore::None,
        ..CheckOptions::default()
    };
    let name = judged.name.clone();
    let mut counts = json!({"errors": 0, "warnings": 0, "infos": 0});
    for report in checks::check_skill_dir(dir, &options) {
        let rel = report
            .path
            .strip_prefix(dir)
            .unwrap_or(&report.path)
            .to_string_lossy()
            .into_owned();
        let index = report.text.as_deref().map(LineIndex::new);
        for d in &report.diagnostics {
            let Some(rule) = checks::catalog::rule(d.rule) else {
                continue;
            };
            let key = match d.severity {
                Severity::Error => "errors",
                Severity::Warning => "warnings",
                Severity::Info => "infos",
            };
            counts[key] = (counts[key].as_u64().unwrap_or(0) + 1).into();
            let line = report
                .text
                .as_deref()
                .zip(index.as_ref())
                .map(|(t, i)| i.line_col(t, d.span.start).line);
            let message = evidence_text(&d.message);
            let at = match line {
                Some(l) => format!("{rel}:{l}"),
                None => rel.clone(),
            };
            let shown = format!("`{name}` {at}: {} [{}]", message, d.rule);
            let finding = match d.severity {
                Severity::Error => Some(Finding::fail(code_of(rule.category), shown)),
                Severity::Warning => Some(Finding::warn(code_of(rule.category), shown)),
                Severity::Info => None,
            };
            if rule.category == Category::Security {
                judged.security_evidence.push(json!({
                    "skill": name, "kind": "finding", "rule": d.rule, "severity": d.severity,
                    "path": rel, "line": line, "message": message,
                }));
                judged
                    .security
                    .extend(finding.map(|f| f.about(name.clone())));
            } else if matches!(rule.category, Category::Spec | Category::Quality) {
                judged
                    .content
                    .extend(finding.map(|f| f.about(name.clone())));
            }
        }
    }
    judged.content_evidence["check"] = counts;
}

fn code_of(category: Category) -> &'static str {
    match category {
        Category::Security => "check-security",
        Category::Quality => "check-quality",
        _ => "check-spec",
    }
}

/// A finding's message as evidence: credentials redacted, one line, at most 300 characters.
fn evidence_text(message: &str) -> String {
    let redacted = checks::redact_credentials(message).replace('\n', " ");
    if redacted.chars().count() <= 300 {
        return redacted;
    }
    let cut: String = redacted.chars().take(300).collect();
    format!("{cut}…")
}

fn content_step(judged: &[Judged]) -> StepResult {
    let findings = judged
        .iter()
        .flat_map(|j| j.content.iter().cloned())
        .collect();
    let evidence =
        json!({"artifacts": judged.iter().map(|j| j.content_evidence.clone()).collect::<Vec<_>>()});
    StepResult::ran(StepId::ValidateSkillContent, findings, evidence)
}

fn security_step(artifacts: &[Artifact], judged: &[Judged]) -> StepResult {
    let mut findings: Vec<Finding> = judged
        .iter()
        .flat_map(|j| j.security.iter().cloned())
        .collect();
    let mut evidence: Vec<Value> = judged
        .iter()
        .flat_map(|j| j.security_evidence.iter().cloned())
        .collect();
    for a in artifacts.iter().filter(|a| a.placement.crosses_origin()) {
        let placement = match a.placement {
            Placement::SameSite => "another origin of the same site",
            _ => "another site",
        };
        findings.push(
            Finding::warn(
                "cross-origin",
                format!(
                    "`{}` is served from {placement} ({}): a separate trust boundary",
                    a.name, a.resolved
                ),
            )
            .about(a.resolved.clone()),
        );
        evidence.push(json!({"skill": a.name, "kind": "cross-origin", "url": a.resolved, "placement": a.placement}));
    }
    StepResult::ran(
        StepId::SecurityReview,
        findings,
        json!({"findings": evidence}),
    )
}
