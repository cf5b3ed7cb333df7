//! Packages a skill declares in manifests rather than in a command: a requirements file, a
//! package.json, a pyproject.toml. "Copy `assets/requirements.txt` and install" installs every
//! name in it; those names go through the same typosquat and dependency-confusion tests as
//! `pip install ...` (SW327, SW328, in `behaviours`) and onto the card, as install acts at
//! the name's place. Parsed with the crates the project has for JSON and TOML; requirements
//! files are one name (or one option) per line.

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
        let declared = if is_requirements(&name) {
            requirements(source.text)
        } else if name == "package.json" {
            package_json(source.text)
        } else if name == "pyproject.toml" {
            pyproject(source.text)
        } else {
            continue;
        };
        found.facts.extend(declared.into_facts(file));
    }
    found
}

fn is_requirements(name: &str) -> bool {
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
    let mut out = Declared {
        manager: "pip",
        ..Declared::default()
    };
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
    let mut out = Declared {
        manager: "npm",
        ..Declared::default()
    };
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
                    .push((name.clone(), place_of(text, &format!("\"{name}\""))));
            }
        }
    }
    out
}

/// A pyproject.toml's `[project] dependencies` and optional ones, and Poetry's.
fn pyproject(text: &str) -> Declared {
    let mut out = Declared {
        manager: "pip",
        ..Declared::default()
    };
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
    for spec in specs {
        let name = super::packages::canonical(&spec, true);
        if !name.is_empty() {
            let span = place_of(text, &name);
            out.names.push((name, span));
        }
    }
    out
}

/// Where `needle` first is in `text` (case-insensitively for ASCII), else the file's start.
fn place_of(text: &str, needle: &str) -> Span {
    let lower = text.to_ascii_lowercase();
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
