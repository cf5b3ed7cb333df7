//! The daemon path (the default) gives what `--no-daemon` gives: each test runs the same
//! command both ways against one private daemon and one history, and asserts the same result.
//! Each is a defect of issue 20 the daemon path once had: the daemon's environment instead
//! of the client's, an unset key variable run on the daemon's key, judge errors not counted,
//! a run whose every trial errored passing, agents escaping the timeout with `setsid` or
//! outliving a kill -9 of the daemon, a corrupt history making the client wait 15 s in
//! silence, a closed pipe panicking.

use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use skillwatch_daemon::store::{RunId, Store, Verdict};
use skillwatch_tests::daemon::{DaemonFixture, THROUGH, assert_key_sent_and_kept_nowhere};
use skillwatch_tests::mock::{self, MockServer, MockUsage, ModelReply, ModelRequest, Script};
use skillwatch_tests::trial::{process_gone, process_state, process_undisturbed};
use skillwatch_tests::{code, json_report, stderr, stdout, wait};

fn usage() -> MockUsage {
    MockUsage::tokens(10, 1)
}

/// An agent model that answers GOOD at once; judge requests (no tools) get prose without the
/// JSON a judgment needs.
fn good_agent_prose_judge() -> Script {
    Arc::new(|req: &ModelRequest| {
        if req.tool_names.is_empty() {
            return ModelReply::text("I would rather not give a score.", usage());
        }
        ModelReply::text("GOOD: aligned", usage())
    })
}

/// An independent judge, model `judge` on `server`.
fn independent_judge(server: &MockServer) -> Vec<String> {
    let url = format!("{}/v1", server.url());
    [
        "--judge-model",
        "judge",
        "--judge-url",
        &url,
        "--judge-mode",
        "independent",
    ]
    .map(str::to_owned)
    .to_vec()
}

/// `run SKILL` on `model` of `server`, never reusing a baseline, in JSON.
fn openai_run(skill: &std::path::Path, server: &MockServer, model: &str) -> Vec<String> {
    let mut args = vec!["run".to_owned(), skill.to_str().unwrap().to_owned()];
    args.extend(server.openai_args(model));
    args.extend(["--no-reuse", "--json"].map(str::to_owned));
    args
}

#[test]
fn the_run_uses_the_clients_api_key_and_keeps_it_nowhere() {
    const SECRET: &str = "sk-client-secret-7f3a9c";
    let server = mock::openai_chat::server(good_agent_prose_judge());
    let mut fx = DaemonFixture::new();
    let skill = fx.add_skill("keyed", 1);
    fx.start_with_env(&[
        ("MYKEY", "sk-daemon-stale-key"),
        ("OPENAI_API_KEY", "sk-daemon-openai-key"),
    ]);
    let mut args = openai_run(&skill, &server, "mock-model");
    args.extend(["--api-key-env".into(), "MYKEY".into()]);

    let outs = fx.both(&args, &[("MYKEY", SECRET)], &[]);
    let reports = outs.each_ref().map(json_report);
    for (out, via) in outs.iter().zip(THROUGH) {
        assert_ne!(code(out), 2, "{via}: {}", stderr(out));
    }
    assert_eq!(code(&outs[0]), code(&outs[1]));
    assert_eq!(reports[0]["tally"], reports[1]["tally"]);
    assert_key_sent_and_kept_nowhere(&fx, &server, SECRET, 4);

    // a named variable that is unset is an error, the same both ways, and nothing runs
    let before = server.requests().len();
    let outs = fx.both(&args, &[], &["MYKEY"]);
    let said: Vec<String> = outs.iter().map(stderr).collect();
    for (out, via) in outs.iter().zip(THROUGH) {
        assert_eq!(code(out), 2, "{via}: {}", stderr(out));
        assert!(stderr(out).contains("MYKEY"), "{via}: {}", stderr(out));
    }
    assert_eq!(said[0], said[1]);
    assert_eq!(
        said[0].matches("MYKEY").count(),
        1,
        "said once: {}",
        said[0]
    );
    assert_eq!(server.requests().len(), before, "no model request");
}

