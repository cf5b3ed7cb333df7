//! The daemon's structured log: one JSON object per line (tracing's JSON format), appended to
//! a file, since a background process has no terminal. `SKILLWATCH_LOG` sets the filter
//! (default `info`).

use std::collections::HashMap;
use std::fs::OpenOptions;
use std::hash::Hash;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Send this process's tracing events to `path` (created 0600, appended). Returns an error
/// when the file cannot be opened; a subscriber already installed is left in place.
pub fn init(path: &Path) -> std::io::Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)?;
    let filter = tracing_subscriber::EnvFilter::try_from_env("SKILLWATCH_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .json()
        .with_env_filter(filter)
        .with_writer(Mutex::new(file))
        .with_ansi(false)
        .try_init();
    Ok(())
}

/// At most one log line per key and period: what something outside the daemon can make it
/// log (a client of another user retrying in a loop) must not fill the log.
#[derive(Debug)]
pub struct Throttle<K> {
    period: Duration,
    seen: Mutex<HashMap<K, (Instant, u64)>>,
}

impl<K: Eq + Hash> Throttle<K> {
    /// One line per key every `period`.
    pub fn new(period: Duration) -> Throttle<K> {
        Throttle {
            period,
            seen: Mutex::new(HashMap::new()),
        }
    }

    /// Whether to log this occurrence of `key`: `Some(n)` with the `n` occurrences left
    /// unlogged since the last line, or `None` to stay quiet.
    pub fn admit(&self, key: K) -> Option<u64> {
        self.admit_at(key, Instant::now())
    }

    fn admit_at(&self, key: K, now: Instant) -> Option<u64> {
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        if seen.len() > 1024 {
            let period = self.period;
            seen.retain(|_, (at, _)| now.duration_since(*at) < period);
        }
        match seen.get_mut(&key) {
            Some((at, quiet)) if now.duration_since(*at) < self.period => {
                *quiet += 1;
                None
            }
            Some((at, quiet)) => {
                *at = now;
                Some(std::mem::take(quiet))
            }
            None => {
                seen.insert(key, (now, 0));
                Some(0)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_logged_once_per_period_with_the_count_it_kept_quiet() {
        let t = Throttle::new(Duration::from_secs(60));
        let start = Instant::now();
        assert_eq!(t.admit_at(7, start), Some(0));
        for i in 1..=288 {
            assert_eq!(t.admit_at(7, start + Duration::from_millis(50 * i)), None);
        }
        assert_eq!(t.admit_at(8, start), Some(0), "another key is its own");
        assert_eq!(t.admit_at(7, start + Duration::from_secs(61)), Some(288));
        assert_eq!(t.admit_at(7, start + Duration::from_secs(62)), None);
    }
}
