//! Collecting the files to work on from files and directories given on the command
//! line: directories recursively, in name order, without following symlink loops.

use std::collections::HashSet;
use std::fs;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// One thing found while walking.
#[derive(Debug)]
pub enum Found {
    /// A regular file to work on, with its size when it was listed.
    File { path: PathBuf, size: u64 },
    /// A path that could not be read (missing, no permission, a symlink loop).
    Unreadable { path: PathBuf, error: io::Error },
    /// Something deliberately left alone (a FIFO, a socket, a directory seen before).
    Skipped { path: PathBuf, reason: &'static str },
}

/// Walk `roots` in order. Given paths are followed through symlinks; inside a tree,
/// symlinks to files are followed, and symlinks to directories are followed once per
/// directory (a directory already visited — a loop — is skipped).
pub fn walk(roots: &[PathBuf], mut keep: impl FnMut(&Path) -> bool) -> Vec<Found> {
    let mut found = Vec::new();
    let mut visited: HashSet<(u64, u64)> = HashSet::new();
    for root in roots {
        match fs::metadata(root) {
            Err(error) => found.push(Found::Unreadable { path: root.clone(), error }),
            Ok(meta) if meta.is_dir() => walk_tree(root, &meta, &mut visited, &mut found, &mut keep),
            Ok(meta) if meta.is_file() => found.push(Found::File { path: root.clone(), size: meta.len() }),
            Ok(_) => found.push(Found::Unreadable {
                path: root.clone(),
                error: io::Error::new(io::ErrorKind::InvalidInput, "not a regular file or directory"),
            }),
        }
    }
    found
}

fn walk_tree(
    root: &Path,
    meta: &fs::Metadata,
    visited: &mut HashSet<(u64, u64)>,
    found: &mut Vec<Found>,
    keep: &mut impl FnMut(&Path) -> bool,
) {
    // Depth-first with an explicit stack: a deep tree cannot exhaust the machine stack.
    enum Step {
        Dir(PathBuf),
        Item(Found),
    }
    if !visited.insert((meta.dev(), meta.ino())) {
        found.push(Found::Skipped { path: root.to_path_buf(), reason: "directory already visited" });
        return;
    }
    let mut stack = vec![Step::Dir(root.to_path_buf())];
    while let Some(step) = stack.pop() {
        let dir = match step {
            Step::Item(item) => {
                found.push(item);
                continue;
            }
            Step::Dir(dir) => dir,
        };
        let entries = match fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(error) => {
                found.push(Found::Unreadable { path: dir, error });
                continue;
            }
        };
        let mut children = Vec::new();
        for entry in entries {
            match entry {
                Ok(entry) => children.push(entry.path()),
                Err(error) => {
                    found.push(Found::Unreadable { path: dir.clone(), error });
                    break;
                }
            }
        }
        children.sort();
        let mut steps = Vec::new();
        for path in children {
            let meta = match fs::symlink_metadata(&path) {
                Ok(meta) => meta,
                Err(error) => {
                    steps.push(Step::Item(Found::Unreadable { path, error }));
                    continue;
                }
            };
            // Follow symlinks to see what they point at (a loop or a dangling link is an error).
            let meta = if meta.file_type().is_symlink() {
                match fs::metadata(&path) {
                    Ok(target) => target,
                    Err(error) => {
                        steps.push(Step::Item(Found::Unreadable { path, error }));
                        continue;
                    }
                }
            } else {
                meta
            };
            if meta.is_dir() {
                if visited.insert((meta.dev(), meta.ino())) {
                    steps.push(Step::Dir(path));
                } else {
                    steps.push(Step::Item(Found::Skipped { path, reason: "directory already visited (symlink loop)" }));
                }
            } else if meta.is_file() {
                if keep(&path) {
                    steps.push(Step::Item(Found::File { path, size: meta.len() }));
                }
            } else {
                steps.push(Step::Item(Found::Skipped { path, reason: "not a regular file" }));
            }
        }
        // The stack pops from the end: push in reverse for name order.
        stack.extend(steps.into_iter().rev());
    }
}
