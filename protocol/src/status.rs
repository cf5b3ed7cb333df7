//! The daemon's own state: what `skillwatch daemon status` prints, the skills it tracks, and
//! checked files.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use skillwatch_core::checks::Diagnostic;

/// What `status` answers: enough to tell which daemon is running, where its files are, and how
/// busy it is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DaemonStatus {
    /// The skillwatch version of the daemon.
    pub version: String,
    /// [`super::PROTOCOL_VERSION`] of the daemon, so a client can refuse a mismatch clearly.
    pub protocol: u32,
    /// Process id.
    pub pid: u32,
    /// The daemon instance (changes at every start).
    pub instance: String,
    /// Started at (epoch ms).
    pub started_ms: i64,
    /// The Unix socket it serves.
    pub socket: PathBuf,
    /// The history database.
    pub db: PathBuf,
    /// The log file.
    pub log: Option<PathBuf>,
    /// Workspace roots being watched.
    pub roots: Vec<PathBuf>,
    /// Other clients connected now (editors, `events` followers), not counting the one asking;
    /// an idle limit counts from the last one's end.
    #[serde(default)]
    pub clients: u32,
    /// The same roots with how they are watched and when they were last used (protocol 5).
    #[serde(default)]
    pub watched: Vec<WatchedRoot>,
    /// Why saves under some root are not seen (no file watcher could be made, or the
    /// system's limit on watches was reached), with how to fix it.
    #[serde(default)]
    pub watch_problem: Option<String>,
    /// A root nobody has used for this long is forgotten (`--forget-roots-after`).
    #[serde(default)]
    pub forget_roots_after_secs: Option<u64>,
    /// Jobs waiting.
    pub queued: u32,
    /// Jobs running.
    pub running: u32,
    /// Today's use of the daily budget.
    pub budget: BudgetStatus,
}

/// A watched root, as `daemon status` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WatchedRoot {
    /// The folder.
    pub path: PathBuf,
    /// When a client last asked for it, a file under it was saved, or an editor showed a
    /// skill under it (epoch ms).
    pub used_ms: i64,
    /// Folders of its tree with a watch (one per folder on Linux; one for the tree elsewhere).
    pub folders: u64,
    /// False when the system's limit on watches stopped the walk of its tree.
    pub complete: bool,
}

/// The daily budget and what today has used of it (days are UTC).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BudgetStatus {
    /// Trials recorded today.
    pub trials_today: u64,
    /// Cost recorded today (USD; trials without a cost count 0).
    pub cost_today_usd: f64,
    /// `max_trials_per_day`, when set.
    pub max_trials: Option<u64>,
    /// `max_cost_usd_per_day`, when set.
    pub max_cost_usd: Option<f64>,
}

impl BudgetStatus {
    /// Why no new job may start today, or `None` while budget remains.
    pub fn exhausted(&self) -> Option<String> {
        if let Some(max) = self.max_trials
            && self.trials_today >= max
        {
            return Some(format!(
                "{} trials run today, max_trials_per_day = {max}",
                self.trials_today
            ));
        }
        if let Some(max) = self.max_cost_usd
            && self.cost_today_usd >= max
        {
            return Some(format!(
                "${:.2} spent today, max_cost_usd_per_day = {max}",
                self.cost_today_usd
            ));
        }
        None
    }
}

/// A skill the daemon watches: a folder with a SKILL.md under a watched root.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrackedSkill {
    /// The SKILL.md `name` (the folder name when it has none).
    pub name: String,
    /// The skill folder.
    pub dir: PathBuf,
    /// The watched root it was found under.
    pub root: PathBuf,
    /// The `skillwatch.toml` governing it, if any.
    pub config: Option<PathBuf>,
    /// Whether it has an eval file (only then can it be run).
    pub has_evals: bool,
    /// Whether a save reruns it.
    pub rerun_on_save: bool,
    /// The (harness, model) pairs its config lists.
    pub models: Vec<(String, String)>,
}

/// One file's findings, as the `check` call returns them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckedFile {
    /// The file.
    pub path: PathBuf,
    /// Its findings (byte spans into the file as it was on disk).
    pub diagnostics: Vec<Diagnostic>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_is_exhausted_at_either_limit() {
        let mut b = BudgetStatus {
            trials_today: 9,
            cost_today_usd: 0.5,
            max_trials: Some(10),
            max_cost_usd: Some(1.0),
        };
        assert_eq!(b.exhausted(), None);
        b.trials_today = 10;
        assert!(b.exhausted().unwrap().contains("max_trials_per_day = 10"));
        b.trials_today = 0;
        b.cost_today_usd = 1.0;
        assert!(b.exhausted().unwrap().contains("max_cost_usd_per_day"));
        assert_eq!(BudgetStatus::default().exhausted(), None);
    }
}
