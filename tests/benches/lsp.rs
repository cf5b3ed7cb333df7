//! LSP benchmark against the real `skillwatch lsp` over stdio (release build):
//!
//! 1. latency from `didChange` to the `publishDiagnostics` of that version, on a 2,000-line
//!    SKILL.md (goal: p99 < 10 ms), one edit at a time;
//! 2. the server's resident memory with 200 open documents (each a 2,000-line SKILL.md in its
//!    own skill folder), read from /proc.
//!
//! 3. the server's resident memory with the corpus's SKILL.md files (`SKILLWATCH_CORPUS`, else
//!    ../shared/corpus beside the checkout; skipped when neither exists) opened one by one (each
//!    one's diagnostics awaited before the next), then in one burst (every didOpen sent before
//!    any answer is read), and after closing them all, at once and a few seconds later (goal:
//!    under 80 MiB with all open, back under 40 MiB after closing). The resident memory after
//!    closing is split into anonymous pages (heap, stacks) and file pages (the executable's and
//!    shared libraries' code and tables read so far).
//!
//! Run: `cargo bench -p skillwatch-tests --bench lsp --profile release` (prints the figures;
//! without `--profile release` the bench profile's line tables build every dependency a second
//! time, which takes longer than the bench on a small machine; the server measured is the
//! release `skillwatch` either way). `LSP_BENCH_EDITS` and `LSP_BENCH_DOCS` change the counts;
//! `LSP_BENCH_ONLY=latency|memory|corpus` runs one part.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use skillwatch_tests::lsp::{LspClient, utf16_position};

/// A realistic 2,000-line SKILL.md: frontmatter, headings, prose, lists, code blocks, links,
/// some non-ASCII text.
fn skill_md(name: &str, lines: usize) -> String {
    let mut text = format!(
        "---\nname: {name}\ndescription: Extracts tables from PDF reports and writes them as CSV. Use when the user mentions PDF tables, invoices or statements.\nlicense: MIT\nallowed-tools: Read Grep Bash(pdftotext:*)\nmetadata:\n  author: bench\n  version: \"1.0\"\n---\n"
    );
    let mut i = 0;
    while text.lines().count() < lines {
        i += 1;
        let block = match i % 5 {
            0 => format!(
                "## Step {i}\n\nRead the file with `pdftotext -layout` and keep the columns aligned — café, naïve, 表格.\n"
            ),
            1 => format!(
                "- item {i}: see [reference](references/part-{i}.md) for details\n- check the totals row\n"
            ),
            2 => "```bash\npdftotext -layout input.pdf out.txt\ngrep -n 'Total' out.txt\n```\n"
                .to_string(),
            3 => format!("When a table spans pages, merge rows whose first cell is empty ({i}).\n"),
            _ => "\n".to_string(),
        };
        text.push_str(&block);
    }
    text
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1000.0)
}

fn rss_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn open_skill(client: &mut LspClient, root: &Path, name: &str, text: &str) -> String {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    client.open(&dir.join("SKILL.md"), "markdown", text)
}

fn latency(edits: usize) {
    let root = tempfile::tempdir().unwrap();
    let text = skill_md("bench-skill", 2000);
    let mut client = LspClient::initialized(json!({"historyPollMs": 0}));
    let uri = open_skill(&mut client, root.path(), "bench-skill", &text);
    client.diagnostics(&uri, Some(1));
    // type a character into the middle of the body and delete it again, alternately
    let mid = text.find("## Step 500").unwrap_or(text.len() / 2);
    let (line, character) = utf16_position(&text, mid);
    let at = json!({"line": line, "character": character});
    let after = json!({"line": line, "character": character + 1});
    let mut samples = Vec::with_capacity(edits);
    for i in 0..edits {
        let version = i as i64 + 2;
        let change = if i % 2 == 0 {
            json!({"range": {"start": at, "end": at}, "text": "x"})
        } else {
            json!({"range": {"start": at, "end": after}, "text": ""})
        };
        let start = Instant::now();
        client.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]}),
        );
        client.diagnostics(&uri, Some(version));
        samples.push(start.elapsed());
    }
    samples.sort();
    println!(
        "didChange -> publishDiagnostics, 2,000-line SKILL.md ({} bytes), {edits} edits:",
        text.len()
    );
    println!(
        "  p50 {}  p90 {}  p99 {}  max {}  (goal: p99 < 10 ms)",
        ms(percentile(&samples, 50.0)),
        ms(percentile(&samples, 90.0)),
        ms(percentile(&samples, 99.0)),
        ms(*samples.last().unwrap())
    );
    client.shutdown();
}

