//! Differential test against the reference validator: `skills-ref` (PyPI), installed by
//! `.ci/run` into `target/skills-ref-venv`, and `skillwatch check --profile agentskills` must
//! reject the same skills, over the repository's corpus (and the whole development corpus
//! when it is beside the checkout) plus hand-made broken skills. Where we
//! disagree on purpose, [`DISAGREEMENTS`] lists the case and why we are right.
//!
//! Without the venv the test fails in CI (so CI cannot pass without running it) and is
//! skipped visibly elsewhere (`skillwatch_tests::needs`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use skillwatch_tests::*;

/// Hand-made skills where skillwatch (agentskills profile) and skills-ref deliberately
/// disagree: (folder name, who rejects, why skillwatch is right).
const DISAGREEMENTS: &[(&str, &str, &str)] = &[
    (
        "empty-compatibility",
        "skillwatch",
        "the specification says compatibility \"must be 1-500 characters if provided\"; \
         skills-ref only checks the upper bound",
    ),
    (
        "license-list",
        "skillwatch",
        "license is a string (a license name or a bundled file); skills-ref never checks its \
         type, so a block list passes",
    ),
    (
        "metadata-not-a-map",
        "skillwatch",
        "the specification defines metadata as a map from string keys to string values; \
         skills-ref does not check it is a mapping",
    ),
    (
        "allowed-tools-mapping",
        "skillwatch",
        "allowed-tools is a space-delimited string or a list of strings; skills-ref never \
         checks its type",
    ),
];

/// The hand-made skills: (folder name, SKILL.md bytes). Every one is rejected by at least one
/// side, except the `ok-*` controls, which both accept.
fn broken_skills() -> Vec<(&'static str, Vec<u8>)> {
    let fm = |name: &str, extra: &str| {
        format!(
            "---\nname: {name}\ndescription: Use when testing the validators.\n{extra}---\n# Body\n"
        )
        .into_bytes()
    };
    vec![
        ("ok-minimal", fm("ok-minimal", "")),
        (
            "ok-all-spec-fields",
            fm(
                "ok-all-spec-fields",
                "license: MIT\ncompatibility: Requires git\nallowed-tools: Read Grep\nmetadata:\n  author: someone\n",
            ),
        ),
        (
            "ok-nested-metadata-value",
            fm(
                "ok-nested-metadata-value",
                "metadata:\n  tags:\n    - a\n    - b\n",
            ),
        ),
        (
            "ok-numeric-looking-values",
            fm("ok-numeric-looking-values", "license: 2.0\n"),
        ),
        ("no-frontmatter", b"# Just a heading\n".to_vec()),
        (
            "unterminated",
            b"---\nname: unterminated\ndescription: x\n".to_vec(),
        ),
        (
            "dots-closed",
            b"---\nname: dots-closed\ndescription: Use when testing.\n...\n# Body\n".to_vec(),
        ),
        ("invalid-yaml", fm("invalid-yaml", "license: [MIT\n")),
        ("tab-indent", fm("tab-indent", "metadata:\n\tauthor: x\n")),
        ("name-mismatch", fm("other-name", "")),
        ("Upper-Folder", fm("Upper-Folder", "")),
        ("bad--hyphens", fm("bad--hyphens", "")),
        ("trailing-", fm("trailing-", "")),
        (
            "missing-name",
            b"---\ndescription: Use when testing.\n---\nbody\n".to_vec(),
        ),
        (
            "missing-description",
            b"---\nname: missing-description\n---\nbody\n".to_vec(),
        ),
        (
            "empty-description",
            b"---\nname: empty-description\ndescription: \"\"\n---\nbody\n".to_vec(),
        ),
        (
            "long-description",
            format!(
                "---\nname: long-description\ndescription: {}\n---\nbody\n",
                "d".repeat(1025)
            )
            .into_bytes(),
        ),
        (
            "long-compatibility",
            fm(
                "long-compatibility",
                &format!("compatibility: {}\n", "c".repeat(501)),
            ),
        ),
        (
            "empty-compatibility",
            fm("empty-compatibility", "compatibility: \"\"\n"),
        ),
        ("unknown-field", fm("unknown-field", "version: 1.0.0\n")),
        (
            "claude-code-field",
            fm("claude-code-field", "disable-model-invocation: true\n"),
        ),
        (
            "flow-sequence",
            fm("flow-sequence", "allowed-tools: [Read, Grep]\n"),
        ),
        (
            "anchor-alias",
            fm(
                "anchor-alias",
                "license: &l MIT\nmetadata:\n  license: *l\n",
            ),
        ),
        (
            "duplicate-key",
            fm("duplicate-key", "license: MIT\nlicense: Apache-2.0\n"),
        ),
        ("list-frontmatter", b"---\n- a\n- b\n---\nbody\n".to_vec()),
        ("empty-frontmatter", b"---\n---\nbody\n".to_vec()),
        ("license-list", fm("license-list", "license:\n  - MIT\n")),
        (
            "metadata-not-a-map",
            fm("metadata-not-a-map", "metadata: just text\n"),
        ),
        (
            "allowed-tools-mapping",
            fm("allowed-tools-mapping", "allowed-tools:\n  Read: yes\n"),
        ),
        (
            "byte-order-mark",
            [b"\xEF\xBB\xBF".as_slice(), &fm("byte-order-mark", "")].concat(),
        ),
        (
            "invalid-utf8",
            b"---\nname: invalid-utf8\ndescription: caf\xe9\n---\n".to_vec(),
        ),
        ("name-list", fm("[a, b]", "")),
    ]
}

