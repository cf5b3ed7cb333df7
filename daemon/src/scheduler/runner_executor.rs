//! The daemon's executor: jobs run by the paired runner (`crate::runner`).
//!
//! TEMPORARY until the runner (issue 6, branch wip/runner) is merged: every job fails with a
//! clear message. Replaced by the real runner call on merge.

use std::sync::Arc;

use skillwatch_core::protocol::JobInfo;

use super::{Executor, JobContext, Outcome, SharedStore};
use crate::harness::BoxFuture;

/// Runs jobs with the paired runner on the shared history.
#[derive(Debug, Clone)]
pub struct RunnerExecutor {
    _store: SharedStore,
}

impl RunnerExecutor {
    /// An executor recording into `store`.
    pub fn new(store: SharedStore) -> Arc<RunnerExecutor> {
        Arc::new(RunnerExecutor { _store: store })
    }
}

impl Executor for RunnerExecutor {
    fn execute(&self, _job: JobInfo, _ctx: JobContext) -> BoxFuture<'static, Outcome> {
        Box::pin(async {
            Outcome::Failed {
                run: None,
                error: "the paired runner is not part of this build yet".into(),
            }
        })
    }
}
