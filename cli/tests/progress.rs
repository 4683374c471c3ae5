//! The progress line: drawn on a terminal (a pseudo-terminal made by `script` from
//! util-linux) within its width, cleared before the summary, absent when stderr is a
//! pipe or with `--quiet`, and forced either way by `--progress`.

mod common;

use common::*;
use std::path::Path;
use std::process::{Command, Stdio};

fn corpus(scratch: &Scratch) {
    for i in 0..12 {
        scratch.write(&format!("frame-{i:02}.frame"), &frame(&bytes(4 << 20, i)));
    }
}

/// Run `membrane-frame ARGS` on a pseudo-terminal `columns` wide; returns what it drew.
fn on_terminal(columns: u16, args: &str) -> String {
    assert!(Path::new("/usr/bin/script").exists(), "this test needs `script` (util-linux) for a pseudo-terminal");
    let output = Command::new("/usr/bin/script")
        .args(["-qfec", &format!("stty cols {columns} rows 20; {BIN} {args}"), "/dev/null"])
        .env("TERM", "xterm")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The text of every state the progress line was drawn in: the screen split at carriage
/// returns, escape sequences removed.
fn drawn_lines(screen: &str) -> Vec<String> {
    let mut lines = Vec::new();
    for part in screen.split(['\r', '\n']) {
        let mut text = String::new();
        let mut chars = part.chars();
        while let Some(c) = chars.next() {
            if c == '\x1b' {
                // CSI: ESC [ parameters final-byte
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() {
                        break;
                    }
                }
            } else {
                text.push(c);
            }
        }
        if text.starts_with("verify ") {
            lines.push(text);
        }
    }
    lines
}

#[test]
fn a_terminal_gets_a_progress_line_that_fits_and_is_cleared() {
    let scratch = Scratch::new("progress-tty");
    corpus(&scratch);
    for columns in [40u16, 120] {
        // One worker at the full level, so the run lasts long enough to be drawn.
        let screen = on_terminal(columns, &format!("verify -j 1 --level full {}", scratch.path().display()));
        let lines = drawn_lines(&screen);
        assert!(!lines.is_empty(), "no progress line drawn:\n{screen:?}");
        for line in &lines {
            assert!(line.chars().count() <= columns as usize, "wider than {columns} columns: {line:?}");
        }
        let widest = lines.iter().map(|l| l.chars().count()).max().unwrap();
        if columns == 120 {
            let full = lines.iter().find(|l| l.contains("/s")).unwrap_or_else(|| panic!("{lines:?}"));
            assert!(full.contains(" files, ") && full.contains(" read, "), "{full:?}");
        } else {
            assert!(widest <= 40);
        }
        // The summary comes after the line was erased, and nothing of it is left.
        let summary_at = screen.find("verified 12 files").unwrap_or_else(|| panic!("{screen:?}"));
        assert!(screen[..summary_at].contains("\x1b[2K") || screen[..summary_at].contains("\x1b[K"), "{screen:?}");
        assert!(drawn_lines(&screen[summary_at..]).is_empty(), "{screen:?}");
    }

    // --progress never and --quiet keep a terminal clean.
    for flag in ["--progress never", "--quiet"] {
        let screen = on_terminal(80, &format!("verify {flag} {}", scratch.path().display()));
        assert!(drawn_lines(&screen).is_empty(), "{flag}: {screen:?}");
    }
}

#[test]
fn a_pipe_gets_no_progress_line_unless_asked() {
    let scratch = Scratch::new("progress-pipe");
    corpus(&scratch);
    let output = run_paths(&["verify"], &[scratch.path()]);
    assert_eq!(status(&output), 0);
    assert!(!stderr(&output).contains('\r') && !stderr(&output).contains("verify "), "{}", stderr(&output));
    assert!(!stdout(&output).contains('\r'));

    let output =
        run_paths(&["verify", "--progress", "always", "--json", "-j", "1", "--level", "full"], &[scratch.path()]);
    assert_eq!(status(&output), 0);
    assert!(!drawn_lines(&stderr(&output)).is_empty(), "{:?}", stderr(&output));
    // The JSON on stdout is untouched by the line.
    let (records, _) = json_lines(&output);
    assert_eq!(records.len(), 12);
}
