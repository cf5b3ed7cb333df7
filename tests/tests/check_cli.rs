//! `skillwatch check` end to end: exit codes, the human, JSON and rule-list outputs, profiles,
//! severity flags and usage errors, on skill folders written by the tests.

use skillwatch_tests::*;

fn root() -> tempfile::TempDir {
    tempfile::tempdir().expect("temp dir")
}

#[test]
fn a_clean_skill_exits_zero_with_a_summary() {
    let tmp = root();
    let dir = write_skill(
        tmp.path(),
        "invoice-tables",
        good_skill_md("invoice-tables").as_bytes(),
        &[],
    );
    let out = skillwatch(&["check", dir.to_str().unwrap()], None);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(
        stdout(&out).trim(),
        "checked 1 skill (1 file, profile default): 0 errors, 0 warnings, 0 infos"
    );
}

#[test]
fn a_misspelt_assertion_type_names_the_type_it_is_a_typo_of() {
    let tmp = root();
    let eval = "scenarios:\n  - name: a\n    prompt: Pull the totals out of invoice.pdf\n    assertions:\n      - { type: output_contian, value: total }\n";
    let dir = write_skill(
        tmp.path(),
        "invoice-tables",
        good_skill_md("invoice-tables").as_bytes(),
        &[("tests/eval.yaml", eval)],
    );
    let out = skillwatch(&["check", dir.to_str().unwrap()], None);
    assert_eq!(code(&out), 1, "{}{}", stdout(&out), stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("tests/eval.yaml:5:17: error[SW402]")
            && text.contains("found string `output_contian` (did you mean `output_contains`?)"),
        "{text}"
    );
}

