//! File references: Markdown links to relative paths, and bare `scripts/...`,
//! `references/...`, `assets/...` paths (the specification's own layout) anywhere in the body.
//! A reference must exist (SW211), use `/` (SW213), and not lead to files only reachable through
//! another referenced file (SW212: keep references one level deep).

use std::borrow::Cow;
use std::collections::BTreeSet;

use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

use super::super::context::Ctx;
use super::super::markdown::{Body, Link, link_targets, links};
use super::super::{Edit, Fix};
use crate::skill::SKILL_FILE;
use crate::text::Span;

/// Referenced Markdown files larger than this are not scanned for further references.
const MAX_SCANNED_REFERENCE_BYTES: u64 = 512 * 1024;
/// At most this many referenced files are scanned (keeps a keystroke check bounded).
const MAX_SCANNED_REFERENCES: usize = 64;

/// A relative path the skill points at.
#[derive(Debug, Clone)]
struct FileRef {
    /// The path as written, without `./`, fragment or query, percent-decoded.
    target: String,
    /// Where it is written.
    span: Span,
}

static BARE_PATH: LazyLock<Regex> = LazyLock::new(|| {
    crate::checks::pattern::compile(
        r"(?:scripts|references|assets)[/\\][A-Za-z0-9_.\\/-]*[A-Za-z0-9_]",
    )
});

static LICENSE_FILE: LazyLock<Regex> = LazyLock::new(|| {
    crate::checks::pattern::compile(r"\b(?:LICEN[SC]E|COPYING|NOTICE)(?:[-_.][A-Za-z0-9]+)*\b")
});

/// Run SW211-SW213 and SW215.
pub(super) fn check(ctx: &mut Ctx<'_>, body: &Body<'_>) {
    let layout = layout_dirs(ctx);
    let body_links = links(body);
    absolute_paths(ctx, &body_links);
    let refs = collect(&ctx.doc.text, body, &body_links, &layout);
    let mut existing = Vec::new();
    let mut missing: Vec<(&FileRef, usize)> = Vec::new();
    let mut known: HashMap<String, bool> = HashMap::new();
    for r in &refs {
        if r.target.contains('\\') {
            windows_path(ctx, r);
        }
        let normalized = r.target.replace('\\', "/");
        let found = *known
            .entry(normalized.clone())
            .or_insert_with(|| ctx.exists(&normalized));
        if found {
            existing.push(normalized);
        } else if let Some((_, n)) = missing.iter_mut().find(|(m, _)| m.target == r.target) {
            *n += 1;
        } else {
            missing.push((r, 1));
        }
    }
    for (r, n) in missing {
        let outside = if r.target.starts_with("..") {
            " (it is outside the skill folder)"
        } else {
            ""
        };
        let times = if n > 1 {
            format!("; referenced {n} times")
        } else {
            String::new()
        };
        ctx.report(
            "SW211",
            r.span,
            format!(
                "`{}` does not exist in the skill folder{outside}{times}",
                r.target
            ),
        );
    }
    license_file(ctx);
    nested(ctx, &refs, &existing);
}

