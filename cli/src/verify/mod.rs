//! `verify`: every file under the given paths, checked in parallel as the walk finds
//! them, and reported in walk order as soon as each is known.
//!
//! Three stages, all running at once: the walk (one thread) numbers what it finds and
//! queues it; the workers take files off the queue and verify them; this thread puts
//! the verdicts back in walk order and reports them. The walk may run at most
//! [`IN_FLIGHT`] entries ahead of the report, so memory does not grow with the number of
//! files, and a closed output stops all three.

mod report;

pub use report::{OutputState, Summary, Verdict};

use crate::batch_io::BatchChecker;
use crate::cli::{IoMode, VerifyArgs, When};
use crate::io::{Checked, Checker, RunState};
use crate::walk::{self, is_stdin, Found, Order};
use membrane_frame::VerifyLevel;
use report::Reporter;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::io;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Condvar, Mutex, PoisonError};
use std::time::Duration;

/// How far the walk may run ahead of the report: found, queued, being verified, or
/// verified and waiting for an earlier file's verdict.
pub const IN_FLIGHT: u64 = 1024;

/// How to verify and how to report.
#[derive(Debug, Clone)]
pub struct Settings {
    pub level: VerifyLevel,
    pub json: bool,
    pub verbose: bool,
    /// No per-file lines, no summary, no progress: the exit status tells.
    pub quiet: bool,
    pub jobs: usize,
    /// Some(true) always, Some(false) never, None when stderr is a terminal.
    pub progress: Option<bool>,
    pub io: IoMode,
    pub buffer_size: usize,
    pub order: Order,
    /// A run that finds no file at all exits 0 instead of 1.
    pub allow_empty: bool,
    /// Show paths relative to this directory (the demo's corpus).
    pub display_root: Option<PathBuf>,
    /// Keep every verdict for the caller (the demo compares them with its intent).
    pub keep_verdicts: bool,
}

impl Settings {
    pub fn from_args(args: &VerifyArgs) -> Settings {
        Settings {
            level: args.level.to_library(),
            json: args.json,
            verbose: args.verbose,
            quiet: args.quiet,
            jobs: args.jobs.map_or_else(default_jobs, usize::from),
            progress: match (args.quiet, args.progress) {
                (true, _) | (_, When::Never) => Some(false),
                (_, When::Auto) => None,
                (_, When::Always) => Some(true),
            },
            io: args.io,
            buffer_size: usize::try_from(args.buffer_size).unwrap_or(usize::MAX).min(1 << 30),
            order: if args.sort { Order::Name } else { Order::Directory },
            allow_empty: args.allow_empty,
            display_root: None,
            keep_verdicts: false,
        }
    }
}

pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

pub fn run(args: &VerifyArgs) -> u8 {
    let settings = Settings::from_args(args);
    let (summary, _) = verify_paths(&args.paths, &settings);
    summary.exit_status()
}

/// One walk entry on its way through the workers.
struct Entry {
    seq: u64,
    item: Found,
    /// The verdict, for a file, once a worker has it.
    checked: Option<Checked>,
}

