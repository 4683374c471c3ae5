//! The files to work on, found from the paths given on the command line: directories
//! recursively through `walkdir`, one entry at a time (nothing is listed up front), with
//! symlinks followed and a link back to a directory above it reported, not followed.
//!
//! Two orders: the filesystem's directory order, in which memory does not depend on the
//! size of the tree, and name order, in which each directory's listing is held while it
//! is walked (the commands that rewrite files use it: a directory they change is never
//! being read at the same time).

use std::ffi::OsStr;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// The path that means standard input where a command accepts it.
pub const STDIN: &str = "-";

/// Whether `path` is `-`, standard input.
pub fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == OsStr::new(STDIN)
}

/// In which order directory entries come out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// As the filesystem lists them: the same order run after run on an unchanged tree,
    /// and memory independent of the number of files.
    Directory,
    /// By file name within each directory (the listing of one directory is held).
    Name,
}

/// One thing found while walking.
#[derive(Debug)]
pub enum Found {
    /// A regular file to work on (with [`Walk::stdin`], `-` is standard input).
    File { path: PathBuf },
    /// A path that could not be read (missing, no permission, a dangling symlink).
    Unreadable { path: PathBuf, error: io::Error },
    /// Something deliberately left alone (a FIFO inside a tree, a symlink loop).
    Skipped { path: PathBuf, reason: &'static str },
}

/// A walk over the given paths, in the given order; an iterator of [`Found`].
pub struct Walk<'a, K> {
    roots: std::slice::Iter<'a, PathBuf>,
    order: Order,
    stdin: bool,
    keep: K,
    tree: Option<walkdir::IntoIter>,
}

/// Walk `roots` in order; inside a tree, keep the files for which `keep` is true (a
/// file named on the command line is always kept).
pub fn walk<K: FnMut(&Path) -> bool>(roots: &[PathBuf], order: Order, keep: K) -> Walk<'_, K> {
    Walk { roots: roots.iter(), order, stdin: false, keep, tree: None }
}

impl<K: FnMut(&Path) -> bool> Walk<'_, K> {
    /// Let `-` among the roots stand for standard input (a `File` named `-`).
    pub fn stdin(mut self, stdin: bool) -> Self {
        self.stdin = stdin;
        self
    }

    fn entry(&mut self, entry: walkdir::DirEntry) -> Option<Found> {
        let kind = entry.file_type();
        let given = entry.depth() == 0;
        if kind.is_dir() {
            None
        } else if kind.is_file() {
            (given || (self.keep)(entry.path())).then(|| Found::File { path: entry.into_path() })
        } else if given {
            // Opening a FIFO would block until something writes to it: `-` is the way
            // to verify a stream.
            let error = io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a regular file or directory (use - to read standard input)",
            );
            Some(Found::Unreadable { path: entry.into_path(), error })
        } else {
            Some(Found::Skipped { path: entry.into_path(), reason: "not a regular file (a FIFO, socket or device)" })
        }
    }
}

impl<K: FnMut(&Path) -> bool> Iterator for Walk<'_, K> {
    type Item = Found;

    fn next(&mut self) -> Option<Found> {
        loop {
            if let Some(tree) = &mut self.tree {
                match tree.next() {
                    Some(Ok(entry)) => match self.entry(entry) {
                        Some(found) => return Some(found),
                        None => continue,
                    },
                    Some(Err(err)) => return Some(walk_error(err)),
                    None => self.tree = None,
                }
            }
            let root = self.roots.next()?;
            if self.stdin && is_stdin(root) {
                return Some(Found::File { path: root.clone() });
            }
            let tree = walkdir::WalkDir::new(root).follow_links(true).follow_root_links(true);
            self.tree = Some(match self.order {
                Order::Directory => tree.into_iter(),
                Order::Name => tree.sort_by_file_name().into_iter(),
            });
        }
    }
}

/// A walk error as what it is about: a loop is skipped, the rest is unreadable, and a
/// directory that cannot be listed says so (not just "Permission denied").
fn walk_error(err: walkdir::Error) -> Found {
    let path = err.path().map(Path::to_path_buf).unwrap_or_default();
    if err.loop_ancestor().is_some() {
        return Found::Skipped { path, reason: "symlink loop (a link to a directory above it), not followed" };
    }
    let is_dir = fs::symlink_metadata(&path).is_ok_and(|meta| meta.is_dir());
    let error = match err.into_io_error() {
        Some(error) if is_dir => io::Error::new(error.kind(), format!("cannot list this directory: {error}")),
        Some(error) => error,
        None => io::Error::other("cannot walk this path"),
    };
    Found::Unreadable { path, error }
}
