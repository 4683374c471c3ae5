//! A one-line progress bar on stderr: bytes done, throughput and ETA.
//!
//! Drawn only when asked (by default when stderr is a terminal), at most ten times a
//! second, with `\r` and erase-to-end-of-line, and erased when done so it never ends
//! up in a log.

use crate::output;
use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

const BAR_WIDTH: usize = 24;
const REDRAW: Duration = Duration::from_millis(100);

#[derive(Debug)]
pub struct Progress {
    enabled: bool,
    label: &'static str,
    start: Instant,
    last_draw: Option<Instant>,
    total_bytes: u64,
    total_files: usize,
    visible: bool,
}

impl Progress {
    /// `when`: Some(true) always, Some(false) never, None when stderr is a terminal.
    pub fn new(when: Option<bool>, label: &'static str, total_bytes: u64, total_files: usize) -> Progress {
        let enabled = when.unwrap_or_else(|| std::io::stderr().is_terminal());
        Progress { enabled, label, start: Instant::now(), last_draw: None, total_bytes, total_files, visible: false }
    }

    pub fn elapsed(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    /// Redraw if enabled and the last draw is old enough.
    pub fn tick(&mut self, bytes_done: u64, files_done: usize) {
        if !self.enabled {
            return;
        }
        let now = Instant::now();
        if self.last_draw.is_some_and(|last| now.duration_since(last) < REDRAW) {
            return;
        }
        self.last_draw = Some(now);
        let line = self.line(bytes_done, files_done);
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r{line}\x1b[K");
        let _ = err.flush();
        self.visible = true;
    }

    /// Erase the bar (before other output, and at the end).
    pub fn clear(&mut self) {
        if self.visible {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[K");
            let _ = err.flush();
            self.visible = false;
            // Draw again at the next tick rather than waiting out the interval.
            self.last_draw = None;
        }
    }

    fn line(&self, bytes_done: u64, files_done: usize) -> String {
        let seconds = self.elapsed();
        let fraction = if self.total_bytes == 0 {
            if self.total_files == 0 {
                1.0
            } else {
                files_done as f64 / self.total_files as f64
            }
        } else {
            (bytes_done as f64 / self.total_bytes as f64).min(1.0)
        };
        let filled = ((fraction * BAR_WIDTH as f64) as usize).min(BAR_WIDTH);
        let bar: String = "#".repeat(filled) + &"-".repeat(BAR_WIDTH - filled);
        let per_second = if seconds > 0.0 { bytes_done as f64 / seconds } else { 0.0 };
        let eta = if per_second > 0.0 && bytes_done > 0 {
            output::duration(self.total_bytes.saturating_sub(bytes_done) as f64 / per_second)
        } else {
            String::from("-")
        };
        format!(
            "{} [{bar}] {:>3.0}% {} / {}  {}  ETA {eta}  {files_done}/{} files",
            self.label,
            fraction * 100.0,
            output::bytes(bytes_done),
            output::bytes(self.total_bytes),
            output::rate(bytes_done, seconds),
            self.total_files,
        )
    }
}
