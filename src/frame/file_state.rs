//! Whether a file stayed the same while it was verified (needs `std`).
//!
//! A verdict on a file is a verdict on the bytes read from it. If another process
//! truncates, extends, rewrites, renames over or removes the file while it is read, the
//! bytes read may verify although the file no longer holds them (a rewrite of bytes
//! already read, a file put in its place), or fail for a reason that is not the file's
//! (a truncation). Readers that report on files — the command-line tool's `verify`, the
//! Python package's `verify_files` — take the file's [`FileState`] when they open it and
//! ask [`FileState::change_since`] after the last byte was read: a change makes the
//! verdict an I/O error naming the change, never `ok`.
//!
//! ```
//! use membrane_frame::frame::{FileChange, FileState};
//! # let dir = std::env::temp_dir().join(format!("membrane-doc-{}", std::process::id()));
//! # std::fs::create_dir_all(&dir)?;
//! let path = dir.join("f.frame");
//! let frame = membrane_frame::example_frame();
//! std::fs::write(&path, &frame)?;
//! let file = std::fs::File::open(&path)?;
//! let opened = FileState::of(&file.metadata()?);
//! // ... read and verify the file ...
//! assert_eq!(opened.change_since(&file, &path), None);
//! std::fs::write(&path, b"something else")?;
//! let change = opened.change_since(&file, &path).expect("the length changed");
//! assert_eq!(change, FileChange::Length { from: frame.len() as u64, to: 14 });
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), std::io::Error>(())
//! ```

use core::fmt;
use std::fs::{self, File, Metadata};
use std::io;
use std::path::Path;
use std::time::SystemTime;

/// What says a file is still the one that was opened, with the same bytes: its length,
/// its modification time, and on Unix its device, inode and status-change time (every
/// write, truncation or `chmod` moves the change time, so a rewrite that keeps the
/// length and sets the modification time back is still seen). The times have the file
/// system's granularity (a few milliseconds on Linux): a file written in the same tick
/// as its last change before the open keeps its times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileState {
    len: u64,
    modified: Option<SystemTime>,
    #[cfg(unix)]
    inode: (u64, u64),
    #[cfg(unix)]
    status_changed: (i64, i64),
}

/// How a file changed since its [`FileState`] was taken.
#[derive(Debug, PartialEq, Eq)]
pub enum FileChange {
    /// Truncated or extended.
    Length {
        /// The length when the state was taken.
        from: u64,
        /// The length now.
        to: u64,
    },
    /// Written to (or its status changed) with its length kept.
    Written,
    /// Its path now names another file (renamed over, or replaced by a copy).
    Replaced,
    /// Its path no longer opens (removed, or a directory on the way is gone).
    Gone(io::ErrorKind),
    /// The open file's own state can no longer be read.
    Unknown(io::ErrorKind),
}

impl fmt::Display for FileChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FileChange::Length { from, to } => write!(f, "its length went from {from} to {to} bytes"),
            FileChange::Written => f.write_str("it was written to (its modification or change time moved)"),
            FileChange::Replaced => f.write_str("another file was put in its place"),
            FileChange::Gone(kind) => write!(f, "its path no longer opens ({kind})"),
            FileChange::Unknown(kind) => write!(f, "its state can no longer be read ({kind})"),
        }
    }
}

impl FileState {
    /// The state `meta` (of the file just opened) describes.
    pub fn of(meta: &Metadata) -> FileState {
        #[cfg(unix)]
        use std::os::unix::fs::MetadataExt as _;
        FileState {
            len: meta.len(),
            modified: meta.modified().ok(),
            #[cfg(unix)]
            inode: (meta.dev(), meta.ino()),
            #[cfg(unix)]
            status_changed: (meta.ctime(), meta.ctime_nsec()),
        }
    }

    /// The file's length when the state was taken.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the file was empty when the state was taken.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How the file open as `file` (opened at `path` in this state) has changed since,
    /// or whether `path` now names another file; `None` if neither. A change of length
    /// is reported first, then one of path, then any other.
    pub fn change_since(&self, file: &File, path: &Path) -> Option<FileChange> {
        let now = match file.metadata() {
            Ok(meta) => FileState::of(&meta),
            Err(err) => return Some(FileChange::Unknown(err.kind())),
        };
        if now.len != self.len {
            return Some(FileChange::Length { from: self.len, to: now.len });
        }
        match fs::metadata(path) {
            Ok(named) if FileState::of(&named).same_file(self) => {}
            Ok(_) => return Some(FileChange::Replaced),
            Err(err) => return Some(FileChange::Gone(err.kind())),
        }
        (now != *self).then_some(FileChange::Written)
    }

