//! `skillwatch index build` on real skills of the corpus, served by a real HTTP server on
//! 127.0.0.1 and checked by `skillwatch index check` over HTTP: a clean build passes with
//! score 1.0, building twice gives the same bytes whatever the files' times and modes, the
//! archives hold only plain relative files, and skills that fail `check` or link out of their
//! folder are not published.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::Value;
use skillwatch_core::index::digest_of;
use skillwatch_tests::site::Site;
use skillwatch_tests::{
    assert_follows_schema, code, corpus_dir, good_skill_md, skillwatch, stderr, write_skill,
};

const FOLDER: &str = ".well-known/agent-skills";

/// Three real skills (two with references, so archives; one SKILL.md alone) that pass
/// `check` without a warning the index check would count.
fn corpus_skills() -> PathBuf {
    corpus_dir().join("dotnet__skills/plugins")
}

fn build(skills: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "index",
        "build",
        skills.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    skillwatch(&args, None)
}

fn check_json(target: &str, extra: &[&str]) -> (i32, Value) {
    let mut args = vec!["index", "check", target, "--json", "--timeout", "5"];
    args.extend_from_slice(extra);
    let out = skillwatch(&args, None);
    let report: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(&out)));
    assert_follows_schema(&report, "index-check-output.schema.json");
    (code(&out), report)
}

fn step<'a>(report: &'a Value, id: &str) -> &'a Value {
    report["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == id)
        .unwrap_or_else(|| panic!("no step {id}"))
}

/// Every file below `root`, relative, sorted, with its bytes.
fn tree(root: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = walkdir::WalkDir::new(root)
        .into_iter()
        .map(Result::unwrap)
        .filter(|e| !e.file_type().is_dir())
        .map(|e| {
            assert!(
                e.file_type().is_file(),
                "{}: not a file",
                e.path().display()
            );
            let rel = e.path().strip_prefix(root).unwrap().to_string_lossy();
            (rel.into_owned(), std::fs::read(e.path()).unwrap())
        })
        .collect();
    out.sort();
    out
}

