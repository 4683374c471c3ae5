//! Snapshot files (SPEC §5, needs `std`): the atomic save, load, the latest snapshot of
//! a directory, and restore through the epoch guard.

use super::Snapshot;
use crate::error::{Error, ErrorCode};
use crate::sink::IoSink;
use crate::table::is_valid_id;
use core::hash::{BuildHasher, Hasher};
use core::sync::atomic::{AtomicU64, Ordering};
use std::collections::hash_map::RandomState;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::vec::Vec;

/// A point in [`SnapshotStore::save`] that has just completed, as reported to the
/// observer of [`SnapshotStore::save_observed`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SaveStep {
    /// The temp file `.{node_id}.<random>.tmp` exists (empty).
    Created,
    /// The snapshot text is in the temp file (written and flushed, not yet synced).
    Written,
    /// The temp file is fsynced.
    Synced,
    /// The temp file has been renamed onto `{node_id}.json`.
    Renamed,
    /// The directory is fsynced: the save is durable.
    DirectorySynced,
}

impl SaveStep {
    /// Every step, in order.
    pub const ALL: [SaveStep; 5] =
        [SaveStep::Created, SaveStep::Written, SaveStep::Synced, SaveStep::Renamed, SaveStep::DirectorySynced];
}

/// The snapshots of one state directory: `{dir}/{node_id}.json`.
///
/// ```
/// use membrane_frame::snapshot::{Snapshot, SnapshotStore};
/// # let dir = std::env::temp_dir().join(format!("membrane-doc-store-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir).unwrap();
/// let store = SnapshotStore::new(&dir);
/// let mut live_epoch = 16;
/// let snapshot = Snapshot::builder(0, 1735600000.0).server(1, 0).build()?;
/// store.checkpoint("peer-1", &mut live_epoch, &snapshot)?; // written with epoch 17
/// assert_eq!(live_epoch, 17);
/// let mut buf = Vec::new();
/// let restored = store.restore("peer-1", 18, &mut buf)?; // one behind: accepted
/// assert_eq!(restored.cluster_epoch(), 17);
/// let err = store.restore("peer-1", 19, &mut buf).unwrap_err(); // two behind: deleted
/// assert_eq!(err.code(), membrane_frame::ErrorCode::StaleEpoch);
/// assert!(!dir.join("peer-1.json").exists());
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # Ok::<(), membrane_frame::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct SnapshotStore {
    dir: PathBuf,
}

/// Whether a snapshot file name is safe for `node_id` (no path separator, NUL, or
/// leading dot).
fn is_file_safe_node_id(node_id: &str) -> bool {
    is_valid_id(node_id) && !node_id.starts_with('.') && !node_id.contains(['/', '\\', '\0'])
}

fn io_error(reason: &'static str) -> Error {
    Error::new(ErrorCode::Io, reason)
}

/// A random-looking 64-bit value for temp names (collisions are retried anyway).
fn temp_token(attempt: u32) -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    hasher.write_u32(attempt);
    hasher.write_u32(std::process::id());
    if let Ok(now) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        hasher.write_u128(now.as_nanos());
    }
    hasher.finish()
}

/// Make the directory's entries (the rename) durable.
fn sync_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
        File::open(dir)?.sync_all()
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}

fn read_file(path: &Path, buf: &mut Vec<u8>) -> Result<(), Error> {
    buf.clear();
    File::open(path)
        .and_then(|mut file| file.read_to_end(buf))
        .map(|_| ())
        .map_err(|_| io_error("cannot read the snapshot file"))
}

impl SnapshotStore {
    /// The store of `dir` (which must exist).
    pub fn new(dir: impl Into<PathBuf>) -> SnapshotStore {
        SnapshotStore { dir: dir.into() }
    }

    /// The state directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// `{dir}/{node_id}.json`; `invalid_argument` for a node id that is not 1–128
    /// characters or not usable as a file name (a `/`, `\` or NUL in it, or a leading
    /// `.`, which would hide it among the temp files).
    pub fn path_for(&self, node_id: &str) -> Result<PathBuf, Error> {
        if !is_file_safe_node_id(node_id) {
            return Err(Error::new(ErrorCode::InvalidArgument, "node_id is not usable as a snapshot file name")
                .in_field("node_id"));
        }
        Ok(self.dir.join(std::format!("{node_id}.json")))
    }

    /// Save `snapshot` as `{node_id}.json` atomically: write a temp file
    /// `.{node_id}.<random>.tmp` in the same directory, fsync it, rename it onto the
    /// target, fsync the directory. A crash at any moment leaves either the old or the
    /// new complete file; a failed save removes its temp file. Returns the path.
    pub fn save(&self, node_id: &str, snapshot: &Snapshot<'_>) -> Result<PathBuf, Error> {
        self.save_observed(node_id, snapshot, |_| Ok(()))
    }

