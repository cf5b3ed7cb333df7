//! Glob patterns over the files of a trial's workspace, for the `file_*` assertions.
//!
//! skill-validator matches `path` globs relative to the work dir. Supported syntax: `*` (any
//! characters within one path segment), `?` (one character), `[abc]`, `[a-z]`, `[!a]`,
//! `{a,b}` alternatives and `**` (any number of whole segments, including none). Dot files
//! are matched like any other file. Matching is on `/`-separated relative paths.

use std::path::{Path, PathBuf};

use walkdir::WalkDir;

/// The most files a glob looks at in one workspace: an agent that wrote millions of files
/// must not stall grading.
pub const MAX_WALKED_FILES: usize = 200_000;

/// Whether the relative path `path` (segments separated by `/`) matches `pattern`.
pub fn matches(pattern: &str, path: &str) -> bool {
    expand_braces(pattern).iter().any(|p| {
        let pat: Vec<&str> = p
            .split('/')
            .filter(|s| !s.is_empty() && *s != ".")
            .collect();
        let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
        match_segments(&pat, &segs)
    })
}

/// The files (not folders) under `root` whose relative path matches `pattern`, sorted.
/// Symlinks are not followed; folders in `skip` (relative to `root`) are not entered.
pub fn find(root: &Path, pattern: &str, skip: &[PathBuf]) -> Vec<PathBuf> {
    let pattern = pattern.trim_start_matches("./");
    let mut found = Vec::new();
    let walker = WalkDir::new(root)
        .follow_links(false)
        .into_iter()
        .filter_entry(|e| {
            let rel = e.path().strip_prefix(root).unwrap_or(e.path());
            e.depth() == 0 || !skip.iter().any(|s| rel == s)
        });
    for entry in walker.flatten().take(MAX_WALKED_FILES) {
        if entry.file_type().is_dir() {
            continue;
        }
        let Ok(rel) = entry.path().strip_prefix(root) else {
            continue;
        };
        let rel = rel.to_string_lossy().replace('\\', "/");
        if matches(pattern, &rel) {
            found.push(entry.path().to_path_buf());
        }
    }
    found.sort();
    found
}

/// `a{b,c}d` -> `abd`, `acd`; nested and multiple groups expand fully. An unclosed `{` is
/// kept literally.
fn expand_braces(pattern: &str) -> Vec<String> {
    let Some(open) = pattern.find('{') else {
        return vec![pattern.to_owned()];
    };
    let mut depth = 0;
    let mut close = None;
    let mut splits = Vec::new();
    for (i, c) in pattern[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    close = Some(open + i);
                    break;
                }
            }
            ',' if depth == 1 => splits.push(open + i),
            _ => {}
        }
    }
    let Some(close) = close else {
        return vec![pattern.to_owned()];
    };
    let (head, tail) = (&pattern[..open], &pattern[close + 1..]);
    let mut bounds = vec![open];
    bounds.extend(&splits);
    bounds.push(close);
    let mut out = Vec::new();
    for w in bounds.windows(2) {
        let alt = &pattern[w[0] + 1..w[1]];
        out.extend(expand_braces(&format!("{head}{alt}{tail}")));
    }
    out
}

/// The POSIX extended regular expression (anchored, for `grep -E` over `/`-separated relative
/// paths) that matches exactly the paths [`matches`] accepts: how a Harbor task's `tests/test.sh`
/// decides the `file_*` assertions in the sandbox with the same semantics as a local trial.
pub fn to_ere(pattern: &str) -> String {
    let alternatives: Vec<String> = expand_braces(pattern)
        .iter()
        .map(|p| {
            let segs: Vec<&str> = p
                .split('/')
                .filter(|s| !s.is_empty() && *s != ".")
                .collect();
            segments_ere(&segs)
        })
        .collect();
    format!("^({})$", alternatives.join("|"))
}

/// One brace-free pattern's segments as an ERE body; `**` spans whole segments, none included.
fn segments_ere(segs: &[&str]) -> String {
    let mut out = String::new();
    let mut need_sep = false;
    for (i, seg) in segs.iter().enumerate() {
        let last = i + 1 == segs.len();
        match (*seg, last) {
            ("**", false) => {
                if need_sep {
                    out.push('/');
                }
                out.push_str("([^/]+/)*");
                need_sep = false;
            }
            ("**", true) => out.push_str(if need_sep {
                "(/[^/]+)*"
            } else {
                "([^/]+(/[^/]+)*)?"
            }),
            _ => {
                if need_sep {
                    out.push('/');
                }
                out.push_str(&segment_ere(seg));
                need_sep = true;
            }
        }
    }
    if segs.is_empty() {
        // No segment matches only the empty path, which names no file.
        out.push_str("[^/]{0}");
    }
    out
}

