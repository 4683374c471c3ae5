//! A scratch directory for the unit tests that touch the file system (test builds
//! with `std` only): made empty under the system temp directory, removed when dropped.
//! The file system is closed to Miri, so those tests are ignored there.

use std::path::{Path, PathBuf};

/// `{temp}/membrane-{name}-{pid}`, empty; removed with everything in it on drop.
pub(crate) struct Scratch(PathBuf);

impl Scratch {
    pub(crate) fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(std::format!("membrane-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    pub(crate) fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
