//! `skillwatch report --html` end to end: a history with two skills on three models (the
//! last model breaks one skill), written through the `Store` API into a real SQLite file,
//! rendered by the real binary, then
//! - parsed by html5lib (a conforming HTML5 parser, tests/reference/html_check.py) with no
//!   parse error and nothing that loads from outside the file;
//! - opened in headless Chromium (Debian's chromium package, installed by scripts/test):
//!   no console message (the page's Content-Security-Policy turns any load into one), and the
//!   screenshot has the charts' colours where the charts are;
//! - laid out by Chromium at 1280 px and measured over the DevTools protocol (on a pipe, no
//!   network): every text of the heatmap lies inside its cell, cells are coloured by their
//!   verdict, and the time axis of runs minutes apart has distinct labels.
//!
//! Both tools are required: when they are missing the test fails in CI and is skipped
//! visibly elsewhere (`skillwatch_tests::needs`).

use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use skillwatch_tests::history::{self, Shape};
use skillwatch_tests::*;

/// Render the small history; returns (temp dir, page path, page text).
fn render() -> (tempfile::TempDir, PathBuf, String) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.sqlite3");
    drop(history::write(&db, &Shape::small()));
    let page = dir.path().join("out/report.html");
    let out = skillwatch(
        &[
            "report",
            "--html",
            page.to_str().unwrap(),
            "--db",
            db.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("2 skills, 3 models"),
        "{}",
        stderr(&out)
    );
    let text = std::fs::read_to_string(&page).unwrap();
    (dir, page, text)
}

#[test]
fn report_shows_every_model_the_regression_and_the_trajectories() {
    let (_dir, _page, html) = render();
    for model in ["model-a-2025", "model-b-2026", "model-c-2026"] {
        assert!(html.contains(model), "{model} missing");
    }
    // One heatmap, then per skill a forest plot, a timeline and pass rates.
    assert_eq!(html.matches("<svg").count(), 1 + 2 * 3);
    // pdf-tables collapses on model-c: the comparison (the verdict rule) calls it a
    // regression, marked on the timeline; commit-messages never regresses.
    let pdf = section(&html, "pdf-tables");
    let commit = section(&html, "commit-messages");
    assert!(pdf.contains("class=\"regression\""), "no regression marker");
    assert!(
        pdf.contains("(model-c-2026) against run"),
        "no regression line"
    );
    assert!(!commit.contains("class=\"regression\""));
    // The drill-down reaches a trial's trajectory, checks and judge reasoning.
    assert!(html.contains("tool call"));
    assert!(html.contains(".claude/skills/pdf-tables/SKILL.md"));
    assert!(html.contains("The agent met the task goal for case-00."));
    assert!(html.contains("the output does not say the rows were written"));
    // Agent output is text, never markup.
    assert!(html.contains("&lt;table&gt; rows written"));
    assert!(!html.contains("<table> rows written"));
}

/// The newest probe run per model is in the skill's section: S, status, groups, and each
/// failed probe with its evidence (redacted as stored); a skill never probed has none.
#[test]
fn report_shows_the_newest_probe_run_per_model_with_the_failed_probes_evidence() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.sqlite3");
    drop(history::write(&db, &Shape::small()));
    history::probe_run(&db, "pdf-tables", "claude-code", "model-c-2026", 9);
    // 3 of 9 sensitive-data probes failed: S = (100 + 100 + 66.7) / 3 = 88.9, Caution
    history::probe_run(&db, "pdf-tables", "claude-code", "model-c-2026", 3);
    let page = dir.path().join("report.html");
    let out = skillwatch(
        &[
            "report",
            "--html",
            page.to_str().unwrap(),
            "--db",
            db.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    let pdf = section(&html, "pdf-tables");
    assert!(pdf.contains("Security probes (skillwatch probe)"), "{pdf}");
    let start = pdf
        .find("<table class=\"probes\">")
        .expect("the probes table");
    let table = &pdf[start..start + pdf[start..].find("</table>").unwrap()];
    assert_eq!(
        table.matches("<tr>").count(),
        2,
        "a header and the newest run: {table}"
    );
    assert!(table.contains("model-c-2026 (claude-code)"), "{table}");
    assert!(
        table.contains("<td class=\"num\">88.9</td><td>Caution</td>"),
        "{table}"
    );
    assert!(table.contains("<td>SDP-01, SDP-02, SDP-03</td>"), "{table}");
    assert_eq!(pdf.matches("<details class=\"probe\">").count(), 3);
    assert!(
        pdf.contains("[canary:aws_access_key_id]"),
        "evidence shown redacted"
    );
    let commit = section(&html, "commit-messages");
    assert!(!commit.contains("Security probes"));
}

/// The part of the page from the skill's heading to the next section.
fn section<'a>(html: &'a str, skill: &str) -> &'a str {
    let start = html
        .find(&format!("<h2>{skill}</h2>"))
        .unwrap_or_else(|| panic!("no section for {skill}"));
    let rest = &html[start..];
    let end = rest[4..].find("<section").map_or(rest.len(), |e| e + 4);
    &rest[..end]
}

