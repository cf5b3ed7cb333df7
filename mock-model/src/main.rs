//! A scripted model server on 127.0.0.1, for trying `skillwatch run` without a model account:
//! the README's quick start runs the skill `skillwatch init` writes (meeting-notes) against it.
//!
//! ```sh
//! cargo run --release -p skillwatch-mock-model -- openai      # or: anthropic
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
use skillwatch_mock_model::{
    self as mock, MockServer, MockUsage, ModelReply, ModelRequest, Script,
};

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

/// The port it listens on unless `--port` says otherwise: fixed, so the README's `run` command
/// with `--base-url http://127.0.0.1:4891` works as written.
const DEFAULT_PORT: u16 = 4891;

const USAGE: &str =
    "usage: mock-model openai|anthropic [--port N]   (default port 4891; 0: any free port)";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (protocol, port) = match parse(&args) {
        Ok(parsed) => parsed,
        Err(why) => {
            eprintln!("mock-model: {why}\n{USAGE}");
            std::process::exit(2);
        }
    };
    let handler = match protocol.as_str() {
        "openai" => mock::openai_chat::handler(script("openai")),
        _ => mock::anthropic::handler(script("anthropic")),
    };
    let server = match MockServer::start_on(handler, port) {
        Ok(server) => server,
        Err(e) => {
            eprintln!(
                "mock-model: cannot listen on 127.0.0.1:{port}: {e}; another mock-model may be \
                 running there, or pass --port with another port (0: any free one)"
            );
            std::process::exit(1);
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

/// (protocol, port) from the arguments.
fn parse(args: &[String]) -> Result<(String, u16), String> {
    let mut protocol = None;
    let mut port = DEFAULT_PORT;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--port" => {
                let value = args.next().ok_or("--port needs a number")?;
                port = value
                    .parse()
                    .map_err(|_| format!("--port `{value}` is not a port number"))?;
            }
            "openai" | "anthropic" if protocol.is_none() => protocol = Some(arg.clone()),
            other => return Err(format!("unexpected argument `{other}`")),
        }
    }
    Ok((protocol.unwrap_or_else(|| "openai".into()), port))
}
