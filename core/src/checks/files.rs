//! The files of one skill folder, listed once and read once for a whole check.
//!
//! Several rules look at the folder: the credential scan reads every text file, file
//! references ask whether a path exists and read the Markdown files SKILL.md links, SW308
//! lists scripts/. Asking the file system each time costs a system call per question (a
//! `stat` per reference, a second open and read of every referenced file); over a corpus of
//! skills those calls cost more than the checks. One walk answers all of them.
//!
//! The listing answers only what it knows for certain: a path through a symlink, into a
//! folder the walk skips (`.git`, `node_modules`, ...), or in a folder walked only in part
//! is asked of the file system, exactly as before.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use walkdir::WalkDir;

use crate::skill::{LoadError, SKILL_FILE, SKIPPED_DIRS};

/// At most this many files of one skill are read (and scanned for credentials).
pub(crate) const MAX_SCANNED_FILES: usize = 2_000;
/// Files larger than this are not read.
pub(crate) const MAX_READ_BYTES: u64 = 1024 * 1024;
/// Text kept in memory for one skill; files read after that are read again when needed, so
/// a skill with thousands of large files cannot hold them all at once.
const MAX_KEPT_BYTES: usize = 32 * 1024 * 1024;

/// What a folder entry is, without following symlinks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    File,
    Dir,
    Symlink,
    /// Sockets, FIFOs, devices.
    Other,
}

/// What reading a file gave.
#[derive(Debug)]
pub(crate) enum Content {
    /// Not read (not among the scanned files, binary by its extension, past the memory
    /// budget, or the read failed): ask the file system.
    Unread,
    /// Larger than [`MAX_READ_BYTES`].
    TooLarge,
    /// Not valid UTF-8.
    NotUtf8,
    /// The file's text (it may still hold NUL bytes).
    Text(String),
}

/// One entry of the folder.
#[derive(Debug)]
pub(crate) struct Entry {
    /// The path as the walk produced it (the folder joined with the relative path).
    pub path: PathBuf,
    /// What it is.
    pub kind: Kind,
    /// For folders: whether the walk listed its entries (skipped folders are not listed).
    listed: bool,
    /// Whether the file is one of the skill's files the credential scan covers.
    pub scanned: bool,
    /// The text, for scanned files.
    pub content: Content,
}

/// The skill folder's entries, keyed by `/`-separated path relative to the folder.
#[derive(Debug)]
pub(crate) struct SkillFiles {
    entries: Vec<Entry>,
    index: HashMap<String, usize>,
    /// Whether every listed folder was listed whole (no walk error, no file limit reached).
    complete: bool,
}

/// What the listing knows about a path.
enum Known<'a> {
    /// The entry at the path.
    Entry(&'a Entry),
    /// Nothing is at the path.
    Absent,
    /// The listing cannot tell (symlink, skipped folder, odd path): ask the file system.
    Unknown,
}

impl SkillFiles {
    /// Walk `dir` (sorted, symlinks not followed, [`SKIPPED_DIRS`] not entered) and read its
    /// files other than SKILL.md, at most [`MAX_SCANNED_FILES`] of them, skipping files whose
    /// extension says they are binary.
    pub fn read(dir: &Path) -> SkillFiles {
        let mut files = SkillFiles {
            entries: Vec::new(),
            index: HashMap::new(),
            complete: true,
        };
        let prefix = walk_prefix(dir);
        let mut scanned = 0;
        let mut kept = 0;
        let mut walk = WalkDir::new(dir)
            .follow_links(false)
            .sort_by_file_name()
            .into_iter();
        while let Some(item) = walk.next() {
            let Ok(e) = item else {
                files.complete = false;
                continue;
            };
            if e.depth() == 0 {
                continue;
            }
            if scanned == MAX_SCANNED_FILES {
                // The credential scan stops here; so does the listing.
                files.complete = false;
                break;
            }
            let Some(rel) = relative_fast(&prefix, e.path()).or_else(|| relative(dir, e.path()))
            else {
                files.complete = false;
                continue;
            };
            let file_type = e.file_type();
            let kind = if file_type.is_file() {
                Kind::File
            } else if file_type.is_dir() {
                Kind::Dir
            } else if file_type.is_symlink() {
                Kind::Symlink
            } else {
                Kind::Other
            };
            let skipped = kind == Kind::Dir
                && e.file_name()
                    .to_str()
                    .is_some_and(|n| SKIPPED_DIRS.contains(&n));
            if skipped {
                walk.skip_current_dir();
            }
            let is_scanned = kind == Kind::File && !(e.depth() == 1 && e.file_name() == SKILL_FILE);
            scanned += usize::from(is_scanned);
            let content = if is_scanned && !is_binary_by_name(e.path()) && kept <= MAX_KEPT_BYTES {
                read_text(e.path())
            } else {
                Content::Unread
            };
            if let Content::Text(text) = &content {
                kept += text.len();
            }
            files.index.insert(rel, files.entries.len());
            files.entries.push(Entry {
                path: e.into_path(),
                kind,
                listed: kind == Kind::Dir && !skipped,
                scanned: is_scanned,
                content,
            });
        }
        files
    }