/// The specification's folders that exist in the skill.
fn layout_dirs(ctx: &Ctx<'_>) -> Vec<&'static str> {
    ["scripts", "references", "assets"]
        .into_iter()
        .filter(|d| ctx.is_dir(d))
        .collect()
}

/// Every file reference in a Markdown text: links first, then bare layout paths not already
/// inside a link. A bare path is kept only when the skill has its top folder (`layout`): prose such as "the
/// build skill's `references/x.md`" names another skill's file, and a skill without a
/// `references/` folder cannot mean its own.
fn collect(text: &str, body: &Body<'_>, body_links: &[Link], layout: &[&str]) -> Vec<FileRef> {
    let mut out: Vec<FileRef> = body_links
        .iter()
        .filter_map(|l| {
            clean(&l.target).map(|target| FileRef {
                target,
                span: l.span,
            })
        })
        .collect();
    let link_spans: Vec<Span> = out.iter().map(|r| r.span).collect();
    if layout.is_empty() {
        return out;
    }
    let base = body.span.start;
    let scanned = body.slice();
    for m in BARE_PATH.find_iter(scanned) {
        if !starts_a_path(&scanned[..m.start()]) {
            continue;
        }
        let span = Span::new(base + m.start(), base + m.end());
        let last = m.as_str().rsplit(['/', '\\']).next().unwrap_or("");
        let top = m.as_str().split(['/', '\\']).next().unwrap_or("");
        let inside_link = link_spans
            .iter()
            .any(|l| l.start <= span.start && span.end <= l.end);
        if inside_link
            || !last.contains('.')
            || is_template(&text[span.end..])
            || !layout.contains(&top)
        {
            continue;
        }
        out.push(FileRef {
            target: m.as_str().to_string(),
            span,
        });
    }
    out.sort_by_key(|r| r.span.start);
    out
}

/// Whether a layout path whose text is preceded by `before` starts a skill-relative path: at
/// a word boundary, or after `./`, `${CLAUDE_SKILL_DIR}/` or `{baseDir}/` (not inside
/// `other/scripts/x`). The regex crate has no look-behind; this is it.
fn starts_a_path(before: &str) -> bool {
    let skill_root = [
        "./",
        "${CLAUDE_SKILL_DIR}/",
        "$CLAUDE_SKILL_DIR/",
        "{baseDir}/",
    ];
    if let Some(prefix) = skill_root.iter().find(|p| before.ends_with(*p)) {
        return starts_a_path(&before[..before.len() - prefix.len()]) || prefix.len() > 2;
    }
    before
        .chars()
        .next_back()
        .is_none_or(|c| !(c.is_ascii_alphanumeric() || "_./\\-".contains(c)))
}

/// A path followed by template syntax (`scripts/run.{sh,ps1}`, `assets/<name>.png`) names a
/// pattern, not a file.
fn is_template(after: &str) -> bool {
    after.starts_with(['{', '<', '*', '$', '['])
}

/// The file path a link target names, or None for URLs, anchors, absolute paths and templates.
///
/// Byte loops instead of `str::contains(&str)` and `trim_start_matches`: each of those builds
/// a substring searcher per call, and this runs for every link of every referenced file
/// (docs/benchmarks.md counts them). All the characters looked for are ASCII, so a byte test is the
/// same as a char test.
fn clean(target: &str) -> Option<String> {
    clean_borrowed(target).map(Cow::into_owned)
}

/// [`clean`] without the copy: most targets are their own cleaned path (no `%`, no `./`),
/// and the nested-reference scan only keeps the few that name another file.
fn clean_borrowed(target: &str) -> Option<Cow<'_, str>> {
    let bytes = target.as_bytes();
    let has_scheme = target.split_once(':').is_some_and(|(s, _)| {
        s.len() > 1
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'.' | b'-'))
    });
    if has_scheme
        || matches!(bytes.first(), Some(b'#' | b'/' | b'~'))
        || bytes
            .iter()
            .any(|b| matches!(b, b'<' | b'>' | b'{' | b'}' | b'*' | b'$' | b'|'))
        || bytes.windows(3).any(|w| w == b"...")
        || bytes.starts_with(b"\\\\")
        || is_drive_path(target)
    {
        return None;
    }
    let end = bytes
        .iter()
        .position(|b| matches!(b, b'#' | b'?'))
        .unwrap_or(bytes.len());
    let path = &target[..end];
    // Decoding allocates and re-validates UTF-8; almost no target has a `%`.
    let path: Cow<'_, str> = if memchr::memchr(b'%', path.as_bytes()).is_some() {
        percent_decode(path).into()
    } else {
        path.into()
    };
    let skip = dot_slash_prefix(&path);
    if path.len() == skip || &path[skip..] == "." {
        return None;
    }
    Some(match path {
        Cow::Borrowed(p) => Cow::Borrowed(&p[skip..]),
        Cow::Owned(p) => Cow::Owned(p[skip..].to_string()),
    })
}

/// The length of the leading run of `./` in `path` (what `trim_start_matches("./")` drops).
fn dot_slash_prefix(path: &str) -> usize {
    let bytes = path.as_bytes();
    let mut skip = 0;
    while bytes[skip..].starts_with(b"./") {
        skip += 2;
    }
    skip
}

/// `C:\x` or `C:/x`: absolute on Windows, never skill-relative.
/// SW215: links into one machine's file system (a home folder, a drive, `file://`). The skill
/// is installed on other machines, where the path does not exist or holds something else; a
/// link relative to the skill folder works everywhere.
fn absolute_paths(ctx: &mut Ctx<'_>, body_links: &[Link]) {
    for link in body_links {
        let target = link.target.as_str();
        let path = target
            .strip_prefix("file://")
            .map(|p| p.strip_prefix("localhost").unwrap_or(p));
        let local = path.is_some()
            || [
                "/Users/",
                "/home/",
                "/root/",
                "/private/",
                "/var/folders/",
                "/tmp/",
                "~/",
            ]
            .iter()
            .any(|p| target.starts_with(p))
            || is_drive_path(target);
        if local {
            ctx.report(
                "SW215",
                link.span,
                format!(
                    "`{}` is an absolute path on the author's machine; the skill is installed \
                     elsewhere, where it does not exist: link relative to the skill folder",
                    crate::checks::spec::truncate(target, 60)
                ),
            );
        }
    }
}

