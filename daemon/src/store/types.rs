//! The small closed vocabularies of the history: conditions, statuses, triggers, judge verdicts,
//! and the typed row ids. Each maps to exactly the text the SQL `CHECK` constraints allow, so a
//! value that the database would refuse cannot be built in Rust.

use std::fmt;

pub use skillwatch_protocol::RunId;

use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSql, ToSqlOutput, ValueRef};
use serde::{Deserialize, Serialize};

/// A database text that is not one of an enum's spellings (a hand-edited or damaged file).
#[derive(Debug, thiserror::Error)]
#[error("unexpected value `{found}` in the history database, expected {expected}")]
pub struct UnexpectedValue {
    /// The text found.
    pub found: String,
    /// The accepted spellings.
    pub expected: String,
}

/// Declares a string-backed enum with its SQL/JSON spelling, `as_str`, `parse` and `Display`.
macro_rules! text_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(rename_all = "snake_case")]
        pub enum $name {
            $($(#[$vmeta])* #[serde(rename = $text)] $variant),+
        }

        impl $name {
            /// Every value, in declaration order (for help texts and error messages).
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The spelling used in the database and in JSON.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }

            /// The value spelled `text`, if it is one.
            pub fn parse(text: &str) -> Option<$name> {
                match text { $($text => Some($name::$variant),)+ _ => None }
            }

            /// `a | b | c`, for "expected one of" messages.
            pub fn expected() -> String {
                $name::ALL.iter().map(|v| v.as_str()).collect::<Vec<_>>().join(" | ")
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.pad(self.as_str())
            }
        }

        impl ToSql for $name {
            fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
                Ok(ToSqlOutput::from(self.as_str()))
            }
        }

        impl FromSql for $name {
            fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
                let text = value.as_str()?;
                $name::parse(text).ok_or_else(|| {
                    FromSqlError::Other(Box::new(UnexpectedValue {
                        found: text.to_string(),
                        expected: $name::expected(),
                    }))
                })
            }
        }
    };
}

text_enum! {
    /// Which side of a pair a trial ran on: the target skill withheld, or staged.
    Condition {
        /// The target skill is withheld (support and decoy skills stay).
        Baseline => "baseline",
        /// The target skill is available to the agent.
        Skill => "skill",
        /// Every skill of the plugin the target belongs to is available (a Vally
        /// experiment's plugin arm); only runs whose suite has one hold such trials.
        Plugin => "plugin",
    }
}

text_enum! {
    /// Whether the agent run produced an observation at all. Kept apart from the task outcome
    /// ([`TrialRecord::passed`](super::TrialRecord::passed)) so infrastructure failures are never
    /// scored as skill failures.
    TrialStatus {
        /// The agent finished; its output and metrics can be graded.
        Completed => "completed",
        /// The harness or agent failed (crash, API error, bad output format).
        Error => "error",
        /// The trial hit its time limit and was killed.
        Timeout => "timeout",
    }
}

text_enum! {
    /// Lifecycle of a run. Only `completed` runs enter lift history and comparisons.
    RunStatus {
        /// Trials are still being recorded.
        Running => "running",
        /// Every planned trial was recorded (some may have errored or timed out).
        Completed => "completed",
        /// The run stopped on an error before its plan was done.
        Failed => "failed",
        /// Someone cancelled it.
        Cancelled => "cancelled",
        /// The process recording it died (a crash or kill); the scheduler may re-queue it.
        Interrupted => "interrupted",
    }
}

text_enum! {
    /// Why a run happened, so history can tell a deliberate run from an automatic one.
    Trigger {
        /// `skillwatch run` or an editor command.
        Manual => "manual",
        /// A saved SKILL.md or eval file.
        Save => "save",
        /// A new model appeared in the configuration.
        ModelChange => "model_change",
        /// A scheduled re-evaluation.
        Schedule => "schedule",
        /// Loaded from a trial file by `skillwatch import`.
        Import => "import",
    }
}

text_enum! {
    /// The two judging modes: one trial scored alone, or two trials compared.
    JudgmentKind {
        /// One trial scored on its own (e.g. 1-5 per rubric item).
        Independent => "independent",
        /// Baseline and skill outputs of one (case, attempt) compared.
        Pairwise => "pairwise",
    }
}

text_enum! {
    /// The side a pairwise judge preferred.
    Winner {
        /// The baseline output was better.
        Baseline => "baseline",
        /// The with-skill output was better.
        Skill => "skill",
        /// Neither (including position-swap inconsistent verdicts).
        Tie => "tie",
    }
}

text_enum! {
    /// Which table a run lives in: a paired run (`runs`, also a Harbor run), a probe run
    /// (`probe_runs`), a trigger run (`trigger_runs`).
    RunKind {
        /// A paired run.
        Paired => "paired",
        /// A security probe run.
        Probe => "probe",
        /// A trigger test run.
        Trigger => "trigger",
    }
}

text_enum! {
    /// Why a run stopped short.
    StopReason {
        /// Its budget: the next trial would have crossed a limit.
        Budget => "budget",
    }
}

impl From<skillwatch_protocol::JobTrigger> for Trigger {
    fn from(t: skillwatch_protocol::JobTrigger) -> Trigger {
        match t {
            skillwatch_protocol::JobTrigger::Manual => Trigger::Manual,
            skillwatch_protocol::JobTrigger::Save => Trigger::Save,
            skillwatch_protocol::JobTrigger::ModelChange => Trigger::ModelChange,
        }
    }
}

/// Declares an `i64` row id newtype, so a trial id cannot be passed where a run id is expected.
macro_rules! row_id {
    ($(#[$meta:meta])* $name:ident) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub i64);

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }

        impl ToSql for $name {
            fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
                self.0.to_sql()
            }
        }

        impl FromSql for $name {
            fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
                i64::column_result(value).map($name)
            }
        }
    };
}

row_id! {
    /// A trial's row id.
    TrialId
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_round_trip_through_text_and_json() {
        for c in Condition::ALL {
            assert_eq!(Condition::parse(c.as_str()), Some(*c));
            let json = serde_json::to_string(c).unwrap();
            assert_eq!(json, format!("\"{}\"", c.as_str()));
            assert_eq!(serde_json::from_str::<Condition>(&json).unwrap(), *c);
        }
        assert_eq!(Trigger::parse("model_change"), Some(Trigger::ModelChange));
        assert_eq!(
            serde_json::to_string(&Trigger::ModelChange).unwrap(),
            "\"model_change\""
        );
        assert_eq!(TrialStatus::parse("passed"), None);
        assert_eq!(
            RunStatus::expected(),
            "running | completed | failed | cancelled | interrupted"
        );
    }
}
