//! Skill archives: bounded inspection of the zip and tar(.gz) artifacts a site advertises,
//! and the reproducible tar.gz `skillwatch index build` writes.
//!
//! Inspection reads the archive from memory with the `zip`, `tar` and `flate2` crates and
//! never writes anything: every entry's path is judged as written (absolute, `..`,
//! backslashes, links, devices), and every byte decompressed is counted against the limits
//! before it is kept, so a bomb stops at the first limit it crosses rather than at the end of
//! memory. The safe regular files are handed back in memory; the caller may stage them in a
//! temporary folder for `check`'s rules.

use std::io::{self, Cursor, Read};

use flate2::Compression;
use flate2::read::GzDecoder;
use serde::Serialize;

/// How much an archive may hold before inspection stops.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Entries (files, folders, links) in the archive.
    pub max_entries: usize,
    /// Uncompressed bytes of one entry.
    pub max_entry_bytes: u64,
    /// Uncompressed bytes of the whole archive (for tar.gz: of the tar stream).
    pub max_total_bytes: u64,
    /// Uncompressed bytes per compressed byte, once past [`RATIO_FLOOR`] uncompressed.
    pub max_ratio: u64,
}

/// Below this many uncompressed bytes the ratio is not judged: a small text file of repeated
/// lines compresses far better than 100:1 and is no bomb.
pub const RATIO_FLOOR: u64 = 1024 * 1024;

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_entries: 2_000,
            max_entry_bytes: 16 * 1024 * 1024,
            max_total_bytes: 64 * 1024 * 1024,
            max_ratio: 100,
        }
    }
}

/// The container, told by its first bytes (never by the URL or the content type).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// PKZIP.
    Zip,
    /// A gzip-compressed tar.
    TarGz,
    /// An uncompressed (ustar or GNU) tar.
    Tar,
}

/// Why an entry is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Unsafe {
    /// `/etc/x`, `C:\x`, `\\server\x`.
    AbsolutePath,
    /// A `..` component: would be written outside the folder it is extracted into.
    Traversal,
    /// A backslash: a separator on Windows, so `..\x` traverses there.
    Backslash,
    /// A symbolic link.
    Symlink,
    /// A hard link.
    HardLink,
    /// A character or block device, or a FIFO.
    Device,
    /// A path that is not UTF-8, empty, or holds a NUL.
    BadName,
    /// A second entry with a path already seen (it would overwrite the first).
    Duplicate,
    /// An entry type the inspection does not know.
    Other,
}

impl Unsafe {
    fn describe(self) -> &'static str {
        match self {
            Unsafe::AbsolutePath => "an absolute path",
            Unsafe::Traversal => "a `..` path that leaves the archive's folder",
            Unsafe::Backslash => "a backslash in its path (a separator on Windows)",
            Unsafe::Symlink => "a symbolic link",
            Unsafe::HardLink => "a hard link",
            Unsafe::Device => "a device file or FIFO",
            Unsafe::BadName => "a path that is empty, not UTF-8 or holds a NUL",
            Unsafe::Duplicate => "a path already used by an earlier entry",
            Unsafe::Other => "an entry type that is not a file or folder",
        }
    }
}

/// An entry inspection refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnsafeEntry {
    /// The path as written (lossy UTF-8, control characters escaped, at most 200 bytes).
    pub path: String,
    /// Why.
    pub reason: Unsafe,
}

impl UnsafeEntry {
    /// "`../x`: a `..` path that leaves the archive's folder".
    pub fn describe(&self) -> String {
        format!("`{}` is {}", self.path, self.reason.describe())
    }
}

/// A limit an archive crossed; inspection stopped there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LimitHit {
    /// `entries`, `entry-bytes`, `total-bytes` or `ratio`.
    pub limit: &'static str,
    /// The limit and what was found.
    pub detail: String,
}

/// A regular file of an archive, safe to stage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchiveFile {
    /// Relative path with `/` separators, only normal components.
    pub path: String,
    /// The content.
    pub bytes: Vec<u8>,
    /// Whether a mode bit makes it executable.
    pub executable: bool,
}

/// What inspection found.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Inspection {
    /// The container, when recognized.
    pub format: Option<Format>,
    /// Entries seen (until a limit stopped the count).
    pub entries: usize,
    /// Uncompressed bytes read (until a limit stopped the count).
    pub uncompressed_bytes: u64,
    /// Whether `SKILL.md` is at the root (or at the root of the one folder holding everything).
    pub root_skill_md: bool,
    /// The one folder every entry is in, when SKILL.md is there rather than at the root.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wrapped_in: Option<String>,
    /// Refused entries.
    pub unsafe_paths: Vec<UnsafeEntry>,
    /// The limit that stopped inspection.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<LimitHit>,
    /// Files under `scripts/` (review evidence: clients must not run them by default).
    pub scripts: Vec<String>,
    /// Why the bytes are no readable archive, if they are not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The safe regular files (relative to SKILL.md's folder), not part of the evidence.
    #[serde(skip)]
    pub files: Vec<ArchiveFile>,
}

