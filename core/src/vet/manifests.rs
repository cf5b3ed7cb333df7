//! Packages a skill declares in manifests rather than in a command: a requirements file, a
//! package.json, a pyproject.toml. "Copy `assets/requirements.txt` and install" installs every
//! name in it; those names go through the same typosquat and dependency-confusion tests as
//! `pip install ...` (SW327, SW328, in `behaviours`) and onto the card, as install acts at
//! the name's place. Parsed with the crates the project has for JSON and TOML; requirements
//! files are one name (or one option) per line.

use std::sync::LazyLock;

use regex::Regex;

use super::SourceFile;
use super::facts::{Act, Fact, Found};
use crate::text::Span;

/// The install acts of every manifest among `files`.
pub(crate) fn facts(files: &[SourceFile<'_>]) -> Found {
    let mut found = Found::default();
    for (file, source) in files.iter().enumerate() {
        let name = source
            .rel
            .rsplit('/')
            .next()
            .unwrap_or(source.rel)
            .to_ascii_lowercase();
        if super::is_markdown(&name) {
            // a Gemfile or a workflow quoted in a code block for the agent to write out
            let code = code_of(source.text, source.body_start);
            for (manager, pattern) in [("gem", &*GEM), ("actions", &*USES)] {
                found
                    .facts
                    .extend(lines(&code, manager, pattern).into_facts(file));
            }
            found.facts.extend(cargo_sections(&code).into_facts(file));
            continue;
        }
        let declared = if is_requirements(&name) {
            requirements(source.text)
        } else if name == "package.json" {
            package_json(source.text)
        } else if name == "pyproject.toml" {
            pyproject(source.text)
        } else if name == "cargo.toml" {
            cargo_toml(source.text)
        } else if name == "gemfile" {
            lines(source.text, "gem", &GEM)
        } else if name == "go.mod" {
            lines(source.text, "go", &GO_REQUIRE)
        } else if name.ends_with(".yml") || name.ends_with(".yaml") {
            lines(source.text, "actions", &USES)
        } else {
            continue;
        };
        found.facts.extend(declared.into_facts(file));
    }
    found
}

/// Whether a file name (lowercase) is a pip requirements or constraints file.
pub(crate) fn is_requirements(name: &str) -> bool {
    name.ends_with(".txt") && (name.contains("requirements") || name.contains("constraints"))
}

/// What one manifest declares: names with their places, the index options, and the manager.
#[derive(Default)]
struct Declared {
    manager: &'static str,
    names: Vec<(String, Span)>,
    index: Option<String>,
    extra_index: Option<String>,
}

impl Declared {
    fn of(manager: &'static str) -> Declared {
        Declared {
            manager,
            ..Declared::default()
        }
    }

    fn into_facts(self, file: usize) -> Vec<Fact> {
        self.names
            .into_iter()
            .map(|(name, span)| Fact {
                file,
                span,
                act: Act::Install {
                    manager: self.manager.to_string(),
                    names: vec![name],
                    index: self.index.clone(),
                    extra_index: self.extra_index.clone(),
                    urls: Vec::new(),
                },
            })
            .collect()
    }
}

/// A pip requirements file: `name[extra]==1.0 ; marker`, `-i URL`, `--extra-index-url URL`.
fn requirements(text: &str) -> Declared {
    let mut out = Declared::of("pip");
    let mut pos = 0;
    for raw in text.split_inclusive('\n') {
        let start = pos;
        pos += raw.len();
        let line = raw.split(" #").next().unwrap_or(raw).trim_end();
        let body = line.trim_start();
        let at = start + (line.len() - body.len());
        let mut words = body.split_whitespace();
        match words.next() {
            None => {}
            Some(w) if w.starts_with('#') => {}
            Some("-i" | "--index-url") => out.index = words.next().map(str::to_string),
            Some("--extra-index-url") => out.extra_index = words.next().map(str::to_string),
            Some(w) if w.starts_with("--index-url=") => out.index = Some(w[12..].to_string()),
            Some(w) if w.starts_with("--extra-index-url=") => {
                out.extra_index = Some(w[18..].to_string())
            }
            Some(w) if w.starts_with('-') || w.contains("://") || w.starts_with('.') => {}
            Some(w) => {
                let name = super::packages::canonical(w, true);
                if !name.is_empty() {
                    out.names.push((name, Span::new(at, at + w.len())));
                }
            }
        }
    }
    out
}

/// A package.json's dependencies of every kind, each at its key.
fn package_json(text: &str) -> Declared {
    let mut out = Declared::of("npm");
    let lower = text.to_ascii_lowercase();
    let Ok(serde_json::Value::Object(root)) = serde_json::from_str::<serde_json::Value>(text)
    else {
        return out;
    };
    for field in [
        "dependencies",
        "devDependencies",
        "optionalDependencies",
        "peerDependencies",
    ] {
        if let Some(serde_json::Value::Object(deps)) = root.get(field) {
            for name in deps.keys() {
                out.names
                    .push((name.clone(), place_of(&lower, &format!("\"{name}\""))));
            }
        }
    }
    out
}

/// A pyproject.toml's `[project] dependencies` and optional ones, and Poetry's.
fn pyproject(text: &str) -> Declared {
    let mut out = Declared::of("pip");
    let Ok(root) = text.parse::<toml::Table>() else {
        return out;
    };
    let mut specs: Vec<String> = Vec::new();
    let project = root.get("project").and_then(|p| p.as_table());
    if let Some(deps) = project
        .and_then(|p| p.get("dependencies"))
        .and_then(|d| d.as_array())
    {
        specs.extend(deps.iter().filter_map(|d| d.as_str()).map(str::to_string));
    }
    if let Some(groups) = project
        .and_then(|p| p.get("optional-dependencies"))
        .and_then(|d| d.as_table())
    {
        for deps in groups.values().filter_map(|d| d.as_array()) {
            specs.extend(deps.iter().filter_map(|d| d.as_str()).map(str::to_string));
        }
    }
    let poetry = root
        .get("tool")
        .and_then(|t| t.get("poetry"))
        .and_then(|p| p.get("dependencies"))
        .and_then(|d| d.as_table());
    specs.extend(
        poetry
            .into_iter()
            .flat_map(|d| d.keys().cloned())
            .filter(|k| k != "python"),
    );
    let lower = text.to_ascii_lowercase();
    for spec in specs {
        let name = super::packages::canonical(&spec, true);
        if !name.is_empty() {
            let span = place_of(&lower, &name);
            out.names.push((name, span));
        }
    }
    out
}

/// The tables of a Cargo.toml that list dependencies.
const CARGO_SECTIONS: [&str; 3] = ["dependencies", "dev-dependencies", "build-dependencies"];

/// A Cargo.toml's dependencies of every kind, each at its key.
fn cargo_toml(text: &str) -> Declared {
    let mut out = Declared::of("cargo");
    let Ok(root) = text.parse::<toml::Table>() else {
        return out;
    };
    let lower = text.to_ascii_lowercase();
    for field in CARGO_SECTIONS {
        if let Some(deps) = root.get(field).and_then(|d| d.as_table()) {
            for name in deps.keys() {
                out.names.push((name.clone(), place_of(&lower, name)));
            }
        }
    }
    out
}

/// The keys of `[dependencies]`-like sections of a Cargo.toml quoted in a code block: read by
/// lines, since a block is often a fragment no TOML parser takes.
fn cargo_sections(code: &str) -> Declared {
    let mut out = Declared::of("cargo");
    let mut inside = false;
    let mut at = 0;
    for line in code.split_inclusive('\n') {
        let t = line.trim();
        if t.starts_with('[') {
            let section = t.strip_prefix('[').and_then(|s| s.strip_suffix(']'));
            inside = section
                .is_some_and(|s| CARGO_SECTIONS.contains(&s) || s == "workspace.dependencies");
        } else if inside
            && let Some(c) = CARGO_KEY.captures(line)
            && let Some(m) = c.get(1)
        {
            out.names.push((
                m.as_str().to_string(),
                Span::new(at + m.start(), at + m.end()),
            ));
        }
        at += line.len();
    }
    out
}

/// `name = "1"` or `name = { ... }`: one dependency of a Cargo section.
static CARGO_KEY: LazyLock<Regex> =
    LazyLock::new(|| crate::checks::pattern::compile(r#"^\s*([A-Za-z][\w-]*)\s*=\s*["{]"#));
/// `gem "name"` in a Gemfile.
static GEM: LazyLock<Regex> =
    LazyLock::new(|| crate::checks::pattern::compile(r#"(?m)^\s*gem\s+['"]([\w.-]+)['"]"#));
/// A module path required by a go.mod (in a `require (...)` block or on its own line).
static GO_REQUIRE: LazyLock<Regex> = LazyLock::new(|| {
    crate::checks::pattern::compile(r"(?m)^\s*(?:require\s+)?([a-z0-9.-]+\.[a-z]+/[\w./-]+)\s+v\d")
});
/// `uses: owner/repo@ref` of a workflow step (a local `./action` or a `docker://` image is not
/// a published action).
static USES: LazyLock<Regex> = LazyLock::new(|| {
    crate::checks::pattern::compile(
        r"(?m)^\s*-?\s*uses:\s*['\x22]?([\w.-]+/[\w.-]+)(?:/[\w./-]*)?@",
    )
});

/// The text of a Markdown file with everything but its fenced code blanked (same length, so
/// places in it are places in the file).
fn code_of(text: &str, body_start: usize) -> String {
    let start = body_start.min(text.len());
    let body = crate::checks::markdown::Body::scan(text, Span::new(start, text.len()));
    let mut out: Vec<u8> = text
        .bytes()
        .map(|b| if b == b'\n' { b'\n' } else { b' ' })
        .collect();
    for line in body.lines.iter().filter(|l| l.code) {
        out[line.span.start..line.span.end]
            .copy_from_slice(&text.as_bytes()[line.span.start..line.span.end]);
    }
    String::from_utf8(out).unwrap_or_default()
}

/// Names captured by `pattern`'s first group, each at its place.
fn lines(text: &str, manager: &'static str, pattern: &Regex) -> Declared {
    let names = pattern
        .captures_iter(text)
        .filter_map(|c| c.get(1))
        .map(|m| (m.as_str().to_string(), Span::new(m.start(), m.end())))
        .collect();
    Declared {
        manager,
        names,
        ..Declared::default()
    }
}

/// Where `needle` first is in `lower` (a manifest's text in ASCII lowercase, the same
/// length as the text), else the file's start.
fn place_of(lower: &str, needle: &str) -> Span {
    lower
        .find(&needle.to_ascii_lowercase())
        .map_or(Span::empty(0), |i| Span::new(i, i + needle.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(d: &Declared) -> Vec<&str> {
        d.names.iter().map(|(n, _)| n.as_str()).collect()
    }

    #[test]
    fn requirements_names_options_and_places() {
        let text = "# deps\nnumpy==2.1\n--extra-index-url https://pkgs.acme.internal/simple\n  python_dateutils>=2 ; python_version>'3'\n-r other.txt\ngit+https://x.io/r.git\n";
        let d = requirements(text);
        assert_eq!(names(&d), ["numpy", "python-dateutils"]);
        assert_eq!(
            d.extra_index.as_deref(),
            Some("https://pkgs.acme.internal/simple")
        );
        let (_, span) = &d.names[1];
        assert!(text[span.start..span.end].starts_with("python_dateutils"));
    }

    #[test]
    fn every_pattern_compiles() {
        crate::checks::pattern::force_every_static!(
            include_str!("manifests.rs"),
            GEM,
            GO_REQUIRE,
            USES,
            CARGO_KEY
        );
    }

    #[test]
    fn cargo_gems_go_modules_and_actions() {
        let d = cargo_toml(
            "[package]\nname = \"x\"\n[dependencies]\nserde_jsonn = \"1\"\n[dev-dependencies]\ntempfile = \"3\"\n",
        );
        assert_eq!(names(&d), ["serde_jsonn", "tempfile"]);
        let d = lines(
            "source 'https://rubygems.org'\ngem 'rest-cliet', '~> 2.1'\n  gem \"rails\"\n",
            "gem",
            &GEM,
        );
        assert_eq!(names(&d), ["rest-cliet", "rails"]);
        let d = lines(
            "module x\n\nrequire (\n\tgithub.com/golang-jvvt/jwt v4.5.0\n\tgolang.org/x/net v0.1.0 // indirect\n)\nrequire github.com/spf13/cobra v1.8.0\n",
            "go",
            &GO_REQUIRE,
        );
        assert_eq!(
            names(&d),
            [
                "github.com/golang-jvvt/jwt",
                "golang.org/x/net",
                "github.com/spf13/cobra"
            ]
        );
        let d = lines(
            "steps:\n  - uses: actons/checkout@v4\n  - uses: ./local\n  - uses: github/codeql-action/init@v3\n",
            "actions",
            &USES,
        );
        assert_eq!(names(&d), ["actons/checkout", "github/codeql-action"]);
        for (manager, name, real) in [
            ("cargo", "serde_jsonn", "serde_json"),
            ("gem", "rest-cliet", "rest-client"),
            (
                "go",
                "github.com/golang-jvvt/jwt",
                "github.com/golang-jwt/jwt",
            ),
            ("actions", "actons/checkout", "actions/checkout"),
        ] {
            assert_eq!(
                super::super::packages::typosquat_of(manager, name),
                Some(real)
            );
        }
        assert_eq!(
            super::super::packages::typosquat_of("cargo", "serde-json"),
            None
        );
    }

    /// A Gemfile quoted in SKILL.md's code is declared; the same line in prose is not.
    #[test]
    fn gems_in_a_code_block_of_skill_md() {
        let md = "---\nname: x\n---\ngem \"prose-gem\"\n\n```ruby\ngem \"rest-cliet\"\n```\n";
        let file = SourceFile {
            path: std::path::Path::new("/s/SKILL.md"),
            rel: "SKILL.md",
            text: md,
            body_start: md.find("---\ngem").unwrap() + 4,
        };
        let found = facts(&[file]);
        let names: Vec<&str> = found
            .facts
            .iter()
            .filter_map(|f| match &f.act {
                Act::Install { names, .. } => Some(names[0].as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(names, ["rest-cliet"]);
    }

    /// A Cargo fragment in a code block: the keys of its dependency sections, not of others.
    #[test]
    fn cargo_sections_of_a_code_block() {
        let code = "[package]\nname = \"x\"\n\n[dependencies]\nserde = { version = \"1\" }\nserde_jsonn = \"1.0\"\n[features]\ndefault = []\n";
        let d = cargo_sections(code);
        assert_eq!(names(&d), ["serde", "serde_jsonn"]);
        let (_, at) = &d.names[1];
        assert_eq!(&code[at.start..at.end], "serde_jsonn");
    }

    #[test]
    fn package_json_and_pyproject_dependencies() {
        let d = package_json(
            r#"{"name":"x","dependencies":{"chalk":"^5"},"devDependencies":{"lodahs":"1"}}"#,
        );
        assert_eq!(names(&d), ["chalk", "lodahs"]);
        let d = pyproject(
            "[project]\ndependencies = [\"reqeusts>=2\", \"rich\"]\n[project.optional-dependencies]\ndev = [\"pytest\"]\n",
        );
        assert_eq!(names(&d), ["reqeusts", "rich", "pytest"]);
        assert!(package_json("{ not json").names.is_empty());
        assert!(pyproject("[[[").names.is_empty());
    }
}
