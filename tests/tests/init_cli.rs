//! `skillwatch init`: the scaffolded skill passes `skillwatch check` in both eval formats,
//! nothing existing is overwritten, and a name the specification refuses is refused.

use skillwatch_tests::*;

#[test]
fn a_new_skill_passes_check_in_either_eval_format() {
    let tmp = tempfile::tempdir().unwrap();
    let out = skillwatch(&["init", "meeting-notes"], Some(tmp.path()));
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    for file in [
        "meeting-notes/SKILL.md",
        "meeting-notes/tests/eval.yaml",
        "skillwatch.toml",
    ] {
        assert!(tmp.path().join(file).is_file(), "{file}");
    }
    assert!(stderr(&out).contains("passes `skillwatch check meeting-notes`"));
    let skill_md = std::fs::read_to_string(tmp.path().join("meeting-notes/SKILL.md")).unwrap();
    assert!(skill_md.starts_with("---\nname: meeting-notes\n"));
    assert!(skill_md.contains("\n# Meeting notes\n"));
    let check = skillwatch(&["check", "meeting-notes", "--json"], Some(tmp.path()));
    assert_eq!(code(&check), 0);
    assert_eq!(json_report(&check)["summary"]["errors"], 0);
    assert_eq!(json_report(&check)["summary"]["warnings"], 0);

    // the skillwatch.toml now applies: a second skill does not get one of its own
    let json = skillwatch(
        &["init", "action-items", "--format", "evals-json"],
        Some(tmp.path()),
    );
    assert_eq!(code(&json), 0, "{}", stderr(&json));
    assert!(!stderr(&json).contains("skillwatch.toml"));
    assert!(tmp.path().join("action-items/evals/evals.json").is_file());
    let check = skillwatch(&["check", "action-items", "--json"], Some(tmp.path()));
    assert_eq!(
        json_report(&check)["summary"]["errors"],
        0,
        "{}",
        stdout(&check)
    );
    let evals = std::fs::read_to_string(tmp.path().join("action-items/evals/evals.json")).unwrap();
    assert!(evals.contains("\"skill_name\": \"action-items\""));
}

#[test]
fn nothing_is_overwritten_and_bad_names_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    write_skill(
        tmp.path(),
        "mine",
        b"---\nname: mine\n---\nmy own text\n",
        &[],
    );
    let out = skillwatch(&["init", "mine"], Some(tmp.path()));
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("refusing to overwrite mine/SKILL.md"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("mine/SKILL.md")).unwrap(),
        "---\nname: mine\n---\nmy own text\n"
    );
    assert!(
        !tmp.path().join("mine/tests").exists(),
        "no file written when one exists"
    );
    let out = skillwatch(&["init", "Meeting_Notes"], Some(tmp.path()));
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("cannot be a skill's name: uppercase `MN`"),
        "{}",
        stderr(&out)
    );

    // without a name, the current folder becomes the skill
    let here = tmp.path().join("in-place");
    std::fs::create_dir(&here).unwrap();
    let out = skillwatch(&["init"], Some(&here));
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(here.join("SKILL.md").is_file() && tmp.path().join("skillwatch.toml").is_file());
}