/// The container `bytes` hold, by magic number.
pub fn sniff(bytes: &[u8]) -> Option<Format> {
    if bytes.starts_with(b"PK\x03\x04") || bytes.starts_with(b"PK\x05\x06") {
        Some(Format::Zip)
    } else if bytes.starts_with(&[0x1f, 0x8b]) {
        Some(Format::TarGz)
    } else if bytes.get(257..262) == Some(b"ustar") {
        Some(Format::Tar)
    } else {
        None
    }
}

/// Inspect an archive held in memory.
pub fn inspect(bytes: &[u8], limits: &Limits) -> Inspection {
    let mut out = Inspection {
        format: sniff(bytes),
        ..Inspection::default()
    };
    let mut reader = Reader {
        limits,
        compressed: bytes.len() as u64,
        out: &mut out,
        seen: Vec::new(),
    };
    let result = match reader.out.format {
        Some(Format::Zip) => reader.zip(bytes),
        Some(Format::TarGz) => reader.tar(Counted::new(GzDecoder::new(bytes), limits)),
        Some(Format::Tar) => reader.tar(Counted::new(bytes, limits)),
        None => Err(Stop::Error(
            "not a zip, tar or tar.gz archive (by its first bytes)".into(),
        )),
    };
    match result {
        Ok(()) => {}
        Err(Stop::Limit(hit)) => out.limit = Some(hit),
        Err(Stop::Error(e)) => out.error = Some(e),
    }
    find_root(&mut out);
    out
}

/// Why inspection stopped early.
enum Stop {
    Limit(LimitHit),
    Error(String),
}

struct Reader<'a> {
    limits: &'a Limits,
    compressed: u64,
    out: &'a mut Inspection,
    /// Paths of the entries so far (to catch duplicates).
    seen: Vec<String>,
}

/// One entry as the container describes it.
enum Kind {
    File { executable: bool },
    Dir,
    Refused(Unsafe),
}