/// A copy of `from` at `to`.
fn copy_tree(from: &Path, to: &Path) {
    for entry in walkdir::WalkDir::new(from) {
        let entry = entry.unwrap();
        let target = to.join(entry.path().strip_prefix(from).unwrap());
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

#[test]
fn a_corpus_folder_built_and_served_passes_with_score_one() {
    let out = tempfile::tempdir().unwrap();
    let built = build(&corpus_skills(), out.path(), &[]);
    assert_eq!(code(&built), 0, "{}", stderr(&built));
    assert!(
        stderr(&built).contains("3 skills: 1 as SKILL.md, 2 as archives"),
        "{}",
        stderr(&built)
    );
    let site = Site::start();
    site.put_folder(out.path());
    let (status, report) = check_json(&site.url(), &[]);
    assert_eq!(status, 0);
    assert_eq!(report["score"].as_f64(), Some(1.0), "{report:#}");
    assert_eq!(report["status"], "pass");
    for s in report["steps"].as_array().unwrap() {
        assert_eq!(s["status"], "pass", "{s:#}");
        assert_eq!(s["findings"].as_array().unwrap().len(), 0, "{s:#}");
    }
    assert_eq!(
        step(&report, "validate-index-schema")["evidence"]["skill_count"],
        3
    );
    let artifacts = step(&report, "verify-artifacts")["evidence"]["artifacts"]
        .as_array()
        .unwrap()
        .clone();
    let index: Value =
        serde_json::from_slice(&std::fs::read(out.path().join(FOLDER).join("index.json")).unwrap())
            .unwrap();
    assert_eq!(artifacts.len(), 3);
    for (a, e) in artifacts.iter().zip(index["skills"].as_array().unwrap()) {
        let served = std::fs::read(out.path().join(FOLDER).join(e["url"].as_str().unwrap()));
        assert_eq!(a["actual_digest"], digest_of(&served.unwrap()));
        assert_eq!(a["advertised_digest"], e["digest"]);
        assert_eq!(a["digest_match"], true);
        assert_eq!(a["placement"], "same-origin");
        assert_eq!(a["status"], 200);
    }
    let content = step(&report, "validate-skill-content")["evidence"]["artifacts"]
        .as_array()
        .unwrap()
        .clone();
    let archives: Vec<&Value> = content
        .iter()
        .filter_map(|c| c.get("archive"))
        .filter(|a| !a.is_null())
        .collect();
    assert_eq!(archives.len(), 2, "{content:#?}");
    for a in archives {
        assert_eq!(a["format"], "tar-gz");
        assert_eq!(a["entries"], 4);
        assert_eq!(a["root_skill_md"], true);
        assert_eq!(a["unsafe_paths"], serde_json::json!([]));
    }
    // the folder checked before it is published says the same
    let (status, folder) = check_json(out.path().to_str().unwrap(), &[]);
    assert_eq!((status, folder["score"].as_f64()), (0, Some(1.0)));
}

#[test]
fn absolute_urls_under_a_base_url_pass_too() {
    let site = Site::start();
    let out = tempfile::tempdir().unwrap();
    let built = build(&corpus_skills(), out.path(), &["--base-url", &site.url()]);
    assert_eq!(code(&built), 0, "{}", stderr(&built));
    site.put_folder(out.path());
    let (status, report) = check_json(&site.url(), &[]);
    assert_eq!((status, report["score"].as_f64()), (0, Some(1.0)));
    let index: Value =
        serde_json::from_slice(&std::fs::read(out.path().join(FOLDER).join("index.json")).unwrap())
            .unwrap();
    for e in index["skills"].as_array().unwrap() {
        let url = e["url"].as_str().unwrap();
        assert!(
            url.starts_with(&format!("{}/{FOLDER}/", site.url())),
            "{url}"
        );
    }
}

#[test]
fn building_twice_gives_byte_identical_output() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    // the second copy differs in every way a build must not see: where it is, the files'
    // times, their permission bits
    let copy = tempfile::tempdir().unwrap();
    copy_tree(&corpus_skills(), copy.path());
    let old = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
    for entry in walkdir::WalkDir::new(copy.path()) {
        let entry = entry.unwrap();
        if entry.file_type().is_file() {
            let file = std::fs::File::options()
                .write(true)
                .open(entry.path())
                .unwrap();
            file.set_modified(old).unwrap();
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(entry.path(), std::fs::Permissions::from_mode(0o600))
                    .unwrap();
            }
        }
    }
    assert_eq!(code(&build(&corpus_skills(), a.path(), &[])), 0);
    assert_eq!(code(&build(copy.path(), b.path(), &[])), 0);
    let first = tree(a.path());
    assert_eq!(first.len(), 4, "index.json and three artifacts");
    assert!(first == tree(b.path()), "two builds differ");
    // building again over a previous build replaces it with the same bytes
    assert_eq!(code(&build(&corpus_skills(), a.path(), &[])), 0);
    assert!(first == tree(a.path()), "a rebuild differs");
}

/// `(path, type, mode, mtime, uid, gid, size)` of each entry of a tar.gz.
fn tar_entries(bytes: &[u8]) -> Vec<(String, tar::EntryType, u32, u64, u64, u64, u64)> {
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(bytes));
    archive
        .entries()
        .unwrap()
        .map(|e| {
            let mut e = e.unwrap();
            let h = e.header().clone();
            let path = e.path().unwrap().to_string_lossy().into_owned();
            let mut sink = Vec::new();
            e.read_to_end(&mut sink).unwrap();
            (
                path,
                h.entry_type(),
                h.mode().unwrap(),
                h.mtime().unwrap(),
                h.uid().unwrap(),
                h.gid().unwrap(),
                sink.len() as u64,
            )
        })
        .collect()
}