#[test]
fn report_parses_as_html_and_loads_nothing() {
    let Some(python) = tool(&workspace_root().join("target/html-venv/bin/python")) else {
        return;
    };
    let (_dir, page, _) = render();
    let script = workspace_root().join("tests/reference/html_check.py");
    let out = Command::new(python)
        .arg(script)
        .arg(&page)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let found: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        found["errors"],
        serde_json::json!([]),
        "html5lib parse errors"
    );
    assert_eq!(found["external"], serde_json::json!([]), "external loads");
    assert_eq!(found["svgs"], 7);
}

#[test]
fn report_renders_in_headless_chromium() {
    let Some(chromium) = chromium() else {
        return;
    };
    let (dir, page, _) = render();
    let shot = dir.path().join("shot.png");
    let log = screenshot(&chromium, &page, &shot, dir.path());
    let console: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(console.is_empty(), "console messages: {console:#?}");
    let image = Image::read(&shot);
    // Not blank: a real share of the page is ink.
    let ink = image.count(|p| p != [255, 255, 255]);
    assert!(
        ink * 50 > image.pixels(),
        "only {ink} of {} pixels are not white",
        image.pixels()
    );
    // The charts drew: each model's series colour (forest dots, whiskers, lines) and the
    // heatmap's blue for a lift near +0.8 cover many pixels, far more than the legend's
    // swatches alone.
    for (name, rgb) in [
        ("model-a series", [0x00, 0x72, 0xB2]),
        ("model-b series", [0xD5, 0x5E, 0x00]),
        ("model-c series", [0x00, 0x9E, 0x73]),
        ("heatmap cell (improves)", [0x21, 0x66, 0xac]),
    ] {
        let n = image.count(|p| close(p, rgb, 24));
        assert!(n > 600, "{name}: only {n} pixels near {rgb:?}");
    }
    // `--window-size` sets the width; the screenshot is that wide.
    assert_eq!(image.width, 1200);
    // The test can fail: the same browser run reports an external load as a console error.
    let bad = dir.path().join("bad.html");
    std::fs::write(
        &bad,
        html_with_csp("<img src=\"http://127.0.0.1:9/x.png\"><p>x</p>"),
    )
    .unwrap();
    let log = screenshot(&chromium, &bad, &dir.path().join("bad.png"), dir.path());
    assert!(
        log.contains(":CONSOLE"),
        "a blocked load was not reported:\n{log}"
    );
}