impl Reader<'_> {
    fn zip(&mut self, bytes: &[u8]) -> Result<(), Stop> {
        let mut archive = zip::ZipArchive::new(Cursor::new(bytes))
            .map_err(|e| Stop::Error(format!("not a readable zip archive: {e}")))?;
        if archive.len() > self.limits.max_entries {
            self.out.entries = archive.len();
            return Err(self.entries_hit(archive.len()));
        }
        for i in 0..archive.len() {
            let mut file = archive
                .by_index(i)
                .map_err(|e| Stop::Error(format!("zip entry {i} cannot be read: {e}")))?;
            let name = file.name_raw().to_vec();
            let mode = file.unix_mode();
            let kind = if file.is_symlink() {
                Kind::Refused(Unsafe::Symlink)
            } else if mode.is_some_and(is_device) {
                Kind::Refused(Unsafe::Device)
            } else if file.is_dir() {
                Kind::Dir
            } else {
                Kind::File {
                    executable: mode.is_some_and(|m| m & 0o111 != 0),
                }
            };
            let compressed = file.compressed_size();
            self.entry(&name, kind, &mut file, Some(compressed))?;
        }
        Ok(())
    }

    fn tar<R: Read>(&mut self, stream: Counted<R>) -> Result<(), Stop> {
        let mut archive = tar::Archive::new(stream);
        let entries = archive
            .entries()
            .map_err(|e| Stop::Error(format!("not a readable tar archive: {e}")))?;
        for entry in entries {
            let mut entry = entry.map_err(|e| self.stream_error(e))?;
            let name = entry.path_bytes().into_owned();
            let header = entry.header();
            let kind = match header.entry_type() {
                tar::EntryType::Regular | tar::EntryType::Continuous => Kind::File {
                    executable: header.mode().is_ok_and(|m| m & 0o111 != 0),
                },
                tar::EntryType::Directory => Kind::Dir,
                tar::EntryType::Symlink => Kind::Refused(Unsafe::Symlink),
                tar::EntryType::Link => Kind::Refused(Unsafe::HardLink),
                tar::EntryType::Char | tar::EntryType::Block | tar::EntryType::Fifo => {
                    Kind::Refused(Unsafe::Device)
                }
                _ => Kind::Refused(Unsafe::Other),
            };
            self.entry(&name, kind, &mut entry, None)?;
        }
        Ok(())
    }

    /// An I/O error of the tar stream: a limit the counting reader hit, or corruption.
    fn stream_error(&self, e: io::Error) -> Stop {
        match e
            .get_ref()
            .and_then(|inner| inner.downcast_ref::<LimitError>())
        {
            Some(LimitError::Total) => self.total_hit(),
            None => Stop::Error(format!("the archive stream is corrupt: {e}")),
        }
    }

    fn entry(
        &mut self,
        raw_name: &[u8],
        kind: Kind,
        content: &mut impl Read,
        compressed: Option<u64>,
    ) -> Result<(), Stop> {
        self.out.entries += 1;
        if self.out.entries > self.limits.max_entries {
            return Err(self.entries_hit(self.out.entries));
        }
        let shown = shown_path(raw_name);
        let refused = |reason| UnsafeEntry {
            path: shown.clone(),
            reason,
        };
        let path = match (relative_path(raw_name), &kind) {
            (Err(reason), _) | (Ok(_), &Kind::Refused(reason)) => {
                self.out.unsafe_paths.push(refused(reason));
                return Ok(());
            }
            (Ok(path), _) => path,
        };
        if self.seen.contains(&path) {
            self.out.unsafe_paths.push(refused(Unsafe::Duplicate));
            return Ok(());
        }
        self.seen.push(path.clone());
        let Kind::File { executable } = kind else {
            return Ok(());
        };
        let bytes = self.read_bounded(&shown, content, compressed)?;
        self.out.files.push(ArchiveFile {
            path,
            bytes,
            executable,
        });
        Ok(())
    }

    /// An entry's content, counted against the per-entry, total and ratio limits.
    fn read_bounded(
        &mut self,
        shown: &str,
        content: &mut impl Read,
        compressed: Option<u64>,
    ) -> Result<Vec<u8>, Stop> {
        let mut bytes = Vec::new();
        let max = self.limits.max_entry_bytes;
        content
            .take(max + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| self.stream_error(e))?;
        let len = bytes.len() as u64;
        self.out.uncompressed_bytes += len;
        // the ratio first: a bomb is told as a bomb, whichever size limit it also crosses
        self.check_ratio()?;
        if len > max {
            return Err(Stop::Limit(LimitHit {
                limit: "entry-bytes",
                detail: format!("`{shown}` holds more than {max} bytes uncompressed"),
            }));
        }
        if self.out.uncompressed_bytes > self.limits.max_total_bytes {
            return Err(self.total_hit());
        }
        if let Some(packed) = compressed
            && len > RATIO_FLOOR
            && len > packed.max(1).saturating_mul(self.limits.max_ratio)
        {
            return Err(Stop::Limit(LimitHit {
                limit: "ratio",
                detail: format!(
                    "`{shown}` expands {packed} compressed bytes to {len} (over {}:1)",
                    self.limits.max_ratio
                ),
            }));
        }
        self.check_ratio()?;
        Ok(bytes)
    }

    fn check_ratio(&self) -> Result<(), Stop> {
        let total = self.out.uncompressed_bytes;
        if total > RATIO_FLOOR
            && total > self.compressed.max(1).saturating_mul(self.limits.max_ratio)
        {
            return Err(Stop::Limit(LimitHit {
                limit: "ratio",
                detail: format!(
                    "{} compressed bytes expand to more than {total} (over {}:1)",
                    self.compressed, self.limits.max_ratio
                ),
            }));
        }
        Ok(())
    }

    fn entries_hit(&self, found: usize) -> Stop {
        Stop::Limit(LimitHit {
            limit: "entries",
            detail: format!(
                "more than {} entries (found {found} so far)",
                self.limits.max_entries
            ),
        })
    }

    fn total_hit(&self) -> Stop {
        let max = self.limits.max_total_bytes;
        Stop::Limit(LimitHit {
            limit: "total-bytes",
            detail: format!(
                "{} compressed bytes expand to more than {max} uncompressed bytes",
                self.compressed
            ),
        })
    }
}

/// Mode bits of a character or block device, or a FIFO (socket files too).
fn is_device(mode: u32) -> bool {
    matches!(mode & 0o170000, 0o020000 | 0o060000 | 0o010000 | 0o140000)
}

/// The entry's path as a relative `/`-separated path of normal components (a trailing `/`
/// of a folder dropped), or why it is unsafe.
fn relative_path(raw: &[u8]) -> Result<String, Unsafe> {
    let text = std::str::from_utf8(raw).map_err(|_| Unsafe::BadName)?;
    if text.contains('\0') {
        return Err(Unsafe::BadName);
    }
    if text.starts_with('/') || text.as_bytes().get(1) == Some(&b':') {
        return Err(Unsafe::AbsolutePath);
    }
    if text.contains('\\') {
        return Err(if text.starts_with('\\') {
            Unsafe::AbsolutePath
        } else if text.split('\\').any(|p| p == "..") {
            Unsafe::Traversal
        } else {
            Unsafe::Backslash
        });
    }
    let mut parts = Vec::new();
    for part in text.split('/') {
        match part {
            "" | "." => {}
            ".." => return Err(Unsafe::Traversal),
            p => parts.push(p),
        }
    }
    if parts.is_empty() {
        return Err(Unsafe::BadName);
    }
    // A drive (`C:`) in any component, not only the first: `./C:/x` is `C:/x` once `.` is
    // gone, and `pdf/C:/x` becomes `C:/x` when the wrapping folder `pdf/` is taken off.
    if parts.iter().any(|p| p.as_bytes().get(1) == Some(&b':')) {
        return Err(Unsafe::AbsolutePath);
    }
    Ok(parts.join("/"))
}