/// Verify everything under `roots`, printing as results arrive; returns the summary
/// and (with `keep_verdicts`) the verdict on every file, in walk order.
pub fn verify_paths(roots: &[PathBuf], settings: &Settings) -> (Summary, Vec<Verdict>) {
    let jobs = settings.jobs.max(1);
    let window = Window::default();
    let run = RunState::default();
    let found = AtomicU64::new(0);
    let mut reporter = Reporter::new(settings);

    // Never full: the window admits at most IN_FLIGHT entries not yet reported.
    let (queue, queued) = mpsc::sync_channel::<Entry>(IN_FLIGHT as usize);
    let queued = Mutex::new(queued);
    let (done, verdicts) = mpsc::channel::<Entry>();

    std::thread::scope(|scope| {
        let (window, found) = (&window, &found);
        scope.spawn(move || {
            for (item, seq) in walk::walk(roots, settings.order, |_| true).stdin(true).zip(0u64..) {
                if !window.admit(seq) {
                    break;
                }
                found.store(seq + 1, Ordering::Relaxed);
                if queue.send(Entry { seq, item, checked: None }).is_err() {
                    break;
                }
            }
        });
        for _ in 0..jobs {
            let done = done.clone();
            let (queued, run) = (&queued, &run);
            scope.spawn(move || {
                let mut checker = Checker::new(settings.level, settings.io, settings.buffer_size);
                if settings.io != IoMode::Mmap && BatchChecker::applies(settings.level) {
                    return batch_worker(&mut checker, queued, &done, run, settings);
                }
                loop {
                    let next = queued.lock().unwrap_or_else(PoisonError::into_inner).recv();
                    let Ok(mut entry) = next else { break };
                    if run.stop.load(Ordering::Relaxed) {
                        break;
                    }
                    if let Found::File { path } = &entry.item {
                        entry.checked = Some(check(&mut checker, path, run, settings));
                    }
                    if done.send(entry).is_err() {
                        break;
                    }
                }
            });
        }
        drop(done);

        // Verdicts arrive in any order; report them in walk order.
        let mut waiting: BTreeMap<u64, Entry> = BTreeMap::new();
        let mut next = 0u64;
        loop {
            match verdicts.recv_timeout(Duration::from_millis(100)) {
                Ok(entry) => {
                    waiting.insert(entry.seq, entry);
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
            while let Some(entry) = waiting.remove(&next) {
                reporter.emit(entry.item, entry.checked);
                next += 1;
            }
            window.advance(next);
            if reporter.stopped() {
                // Closed output: the walk and the workers stop at their next step.
                run.stop.store(true, Ordering::Relaxed);
                window.stop();
                break;
            }
            reporter.tick(next, found.load(Ordering::Relaxed), run.bytes_read.load(Ordering::Relaxed));
        }
        drop(verdicts);
        // Left only if an entry was lost (a worker died outside the panic guard): the
        // rest is still reported, in order (nothing, once the output is closed).
        for entry in waiting.into_values() {
            reporter.emit(entry.item, entry.checked);
        }
    });
    reporter.finish()
}

/// Verify one file; a panic in the library (a bug) is that file's I/O error, not the
/// end of the run, and the worker starts again with fresh buffers.
fn check(checker: &mut Checker, path: &Path, run: &RunState, settings: &Settings) -> Checked {
    panic::catch_unwind(AssertUnwindSafe(|| checker.check(path, run))).unwrap_or_else(|_| {
        *checker = Checker::new(settings.level, settings.io, settings.buffer_size);
        Checked::unreadable(io::Error::other("internal error"))
    })
}

/// A worker at the hashing levels: several files in flight at once (the library's
/// `StreamBatch`), so one core runs several SHA-256 streams. Standard input and the
/// walk's non-files go through as in the one-file worker. A panic (a bug) ends the
/// batch's files with an I/O error each, and the worker goes on.
fn batch_worker(
    checker: &mut Checker,
    queued: &Mutex<mpsc::Receiver<Entry>>,
    done: &mpsc::Sender<Entry>,
    run: &RunState,
    settings: &Settings,
) {
    let mut batch = BatchChecker::new(settings.level, settings.buffer_size, settings.io == IoMode::Window);
    let mut closed = false;
    while !closed && !run.stop.load(Ordering::Relaxed) {
        // The entries in the batch's lanes, by sequence number: reported as lost if the
        // batch panics.
        let in_lanes: RefCell<BTreeMap<u64, Entry>> = RefCell::default();
        let ran = panic::catch_unwind(AssertUnwindSafe(|| {
            let next = |wait: bool| -> Option<(u64, PathBuf)> {
                loop {
                    let receiver = queued.lock().unwrap_or_else(PoisonError::into_inner);
                    let next = if wait { receiver.recv().ok() } else { receiver.try_recv().ok() };
                    drop(receiver);
                    let Some(mut entry) = next else {
                        closed |= wait;
                        return None;
                    };
                    if run.stop.load(Ordering::Relaxed) {
                        closed = true;
                        return None;
                    }
                    match &entry.item {
                        Found::File { path } if !is_stdin(path) => {
                            let path = path.clone();
                            let seq = entry.seq;
                            in_lanes.borrow_mut().insert(seq, entry);
                            return Some((seq, path));
                        }
                        Found::File { path } => entry.checked = Some(check(checker, path, run, settings)),
                        _ => {}
                    }
                    if done.send(entry).is_err() {
                        closed = true;
                        return None;
                    }
                }
            };
            batch.run(next, run, |seq, checked| {
                if let Some(mut entry) = in_lanes.borrow_mut().remove(&seq) {
                    entry.checked = Some(checked);
                    let _ = done.send(entry);
                }
            });
        }));
        if ran.is_err() {
            batch = BatchChecker::new(settings.level, settings.buffer_size, settings.io == IoMode::Window);
        }
        for (_, mut entry) in in_lanes.into_inner() {
            entry.checked = Some(Checked::unreadable(io::Error::other("internal error")));
            let _ = done.send(entry);
        }
        if ran.is_ok() {
            return;
        }
    }
}

/// How far the walk may run ahead: it waits while [`IN_FLIGHT`] entries are found and
/// not yet reported, and gives up once the report stops.
#[derive(Debug, Default)]
struct Window {
    state: Mutex<WindowState>,
    changed: Condvar,
}

#[derive(Debug, Default)]
struct WindowState {
    reported: u64,
    stopped: bool,
}

impl Window {
    /// Wait until entry `seq` may enter; false once the report has stopped.
    fn admit(&self, seq: u64) -> bool {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        while !state.stopped && seq >= state.reported + IN_FLIGHT {
            state = self.changed.wait(state).unwrap_or_else(PoisonError::into_inner);
        }
        !state.stopped
    }

    fn advance(&self, reported: u64) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if state.reported != reported {
            state.reported = reported;
            self.changed.notify_all();
        }
    }

    fn stop(&self) {
        self.state.lock().unwrap_or_else(PoisonError::into_inner).stopped = true;
        self.changed.notify_all();
    }
}
