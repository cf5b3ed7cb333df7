//! One module per subcommand.

pub mod check;
pub mod compare;
pub mod history;
pub mod history_db;
pub mod import;
pub mod lsp;
pub mod rejudge;
pub mod run;
pub mod schema;
