//! `verify`: every file under the given paths, checked in parallel by a pool of worker
//! threads that take files from a shared queue (larger size classes first, so one big
//! file does not finish last alone), reported in walk order as soon as each is known.

use crate::cli::{IoMode, VerifyArgs, When};
use crate::io::{Checked, Checker, Outcome};
use crate::output::{self, JsonObject};
use crate::progress::Progress;
use crate::walk::{self, Found};
use crate::{EXIT_ERROR, EXIT_INVALID, EXIT_OK};
use membrane_frame::{ErrorCode, VerifyLevel};
use std::collections::BTreeMap;
use std::io::{self, IsTerminal, Write};
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

/// How to verify and how to report.
#[derive(Debug, Clone)]
pub struct Settings {
    pub level: VerifyLevel,
    pub json: bool,
    pub verbose: bool,
    pub jobs: usize,
    /// Some(true) always, Some(false) never, None when stderr is a terminal.
    pub progress: Option<bool>,
    pub io: IoMode,
    pub buffer_size: usize,
    /// Show paths relative to this directory (the demo's corpus).
    pub display_root: Option<PathBuf>,
}

impl Settings {
    pub fn from_args(args: &VerifyArgs) -> Settings {
        Settings {
            level: args.level.to_library(),
            json: args.json,
            verbose: args.verbose,
            jobs: args.jobs.map_or_else(default_jobs, usize::from),
            progress: match args.progress {
                When::Auto => None,
                When::Always => Some(true),
                When::Never => Some(false),
            },
            io: args.io,
            buffer_size: usize::try_from(args.buffer_size).unwrap_or(usize::MAX).min(1 << 30),
            display_root: None,
        }
    }
}

pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// The verdict on one path: `ok`, a SPEC §8 code, or `io`.
#[derive(Debug)]
pub struct Verdict {
    pub path: PathBuf,
    pub code: &'static str,
}

/// Counts over a whole run.
#[derive(Debug, Default)]
pub struct Summary {
    pub files: usize,
    pub valid: usize,
    pub invalid: usize,
    pub unreadable: usize,
    pub skipped: usize,
    pub bytes: u64,
    pub seconds: f64,
    /// Files per code (`ok`, SPEC §8 names, `io`).
    pub codes: BTreeMap<&'static str, usize>,
    /// Standard output could not be written (a closed pipe).
    pub output_failed: bool,
}

impl Summary {
    /// 0 all valid, 1 some invalid, 2 an unreadable path (or output failed).
    pub fn exit_status(&self) -> u8 {
        if self.unreadable > 0 || self.output_failed {
            EXIT_ERROR
        } else if self.invalid > 0 {
            EXIT_INVALID
        } else {
            EXIT_OK
        }
    }
}

pub fn run(args: &VerifyArgs) -> u8 {
    let settings = Settings::from_args(args);
    let found = walk::walk(&args.paths, |_| true);
    let (summary, _) = verify_found(found, &settings);
    summary.exit_status()
}

/// Code number for ordering the summary: `ok` first, SPEC §8 order, `io` last.
fn code_rank(code: &str) -> u32 {
    match code {
        "ok" => 0,
        _ => ErrorCode::from_name(code).map_or(u32::MAX, ErrorCode::number),
    }
}

