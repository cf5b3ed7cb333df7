//! The workspace roots the daemon watches (`watched_roots`, migration 0003): named by
//! `skillwatch daemon --root`, by editors through the language server, kept across restarts.

use std::path::{Path, PathBuf};

use rusqlite::params;

use super::Store;
use super::error::Result;
use super::time::now_ms;

impl Store {
    /// Remember a watched root (no-op when already known).
    pub fn add_watched_root(&mut self, root: &Path) -> Result<()> {
        self.conn
            .prepare_cached(
                "INSERT INTO watched_roots (path, added_ms) VALUES (?1, ?2)
                 ON CONFLICT (path) DO NOTHING",
            )?
            .execute(params![root.to_string_lossy(), now_ms()])?;
        Ok(())
    }

    /// Forget a watched root (e.g. its folder was deleted).
    pub fn remove_watched_root(&mut self, root: &Path) -> Result<()> {
        self.conn
            .prepare_cached("DELETE FROM watched_roots WHERE path = ?1")?
            .execute([root.to_string_lossy()])?;
        Ok(())
    }

    /// Every remembered root, by path.
    pub fn watched_roots(&self) -> Result<Vec<PathBuf>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT path FROM watched_roots ORDER BY path")?;
        let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
        Ok(rows
            .map(|r| r.map(PathBuf::from))
            .collect::<rusqlite::Result<Vec<_>>>()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_are_remembered_once_and_forgotten() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("h.sqlite3")).unwrap();
        store.add_watched_root(Path::new("/a")).unwrap();
        store.add_watched_root(Path::new("/a")).unwrap();
        store.add_watched_root(Path::new("/b")).unwrap();
        assert_eq!(
            store.watched_roots().unwrap(),
            vec![PathBuf::from("/a"), PathBuf::from("/b")]
        );
        store.remove_watched_root(Path::new("/a")).unwrap();
        assert_eq!(store.watched_roots().unwrap(), vec![PathBuf::from("/b")]);
    }
}