    /// The entries in walk order.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// Whether `rel` (relative to the folder) is a file, following symlinks as
    /// `Path::is_file` does.
    pub fn is_file(&self, dir: &Path, rel: &str) -> bool {
        match self.lookup(rel) {
            Known::Entry(e) if e.kind != Kind::Symlink => e.kind == Kind::File,
            Known::Absent => false,
            _ => dir.join(rel).is_file(),
        }
    }

    /// Whether `rel` is a folder, following symlinks.
    pub fn is_dir(&self, dir: &Path, rel: &str) -> bool {
        match self.lookup(rel) {
            Known::Entry(e) if e.kind != Kind::Symlink => e.kind == Kind::Dir,
            Known::Absent => false,
            _ => dir.join(rel).is_dir(),
        }
    }

    /// Whether anything is at `rel`, following symlinks.
    pub fn exists(&self, dir: &Path, rel: &str) -> bool {
        match self.lookup(rel) {
            Known::Entry(e) if e.kind != Kind::Symlink => true,
            Known::Absent => false,
            _ => dir.join(rel).exists(),
        }
    }

    /// The text of the file at `rel` if it is a UTF-8 file of at most `limit` bytes: from
    /// memory when the walk read it, else from disk.
    pub fn text(&self, dir: &Path, rel: &str, limit: u64) -> Option<std::borrow::Cow<'_, str>> {
        match self.lookup(rel) {
            Known::Absent => None,
            Known::Entry(e) if e.kind != Kind::Symlink => match &e.content {
                Content::Text(text) if text.len() as u64 <= limit => Some(text.as_str().into()),
                Content::Text(_) | Content::TooLarge | Content::NotUtf8 => None,
                Content::Unread if e.kind == Kind::File => read_limited(&e.path, limit),
                Content::Unread => None,
            },
            _ => read_limited(&dir.join(rel), limit),
        }
    }

    /// The text of the regular file at `rel` when the walk read it and keeps it in memory;
    /// None means "read it from disk", never "it does not exist".
    pub fn kept_text(&self, rel: &str) -> Option<&str> {
        match self.lookup(rel) {
            Known::Entry(e) if e.kind == Kind::File => match &e.content {
                Content::Text(text) => Some(text),
                _ => None,
            },
            _ => None,
        }
    }

    /// The entries below the folder `rel` in walk order, or None when the listing does not
    /// hold all of them (a skipped folder or a symlink inside, or an incomplete walk).
    pub fn below(&self, rel: &str) -> Option<Vec<(&str, &Entry)>> {
        let Known::Entry(top) = self.lookup(rel) else {
            return None;
        };
        if !self.complete || top.kind != Kind::Dir || !top.listed {
            return None;
        }
        let prefix = format!("{rel}/");
        let mut below: Vec<(&str, &Entry)> = self
            .index
            .iter()
            .filter(|(k, _)| k.starts_with(&prefix))
            .map(|(k, i)| (k.as_str(), &self.entries[*i]))
            .collect();
        if below.iter().any(|(_, e)| e.kind == Kind::Dir && !e.listed) {
            return None;
        }
        below.sort_by_key(|(k, _)| *k);
        Some(below)
    }

    fn lookup(&self, rel: &str) -> Known<'_> {
        if !cfg!(unix) || rel.is_empty() {
            return Known::Unknown;
        }
        let mut end = 0;
        for part in rel.split('/') {
            if matches!(part, "" | "." | "..") {
                return Known::Unknown;
            }
            end += part.len();
            let prefix = &rel[..end];
            let Some(&i) = self.index.get(prefix) else {
                return if self.complete {
                    Known::Absent
                } else {
                    Known::Unknown
                };
            };
            let entry = &self.entries[i];
            if end == rel.len() {
                return Known::Entry(entry);
            }
            match entry.kind {
                Kind::Dir if entry.listed => {}
                Kind::File | Kind::Other => return Known::Absent,
                _ => return Known::Unknown,
            }
            end += 1;
        }
        Known::Unknown
    }
}

