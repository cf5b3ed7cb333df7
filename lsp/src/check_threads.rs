//! The threads that run checks: a fixed set, one per core, living as long as the server.
//!
//! Why not tokio's blocking threads: the regex crate keeps, for every pattern, a search cache
//! per thread that ran it (a pool keyed by thread id; the patterns are statics, so their pools
//! live as long as the process). Blocking threads come and go, each new one with a new id, so
//! checks spread over them left several caches of every pattern behind: after a burst of
//! opens, the largest part of what an idle server still held once its documents were closed.
//! On a fixed set of threads each pattern has at most one cache per thread. A fixed number of
//! threads also bounds how many checks run at once: more than there are cores finish no
//! sooner, and each holds its skill folder's files while it runs.

use std::panic::AssertUnwindSafe;
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock};

type Job = Box<dyn FnOnce() + Send>;

/// A queue of jobs and the threads that take them in turn.
struct CheckThreads {
    jobs: Mutex<mpsc::Sender<Job>>,
}

impl CheckThreads {
    fn start(count: usize) -> std::io::Result<Self> {
        let (jobs, queue) = mpsc::channel::<Job>();
        let queue = Arc::new(Mutex::new(queue));
        for n in 0..count {
            let queue = Arc::clone(&queue);
            std::thread::Builder::new()
                .name(format!("check-{n}"))
                .spawn(move || take_jobs(&queue))?;
        }
        Ok(Self {
            jobs: Mutex::new(jobs),
        })
    }
}

/// A check thread's life: run jobs until the queue is gone. A job that panics is its own
/// caller's failure (see [`run`]); the thread goes on with the next.
fn take_jobs(queue: &Mutex<mpsc::Receiver<Job>>) {
    loop {
        let next = queue.lock().unwrap_or_else(|e| e.into_inner()).recv();
        let Ok(job) = next else { return };
        job();
    }
}

fn threads() -> &'static std::io::Result<CheckThreads> {
    static THREADS: OnceLock<std::io::Result<CheckThreads>> = OnceLock::new();
    THREADS.get_or_init(|| {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        CheckThreads::start(cores)
    })
}

/// Run `work` on a check thread and wait for its result. `Err` carries the panic's message
/// when `work` panicked, or why no check thread could run it.
pub async fn run<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, String> {
    let threads = threads()
        .as_ref()
        .map_err(|e| format!("starting the check threads: {e}"))?;
    let (done, result) = tokio::sync::oneshot::channel();
    let job: Job = Box::new(move || {
        let outcome = std::panic::catch_unwind(AssertUnwindSafe(work)).map_err(panic_message);
        let _ = done.send(outcome); // the caller may have stopped waiting
    });
    threads
        .jobs
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .send(job)
        .map_err(|_| "the check threads have stopped".to_string())?;
    result
        .await
        .map_err(|_| "the check thread dropped the job".to_string())?
}

fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a check panicked".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn jobs_run_on_the_same_few_threads_however_many_there_are() {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        let waiting: Vec<_> = (0..200)
            .map(|_| tokio::spawn(run(|| std::thread::current().id())))
            .collect();
        let mut seen = HashSet::new();
        for job in waiting {
            seen.insert(job.await.unwrap().unwrap());
        }
        assert!(
            !seen.is_empty() && seen.len() <= cores,
            "{} threads for {cores} cores",
            seen.len()
        );
        assert!(!seen.contains(&std::thread::current().id()));
    }

    #[tokio::test]
    async fn a_panicking_job_is_its_callers_error_and_the_threads_go_on() {
        let failed = run(|| -> u32 { panic!("rule exploded") }).await;
        assert_eq!(failed, Err("rule exploded".to_string()));
        let formatted = run(|| -> u32 { panic!("rule {} exploded", 7) }).await;
        assert_eq!(formatted, Err("rule 7 exploded".to_string()));
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        for _ in 0..cores * 2 {
            assert_eq!(run(|| 41 + 1).await, Ok(42));
        }
    }
}
