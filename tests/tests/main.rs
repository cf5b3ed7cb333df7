//! The end-to-end tests, one module per file, linked into one test binary.
//!
//! Each file was once its own binary; every one of them linked the whole workspace, about
//! 45 MB each, and together they were most of CI's disk and link time. A file is still the
//! unit to run: `cargo test -p skillwatch-tests --test e2e check_cli::`.

mod check_cli;
mod check_corpus;
mod check_malformed;
mod check_sarif;
mod check_skills_ref;
mod cli_schema;
mod daemon_model_change;
mod daemon_queue;
mod daemon_security;
mod daemon_watch;
mod evalspec_corpus;
mod evalspec_readme;
mod evalspec_schema_reference;
mod harness_claude_code;
mod harness_codex;
mod harness_command;
mod harness_openai;
mod lsp_features;
mod lsp_lenses;
mod lsp_nvim;
mod lsp_robustness;
mod run_agent_clis;
mod run_cli;
mod run_errors;
mod run_isolation;
mod run_openai;
mod run_reuse;
mod run_timeout;
mod scoring_reference;
mod store_cli;
mod store_crash;