#[test]
fn judge_errors_are_counted_the_same_both_ways() {
    let server = mock::openai_chat::server(good_agent_prose_judge());
    let mut fx = DaemonFixture::new();
    let skill = fx.add_skill("judged", 2);
    fx.start_with_env(&[("OPENAI_API_KEY", "sk-test")]);
    let mut args = openai_run(&skill, &server, "mock-model");
    args.extend(independent_judge(&server));
    let outs = fx.both(&args, &[("OPENAI_API_KEY", "sk-test")], &[]);
    let store = Store::open_existing(&fx.db).unwrap();
    let mut counted = Vec::new();
    for (out, via) in outs.iter().zip(THROUGH) {
        let r = json_report(out);
        let run = RunId(r["run"]["id"].as_i64().unwrap());
        let stored = store
            .run_judgments(run)
            .unwrap()
            .into_iter()
            .filter(|j| matches!(j.judgment.verdict, Verdict::Failed { .. }))
            .count();
        assert!(stored > 0, "{via}: the judge never answered usable JSON");
        assert_eq!(r["tally"]["judge_errors"], stored, "{via}: {r}");
        counted.push(stored);
    }
    assert_eq!(counted[0], counted[1]);
    assert_eq!(code(&outs[0]), code(&outs[1]));
}

/// `run SKILL` on the command harness running `agent` (model `m`), then `extra`.
fn command_run(skill: &std::path::Path, agent: &str, extra: &[&str]) -> Vec<String> {
    let mut args = ["run", skill.to_str().unwrap(), "--harness", "command"]
        .map(str::to_owned)
        .to_vec();
    args.extend(["--program", agent, "--model", "m"].map(str::to_owned));
    args.extend(extra.iter().map(|a| a.to_string()));
    args
}

