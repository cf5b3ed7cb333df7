//! One module per subcommand.

pub mod cancel;
pub mod check;
pub mod compare;
pub mod daemon;
pub mod events;
pub mod export;
pub mod history;
pub mod history_db;
pub mod import;
pub mod import_harbor;
pub mod init;
pub mod link;
pub mod lsp;
pub mod plan;
pub mod rejudge;
pub mod rerun;
pub mod run;
pub mod run_daemon;
pub mod schema;
pub mod status;
pub mod vet;
