//! Faults of the model API, injected per request: a request whose text names a [`Injected`]
//! marker (e.g. an eval case's prompt saying `FAULT-500`) gets that failure instead of the
//! script's answer, so one run can meet every failure at once, one per case.

use std::sync::Arc;

use super::{Fault, Handler, HttpReply, RecordedRequest};

/// A failure of the model API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Injected {
    /// HTTP 500 with a JSON error.
    Status500,
    /// The connection closed without an answer.
    Close,
    /// No answer, ever.
    Hang,
    /// 200 with a body that is not the protocol's.
    Garbage,
}

impl Injected {
    /// Every fault.
    pub const ALL: [Injected; 4] = [
        Injected::Status500,
        Injected::Close,
        Injected::Hang,
        Injected::Garbage,
    ];

    /// The marker a prompt carries to get this fault.
    pub fn marker(self) -> &'static str {
        match self {
            Injected::Status500 => "FAULT-500",
            Injected::Close => "FAULT-CLOSE",
            Injected::Hang => "FAULT-HANG",
            Injected::Garbage => "FAULT-GARBAGE",
        }
    }

    /// Words of which a trial's error message must hold one to name this fault as its cause
    /// (each harness words it its own way: Claude Code's "the connection failed or was closed",
    /// Codex's "stream disconnected", reqwest's "connection closed before message completed").
    pub fn cause_words(self) -> &'static [&'static str] {
        match self {
            Injected::Status500 => &["500"],
            Injected::Close => &["was closed", "connection closed", "disconnected"],
            Injected::Hang => &["had not answered"],
            Injected::Garbage => &[
                "expected a JSON response",
                "invalid",
                "malformed",
                "decode",
                "parse",
            ],
        }
    }

    /// Whether `message` names this fault.
    pub fn named_in(self, message: &str) -> bool {
        let message = message.to_lowercase();
        self.cause_words()
            .iter()
            .any(|w| message.contains(&w.to_lowercase()))
    }

    /// The fault a case named after its marker meets.
    pub fn of_case(case: &str) -> Option<Injected> {
        Injected::ALL
            .into_iter()
            .find(|f| f.marker().eq_ignore_ascii_case(case))
    }

    /// An eval.yaml with one scenario per fault, named after its marker (lowercase).
    pub fn eval_yaml() -> String {
        let mut y = String::from("scenarios:\n");
        for f in Injected::ALL {
            y.push_str(&format!(
                "  - name: {}\n    prompt: Say GOOD. {}\n    assertions:\n      - type: output_contains\n        value: GOOD\n",
                f.marker().to_ascii_lowercase(),
                f.marker()
            ));
        }
        y
    }

    fn reply(self, content_type: &'static str) -> HttpReply {
        match self {
            Injected::Status500 => HttpReply::error(500, "internal server error (injected)"),
            Injected::Close => HttpReply::fault(Fault::Close),
            Injected::Hang => HttpReply::fault(Fault::Hang),
            Injected::Garbage => HttpReply {
                status: 200,
                content_type,
                body: b"data: }{\x01 not a model answer\n\n\xff\xfe garbage".to_vec(),
                fault: None,
            },
        }
    }
}

/// `inner`, except for requests that name a fault's marker. `content_type` is what the
/// protocol answers with (garbage comes in it).
pub fn injecting(inner: Handler, content_type: &'static str) -> Handler {
    Arc::new(move |req: &RecordedRequest| {
        let text = req.body.to_string();
        match Injected::ALL.iter().find(|f| text.contains(f.marker())) {
            Some(f) => f.reply(content_type),
            None => inner(req),
        }
    })
}
