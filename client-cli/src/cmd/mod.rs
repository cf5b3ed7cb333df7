//! One module per subcommand.

pub mod cancel;
pub mod check;
pub mod compare;
pub mod compare_base;
pub mod daemon;
pub mod events;
pub mod history;
pub mod history_db;
pub mod import;
pub mod index;
pub mod init;
pub mod link;
pub mod lsp;
pub mod plan;
pub mod probe;
pub mod rejudge;
pub mod report;
pub mod rerun;
pub mod run;
pub mod run_daemon;
pub mod schema;
pub mod show;
pub mod status;
pub mod trigger;
pub mod vet;
