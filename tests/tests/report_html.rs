//! `skillwatch report --html` end to end: a history with two skills on three models (the
//! last model breaks one skill), written through the `Store` API into a real SQLite file,
//! rendered by the real binary, then
//! - parsed by html5lib (a conforming HTML5 parser, tests/reference/html_check.py) with no
//!   parse error and nothing that loads from outside the file;
//! - opened in headless Chromium (Debian's chromium package, installed by scripts/test):
//!   no console message (the page's Content-Security-Policy turns any load into one), and the
//!   screenshot has the charts' colours where the charts are.
//!
//! Both tools are required: when they are missing the test fails in CI and is skipped
//! visibly elsewhere (`skillwatch_tests::needs`).

use std::path::{Path, PathBuf};
use std::process::Command;

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
        ("heatmap cell", [0x4e, 0x84, 0xbc]),
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
