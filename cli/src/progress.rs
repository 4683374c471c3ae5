//! The progress line on stderr, through `indicatif`: files done of files found so far,
//! bytes read and the rate. The walk streams, so there is no total to show a percentage
//! of. Drawn only on a terminal (unless asked), fitted to its width (the message is cut,
//! never wrapped), at most ten times a second, and cleared when done so it never ends up
//! in a log.

use crate::output;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::cell::Cell;
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// How often the message is rebuilt (indicatif limits the drawing itself).
const UPDATE: Duration = Duration::from_millis(50);

#[derive(Debug)]
pub struct Progress {
    bar: ProgressBar,
    start: Instant,
    last_update: Cell<Option<Instant>>,
}

impl Progress {
    /// `when`: Some(true) always, Some(false) never, None when stderr is a terminal.
    pub fn new(when: Option<bool>, label: &'static str) -> Progress {
        let enabled = when.unwrap_or_else(|| std::io::stderr().is_terminal());
        let target = match (enabled, std::io::stderr().is_terminal()) {
            (false, _) => ProgressDrawTarget::hidden(),
            (true, true) => ProgressDrawTarget::stderr_with_hz(10),
            // Asked for on something that is not a terminal (a log, a test): draw
            // anyway, at the default width of 80 columns.
            (true, false) => ProgressDrawTarget::term_like_with_hz(Box::new(console::Term::stderr()), 10),
        };
        let bar = ProgressBar::with_draw_target(None, target);
        bar.set_style(
            ProgressStyle::with_template("{prefix} {spinner} {wide_msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.set_prefix(label);
        Progress { bar, start: Instant::now(), last_update: Cell::new(None) }
    }

    pub fn elapsed(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    /// Show the latest counts (indicatif limits the redraws).
    pub fn tick(&self, files_done: u64, files_found: u64, bytes_read: u64) {
        let now = Instant::now();
        if self.bar.is_hidden() || self.last_update.get().is_some_and(|last| now - last < UPDATE) {
            return;
        }
        self.last_update.set(Some(now));
        let seconds = self.elapsed();
        self.bar.set_message(format!(
            "{files_done}/{files_found} files, {} read, {}",
            output::bytes(bytes_read),
            output::rate(bytes_read, seconds)
        ));
    }

    /// Run `write` with the line erased, so output never mixes with it.
    pub fn suspend<R>(&self, write: impl FnOnce() -> R) -> R {
        if self.bar.is_hidden() {
            write()
        } else {
            self.bar.suspend(write)
        }
    }

    /// Erase the line for good.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
