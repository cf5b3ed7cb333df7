//! What a paired run is asked to do: the request types are the protocol's
//! (`skillwatch_protocol`, typed on the wire), named here as the runner has always named them.

pub use skillwatch_protocol::{
    DEFAULT_TIMEOUT_SECS, HarnessKind, HarnessSettings, JudgeEndpoint, JudgeMode, JudgeSettings,
    PairedRequest as RunRequest, trial_timeout,
};
