//! Quiet time after a save: a changed path is handed on once nothing has touched it for its
//! root's `[daemon] debounce_ms`, so an editor's write-rename-chmod sequence (or a burst of
//! saves) is one change.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use tokio::time::Instant;

/// Paths waiting out their quiet time.
#[derive(Debug, Default)]
pub(crate) struct Pending {
    due: BTreeMap<PathBuf, Instant>,
}

impl Pending {
    /// `path` changed at `now`: it is due `quiet` later (a later change pushes it back).
    pub(crate) fn push(&mut self, path: PathBuf, quiet: Duration, now: Instant) {
        self.due.insert(path, now + quiet);
    }

    /// When the next path is due.
    pub(crate) fn next_due(&self) -> Option<Instant> {
        self.due.values().min().copied()
    }

    /// The paths due at `now`, taken out.
    pub(crate) fn take_due(&mut self, now: Instant) -> Vec<PathBuf> {
        let due: Vec<PathBuf> = self
            .due
            .iter()
            .filter(|(_, at)| **at <= now)
            .map(|(p, _)| p.clone())
            .collect();
        for path in &due {
            self.due.remove(path);
        }
        due
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_due_after_its_quiet_time_and_a_new_change_pushes_it_back() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut pending = Pending::default();
        pending.push("a".into(), ms(300), t0);
        pending.push("b".into(), ms(100), t0);
        assert_eq!(pending.next_due(), Some(t0 + ms(100)));
        pending.push("a".into(), ms(300), t0 + ms(200));
        assert_eq!(pending.take_due(t0 + ms(300)), vec![PathBuf::from("b")]);
        assert!(pending.take_due(t0 + ms(400)).is_empty());
        assert_eq!(pending.take_due(t0 + ms(500)), vec![PathBuf::from("a")]);
        assert_eq!(pending.next_due(), None);
    }
}
