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

use foldhash::{HashMap, HashMapExt};
use std::path::{Path, PathBuf};

#[cfg(any(not(any(target_os = "linux", target_os = "android")), test))]
use walkdir::WalkDir;

use crate::skill::{LoadError, SKILL_FILE, SKIPPED_DIRS};

#[cfg(any(target_os = "linux", target_os = "android"))]
mod walk;

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

/// The listing being built by a walk, with the credential scan's budget.
struct Collect {
    files: SkillFiles,
    /// Scanned files so far (at most [`MAX_SCANNED_FILES`]).
    scanned: usize,
    /// Bytes of text kept so far.
    kept: usize,
}

impl Collect {
    fn new() -> Collect {
        Collect {
            files: SkillFiles {
                entries: Vec::new(),
                index: HashMap::new(),
                complete: true,
            },
            scanned: 0,
            kept: 0,
        }
    }

    /// Whether [`MAX_SCANNED_FILES`] files are taken: the credential scan stops there, and
    /// so does the listing (which is then incomplete). Asked before each entry.
    fn full(&mut self) -> bool {
        if self.scanned == MAX_SCANNED_FILES {
            self.files.complete = false;
        }
        self.scanned == MAX_SCANNED_FILES
    }

    /// Record the entry at `path` (`rel` relative to the folder; an entry whose relative
    /// path is not UTF-8 is left out and makes the listing incomplete). `read` gives a
    /// scanned file's content, and is called only when the file is to be read.
    fn add(
        &mut self,
        rel: Option<String>,
        path: PathBuf,
        kind: Kind,
        skipped: bool,
        skill_md: bool,
        read: impl FnOnce(&Path) -> Content,
    ) {
        let Some(rel) = rel else {
            self.files.complete = false;
            return;
        };
        let scanned = kind == Kind::File && !skill_md;
        self.scanned += usize::from(scanned);
        let content = if scanned && !is_binary_by_name(&path) && self.kept <= MAX_KEPT_BYTES {
            read(&path)
        } else {
            Content::Unread
        };
        if let Content::Text(text) = &content {
            self.kept += text.len();
        }
        self.files.index.insert(rel, self.files.entries.len());
        self.files.entries.push(Entry {
            path,
            kind,
            listed: kind == Kind::Dir && !skipped,
            scanned,
            content,
        });
    }
}

impl SkillFiles {
    /// Walk `dir` (sorted, symlinks not followed, [`SKIPPED_DIRS`] not entered) and read its
    /// files other than SKILL.md, at most [`MAX_SCANNED_FILES`] of them, skipping files whose
    /// extension says they are binary.
    pub fn read(dir: &Path) -> SkillFiles {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        return Self::read_by_descriptor(dir);
        #[cfg(not(any(target_os = "linux", target_os = "android")))]
        return Self::read_with_walkdir(dir);
    }

