//! The skill listing a harness put in front of the model, read back from the request it sent:
//! each harness lists skills in its own shape, and that shape is the one thing read here.
//!
//! - Claude Code: `- name: description` lines after "available for use with the Skill tool"
//!   (`- name` alone when the budget dropped the description, `- folder (name): ...` when the
//!   two differ);
//! - Codex: `- name: description (file: path)` lines in `<skills_instructions>`;
//! - Gemini CLI, OpenCode, Copilot CLI: `<skill><name>..</name><description>..</description>`
//!   entries, XML-escaped; Copilot CLI adds "Additional skills available (invoke by name): a, b"
//!   for skills past its budget.

use serde_json::Value;

/// One skill as the listing shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// The name the model sees.
    pub name: String,
    /// The folder name, when the listing shows it beside a different name (Claude Code).
    pub folder: Option<String>,
    /// The description as shown; `None` when the skill is listed by name only.
    pub description: Option<String>,
}

/// Every string of a JSON request body, in order, joined by line breaks: the text the model
/// was given, whatever the wire protocol.
pub fn request_text(body: &Value) -> String {
    fn walk(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::String(s) => out.push(s.clone()),
            Value::Array(items) => items.iter().for_each(|i| walk(i, out)),
            Value::Object(map) => map.values().for_each(|i| walk(i, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(body, &mut out);
    out.join("\n")
}

/// The skills `harness` listed in `text` (a request's [`request_text`]), in listing order.
pub fn listed_skills(harness: &str, text: &str) -> Vec<Listed> {
    match harness {
        "claude-code" => claude_code(text),
        "codex" => codex(text),
        _ => xml_entries(text),
    }
}

fn claude_code(text: &str) -> Vec<Listed> {
    let Some(header) = text.find("available for use with the Skill tool") else {
        return Vec::new();
    };
    let rest = &text[header..];
    let Some(start) = rest.find("\n- ") else {
        return Vec::new();
    };
    let block = &rest[start + 1..];
    let end = ["\n</system-reminder>", "\n\n"]
        .iter()
        .filter_map(|e| block.find(e))
        .min()
        .unwrap_or(block.len());
    let mut out: Vec<Listed> = Vec::new();
    for line in block[..end].lines() {
        let Some(entry) = line.strip_prefix("- ") else {
            // a description that spans lines
            if let Some(Listed {
                description: Some(d),
                ..
            }) = out.last_mut()
            {
                d.push('\n');
                d.push_str(line);
            }
            continue;
        };
        let (head, description) = match entry.split_once(": ") {
            Some((h, d)) => (h, Some(d.to_owned())),
            None => (entry, None),
        };
        let (name, folder) = match head.strip_suffix(')').and_then(|h| h.split_once(" (")) {
            Some((folder, name)) => (name.to_owned(), Some(folder.to_owned())),
            None => (head.to_owned(), None),
        };
        out.push(Listed {
            name,
            folder,
            description,
        });
    }
    out
}

fn codex(text: &str) -> Vec<Listed> {
    let Some(start) = text.find("<skills_instructions>") else {
        return Vec::new();
    };
    let end = text[start..]
        .find("</skills_instructions>")
        .map_or(text.len(), |e| start + e);
    text[start..end]
        .lines()
        .filter_map(|line| {
            let entry = line.strip_prefix("- ")?;
            let at = entry.rfind(" (file: ")?;
            let head = &entry[..at];
            Some(match head.split_once(": ") {
                Some((name, d)) => Listed {
                    name: name.into(),
                    folder: None,
                    description: Some(d.into()),
                },
                None => Listed {
                    name: head.into(),
                    folder: None,
                    description: None,
                },
            })
        })
        .collect()
}

fn xml_entries(text: &str) -> Vec<Listed> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("<skill>") {
        rest = &rest[at + "<skill>".len()..];
        let Some(name) = between(rest, "<name>", "</name>") else {
            continue;
        };
        let entry_end = rest.find("</skill>").unwrap_or(rest.len());
        let description = between(&rest[..entry_end], "<description>", "</description>");
        out.push(Listed {
            name: unescape(name),
            folder: None,
            description: description.map(unescape),
        });
    }
    if let Some(at) = text.find("Additional skills available (invoke by name): ") {
        let line = text[at..].lines().next().unwrap_or("");
        let names = line.split_once(": ").map_or("", |(_, n)| n);
        for name in names.split(", ").map(str::trim).filter(|n| !n.is_empty()) {
            out.push(Listed {
                name: unescape(name),
                folder: None,
                description: None,
            });
        }
    }
    out
}

fn between<'t>(text: &'t str, open: &str, close: &str) -> Option<&'t str> {
    let start = text.find(open)? + open.len();
    let end = text[start..].find(close)? + start;
    Some(&text[start..end])
}

/// XML's five entities (what the XML-listing harnesses escape).
fn unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_shape_reads_back() {
        let claude = "The following skills are available for use with the Skill tool:\n\n- a: one\ntwo\n- b\n- dir (c): three\n</system-reminder>";
        let got = listed_skills("claude-code", claude);
        assert_eq!(got[0].description.as_deref(), Some("one\ntwo"));
        assert_eq!(got[1].description, None);
        assert_eq!(
            (got[2].name.as_str(), got[2].folder.as_deref()),
            ("c", Some("dir"))
        );
        let codex = "<skills_instructions>\n- a: x: y (file: r1/a/SKILL.md)\n- b (file: r1/b/SKILL.md)\n</skills_instructions>";
        let got = listed_skills("codex", codex);
        assert_eq!(got[0].description.as_deref(), Some("x: y"));
        assert_eq!(got[1].description, None);
        let xml = "<skill>\n  <name>a</name>\n  <description>GitHub&apos;s &lt;x&gt;</description>\n</skill>\nAdditional skills available (invoke by name): b, c\n</available_skills>";
        let got = listed_skills("copilot-cli", xml);
        assert_eq!(got[0].description.as_deref(), Some("GitHub's <x>"));
        assert_eq!(
            got.iter().map(|l| l.name.as_str()).collect::<Vec<_>>(),
            ["a", "b", "c"]
        );
    }
}
