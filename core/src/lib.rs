//! skillwatch-core: the skill model and everything that can be computed without a process,
//! a socket or a model: parsing SKILL.md and eval files with source spans, the rule catalog,
//! scoring and statistics.
//!
//! Invariant: nothing in this crate performs I/O beyond reading files it is pointed at, so the
//! LSP and the CLI can call it on every keystroke and the daemon can call it from any thread.

pub mod checks;
pub mod config;
pub mod evalspec;
pub mod fields;
pub mod grading;
pub mod harbor;
pub mod index;
pub mod loaders;
mod memo;
pub mod optimize;
pub mod plural;
pub mod probe;
pub mod scoring;
pub mod skill;
mod spelling;
pub mod text;
pub mod trajectory;
pub mod vet;
pub mod yaml;
