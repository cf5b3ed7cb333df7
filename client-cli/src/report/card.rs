//! Renderers for `skillwatch vet --card`: per skill, what it makes the agent do, grouped by
//! kind, the riskiest group first, each entry with its risk, its place and the line there.
//! Text for a reviewer, and JSON (schemas/vet-card.schema.json, version [`CARD_FORMAT_VERSION`]).
//! The verdict printed is the card's worst entry (`skillwatch_core::vet::card::worst`).

use std::io::{self, Write};
use std::path::Path;

use serde::Serialize;
use skillwatch_core::plural::count;
use skillwatch_core::vet::card::{Entry, Kind};
use skillwatch_core::vet::{SkillVerdict, Verdict};

/// Version of the JSON shape of `skillwatch vet --card --json`.
pub const CARD_FORMAT_VERSION: u32 = 1;

/// A path as the reviewer reads it: relative to the skill's folder when inside it.
fn shown<'p>(dir: &Path, path: &'p Path) -> std::borrow::Cow<'p, str> {
    path.strip_prefix(dir).unwrap_or(path).to_string_lossy()
}

fn paint(color: bool, v: Verdict) -> String {
    let code = match v {
        Verdict::Malicious => "1;31",
        Verdict::Suspicious => "1;33",
        Verdict::Clean => "32",
    };
    let word = format!("{:<10}", v.as_str());
    if color {
        format!("\x1b[{code}m{word}\x1b[0m")
    } else {
        word
    }
}

/// The text card: a heading per skill with its verdict, a heading per kind, an entry per line
/// with its place, then the findings behind its risk and the source line.
pub fn human(verdicts: &[SkillVerdict], color: bool) -> io::Result<()> {
    let mut out = io::BufWriter::new(io::stdout().lock());
    for v in verdicts {
        writeln!(
            out,
            "{} {} (the worst entry below)",
            paint(color, v.verdict),
            v.dir.display()
        )?;
        if v.card.entries.is_empty() {
            writeln!(out, "  nothing found that the skill makes the agent do\n")?;
            continue;
        }
        for (kind, entries) in v.card.groups() {
            writeln!(out, "  {}", kind.title())?;
            for e in entries {
                entry(&mut out, &v.dir, e, color)?;
            }
        }
        writeln!(out)?;
    }
    let n = |w| verdicts.iter().filter(|s| s.verdict == w).count();
    writeln!(
        out,
        "{}: {} malicious, {} suspicious, {} clean",
        count(verdicts.len(), "skill"),
        n(Verdict::Malicious),
        n(Verdict::Suspicious),
        n(Verdict::Clean)
    )?;
    out.flush()
}

fn entry(out: &mut impl Write, dir: &Path, e: &Entry, color: bool) -> io::Result<()> {
    let mark = e
        .mark
        .map_or(String::new(), |m| format!(" ({})", m.as_str()));
    let at = if e.place.located {
        format!(
            "{}:{}:{}",
            shown(dir, &e.place.path),
            e.place.line,
            e.place.column
        )
    } else {
        shown(dir, &e.place.path).into_owned()
    };
    let more = match e.places {
        0 | 1 => String::new(),
        n => format!(", +{} more", n - 1),
    };
    writeln!(
        out,
        "    {} {}{mark}  {at}{more}",
        paint(color, e.risk),
        e.subject
    )?;
    for x in &e.evidence {
        let message = if x.message == e.subject {
            String::new()
        } else {
            format!(" {}", x.message)
        };
        let silenced = if x.silenced_inline {
            " (a skillwatch-ignore comment tried to silence this; not honoured)"
        } else {
            ""
        };
        let elsewhere = if x.place.path == e.place.path && x.place.span == e.place.span {
            String::new()
        } else {
            format!(
                " at {}:{}:{}",
                shown(dir, &x.place.path),
                x.place.line,
                x.place.column
            )
        };
        writeln!(
            out,
            "               {}[{}]{message}{elsewhere}{silenced}",
            x.severity.as_str(),
            x.rule
        )?;
    }
    if e.place.located && !e.place.excerpt.is_empty() {
        writeln!(out, "               | {}", e.place.excerpt)?;
    }
    Ok(())
}

#[derive(Serialize)]
struct Doc<'a> {
    version: u32,
    tool: &'static str,
    tool_version: &'static str,
    summary: super::vet::Summary,
    skills: Vec<SkillJson<'a>>,
}

#[derive(Serialize)]
struct SkillJson<'a> {
    path: &'a Path,
    verdict: &'static str,
    groups: Vec<GroupJson<'a>>,
}

#[derive(Serialize)]
struct GroupJson<'a> {
    kind: &'static str,
    title: &'static str,
    risk: &'static str,
    entries: Vec<EntryJson<'a>>,
}

#[derive(Serialize)]
struct EntryJson<'a> {
    subject: &'a str,
    mark: Option<&'static str>,
    risk: &'static str,
    file: String,
    #[serde(flatten)]
    place: super::vet::PlaceJson<'a>,
    located: bool,
    places: usize,
    evidence: Vec<super::vet::EvidenceJson<'a>>,
}

fn entry_json<'a>(dir: &Path, e: &'a Entry) -> EntryJson<'a> {
    EntryJson {
        subject: &e.subject,
        mark: e.mark.map(|m| m.as_str()),
        risk: e.risk.as_str(),
        file: shown(dir, &e.place.path).into_owned(),
        place: super::vet::place_json(&e.place),
        located: e.place.located,
        places: e.places,
        evidence: e.evidence.iter().map(super::vet::evidence_json).collect(),
    }
}

fn group_json<'a>(dir: &Path, kind: Kind, entries: &'a [Entry]) -> GroupJson<'a> {
    GroupJson {
        kind: kind.as_str(),
        title: kind.title(),
        risk: skillwatch_core::vet::card::worst(entries).as_str(),
        entries: entries.iter().map(|e| entry_json(dir, e)).collect(),
    }
}

/// `--card --json`.
pub fn json(verdicts: &[SkillVerdict]) -> io::Result<()> {
    let doc = Doc {
        version: CARD_FORMAT_VERSION,
        tool: "skillwatch",
        tool_version: env!("CARGO_PKG_VERSION"),
        summary: super::vet::summary(verdicts),
        skills: verdicts
            .iter()
            .map(|v| SkillJson {
                path: &v.dir,
                verdict: v.verdict.as_str(),
                groups: v
                    .card
                    .groups()
                    .into_iter()
                    .map(|(kind, entries)| group_json(&v.dir, kind, entries))
                    .collect(),
            })
            .collect(),
    };
    let mut out = io::BufWriter::new(io::stdout().lock());
    serde_json::to_writer_pretty(&mut out, &doc)?;
    writeln!(out)?;
    out.flush()
}