fn is_drive_path(target: &str) -> bool {
    let b = target.as_bytes();
    b.len() > 2 && b[0].is_ascii_alphabetic() && b[1] == b':' && (b[2] == b'\\' || b[2] == b'/')
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn windows_path(ctx: &mut Ctx<'_>, r: &FileRef) {
    let source = ctx.doc.slice(r.span);
    let fix = source.contains('\\').then(|| Fix {
        title: "Use `/` separators".into(),
        edits: vec![Edit {
            span: r.span,
            replacement: source.replace('\\', "/"),
        }],
    });
    ctx.report_fix(
        "SW213",
        r.span,
        format!(
            "`{}` uses Windows `\\` separators; write `{}`",
            r.target,
            r.target.replace('\\', "/")
        ),
        fix,
    );
}

/// `license: Proprietary. LICENSE.txt has complete terms` must ship LICENSE.txt.
fn license_file(ctx: &mut Ctx<'_>) {
    let doc = ctx.doc;
    let Some(entry) = doc.frontmatter_root().and_then(|r| r.get("license")) else {
        return;
    };
    let source = doc.slice(entry.value.span);
    for m in LICENSE_FILE.find_iter(source) {
        let name = m.as_str();
        let is_file_name = name.contains('.') || name.chars().all(|c| c.is_ascii_uppercase());
        if is_file_name && !ctx.exists(name) {
            let start = entry.value.span.start + m.start();
            ctx.report(
                "SW211",
                Span::new(start, start + name.len()),
                format!("`license` refers to `{name}`, which is not in the skill folder"),
            );
        }
    }
}

/// SW212: referenced Markdown files that link on to files SKILL.md itself does not reference.
///
/// Paths are compared relative to the skill folder, resolved lexically (`a/../b` is `b`), so
/// the result does not depend on how the folder was named on the command line (`.`, `../x`,
/// an absolute path).
fn nested(ctx: &mut Ctx<'_>, refs: &[FileRef], existing: &[String]) {
    let root = SkillRoot::new(ctx.dir);
    // A skill can reference one file hundreds of times: resolve each path once.
    let distinct: HashSet<&str> = existing.iter().map(String::as_str).collect();
    let direct: HashSet<String> = distinct
        .into_iter()
        .filter_map(|t| root.inside(t).map(Cow::into_owned))
        .collect();
    let mut seen = HashSet::new();
    for r in refs.iter().take(MAX_SCANNED_REFERENCES * 4) {
        if !r.target.ends_with(".md") {
            continue;
        }
        let target = r.target.replace('\\', "/");
        let file = root
            .inside(&target)
            .map_or_else(|| normalize(&target), Cow::into_owned);
        if !seen.insert(file.clone()) || seen.len() > MAX_SCANNED_REFERENCES {
            continue;
        }
        let further = further_references(ctx, &root, &file, &direct);
        if let Some(first) = further.first() {
            let more = match further.len() {
                1 => String::new(),
                n => format!(" and {} more", n - 1),
            };
            ctx.report(
                "SW212",
                r.span,
                format!(
                    "`{target}` refers on to `{first}`{more}, which SKILL.md does not link; link \
                     them from SKILL.md so agents read them whole"
                ),
            );
        }
    }
}

/// Skill-relative paths of existing files that `file` (skill-relative, normalized) links and
/// SKILL.md does not.
///
/// Most links in a referenced file are URLs, anchors or files SKILL.md links too, so the
/// file's lines are scanned for code blocks only once a link survives every other test: a
/// link inside a code block does not count, and asking that last gives the same set.
fn further_references(
    ctx: &Ctx<'_>,
    root: &SkillRoot<'_>,
    file: &str,
    direct: &HashSet<String>,
) -> Vec<String> {
    let Some(text) = ctx.text(file, MAX_SCANNED_REFERENCE_BYTES) else {
        return Vec::new();
    };
    let bytes = text.as_bytes();
    if memchr::memmem::find(bytes, b"](").is_none() && memchr::memmem::find(bytes, b"]:").is_none()
    {
        return Vec::new();
    }
    let body = std::cell::OnceCell::new();
    let base = file.rsplit_once('/').map_or("", |(dir, _)| dir);
    let keep = |candidate: &str| {
        candidate != SKILL_FILE
            && candidate != file
            && !direct.contains(candidate)
            && ctx.is_file(candidate)
    };
    let mut out = BTreeSet::new();
    // `base/target`, rebuilt in one buffer per link instead of a `format!` each time.
    let mut joined = String::new();
    // Links only: an agent follows a link to read on; a path mentioned in running text
    // ("run scripts/x.py") is an instruction, not a chain of reading.
    for span in link_targets(&text) {
        let Some(target) = clean_borrowed(&text[span.start..span.end]) else {
            continue;
        };
        let target = forward_slashes(target);
        let from_file = if base.is_empty() {
            root.inside(&target)
        } else {
            joined.clear();
            joined.push_str(base);
            joined.push('/');
            joined.push_str(&target);
            root.inside(&joined)
        };
        // With no base the fallback below is the same lookup again: skipped.
        let candidate = match from_file.filter(|c| keep(c)) {
            Some(c) => c,
            None if base.is_empty() => continue,
            None => match root.inside(&target).filter(|c| keep(c)) {
                Some(c) => c,
                None => continue,
            },
        };
        let body = body.get_or_init(|| Body::scan(&text, Span::new(0, text.len())));
        if !body.is_code_at(span.start) {
            out.insert(candidate.into_owned());
        }
    }
    out.into_iter().collect()
}

/// `path` with backslashes replaced by `/`, copied only when it has one.
fn forward_slashes(path: Cow<'_, str>) -> Cow<'_, str> {
    if memchr::memchr(b'\\', path.as_bytes()).is_some() {
        Cow::Owned(path.replace('\\', "/"))
    } else {
        path
    }
}

/// The skill folder, for resolving relative paths against it without touching the disk.
struct SkillRoot<'a> {
    dir: &'a Path,
    /// The folder as an absolute, normalized path, computed when a path leaves the folder.
    absolute: std::cell::OnceCell<Option<String>>,
    /// Answers for paths that are not normal so far: a skill's files link the same few such
    /// paths (`../SKILL.md`, `../scripts/x.py`) over and over, and each costs a normalization.
    resolved: std::cell::RefCell<HashMap<String, Option<String>>>,
}

impl<'a> SkillRoot<'a> {
    fn new(dir: &'a Path) -> SkillRoot<'a> {
        SkillRoot {
            dir,
            absolute: std::cell::OnceCell::new(),
            resolved: Default::default(),
        }
    }

    /// `rel` (a `/`-separated path relative to the folder) resolved lexically, when it names
    /// something inside the folder (not the folder itself). A path that leaves the folder can
    /// come back in through the folder's own name (`../my-skill/x.md`).
    fn inside<'r>(&self, rel: &'r str) -> Option<Cow<'r, str>> {
        // A normal path is its own answer (see `resolve`), borrowed; others are remembered.
        if is_normal(rel) {
            return Some(Cow::Borrowed(rel));
        }
        if let Some(known) = self.resolved.borrow().get(rel) {
            return known.clone().map(Cow::Owned);
        }
        let found = self.resolve(rel);
        self.resolved
            .borrow_mut()
            .insert(rel.to_string(), found.clone());
        found.map(Cow::Owned)
    }

    /// [`SkillRoot::inside`], computed.
    fn resolve(&self, rel: &str) -> Option<String> {
        let normalized = normalize(rel);
        if normalized.is_empty() {
            return None;
        }
        let leaves = normalized == ".." || normalized.starts_with("../");
        if !leaves && !normalized.starts_with('/') {
            return Some(normalized);
        }
        let root = self
            .absolute
            .get_or_init(|| {
                let absolute = std::path::absolute(self.dir).ok()?;
                absolute.to_str().map(normalize)
            })
            .as_deref()?;
        if leaves && root != "/" {
            return back_inside(root, &normalized);
        }
        let joined = if leaves {
            normalize(&format!("{root}/{normalized}"))
        } else {
            normalized
        };
        joined
            .strip_prefix(root)
            .and_then(|rest| rest.strip_prefix('/'))
            .filter(|rest| !rest.is_empty())
            .map(str::to_string)
    }
}

