//! What `verify` prints and counts: one line per file (every file with `--json` or
//! `--verbose`, the invalid ones otherwise), the summary, and the exit status.
//!
//! A closed standard output ends the run: a broken pipe (`verify | head -1`) quietly,
//! with the status of what was reported before it; any other write error (a full disk)
//! with one message and status 2. Either way nothing more is written to stderr.

use super::Settings;
use crate::io::{Checked, Outcome};
use crate::output::{self, JsonObject};
use crate::progress::Progress;
use crate::walk::Found;
use crate::{EXIT_ERROR, EXIT_INVALID, EXIT_OK};
use membrane_frame::ErrorCode;
use std::collections::BTreeMap;
use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};

/// The verdict on one file: `ok`, a SPEC §8 code, or `io`.
#[derive(Debug)]
pub struct Verdict {
    pub path: PathBuf,
    pub code: &'static str,
}

/// Whether standard output still takes lines.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum OutputState {
    #[default]
    Open,
    /// The reader went away (EPIPE): stop quietly.
    Closed,
    /// Writing failed otherwise (ENOSPC, EIO): stop, and say so once.
    Failed,
}

/// Counts over a whole run.
#[derive(Debug, Default)]
pub struct Summary {
    pub valid: usize,
    pub invalid: usize,
    /// Paths that could not be read: missing, no permission, a directory that cannot be listed.
    pub unreadable: usize,
    /// Entries left alone (FIFOs in a tree, symlink loops).
    pub skipped: usize,
    /// Bytes read from the files (below the trailer level, their heads).
    pub bytes_read: u64,
    /// Payload bytes hashed.
    pub bytes_hashed: u64,
    /// Wall time of the whole run, walk included.
    pub seconds: f64,
    /// Files per code (`ok`, SPEC §8 names, `io`).
    pub codes: BTreeMap<&'static str, usize>,
    pub output: OutputState,
    pub allow_empty: bool,
}

impl Summary {
    /// Files verified (valid or not).
    pub fn files(&self) -> usize {
        self.valid + self.invalid
    }

    /// Nothing at all was found to verify.
    pub fn is_empty(&self) -> bool {
        self.files() == 0 && self.unreadable == 0 && self.output == OutputState::Open
    }

    /// 0 every file valid; 1 some file invalid, or nothing found (unless allowed);
    /// 2 an unreadable path, or standard output failed (not a closed pipe).
    pub fn exit_status(&self) -> u8 {
        if self.unreadable > 0 || self.output == OutputState::Failed {
            EXIT_ERROR
        } else if self.invalid > 0 || (self.is_empty() && !self.allow_empty) {
            EXIT_INVALID
        } else {
            EXIT_OK
        }
    }
}

/// Code number for ordering the summary: `ok` first, SPEC §8 order, `io` last.
fn code_rank(code: &str) -> u32 {
    match code {
        "ok" => 0,
        _ => ErrorCode::from_name(code).map_or(u32::MAX, ErrorCode::number),
    }
}

/// Prints records and keeps the counts.
pub(super) struct Reporter<'s> {
    settings: &'s Settings,
    progress: Progress,
    summary: Summary,
    verdicts: Vec<Verdict>,
    out: io::BufWriter<io::Stdout>,
    stdout_is_terminal: bool,
}

