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
