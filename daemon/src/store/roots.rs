//! The workspace roots the daemon watches (`watched_roots`, migrations 0003 and 0010): named
//! by `skillwatch daemon --root`, by editors through the language server, kept across restarts
//! until nobody has used them for the daemon's `--forget-roots-after`.

use std::path::{Path, PathBuf};

use rusqlite::params;

use super::Store;
use super::error::Result;
use super::time::now_ms;

/// A remembered root and when it was last used (epoch ms).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RememberedRoot {
    /// The folder (canonical when it was added).
    pub path: PathBuf,
    /// Last asked for, saved under, or shown in an editor.
    pub used_ms: i64,
}

impl Store {
    /// Remember a watched root, used now (a known root's use is refreshed).
    pub fn add_watched_root(&mut self, root: &Path) -> Result<()> {
        let now = now_ms();
        self.conn
            .prepare_cached(
                "INSERT INTO watched_roots (path, added_ms, used_ms) VALUES (?1, ?2, ?2)
                 ON CONFLICT (path) DO UPDATE SET used_ms = excluded.used_ms",
            )?
            .execute(params![root.to_string_lossy(), now])?;
        Ok(())
    }

    /// Record that a remembered root was used at `used_ms` (no-op for an unknown root).
    pub fn touch_watched_root(&mut self, root: &Path, used_ms: i64) -> Result<()> {
        self.conn
            .prepare_cached(
                "UPDATE watched_roots SET used_ms = max(coalesce(used_ms, 0), ?2) WHERE path = ?1",
            )?
            .execute(params![root.to_string_lossy(), used_ms])?;
        Ok(())
    }

    /// Forget a watched root (its folder was deleted, it was unwatched or went unused).
    pub fn remove_watched_root(&mut self, root: &Path) -> Result<()> {
        self.conn
            .prepare_cached("DELETE FROM watched_roots WHERE path = ?1")?
            .execute([root.to_string_lossy()])?;
        Ok(())
    }

    /// Every remembered root, by path.
    pub fn watched_roots(&self) -> Result<Vec<RememberedRoot>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT path, coalesce(used_ms, added_ms) FROM watched_roots ORDER BY path",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(RememberedRoot {
                path: PathBuf::from(r.get::<_, String>(0)?),
                used_ms: r.get(1)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(store: &Store) -> Vec<PathBuf> {
        let roots = store.watched_roots().unwrap();
        roots.into_iter().map(|r| r.path).collect()
    }

    #[test]
    fn roots_are_remembered_once_and_forgotten() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("h.sqlite3")).unwrap();
        store.add_watched_root(Path::new("/a")).unwrap();
        store.add_watched_root(Path::new("/a")).unwrap();
        store.add_watched_root(Path::new("/b")).unwrap();
        assert_eq!(
            paths(&store),
            vec![PathBuf::from("/a"), PathBuf::from("/b")]
        );
        store.remove_watched_root(Path::new("/a")).unwrap();
        assert_eq!(paths(&store), vec![PathBuf::from("/b")]);
    }

    #[test]
    fn a_root_is_used_when_touched_never_earlier() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("h.sqlite3")).unwrap();
        store.add_watched_root(Path::new("/a")).unwrap();
        let added = store.watched_roots().unwrap()[0].used_ms;
        store
            .touch_watched_root(Path::new("/a"), added + 5_000)
            .unwrap();
        store
            .touch_watched_root(Path::new("/a"), added + 1_000)
            .unwrap();
        store
            .touch_watched_root(Path::new("/unknown"), added)
            .unwrap();
        assert_eq!(
            store.watched_roots().unwrap(),
            vec![RememberedRoot {
                path: PathBuf::from("/a"),
                used_ms: added + 5_000
            }]
        );
    }
}