/// The layout faults, measured on the page as Chromium lays it out at 1280 px: a
/// 3-case run (+0.45, "inconclusive (n too small)") used to spill its label out of its cell
/// and be coloured like an improvement; runs minutes apart all had one date on their axis.
#[test]
fn heatmap_text_fits_its_cells_and_colours_follow_the_verdict_in_chromium() {
    let Some(chromium) = chromium() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.sqlite3");
    drop(history::write(&db, &Shape::small()));
    // Three runs of a 3-case suite, five minutes apart, on a model with a long name.
    let start = 1_768_000_000_000i64;
    for i in 0..3 {
        history::add_run(
            &db,
            "tiny-suite",
            "model-with-a-rather-long-name-2026",
            3,
            1,
            start + i * 300_000,
        );
    }
    let page = dir.path().join("report.html");
    let out = skillwatch(
        &[
            "report",
            "--html",
            page.to_str().unwrap(),
            "--db",
            db.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let mut browser = DevTools::start(&chromium, dir.path());
    let cells = browser.measure(&page, HEATMAP_BOXES);
    let cells = cells.as_array().expect("an array of cells");
    assert!(cells.len() >= 6, "{cells:?}");
    let mut verdicts = Vec::new();
    for cell in cells {
        let rect = boxed(&cell["rect"]);
        for text in cell["texts"].as_array().unwrap() {
            let b = boxed(&text["box"]);
            assert!(
                b[0] >= rect[0] - 0.5
                    && b[2] <= rect[2] + 0.5
                    && b[1] >= rect[1] - 0.5
                    && b[3] <= rect[3] + 0.5,
                "{:?} ({b:?}) is not inside its cell {rect:?}",
                text["text"]
            );
        }
        verdicts.push((
            cell["verdict"].as_str().unwrap().to_string(),
            cell["fill"].as_str().unwrap().to_string(),
        ));
    }
    let fill_of = |v: &str| {
        verdicts
            .iter()
            .filter(|(w, _)| w == v)
            .map(|(_, f)| f.clone())
            .collect::<Vec<_>>()
    };
    let small = fill_of("inconclusive");
    assert!(
        !small.is_empty(),
        "the 3-case run is inconclusive: {verdicts:?}"
    );
    for improves in fill_of("improves") {
        assert!(
            !small.contains(&improves),
            "an inconclusive cell looks like an improvement: {verdicts:?}"
        );
    }
    // Every verdict one colour, whatever the lift.
    for (v, f) in &verdicts {
        assert!(fill_of(v).iter().all(|g| g == f), "{v}: {verdicts:?}");
    }
    let texts: Vec<String> = cells
        .iter()
        .flat_map(|c| {
            c["texts"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["text"].as_str().unwrap().to_string())
        })
        .collect();
    assert!(texts.iter().any(|t| t == "(n too small)"), "{texts:?}");
    // The column headers fit their columns too.
    for head in browser.measure(&page, HEADER_BOXES).as_array().unwrap() {
        let b = boxed(&head["box"]);
        let (left, right) = (
            head["left"].as_f64().unwrap(),
            head["right"].as_f64().unwrap(),
        );
        assert!(b[0] >= left - 0.5 && b[2] <= right + 0.5, "{head:?}");
    }
    // The tiny suite's timeline: runs five minutes apart get distinct tick labels.
    let ticks = browser.measure(&page, TIMELINE_TICKS);
    let labels: Vec<&str> = ticks[2]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    let mut unique = labels.clone();
    unique.dedup();
    assert_eq!(unique.len(), labels.len(), "tick labels repeat: {labels:?}");
    // The measurement can fail: a label wider than its cell is caught.
    let bad = dir.path().join("bad.html");
    std::fs::write(
        &bad,
        "<!DOCTYPE html><html><body><svg class=\"heatmap\" width=\"300\" height=\"60\">\
         <g class=\"cell\" data-verdict=\"improves\"><rect x=\"0\" y=\"0\" width=\"60\" height=\"40\" fill=\"#2166ac\"></rect>\
         <text x=\"30\" y=\"20\" text-anchor=\"middle\">inconclusive (n too small)</text></g></svg></body></html>",
    )
    .unwrap();
    let bad_cells = browser.measure(&bad, HEATMAP_BOXES);
    let rect = boxed(&bad_cells[0]["rect"]);
    let text = boxed(&bad_cells[0]["texts"][0]["box"]);
    assert!(text[2] - text[0] > rect[2] - rect[0], "{bad_cells}");
}

/// Each heatmap cell: its verdict, fill, rectangle and texts, as laid out.
const HEATMAP_BOXES: &str = "JSON.stringify([...document.querySelectorAll('svg.heatmap g.cell')].map(g => {
  const box = e => { const b = e.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; };
  const rect = g.querySelector('rect');
  return { verdict: g.dataset.verdict, fill: rect.getAttribute('fill'), rect: box(rect),
           texts: [...g.querySelectorAll('text')].map(t => ({ text: t.textContent, box: box(t) })) };
}))";