fn memory(docs: usize) {
    let root = tempfile::tempdir().unwrap();
    let mut client = LspClient::initialized(json!({"historyPollMs": 0}));
    let pid = client.pid();
    std::thread::sleep(Duration::from_millis(200));
    let before = rss_kib(pid, "VmRSS:");
    let mut total_bytes = 0;
    let mut uris = Vec::new();
    for i in 0..docs {
        let name = format!("skill-{i:03}");
        let text = skill_md(&name, 2000);
        total_bytes += text.len();
        uris.push(open_skill(&mut client, root.path(), &name, &text));
    }
    for uri in &uris {
        client.diagnostics(uri, Some(1));
    }
    std::thread::sleep(Duration::from_millis(200));
    let after = rss_kib(pid, "VmRSS:");
    let peak = rss_kib(pid, "VmHWM:");
    println!(
        "memory with {docs} open documents ({:.1} MiB of text):",
        total_bytes as f64 / 1_048_576.0
    );
    println!(
        "  RSS after initialize {:.1} MiB, with the documents {:.1} MiB (+{:.1} MiB, {:.0} KiB per document), peak {:.1} MiB",
        before as f64 / 1024.0,
        after as f64 / 1024.0,
        (after.saturating_sub(before)) as f64 / 1024.0,
        (after.saturating_sub(before)) as f64 / docs as f64,
        peak as f64 / 1024.0
    );
    client.shutdown();
}

/// The corpus's SKILL.md files, sorted.
fn corpus_skills() -> Vec<PathBuf> {
    let root = std::env::var_os("SKILLWATCH_CORPUS").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus"),
        PathBuf::from,
    );
    let mut files: Vec<PathBuf> = walkdir::WalkDir::new(&root)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file() && e.file_name() == "SKILL.md")
        .map(|e| e.into_path())
        .collect();
    files.sort();
    files
}

fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

/// Wait until the server has handled everything sent so far (requests are answered in order
/// after the notifications before them), then let it settle.
fn settle(client: &mut LspClient) {
    client.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": "file:///nowhere/SKILL.md"}, "position": {"line": 0, "character": 0}}),
    );
    std::thread::sleep(Duration::from_millis(500));
}

/// How long the bench waits after closing every document before reading the server's memory
/// again: past the server's release delay (`skillwatch_lsp::memory::RELEASE_DELAY`).
const IDLE: Duration = Duration::from_secs(3);

fn corpus_memory(files: &[PathBuf], burst: bool) {
    let mut client = LspClient::initialized(json!({"historyPollMs": 0}));
    let pid = client.pid();
    settle(&mut client);
    let start = rss_kib(pid, "VmRSS:");
    let texts: Vec<(PathBuf, String)> = files
        .iter()
        .map(|f| {
            (
                f.clone(),
                String::from_utf8_lossy(&std::fs::read(f).unwrap()).into_owned(),
            )
        })
        .collect();
    let bytes: usize = texts.iter().map(|(_, t)| t.len()).sum();
    let mut uris = Vec::new();
    for (path, text) in &texts {
        let uri = client.open(path, "markdown", text);
        if !burst {
            client.diagnostics(&uri, Some(1));
        }
        uris.push(uri);
    }
    if burst {
        for uri in &uris {
            client.diagnostics(uri, Some(1));
        }
    }
    settle(&mut client);
    let open = rss_kib(pid, "VmRSS:");
    let peak = rss_kib(pid, "VmHWM:");
    for uri in &uris {
        client.notify(
            "textDocument/didClose",
            json!({"textDocument": {"uri": uri}}),
        );
    }
    settle(&mut client);
    let closed = rss_kib(pid, "VmRSS:");
    // the server gives memory back a moment after the last close (lsp/src/memory.rs)
    std::thread::sleep(IDLE);
    let idle = rss_kib(pid, "VmRSS:");
    let (anon, file) = (rss_kib(pid, "RssAnon:"), rss_kib(pid, "RssFile:"));
    println!(
        "corpus, {} SKILL.md files ({:.1} MiB of text) opened {}:",
        files.len(),
        bytes as f64 / 1_048_576.0,
        if burst { "in one burst" } else { "one by one" }
    );
    println!(
        "  RSS after initialize {}, all open {}, peak {}, all closed {}, {} s later {} (anonymous {}, file {})  (goal: < 80 MiB open, < 40 MiB closed)",
        mib(start),
        mib(open),
        mib(peak),
        mib(closed),
        IDLE.as_secs(),
        mib(idle),
        mib(anon),
        mib(file)
    );
    client.shutdown();
}

fn count(var: &str, default: usize) -> usize {
    std::env::var(var)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    // `cargo test --benches` runs this binary too: keep that run short
    let quick = std::env::args().any(|a| a == "--test") || std::env::args().all(|a| a != "--bench");
    let (edits, docs) = if quick { (20, 5) } else { (1000, 200) };
    let edits = count("LSP_BENCH_EDITS", edits);
    let docs = count("LSP_BENCH_DOCS", docs);
    let only = std::env::var("LSP_BENCH_ONLY").unwrap_or_default();
    let part = |name: &str| only.is_empty() || only == name;
    if part("latency") {
        latency(edits);
    }
    if part("memory") {
        memory(docs);
    }
    if part("corpus") {
        let mut files = corpus_skills();
        if files.is_empty() {
            println!("corpus: none found (set SKILLWATCH_CORPUS); skipped");
        } else {
            if quick {
                files.truncate(docs);
            }
            corpus_memory(&files, false);
            corpus_memory(&files, true);
        }
    }
    let _: Option<Value> = None;
}
