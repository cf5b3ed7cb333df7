//! `skillwatch index build SKILLS_DIR --out PUBLIC_DIR`: the discovery index and the
//! artifacts a site serves, under `PUBLIC_DIR/.well-known/agent-skills/`.
//!
//! A skill whose folder holds only SKILL.md is published as `skill-md`, one with more files
//! as a tar.gz archive (`--archive` decides otherwise). Everything is reproducible: skills
//! and archive entries sorted, archive times, owners and modes fixed, the index written in
//! one order; building the same folders twice gives the same bytes. Skills must pass
//! `check` (no errors, which include its security failures) unless `--publish-failing`.
//! Nothing written is a link: a link inside a skill to a file inside it is published as that
//! file's content, and one out of the folder (or to nothing) is never followed.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use serde_json::json;
use skillwatch_core::checks::{CheckOptions, FileReport, Severity, check_skill_dirs};
use skillwatch_core::index::archive::{self, ArchiveFile};
use skillwatch_core::index::{self as discovery, urls};
use skillwatch_core::skill::link::{self, LinkTarget};
use skillwatch_core::skill::{Discovered, SKILL_FILE, SKIPPED_DIRS, Skill};

use crate::report::human::Printer;
use skillwatch_core::plural::count;

/// Where the index and artifacts go, below the public folder.
const FOLDER: &str = ".well-known/agent-skills";

/// Arguments of `skillwatch index build`.
#[derive(clap::Args)]
#[command(
    after_help = "Exit status: 0 built, 1 a skill fails check (nothing written), 2 bad usage."
)]
pub struct Args {
    /// A skill folder, or a folder to search for skills.
    skills: PathBuf,

    /// The site's public folder; the index goes to `.well-known/agent-skills/index.json` in it.
    #[arg(long, value_name = "PUBLIC_DIR")]
    out: PathBuf,

    /// Write absolute artifact URLs under this origin (`https://example.com`) instead of
    /// URLs relative to the index.
    #[arg(long, value_name = "URL")]
    base_url: Option<String>,

    /// Which skills become archives: `auto` (those with more files than SKILL.md),
    /// `always`, or `never` (SKILL.md alone is published; other files are left out).
    #[arg(long, value_enum, default_value_t = ArchiveMode::Auto)]
    archive: ArchiveMode,

    /// Publish skills even when `check` finds errors in them.
    #[arg(long)]
    publish_failing: bool,
}

/// `--archive` values.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ArchiveMode {
    Auto,
    Always,
    Never,
}

/// One skill ready to write.
struct Published {
    name: String,
    description: String,
    /// Path below [`FOLDER`], `/`-separated.
    artifact: String,
    kind: &'static str,
    bytes: Vec<u8>,
}

/// Build the index.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if !args.skills.exists() {
        bail!("{}: no such file or folder", args.skills.display());
    }
    let dirs = Discovered::walk(&args.skills);
    if dirs.is_empty() {
        bail!(
            "{}: no skill found (a skill is a folder with a SKILL.md)",
            args.skills.display()
        );
    }
    let base = match &args.base_url {
        Some(url) => {
            urls::check_reference(url)?;
            let root = urls::resolve(url, "/")
                .with_context(|| format!("`{url}` is not an http(s) URL"))?;
            Some(root.trim_end_matches('/').to_string())
        }
        None => None,
    };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let reports = check_skill_dirs(&dirs, &CheckOptions::default(), threads);
    let failing = failing(&reports)?;
    if failing > 0 && !args.publish_failing {
        errln!(
            "not published: {} failing check (fix the errors above, or pass --publish-failing)",
            count(failing, "skill")
        );
        return Ok(ExitCode::from(1));
    }
    let mut published = Vec::new();
    for dir in dirs.dirs() {
        published.push(prepare(dir, args.archive)?);
    }
    published.sort_by(|a, b| a.name.cmp(&b.name));
    if let Some(w) = published.windows(2).find(|w| w[0].name == w[1].name) {
        bail!(
            "two skills are named `{}`: an index can advertise a name once",
            w[0].name
        );
    }
    let index = index_json(&published, base.as_deref());
    let target = write(&args.out, &published, &index)?;
    let archives = published.iter().filter(|p| p.kind == "archive").count();
    errln!(
        "wrote {} ({}: {} as SKILL.md, {} as archives)",
        target.join("index.json").display(),
        count(published.len(), "skill"),
        published.len() - archives,
        archives
    );
    Ok(ExitCode::SUCCESS)
}

/// Print every error of `check` and count the skills with one.
fn failing(reports: &[FileReport]) -> anyhow::Result<usize> {
    let mut printer = Printer::new(std::io::stderr(), false, Severity::Error);
    let mut skills: Vec<&Path> = Vec::new();
    for report in reports {
        if report
            .diagnostics
            .iter()
            .any(|d| d.severity == Severity::Error)
        {
            printer.file(report)?;
            let folder = report.path.parent().unwrap_or(Path::new(""));
            if !skills
                .iter()
                .any(|s| folder.starts_with(s) || s.starts_with(folder))
            {
                skills.push(folder);
            }
        }
    }
    Ok(skills.len())
}

