//! End to end: `skillwatch export harbor` and `skillwatch import harbor` on Harbor 0.25.0's
//! real output files (tests/fixtures/harbor) and on job folders made from them: re-import adds
//! nothing, a running job imports what finished and the rest later, a damaged trial is named
//! while the others import. Exported tasks are loaded by Harbor's own task model when the
//! Harbor venv of scripts/harbor-env is there (`SKILLWATCH_HARBOR`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;
use skillwatch_tests::{skillwatch_bin, workspace_root};

fn fixtures() -> PathBuf {
    workspace_root().join("tests/fixtures/harbor")
}

fn sw(db: &Path, args: &[&str]) -> Output {
    Command::new(skillwatch_bin())
        .args(args)
        .arg("--db")
        .arg(db)
        .env_remove("SKILLWATCH_DB")
        .env("SKILLWATCH_NO_DAEMON", "1")
        .output()
        .expect("run skillwatch")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Every run of `skill` with its trials, from `history --json --trials`.
fn runs(db: &Path, skill: &str) -> Vec<Value> {
    let out = sw(db, &["history", skill, "--json", "--trials"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["runs"].as_array().unwrap().clone()
}

fn copy_dir(from: &Path, to: &Path) {
    for e in walkdir::WalkDir::new(from) {
        let e = e.unwrap();
        let dest = to.join(e.path().strip_prefix(from).unwrap());
        if e.file_type().is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
        } else {
            std::fs::copy(e.path(), &dest).unwrap();
        }
    }
}

#[test]
fn a_real_two_arm_job_imports_once_with_arms_from_the_agent_entries() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("h.db");
    let job = fixtures().join("jobs/twoarms");
    let out = sw(&db, &["import", "harbor", job.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("2 trials imported"),
        "{}",
        text(&out.stdout)
    );
    let again = sw(&db, &["import", "harbor", job.to_str().unwrap()]);
    assert!(again.status.success());
    assert!(
        text(&again.stdout).contains("0 trials imported, 2 already in the history"),
        "{}",
        text(&again.stdout)
    );
    let runs = runs(&db, "release-codename");
    assert_eq!(runs.len(), 1);
    let run = &runs[0];
    assert_eq!(run["run"]["status"], "completed");
    assert_eq!(run["run"]["harness"], "skillwatch-scripted-loop");
    assert_eq!(run["run"]["model"], "codename-v1");
    let trials = run["trials"].as_array().unwrap();
    assert_eq!(trials.len(), 2);
    let side = |c: &str| trials.iter().find(|t| t["condition"] == c).unwrap();
    assert_eq!(side("baseline")["passed"], false);
    assert_eq!(side("skill")["passed"], true);
    assert_eq!(side("skill")["tokens"]["input"], 234);
    assert_eq!(run["headline"]["outcome"]["lift"], 1.0);
}

#[test]
fn claude_codes_trial_reads_its_skill_call_from_atif_v1_7() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("h.db");
    let job = fixtures().join("jobs/cc-withskill");
    let out = sw(&db, &["import", "harbor", job.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let runs = runs(&db, "release-codename");
    let t = &runs[0]["trials"][0];
    assert_eq!(t["condition"], "skill");
    assert_eq!(t["skill_invoked"], true);
    assert_eq!(t["cost_usd"], 0.027291);
    assert_eq!(runs[0]["run"]["harness_version"], "2.1.332");
    assert_eq!(
        runs[0]["run"]["config"]["harbor"]["skill_digest"],
        "sha256:952092f8467e2ba7bcdb230cd86d4fae0c7111d9fcea4751bfccbe9b41955e85"
    );
}

#[test]
fn a_running_job_imports_what_finished_then_the_rest_without_duplicates() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("h.db");
    let job = tmp.path().join("job");
    copy_dir(&fixtures().join("jobs/twoarms"), &job);
    let full = std::fs::read_to_string(job.join("result.json")).unwrap();
    let mut running: Value = serde_json::from_str(&full).unwrap();
    running["finished_at"] = Value::Null;
    running["n_total_trials"] = 3.into();
    std::fs::write(job.join("result.json"), running.to_string()).unwrap();
    let held = job.join("codename__rSX2JoP/result.json");
    let finished = std::fs::read(&held).unwrap();
    std::fs::remove_file(&held).unwrap();
    std::fs::write(job.join("codename__rSX2JoP/config.json"), "{}").unwrap();

    // Only the baseline finished: its trial names no skill, so the user says which.
    let out = sw(
        &db,
        &[
            "import",
            "harbor",
            job.to_str().unwrap(),
            "--skill",
            "release-codename",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    assert!(said.contains("1 trial imported"), "{said}");
    assert!(said.contains("2 trials not finished yet"), "{said}");
    let r = runs(&db, "release-codename");
    assert_eq!(r[0]["run"]["status"], "interrupted");
    assert_eq!(r[0]["trials"].as_array().unwrap().len(), 1);

    std::fs::write(&held, finished).unwrap();
    std::fs::write(job.join("result.json"), &full).unwrap();
    let out = sw(&db, &["import", "harbor", job.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("1 trial imported, 1 already in the history"),
        "{}",
        text(&out.stdout)
    );
    let r = runs(&db, "release-codename");
    assert_eq!(r.len(), 1, "the same run, completed");
    assert_eq!(r[0]["run"]["status"], "completed");
    let trials = r[0]["trials"].as_array().unwrap();
    assert_eq!(trials.len(), 2);
    assert_eq!(r[0]["headline"]["outcome"]["lift"], 1.0);
}

#[test]
fn a_damaged_trial_is_named_and_the_others_import() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("h.db");
    let job = tmp.path().join("job");
    copy_dir(&fixtures().join("jobs/twoarms"), &job);
    let bad = job.join("codename__fxG6Tab/result.json");
    let bytes = std::fs::read(&bad).unwrap();
    std::fs::write(&bad, &bytes[..bytes.len() / 2]).unwrap();
    let out = sw(&db, &["import", "harbor", job.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    let err = text(&out.stderr);
    assert!(err.contains(&bad.display().to_string()), "{err}");
    assert!(err.contains("not a Harbor trial result"), "{err}");
    let r = runs(&db, "release-codename");
    assert_eq!(r[0]["trials"].as_array().unwrap().len(), 1);
    assert_eq!(
        r[0]["run"]["status"], "interrupted",
        "a damaged trial keeps the job open"
    );
    // Repaired, it imports; nothing else is duplicated.
    std::fs::write(&bad, &bytes).unwrap();
    let out = sw(&db, &["import", "harbor", job.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let r = runs(&db, "release-codename");
    assert_eq!(r[0]["trials"].as_array().unwrap().len(), 2);
    assert_eq!(r[0]["run"]["status"], "completed");
}

#[test]
fn a_foreign_job_with_no_nameable_skill_is_refused_with_what_to_do() {
    let tmp = tempfile::tempdir().unwrap();
    let job = tmp.path().join("job");
    copy_dir(&fixtures().join("jobs/twoarms"), &job);
    std::fs::remove_dir_all(job.join("codename__rSX2JoP")).unwrap();
    let out = sw(
        &tmp.path().join("h.db"),
        &["import", "harbor", job.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("--skill NAME"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn export_writes_one_task_per_case_and_a_two_arm_job() {
    let tmp = tempfile::tempdir().unwrap();
    let skill = workspace_root().join("examples/skills/meeting-notes");
    let out_dir = tmp.path().join("export");
    let out = Command::new(skillwatch_bin())
        .args(["export", "harbor"])
        .arg(&skill)
        .arg("--out")
        .arg(&out_dir)
        .args([
            "--agent",
            "claude-code",
            "--model",
            "anthropic/claude-sonnet-4-5",
        ])
        .args(["--attempts", "2"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    assert!(said.contains("harbor run -c job.yaml -o jobs -y"), "{said}");
    assert!(said.contains("-e daytona"), "{said}");
    let tasks: Vec<PathBuf> = std::fs::read_dir(out_dir.join("tasks"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(!tasks.is_empty());
    for t in &tasks {
        for f in [
            "task.toml",
            "instruction.md",
            "environment/Dockerfile",
            "tests/test.sh",
        ] {
            assert!(t.join(f).is_file(), "{} has no {f}", t.display());
        }
        let test_sh = t.join("tests/test.sh");
        let check = Command::new("bash")
            .arg("-n")
            .arg(&test_sh)
            .output()
            .unwrap();
        assert!(
            check.status.success(),
            "{}: {}",
            test_sh.display(),
            text(&check.stderr)
        );
    }
    let job = std::fs::read_to_string(out_dir.join("job.yaml")).unwrap();
    assert_eq!(job.matches("- name: \"claude-code\"").count(), 2, "{job}");
    assert!(job.contains("skills: [\"skills/meeting-notes\"]"), "{job}");
    assert!(out_dir.join("skills/meeting-notes/SKILL.md").is_file());
    // Writing into a folder with files is refused.
    let again = Command::new(skillwatch_bin())
        .args(["export", "harbor"])
        .arg(&skill)
        .arg("--out")
        .arg(&out_dir)
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(2));
    assert!(text(&again.stderr).contains("expected an empty or absent folder"));
    load_in_harbor(&tasks);
}

/// Every exported task loads in Harbor's own task model; without Harbor this part fails in
/// CI and is skipped visibly elsewhere ([`skillwatch_tests::needs`]).
fn load_in_harbor(tasks: &[PathBuf]) {
    let Some(harbor) = skillwatch_tests::needs::required(
        std::env::var_os("SKILLWATCH_HARBOR").map(PathBuf::from),
        "Harbor's task model (SKILLWATCH_HARBOR)",
        skillwatch_tests::needs::HARBOR_HOW,
    ) else {
        return;
    };
    let python = harbor.with_file_name("python");
    let script = "import sys\nfrom pathlib import Path\nfrom harbor.models.task.task import Task\nfor p in sys.argv[1:]:\n    t = Task(Path(p))\n    print(t.name, t.config.agent.timeout_sec)\n";
    let out = Command::new(&python)
        .arg("-c")
        .arg(script)
        .args(tasks)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "Harbor refused a task: {}",
        text(&out.stderr)
    );
    assert_eq!(
        text(&out.stdout).lines().count(),
        tasks.len(),
        "{}",
        text(&out.stdout)
    );
}

/// The editor's lens shows an imported Harbor run as it shows a local one: the lens above the
/// skill's SKILL.md (a real language server over stdio, reading the history the import wrote)
/// carries the run's lift and model, and `history` lists the same run.
#[test]
fn an_imported_job_shows_in_the_editors_lens_and_in_history() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("h.db");
    let job = fixtures().join("jobs/exported");
    let out = sw(&db, &["import", "harbor", job.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let listed = sw(&db, &["history", "release-codename"]);
    assert!(
        text(&listed.stdout).contains("codename-v1"),
        "{}",
        text(&listed.stdout)
    );
    let run = &runs(&db, "release-codename")[0];
    let lift = run["headline"]["outcome"]["lift"].as_f64().unwrap();
    let skill = fixtures().join("skills/release-codename/SKILL.md");
    let mut lsp =
        skillwatch_tests::lsp::LspClient::initialized(serde_json::json!({"historyDb": db}));
    let uri = lsp.open(
        &skill,
        "markdown",
        &std::fs::read_to_string(&skill).unwrap(),
    );
    let lenses = lsp.request(
        "textDocument/codeLens",
        serde_json::json!({"textDocument": {"uri": uri}}),
    );
    let title = lenses[0]["command"]["title"].as_str().unwrap().to_owned();
    assert!(
        title.starts_with(&format!("Lift {lift:+.2}")) && title.contains("codename-v1 · 1 run"),
        "{title}"
    );
    assert!(lsp.shutdown().success());
}

/// A copy of the job `from` holding only the trials whose arm is the skill's (`skilled`) or
/// the baseline's, under its own job id: the two arms run as separate Harbor jobs, as
/// SkillsBench and most Harbor users run them. `keep` may drop further trials by task.
fn one_arm_job(from: &Path, to: &Path, skilled: bool, id: &str, keep: &dyn Fn(&str) -> bool) {
    copy_dir(from, to);
    let mut kept = 0;
    for e in std::fs::read_dir(to).unwrap() {
        let dir = e.unwrap().path();
        let Ok(bytes) = std::fs::read(dir.join("result.json")) else {
            continue;
        };
        let trial: Value = serde_json::from_slice(&bytes).unwrap();
        let has_skill = trial["config"]["agent"]["skills"]
            .as_array()
            .is_some_and(|s| !s.is_empty());
        let task = trial["task_name"].as_str().unwrap_or_default();
        if has_skill == skilled && keep(task) {
            kept += 1;
        } else {
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }
    let meta_path = to.join("result.json");
    let mut meta: Value = serde_json::from_slice(&std::fs::read(&meta_path).unwrap()).unwrap();
    meta["id"] = Value::from(id);
    meta["n_total_trials"] = Value::from(kept);
    std::fs::write(&meta_path, serde_json::to_vec(&meta).unwrap()).unwrap();
}

fn import_json(db: &Path, jobs: &[&Path], extra: &[&str]) -> Value {
    let mut args = vec!["import", "harbor", "--json"];
    args.extend(jobs.iter().map(|j| j.to_str().unwrap()));
    args.extend_from_slice(extra);
    let out = sw(db, &args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn arms_run_as_separate_jobs_pair_in_one_import_as_in_one_two_arm_job() {
    let tmp = tempfile::tempdir().unwrap();
    let exported = fixtures().join("jobs/exported");
    let baseline = tmp.path().join("jobs/baseline");
    let skilled = tmp.path().join("jobs/skilled");
    one_arm_job(&exported, &baseline, false, "job-baseline", &|_| true);
    one_arm_job(&exported, &skilled, true, "job-skilled", &|_| true);

    let split_db = tmp.path().join("split.db");
    let v = import_json(&split_db, &[&baseline, &skilled], &[]);
    assert_eq!(v["runs"].as_array().unwrap().len(), 1, "{v:#}");
    assert_eq!(v["runs"][0]["added"], 8, "{v:#}");
    assert_eq!(v["runs"][0]["status"], "completed", "{v:#}");
    assert_eq!(v["unpaired"], serde_json::json!([]), "{v:#}");

    let whole_db = tmp.path().join("whole.db");
    import_json(&whole_db, &[&exported], &[]);
    let split = runs(&split_db, "release-codename");
    let whole = runs(&whole_db, "release-codename");
    assert_eq!(split.len(), 1);
    assert_eq!(split[0]["trials"].as_array().unwrap().len(), 8);
    // The lift comes from the pairs: 2 tasks, each with 2 attempts per arm.
    let lift = &split[0]["headline"]["outcome"];
    assert_eq!(lift, &whole[0]["headline"]["outcome"], "split vs one job");
    // both tasks paired (none missing an arm), and the same lift as the one job's: 0.875
    assert_eq!(lift["cases"], 2, "{lift:#}");
    assert_eq!(lift["excluded"]["missing_baseline"], 0, "{lift:#}");
    assert_eq!(lift["lift"], 0.875, "{lift:#}");
    assert_eq!(split[0]["headline"]["cases"], whole[0]["headline"]["cases"]);

    // Again, in either order: the same run, nothing added.
    for jobs in [
        [baseline.as_path(), skilled.as_path()],
        [skilled.as_path(), baseline.as_path()],
    ] {
        let again = import_json(&split_db, &jobs, &[]);
        assert_eq!(again["runs"][0]["added"], 0, "{again:#}");
        assert_eq!(again["runs"][0]["already"], 8, "{again:#}");
        assert_eq!(again["runs"][0]["run"], v["runs"][0]["run"]);
    }
    assert_eq!(runs(&split_db, "release-codename").len(), 1);
}

#[test]
fn a_baseline_job_takes_its_skill_from_the_other_job_and_lone_tasks_are_listed() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("h.db");
    // a foreign job (not exported by skillwatch): only the skill arm's agent entry names the
    // skill, so the baseline job alone cannot say which skill it measured
    let twoarms = fixtures().join("jobs/twoarms");
    let baseline = tmp.path().join("b");
    let skilled = tmp.path().join("s");
    one_arm_job(&twoarms, &baseline, false, "b", &|_| true);
    one_arm_job(&twoarms, &skilled, true, "s", &|_| true);
    let alone = sw(&db, &["import", "harbor", baseline.to_str().unwrap()]);
    assert_eq!(alone.status.code(), Some(2));
    assert!(text(&alone.stderr).contains("--skill NAME"));
    let out = sw(
        &db,
        &[
            "import",
            "harbor",
            baseline.to_str().unwrap(),
            skilled.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("2 jobs in one import: 2 trials imported"),
        "{}",
        text(&out.stdout)
    );
    let r = runs(&db, "release-codename");
    assert_eq!(r.len(), 1);
    assert_eq!(r[0]["headline"]["outcome"]["lift"], 1.0);

    // A task run in one arm only is listed, not dropped: its trials are stored, unpaired.
    let exported = fixtures().join("jobs/exported");
    let base2 = tmp.path().join("b2");
    let skill2 = tmp.path().join("s2");
    one_arm_job(&exported, &base2, false, "b2", &|task| {
        !task.ends_with("-again")
    });
    one_arm_job(&exported, &skill2, true, "s2", &|_| true);
    let db2 = tmp.path().join("h2.db");
    let v = import_json(&db2, &[&base2, &skill2], &[]);
    assert_eq!(
        v["unpaired"],
        serde_json::json!([{"task": "codename-again", "only": "skill", "trials": 2}]),
        "{v:#}"
    );
    assert_eq!(v["runs"][0]["added"], 6, "{v:#}");
    let out = sw(
        &tmp.path().join("h3.db"),
        &[
            "import",
            "harbor",
            base2.to_str().unwrap(),
            skill2.to_str().unwrap(),
        ],
    );
    assert!(
        text(&out.stdout).contains(
            "unpaired: task \"codename-again\" has 2 trials in the skill arm and none in the baseline arm"
        ),
        "{}",
        text(&out.stdout)
    );
}
