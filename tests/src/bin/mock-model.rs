//! A scripted model server on 127.0.0.1, for trying `skillwatch run` without a model account:
//! the README's quick start runs the skill `skillwatch init` writes (meeting-notes) against it.
//!
//! ```sh
//! cargo run -p skillwatch-tests --bin mock-model -- openai      # or: anthropic
//! ```
//!
//! It prints its base URL and serves until stopped. The model is a script, not a model: it
//! loads a skill the harness lists when the prompt is about meeting notes, answers with the
//! table the skill asks for once the skill's text is in its context, and with a plain sentence
//! otherwise (a haiku when asked for one). So the with-skill condition passes the example's
//! assertions and the baseline misses one: the lift it shows is the script's, by design.
//! `openai` speaks chat completions (the `openai` harness), `anthropic` the Messages API with
//! streaming (the real Claude Code CLI).

use std::sync::Arc;

use serde_json::json;
use skillwatch_tests::mock::{self, MockServer, MockUsage, ModelReply, ModelRequest, Script};

/// Text only the meeting-notes SKILL.md holds: it is in the context once the skill is loaded.
const SKILL_TEXT: &str = "End with the open questions: tasks that have no owner yet";

fn usage(input: u64, output: u64) -> MockUsage {
    MockUsage {
        input,
        cached: 0,
        output,
    }
}

fn script(protocol: &str) -> Script {
    let load = match protocol {
        "anthropic" => {
            |name: &str| ModelReply::tool("Skill", json!({"skill": name}), usage(900, 12))
        }
        _ => |name: &str| ModelReply::tool("load_skill", json!({"name": name}), usage(900, 12)),
    };
    Arc::new(move |req: &ModelRequest| {
        if req.mentions(SKILL_TEXT) {
            return ModelReply::text(
                "| task | owner | due |\n|---|---|---|\n\
                 | Send the budget to finance | Ana | Friday |\n\
                 | Update the roadmap slides | Chen | before Monday's review |\n\n\
                 Open questions: who books the room for the offsite?",
                usage(1400, 60),
            );
        }
        // the prompt, not the skill listing (whose description talks of action items too)
        let about_notes = req.mentions("List the action items");
        if req.turn == 0 && about_notes && req.mentions("- meeting-notes") {
            return load("meeting-notes");
        }
        if req.mentions("haiku") {
            return ModelReply::text(
                "Red leaves let go\nthe wind keeps none of them\nthe path remembers",
                usage(300, 20),
            );
        }
        ModelReply::text(
            "Ana will send the budget by Friday, and someone should book a room.",
            usage(600, 20),
        )
    })
}

fn main() {
    let protocol = std::env::args().nth(1).unwrap_or_else(|| "openai".into());
    let server: MockServer = match protocol.as_str() {
        "openai" => mock::openai_chat::server(script("openai")),
        "anthropic" => mock::anthropic::server(script("anthropic")),
        other => {
            eprintln!("mock-model: unknown protocol `{other}`: expected openai or anthropic");
            std::process::exit(2);
        }
    };
    let base = match protocol.as_str() {
        "openai" => format!("{}/v1", server.url()),
        _ => server.url(),
    };
    println!("mock {protocol} model listening: --base-url {base}");
    loop {
        std::thread::park();
    }
}