/// The part of `up` (a normalized relative path starting with `..`) that lies inside `root`
/// (a normalized absolute path other than `/`), comparing path parts instead of joining and
/// normalizing the whole absolute path: `../my-skill/x.md` from `/a/my-skill` is `x.md`.
fn back_inside(root: &str, up: &str) -> Option<String> {
    let ups = up.split('/').take_while(|p| *p == "..").count();
    // What follows the `..` parts (`up` is normalized: no `..` after them).
    let rest = up.splitn(ups + 1, '/').nth(ups).unwrap_or("");
    // `..` past `/` stays at `/`, as `normalize` does for an absolute path.
    let climbed = ups.min(root[1..].split('/').count());
    if climbed == 0 {
        return (!rest.is_empty()).then(|| rest.to_string());
    }
    // The last `climbed` parts of the root, as one string: `rest` must start with them.
    let tail_start = root
        .rmatch_indices('/')
        .nth(climbed - 1)
        .map_or(0, |(i, _)| i + 1);
    let inner = rest.strip_prefix(&root[tail_start..])?.strip_prefix('/')?;
    (!inner.is_empty()).then(|| inner.to_string())
}

/// Whether `path` is relative and already normal (`references/x.md`): no empty, `.` or `..`
/// part (so it does not start with `/` either). Most paths are; [`normalize`] returns them
/// as they are. A byte loop: this runs for every link of every referenced file.
fn is_normal(path: &str) -> bool {
    path.as_bytes()
        .split(|b| *b == b'/')
        .all(|part| !matches!(part, b"" | b"." | b".."))
}