fn python() -> Option<PathBuf> {
    let python = workspace_root().join("target/skills-ref-venv/bin/python");
    python.exists().then_some(python)
}

/// skills-ref's verdicts: skill folder -> its error messages (empty = accepted).
fn skills_ref(python: &Path, roots: &[&Path]) -> BTreeMap<PathBuf, Vec<String>> {
    let script = workspace_root().join("tests/scripts/skills_ref_validate.py");
    let out = Command::new(python)
        .arg(script)
        .args(roots)
        .output()
        .expect("run the skills-ref script");
    assert!(
        out.status.success(),
        "skills-ref script failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let verdicts: BTreeMap<String, Vec<String>> =
        serde_json::from_slice(&out.stdout).expect("skills-ref JSON");
    verdicts
        .into_iter()
        .map(|(dir, errors)| (canonical(Path::new(&dir)), errors))
        .collect()
}

/// skillwatch's verdicts: skill folder -> error messages under `--profile agentskills`.
fn skillwatch_verdicts(roots: &[&Path]) -> BTreeMap<PathBuf, Vec<String>> {
    let mut verdicts = BTreeMap::new();
    for root in roots {
        let out = skillwatch(
            &[
                "check",
                root.to_str().unwrap(),
                "--profile",
                "agentskills",
                "--json",
            ],
            None,
        );
        for file in json_report(&out)["files"].as_array().unwrap() {
            let path = Path::new(file["path"].as_str().unwrap());
            if path.file_name().is_none_or(|n| n != "SKILL.md") {
                continue;
            }
            let errors: Vec<String> = file["diagnostics"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| d["severity"] == "error")
                .map(|d| format!("{}: {}", d["rule"], d["message"]))
                .collect();
            verdicts.insert(canonical(path.parent().unwrap()), errors);
        }
    }
    verdicts
}

fn canonical(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
}

/// The venv's Python; `None` after a visible skip when it is missing outside CI
/// ([`skillwatch_tests::needs`]; in CI a missing venv fails the test).
fn python_or_skip() -> Option<PathBuf> {
    skillwatch_tests::needs::required(
        python(),
        "target/skills-ref-venv (the Agent Skills reference validator)",
        "scripts/test makes it: python3 -m venv target/skills-ref-venv && \
         target/skills-ref-venv/bin/pip install skills-ref==0.1.1",
    )
}

/// The corpora the differential runs over: the repository's own, and the whole development
/// corpus beside the checkout when it is there (then it must pass over it too).
fn corpora() -> Vec<PathBuf> {
    let mut corpora = vec![corpus_dir()];
    match shared_corpus_dir() {
        Some(shared) => {
            eprintln!(
                "skills-ref differential: over tests/fixtures/corpus and {} (present, so it must \
                 pass there too)",
                shared.display()
            );
            corpora.push(shared);
        }
        None => eprintln!(
            "skills-ref differential: over tests/fixtures/corpus only (../shared/corpus is not \
             beside this checkout)"
        ),
    }
    corpora
}

#[test]
fn agentskills_profile_rejects_exactly_what_skills_ref_rejects() {
    let Some(python) = python_or_skip() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let handmade = tmp.path().join("handmade");
    for (name, bytes) in broken_skills() {
        write_skill(&handmade, name, &bytes, &[]);
    }
    let corpora = corpora();
    let mut roots: Vec<&Path> = corpora.iter().map(PathBuf::as_path).collect();
    roots.push(handmade.as_path());
    let theirs = skills_ref(&python, &roots);
    let ours = skillwatch_verdicts(&roots);
    assert_eq!(
        theirs.keys().collect::<BTreeSet<_>>(),
        ours.keys().collect::<BTreeSet<_>>(),
        "both tools must see the same skill folders"
    );
    let expected: BTreeMap<PathBuf, &str> = DISAGREEMENTS
        .iter()
        .map(|(name, who, _)| (canonical(&handmade.join(name)), *who))
        .collect();
    let mut report = Vec::new();
    let mut corpus_rejected = 0;
    for (dir, their_errors) in &theirs {
        let our_errors = &ours[dir];
        let (they_reject, we_reject) = (!their_errors.is_empty(), !our_errors.is_empty());
        if corpora.iter().any(|c| dir.starts_with(canonical(c))) && they_reject {
            corpus_rejected += 1;
        }
        let disagreement = match (they_reject, we_reject) {
            (true, false) => Some("skills-ref"),
            (false, true) => Some("skillwatch"),
            _ => None,
        };
        if disagreement != expected.get(dir).copied() {
            report.push(format!(
                "{}: skills-ref {:?} / skillwatch {:?} (listed disagreement: {:?})",
                dir.display(),
                their_errors,
                our_errors,
                expected.get(dir)
            ));
        }
    }
    assert!(
        report.is_empty(),
        "unexpected verdicts:\n{}",
        report.join("\n")
    );
    assert!(
        corpus_rejected > 0,
        "skills-ref rejected nothing in the corpus: is it running?"
    );
    for (name, _) in broken_skills() {
        let dir = canonical(&handmade.join(name));
        let should_pass = name.starts_with("ok-");
        assert_eq!(
            ours[&dir].is_empty(),
            should_pass,
            "{name}: {:?}",
            ours[&dir]
        );
    }
}

/// `check --fix` over a copy of the corpus: the repaired skills are what the specification
/// asks for, as the reference validator reads them. skills-ref accepts far more of them, no
/// skill it accepted before is rejected after, and the two tools still agree skill by skill.
#[test]
fn fixed_skills_pass_skills_ref_and_the_verdicts_still_agree() {
    let Some(python) = python_or_skip() else {
        return;
    };
    for corpus in corpora() {
        fixed_corpus_passes(&python, &corpus);
    }
}

fn fixed_corpus_passes(python: &Path, corpus: &Path) {
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("corpus");
    let copied = Command::new("cp")
        .arg("-a")
        .arg(corpus)
        .arg(&copy)
        .status()
        .expect("cp");
    assert!(copied.success());
    let before = skills_ref(python, &[copy.as_path()]);
    let out = skillwatch(
        &[
            "check",
            copy.to_str().unwrap(),
            "--profile",
            "agentskills",
            "--fix",
            "--level",
            "error",
        ],
        None,
    );
    assert!(stderr(&out).contains("fixed "), "{}", stderr(&out));
    let after = skills_ref(python, &[copy.as_path()]);
    let ours = skillwatch_verdicts(&[copy.as_path()]);
    let rejected = |v: &BTreeMap<PathBuf, Vec<String>>| {
        v.iter()
            .filter(|(_, e)| !e.is_empty())
            .map(|(d, _)| d.clone())
            .collect::<BTreeSet<_>>()
    };
    let (was, is) = (rejected(&before), rejected(&after));
    assert!(
        is.is_subset(&was),
        "fixing broke skills: {:?}",
        is.difference(&was).collect::<Vec<_>>()
    );
    assert!(
        is.len() * 2 < was.len(),
        "{}: skills-ref rejects {} of the fixed skills, {} before",
        corpus.display(),
        is.len(),
        was.len()
    );
    assert_eq!(
        is,
        rejected(&ours),
        "skills-ref and --profile agentskills disagree on the fixed skills"
    );
}