/// Each heatmap column header with the column's left and right edges.
const HEADER_BOXES: &str = "JSON.stringify((() => {
  const svg = document.querySelector('svg.heatmap');
  const cells = [...svg.querySelectorAll('g.cell rect')].map(r => r.getBoundingClientRect());
  return [...svg.querySelectorAll('g.head text')].map(t => {
    const b = t.getBoundingClientRect();
    const mid = (b.left + b.right) / 2;
    const col = cells.find(c => c.left - 2 <= mid && mid <= c.right + 2);
    return { text: t.textContent, box: [b.left, b.top, b.right, b.bottom], left: col.left - 1, right: col.right + 1 };
  });
})())";

/// The tick labels of each timeline ("Lift over time"), chart by chart.
const TIMELINE_TICKS: &str = "JSON.stringify([...document.querySelectorAll('svg.chart')]
  .filter(s => (s.getAttribute('aria-label') || '').includes('over time'))
  .map(s => [...s.querySelectorAll('text.tick')].filter(t => t.getAttribute('text-anchor') === 'middle').map(t => t.textContent)))";

fn boxed(v: &Value) -> [f64; 4] {
    let a = v.as_array().unwrap_or_else(|| panic!("a box, found {v}"));
    [0, 1, 2, 3].map(|i| a[i].as_f64().unwrap())
}

/// Headless Chromium driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`:
/// messages are JSON ended by a NUL byte, Chromium reading fd 3 and writing fd 4), so the
/// test opens no port.
struct DevTools {
    child: Child,
    to: std::fs::File,
    from: std::fs::File,
    next: u64,
    session: String,
}

impl DevTools {
    fn start(chromium: &Path, tmp: &Path) -> DevTools {
        let (to_read, to_write) = pipe();
        let (from_read, from_write) = pipe();
        let (r3, w4) = (
            std::os::fd::AsRawFd::as_raw_fd(&to_read),
            std::os::fd::AsRawFd::as_raw_fd(&from_write),
        );
        let mut cmd = Command::new(chromium);
        cmd.args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--remote-debugging-pipe",
            "--window-size=1280,2000",
        ])
        .arg(format!(
            "--user-data-dir={}",
            tmp.join("devtools-profile").display()
        ))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
        // SAFETY: dup2 is async-signal-safe; it puts the pipe ends where Chromium looks.
        unsafe {
            cmd.pre_exec(move || {
                // Copies above 10 first, so neither end is overwritten if it sat at 3 or 4.
                let (r, w) = (
                    libc::fcntl(r3, libc::F_DUPFD, 10),
                    libc::fcntl(w4, libc::F_DUPFD, 10),
                );
                if r < 0 || w < 0 || libc::dup2(r, 3) < 0 || libc::dup2(w, 4) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd.spawn().expect("start chromium");
        drop((to_read, from_write));
        let mut tools = DevTools {
            child,
            to: std::fs::File::from(to_write),
            from: std::fs::File::from(from_read),
            next: 0,
            session: String::new(),
        };
        let target = tools.call(None, "Target.createTarget", json!({"url": "about:blank"}));
        let id = target["targetId"]
            .as_str()
            .expect("a target id")
            .to_string();
        let attached = tools.call(
            None,
            "Target.attachToTarget",
            json!({"targetId": id, "flatten": true}),
        );
        tools.session = attached["sessionId"].as_str().unwrap().to_string();
        let session = tools.session.clone();
        tools.call(
            Some(&session),
            "Emulation.setDeviceMetricsOverride",
            json!({"width": 1280, "height": 2000, "deviceScaleFactor": 1, "mobile": false}),
        );
        tools
    }

    /// Open `page`, wait for it to load, and return what `expression` (a JSON string) gives.
    fn measure(&mut self, page: &Path, expression: &str) -> Value {
        let session = self.session.clone();
        self.call(
            Some(&session),
            "Page.navigate",
            json!({"url": format!("file://{}", page.display())}),
        );
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let state = self.evaluate("document.readyState");
            if state == "complete" {
                break;
            }
            assert!(Instant::now() < deadline, "the page did not load: {state}");
            std::thread::sleep(Duration::from_millis(50));
        }
        let text = self.evaluate(expression);
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
    }

    fn evaluate(&mut self, expression: &str) -> String {
        let session = self.session.clone();
        let r = self.call(
            Some(&session),
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true}),
        );
        assert!(r.get("exceptionDetails").is_none(), "{r}");
        r["result"]["value"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// Send one command and wait for its answer (events in between are skipped).
    fn call(&mut self, session: Option<&str>, method: &str, params: Value) -> Value {
        self.next += 1;
        let mut message = json!({"id": self.next, "method": method, "params": params});
        if let Some(s) = session {
            message["sessionId"] = json!(s);
        }
        let mut bytes = serde_json::to_vec(&message).unwrap();
        bytes.push(0);
        self.to.write_all(&bytes).expect("write to chromium");
        loop {
            let reply = self.read_message();
            if reply["id"].as_u64() == Some(self.next) {
                assert!(reply.get("error").is_none(), "{method}: {reply}");
                return reply["result"].clone();
            }
        }
    }

    fn read_message(&mut self) -> Value {
        let mut bytes = Vec::new();
        let mut byte = [0u8; 1];
        loop {
            let n = self.from.read(&mut byte).expect("read from chromium");
            assert!(n == 1, "chromium closed its pipe");
            if byte[0] == 0 {
                break;
            }
            bytes.push(byte[0]);
        }
        serde_json::from_slice(&bytes).expect("chromium sends JSON")
    }
}