    /// [`save`](Self::save), calling `observe` after each [`SaveStep`]; an error from
    /// it fails the save at that point as an I/O failure would (for fault-injection
    /// tests and tracing). Before the rename the temp file is then removed and the old
    /// snapshot is untouched; after it the new snapshot is in place.
    pub fn save_observed(
        &self,
        node_id: &str,
        snapshot: &Snapshot<'_>,
        mut observe: impl FnMut(SaveStep) -> io::Result<()>,
    ) -> Result<PathBuf, Error> {
        let target = self.path_for(node_id)?;
        let (temp, file) = self.create_temp(node_id, temp_token)?;
        let written = (|| {
            observe(SaveStep::Created).map_err(|_| io_error("save failed after creating the temp file"))?;
            let mut writer = BufWriter::new(&file);
            snapshot.write_to(&mut IoSink(&mut writer)).map_err(|_| io_error("cannot write the temp file"))?;
            writer.flush().map_err(|_| io_error("cannot write the temp file"))?;
            drop(writer);
            observe(SaveStep::Written).map_err(|_| io_error("save failed after writing the temp file"))?;
            file.sync_all().map_err(|_| io_error("cannot fsync the temp file"))?;
            observe(SaveStep::Synced).map_err(|_| io_error("save failed after syncing the temp file"))
        })();
        drop(file);
        if let Err(err) = written {
            let _ = fs::remove_file(&temp);
            return Err(err);
        }
        if fs::rename(&temp, &target).is_err() {
            let _ = fs::remove_file(&temp);
            return Err(io_error("cannot rename the temp file onto the snapshot"));
        }
        observe(SaveStep::Renamed).map_err(|_| io_error("save failed after the rename"))?;
        sync_dir(&self.dir).map_err(|_| io_error("cannot fsync the state directory"))?;
        observe(SaveStep::DirectorySynced).map_err(|_| io_error("save failed after syncing the directory"))?;
        Ok(target)
    }

