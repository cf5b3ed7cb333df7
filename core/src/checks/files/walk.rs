//! The walk of one skill folder on Linux: each folder is held open and everything inside it
//! is done relative to its descriptor.
//!
//! walkdir opens every folder by its full path (glibc's `opendir` adds an `fstat`), and each
//! file was then opened by its full path again; the kernel resolves every component of those
//! paths on each call (about a dozen components deep in a catalog repository), which cost more
//! than the listing itself (docs/benchmarks.md).
//! Here a folder is listed with `getdents64` into one reused buffer, and its files and child
//! folders are opened with `openat` on its descriptor: one name to resolve, no `fstat`.
//!
//! The walk yields exactly what walkdir with `follow_links(false)` and `sort_by_file_name()`
//! yields (see [`Walk`]), so [`super::SkillFiles`] is the same whichever walk built it.

use std::ffi::{CStr, CString, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fd::{AsFd, OwnedFd};
use rustix::fs::{AtFlags, FileType, Mode, OFlags, RawDir};
use rustix::io::Errno;

use super::{Kind, Unreadable};

/// Folders one walk holds open at once. Deeper folders are listed and read by full path, as
/// walkdir does, so a deeply nested skill cannot use up the process's descriptors while
/// other threads check other skills.
pub(super) const MAX_HELD: usize = 16;

/// Bytes of the `getdents64` buffer: glibc's `opendir` reads 32 KiB at a time too, so a
/// folder of the corpus is listed in one call (and one more that returns nothing).
const LIST_BUFFER: usize = 32 * 1024;

/// The kernel refuses a path of `PATH_MAX` bytes or more (with its NUL) with
/// `ENAMETOOLONG`. walkdir, which opens by path, then fails where `openat` would not: the
/// walk refuses such paths too, so a very deep tree gives the same (incomplete) listing.
const PATH_MAX: usize = 4096;

/// A depth-first walk of a folder: children sorted by the bytes of their names, a folder's
/// entry before its contents, symlinks not followed, the root itself not yielded. A folder
/// is entered only when the caller asks ([`Walk::enter`]), right after it was yielded.
pub(super) struct Walk {
    /// The folders being listed, the root first.
    levels: Vec<Level>,
    /// The `getdents64` buffer, shared by every folder (each is listed whole at once).
    buf: Vec<u8>,
    /// Whether a folder could not be opened or listed, or an entry's type could not be read:
    /// walkdir yields an error for each of these.
    failed: bool,
}

/// One folder on the walk's path.
struct Level {
    /// The open folder; None past [`MAX_HELD`] levels (then its children are opened by path).
    fd: Option<OwnedFd>,
    /// The folder's path as walkdir builds it (the root joined with each name).
    path: PathBuf,
    /// The path relative to the root, `/`-separated ("" for the root); None when a name on
    /// the way is not UTF-8.
    rel: Option<String>,
    /// The folder's entries, sorted; names already yielded are taken out.
    children: Vec<Child>,
    /// The next child to yield.
    next: usize,
}

struct Child {
    name: CString,
    kind: Kind,
}

/// One entry the walk yields.
pub(super) struct Item {
    /// `dir.join(rel)`, exactly walkdir's `DirEntry::path`.
    pub path: PathBuf,
    /// The entry's name in its folder.
    pub name: CString,
    /// 1 for the root's children.
    pub depth: usize,
    /// What it is, symlinks not followed.
    pub kind: Kind,
    /// The path relative to the root, `/`-separated; None when not UTF-8.
    pub rel: Option<String>,
}

impl Walk {
    /// Open and list `dir` (following it if it is a symlink, as walkdir does with its root).
    pub fn new(dir: &Path) -> Walk {
        let mut walk = Walk {
            levels: Vec::new(),
            buf: Vec::with_capacity(LIST_BUFFER),
            failed: false,
        };
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        match rustix::fs::open(dir, flags, Mode::empty()) {
            Ok(fd) => walk.push(fd, dir.to_path_buf(), Some(String::new())),
            // walkdir yields a root that exists and is not a folder alone, without an error.
            Err(_) => walk.failed = !std::fs::metadata(dir).is_ok_and(|m| !m.is_dir()),
        }
        walk
    }

    /// Whether walkdir would have yielded an error somewhere in the walk so far.
    pub fn failed(&self) -> bool {
        self.failed
    }

    /// The next entry, or None at the end of the walk.
    pub fn next(&mut self) -> Option<Item> {
        loop {
            let depth = self.levels.len();
            let level = self.levels.last_mut()?;
            let Some(child) = level.children.get_mut(level.next) else {
                // Closes the folder.
                self.levels.pop();
                continue;
            };
            level.next += 1;
            let name = std::mem::take(&mut child.name);
            let path = level.path.join(OsStr::from_bytes(name.to_bytes()));
            let rel = match (&level.rel, name.to_str()) {
                (Some(up), Ok(name)) if up.is_empty() => Some(name.to_string()),
                (Some(up), Ok(name)) => Some(format!("{up}/{name}")),
                _ => None,
            };
            return Some(Item {
                path,
                name,
                depth,
                kind: child.kind,
                rel,
            });
        }
    }

    /// List the folder `item` (the entry [`Walk::next`] returned last): its entries come
    /// next. A folder that cannot be opened is not listed and fails the walk.
    pub fn enter(&mut self, item: &Item) {
        debug_assert!(item.kind == Kind::Dir && item.depth == self.levels.len());
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC | OFlags::NOFOLLOW;
        match self.open(item.depth, &item.name, &item.path, flags) {
            Ok(fd) => {
                let rel = item.rel.clone();
                self.push(fd, item.path.clone(), rel);
            }
            Err(_) => self.failed = true,
        }
    }

    /// The bytes of the regular file `name` at `path` and `depth`, the entry [`Walk::next`]
    /// returned last, if it holds at most `limit` bytes: one `openat`, then
    /// `crate::skill::read_bounded_file`'s one `fstat` and one `read` (the size is the
    /// `fstat`'s; a file that grows meanwhile is read up to that size).
    pub fn read(
        &self,
        depth: usize,
        name: &CStr,
        path: &Path,
        limit: u64,
    ) -> Result<Vec<u8>, Unreadable> {
        let flags = OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOFOLLOW;
        let fd = self
            .open(depth, name, path, flags)
            .map_err(|_| Unreadable::Failed)?;
        crate::skill::read_bounded_file(std::fs::File::from(fd), limit).map_err(Unreadable::from)
    }

    /// Open the entry `name` at `path` relative to the descriptor of its folder (the level
    /// at `depth - 1`, whether or not the entry was entered since), or by path past
    /// [`MAX_HELD`] levels.
    fn open(
        &self,
        depth: usize,
        name: &CStr,
        path: &Path,
        flags: OFlags,
    ) -> rustix::io::Result<OwnedFd> {
        if path.as_os_str().len() >= PATH_MAX {
            return Err(Errno::NAMETOOLONG);
        }
        match &self.levels[depth - 1].fd {
            Some(folder) => rustix::fs::openat(folder, name, flags, Mode::empty()),
            None => rustix::fs::open(path, flags, Mode::empty()),
        }
    }

    /// List the open folder `fd` and make it the current level.
    fn push(&mut self, fd: OwnedFd, path: PathBuf, rel: Option<String>) {
        let (children, complete) = list(&fd, &mut self.buf);
        self.failed |= !complete;
        let fd = (self.levels.len() < MAX_HELD).then_some(fd);
        self.levels.push(Level {
            fd,
            path,
            rel,
            children,
            next: 0,
        });
    }
}

/// The entries of the open folder `fd` (without `.` and `..`), sorted by name bytes as
/// walkdir's `sort_by_file_name` sorts them, and whether every entry was read.
fn list(fd: &OwnedFd, buf: &mut Vec<u8>) -> (Vec<Child>, bool) {
    let mut children = Vec::new();
    let mut complete = true;
    buf.clear();
    let mut dir = RawDir::new(fd, buf.spare_capacity_mut());
    while let Some(entry) = dir.next() {
        let entry = match entry {
            Ok(entry) => entry,
            // A folder removed while open lists as empty (glibc's `readdir` does the same).
            Err(Errno::NOENT) => break,
            Err(_) => {
                complete = false;
                break;
            }
        };
        let name = entry.file_name();
        if name == c"." || name == c".." {
            continue;
        }
        match kind_of(entry.file_type(), fd, name) {
            Some(kind) => children.push(Child {
                name: name.to_owned(),
                kind,
            }),
            None => complete = false,
        }
    }
    // Names in a folder are unique, so the unstable sort gives walkdir's (stable) order.
    children.sort_unstable_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
    (children, complete)
}

/// The kind of the entry `name` of the folder `fd` from its `d_type`; when the file system
/// does not fill `d_type`, from `fstatat(AT_SYMLINK_NOFOLLOW)`, as std's
/// `DirEntry::file_type` does. None when that fails (walkdir yields an error then).
fn kind_of(d_type: FileType, fd: impl AsFd, name: &CStr) -> Option<Kind> {
    let file_type = match d_type {
        FileType::Unknown => {
            let stat = rustix::fs::statat(fd, name, AtFlags::SYMLINK_NOFOLLOW).ok()?;
            FileType::from_raw_mode(stat.st_mode)
        }
        known => known,
    };
    Some(match file_type {
        FileType::RegularFile => Kind::File,
        FileType::Directory => Kind::Dir,
        FileType::Symlink => Kind::Symlink,
        _ => Kind::Other,
    })
}