/// A path for evidence: lossy UTF-8, control characters escaped, at most 200 bytes.
fn shown_path(raw: &[u8]) -> String {
    let text = String::from_utf8_lossy(raw);
    let mut out = String::new();
    for c in text.chars() {
        if out.len() >= 200 {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// Decide where SKILL.md is: at the root, or at the root of the one folder holding every
/// file (the layout of many zip downloads), whose prefix is then taken off every path.
fn find_root(out: &mut Inspection) {
    if out.files.iter().any(|f| f.path == crate::skill::SKILL_FILE) {
        out.root_skill_md = true;
    } else if let Some(top) = single_top_folder(&out.files)
        && out
            .files
            .iter()
            .any(|f| f.path == format!("{top}/{}", crate::skill::SKILL_FILE))
    {
        let prefix = format!("{top}/");
        for f in &mut out.files {
            f.path = f.path[prefix.len()..].to_string();
        }
        out.root_skill_md = true;
        out.wrapped_in = Some(top);
    }
    out.scripts = out
        .files
        .iter()
        .filter(|f| f.path.starts_with("scripts/"))
        .map(|f| f.path.clone())
        .collect();
}

fn single_top_folder(files: &[ArchiveFile]) -> Option<String> {
    let mut top: Option<&str> = None;
    for f in files {
        let (first, _) = f.path.split_once('/')?;
        match top {
            None => top = Some(first),
            Some(t) if t == first => {}
            Some(_) => return None,
        }
    }
    top.map(str::to_string)
}

/// The error a [`Counted`] reader raises at the total limit.
#[derive(Debug)]
enum LimitError {
    Total,
}

impl std::fmt::Display for LimitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the uncompressed size limit was reached")
    }
}

impl std::error::Error for LimitError {}

/// A reader that fails once it has given more than its limit: the tar reader pulls headers
/// and padding through it too, so a stream of endless zeros stops here, not in memory.
struct Counted<R> {
    inner: R,
    read: u64,
    limit: u64,
}

impl<R: Read> Counted<R> {
    /// The stream may hold the total limit plus a header and padding per entry.
    fn new(inner: R, limits: &Limits) -> Counted<R> {
        let overhead = (limits.max_entries as u64 + 2).saturating_mul(1024);
        Counted {
            inner,
            read: 0,
            limit: limits.max_total_bytes.saturating_add(overhead),
        }
    }
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.read >= self.limit {
            return Err(io::Error::other(LimitError::Total));
        }
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        Ok(n)
    }
}

/// Reproducible tar.gz of `files` (paths relative, `/`-separated): entries sorted by path,
/// ustar headers with time 0, owner 0:0 and no names, modes 0644 or 0755 from the executable
/// bit, gzip with time 0 and no file name. The same files give the same bytes on every run.
pub fn write_tar_gz(files: &[ArchiveFile]) -> io::Result<Vec<u8>> {
    let mut sorted: Vec<&ArchiveFile> = files.iter().collect();
    sorted.sort_by(|a, b| a.path.cmp(&b.path));
    let mut builder = tar::Builder::new(Vec::new());
    builder.mode(tar::HeaderMode::Deterministic);
    for file in sorted {
        if relative_path(file.path.as_bytes()).as_deref() != Ok(file.path.as_str()) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("`{}` is not a plain relative path", file.path),
            ));
        }
        let mut header = tar::Header::new_ustar();
        header.set_entry_type(tar::EntryType::Regular);
        header.set_size(file.bytes.len() as u64);
        header.set_mode(if file.executable { 0o755 } else { 0o644 });
        header.set_mtime(0);
        header.set_uid(0);
        header.set_gid(0);
        builder.append_data(&mut header, &file.path, file.bytes.as_slice())?;
    }
    let tar = builder.into_inner()?;
    let mut gz = flate2::GzBuilder::new()
        .mtime(0)
        .operating_system(255)
        .write(Vec::new(), Compression::best());
    io::Write::write_all(&mut gz, &tar)?;
    gz.finish()
}

#[cfg(test)]
mod tests;