/// Resolve `.` and `..` in a `/`-separated path lexically (the files may not exist, and
/// symlinks are not followed). A relative path keeps the `..` that leave its start (`../x`);
/// an absolute one stays absolute, and `..` at `/` is `/`.
fn normalize(path: &str) -> String {
    if is_normal(path) {
        return path.to_string();
    }
    let absolute = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." if parts.last().is_some_and(|p| *p != "..") => {
                parts.pop();
            }
            ".." if absolute => {}
            other => parts.push(other),
        }
    }
    let joined = parts.join("/");
    if absolute {
        format!("/{joined}")
    } else {
        joined
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refs(text: &str) -> Vec<String> {
        let body = Body::scan(text, Span::new(0, text.len()));
        collect(
            text,
            &body,
            &links(&body),
            &["scripts", "references", "assets"],
        )
        .into_iter()
        .map(|r| r.target)
        .collect()
    }

    #[test]
    fn finds_links_and_layout_paths() {
        let text = "See [a](references/a.md#top) and [w](https://x.io/a.md).\nRun `python scripts/run.py --x`.\n```bash\nbash ${CLAUDE_SKILL_DIR}/scripts/go.sh\n```\nAlso other/scripts/no.py and assets/tpl.{html,md} and scripts/dir\n";
        assert_eq!(
            refs(text),
            vec!["references/a.md", "scripts/run.py", "scripts/go.sh"]
        );
    }

    /// `clean` as it was written first (substring searches), the oracle for the byte loops.
    fn clean_by_str(target: &str) -> Option<String> {
        let has_scheme = target.split_once(':').is_some_and(|(s, _)| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c))
                && s.len() > 1
        });
        if has_scheme
            || target.starts_with(['#', '/', '~'])
            || target.contains(['<', '>', '{', '}', '*', '$', '|'])
            || target.contains("...")
            || target.starts_with("\\\\")
            || is_drive_path(target)
        {
            return None;
        }
        let path = target.split(['#', '?']).next().unwrap_or("");
        let path = if path.contains('%') {
            percent_decode(path)
        } else {
            path.to_string()
        };
        let path = path.trim_start_matches("./");
        (!path.is_empty() && path != ".").then(|| path.to_string())
    }

    proptest::proptest! {
        #[test]
        fn clean_agrees_with_the_substring_version(
            target in "[a-z./#?%:~<>{}*$|\\\\0-9 é-]{0,24}"
        ) {
            proptest::prop_assert_eq!(clean(&target), clean_by_str(&target));
        }
    }

    #[test]
    fn cleans_targets() {
        assert_eq!(clean("./docs/a%20b.md?x=1").as_deref(), Some("docs/a b.md"));
        assert_eq!(clean("mailto:a@b.c"), None);
        assert_eq!(clean("#section"), None);
        assert_eq!(clean("/etc/passwd"), None);
        assert_eq!(clean("refs/<name>.md"), None);
        assert_eq!(clean("C:\\x\\y.md"), None);
    }

    #[test]
    fn paths_start_at_boundaries_or_skill_root_prefixes() {
        assert!(starts_a_path(""));
        assert!(starts_a_path("run "));
        assert!(starts_a_path("`"));
        assert!(starts_a_path("x ./"));
        assert!(starts_a_path("python ${CLAUDE_SKILL_DIR}/"));
        assert!(!starts_a_path("other/"));
        assert!(!starts_a_path("my-"));
    }

    #[test]
    fn windows_separators_are_references_too() {
        assert_eq!(
            refs("Open references\\guide.md now\n"),
            vec!["references\\guide.md"]
        );
    }

    #[test]
    fn paths_resolve_inside_the_folder_however_it_is_named() {
        assert_eq!(normalize("a/./b/../c.md"), "a/c.md");
        assert_eq!(normalize("../x/../../y"), "../../y");
        assert_eq!(normalize("/a/../../b"), "/b");
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("my-skill");
        let root = SkillRoot::new(&dir);
        assert_eq!(
            root.inside("references/a.md").as_deref(),
            Some("references/a.md")
        );
        assert_eq!(root.inside("../my-skill/a.md").as_deref(), Some("a.md"));
        assert_eq!(root.inside("../other/a.md"), None);
        assert_eq!(root.inside("../my-skill"), None);
        assert_eq!(root.inside("../../../../../../../../../../x"), None);
        let parts: Vec<&str> = dir.to_str().unwrap()[1..].split('/').collect();
        let from_top = format!(
            "{}/{}/deep.md",
            "../".repeat(parts.len() + 3),
            parts.join("/")
        );
        assert_eq!(root.inside(&from_top).as_deref(), Some("deep.md"));
        assert_eq!(root.inside("./"), None);
        let absolute = format!("{}/b.md", dir.display());
        assert_eq!(root.inside(&absolute).as_deref(), Some("b.md"));
        let dotted = tmp.path().join("my-skill/../my-skill");
        assert_eq!(
            SkillRoot::new(&dotted)
                .inside("../my-skill/c.md")
                .as_deref(),
            Some("c.md")
        );
    }

    #[test]
    fn dot_dot_inside_the_folder_resolves_lexically() {
        let root = SkillRoot::new(std::path::Path::new("/tmp/x/my-skill"));
        assert_eq!(
            root.inside("references/../scripts/x.py").as_deref(),
            Some("scripts/x.py")
        );
        assert_eq!(root.inside("./a//b/.").as_deref(), Some("a/b"));
        assert_eq!(root.inside("a/.."), None);
    }

    #[test]
    fn climbing_back_in_matches_joining_and_normalizing() {
        let slow = |root: &str, up: &str| {
            normalize(&format!("{root}/{up}"))
                .strip_prefix(root)
                .and_then(|rest| rest.strip_prefix('/'))
                .filter(|rest| !rest.is_empty())
                .map(str::to_string)
        };
        for root in ["/a", "/a/b", "/a/b/skill", "/x/skill"] {
            for up in [
                "..",
                "../skill",
                "../skill/x.md",
                "../../b/skill/y/z.md",
                "../skillx/a",
                "../../../../a/b/skill/q",
                "../../../..",
                "../b",
                "../../a/b",
            ] {
                assert_eq!(back_inside(root, up), slow(root, up), "{root} {up}");
            }
        }
    }

    #[test]
    fn nested_references_are_found_through_a_dotted_folder_path() {
        use super::super::super::test_support::GOOD;
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("good-skill");
        std::fs::create_dir_all(dir.join("references")).unwrap();
        std::fs::write(dir.join("references/guide.md"), "See [deep](deep.md).\n").unwrap();
        std::fs::write(dir.join("references/deep.md"), "# Deep\n").unwrap();
        let text = format!("{GOOD}\nSee [guide](references/guide.md).\n");
        let doc = crate::skill::SkillDocument::parse(text);
        let options = super::super::super::CheckOptions::default();
        for spelled in [dir.clone(), tmp.path().join("good-skill/../good-skill")] {
            let found = super::super::super::check_skill_document(
                &spelled,
                &spelled.join(SKILL_FILE),
                &doc,
                &options,
            );
            let rules: Vec<_> = found.iter().map(|d| d.rule).collect();
            assert_eq!(rules, vec!["SW212"], "{}", spelled.display());
        }
    }
}