/// A command agent running `body`, in the fixture's root.
fn command_agent(fx: &DaemonFixture, body: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let program = fx.root.path().join("agent.sh");
    std::fs::write(&program, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    program.display().to_string()
}

/// A run whose every trial errored measured nothing: it is `failed` in the run's own output
/// (header and exit code), in `history` (not among completed runs), in the HTML report and in
/// the SKILL.md lens, both ways (issue 36).
#[test]
fn a_run_whose_every_trial_errored_fails_both_ways_and_show_says_why() {
    let mut fx = DaemonFixture::new();
    let skill = fx.add_skill("broken", 2);
    let agent = command_agent(&fx, "echo 'agent-stderr-marker: no model' >&2; exit 3");
    fx.start();
    let args = command_run(&skill, &agent, &["--no-reuse", "--json"]);
    let outs = fx.both(&args, &[], &[]);
    let mut runs = Vec::new();
    for (out, via) in outs.iter().zip(THROUGH) {
        let r = json_report(out);
        assert_eq!(r["tally"]["errors"], 4, "{via}: {r}");
        // docs/run.md: 2 is a failure (1 a regression, 0 a completed run)
        assert_eq!(code(out), 2, "{via}: a run that measured nothing fails");
        assert_eq!(r["run"]["status"], "failed", "{via}: {r}");
        runs.push(r["run"]["id"].as_i64().unwrap());
    }
    // the human output's header, through the daemon
    let human = fx.cli(&command_run(&skill, &agent, &["--no-reuse"]));
    assert_eq!(code(&human), 2);
    let text = stdout(&human);
    let header = text
        .lines()
        .find(|l| l.starts_with("broken on m "))
        .unwrap_or_else(|| panic!("no run header in {text}"));
    assert!(header.contains(", failed, "), "{header}");
    assert!(
        text.contains("Utility U    — (no case was scored on both sides)"),
        "{text}"
    );

    // the HTML report says the newest run failed, rather than show nothing
    let page = fx.root.path().join("report.html");
    let report = fx.cli(&[
        "report".as_ref(),
        "--html".as_ref(),
        page.as_os_str(),
        "broken".as_ref(),
    ]);
    assert_eq!(code(&report), 0, "{}", stderr(&report));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("failed</strong> on m (command)")
            && html.contains("4 of 4 trials errored, so no case was scored on both sides"),
        "{html}"
    );

    // the lens above SKILL.md says so too
    let (mut lsp, uri) = fx.lsp_on(&skill.join("SKILL.md"));
    let titles = lsp.lens_titles(&uri);
    assert!(
        titles[0].starts_with("Last run failed: 4 of 4 trials errored · m · "),
        "{titles:?}"
    );
    assert!(!titles.iter().any(|t| t == "No runs yet"), "{titles:?}");
    assert!(lsp.shutdown().success());

    // `skillwatch show` lists the trials and shows one whole, with the agent's stderr
    let listing = fx.cli(&["show", &runs[0].to_string()]);
    assert_eq!(code(&listing), 0, "{}", stderr(&listing));
    let text = stdout(&listing);
    assert_eq!(text.matches(" error ").count(), 4, "{text}");
    let store = Store::open_existing(&fx.db).unwrap();
    let trial = store.run_trials(RunId(runs[0])).unwrap()[0].id;
    let one = fx.cli(&["show", &runs[0].to_string(), "--trial", &trial.to_string()]);
    let text = stdout(&one);
    assert!(
        text.contains("expected exit status 0, found 3") && text.contains("agent-stderr-marker"),
        "{text}"
    );

    // the history table's columns line up under their headers (the started time is 24 wide)
    let history = stdout(&fx.cli(&["history", "broken", "--no-daemon"]));
    let lines: Vec<&str> = history.lines().collect();
    let header = lines
        .iter()
        .position(|l| l.trim_start().starts_with("run  started"))
        .unwrap();
    // in characters, as a terminal shows them (`—` is one)
    let column = |line: &str, word: &str| line[..line.find(word).unwrap()].chars().count();
    let (head, row) = (lines[header], lines[header + 1]);
    assert_eq!(column(head, "model"), column(row, " m ") + 1, "{history}");
    assert_eq!(column(head, "status"), column(row, "failed"), "{history}");
    assert!(history.contains("no completed runs"), "{history}");

    // output to a closed pipe ends quietly (`skillwatch ... | head -0`), both ways
    for args in [
        vec!["history", "broken"],
        vec!["history", "broken", "--no-daemon"],
        vec!["daemon", "status"],
    ] {
        let mut child = fx
            .cli_command(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        assert!(
            code(&out) != 101 && !stderr(&out).contains("panicked"),
            "{args:?}: {} {}",
            code(&out),
            stderr(&out)
        );
    }
}

/// Wait for `pid` (an agent sleeping for minutes) to be gone, failing with `failure` and what
/// it still is when it is not.
fn wait_gone(pid: i32, failure: &str) {
    wait::until(failure, || {
        wait::when(process_gone(pid), || process_state(pid))
    });
}

/// Wait until `dir` holds at least `n` pid files; those pids.
fn wait_pids(dir: &std::path::Path, n: usize, what: &str) -> Vec<i32> {
    wait::until(what, || {
        let pids = pids_in(dir);
        if pids.len() >= n {
            Ok(pids)
        } else {
            Err(format!("pids so far: {pids:?}"))
        }
    })
}

fn pids_in(dir: &std::path::Path) -> Vec<i32> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .filter_map(|e| std::fs::read_to_string(e.path()).ok()?.trim().parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn an_agent_that_leaves_its_session_is_killed_at_the_timeout_both_ways() {
    let mut fx = DaemonFixture::new();
    let skill = fx.add_skill("escaping", 1);
    let pids = fx.root.path().join("escaped");
    std::fs::create_dir_all(&pids).unwrap();
    let agent = command_agent(
        &fx,
        &format!(
            "setsid sleep 300 & echo $! > {}/$$; sleep 300",
            pids.display()
        ),
    );
    fx.start();
    let args = command_run(&skill, &agent, &["--timeout", "2", "--no-reuse", "--json"]);
    let outs = fx.both(&args, &[], &[]);
    for (out, via) in outs.iter().zip(THROUGH) {
        assert_eq!(json_report(out)["tally"]["timeouts"], 2, "{via}");
    }
    let escaped = pids_in(&pids);
    assert_eq!(escaped.len(), 4, "two trials each way");
    for pid in escaped {
        wait_gone(pid, &format!("{pid} to end with its trial"));
    }
}

#[test]
fn a_restarted_daemon_kills_the_agents_an_earlier_one_left_running() {
    let mut fx = DaemonFixture::new();
    let skill = fx.add_skill("orphaned", 1);
    let pids = fx.root.path().join("agents");
    std::fs::create_dir_all(&pids).unwrap();
    let agent = command_agent(
        &fx,
        &format!(
            "echo $$ > {p}/$$; setsid sh -c 'echo $$ > {p}/s$$; exec sleep 300' & exec sleep 300",
            p = pids.display()
        ),
    );
    fx.start();
    let mut client = fx
        .cli_command(&command_run(&skill, &agent, &["--timeout", "600"]))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let first = wait_pids(&pids, 2, "the agent to start");
    fx.kill9();
    let _ = client.kill();
    let _ = client.wait();
    // what could end them with the daemon (a signal the kernel sends as it dies) was queued
    // before it was reaped: with none pending they run on, orphaned
    for pid in &first {
        assert!(!process_gone(*pid), "{pid} should still run, orphaned");
        if let Err(seen) = process_undisturbed(*pid) {
            panic!("{pid} should still run, orphaned: {seen}");
        }
    }
    fx.start();
    for pid in &first {
        wait_gone(
            *pid,
            &format!("{pid}, left by the killed daemon, to end after a restart"),
        );
    }
    assert!(fx.log_text().contains("an earlier daemon left running"));
}

#[test]
fn a_corrupt_history_is_said_at_once_both_ways() {
    let fx = DaemonFixture::new();
    std::fs::write(
        &fx.db,
        b"this is not an SQLite database, just text".repeat(200),
    )
    .unwrap();
    let skill = fx.add_skill("any", 1);
    skillwatch_tests::skillwatch_bin(); // built before anything is timed
    let started = Instant::now();
    let start = fx.cli(&["daemon", "start"]);
    let took = started.elapsed();
    let err = stderr(&start);
    assert_eq!(code(&start), 2, "{err}");
    assert!(took < Duration::from_secs(5), "{took:?}: {err}");
    assert!(!err.contains("did not answer"), "{err}");
    let cause = "file is not a database";
    assert!(err.contains(cause), "{err}");
    let args = [
        "run",
        skill.to_str().unwrap(),
        "--harness",
        "openai",
        "--model",
        "m",
    ];
    for (out, via) in fx.both(&args, &[], &[]).iter().zip(THROUGH) {
        assert_eq!(code(out), 2, "{via}: {}", stderr(out));
        assert!(stderr(out).contains(cause), "{via}: {}", stderr(out));
    }
}

/// A command agent that answers GOOD, or hangs while `hang` exists beside it (its pid in
/// `pids/`).
fn good_or_hanging_agent(fx: &DaemonFixture) -> String {
    let root = fx.root.path().display();
    let answer = skillwatch_tests::run::atif_answer("GOOD");
    command_agent(
        fx,
        &format!(
            "if [ -e {root}/hang ]; then mkdir -p {root}/pids; echo $$ > {root}/pids/$$; exec sleep 300; fi\nprintf '%s' '{answer}' > \"$SKILLWATCH_TRAJECTORY\""
        ),
    )
}

/// A run cancelled (Ctrl-C) while its second trial hangs: its id.
fn cancelled_run(fx: &DaemonFixture, args: &[String]) -> i64 {
    let pids = fx.root.path().join("pids");
    let _ = std::fs::remove_dir_all(&pids);
    std::fs::write(fx.root.path().join("hang"), "").unwrap();
    let child = fx
        .cli_command(args)
        .arg("--no-daemon")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_pids(&pids, 1, "the agent to hang");
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(code(&out), 1, "a cancelled run exits 1");
    std::fs::remove_file(fx.root.path().join("hang")).unwrap();
    json_report(&out)["run"]["id"].as_i64().unwrap()
}

#[test]
fn resume_finishes_the_run_named_both_ways() {
    let mut fx = DaemonFixture::new();
    let skill = fx.add_skill("resumed", 2);
    let agent = good_or_hanging_agent(&fx);
    fx.start();
    let args = command_run(&skill, &agent, &["--no-reuse", "--json"]);
    let runs = [cancelled_run(&fx, &args), cancelled_run(&fx, &args)];
    let store = Store::open_existing(&fx.db).unwrap();
    let before: Vec<usize> = runs
        .iter()
        .map(|r| store.run_trials(RunId(*r)).unwrap().len())
        .collect();
    drop(store);
    let mut reports = Vec::new();
    for ((run, in_process), via) in runs.iter().zip([false, true]).zip(THROUGH) {
        let id = run.to_string();
        let mut cmd = fx.cli_command(&args);
        cmd.args(["--resume", &id]);
        if in_process {
            cmd.arg("--no-daemon");
        }
        let out = cmd.output().unwrap();
        let r = json_report(&out);
        assert_eq!(
            r["run"]["id"], *run,
            "{via}: resumed run {run}, not a new one: {r}"
        );
        assert_eq!(r["run"]["status"], "completed", "{via}: {r}");
        reports.push(r);
    }
    let store = Store::open_existing(&fx.db).unwrap();
    for (run, before) in runs.iter().zip(before) {
        let trials = store.run_trials(RunId(*run)).unwrap().len();
        assert_eq!(
            trials, 4,
            "run {run}: {before} trials before, all four after"
        );
    }
    assert_eq!(
        reports[0]["tally"]["planned"],
        reports[1]["tally"]["planned"]
    );
    let newest = store
        .run_trials(RunId(runs[1] + 1))
        .map(|t| t.len())
        .unwrap_or(0);
    assert_eq!(newest, 0, "no new run was made");
}

/// Overwrite the root page of `table` (as a disk fault would).
fn damage_table(path: &std::path::Path, table: &str) {
    use std::io::{Seek, SeekFrom, Write};
    let (root, page_size): (i64, i64) = {
        let conn = rusqlite::Connection::open(path).unwrap();
        conn.pragma_update(None, "wal_checkpoint", "TRUNCATE")
            .unwrap();
        let root = conn
            .query_row(
                "SELECT rootpage FROM sqlite_schema WHERE name = ?1",
                [table],
                |r| r.get(0),
            )
            .unwrap();
        let size = conn
            .pragma_query_value(None, "page_size", |r| r.get(0))
            .unwrap();
        (root, size)
    };
    let mut file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    file.seek(SeekFrom::Start(((root - 1) * page_size) as u64))
        .unwrap();
    file.write_all(&vec![0xA5; page_size as usize]).unwrap();
}

#[test]
fn a_damaged_history_gets_no_new_run_either_way() {
    let fx = DaemonFixture::new();
    let skill = fx.add_skill("damaged", 1);
    let agent = good_or_hanging_agent(&fx);
    let args = command_run(&skill, &agent, &["--no-reuse", "--json"]);
    let first = fx.cli_command(&args).arg("--no-daemon").output().unwrap();
    assert_eq!(code(&first), 0, "{}", stderr(&first));
    damage_table(&fx.db, "trials");
    let before = std::fs::read(&fx.db).unwrap();
    let outs = fx.both(&args, &[], &[]);
    for (out, via) in outs.iter().zip(THROUGH) {
        let err = stderr(out);
        assert_eq!(code(out), 2, "{via}: {err}");
        assert!(
            err.contains("is damaged") && err.contains(".recover"),
            "{via}: {err}"
        );
        assert!(!err.contains("did not answer"), "{via}: {err}");
    }
    assert!(
        std::fs::read(&fx.db).unwrap() == before,
        "nothing was written to the damaged file"
    );
}

/// A command agent that answers GOOD after `secs`, its pid in `pids/` when it starts.
fn slow_agent(fx: &DaemonFixture, secs: f64) -> String {
    let root = fx.root.path().display();
    let answer = skillwatch_tests::run::atif_answer("GOOD");
    command_agent(
        fx,
        &format!(
            "mkdir -p {root}/pids; echo $$ > {root}/pids/$$; sleep {secs}\nprintf '%s' '{answer}' > \"$SKILLWATCH_TRAJECTORY\""
        ),
    )
}

#[test]
fn progress_shows_every_trial_both_ways() {
    let mut fx = DaemonFixture::new();
    let skill = fx.add_skill("progress", 3);
    let agent = slow_agent(&fx, 0.0);
    fx.start();
    let args = command_run(&skill, &agent, &["--no-reuse"]);
    let outs = fx.both(&args, &[], &[]);
    let lines: Vec<usize> = outs
        .iter()
        .map(|o| stderr(o).lines().filter(|l| l.contains("case-")).count())
        .collect();
    assert!(lines[0] >= 6, "one line per trial: {}", stderr(&outs[0]));
    assert_eq!(
        lines[0],
        lines[1],
        "the daemon:\n{}\n--no-daemon:\n{}",
        stderr(&outs[0]),
        stderr(&outs[1])
    );
}

#[test]
fn a_stopping_daemon_finishes_the_trials_in_flight_and_starts_no_other() {
    let mut fx = DaemonFixture::new();
    let skill = fx.add_skill("stopped", 8);
    let agent = slow_agent(&fx, 1.0);
    let pids = fx.root.path().join("pids");
    fx.start(); // a grace of 2 s: trials in flight finish within it
    let mut client = fx
        .cli_command(&command_run(&skill, &agent, &["-j", "2"]))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_pids(&pids, 3, "the run to get going");
    let stop = fx.cli(&["daemon", "stop"]);
    assert_eq!(code(&stop), 0, "{}", stderr(&stop));
    let exit = fx.child.take().unwrap().wait().unwrap();
    assert!(exit.success(), "{exit:?}");
    let _ = client.kill();
    let _ = client.wait();
    let started = pids_in(&pids).len();
    let store = Store::open_existing(&fx.db).unwrap();
    let recorded: usize = (1..=3)
        .map(|r| store.run_trials(RunId(r)).map_or(0, |t| t.len()))
        .sum();
    assert!(
        started < 16,
        "the run did not stop ({started} trials started)"
    );
    assert_eq!(
        recorded, started,
        "every trial started was finished and recorded; none started during the grace to be killed"
    );
}

/// The agent answers GOOD; the judge (no tools offered) scores 5 in valid JSON.
fn good_agent_scoring_judge() -> Script {
    Arc::new(|req: &ModelRequest| {
        if req.tool_names.is_empty() {
            return ModelReply::text(
                "{\"rubric_scores\": [{\"score\": 5}], \"overall_score\": 5, \"overall_reasoning\": \"r\"}",
                usage(),
            );
        }
        if req.mentions("(0)") || req.mentions("(1)") {
            return ModelReply::text("GOOD: aligned", usage());
        }
        ModelReply::text("BAD", usage())
    })
}

#[test]
fn compare_leaves_out_what_only_the_judged_run_has_both_ways() {
    const OLD: &str = "claude-sonnet-4-5-20250929";
    const NEW: &str = "claude-sonnet-4-6-preview";
    let server = mock::openai_chat::server(good_agent_scoring_judge());
    let mut fx = DaemonFixture::new();
    let skill = fx.add_skill("compared", 3);
    fx.start_with_env(&[("OPENAI_API_KEY", "sk-test")]);
    let run = |model: &str, judged: bool| {
        let mut args = openai_run(&skill, &server, model);
        if judged {
            args.extend(independent_judge(&server));
        }
        let out = fx
            .cli_command(&args)
            .env("OPENAI_API_KEY", "sk-test")
            .arg("--no-daemon")
            .output()
            .unwrap();
        assert_ne!(code(&out), 2, "{}", stderr(&out));
    };
    run(OLD, true);
    run(NEW, false);
    let args = ["compare", "compared", "--model", OLD, "--model", NEW];
    let outs = fx.both(&args, &[], &[]);
    assert_eq!(code(&outs[0]), code(&outs[1]), "{}", stderr(&outs[0]));
    assert_eq!(stdout(&outs[0]), stdout(&outs[1]));
    let text = stdout(&outs[0]);
    assert!(
        text.contains("left out, metrics only one run has"),
        "{text}"
    );
    assert!(
        text.contains(OLD) && text.contains(NEW),
        "model names whole: {text}"
    );
    let mut json_args = args.to_vec();
    json_args.push("--json");
    let outs = fx.both(&json_args, &[], &[]);
    assert_eq!(json_report(&outs[0]), json_report(&outs[1]));
}

#[test]
fn a_truncated_claude_code_stream_with_exit_0_is_a_harness_error_both_ways() {
    let mut fx = DaemonFixture::new();
    let skill = fx.add_skill("truncated", 1);
    let program = command_agent(
        &fx,
        "if [ \"$1\" = --version ]; then echo '2.1.0 (Claude Code)'; exit 0; fi\n\
         echo 'not json at all'\n\
         printf '%s' '{\"type\":\"result\",\"subtype\":\"succ'\nexit 0",
    );
    fx.start();
    let args = [
        "run",
        skill.to_str().unwrap(),
        "--harness",
        "claude-code",
        "--program",
        &program,
        "--model",
        "m",
        "--no-reuse",
        "--json",
    ];
    let outs = fx.both(&args, &[], &[]);
    let store = Store::open_existing(&fx.db).unwrap();
    for (out, via) in outs.iter().zip(THROUGH) {
        let r = json_report(out);
        assert_eq!(r["tally"]["errors"], 2, "{via}: {r}");
        assert_eq!(code(out), 2, "{via}");
        let run = RunId(r["run"]["id"].as_i64().unwrap());
        for t in store.run_trials(run).unwrap() {
            let msg = t.error_message.unwrap_or_default();
            assert_eq!(t.status.as_str(), "error", "{via}: {msg}");
            assert!(t.passed.is_none(), "{via}: not a failed task");
            assert!(msg.contains("cut short"), "{via}: {msg}");
        }
    }
}

#[test]
fn a_runtime_folder_open_to_others_is_said_at_once() {
    use std::os::unix::fs::PermissionsExt;
    let fx = DaemonFixture::new();
    let folder = fx.socket().parent().unwrap().to_path_buf();
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o755)).unwrap();
    let skill = fx.add_skill("any", 1);
    let skill = skill.to_str().unwrap();
    skillwatch_tests::skillwatch_bin(); // built before anything is timed
    for args in [
        vec!["daemon", "start"],
        vec!["run", skill, "--harness", "openai", "--model", "m"],
    ] {
        let started = Instant::now();
        let out = fx.cli(&args);
        let took = started.elapsed();
        let err = stderr(&out);
        assert_eq!(code(&out), 2, "{args:?}: {err}");
        assert!(took < Duration::from_secs(5), "{args:?} {took:?}: {err}");
        assert!(
            err.contains(&folder.display().to_string()) && err.contains("755"),
            "{args:?}: {err}"
        );
    }
}

