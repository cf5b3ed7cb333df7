//! The daily budget: no job starts once today's trials (or their cost) reach the limits of
//! the `skillwatch.toml` governing the job's skill. Days are UTC; usage is the run engine's own
//! accounting (the `spending` ledger: every trial of every kind recorded that day, by the
//! daemon or in-process with `--no-daemon`, its tokens at the model's price, and every judge
//! call at the judge's price), the same sums a run's budget counts. Judge calls count in the
//! cost, not in the trials.

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
    let spent = store.spent_since(day_start(store::time::now_ms()))?;
    Ok(BudgetStatus {
        trials_today: spent.trials,
        cost_today_usd: spent.cost_usd,
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