impl<'s> Reporter<'s> {
    pub(super) fn new(settings: &'s Settings) -> Reporter<'s> {
        Reporter {
            settings,
            progress: Progress::new(settings.progress, "verify"),
            summary: Summary { allow_empty: settings.allow_empty, ..Summary::default() },
            verdicts: Vec::new(),
            out: io::BufWriter::new(io::stdout()),
            stdout_is_terminal: io::stdout().is_terminal(),
        }
    }

    /// Standard output is closed or failed: the run should stop.
    pub(super) fn stopped(&self) -> bool {
        self.summary.output != OutputState::Open
    }

    pub(super) fn tick(&self, files_done: u64, files_found: u64, bytes_read: u64) {
        self.progress.tick(files_done, files_found, bytes_read);
    }

    pub(super) fn emit(&mut self, item: Found, checked: Option<Checked>) {
        if self.stopped() {
            return;
        }
        let (path, outcome, checked) = match (item, checked) {
            (Found::Skipped { path, reason }, _) => return self.skipped(&path, reason),
            (Found::Unreadable { path, error }, _) => (path, Outcome::Unreadable(error), None),
            (Found::File { path }, Some(checked)) => {
                let work = (checked.size, checked.bytes_read, checked.bytes_hashed);
                (path, checked.outcome, Some(work))
            }
            (Found::File { path }, None) => (path, Outcome::Unreadable(io::Error::other("not verified")), None),
        };
        let code = match &outcome {
            Outcome::Valid(_) => "ok",
            Outcome::Invalid(err) => err.code().name(),
            Outcome::Unreadable(_) => ErrorCode::Io.name(),
        };
        *self.summary.codes.entry(code).or_default() += 1;
        match &outcome {
            Outcome::Valid(_) => self.summary.valid += 1,
            Outcome::Invalid(_) => self.summary.invalid += 1,
            Outcome::Unreadable(_) => self.summary.unreadable += 1,
        }
        if let Some((_, bytes_read, bytes_hashed)) = checked {
            self.summary.bytes_read += bytes_read;
            self.summary.bytes_hashed += bytes_hashed;
        }
        if self.settings.keep_verdicts {
            self.verdicts.push(Verdict { path: path.clone(), code });
        }
        if self.settings.json {
            let line = self.json_line(&path, &outcome, checked);
            self.write_line(&line);
        } else if let Some(line) = self.human_line(&path, &outcome) {
            self.write_line(&line);
        }
    }

    fn skipped(&mut self, path: &Path, reason: &str) {
        self.summary.skipped += 1;
        if self.settings.json {
            let line = JsonObject::new()
                .path(self.shown(path))
                .field("code", "skipped")
                .field("class", "skipped")
                .field("reason", reason)
                .finish();
            self.write_line(&line);
        } else if !self.settings.quiet {
            self.complain(path, format_args!("skipped: {reason}"));
        }
    }

    /// The path as shown: relative to the display root when there is one.
    fn shown<'p>(&self, path: &'p Path) -> &'p Path {
        match &self.settings.display_root {
            Some(root) => path.strip_prefix(root).unwrap_or(path),
            None => path,
        }
    }

    fn json_line(&self, path: &Path, outcome: &Outcome, checked: Option<(u64, u64, u64)>) -> String {
        let object = JsonObject::new().path(self.shown(path));
        let object = match outcome {
            Outcome::Valid(frame) => object
                .field("code", "ok")
                .field("class", "ok")
                .field("payload_len", frame.payload_len)
                .field("payload_offset", frame.payload_offset)
                .maybe("fingerprint", frame.fingerprint.clone())
                .maybe("canonical", frame.canonical)
                .maybe("padding", frame.padding),
            Outcome::Invalid(err) => object.error(err),
            Outcome::Unreadable(err) => {
                object.field("code", ErrorCode::Io.name()).field("class", "io").field("reason", err.to_string())
            }
        };
        let object = object.field("level", self.settings.level.name());
        match checked {
            Some((size, bytes_read, _)) => object.field("size", size).field("bytes_read", bytes_read).finish(),
            None => object.finish(),
        }
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
                self.complain(path, format_args!("cannot read: {err}"));
                None
            }
        }
    }

    /// A message about a path on stderr, after what stdout has so far.
    fn complain(&mut self, path: &Path, message: std::fmt::Arguments<'_>) {
        let _ = self.out.flush();
        self.progress.suspend(|| output::complain(path, message));
    }

    fn write_line(&mut self, line: &str) {
        if self.stopped() || self.settings.quiet {
            return;
        }
        let (out, on_terminal) = (&mut self.out, self.stdout_is_terminal);
        let result = self.progress.suspend(|| {
            // Keep a terminal current; a pipe or file gets full buffers.
            writeln!(out, "{line}").and_then(|()| if on_terminal { out.flush() } else { Ok(()) })
        });
        if let Err(err) = result {
            self.output_error(&err);
        }
    }

    fn output_error(&mut self, err: &io::Error) {
        if self.summary.output != OutputState::Open {
            return;
        }
        if err.kind() == io::ErrorKind::BrokenPipe {
            self.summary.output = OutputState::Closed;
        } else {
            self.summary.output = OutputState::Failed;
            output::complain_plain(format_args!("cannot write to standard output: {err}"));
        }
    }

    pub(super) fn finish(mut self) -> (Summary, Vec<Verdict>) {
        self.progress.finish();
        self.summary.seconds = self.progress.elapsed();
        if self.summary.is_empty() && !self.settings.allow_empty {
            output::complain_plain(
                "nothing to verify: no file was found (an unmounted volume? --allow-empty accepts this)",
            );
        }
        if !self.stopped() && !self.settings.quiet {
            let text = if self.settings.json { self.json_summary() } else { self.human_summary() };
            if let Err(err) = write!(self.out, "{text}").and_then(|()| self.out.flush()) {
                self.output_error(&err);
            }
        } else if !self.stopped() {
            if let Err(err) = self.out.flush() {
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
        let per_second = |n: f64| if s.seconds > 0.0 { (n / s.seconds).round() as u64 } else { 0 };
        let summary = JsonObject::new()
            .field("files", s.files())
            .field("ok", s.valid)
            .field("invalid", s.invalid)
            .field("io_errors", s.unreadable)
            .field("skipped", s.skipped)
            .field("bytes_read", s.bytes_read)
            .field("bytes_hashed", s.bytes_hashed)
            .field("seconds", (s.seconds * 1e6).round() / 1e6)
            .field("bytes_per_second", per_second(s.bytes_read as f64))
            .field("files_per_second", per_second(s.files() as f64))
            .field("level", self.settings.level.name())
            .field("jobs", self.settings.jobs)
            .object("codes", codes)
            .field("exit_status", s.exit_status());
        format!("{}\n", JsonObject::new().object("summary", summary).finish())
    }

    fn human_summary(&self) -> String {
        let s = &self.summary;
        let mut text = format!(
            "\nverified {} ({} read, {} hashed) at the {} level in {:.2} s, {}, {}\n",
            output::plural(s.files(), "file"),
            output::bytes(s.bytes_read),
            output::bytes(s.bytes_hashed),
            self.settings.level.name(),
            s.seconds,
            output::rate(s.bytes_read, s.seconds),
            output::plural(self.settings.jobs, "worker"),
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
