//! The bundled examples (examples/skills, the README's first command) show what their README
//! says: two clean skills, one a security review flags, one `--fix` repairs without loss.

use std::collections::BTreeMap;

use skillwatch_tests::*;

fn rules_by_skill() -> BTreeMap<String, Vec<String>> {
    let out = skillwatch(&["check", "examples/skills", "--json"], None);
    assert_eq!(
        code(&out),
        1,
        "the broken examples have errors: {}",
        stderr(&out)
    );
    let mut by_skill: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for d in diagnostics(&json_report(&out)) {
        let path = d["path"].as_str().unwrap();
        let skill = path.split('/').nth(2).unwrap().to_string();
        by_skill
            .entry(skill)
            .or_default()
            .push(d["rule"].as_str().unwrap().into());
    }
    by_skill
}

#[test]
fn the_examples_show_what_their_readme_says() {
    let found = rules_by_skill();
    assert!(!found.contains_key("meeting-notes"), "{found:?}");
    assert_eq!(
        found.get("invoice-tables"),
        Some(&vec!["SW308".to_string(), "SW415".to_string()])
    );
    for rule in ["SW201", "SW302", "SW303", "SW304"] {
        assert!(
            found["quick-setup"].contains(&rule.to_string()),
            "{rule}: {found:?}"
        );
    }
    assert!(found["release-notes"].contains(&"SW102".to_string()));
}

#[test]
fn release_notes_is_repaired_by_fix_without_losing_a_word() {
    let tmp = tempfile::tempdir().unwrap();
    let src = workspace_root().join("examples/skills/release-notes/SKILL.md");
    let before = std::fs::read_to_string(&src).unwrap();
    write_skill(tmp.path(), "release-notes", before.as_bytes(), &[]);
    let out = skillwatch(&["check", "release-notes", "--fix"], Some(tmp.path()));
    let after = std::fs::read_to_string(tmp.path().join("release-notes/SKILL.md")).unwrap();
    assert!(
        after.starts_with(
            "---\nname: release-notes\ndescription: Writes release notes from merged pull \
             requests. Use when preparing a release.\nlicense: MIT\n---\n"
        ),
        "{after}\n{}",
        stderr(&out)
    );
    let shape = skillwatch_core::checks::Shape::SkillMd;
    assert_eq!(
        skillwatch_core::checks::text_kept(shape, &before, &after),
        Ok(())
    );
}