    /// A new temp file for `node_id`, named by `token(attempt)`: a name already taken is
    /// retried with the next attempt (16 in all), any other failure ends the search.
    fn create_temp(&self, node_id: &str, token: impl Fn(u32) -> u64) -> Result<(PathBuf, File), Error> {
        for attempt in 0..16 {
            let path = self.dir.join(std::format!(".{node_id}.{:016x}.tmp", token(attempt)));
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(file) => return Ok((path, file)),
                Err(err) if err.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(_) => break,
            }
        }
        Err(io_error("cannot create the temp file"))
    }

    /// A checkpoint: bump the live epoch by one, then save `snapshot` with that epoch.
    /// The bump stands even if the save fails (an epoch is never handed out twice).
    /// `invalid_argument` when the epoch cannot grow.
    pub fn checkpoint(&self, node_id: &str, live_epoch: &mut u64, snapshot: &Snapshot<'_>) -> Result<PathBuf, Error> {
        let next = live_epoch
            .checked_add(1)
            .ok_or(Error::new(ErrorCode::InvalidArgument, "cluster epoch cannot grow").in_field("cluster_epoch"))?;
        *live_epoch = next;
        self.save(node_id, &snapshot.with_cluster_epoch(next))
    }

    /// Read and parse `{node_id}.json` into `buf` (no epoch guard).
    pub fn load<'b>(&self, node_id: &str, buf: &'b mut Vec<u8>) -> Result<Snapshot<'b>, Error> {
        SnapshotStore::load_path(&self.path_for(node_id)?, buf)
    }

    /// Read and parse the snapshot file at `path` into `buf`.
    pub fn load_path<'b>(path: &Path, buf: &'b mut Vec<u8>) -> Result<Snapshot<'b>, Error> {
        read_file(path, buf)?;
        let text: &'b Vec<u8> = buf;
        Snapshot::parse(text)
    }

    /// Restore `{node_id}.json` under live epoch `live_epoch` (see
    /// [`restore_path`](Self::restore_path)).
    pub fn restore<'b>(&self, node_id: &str, live_epoch: u64, buf: &'b mut Vec<u8>) -> Result<Snapshot<'b>, Error> {
        SnapshotStore::restore_path(&self.path_for(node_id)?, live_epoch, buf)
    }

    /// Restore the snapshot at `path` through the epoch guard
    /// ([`Snapshot::parse_guarded`]): accepted iff its `cluster_epoch` `e` satisfies
    /// `e >= live_epoch - 1`. A stale snapshot (two or more behind, or without an
    /// epoch) is `stale_epoch` and the file is deleted; an unreadable file, a JSON
    /// problem, a wrong version or a broken field is reported and the file is left
    /// untouched.
    pub fn restore_path<'b>(path: &Path, live_epoch: u64, buf: &'b mut Vec<u8>) -> Result<Snapshot<'b>, Error> {
        read_file(path, buf)?;
        let text: &'b Vec<u8> = buf;
        match Snapshot::parse_guarded(text, live_epoch) {
            Err(err) if err.code() == ErrorCode::StaleEpoch => {
                match fs::remove_file(path) {
                    Ok(()) => Err(err),
                    Err(_) => Err(Error::new(ErrorCode::StaleEpoch, "stale snapshot; deleting it failed")
                        .in_field("cluster_epoch")),
                }
            }
            other => other,
        }
    }

    /// The latest snapshot of the directory: among the `*.json` files (not the
    /// dot-files, where temp files live), in file-name order, the one with the largest
    /// `captured_at`, ties to the first seen; files that cannot be read or parsed are
    /// skipped. Its text ends up in `buf`. `io` only when the directory cannot be
    /// listed.
    pub fn latest<'b>(&self, buf: &'b mut Vec<u8>) -> Result<Option<(PathBuf, Snapshot<'b>)>, Error> {
        let mut paths: Vec<PathBuf> = fs::read_dir(&self.dir)
            .map_err(|_| io_error("cannot list the state directory"))?
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .filter(|path| {
                let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
                name.ends_with(".json") && !name.starts_with('.') && path.is_file()
            })
            .collect();
        paths.sort();
        buf.clear();
        let mut best: Option<(PathBuf, f64)> = None;
        let mut candidate = Vec::new();
        for path in paths {
            if read_file(&path, &mut candidate).is_err() {
                continue;
            }
            let Ok(captured_at) = Snapshot::parse(&candidate).map(|s| s.captured_at()) else {
                continue;
            };
            if best.as_ref().is_none_or(|(_, best_at)| captured_at > *best_at) {
                best = Some((path, captured_at));
                core::mem::swap(buf, &mut candidate);
            }
        }
        let Some((path, _)) = best else {
            return Ok(None);
        };
        let text: &'b Vec<u8> = buf;
        Ok(Some((path, Snapshot::parse(text)?)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scratch::Scratch;

    /// Temp names come from tokens that differ call by call (and attempt by attempt),
    /// so two saves in flight never pick the same name.
    #[test]
    #[cfg_attr(miri, ignore = "the wall clock is closed to Miri")]
    fn temp_tokens_differ_from_call_to_call() {
        let mut tokens: Vec<u64> = (0..1000).map(|i| temp_token(i % 16)).collect();
        tokens.sort_unstable();
        tokens.dedup();
        assert_eq!(tokens.len(), 1000);
    }

    /// A taken temp name is retried under the next token; an error other than a taken
    /// name (here: no directory) is not retried; 16 taken names in a row give up.
    #[test]
    #[cfg_attr(miri, ignore = "the file system is closed to Miri")]
    fn a_taken_temp_name_is_retried_and_other_failures_are_not() {
        let scratch = Scratch::new("store-temp");
        let store = SnapshotStore::new(scratch.path());
        let name = |token: u64| scratch.path().join(std::format!(".n.{token:016x}.tmp"));
        fs::write(name(7), b"taken").unwrap();
        let (path, _) = store.create_temp("n", |attempt| if attempt == 0 { 7 } else { 8 }).unwrap();
        assert_eq!(path, name(8));
        assert_eq!(fs::read(name(7)).unwrap(), b"taken", "the taken file is left as it was");

        let calls = core::cell::Cell::new(0);
        let err = store
            .create_temp("n", |_| {
                calls.set(calls.get() + 1);
                7
            })
            .unwrap_err();
        assert_eq!((err.code(), err.reason(), calls.get()), (ErrorCode::Io, "cannot create the temp file", 16));

        let missing = SnapshotStore::new(scratch.path().join("missing"));
        calls.set(0);
        let err = missing
            .create_temp("n", |attempt| {
                calls.set(calls.get() + 1);
                u64::from(attempt)
            })
            .unwrap_err();
        assert_eq!((err.code(), calls.get()), (ErrorCode::Io, 1));
    }

    /// The directory is really opened to be synced: one that is not there is an error.
    #[test]
    #[cfg(unix)]
    #[cfg_attr(miri, ignore = "the file system is closed to Miri")]
    fn syncing_a_directory_opens_it() {
        let scratch = Scratch::new("store-sync");
        assert!(sync_dir(scratch.path()).is_ok());
        assert_eq!(sync_dir(&scratch.path().join("missing")).unwrap_err().kind(), io::ErrorKind::NotFound);
    }
}
