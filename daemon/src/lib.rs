//! skillwatch-daemon: the long-running side of skillwatch. It owns the history store, runs
//! paired evaluations on agent harnesses, and serves clients over a Unix socket.

pub mod client;
pub mod config;
pub mod events;
pub mod harbor;
pub mod harness;
pub mod loads;
pub mod optimize;
pub mod probe;
pub mod runner;
pub mod runs;
pub mod scheduler;
pub mod server;
pub mod store;
pub mod trigger;
pub mod watch;
