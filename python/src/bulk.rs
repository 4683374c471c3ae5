//! `verify_files`: the bulk validator. Directories are walked recursively (`walkdir`,
//! symlinks followed, a link to a directory above it skipped), files are verified by a
//! pool of threads that never take the GIL, and `(path, code, offset)` comes out as
//! each result is ready (in completion order, not walk order).
//!
//! At the trailer and full levels a worker reads files of up to 16 MiB whole (into
//! page-aligned buffers it keeps, at most 32 MiB of them) and verifies up to sixteen at
//! once with `frame::verify_batch`, whose multi-buffer SHA-256 runs 1.25x to 2x one
//! stream's speed per x86-64 core (SHA-NI or AVX-512, by the core); the verdicts are
//! exactly the one-frame reader's. Bigger files, and every file below the trailer
//! level, stream through a 128 KiB page-aligned buffer into the library's
//! `StreamVerifier`, as the command-line tool's `verify` does. So memory is bounded per worker, whatever the file sizes, and
//! the bounded queues between the stages keep it independent of the number of files.
//!
//! A file changed by another process while it is read (truncated, grown, written to,
//! renamed over, removed: the library's `FileState`) is `"io"`, never a verdict on bytes
//! it no longer holds.

use crate::frame::Level;
use membrane::frame::{verify_batch, FileState, VERIFY_BATCH_GROUP};
use membrane::{ErrorCode, ReadOptions, StreamVerifier, VerifyLevel};
use pyo3::prelude::*;
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Mutex, PoisonError};

/// Entries queued between the walk, the workers and the caller.
const QUEUE: usize = 1024;
const READ_BUFFER: usize = 128 << 10;
/// Files up to this size are read whole and verified in batches.
const BATCH_FILE_LIMIT: u64 = 16 << 20;
/// Bytes a worker holds for one batch, at most (one file may take it alone).
const BATCH_BYTES: u64 = 32 << 20;
const PAGE: usize = 4096;

/// One result: the path (a `str` in Python, as `os.fsdecode` gives it), a SPEC §8 code
/// name (or `"io"`, `"skipped"`), the offset.
type Verdict = (std::ffi::OsString, &'static str, Option<u64>);

/// An iterator of `(path, code, offset)` for every file under the given paths.
#[pyclass(module = "membrane_frame", name = "VerifyFiles")]
pub struct VerifyFiles {
    results: Option<Mutex<Receiver<Verdict>>>,
    stop: Arc<AtomicBool>,
}

/// Verify every file under `paths` (a path or a list of paths; directories
/// recursively) at `level` on `threads` threads (default: one per core), yielding
/// `(path, code, offset)` as results arrive: `code` is `"ok"`, a SPEC §8 code name,
/// `"io"` (the path could not be read) or `"skipped"` (a FIFO, socket or device inside a
/// tree; a symlink loop); `offset` is the byte the error concerns, or None.
#[pyfunction]
#[pyo3(signature = (paths, level = Level::TRAILER, threads = None))]
pub fn verify_files(paths: &Bound<'_, PyAny>, level: Level, threads: Option<usize>) -> PyResult<VerifyFiles> {
    let roots: Vec<PathBuf> = match paths.extract::<PathBuf>() {
        Ok(one) => vec![one],
        Err(_) => paths.extract()?,
    };
    let options = ReadOptions::new().level(level.0);
    let threads = threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from)).max(1);
    let stop = Arc::new(AtomicBool::new(false));
    let (files, queued) = mpsc::sync_channel::<PathBuf>(QUEUE);
    let (verdicts, results) = mpsc::sync_channel::<Verdict>(QUEUE);
    let queued = Arc::new(Mutex::new(queued));
    for _ in 0..threads {
        let (queued, verdicts, stop) = (Arc::clone(&queued), verdicts.clone(), Arc::clone(&stop));
        std::thread::spawn(move || work(options, &queued, &verdicts, &stop));
    }
    let walk_stop = Arc::clone(&stop);
    std::thread::spawn(move || walk(&roots, &files, &verdicts, &walk_stop));
    Ok(VerifyFiles { results: Some(Mutex::new(results)), stop })
}

#[pymethods]
impl VerifyFiles {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> Option<Verdict> {
        let results = self.results.as_ref()?;
        // Waiting for the workers does not hold the GIL.
        py.detach(|| results.lock().unwrap_or_else(PoisonError::into_inner).recv().ok())
    }
}

impl Drop for VerifyFiles {
    fn drop(&mut self) {
        // An iterator dropped early: the threads stop at their next file.
        self.stop.store(true, Ordering::Relaxed);
        self.results = None;
    }
}

