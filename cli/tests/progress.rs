//! The progress bar: drawn on a terminal (a pseudo-terminal made by `script` from
//! util-linux), absent when stderr is a pipe, and forced either way by `--progress`.

mod common;

use common::*;
use std::path::Path;
use std::process::{Command, Stdio};

fn corpus(scratch: &Scratch) {
    for i in 0..12 {
        scratch.write(&format!("frame-{i:02}.frame"), &frame(&bytes(1 << 20, i)));
    }
}

/// Run `membrane-frame ARGS` on a pseudo-terminal; returns everything it drew.
fn on_terminal(args: &str) -> String {
    assert!(Path::new("/usr/bin/script").exists(), "this test needs `script` (util-linux) for a pseudo-terminal");
    let output = Command::new("/usr/bin/script")
        .args(["-qfec", &format!("{BIN} {args}"), "/dev/null"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn a_terminal_gets_a_progress_bar_with_rate_and_eta() {
    let scratch = Scratch::new("progress-tty");
    corpus(&scratch);
    let screen = on_terminal(&format!("verify -j 1 {}", scratch.path().display()));
    let bar = screen
        .split('\r')
        .find(|part| part.starts_with("verify ["))
        .unwrap_or_else(|| panic!("no progress bar drawn:\n{screen:?}"));
    assert!(bar.contains("% "), "{bar:?}");
    assert!(bar.contains("/s"), "a rate: {bar:?}");
    assert!(bar.contains("ETA "), "{bar:?}");
    assert!(bar.contains("/12 files"), "{bar:?}");
    assert!(bar.contains(" / 12.0 MiB"), "the total: {bar:?}");
    // The bar is erased before the summary.
    let summary_at = screen.find("verified 12 files").unwrap();
    assert!(screen[..summary_at].contains("\r\x1b[K"), "{screen:?}");
    assert!(!screen[summary_at..].contains("ETA"));

    // --progress never keeps a terminal clean.
    let screen = on_terminal(&format!("verify --progress never {}", scratch.path().display()));
    assert!(!screen.contains("ETA"), "{screen:?}");
}

#[test]
fn a_pipe_gets_no_progress_bar_unless_asked() {
    let scratch = Scratch::new("progress-pipe");
    corpus(&scratch);
    let output = run_paths(&["verify"], &[scratch.path()]);
    assert_eq!(status(&output), 0);
    assert!(!stderr(&output).contains("ETA") && !stderr(&output).contains('\r'), "{}", stderr(&output));
    assert!(!stdout(&output).contains('\r'));

    let output = run_paths(&["verify", "--progress", "always", "--json"], &[scratch.path()]);
    assert_eq!(status(&output), 0);
    assert!(stderr(&output).contains("ETA"), "{}", stderr(&output));
    // The JSON on stdout is untouched by the bar.
    let (records, _) = json_lines(&output);
    assert_eq!(records.len(), 12);
}