/// The eval of one case per model API fault, in a fresh skill of `fx`.
fn faulty_skill(fx: &DaemonFixture, name: &str) -> std::path::PathBuf {
    use skillwatch_tests::mock::faults::Injected;
    let dir = fx.add_skill(name, 0);
    std::fs::write(dir.join("tests/eval.yaml"), Injected::eval_yaml()).unwrap();
    dir
}

/// `args` both ways against a model server injecting faults: (case, condition, status) of
/// every trial, each way, after checking each message names its fault.
fn faults_both_ways(fx: &DaemonFixture, args: &[String]) -> [Vec<(String, String, String)>; 2] {
    use skillwatch_tests::mock::faults::Injected;
    let outs = fx.both(args, &[("SW_TEST_KEY", "sk-test")], &[]);
    let store = Store::open_existing(&fx.db).unwrap();
    let mut each = outs.iter().zip(THROUGH).map(|(out, via)| {
        let r = json_report(out);
        assert_eq!(code(out), 2, "{via}: nothing measured is a failure: {r}");
        let run = RunId(r["run"]["id"].as_i64().unwrap());
        let mut rows: Vec<_> = store
            .run_trials(run)
            .unwrap()
            .into_iter()
            .map(|t| {
                let msg = t.error_message.unwrap_or_default();
                let fault = Injected::of_case(&t.case).unwrap();
                assert!(fault.named_in(&msg), "{via}: {} {msg}", t.case);
                (t.case, t.condition.to_string(), t.status.to_string())
            })
            .collect();
        rows.sort();
        assert_eq!(rows.len(), 8, "{via}");
        assert!(rows.iter().all(|(_, _, s)| s == "error"), "{via}: {rows:?}");
        rows
    });
    [each.next().unwrap(), each.next().unwrap()]
}