/// One segment's `*`, `?`, classes and escapes as ERE, everything else literal.
fn segment_ere(segment: &str) -> String {
    let p: Vec<char> = segment.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < p.len() {
        match p[i] {
            '*' => out.push_str("[^/]*"),
            '?' => out.push_str("[^/]"),
            '[' => match class(&p[i..]) {
                Some((set, len)) => {
                    out.push_str(&set.to_ere());
                    i += len;
                    continue;
                }
                None => out.push_str("\\["),
            },
            '\\' if i + 1 < p.len() => {
                out.push_str(&ere_literal(p[i + 1]));
                i += 1;
            }
            c => out.push_str(&ere_literal(c)),
        }
        i += 1;
    }
    out
}

/// A character that matches itself in an ERE.
fn ere_literal(c: char) -> String {
    if ".[]()*+?{}|^$\\".contains(c) {
        format!("\\{c}")
    } else {
        c.to_string()
    }
}

fn match_segments(pat: &[&str], segs: &[&str]) -> bool {
    match pat.split_first() {
        None => segs.is_empty(),
        Some((&"**", rest)) => (0..=segs.len()).any(|skip| match_segments(rest, &segs[skip..])),
        Some((p, rest)) => match segs.split_first() {
            Some((s, srest)) => match_segment(p, s) && match_segments(rest, srest),
            None => false,
        },
    }
}

/// One segment: `*`, `?` and classes; backtracking over `*`.
fn match_segment(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    match_from(&p, &t)
}

fn match_from(p: &[char], t: &[char]) -> bool {
    match p.first() {
        None => t.is_empty(),
        Some('*') => (0..=t.len()).any(|i| match_from(&p[1..], &t[i..])),
        Some('?') => !t.is_empty() && match_from(&p[1..], &t[1..]),
        Some('[') => match class(p) {
            Some((set, len)) => {
                !t.is_empty() && set.contains(t[0]) && match_from(&p[len..], &t[1..])
            }
            None => t.first() == Some(&'[') && match_from(&p[1..], &t[1..]),
        },
        Some('\\') if p.len() > 1 => t.first() == Some(&p[1]) && match_from(&p[2..], &t[1..]),
        Some(c) => t.first() == Some(c) && match_from(&p[1..], &t[1..]),
    }
}

/// A character class at the start of `p`: the set and how many pattern chars it used.
fn class(p: &[char]) -> Option<(CharSet, usize)> {
    let mut i = 1;
    let negated = matches!(p.get(i), Some('!' | '^'));
    if negated {
        i += 1;
    }
    let mut ranges = Vec::new();
    let start = i;
    while i < p.len() && (p[i] != ']' || i == start) {
        if i + 2 < p.len() && p[i + 1] == '-' && p[i + 2] != ']' {
            ranges.push((p[i], p[i + 2]));
            i += 3;
        } else {
            ranges.push((p[i], p[i]));
            i += 1;
        }
    }
    (i < p.len()).then_some((CharSet { ranges, negated }, i + 1))
}

struct CharSet {
    ranges: Vec<(char, char)>,
    negated: bool,
}

impl CharSet {
    fn contains(&self, c: char) -> bool {
        self.ranges.iter().any(|(a, b)| (*a..=*b).contains(&c)) != self.negated
    }