    fn same_file(&self, other: &FileState) -> bool {
        #[cfg(unix)]
        return self.inode == other.inode;
        #[cfg(not(unix))]
        return self.same_length_and_time(other);
    }

    /// Where no inode tells files apart: the same length and modification time.
    #[cfg(not(unix))]
    fn same_length_and_time(&self, other: &FileState) -> bool {
        self.len == other.len && self.modified == other.modified
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scratch::Scratch;
    use std::io::Write as _;
    use std::path::PathBuf;

    /// A file of `len` bytes, opened, with its state; written a moment before so that a
    /// change made now moves its times.
    fn opened(scratch: &Scratch, len: usize) -> (PathBuf, File, FileState) {
        let path = scratch.path().join("f");
        fs::write(&path, vec![7u8; len]).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(30));
        let file = File::open(&path).unwrap();
        let state = FileState::of(&file.metadata().unwrap());
        (path, file, state)
    }

    #[test]
    #[cfg_attr(miri, ignore = "the file system is closed to Miri")]
    fn a_file_left_alone_has_not_changed() {
        let scratch = Scratch::new("file-state-alone");
        let (path, file, state) = opened(&scratch, 100);
        assert_eq!((state.len(), state.is_empty()), (100, false));
        assert_eq!(state.change_since(&file, &path), None);
    }

    #[test]
    #[cfg_attr(miri, ignore = "the file system is closed to Miri")]
    fn an_empty_file_is_empty_and_one_byte_is_not() {
        let scratch = Scratch::new("file-state-empty");
        let (_, _, state) = opened(&scratch, 0);
        assert_eq!((state.len(), state.is_empty()), (0, true));
        let (_, _, state) = opened(&scratch, 1);
        assert_eq!((state.len(), state.is_empty()), (1, false));
    }

    #[test]
    #[cfg_attr(miri, ignore = "the file system is closed to Miri")]
    fn a_length_change_is_reported_with_both_lengths() {
        let scratch = Scratch::new("file-state-length");
        let (path, file, state) = opened(&scratch, 100);
        fs::OpenOptions::new().append(true).open(&path).unwrap().write_all(b"more").unwrap();
        assert_eq!(state.change_since(&file, &path), Some(FileChange::Length { from: 100, to: 104 }));
        fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(10).unwrap();
        let change = state.change_since(&file, &path).unwrap();
        assert_eq!(change.to_string(), "its length went from 100 to 10 bytes");
    }

    #[test]
    #[cfg(unix)]
    #[cfg_attr(miri, ignore = "the file system is closed to Miri")]
    fn a_write_that_keeps_the_length_is_seen() {
        let scratch = Scratch::new("file-state-written");
        let (path, file, state) = opened(&scratch, 100);
        let writer = fs::OpenOptions::new().write(true).open(&path).unwrap();
        std::os::unix::fs::FileExt::write_all_at(&writer, b"x", 3).unwrap();
        assert_eq!(state.change_since(&file, &path), Some(FileChange::Written));
    }

    #[test]
    #[cfg_attr(miri, ignore = "the file system is closed to Miri")]
    fn a_file_renamed_over_or_removed_is_seen_before_its_other_changes() {
        let scratch = Scratch::new("file-state-replaced");
        let (path, file, state) = opened(&scratch, 100);
        let other = scratch.path().join("other");
        fs::write(&other, vec![7u8; 100]).unwrap();
        fs::rename(&other, &path).unwrap();
        // Unlinking the old file moved its change time too; the path is named first.
        assert_eq!(state.change_since(&file, &path), Some(FileChange::Replaced));
        fs::remove_file(&path).unwrap();
        let change = state.change_since(&file, &path).unwrap();
        assert_eq!(change, FileChange::Gone(io::ErrorKind::NotFound));
        assert!(change.to_string().starts_with("its path no longer opens ("), "{change}");
    }

    #[test]
    fn every_change_says_what_happened_in_words() {
        let said = |change: FileChange| change.to_string();
        assert_eq!(said(FileChange::Length { from: 3, to: 7 }), "its length went from 3 to 7 bytes");
        assert_eq!(said(FileChange::Written), "it was written to (its modification or change time moved)");
        assert_eq!(said(FileChange::Replaced), "another file was put in its place");
        let kind = io::ErrorKind::PermissionDenied;
        assert_eq!(said(FileChange::Gone(kind)), std::format!("its path no longer opens ({kind})"));
        assert_eq!(said(FileChange::Unknown(kind)), std::format!("its state can no longer be read ({kind})"));
    }
}
