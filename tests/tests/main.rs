//! The end-to-end tests, one module per file, linked into one test binary.
//!
//! Each file was once its own binary; every one of them linked the whole workspace, about
//! 45 MB each, and together they were most of CI's disk and link time. A file is still the
//! unit to run: `cargo test -p skillwatch-tests --test e2e check_cli::`.

mod check_cli;
mod check_corpus;
mod check_evasion;
mod check_malformed;
mod check_sarif;
mod check_skills_ref;
mod ci_action;
mod cli_schema;
mod compare_all;
mod daemon_lifecycle;
mod daemon_model_change;
mod daemon_parity;
mod daemon_protocol;
mod daemon_queue;
mod daemon_roots;
mod daemon_security;
mod daemon_watch;
mod dialects;
mod engine_jobs;
mod evalspec_corpus;
mod evalspec_readme;
mod evalspec_schema_reference;
mod examples;
mod harbor_cli;
mod harbor_docker;
mod harness_agent_clis;
mod harness_claude_code;
mod harness_codex;
mod harness_command;
mod harness_openai;
mod index_build;
mod index_check;
mod index_schema_reference;
mod init_cli;
mod listing_budget;
mod loader_profiles;
mod lsp_features;
mod lsp_harness_findings;
mod lsp_lenses;
mod lsp_nvim;
mod lsp_robustness;
mod lsp_run;
mod lsp_sync;
mod probe_agents;
mod probe_daemon;
mod probe_kill;
mod probe_run;
mod readme_quick_start;
mod report_html;
mod run_agent_clis;
mod run_budgets;
mod run_cli;
mod run_errors;
mod run_faults;
mod run_isolation;
mod run_openai;
mod run_plugin;
mod run_reuse;
mod run_timeout;
mod run_verdicts;
mod scoring_reference;
mod store_cli;
mod store_crash;
mod trigger_ab;
mod trigger_agent_clis;
mod trigger_daemon;
mod trigger_history;
mod trigger_optimize;
mod vet;
mod vet_blind;
mod vet_card;
mod vet_classes;
mod vscode_web;

/// With `autotests = false` a new file in this folder is compiled only once it is named
/// above; without this test it would never run, silently.
#[test]
fn every_file_of_the_folder_is_a_module() {
    let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let main = std::fs::read_to_string(folder.join("main.rs")).unwrap();
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&folder).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let Some(module) = name.strip_suffix(".rs") else {
            continue;
        };
        if module != "main" && !main.contains(&format!("\nmod {module};\n")) {
            missing.push(name);
        }
    }
    assert!(
        missing.is_empty(),
        "add `mod` lines to tests/tests/main.rs for {missing:?}"
    );
}