/// `path` relative to `dir` as a `/`-separated string (None for non-UTF-8 names).
pub(crate) fn relative(dir: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(dir).ok()?;
    let mut out = String::new();
    for part in rel.components() {
        if !out.is_empty() {
            out.push('/');
        }
        out.push_str(part.as_os_str().to_str()?);
    }
    Some(out)
}

/// The bytes every path the walk of `dir` yields starts with: `dir` and a separator (walkdir
/// builds child paths with `Path::join`).
fn walk_prefix(dir: &Path) -> Vec<u8> {
    let mut prefix = dir.as_os_str().as_encoded_bytes().to_vec();
    if !prefix.ends_with(b"/") {
        prefix.push(b'/');
    }
    prefix
}

/// [`relative`] for a path the walk produced, by cutting `prefix` off its bytes: the walk calls
/// this for every entry, and comparing components (what `strip_prefix` does) cost more than
/// reading small files. None when the path does not start with `prefix` (then [`relative`]
/// decides), has a `.`/`..` part or an empty part, or is not UTF-8.
fn relative_fast(prefix: &[u8], path: &Path) -> Option<String> {
    let rest = path.as_os_str().as_encoded_bytes().strip_prefix(prefix)?;
    let rel = std::str::from_utf8(rest).ok()?;
    if !cfg!(unix) || rel.split('/').any(|p| matches!(p, "" | "." | "..")) {
        return None;
    }
    Some(rel.to_string())
}

/// Extensions of files that are never text: skipped unread.
const BINARY_EXTENSIONS: &[&str] = &[
    "png",
    "jpg",
    "jpeg",
    "gif",
    "webp",
    "ico",
    "bmp",
    "tif",
    "tiff",
    "pdf",
    "zip",
    "gz",
    "tgz",
    "bz2",
    "xz",
    "zst",
    "7z",
    "tar",
    "whl",
    "jar",
    "so",
    "dylib",
    "dll",
    "exe",
    "bin",
    "o",
    "a",
    "pyc",
    "onnx",
    "pt",
    "pth",
    "safetensors",
    "npy",
    "npz",
    "h5",
    "parquet",
    "mp3",
    "mp4",
    "wav",
    "mov",
    "woff",
    "woff2",
    "ttf",
    "otf",
    "sqlite",
    "db",
];

/// Whether the file's extension says it is binary (it is then never read).
pub(crate) fn is_binary_by_name(path: &std::path::Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| BINARY_EXTENSIONS.iter().any(|b| b.eq_ignore_ascii_case(e)))
}

/// A file's text if it is UTF-8 and at most `limit` bytes.
pub(crate) fn read_text_at_most(path: &Path, limit: u64) -> Option<String> {
    String::from_utf8(read_bytes(path, limit).ok()?).ok()
}

/// Read a file of at most [`MAX_READ_BYTES`]: one open, one stat, one read.
fn read_text(path: &Path) -> Content {
    match read_bytes(path, MAX_READ_BYTES) {
        Err(Unreadable::TooLarge) => Content::TooLarge,
        Err(Unreadable::Failed) => Content::Unread,
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(text) => Content::Text(text),
            Err(_) => Content::NotUtf8,
        },
    }
}

enum Unreadable {
    TooLarge,
    Failed,
}

fn read_bytes(path: &Path, limit: u64) -> Result<Vec<u8>, Unreadable> {
    crate::skill::read_bounded(path, limit).map_err(|e| match e {
        LoadError::TooLarge { .. } => Unreadable::TooLarge,
        _ => Unreadable::Failed,
    })
}