/// Verify what a walk found, printing as results arrive; returns the summary and the
/// verdict on every checked path, in walk order.
pub fn verify_found(found: Vec<Found>, settings: &Settings) -> (Summary, Vec<Verdict>) {
    let files: Vec<(usize, u64)> = found
        .iter()
        .enumerate()
        .filter_map(|(index, item)| match item {
            Found::File { size, .. } => Some((index, *size)),
            _ => None,
        })
        .collect();
    let total_bytes: u64 = files.iter().map(|&(_, size)| size).sum();
    // Larger files first, so the pool finishes together instead of waiting on one big
    // file; by power-of-two size class only, so files of similar size keep walk order
    // and results stream out in order.
    let mut queue = files.clone();
    queue.sort_by_key(|&(index, size)| (std::cmp::Reverse(u64::BITS - size.leading_zeros()), index));
    let jobs = settings.jobs.clamp(1, files.len().max(1));

    let next = AtomicUsize::new(0);
    let bytes_done = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let mut reporter = Reporter::new(settings, total_bytes, files.len());
    let mut results: Vec<Option<Checked>> = found.iter().map(|_| None).collect();
    let paths: Vec<&Path> = found.iter().map(found_path).collect();

    std::thread::scope(|scope| {
        let (sender, receiver) = mpsc::channel::<(usize, Checked)>();
        for _ in 0..jobs {
            let sender = sender.clone();
            let (queue, next, bytes_done, stop, paths) = (&queue, &next, &bytes_done, &stop, &paths);
            scope.spawn(move || {
                let mut checker = Checker::new(settings.level, settings.io, settings.buffer_size);
                while !stop.load(Ordering::Relaxed) {
                    let Some(&(index, _)) = queue.get(next.fetch_add(1, Ordering::Relaxed)) else { break };
                    let path = paths.get(index).copied().unwrap_or(Path::new(""));
                    let checked = panic::catch_unwind(AssertUnwindSafe(|| checker.check(path, bytes_done)))
                        .unwrap_or_else(|_| {
                            checker = Checker::new(settings.level, settings.io, settings.buffer_size);
                            Checked { outcome: Outcome::Unreadable(io::Error::other("internal error")), bytes: 0 }
                        });
                    if sender.send((index, checked)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(sender);

        let mut emitted = 0usize;
        let mut done = 0usize;
        loop {
            match receiver.recv_timeout(Duration::from_millis(100)) {
                Ok((index, checked)) => {
                    if let Some(slot) = results.get_mut(index) {
                        *slot = Some(checked);
                    }
                    done += 1;
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
            while let Some(item) = found.get(emitted) {
                let checked = match item {
                    Found::File { .. } => match results.get_mut(emitted).and_then(Option::take) {
                        Some(checked) => Some(checked),
                        None => break,
                    },
                    _ => None,
                };
                reporter.emit(item, checked);
                emitted += 1;
            }
            if reporter.summary.output_failed {
                stop.store(true, Ordering::Relaxed);
            }
            reporter.progress.tick(bytes_done.load(Ordering::Relaxed), done);
        }
        // Anything not reported yet (only if a worker died): report it as unreadable.
        while let Some(item) = found.get(emitted) {
            let checked = match item {
                Found::File { .. } => Some(results.get_mut(emitted).and_then(Option::take).unwrap_or(Checked {
                    outcome: Outcome::Unreadable(io::Error::other("not verified (worker stopped)")),
                    bytes: 0,
                })),
                _ => None,
            };
            reporter.emit(item, checked);
            emitted += 1;
        }
    });
    reporter.finish()
}

fn found_path(item: &Found) -> &Path {
    match item {
        Found::File { path, .. } | Found::Unreadable { path, .. } | Found::Skipped { path, .. } => path,
    }
}

/// Prints records and keeps the counts.
struct Reporter<'s> {
    settings: &'s Settings,
    progress: Progress,
    summary: Summary,
    verdicts: Vec<Verdict>,
    out: io::BufWriter<io::Stdout>,
    stdout_is_terminal: bool,
}

impl<'s> Reporter<'s> {
    fn new(settings: &'s Settings, total_bytes: u64, total_files: usize) -> Reporter<'s> {
        Reporter {
            settings,
            progress: Progress::new(settings.progress, "verify", total_bytes, total_files),
            summary: Summary::default(),
            verdicts: Vec::new(),
            out: io::BufWriter::new(io::stdout()),
            stdout_is_terminal: io::stdout().is_terminal(),
        }
    }

    fn emit(&mut self, item: &Found, checked: Option<Checked>) {
        let (path, outcome, bytes) = match (item, checked) {
            (Found::Skipped { path, reason }, _) => {
                self.summary.skipped += 1;
                self.progress.clear();
                let _ = self.out.flush();
                output::complain(self.shown(path), format_args!("skipped: {reason}"));
                return;
            }
            (Found::Unreadable { path, error }, _) => {
                (path, Outcome::Unreadable(io::Error::new(error.kind(), error.to_string())), 0)
            }
            (Found::File { path, .. }, Some(checked)) => (path, checked.outcome, checked.bytes),
            (Found::File { path, .. }, None) => (path, Outcome::Unreadable(io::Error::other("not verified")), 0),
        };
        let code = match &outcome {
            Outcome::Valid(_) => "ok",
            Outcome::Invalid(err) => err.code().name(),
            Outcome::Unreadable(_) => ErrorCode::Io.name(),
        };
        self.summary.files += 1;
        self.summary.bytes += bytes;
        *self.summary.codes.entry(code).or_default() += 1;
        match &outcome {
            Outcome::Valid(_) => self.summary.valid += 1,
            Outcome::Invalid(_) => self.summary.invalid += 1,
            Outcome::Unreadable(_) => self.summary.unreadable += 1,
        }
        self.verdicts.push(Verdict { path: path.clone(), code });
        let line = if self.settings.json {
            Some(self.json_line(path, &outcome, bytes))
        } else {
            self.human_line(path, &outcome)
        };
        if let Some(line) = line {
            self.progress.clear();
            self.write_line(&line);
        }
    }

    /// The path as shown: relative to the display root when there is one.
    fn shown<'p>(&self, path: &'p Path) -> &'p Path {
        match &self.settings.display_root {
            Some(root) => path.strip_prefix(root).unwrap_or(path),
            None => path,
        }
    }

    fn json_line(&self, path: &Path, outcome: &Outcome, bytes: u64) -> String {
        let object = JsonObject::new().field("path", output::path_text(self.shown(path)));
        let object = match outcome {
            Outcome::Valid(frame) => object
                .field("code", "ok")
                .field("class", "ok")
                .field("payload_len", frame.payload_len)
                .maybe("fingerprint", frame.fingerprint.clone())
                .maybe("canonical", frame.canonical),
            Outcome::Invalid(err) => object.error(err),
            Outcome::Unreadable(err) => {
                object.field("code", ErrorCode::Io.name()).field("class", "io").field("reason", err.to_string())
            }
        };
        object.field("level", self.settings.level.name()).field("bytes", bytes).finish()
    }

    fn human_line(&mut self, path: &Path, outcome: &Outcome) -> Option<String> {
        let path = self.shown(path);
        match outcome {
            Outcome::Valid(frame) if self.settings.verbose => {
                let mut line = format!("{}: ok, payload {} bytes", path.display(), frame.payload_len);
                if let Some(fingerprint) = &frame.fingerprint {
                    line.push_str(", fingerprint ");
                    line.push_str(fingerprint);
                }
                Some(line)
            }
            Outcome::Valid(_) => None,
            Outcome::Invalid(err) => Some(format!("{}: {}", path.display(), output::frame_error(err))),
            Outcome::Unreadable(err) => {
                self.progress.clear();
                let _ = self.out.flush();
                output::complain(path, format_args!("cannot read: {err}"));
                None
            }
        }
    }

    fn write_line(&mut self, line: &str) {
        if self.summary.output_failed {
            return;
        }
        let result = writeln!(self.out, "{line}").and_then(|()| {
            // Keep a terminal current; a pipe or file gets full buffers.
            if self.stdout_is_terminal {
                self.out.flush()
            } else {
                Ok(())
            }
        });
        if let Err(err) = result {
            self.output_error(&err);
        }
    }

    fn output_error(&mut self, err: &io::Error) {
        if !self.summary.output_failed && err.kind() != io::ErrorKind::BrokenPipe {
            output::complain_plain(format_args!("cannot write to standard output: {err}"));
        }
        self.summary.output_failed = true;
    }

    fn finish(mut self) -> (Summary, Vec<Verdict>) {
        self.progress.clear();
        self.summary.seconds = self.progress.elapsed();
        let text = if self.settings.json { self.json_summary() } else { self.human_summary() };
        if !self.summary.output_failed {
            if let Err(err) = write!(self.out, "{text}").and_then(|()| self.out.flush()) {
                self.output_error(&err);
            }
        }
        (self.summary, self.verdicts)
    }

    fn sorted_codes(&self) -> Vec<(&'static str, usize)> {
        let mut codes: Vec<(&'static str, usize)> = self.summary.codes.iter().map(|(&k, &v)| (k, v)).collect();
        codes.sort_by_key(|&(code, _)| code_rank(code));
        codes
    }

    fn json_summary(&self) -> String {
        let s = &self.summary;
        let mut codes = JsonObject::new();
        for (code, count) in self.sorted_codes() {
            codes = codes.field(code, count);
        }
        let per_second = if s.seconds > 0.0 { (s.bytes as f64 / s.seconds).round() as u64 } else { 0 };
        let summary = JsonObject::new()
            .field("files", s.files)
            .field("ok", s.valid)
            .field("invalid", s.invalid)
            .field("io_errors", s.unreadable)
            .field("skipped", s.skipped)
            .field("bytes", s.bytes)
            .field("seconds", (s.seconds * 1e6).round() / 1e6)
            .field("bytes_per_second", per_second)
            .field("level", self.settings.level.name())
            .field("jobs", self.settings.jobs)
            .object("codes", codes)
            .field("exit_status", s.exit_status());
        format!("{}\n", JsonObject::new().object("summary", summary).finish())
    }

    fn human_summary(&self) -> String {
        let s = &self.summary;
        let workers = self.settings.jobs.min(s.files.max(1));
        let mut text = format!(
            "\nverified {} ({}) at the {} level in {:.2} s, {}, {}\n",
            output::plural(s.files, "file"),
            output::bytes(s.bytes),
            self.settings.level.name(),
            s.seconds,
            output::rate(s.bytes, s.seconds),
            output::plural(workers, "worker"),
        );
        if !s.codes.is_empty() {
            text.push_str(&format!("  {:<24} {:>7}  {}\n", "code", "files", "class"));
        }
        for (code, count) in self.sorted_codes() {
            let class = match code {
                "ok" => "ok",
                _ => ErrorCode::from_name(code).map_or("?", |code| code.class().name()),
            };
            text.push_str(&format!("  {code:<24} {count:>7}  {class}\n"));
        }
        let mut verdict = format!("{} valid, {} invalid", s.valid, s.invalid);
        if s.unreadable > 0 {
            verdict.push_str(&format!(", {} unreadable", s.unreadable));
        }
        if s.skipped > 0 {
            verdict.push_str(&format!(", {} skipped", s.skipped));
        }
        text.push_str(&format!("result: {verdict}\n"));
        text
    }
}
