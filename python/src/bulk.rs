//! `verify_files`: the bulk validator. Directories are walked recursively (`walkdir`,
//! symlinks followed, a link to a directory above it skipped), files are verified by a
//! pool of threads that never take the GIL, and `(path, code, offset)` comes out as
//! each result is ready (in completion order, not walk order).
//!
//! Each file streams through a 128 KiB page-aligned buffer into the library's
//! `StreamVerifier`, as the command-line tool's `verify` does, so memory does not grow
//! with file sizes; queues between the stages are bounded, so it does not grow with the
//! number of files either.

use crate::frame::Level;
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

/// A worker: verify files until the walk is done or the caller went away.
fn work(options: ReadOptions, queued: &Mutex<Receiver<PathBuf>>, verdicts: &SyncSender<Verdict>, stop: &AtomicBool) {
    let mut checker = Checker::new(options);
    loop {
        let next = queued.lock().unwrap_or_else(PoisonError::into_inner).recv();
        let Ok(path) = next else { return };
        if stop.load(Ordering::Relaxed) {
            return;
        }
        let (code, offset) = match checker.check(&path) {
            Ok(()) => ("ok", None),
            Err(Failure::Frame(err)) => (err.code().name(), err.offset()),
            Err(Failure::Io) => (ErrorCode::Io.name(), None),
        };
        if verdicts.send((path.into_os_string(), code, offset)).is_err() {
            return;
        }
    }
}

enum Failure {
    Frame(membrane::Error),
    Io,
}

/// A worker's buffers: one read buffer (page-aligned: on this machine a buffer 16
/// bytes past a page boundary slows the kernel's copy threefold, docs/performance.md)
/// and one identity buffer.
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
        let mut file = File::open(path).map_err(|_| Failure::Io)?;
        let len = file.metadata().map_err(|_| Failure::Io)?.len();
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