/// A regular file's text from disk if it is UTF-8 and at most `limit` bytes (symlinks
/// followed), as `fs::metadata` and `fs::read_to_string` see it.
pub(crate) fn read_limited(path: &Path, limit: u64) -> Option<std::borrow::Cow<'static, str>> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > limit {
        return None;
    }
    std::fs::read_to_string(path).ok().map(Into::into)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &[u8])]) -> tempfile::TempDir {
        let tmp = tempfile::tempdir().unwrap();
        for (path, content) in files {
            let path = tmp.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, content).unwrap();
        }
        tmp
    }

    #[test]
    fn relative_fast_agrees_with_relative() {
        for dir in ["skills/a", "skills/a/", "./skills/a", "/abs/a"] {
            let dir = Path::new(dir);
            let prefix = walk_prefix(dir);
            for rel in ["x.md", "references/deep/y.md", "caf\u{e9}.txt"] {
                let path = dir.join(rel);
                assert_eq!(
                    relative_fast(&prefix, &path),
                    relative(dir, &path),
                    "{path:?}"
                );
                assert_eq!(relative_fast(&prefix, &path).as_deref(), Some(rel));
            }
        }
        let dir = Path::new("skills/a");
        let odd = dir.join("./x/../y");
        assert_eq!(relative_fast(&walk_prefix(dir), &odd), None);
    }

    #[test]
    fn answers_like_the_file_system() {
        let tmp = tree(&[
            ("SKILL.md", b"---\n---\n"),
            ("references/a.md", b"# A\n"),
            ("scripts/node_modules/x.js", b"x"),
            ("assets/logo.png", b"\x89PNG"),
            ("data.bin", b"a\0b"),
            ("latin1.txt", b"caf\xe9"),
        ]);
        let dir = tmp.path();
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(dir.join("references"), dir.join("linked")).unwrap();
            std::os::unix::fs::symlink(dir.join("gone"), dir.join("dangling")).unwrap();
        }
        let files = SkillFiles::read(dir);
        let paths = [
            "SKILL.md",
            "references",
            "references/a.md",
            "references/b.md",
            "references/a.md/x",
            "scripts/node_modules",
            "scripts/node_modules/x.js",
            "scripts/node_modules/y.js",
            "linked/a.md",
            "linked",
            "dangling",
            "nothing/here.md",
            "./references/a.md",
            "references/../references/a.md",
            "references/",
        ];
        for rel in paths {
            let path = dir.join(rel);
            assert_eq!(files.exists(dir, rel), path.exists(), "exists {rel}");
            assert_eq!(files.is_file(dir, rel), path.is_file(), "is_file {rel}");
            assert_eq!(files.is_dir(dir, rel), path.is_dir(), "is_dir {rel}");
            assert_eq!(
                files.text(dir, rel, 1024).map(|t| t.into_owned()),
                read_limited(&path, 1024).map(|t| t.into_owned()),
                "text {rel}"
            );
        }
        assert_eq!(
            files.text(dir, "references/a.md", 2),
            None,
            "over the limit"
        );
        let scanned: Vec<&str> = files
            .entries()
            .iter()
            .filter(|e| e.scanned)
            .map(|e| e.path.strip_prefix(dir).unwrap().to_str().unwrap())
            .collect();
        assert_eq!(
            scanned,
            vec![
                "assets/logo.png",
                "data.bin",
                "latin1.txt",
                "references/a.md"
            ]
        );
        assert!(
            matches!(files.entries()[0].content, Content::Unread),
            "png unread"
        );
        // scripts/ holds a skipped folder: the listing cannot say what is below it.
        assert!(files.below("scripts").is_none());
        let below: Vec<&str> = files
            .below("references")
            .unwrap()
            .into_iter()
            .map(|(rel, _)| rel)
            .collect();
        assert_eq!(below, vec!["references/a.md"]);
    }

    #[test]
    fn an_incomplete_walk_asks_the_file_system() {
        let many: Vec<(String, &[u8])> = (0..MAX_SCANNED_FILES + 5)
            .map(|i| (format!("f/{i:05}.txt"), &b"x"[..]))
            .collect();
        let refs: Vec<(&str, &[u8])> = many.iter().map(|(p, c)| (p.as_str(), *c)).collect();
        let tmp = tree(&refs);
        let files = SkillFiles::read(tmp.path());
        assert_eq!(
            files.entries().iter().filter(|e| e.scanned).count(),
            MAX_SCANNED_FILES
        );
        let last = format!("f/{:05}.txt", MAX_SCANNED_FILES + 4);
        assert!(
            files.is_file(tmp.path(), &last),
            "beyond the limit, found on disk"
        );
    }
}