    /// [`SkillFiles::read`] with [`walk::Walk`], which lists and reads relative to each
    /// folder's descriptor (`getdents64` is Linux's). It yields what walkdir yields, so the
    /// loop is [`SkillFiles::read_with_walkdir`]'s.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    fn read_by_descriptor(dir: &Path) -> SkillFiles {
        let mut collect = Collect::new();
        let mut walk = walk::Walk::new(dir);
        while let Some(item) = walk.next() {
            if collect.full() {
                break;
            }
            let skipped = item.kind == Kind::Dir
                && item.name.to_str().is_ok_and(|n| SKIPPED_DIRS.contains(&n));
            if item.kind == Kind::Dir && !skipped {
                walk.enter(&item);
            }
            let skill_md = item.depth == 1 && item.name.as_bytes() == SKILL_FILE.as_bytes();
            let walk::Item {
                path,
                name,
                depth,
                kind,
                rel,
            } = item;
            collect.add(rel, path, kind, skipped, skill_md, |path| {
                text_content(walk.read(depth, &name, path, MAX_READ_BYTES))
            });
        }
        // walkdir's errors (a folder not opened or listed, an entry's type not read) only
        // clear `complete`, wherever they fall in the walk: one flag at the end is the same.
        collect.files.complete &= !walk.failed();
        collect.files
    }

    /// [`SkillFiles::read`] with walkdir, where the descriptor walk is not built (and in tests,
    /// to compare the two).
    #[cfg(any(not(any(target_os = "linux", target_os = "android")), test))]
    fn read_with_walkdir(dir: &Path) -> SkillFiles {
        let mut collect = Collect::new();
        let prefix = walk_prefix(dir);
        let mut walk = WalkDir::new(dir)
            .follow_links(false)
            .sort_by_file_name()
            .into_iter();
        while let Some(item) = walk.next() {
            let Ok(e) = item else {
                collect.files.complete = false;
                continue;
            };
            if e.depth() == 0 {
                continue;
            }
            if collect.full() {
                break;
            }
            let rel = relative_fast(&prefix, e.path()).or_else(|| relative(dir, e.path()));
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
            let skill_md = e.depth() == 1 && e.file_name() == SKILL_FILE;
            collect.add(rel, e.into_path(), kind, skipped, skill_md, |path| {
                text_content(read_bytes(path, MAX_READ_BYTES))
            });
        }
        collect.files
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
            // `./a/../b.md` is `b.md`, which the listing may know; a path that leaves the
            // folder is not the skill's and is not read
            _ => match lexical(rel) {
                None => None,
                Some(clean) if clean != rel && !clean.is_empty() => self.text(dir, &clean, limit),
                Some(_) => read_inside(dir, rel, limit),
            },
        }
    }

    /// Whether reading `rel` reads a file of the skill itself: a regular entry of the walk,
    /// or a path through symlinks that resolves inside the folder.
    pub fn stays_inside(&self, dir: &Path, rel: &str) -> bool {
        match self.lookup(rel) {
            Known::Entry(e) if e.kind != Kind::Symlink => true,
            Known::Absent => true,
            _ => crate::skill::link::resolves_inside(dir, &dir.join(rel)),
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
#[cfg(any(not(any(target_os = "linux", target_os = "android")), test))]
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
#[cfg(any(not(any(target_os = "linux", target_os = "android")), test))]
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

/// A file's text, at most `limit` bytes, with bytes that are not UTF-8 replaced by U+FFFD: what
/// an agent or a shell that reads the file still sees, for vetting a file `check` cannot read.
pub(crate) fn read_text_lossy_at_most(path: &Path, limit: u64) -> Option<String> {
    let bytes = read_bytes(path, limit).ok()?;
    Some(match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

/// The first bytes of a file (enough for a `#!` line); empty when it cannot be read.
pub(crate) fn head(path: &Path) -> Vec<u8> {
    use std::io::Read;
    let mut head = Vec::new();
    if let Ok(file) = std::fs::File::open(path) {
        let _ = file.take(256).read_to_end(&mut head);
    }
    head
}

/// What a bounded read of a scanned file gave, as [`Content`].
fn text_content(read: Result<Vec<u8>, Unreadable>) -> Content {
    match read {
        Err(Unreadable::TooLarge) => Content::TooLarge,
        Err(Unreadable::Failed) => Content::Unread,
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(text) => Content::Text(text),
            Err(_) => Content::NotUtf8,
        },
    }
}

/// Why a bounded read gave no bytes.
enum Unreadable {
    /// Larger than the limit.
    TooLarge,
    /// Not opened or not read.
    Failed,
}

impl From<LoadError> for Unreadable {
    fn from(error: LoadError) -> Unreadable {
        match error {
            LoadError::TooLarge { .. } => Unreadable::TooLarge,
            _ => Unreadable::Failed,
        }
    }
}

fn read_bytes(path: &Path, limit: u64) -> Result<Vec<u8>, Unreadable> {
    crate::skill::read_bounded(path, limit).map_err(Unreadable::from)
}

/// `rel` with its `.` and `..` parts resolved without the file system, `/`-separated; None
/// when it leaves the folder (or is absolute).
pub(crate) fn lexical(rel: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for part in rel.split(['/', '\\']) {
        match part {
            "" if parts.is_empty() && rel.starts_with(['/', '\\']) => return None,
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            part => parts.push(part),
        }
    }
    Some(parts.join("/"))
}

/// [`read_limited`] for `rel` in the skill folder `dir`, when the path resolves inside the
/// folder: what a symlink out of the skill points at is never read (see
/// [`crate::skill::link`]).
pub(crate) fn read_inside(
    dir: &Path,
    rel: &str,
    limit: u64,
) -> Option<std::borrow::Cow<'static, str>> {
    lexical(rel)?;
    let path = dir.join(rel);
    if !crate::skill::link::resolves_inside(dir, &path) {
        return None;
    }
    read_limited(&path, limit)
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

    /// A tree of `n` one-byte files `f/00000.txt`, `f/00001.txt`, ...
    fn numbered_files(n: usize) -> tempfile::TempDir {
        let many: Vec<(String, &[u8])> = (0..n)
            .map(|i| (format!("f/{i:05}.txt"), &b"x"[..]))
            .collect();
        let refs: Vec<(&str, &[u8])> = many.iter().map(|(p, c)| (p.as_str(), *c)).collect();
        tree(&refs)
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
        let tmp = numbered_files(MAX_SCANNED_FILES + 5);
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

    /// Both walks of `dir` give the same listing: entries (path, kind, listed, scanned,
    /// content), index and completeness. Returns the listing.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    fn assert_same_listing(dir: &Path) -> SkillFiles {
        let by_fd = SkillFiles::read_by_descriptor(dir);
        let by_walkdir = SkillFiles::read_with_walkdir(dir);
        assert_eq!(by_fd.entries.len(), by_walkdir.entries.len(), "{dir:?}");
        for (a, b) in by_fd.entries.iter().zip(&by_walkdir.entries) {
            assert_eq!(format!("{a:?}"), format!("{b:?}"), "in {dir:?}");
        }
        let sorted = |f: &SkillFiles| {
            let mut index: Vec<(String, usize)> =
                f.index.iter().map(|(k, v)| (k.clone(), *v)).collect();
            index.sort();
            index
        };
        assert_eq!(sorted(&by_fd), sorted(&by_walkdir), "index of {dir:?}");
        assert_eq!(by_fd.complete, by_walkdir.complete, "complete of {dir:?}");
        by_fd
    }

    #[cfg(any(target_os = "linux", target_os = "android"))]
    #[test]
    fn the_descriptor_walk_lists_like_walkdir() {
        use std::os::unix::ffi::OsStrExt;
        let big = vec![b'x'; MAX_READ_BYTES as usize + 1];
        let tmp = tree(&[
            ("SKILL.md", b"---\nname: a\n---\n"),
            ("empty.md", b""),
            ("references/SKILL.md", b"nested, so scanned"),
            ("references/deep/deeper/deepest/a.md", b"# A\n"),
            ("references/deep/empty.txt", b""),
            ("node_modules/x.js", b"x"),
            ("scripts/.git/config", b"[core]"),
            ("scripts/target/out.txt", b"out"),
            ("assets/logo.PNG", b"\x89PNG"),
            ("data.bin", b"a\0b"),
            ("nul.txt", b"a\0b"),
            ("latin1.txt", b"caf\xe9"),
            ("big.txt", &big),
            // Byte order, not char, case or natural order: "B" < "_" < "a", "a" < "a-" < "a.",
            // "10" < "9", U+E000 (3 bytes) < U+10000 (4 bytes) though UTF-16 sorts them the
            // other way.
            ("a", b"1"),
            ("a-b", b"2"),
            ("a.b", b"3"),
            ("a_b", b"4"),
            ("B", b"5"),
            ("10", b"6"),
            ("9", b"7"),
            ("\u{e000}", b"8"),
            ("\u{10000}", b"9"),
            ("caf\u{e9}/x.md", b"accented folder"),
        ]);
        let dir = tmp.path();
        std::os::unix::fs::symlink(dir.join("references"), dir.join("linked-dir")).unwrap();
        std::os::unix::fs::symlink(dir.join("a"), dir.join("linked-file")).unwrap();
        std::os::unix::fs::symlink(dir.join("gone"), dir.join("dangling")).unwrap();
        let _socket = std::os::unix::net::UnixListener::bind(dir.join("socket")).unwrap();
        let files = assert_same_listing(dir);
        assert!(files.complete);
        let kind = |rel: &str| files.entries[files.index[rel]].kind;
        assert_eq!(kind("linked-dir"), Kind::Symlink);
        assert_eq!(kind("linked-file"), Kind::Symlink);
        assert_eq!(kind("socket"), Kind::Other);
        assert!(!files.index.contains_key("node_modules/x.js"));
        let sorted = [
            "10",
            "9",
            "B",
            "a",
            "a-b",
            "a.b",
            "a_b",
            "\u{e000}",
            "\u{10000}",
        ];
        let order: Vec<&str> = files
            .entries
            .iter()
            .filter_map(|e| e.path.strip_prefix(dir).ok()?.to_str())
            .filter(|rel| sorted.contains(rel))
            .collect();
        assert_eq!(order, sorted);

        // A name that is not UTF-8 is left out, and makes the listing incomplete.
        let odd = dir.join(std::ffi::OsStr::from_bytes(b"odd\xff"));
        std::fs::create_dir(&odd).unwrap();
        std::fs::write(odd.join("inside.md"), "x").unwrap();
        assert!(!assert_same_listing(dir).complete);
    }

    #[cfg(any(target_os = "linux", target_os = "android"))]
    #[test]
    fn the_descriptor_walk_fails_like_walkdir() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tree(&[("a/x.md", b"x"), ("b/y.md", b"y"), ("c/z.md", b"z")]);
        let dir = tmp.path();
        // Roots: missing, a file, a symlink to the folder, a path with a trailing slash.
        assert!(!assert_same_listing(&dir.join("missing")).complete);
        assert!(assert_same_listing(&dir.join("a/x.md")).complete);
        std::os::unix::fs::symlink(dir.join("a"), dir.join("root-link")).unwrap();
        assert_eq!(assert_same_listing(&dir.join("root-link")).entries.len(), 1);
        assert_eq!(assert_same_listing(&dir.join("a/")).entries.len(), 1);
        let mode = |path: &str, mode: u32| {
            std::fs::set_permissions(dir.join(path), std::fs::Permissions::from_mode(mode)).unwrap()
        };
        // An unreadable folder (the root may read anything: then there is nothing to see).
        mode("b", 0o000);
        // A folder that can be listed but not searched: its files cannot be opened.
        mode("c", 0o444);
        if std::fs::read_dir(dir.join("b")).is_err() {
            let files = assert_same_listing(dir);
            assert!(!files.complete);
            assert!(files.index.contains_key("b") && !files.index.contains_key("b/y.md"));
            let z = &files.entries[files.index["c/z.md"]];
            assert!(matches!(z.content, Content::Unread));
        } else {
            assert_same_listing(dir);
        }
        mode("b", 0o755);
        mode("c", 0o755);
    }

    /// Make `names` nested folders under `dir` (by descriptor, so the path may be longer
    /// than the kernel takes) with a file in the deepest.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    fn nest(dir: &Path, names: &[String]) {
        use rustix::fs::{Mode, OFlags};
        let dir_flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let mut fd = rustix::fs::open(dir, dir_flags, Mode::empty()).unwrap();
        for name in names {
            rustix::fs::mkdirat(&fd, name.as_str(), Mode::RWXU).unwrap();
            fd = rustix::fs::openat(&fd, name.as_str(), dir_flags, Mode::empty()).unwrap();
        }
        let file_flags = OFlags::WRONLY | OFlags::CREATE | OFlags::CLOEXEC;
        let file = rustix::fs::openat(&fd, "deepest.md", file_flags, Mode::RUSR).unwrap();
        rustix::io::write(&file, b"# Deep\n").unwrap();
    }

    #[cfg(any(target_os = "linux", target_os = "android"))]
    #[test]
    fn deep_trees_list_like_walkdir() {
        // Deeper than the folders the walk holds open: the rest is opened by path.
        let tmp = tempfile::tempdir().unwrap();
        let names: Vec<String> = (0..walk::MAX_HELD + 4).map(|i| format!("d{i}")).collect();
        nest(tmp.path(), &names);
        let files = assert_same_listing(tmp.path());
        assert!(files.complete);
        let deepest = format!("{}/deepest.md", names.join("/"));
        assert!(matches!(
            files.entries[files.index[&deepest]].content,
            Content::Text(_)
        ));
        // Paths longer than the kernel takes: walkdir cannot open them, nor does the walk,
        // though it could by descriptor (255-byte names reach 4096 bytes by depth 16, while
        // the walk still holds every folder open).
        let tmp = tempfile::tempdir().unwrap();
        let names: Vec<String> = (0..walk::MAX_HELD + 1)
            .map(|i| format!("{i:0>255}"))
            .collect();
        nest(tmp.path(), &names);
        assert!(!assert_same_listing(tmp.path()).complete);
    }

    #[cfg(any(target_os = "linux", target_os = "android"))]
    #[test]
    fn the_descriptor_walk_stops_at_the_file_limit_like_walkdir() {
        let tmp = numbered_files(MAX_SCANNED_FILES + 2);
        assert!(!assert_same_listing(tmp.path()).complete);
        // Exactly at the limit, with nothing after: complete.
        std::fs::remove_file(tmp.path().join("f/02001.txt")).unwrap();
        std::fs::remove_file(tmp.path().join("f/02000.txt")).unwrap();
        assert!(assert_same_listing(tmp.path()).complete);
    }

    #[cfg(any(target_os = "linux", target_os = "android"))]
    #[test]
    fn the_descriptor_walk_lists_every_corpus_skill_like_walkdir() {
        let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/corpus");
        let skills = crate::skill::discover(&corpus);
        assert!(!skills.is_empty(), "no skill under {corpus:?}");
        let mut texts = 0;
        for dir in &skills {
            let files = assert_same_listing(dir);
            texts += files
                .entries
                .iter()
                .filter(|e| matches!(e.content, Content::Text(_)))
                .count();
        }
        assert!(texts > 0, "no file read under {corpus:?}");
    }
}