impl Drop for DevTools {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A pipe: (read end, write end), both close-on-exec (the child gets copies at 3 and 4).
fn pipe() -> (OwnedFd, OwnedFd) {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills the two descriptors it is given; both are owned from here on.
    let rc = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    assert_eq!(rc, 0, "pipe2: {}", std::io::Error::last_os_error());
    unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) }
}

fn html_with_csp(body: &str) -> String {
    format!(
        "<!DOCTYPE html><html><head><meta http-equiv=\"Content-Security-Policy\" \
         content=\"default-src 'none'; style-src 'unsafe-inline'\"><title>x</title></head>\
         <body>{body}</body></html>"
    )
}

/// Screenshot `page` at 1200x3000; returns Chromium's log (console messages included).
fn screenshot(chromium: &Path, page: &Path, png: &Path, tmp: &Path) -> String {
    let profile = tmp.join("chromium-profile");
    let out = Command::new("timeout")
        .arg("120")
        .arg(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1200,3000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("run chromium");
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success() && png.exists(),
        "chromium failed:\n{log}"
    );
    log
}

/// An RGB screenshot.
struct Image {
    width: u32,
    rgb: Vec<[u8; 3]>,
}

impl Image {
    fn read(path: &Path) -> Image {
        let decoder =
            png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        let step = match info.color_type {
            png::ColorType::Rgb => 3,
            png::ColorType::Rgba => 4,
            other => panic!("unexpected screenshot colour type {other:?}"),
        };
        assert_eq!(info.bit_depth, png::BitDepth::Eight);
        let rgb = buf[..info.buffer_size()]
            .chunks_exact(step)
            .map(|p| [p[0], p[1], p[2]])
            .collect();
        Image {
            width: info.width,
            rgb,
        }
    }

    fn pixels(&self) -> usize {
        self.rgb.len()
    }

    fn count(&self, keep: impl Fn([u8; 3]) -> bool) -> usize {
        self.rgb.iter().filter(|p| keep(**p)).count()
    }
}

fn close(p: [u8; 3], q: [u8; 3], tolerance: i32) -> bool {
    p.iter()
        .zip(q)
        .all(|(a, b)| (i32::from(*a) - i32::from(b)).abs() <= tolerance)
}

/// Debian's chromium (or `SKILLWATCH_CHROMIUM`); `None` after a visible skip when it is
/// missing outside CI ([`skillwatch_tests::needs`]; in CI a missing browser fails the test).
fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("SKILLWATCH_CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    tool(&path)
}

fn tool(path: &Path) -> Option<PathBuf> {
    skillwatch_tests::needs::required(
        path.exists().then(|| path.to_path_buf()),
        &path.display().to_string(),
        "scripts/test installs it (apt-get install chromium, as root; html5lib==1.1 into \
         target/html-venv)",
    )
}