    /// The set as an ERE bracket expression that never matches `/` (a glob class stays in its
    /// segment): `]`, `^` and `-` placed where ERE reads them as members. (A backslash in a class
    /// is a member in POSIX and an escape elsewhere: classes with one are not portable.)
    fn to_ere(&self) -> String {
        let mut members = String::new();
        let (mut close, mut caret, mut dash) = (false, false, false);
        for &(a, b) in &self.ranges {
            if a == b {
                match a {
                    ']' => close = true,
                    '^' => caret = true,
                    '-' => dash = true,
                    '/' if !self.negated => {}
                    c => members.push(c),
                }
            } else {
                members.push(a);
                members.push('-');
                members.push(b);
            }
        }
        if !self.negated && !close && !dash && members.is_empty() {
            // Only `/` (never inside a segment) or only `^`.
            return if caret { "\\^".into() } else { "(a^)".into() };
        }
        let mut out = String::from("[");
        if self.negated {
            out.push('^');
        }
        if close {
            out.push(']');
        }
        out.push_str(&members);
        if self.negated {
            out.push('/');
        }
        if caret {
            out.push('^');
        }
        if dash {
            out.push('-');
        }
        out.push(']');
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `to_ere` is `matches` written as a regular expression: both agree on every path.
    fn agree(pattern: &str, path: &str) -> bool {
        let re = regex::Regex::new(&to_ere(pattern)).expect("a valid ERE");
        re.is_match(path) == matches(pattern, path)
    }

    #[test]
    fn ere_agrees_on_the_documented_examples() {
        for (pattern, path) in [
            ("*.csv", "out.csv"),
            ("*.csv", "dir/out.csv"),
            ("out[0-9].csv", "out7.csv"),
            ("out[!0-9].csv", "out7.csv"),
            ("out[!0-9].csv", "outx.csv"),
            ("[]x].txt", "].txt"),
            ("./report.md", "report.md"),
            ("a\\*b", "a*b"),
            ("a\\*b", "axb"),
            ("**/*.cs", "Program.cs"),
            ("**/*.cs", "src/a/b/Program.cs"),
            ("src/**/test_*.py", "src/test_a.py"),
            ("src/**/test_*.py", "lib/test_a.py"),
            ("src/**", "src/a/b"),
            ("src/**", "lib/a"),
            ("*.{yml,yaml}", "ci.yaml"),
            ("weird{.txt", "weird{.txt"),
            ("a.b(c)+", "a.b(c)+"),
            ("a.b", "axb"),
            ("[^]", "^"),
        ] {
            assert!(
                agree(pattern, path),
                "{pattern} on {path}: {}",
                to_ere(pattern)
            );
        }
    }

    proptest::proptest! {
        #[test]
        fn ere_agrees_with_matches(
            pattern in "([a-c.*?/]|\\*\\*|\\[!?[a-c]\\]|\\{a,b\\}){0,6}",
            path in "[a-c.]{1,3}(/[a-c.]{1,3}){0,3}",
        ) {
            proptest::prop_assert!(agree(&pattern, &path), "{} on {}: {}", pattern, path, to_ere(&pattern));
        }
    }

    #[test]
    fn segment_wildcards_and_classes() {
        assert!(matches("*.csv", "out.csv"));
        assert!(!matches("*.csv", "dir/out.csv"), "* stays in one segment");
        assert!(matches("out?.csv", "out1.csv"));
        assert!(matches("out[0-9].csv", "out7.csv"));
        assert!(!matches("out[!0-9].csv", "out7.csv"));
        assert!(matches("[]x].txt", "].txt"));
        assert!(matches("./report.md", "report.md"));
        assert!(matches(".env", ".env"));
        assert!(matches("a\\*b", "a*b") && !matches("a\\*b", "axb"));
    }

    #[test]
    fn double_star_spans_zero_or_more_folders() {
        assert!(matches("**/*.cs", "Program.cs"));
        assert!(matches("**/*.cs", "src/a/b/Program.cs"));
        assert!(matches("src/**/test_*.py", "src/test_a.py"));
        assert!(matches("src/**/test_*.py", "src/x/y/test_a.py"));
        assert!(!matches("src/**/test_*.py", "lib/test_a.py"));
    }

    #[test]
    fn braces_expand_to_alternatives() {
        assert!(matches("*.{yml,yaml}", "ci.yaml"));
        assert!(matches("*.{yml,yaml}", "ci.yml"));
        assert!(!matches("*.{yml,yaml}", "ci.json"));
        assert!(matches("{a,b{c,d}}.txt", "bd.txt"));
        assert!(
            matches("weird{.txt", "weird{.txt"),
            "unclosed brace is literal"
        );
    }

    #[test]
    fn find_walks_files_and_skips_folders() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        std::fs::create_dir_all(root.join("src/deep")).unwrap();
        std::fs::create_dir_all(root.join(".agents/skills/s")).unwrap();
        std::fs::write(root.join("src/deep/a.rs"), "").unwrap();
        std::fs::write(root.join("b.rs"), "").unwrap();
        std::fs::write(root.join(".agents/skills/s/c.rs"), "").unwrap();
        let all = find(root, "**/*.rs", &[]);
        assert_eq!(all.len(), 3);
        let skipped = find(root, "**/*.rs", &[PathBuf::from(".agents/skills")]);
        assert_eq!(skipped, vec![root.join("b.rs"), root.join("src/deep/a.rs")]);
        assert!(find(root, "src", &[]).is_empty(), "folders are not files");
    }
}