/// The walk: files to the workers, what cannot be verified straight to the results.
fn walk(roots: &[PathBuf], files: &SyncSender<PathBuf>, verdicts: &SyncSender<Verdict>, stop: &AtomicBool) {
    for root in roots {
        for entry in walkdir::WalkDir::new(root).follow_links(true).follow_root_links(true) {
            if stop.load(Ordering::Relaxed) {
                return;
            }
            let sent = match entry {
                Ok(entry) if entry.file_type().is_dir() => Ok(()),
                Ok(entry) if entry.file_type().is_file() => files.send(entry.into_path()).map_err(drop),
                Ok(entry) if entry.depth() == 0 => {
                    verdicts.send((entry.into_path().into_os_string(), "io", None)).map_err(drop)
                }
                Ok(entry) => verdicts.send((entry.into_path().into_os_string(), "skipped", None)).map_err(drop),
                Err(err) => {
                    let code = if err.loop_ancestor().is_some() { "skipped" } else { "io" };
                    let path = err.path().map(Path::to_path_buf).unwrap_or_else(|| root.clone());
                    verdicts.send((path.into_os_string(), code, None)).map_err(drop)
                }
            };
            if sent.is_err() {
                return;
            }
        }
    }
}

/// A worker: verify files until the walk is done or the caller went away. Small files
/// at the trailer and full levels wait in a batch, which is verified when it is full or
/// when no more paths are queued (so results never wait on a slow walk).
fn work(options: ReadOptions, queued: &Mutex<Receiver<PathBuf>>, verdicts: &SyncSender<Verdict>, stop: &AtomicBool) {
    let mut checker = Checker::new(options);
    let mut batch = Batch::default();
    let batching = options.level >= VerifyLevel::Trailer;
    loop {
        let next = if batch.is_empty() {
            queued.lock().unwrap_or_else(PoisonError::into_inner).recv().map_err(|_| true)
        } else {
            // With files waiting, never block: another worker holding the queue means
            // it is empty right now.
            match queued.try_lock() {
                Ok(queue) => queue.try_recv().map_err(|err| err == mpsc::TryRecvError::Disconnected),
                Err(_) => Err(false),
            }
        };
        let path = match next {
            Ok(path) => path,
            Err(finished) => {
                // Nothing queued right now (or the walk is over): verify what waits.
                if !batch.flush(&options, verdicts) || finished {
                    return;
                }
                continue;
            }
        };
        if stop.load(Ordering::Relaxed) {
            return;
        }
        if batching {
            let mut added = batch.add(&path);
            if added == Added::NoRoom {
                if !batch.flush(&options, verdicts) {
                    return;
                }
                added = batch.add(&path);
            }
            if added == Added::Yes {
                if batch.is_full() && !batch.flush(&options, verdicts) {
                    return;
                }
                continue;
            }
        }
        let (code, offset) = verdict_of(checker.check(&path));
        if verdicts.send((path.into_os_string(), code, offset)).is_err() {
            return;
        }
    }
}

fn verdict_of(result: Result<(), Failure>) -> (&'static str, Option<u64>) {
    match result {
        Ok(()) => ("ok", None),
        Err(Failure::Frame(err)) => (err.code().name(), err.offset()),
        Err(Failure::Io) => (ErrorCode::Io.name(), None),
    }
}

/// What [`Batch::add`] did with a file.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Added {
    Yes,
    /// Small, but the batch is full: verify it, then add again.
    NoRoom,
    /// Not batched (too big, or unreadable as a whole): stream it.
    No,
}

/// Small files read whole, waiting to be verified together. Their buffers are kept
/// (page-aligned, like the streaming buffer) and reused by the next batch.
#[derive(Default)]
struct Batch {
    paths: Vec<PathBuf>,
    /// Per file: the read result (the file's length within its buffer, or `io`).
    lens: Vec<Result<usize, ()>>,
    buffers: Vec<Vec<u8>>,
    bytes: u64,
}

impl Batch {
    fn is_empty(&self) -> bool {
        self.paths.is_empty()
    }

    fn is_full(&self) -> bool {
        self.paths.len() == VERIFY_BATCH_GROUP || self.bytes >= BATCH_BYTES
    }

    /// Read `path` into the batch if it is a small file and there is room.
    fn add(&mut self, path: &Path) -> Added {
        let Ok(len) = std::fs::metadata(path).map(|meta| meta.len()) else { return Added::No };
        if len > BATCH_FILE_LIMIT {
            return Added::No;
        }
        if self.bytes + len > BATCH_BYTES && !self.is_empty() {
            return Added::NoRoom;
        }
        let slot = self.paths.len();
        if self.buffers.len() == slot {
            self.buffers.push(Vec::new());
        }
        let Some(buffer) = self.buffers.get_mut(slot) else { return Added::No };
        let read = read_whole(path, len, buffer);
        if read.is_err() && File::open(path).is_ok() {
            // Changed size while read, or a read error after opening: the streaming
            // path decides.
            return Added::No;
        }
        self.paths.push(path.to_path_buf());
        self.lens.push(read);
        self.bytes += len;
        Added::Yes
    }

