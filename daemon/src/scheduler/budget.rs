//! The daily budget: no job starts once today's trials (or their cost) reach the limits of
//! the `skillwatch.toml` governing the job's skill. Days are UTC; usage counts every trial
//! recorded that day, by the daemon or by `skillwatch run --no-daemon`.

use skillwatch_protocol::BudgetStatus;

use crate::config::BudgetConfig;
use crate::store::{self, Store};

const DAY_MS: i64 = 86_400_000;

/// Start of the UTC day containing `ms`.
pub fn day_start(ms: i64) -> i64 {
    ms.div_euclid(DAY_MS) * DAY_MS
}

/// Today's usage against `limits`.
pub fn status(store: &Store, limits: &BudgetConfig) -> store::Result<BudgetStatus> {
    let (trials, cost) = store.trials_since(day_start(store::time::now_ms()))?;
    Ok(BudgetStatus {
        trials_today: trials,
        cost_today_usd: cost,
        max_trials: limits.max_trials_per_day,
        max_cost_usd: limits.max_cost_usd_per_day,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_start_at_utc_midnight() {
        assert_eq!(day_start(0), 0);
        assert_eq!(day_start(DAY_MS + 5), DAY_MS);
        assert_eq!(day_start(-1), -DAY_MS);
    }
}