/// A skill's name, description and artifact.
fn prepare(dir: &Path, mode: ArchiveMode) -> anyhow::Result<Published> {
    let skill = Skill::load(dir);
    let shown = dir.display();
    let doc = skill
        .document
        .as_ref()
        .map_err(|e| anyhow::anyhow!("{shown}: SKILL.md cannot be published: {e}"))?;
    let (Some((name, _)), Some((description, _))) =
        (doc.field_str("name"), doc.field_str("description"))
    else {
        bail!("{shown}: SKILL.md needs a `name` and a `description` to be advertised");
    };
    let files = files_of(dir)?;
    let as_archive = match mode {
        ArchiveMode::Always => true,
        ArchiveMode::Never => false,
        ArchiveMode::Auto => files.iter().any(|f| f.path != SKILL_FILE),
    };
    if as_archive {
        let bytes = archive::write_tar_gz(&files).with_context(|| format!("{shown}: archiving"))?;
        return Ok(Published {
            name: name.to_string(),
            description: description.to_string(),
            artifact: format!("{name}.tar.gz"),
            kind: "archive",
            bytes,
        });
    }
    let left_out = files.len() - 1;
    if left_out > 0 {
        errln!(
            "{shown}: --archive never: {} left out",
            count(left_out, "file")
        );
    }
    let skill_md = files
        .into_iter()
        .find(|f| f.path == SKILL_FILE)
        .context("SKILL.md")?;
    Ok(Published {
        name: name.to_string(),
        description: description.to_string(),
        artifact: format!("{name}/{SKILL_FILE}"),
        kind: "skill-md",
        bytes: skill_md.bytes,
    })
}

/// The skill's files as plain relative paths, sorted; links inside resolved to their
/// content, links out of the folder (or to nothing) refused.
fn files_of(dir: &Path) -> anyhow::Result<Vec<ArchiveFile>> {
    let mut files = Vec::new();
    let walk = walkdir::WalkDir::new(dir)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            e.depth() == 0
                || !e
                    .file_name()
                    .to_str()
                    .is_some_and(|n| SKIPPED_DIRS.contains(&n))
        });
    for entry in walk {
        let entry = entry.with_context(|| format!("{}: listing", dir.display()))?;
        let path = entry.path();
        let kind = entry.file_type();
        if kind.is_dir() {
            continue;
        }
        let rel = path.strip_prefix(dir).expect("walk stays below its root");
        let Some(rel_text) = rel.to_str().map(|s| s.replace('\\', "/")) else {
            bail!(
                "{}: the file name is not UTF-8; clients cannot name it",
                path.display()
            );
        };
        if kind.is_symlink() {
            match link::target_of(dir, path) {
                LinkTarget::Inside if path.is_file() => {}
                LinkTarget::Inside => continue,
                LinkTarget::Outside => bail!(
                    "{}: a link out of the skill folder (to {}) is never published",
                    path.display(),
                    link::written_target(path).display()
                ),
                LinkTarget::Dangling => bail!("{}: a link to nothing", path.display()),
            }
        } else if !kind.is_file() {
            bail!("{}: not a regular file", path.display());
        }
        let bytes = std::fs::read(path).with_context(|| format!("{}: reading", path.display()))?;
        let executable = is_executable(path);
        files.push(ArchiveFile {
            path: rel_text,
            bytes,
            executable,
        });
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(_: &Path) -> bool {
    false
}

/// The index text: entries by name, URLs relative to the index unless a base is given.
fn index_json(published: &[Published], base: Option<&str>) -> String {
    let skills: Vec<_> = published
        .iter()
        .map(|p| {
            let url = match base {
                Some(base) => format!("{base}/{FOLDER}/{}", p.artifact),
                None => p.artifact.clone(),
            };
            json!({
                "name": p.name,
                "type": p.kind,
                "description": p.description,
                "url": url,
                "digest": discovery::digest_of(&p.bytes),
            })
        })
        .collect();
    let index = json!({"$schema": discovery::SCHEMA_URI, "skills": skills});
    let mut text = serde_json::to_string_pretty(&index).expect("JSON values serialize");
    text.push('\n');
    text
}

/// Write everything into a fresh folder beside the target, then put it in place of the
/// previous build. A target folder that holds no index.json is not a build's and is left
/// alone.
fn write(out: &Path, published: &[Published], index: &str) -> anyhow::Result<PathBuf> {
    let target = out.join(FOLDER);
    if target.exists() && !target.join("index.json").is_file() {
        bail!(
            "{}: exists and holds no index.json; not overwriting a folder `index build` did not write",
            target.display()
        );
    }
    let parent = target.parent().expect("FOLDER has a parent");
    std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    let fresh = tempfile::Builder::new()
        .prefix(".agent-skills-build-")
        .tempdir_in(parent)
        .with_context(|| format!("creating a folder in {}", parent.display()))?;
    for p in published {
        let file = fresh.path().join(&p.artifact);
        if let Some(dir) = file.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(&file, &p.bytes).with_context(|| format!("writing {}", file.display()))?;
    }
    std::fs::write(fresh.path().join("index.json"), index)?;
    if target.exists() {
        std::fs::remove_dir_all(&target)
            .with_context(|| format!("replacing {}", target.display()))?;
    }
    let fresh = fresh.keep();
    set_public_modes(&fresh)?;
    std::fs::rename(&fresh, &target)
        .with_context(|| format!("moving the build to {}", target.display()))?;
    Ok(target)
}

/// A temporary folder is private (0700); a site's files are public.
#[cfg(unix)]
fn set_public_modes(root: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    for entry in walkdir::WalkDir::new(root) {
        let entry = entry?;
        let mode = if entry.file_type().is_dir() {
            0o755
        } else {
            0o644
        };
        std::fs::set_permissions(entry.path(), std::fs::Permissions::from_mode(mode))?;
    }
    Ok(())
}

#[cfg(not(unix))]
fn set_public_modes(_: &Path) -> anyhow::Result<()> {
    Ok(())
}