#[test]
fn a_description_in_japanese_is_not_held_to_english_phrases() {
    let tmp = root();
    let md = good_skill_md("invoice-tables").replace(
        "Extracts tables from PDF invoices into CSV files. Use when the user asks to pull line items, totals or dates out of PDF invoices.",
        "PDFの請求書から表を取り出してCSVにします。請求書の明細や合計を取り出すように頼まれたときに使います。",
    );
    let dir = write_skill(tmp.path(), "invoice-tables", md.as_bytes(), &[]);
    let out = skillwatch(&["check", dir.to_str().unwrap()], None);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).ends_with("0 errors, 0 warnings, 0 infos\n"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn errors_print_compiler_style_with_source_and_caret() {
    let tmp = root();
    let text =
        good_skill_md("invoice-tables").replace("name: invoice-tables", "name: Invoice_Tables");
    write_skill(tmp.path(), "invoice-tables", text.as_bytes(), &[]);
    let out = skillwatch(
        &["check", "invoice-tables", "--color", "never"],
        Some(tmp.path()),
    );
    assert_eq!(code(&out), 1);
    let text = stdout(&out);
    let expected = "invoice-tables/SKILL.md:2:7: error[SW106]: name `Invoice_Tables` must be \
                    lowercase letters, digits and single inner hyphens: uppercase `IT`, invalid '_'\n\
                    2 | name: Invoice_Tables\n  |       ^^^^^^^^^^^^^^ fix: Set name to `invoice-tables`\n";
    assert!(text.contains(expected), "{text}");
    assert!(
        text.contains(
            "error[SW108]: name `Invoice_Tables` does not match its folder `invoice-tables`"
        ),
        "{text}"
    );
    assert!(
        text.trim_end().ends_with("2 errors, 0 warnings, 0 infos"),
        "{text}"
    );
}

#[test]
fn color_always_paints_severities() {
    let tmp = root();
    let text = good_skill_md("x").replace("name: x", "name: y");
    write_skill(tmp.path(), "x", text.as_bytes(), &[]);
    let out = skillwatch(&["check", "x", "--color", "always"], Some(tmp.path()));
    assert!(
        stdout(&out).contains("\x1b[1;31merror\x1b[0m[SW108]"),
        "{}",
        stdout(&out)
    );
    let never = skillwatch(&["check", "x"], Some(tmp.path()));
    assert!(
        !stdout(&never).contains('\x1b'),
        "auto is off when stdout is a pipe"
    );
}

#[test]
fn deny_warnings_allow_and_deny_by_rule_change_the_outcome() {
    let tmp = root();
    let text =
        good_skill_md("inv").replace("license: Apache-2.0", "license: Apache-2.0\nversion: 1.2.0");
    write_skill(tmp.path(), "inv", text.as_bytes(), &[]);
    let plain = skillwatch(&["check", "inv"], Some(tmp.path()));
    assert_eq!(code(&plain), 0, "{}", stdout(&plain));
    assert!(stdout(&plain).contains("warning[SW116]: unknown field `version`"));
    let denied = skillwatch(&["check", "inv", "--deny", "warnings"], Some(tmp.path()));
    assert_eq!(code(&denied), 1);
    assert!(stdout(&denied).contains("error[SW116]"));
    let rule_denied = skillwatch(&["check", "inv", "--deny", "sw116"], Some(tmp.path()));
    assert_eq!(code(&rule_denied), 1);
    let allowed = skillwatch(
        &["check", "inv", "--deny", "warnings", "--allow", "SW116"],
        Some(tmp.path()),
    );
    assert_eq!(code(&allowed), 0, "{}", stdout(&allowed));
    assert!(!stdout(&allowed).contains("SW116"));
}

#[test]
fn agentskills_profile_makes_extra_fields_errors() {
    let tmp = root();
    let text = good_skill_md("inv").replace(
        "license: Apache-2.0",
        "license: Apache-2.0\nargument-hint: \"[file]\"",
    );
    write_skill(tmp.path(), "inv", text.as_bytes(), &[]);
    assert_eq!(code(&skillwatch(&["check", "inv"], Some(tmp.path()))), 0);
    let strict = skillwatch(
        &["check", "inv", "--profile", "agentskills"],
        Some(tmp.path()),
    );
    assert_eq!(code(&strict), 1);
    assert!(
        stdout(&strict).contains("error[SW116]: field `argument-hint` is a Claude Code extension"),
        "{}",
        stdout(&strict)
    );
}

/// A skill with one default warning (SW116 `version`) and one Claude Code field that the
/// agentskills profile refuses (`argument-hint`), in `skills/inv` under a fresh folder.
fn skills_for_the_check_table() -> tempfile::TempDir {
    let tmp = root();
    let text = good_skill_md("inv").replace(
        "license: Apache-2.0",
        "license: Apache-2.0\nversion: 1.2.0\nargument-hint: \"[file]\"",
    );
    write_skill(&tmp.path().join("skills"), "inv", text.as_bytes(), &[]);
    tmp
}

#[test]
fn the_check_table_of_skillwatch_toml_applies_under_the_flags() {
    let tmp = skills_for_the_check_table();
    let config = tmp.path().join("skillwatch.toml");
    std::fs::write(
        &config,
        "[run]\nmodel = \"m\"\n\n[check]\nprofile = \"agentskills\"\nrules = { sw116 = \"warning\" }\n",
    )
    .unwrap();
    // found from the folder checked, however deep; the summary names it
    let out = skillwatch(&["check", "skills/inv"], Some(tmp.path()));
    let text = stdout(&out);
    assert_eq!(code(&out), 0, "{text}");
    assert!(
        text.contains("warning[SW116]: field `argument-hint`"),
        "{text}"
    );
    let summary = "checked 1 skill (1 file, profile agentskills, settings from skillwatch.toml): 0 errors, 2 warnings";
    assert!(text.contains(summary), "{text}");
    // flags win: a flag profile replaces the file's, a flag rule comes after the file's
    let flags = skillwatch(
        &["check", "skills", "--profile", "default", "--deny", "SW116"],
        Some(tmp.path()),
    );
    assert_eq!(code(&flags), 1, "{}", stdout(&flags));
    assert!(stdout(&flags).contains("error[SW116]: unknown field `version`"));
    assert!(
        !stdout(&flags).contains("argument-hint"),
        "{}",
        stdout(&flags)
    );
    // JSON names the file too; --no-config reads none
    let json = skillwatch(&["check", "skills", "--json"], Some(tmp.path()));
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(doc["profile"], "agentskills");
    assert_eq!(
        doc["config"],
        config.canonicalize().unwrap().to_str().unwrap()
    );
    let none = skillwatch(
        &["check", "skills", "--no-config", "--json"],
        Some(tmp.path()),
    );
    let doc: serde_json::Value = serde_json::from_slice(&none.stdout).unwrap();
    assert_eq!(
        (doc["profile"].as_str(), doc["config"].is_null()),
        (Some("default"), true)
    );
    assert!(doc.get("fixed").is_none(), "no `fixed` without --fix");
}

#[test]
fn a_broken_or_ambiguous_check_table_is_a_usage_error() {
    let tmp = skills_for_the_check_table();
    std::fs::write(
        tmp.path().join("skillwatch.toml"),
        "[check]\nrules = { SW116 = \"warning\", SW1166 = \"off\" }\n",
    )
    .unwrap();
    let out = skillwatch(&["check", "skills"], Some(tmp.path()));
    assert_eq!(code(&out), 2, "{}", stdout(&out));
    assert!(
        stderr(&out).contains("skillwatch.toml:2:30: unknown rule `SW1166` in [check] rules"),
        "{}",
        stderr(&out)
    );
    // an explicit --config replaces the search; a second governing file is refused
    let other = tmp.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(
        other.join("skillwatch.toml"),
        "[check]\nrules = { SW116 = \"off\" }\n",
    )
    .unwrap();
    write_skill(&other, "inv", good_skill_md("inv").as_bytes(), &[]);
    let chosen = skillwatch(
        &["check", "skills", "--config", "other/skillwatch.toml"],
        Some(tmp.path()),
    );
    assert_eq!(code(&chosen), 0, "{}{}", stdout(&chosen), stderr(&chosen));
    assert!(!stdout(&chosen).contains("SW116"), "{}", stdout(&chosen));
    let two = skillwatch(&["check", "skills", "other/inv"], Some(tmp.path()));
    assert_eq!(code(&two), 2);
    assert!(
        stderr(&two).contains("governed by different skillwatch.toml files"),
        "{}",
        stderr(&two)
    );
}

/// A skill `inv` whose SKILL.md needs five fixes over several rounds: the colon in its
/// description makes the YAML invalid, and the other findings show only once it is quoted.
fn skill_needing_rounds_of_fixes(root: &std::path::Path) -> std::path::PathBuf {
    let broken = good_skill_md("inv")
        .replace("name: inv", "name: INV")
        .replace("Use when the user", "Use when: the user")
        .replace(
            "license: Apache-2.0",
            "license: Apache-2.0\nversion: 1.2.0\ntags: [billing, pdf]",
        );
    write_skill(root, "inv", broken.as_bytes(), &[])
}

#[test]
fn fix_writes_every_safe_repair_round_after_round() {
    let tmp = root();
    let dir = skill_needing_rounds_of_fixes(tmp.path());
    let skill_md = dir.join("SKILL.md");
    // the colon makes the YAML invalid: the other findings show only once it is quoted
    let before = skillwatch(
        &["check", "inv", "--profile", "agentskills"],
        Some(tmp.path()),
    );
    assert_eq!(code(&before), 1);
    assert!(
        stdout(&before).contains("error[SW102]"),
        "{}",
        stdout(&before)
    );

    let fixed = skillwatch(
        &["check", "inv", "--profile", "agentskills", "--fix"],
        Some(tmp.path()),
    );
    let text = std::fs::read_to_string(&skill_md).unwrap();
    assert_eq!(
        code(&fixed),
        0,
        "{}{}\n{text}",
        stdout(&fixed),
        stderr(&fixed)
    );
    let said = stderr(&fixed);
    assert!(said.ends_with("fixed 5 findings in 1 file\n"), "{said}");
    // each fix is listed where it was applied, for review
    for line in [
        "inv/SKILL.md:3:72: fixed SW102: Quote the value of `description`",
        "inv/SKILL.md:2:7: fixed SW106: Set name to `inv`",
        "fixed SW116: Move `version` under `metadata`",
        "fixed SW116: Move `tags` under `metadata`",
    ] {
        assert!(said.contains(line), "{line}\n{said}");
    }
    assert!(
        stdout(&fixed).ends_with(
            "checked 1 skill (1 file, profile agentskills): 0 errors, 0 warnings, 0 infos\n"
        ),
        "{}",
        stdout(&fixed)
    );
    let doc = skillwatch_core::skill::SkillDocument::parse(text.clone());
    let skillwatch_core::skill::Frontmatter::Parsed { root, .. } = &doc.frontmatter else {
        panic!("the fixed frontmatter parses: {text}");
    };
    let value = |key: &str| root.get(key).map(|e| e.value.to_json());
    assert_eq!(value("name"), Some(serde_json::json!("inv")));
    assert!(
        value("description")
            .unwrap()
            .as_str()
            .unwrap()
            .contains("Use when: the user"),
        "{text}"
    );
    assert_eq!(
        value("metadata"),
        Some(serde_json::json!({"version": "1.2.0", "tags": "billing, pdf"}))
    );
    assert!(text.ends_with(good_skill_md("inv").split("---\n").last().unwrap()));

    // nothing is left to fix: the file is not touched again
    let again = skillwatch(&["check", "inv", "--fix"], Some(tmp.path()));
    assert!(stderr(&again).contains("no finding has a fix to apply"));
    assert_eq!(std::fs::read_to_string(&skill_md).unwrap(), text);
}

#[test]
fn diff_shows_what_fix_would_write_and_writes_nothing() {
    let (previewed, fixed) = (root(), root());
    let skill_md = skill_needing_rounds_of_fixes(previewed.path()).join("SKILL.md");
    skill_needing_rounds_of_fixes(fixed.path());
    // a BOM, which the checked text leaves out, must be in the patch's first line too
    let with_bom = format!(
        "\u{feff}{}",
        good_skill_md("bom").replace("name: bom", "name: Bom")
    );
    for root in [previewed.path(), fixed.path()] {
        write_skill(root, "bom", with_bom.as_bytes(), &[]);
    }
    let before = std::fs::read(&skill_md).unwrap();
    let args = ["check", "inv", "bom", "--profile", "agentskills"];
    let diff = skillwatch(&[&args[..], &["--diff"]].concat(), Some(previewed.path()));
    assert_eq!(code(&diff), 1, "something to fix: {}", stderr(&diff));
    assert_eq!(
        stderr(&diff),
        "would fix 6 findings in 2 files (run with --fix to apply)\n"
    );
    assert_eq!(std::fs::read(&skill_md).unwrap(), before, "nothing written");
    let patch = stdout(&diff);
    assert!(
        patch.starts_with("--- inv/SKILL.md\n+++ inv/SKILL.md\n@@ -1,"),
        "{patch}"
    );
    assert!(patch.contains("\n-name: INV\n"), "{patch}");
    assert!(patch.contains("\n+name: inv\n"), "{patch}");

    // the diff is exactly what --fix writes: applied with git, it gives the same file
    let out = skillwatch(&[&args[..], &["--fix"]].concat(), Some(fixed.path()));
    // (the BOM itself is an error under agentskills, with no fix: exit 1)
    assert!(
        stderr(&out).ends_with("fixed 6 findings in 2 files\n"),
        "{}",
        stderr(&out)
    );
    let patch_file = previewed.path().join("fix.patch");
    std::fs::write(&patch_file, &patch).unwrap();
    let applied = std::process::Command::new("git")
        .args(["apply", "-p0", "fix.patch"])
        .current_dir(previewed.path())
        .output()
        .expect("git");
    assert!(applied.status.success(), "{}", stderr(&applied));
    for skill in ["inv", "bom"] {
        let file = format!("{skill}/SKILL.md");
        assert_eq!(
            std::fs::read(previewed.path().join(&file)).unwrap(),
            std::fs::read(fixed.path().join(&file)).unwrap(),
            "{file}"
        );
    }
    assert!(
        patch.contains("\n \u{feff}---\n-name: Bom\n+name: bom\n"),
        "{patch}"
    );

    // nothing left: empty diff, exit 0 (whatever errors without a fix remain)
    let again = skillwatch(&[&args[..], &["--diff"]].concat(), Some(fixed.path()));
    assert_eq!(code(&again), 0, "{}", stderr(&again));
    assert_eq!(stdout(&again), "");
    assert_eq!(stderr(&again), "no finding has a fix to apply\n");
    // the diff is the output: a report format alongside it is a usage error
    assert_eq!(
        code(&skillwatch(
            &["check", "inv", "--diff", "--json"],
            Some(fixed.path())
        )),
        2
    );
}

/// The two reported ways `--fix` lost or damaged a skill's text: `name` and `description`
/// joined on one line (it quoted both into `name`, then set `name` to the folder, and the
/// description was gone), and misspelt keys (moved under `metadata`, so the skill still had
/// no description). `--diff` shows the same repair, and what the author must decide is left.
#[test]
fn fix_never_loses_the_authors_text() {
    let body = "# PDF\n\nRead the PDF with `pdftotext -layout in.pdf -` and keep the tables.\n";
    let joined = format!(
        "---\nname: pdf-tools description: Extract text. Use when reading PDFs.\n---\n{body}"
    );
    let misspelt = format!(
        "---\nname: pdf-tools\ndescripton: Extract text. Use when reading PDFs.\nlicence: MIT\n---\n{body}"
    );
    let (previewed, fixed) = (root(), root());
    for tmp in [&previewed, &fixed] {
        write_skill(tmp.path(), "pdf", joined.as_bytes(), &[]);
        write_skill(tmp.path(), "pdf-tools", misspelt.as_bytes(), &[]);
    }
    let diff = skillwatch(
        &["check", "pdf", "pdf-tools", "--diff"],
        Some(previewed.path()),
    );
    let patch = stdout(&diff);
    for line in [
        "-name: pdf-tools description: Extract text. Use when reading PDFs.\n+name: pdf-tools\n+description: Extract text. Use when reading PDFs.\n",
        "-descripton: Extract text. Use when reading PDFs.\n-licence: MIT\n+description: Extract text. Use when reading PDFs.\n+license: MIT\n",
    ] {
        assert!(patch.contains(line), "{line}\n{patch}");
    }
    let out = skillwatch(&["check", "pdf", "pdf-tools", "--fix"], Some(fixed.path()));
    assert_eq!(
        std::fs::read_to_string(fixed.path().join("pdf/SKILL.md")).unwrap(),
        format!(
            "---\nname: pdf-tools\ndescription: Extract text. Use when reading PDFs.\n---\n{body}"
        )
    );
    assert_eq!(
        std::fs::read_to_string(fixed.path().join("pdf-tools/SKILL.md")).unwrap(),
        format!(
            "---\nname: pdf-tools\ndescription: Extract text. Use when reading PDFs.\nlicense: MIT\n---\n{body}"
        )
    );
    // the name differs from the folder in words: replacing it is the author's call
    let report = stdout(&out);
    assert!(!report.contains("SW109"), "{report}");
    assert!(
        report.contains(
            "pdf/SKILL.md:2:7: error[SW108]: name `pdf-tools` does not match its folder `pdf` \
             (`--fix` leaves this to you: its fix would replace `pdf-tools`)"
        ),
        "{report}"
    );
    assert!(
        stderr(&out).ends_with("fixed 3 findings in 2 files\n"),
        "{}",
        stderr(&out)
    );
}

/// A folder of skills is checked as the set an agent lists: one name twice (SW220, on both),
/// and a listing over Claude Code's budget names the skills whose descriptions it drops.
#[test]
fn skills_in_one_folder_are_checked_as_the_set_an_agent_lists() {
    let tmp = root();
    let skills = tmp.path().join("skills");
    write_skill(
        &skills,
        "invoices",
        good_skill_md("invoices").as_bytes(),
        &[],
    );
    let twin = good_skill_md("invoices").replace(
        "description: Extracts tables from PDF invoices into CSV files.",
        "description: Totals the amounts of scanned receipts into a monthly expense sheet.",
    );
    write_skill(&skills, "invoices-v2", twin.as_bytes(), &[]);
    let out = skillwatch(&["check", "skills", "--json"], Some(tmp.path()));
    let report = json_report(&out);
    let sw220: Vec<String> = diagnostics(&report)
        .into_iter()
        .filter(|d| d["rule"] == "SW220")
        .map(|d| d["path"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        sw220,
        ["skills/invoices/SKILL.md", "skills/invoices-v2/SKILL.md"]
    );

    // 17 skills of 1,540-character listing lines: Claude Code's own skills take 6,209 of its
    // default model's 30,000 characters, and fifteen descriptions fit in the rest
    let many = root();
    let long = format!(
        "when_to_use: {}\n",
        "Pull the line items out of a PDF invoice. ".repeat(40)
    );
    for i in 0..17 {
        let text = good_skill_md(&format!("s{i:02}")).replacen(
            "description:",
            &format!("{long}description:"),
            1,
        );
        write_skill(
            &many.path().join("skills"),
            &format!("s{i:02}"),
            text.as_bytes(),
            &[],
        );
    }
    let report = json_report(&skillwatch(
        &["check", "skills", "--json"],
        Some(many.path()),
    ));
    let cut: Vec<String> = diagnostics(&report)
        .into_iter()
        .filter(|d| d["rule"] == "SW222")
        .map(|d| d["path"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(cut, ["skills/s15/SKILL.md", "skills/s16/SKILL.md"]);
    // One skill checked alone is still judged with the skills beside it.
    let alone = json_report(&skillwatch(
        &["check", "skills/s16", "--json"],
        Some(many.path()),
    ));
    let rules: Vec<String> = diagnostics(&alone)
        .into_iter()
        .map(|d| d["rule"].as_str().unwrap().to_string())
        .collect();
    assert!(rules.contains(&"SW222".to_string()), "{rules:?}");
}

#[test]
fn fix_mends_eval_files_too() {
    let tmp = root();
    let eval = "scenarios:\n  - name: Totals: sum them\n    prompt: Sum the invoice totals.\n    \
                assertions:\n      - type: output_contains\n        value: \"120\"\n";
    let dir = write_skill(
        tmp.path(),
        "inv",
        good_skill_md("inv").as_bytes(),
        &[("tests/eval.yaml", eval)],
    );
    let out = skillwatch(&["check", "inv", "--fix", "--json"], Some(tmp.path()));
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert!(
        stderr(&out).contains("inv/tests/eval.yaml:2:17: fixed SW401: Quote the value of `name`"),
        "{}",
        stderr(&out)
    );
    // scripts get the same list in the report
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        doc["fixed"],
        serde_json::json!([{"path": "inv/tests/eval.yaml", "line": 2, "column": 17,
                            "rule": "SW401", "title": "Quote the value of `name`"}])
    );
    assert_eq!(doc["summary"]["errors"], 0);
    assert_eq!(
        std::fs::read_to_string(dir.join("tests/eval.yaml")).unwrap(),
        eval.replace("name: Totals: sum them", "name: 'Totals: sum them'")
    );
}

#[test]
fn fix_leaves_silenced_findings_alone() {
    let tmp = root();
    let text =
        good_skill_md("inv").replace("license: Apache-2.0", "license: Apache-2.0\nversion: 1.2.0");
    let dir = write_skill(tmp.path(), "inv", text.as_bytes(), &[]);
    let out = skillwatch(
        &["check", "inv", "--fix", "--allow", "SW116"],
        Some(tmp.path()),
    );
    assert_eq!(code(&out), 0);
    assert!(
        stderr(&out).contains("no finding has a fix to apply"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read_to_string(dir.join("SKILL.md")).unwrap(), text);
}

#[test]
fn ignore_comments_silence_their_line_in_every_kind_of_file() {
    let tmp = root();
    let skill_md = good_skill_md("inv").replace(
        "license: Apache-2.0",
        "license: Apache-2.0\nversion: 1.0  # skillwatch-ignore SW116 kept for our registry",
    ) + "\n<!-- skillwatch-ignore SW307: our own API -->\nCall https://billing.acme.dev/api.\n\
         \nAlso https://other.acme.dev/docs.\n\n<!-- skillwatch-ignore SW301 SW999 -->\nNothing.\n";
    let eval = "scenarios:\n  - name: totals\n    prompt: Sum the invoice totals.\n    \
                # skillwatch-ignore SW409: the harness default applies\n    timeout: -1\n    \
                assertions:\n      - type: output_contains\n        value: \"120\"\n";
    let script = "KEY=AKIAZ7QW3RT5YU8PLM2X  # skillwatch-ignore SW301 test fixture\n\
                  TOKEN=ghp_Zq8Lm2Rt5Yu9Wx3Cv6Bn1Mk4Jh7Gf0Ds2Ap5\n";
    write_skill(
        tmp.path(),
        "inv",
        skill_md.as_bytes(),
        &[("tests/eval.yaml", eval), ("scripts/run.sh", script)],
    );
    let out = skillwatch(&["check", "inv", "--json"], Some(tmp.path()));
    let found: Vec<(String, String, u64)> = diagnostics(&json_report(&out))
        .iter()
        .filter(|d| d["rule"] != "SW308")
        .map(|d| {
            (
                d["rule"].as_str().unwrap().to_string(),
                d["path"].as_str().unwrap().to_string(),
                d["start"]["line"].as_u64().unwrap(),
            )
        })
        .collect();
    let at = |rule: &str, path: &str, line: u64| (rule.to_string(), path.to_string(), line);
    assert_eq!(
        found,
        [
            at("SW307", "inv/SKILL.md", 38),
            at("SW002", "inv/SKILL.md", 40),
            at("SW001", "inv/SKILL.md", 40),
            at("SW301", "inv/scripts/run.sh", 2),
        ],
        "{}",
        stdout(&out)
    );
    // the silenced findings are counted, and listed with their reasons
    let report = json_report(&out);
    assert_eq!(report["summary"]["ignored"], 4);
    let reasons: Vec<(String, String)> = report["files"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| f["ignored"].as_array().cloned().unwrap_or_default())
        .map(|i| {
            let rule = i["rule"].as_str().unwrap().to_string();
            (rule, i["reason"].as_str().unwrap().to_string())
        })
        .collect();
    let said = |rule: &str, reason: &str| (rule.to_string(), reason.to_string());
    assert_eq!(
        reasons,
        [
            said("SW116", "kept for our registry"),
            said("SW307", "our own API"),
            said("SW409", "the harness default applies"),
            said("SW301", "test fixture"),
        ]
    );
    let human = skillwatch(&["check", "inv"], Some(tmp.path()));
    assert!(
        stdout(&human).ends_with("; 4 silenced by skillwatch-ignore comments\n"),
        "{}",
        stdout(&human)
    );

    // without the comments, each silenced finding is there
    let bare = skill_md.replace("skillwatch-ignore", "note");
    std::fs::write(tmp.path().join("inv/SKILL.md"), &bare).unwrap();
    let eval_bare = eval.replace("skillwatch-ignore", "note");
    std::fs::write(tmp.path().join("inv/tests/eval.yaml"), eval_bare).unwrap();
    let out = skillwatch(&["check", "inv", "--json"], Some(tmp.path()));
    let rules: Vec<String> = diagnostics(&json_report(&out))
        .iter()
        .map(|d| d["rule"].as_str().unwrap().to_string())
        .collect();
    for rule in ["SW116", "SW409"] {
        assert!(rules.contains(&rule.to_string()), "{rule}: {rules:?}");
    }
    assert_eq!(
        rules.iter().filter(|r| *r == "SW307").count(),
        2,
        "{rules:?}"
    );

    // --fix drops the stale id and keeps the unknown one for the author
    std::fs::write(tmp.path().join("inv/SKILL.md"), &skill_md).unwrap();
    let fixed = skillwatch(&["check", "inv", "--fix"], Some(tmp.path()));
    assert!(
        stderr(&fixed).contains("inv/SKILL.md:40:24: fixed SW002: Remove the unused id"),
        "{}",
        stderr(&fixed)
    );
    let text = std::fs::read_to_string(tmp.path().join("inv/SKILL.md")).unwrap();
    assert!(
        text.contains("\n<!-- skillwatch-ignore SW999 -->\n"),
        "{text}"
    );
}

#[test]
fn json_output_counts_and_deserializes_into_core_diagnostics() {
    let tmp = root();
    let text = good_skill_md("inv").replace("name: inv", "name: other");
    write_skill(tmp.path(), "inv", text.as_bytes(), &[]);
    let clean = good_skill_md("clean").replace(
        "Extracts tables from PDF invoices into CSV files.",
        "Totals scanned receipts into a monthly expense sheet.",
    );
    write_skill(tmp.path(), "clean", clean.as_bytes(), &[]);
    let out = skillwatch(&["check", ".", "--json"], Some(tmp.path()));
    assert_eq!(code(&out), 1);
    let report = json_report(&out);
    assert_eq!(report["version"], 1);
    assert_eq!(report["summary"]["skills"], 2);
    assert_eq!(report["summary"]["errors"], 1);
    let all = diagnostics(&report);
    assert_eq!(all.len(), 1);
    let d = &all[0];
    assert_eq!(
        (
            d["rule"].as_str(),
            d["name"].as_str(),
            d["category"].as_str()
        ),
        (Some("SW108"), Some("name-matches-folder"), Some("spec"))
    );
    assert_eq!(
        (d["start"]["line"].as_u64(), d["start"]["column"].as_u64()),
        (Some(2), Some(7))
    );
    let core: skillwatch_core::checks::Diagnostic =
        serde_json::from_value(d.clone()).expect("a core Diagnostic");
    assert_eq!(core.rule, "SW108");
    let fix = core.fix.expect("fix");
    let skill_md = std::fs::read_to_string(tmp.path().join("inv/SKILL.md")).unwrap();
    assert_eq!(fix.apply(&skill_md).unwrap(), good_skill_md("inv"));
}

#[test]
fn check_dot_inside_a_skill_compares_the_real_folder_name() {
    let tmp = root();
    let dir = write_skill(tmp.path(), "inv", good_skill_md("inv").as_bytes(), &[]);
    let out = skillwatch(&["check", "."], Some(&dir));
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    let out = skillwatch(&["check", "SKILL.md"], Some(&dir));
    assert_eq!(code(&out), 0, "{}", stdout(&out));
}

#[test]
fn level_hides_lower_findings_but_counts_them() {
    let tmp = root();
    let text = format!(
        "{}\nDocs: https://docs.nvidia.com/x\n",
        good_skill_md("inv")
    );
    write_skill(tmp.path(), "inv", text.as_bytes(), &[]);
    let out = skillwatch(&["check", "inv", "--level", "warning"], Some(tmp.path()));
    assert!(!stdout(&out).contains("SW307"));
    assert!(stdout(&out).contains("0 errors, 0 warnings, 1 info"));
    let out = skillwatch(&["check", "inv"], Some(tmp.path()));
    assert!(
        stdout(&out)
            .contains("info[SW307]: the skill points the agent at external host `docs.nvidia.com`")
    );
}

#[test]
fn usage_and_io_errors_exit_two() {
    let tmp = root();
    let missing = skillwatch(&["check", "no-such-dir"], Some(tmp.path()));
    assert_eq!(code(&missing), 2);
    assert!(
        stderr(&missing).contains("no-such-dir: no such file or folder"),
        "{}",
        stderr(&missing)
    );
    std::fs::create_dir(tmp.path().join("empty")).unwrap();
    let empty = skillwatch(&["check", "empty"], Some(tmp.path()));
    assert_eq!(code(&empty), 2);
    assert!(stderr(&empty).contains("no skill found"));
    let bad_rule = skillwatch(&["check", ".", "--allow", "SW999"], Some(tmp.path()));
    assert_eq!(code(&bad_rule), 2);
    assert!(stderr(&bad_rule).contains("unknown rule `SW999`"));
    assert_eq!(code(&skillwatch(&["check"], Some(tmp.path()))), 2);
    assert_eq!(
        code(&skillwatch(
            &["check", ".", "--format", "xml"],
            Some(tmp.path())
        )),
        2
    );
}

#[test]
fn explain_and_list_rules() {
    let out = skillwatch(&["check", "--explain", "sw116"], None);
    assert_eq!(code(&out), 0);
    let text = stdout(&out);
    assert!(text.starts_with("SW116 unknown-field (spec)"), "{text}");
    assert!(text.contains("severity under --profile agentskills: error"));
    let list = skillwatch(&["check", "--list-rules", "--json"], None);
    let rules: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
    let ids: Vec<&str> = rules
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["id"].as_str())
        .collect();
    for id in ["SW100", "SW116", "SW201", "SW301", "SW309"] {
        assert!(ids.contains(&id), "{id} missing from {ids:?}");
    }
    let human = skillwatch(&["check", "--list-rules"], None);
    assert_eq!(stdout(&human).lines().count(), ids.len());
}
