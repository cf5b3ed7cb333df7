//! skillwatch-daemon: the long-running side of skillwatch. It owns the history store, runs
//! paired evaluations on agent harnesses, and serves clients over a Unix socket.

pub mod harness;
pub mod runner;
pub mod store;