    /// Verify the waiting files and send their verdicts; `false` when the caller went
    /// away.
    fn flush(&mut self, options: &ReadOptions, verdicts: &SyncSender<Verdict>) -> bool {
        let mut views: [&[u8]; VERIFY_BATCH_GROUP] = [&[]; VERIFY_BATCH_GROUP];
        let mut results: [Option<(&'static str, Option<u64>)>; VERIFY_BATCH_GROUP] = [None; VERIFY_BATCH_GROUP];
        let mut readable = [0usize; VERIFY_BATCH_GROUP];
        let mut count = 0;
        for (index, (len, buffer)) in self.lens.iter().zip(&self.buffers).enumerate() {
            match len {
                Ok(len) => {
                    if let (Some(view), Some(slot)) = (views.get_mut(count), readable.get_mut(count)) {
                        *view = aligned(buffer).get(..*len).unwrap_or_default();
                        *slot = index;
                        count += 1;
                    }
                }
                Err(()) => {
                    if let Some(result) = results.get_mut(index) {
                        *result = Some(verdict_of(Err(Failure::Io)));
                    }
                }
            }
        }
        verify_batch(views.get(..count).unwrap_or_default(), options, |at, verdict| {
            let result = verdict.map(|_| ()).map_err(Failure::Frame);
            if let Some(slot) = readable.get(at).and_then(|&index| results.get_mut(index)) {
                *slot = Some(verdict_of(result));
            }
        });
        self.lens.clear();
        self.bytes = 0;
        for (path, result) in self.paths.drain(..).zip(results) {
            let (code, offset) = result.unwrap_or((ErrorCode::Io.name(), None));
            if verdicts.send((path.into_os_string(), code, offset)).is_err() {
                return false;
            }
        }
        true
    }
}

/// The page-aligned part of a buffer made by [`read_whole`].
fn aligned(buffer: &[u8]) -> &[u8] {
    let start = (PAGE - buffer.as_ptr() as usize % PAGE) % PAGE;
    buffer.get(start..).unwrap_or_default()
}

/// Read all `len` bytes of the file at `path` into the page-aligned part of `buffer`
/// (grown as needed); the file must end there. Returns `len`.
fn read_whole(path: &Path, len: u64, buffer: &mut Vec<u8>) -> Result<usize, ()> {
    let len = usize::try_from(len).map_err(drop)?;
    if buffer.len() < len + PAGE {
        *buffer = vec![0u8; len + PAGE];
    }
    let start = (PAGE - buffer.as_ptr() as usize % PAGE) % PAGE;
    let target = buffer.get_mut(start..start + len).ok_or(())?;
    let mut file = File::open(path).map_err(drop)?;
    let opened = FileState::of(&file.metadata().map_err(drop)?);
    file.read_exact(target).map_err(drop)?;
    // A file that grew since it was measured, or changed while it was read, is left to
    // the streaming path.
    let mut probe = [0u8; 1];
    match file.read(&mut probe) {
        Ok(0) if opened.len() == len as u64 && opened.change_since(&file, path).is_none() => Ok(len),
        _ => Err(()),
    }
}

enum Failure {
    Frame(membrane::Error),
    Io,
}

/// A worker's buffers: one read buffer (page-aligned: on an AMD EPYC Zen 4 a buffer 16
/// bytes past a page boundary slowed the kernel's copy threefold) and one identity
/// buffer.
struct Checker {
    options: ReadOptions,
    backing: Vec<u8>,
    start: usize,
    identity: Vec<u8>,
}

impl Checker {
    fn new(options: ReadOptions) -> Checker {
        let backing = vec![0u8; READ_BUFFER + 4096];
        let start = (4096 - backing.as_ptr() as usize % 4096) % 4096;
        Checker { options, backing, start, identity: vec![0u8; options.identity_limit as usize] }
    }

    /// Stream one file through the verifier; below the trailer level only the head is
    /// read and the rest accounted for by length.
    fn check(&mut self, path: &Path) -> Result<(), Failure> {
        let file = File::open(path).map_err(|_| Failure::Io)?;
        let opened = FileState::of(&file.metadata().map_err(|_| Failure::Io)?);
        let verdict = self.stream(&file, opened.len());
        match verdict {
            // Truncated, grown, written to, renamed over or removed while it was read:
            // the verdict is on bytes the file no longer holds.
            Err(Failure::Io) => Err(Failure::Io),
            _ if opened.change_since(&file, path).is_some() => Err(Failure::Io),
            judged => judged,
        }
    }

    fn stream(&mut self, mut file: &File, len: u64) -> Result<(), Failure> {
        let buf = self.backing.get_mut(self.start..self.start + READ_BUFFER).unwrap_or_default();
        let mut verifier = StreamVerifier::new(self.options, &mut self.identity);
        let mut read = 0u64;
        loop {
            if self.options.level < VerifyLevel::Trailer && verifier.head_complete() {
                verifier.skip(len.saturating_sub(read)).map_err(Failure::Frame)?;
                break;
            }
            let n = match file.read(buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return Err(Failure::Io),
            };
            read += n as u64;
            verifier.feed(buf.get(..n).unwrap_or_default()).map_err(Failure::Frame)?;
        }
        verifier.finish().map(|_| ()).map_err(Failure::Frame)
    }
}