#[test]
fn model_api_faults_are_recorded_alike_both_ways() {
    use skillwatch_tests::mock::faults::injecting;
    use skillwatch_tests::trial::{agent_cli, skip_agent_clis};
    let mut fx = DaemonFixture::new();
    fx.start();
    let harnesses = [
        (
            "openai",
            mock::openai_chat::handler(good_agent_prose_judge()),
            "application/json",
            "/v1",
        ),
        (
            "claude-code",
            mock::anthropic::handler(good_agent_prose_judge()),
            "text/event-stream",
            "",
        ),
        (
            "codex",
            mock::responses::handler(good_agent_prose_judge()),
            "text/event-stream",
            "/v1",
        ),
    ];
    for (harness, handler, content_type, path) in harnesses {
        if harness != "openai" && skip_agent_clis(harness) {
            continue;
        }
        let server = MockServer::start(injecting(handler, content_type));
        let skill = faulty_skill(&fx, &format!("faulty-{harness}"));
        let mut args = openai_run(&skill, &server, "mock-model");
        args[3] = harness.to_owned();
        args[5] = format!("{}{path}", server.url());
        args.extend(
            ["--api-key-env", "SW_TEST_KEY", "--timeout", "10", "-j", "4"].map(str::to_owned),
        );
        if harness != "openai" {
            let program = agent_cli(if harness == "codex" {
                "codex"
            } else {
                "claude"
            });
            args.extend(["--program".to_owned(), program.display().to_string()]);
        }
        let [daemon, in_process] = faults_both_ways(&fx, &args);
        assert_eq!(daemon, in_process, "{harness}");
    }
}