#[test]
fn archives_hold_sorted_plain_files_with_fixed_metadata() {
    let skills = tempfile::tempdir().unwrap();
    let dir = write_skill(
        skills.path(),
        "csv-report",
        good_skill_md("csv-report").as_bytes(),
        &[
            ("scripts/run.sh", "#!/bin/sh\necho ok\n"),
            ("references/b.md", "# B\n"),
            ("references/a.md", "# A\n"),
        ],
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let script = dir.join("scripts/run.sh");
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o700)).unwrap();
        // a link to a file inside the skill is published as that file's content
        std::os::unix::fs::symlink("a.md", dir.join("references/alias.md")).unwrap();
    }
    let out = tempfile::tempdir().unwrap();
    let built = build(skills.path(), out.path(), &[]);
    assert_eq!(code(&built), 0, "{}", stderr(&built));
    let bytes = std::fs::read(out.path().join(FOLDER).join("csv-report.tar.gz")).unwrap();
    let entries = tar_entries(&bytes);
    let paths: Vec<&str> = entries.iter().map(|e| e.0.as_str()).collect();
    let mut expected = vec![
        "SKILL.md",
        "references/a.md",
        "references/b.md",
        "scripts/run.sh",
    ];
    if cfg!(unix) {
        expected.insert(1, "references/alias.md");
        expected.sort();
    }
    assert_eq!(paths, expected);
    for (path, kind, mode, mtime, uid, gid, size) in &entries {
        assert_eq!(*kind, tar::EntryType::Regular, "{path}");
        assert!(!path.starts_with('/') && !path.split('/').any(|c| c == ".."));
        let want = if path.starts_with("scripts/") && cfg!(unix) {
            0o755
        } else {
            0o644
        };
        assert_eq!((*mode, *mtime, *uid, *gid), (want, 0, 0, 0), "{path}");
        if path == "references/alias.md" {
            assert_eq!(*size, 4);
        }
    }
}

#[cfg(unix)]
#[test]
fn a_link_out_of_the_skill_is_never_published() {
    let skills = tempfile::tempdir().unwrap();
    let dir = write_skill(
        skills.path(),
        "leaky",
        good_skill_md("leaky").as_bytes(),
        &[("references/a.md", "# A\n")],
    );
    let secret = skills.path().join("secret.txt");
    std::fs::write(&secret, "not for publication").unwrap();
    std::os::unix::fs::symlink(&secret, dir.join("references/secret.md")).unwrap();
    let out = tempfile::tempdir().unwrap();
    // check's own rule refuses it first
    let refused = build(&dir, out.path(), &[]);
    assert_eq!(code(&refused), 1);
    assert!(stderr(&refused).contains("SW311"), "{}", stderr(&refused));
    // and when told to publish failing skills, the build itself still refuses the link
    let forced = build(&dir, out.path(), &["--publish-failing"]);
    assert_eq!(code(&forced), 2);
    assert!(
        stderr(&forced).contains("a link out of the skill folder"),
        "{}",
        stderr(&forced)
    );
    assert!(!out.path().join(FOLDER).exists(), "nothing is written");
    assert!(!stderr(&forced).contains("not for publication"));
}

#[test]
fn skills_failing_check_are_published_only_when_told() {
    // a real skill whose `compatibility` is one character too long (SW112, an error)
    let skill = corpus_dir().join("NVIDIA__skills/skills/omniverse-cad-to-simready");
    let out = tempfile::tempdir().unwrap();
    let refused = build(&skill, out.path(), &[]);
    assert_eq!(code(&refused), 1);
    let err = stderr(&refused);
    assert!(
        err.contains("SW112") && err.contains("not published: 1 skill failing check"),
        "{err}"
    );
    assert!(!out.path().join(FOLDER).exists(), "nothing is written");
    let forced = build(&skill, out.path(), &["--publish-failing"]);
    assert_eq!(code(&forced), 0, "{}", stderr(&forced));
    assert!(out.path().join(FOLDER).join("index.json").is_file());
}
