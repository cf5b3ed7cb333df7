use proptest::prelude::*;

use super::*;
use crate::skill::{Frontmatter, SkillDocument, load_document};

/// The oracle: what the walk learnt before (a full `load_document` and the parsed `name`).
fn oracle_name(path: &Path) -> Option<String> {
    let doc = load_document(path).ok()?;
    match &doc.frontmatter {
        Frontmatter::Parsed { root, .. } => name_in(root).map(|n| n.to_lowercase()),
        _ => None,
    }
}

/// The oracle's frontmatter text: the span `SkillDocument::parse` found (parsed or not).
fn oracle_yaml(text: &str) -> Option<String> {
    let doc = SkillDocument::parse(text.to_string());
    match &doc.frontmatter {
        Frontmatter::Parsed { span, .. } | Frontmatter::Invalid { span, .. } => {
            Some(doc.slice(*span).to_string())
        }
        _ => None,
    }
}

fn corpus_skills() -> Vec<PathBuf> {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/corpus");
    let dirs = discover(&corpus);
    assert!(!dirs.is_empty(), "no corpus at {corpus:?}");
    dirs
}

/// Whether a fresh [`SkillName`] for `path` says the file is named `wanted`.
fn lazily_named(path: &Path, wanted: &str) -> bool {
    SkillName::read(path).is_named(wanted, &Runs::of(wanted))
}

#[test]
fn frontmatter_text_is_found_as_skill_document_finds_it() {
    let cases = [
        "",
        "---",
        "---\n",
        "---\nname: a\n---\nbody",
        "\u{feff}---\r\nname: a\r\n---\r\nbody",
        "--- \nname: a\n...\t\n",
        "---\nname: a\n",
        "x\n---\nname: a\n---\n",
        "---\nname: a\n---x\n---\n",
        "---\n---\n",
        "---\nname: [a\n---\n",
    ];
    for text in cases {
        assert_eq!(
            frontmatter_text(text).map(str::to_string),
            oracle_yaml(text),
            "{text:?}"
        );
    }
    for dir in corpus_skills() {
        let Ok(text) = std::fs::read_to_string(dir.join(SKILL_FILE)) else {
            continue;
        };
        assert_eq!(
            frontmatter_text(&text).map(str::to_string),
            oracle_yaml(&text),
            "{dir:?}"
        );
    }
}

/// Every corpus SKILL.md asked for every name of the corpus (folder and frontmatter names, in
/// other cases, with spaces, and a few that name nothing): the lazy answer is the oracle's.
#[test]
fn lazy_names_agree_with_parsing_every_corpus_skill() {
    let dirs = corpus_skills();
    let oracle: Vec<Option<String>> = dirs
        .iter()
        .map(|d| oracle_name(&d.join(SKILL_FILE)))
        .collect();
    let mut probes: Vec<String> = oracle.iter().flatten().cloned().collect();
    probes.extend(
        dirs.iter()
            .filter_map(|d| d.file_name()?.to_str().map(str::to_lowercase)),
    );
    probes.extend(["riva-tts", "no such skill", "it's", "pdf", "kelvin"].map(String::from));
    probes.sort();
    probes.dedup();
    let mut parsed = 0;
    for (dir, expected) in dirs.iter().zip(&oracle) {
        let mut skill = SkillName::read(&dir.join(SKILL_FILE));
        for probe in &probes {
            let truth = expected.as_deref() == Some(probe.as_str());
            assert_eq!(
                skill.is_named(probe, &Runs::of(probe)),
                truth,
                "{dir:?} asked for {probe:?}"
            );
        }
        parsed += usize::from(matches!(skill, SkillName::Known(_)));
    }
    assert!(parsed > 0, "no frontmatter was ever parsed");
}

#[test]
fn text_rules_out_only_names_that_cannot_parse_so() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join(SKILL_FILE);
    let cases: &[(&str, &str, bool)] = &[
        ("name: Riva-TTS\n", "riva-tts", true),
        ("name: 'it''s'\n", "it's", true),
        ("name: \"riva\\x2dtts\"\n", "riva-tts", true),
        ("name: \"\u{212a}elvin\"\n", "kelvin", true),
        ("name: >\n  two\n  words\n", "two words", true),
        ("name: &a x\nother: *a\n", "x", true),
        ("name: riva-tts\nbad: [\n", "riva-tts", false),
        ("description: riva-tts\n", "riva-tts", false),
        ("name: 12\n", "12", false),
        ("name: '  '\n", "", false),
        ("name: riva\n", "riva-tts", false),
    ];
    for (yaml, wanted, named) in cases {
        std::fs::write(&path, format!("---\n{yaml}---\nbody\n")).unwrap();
        assert_eq!(
            oracle_name(&path).as_deref() == Some(*wanted),
            *named,
            "{yaml:?}"
        );
        assert_eq!(lazily_named(&path, wanted), *named, "{yaml:?}");
    }
    std::fs::write(&path, "---\nname: x\n---\nbody \0").unwrap();
    assert!(!lazily_named(&path, "x"), "a binary SKILL.md has no name");
}

fn scalar_style() -> impl Strategy<Value = String> {
    // A name in each YAML style, from a few letters, spaces, quotes and case changes.
    let word = "[a-zA-Z' \\-]{1,12}";
    (word, 0..5usize).prop_map(|(w, style)| match style {
        0 => w,
        1 => format!("'{}'", w.replace('\'', "''")),
        2 => format!("\"{w}\""),
        3 => format!("|\n  {w}\n"),
        _ => format!(">\n  {}\n", w.replace(' ', "\n  ")),
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Generated frontmatters: asked for its own parsed name, or for a neighbour of it, the
    /// lazy answer is always the parser's.
    #[test]
    fn lazy_names_agree_on_generated_frontmatter(
        value in scalar_style(),
        probe in "[a-zA-Z' \\-]{1,12}",
    ) {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join(SKILL_FILE);
        std::fs::write(&path, format!("---\nname: {value}\ndescription: d\n---\n")).unwrap();
        let truth = oracle_name(&path);
        for wanted in truth.iter().cloned().chain([probe.trim().to_lowercase()]) {
            prop_assert_eq!(
                lazily_named(&path, &wanted),
                truth.as_deref() == Some(wanted.as_str()),
                "{:?} asked for {:?}", value, wanted
            );
        }
    }
}
