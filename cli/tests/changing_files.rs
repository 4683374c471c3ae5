//! `verify` on a file another process changes while it is read: truncated, grown,
//! rewritten in place (bytes already read, so the bytes read still verify), renamed over
//! or removed. Each gets an `io` verdict naming the change, never `ok` and never a
//! crash.
//!
//! The change has to land in the middle of the read, not before or after it: the test
//! reads the verifier's file position from `/proc/PID/fdinfo`, stops the process with
//! SIGSTOP once the position is past the first chunk and before the end, makes the
//! change, and lets it go on (SIGCONT).

mod common;

use common::*;
use serde_json::Value;
use std::fs::{self, OpenOptions};
use std::io::Write as _;
use std::os::unix::fs::FileExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// 32 MiB read 4 KiB at a time: about 8000 reads, time enough to stop the reader halfway.
const PAYLOAD: usize = 32 << 20;
const CHUNK: &str = "4096";

/// The open file description of `path` in process `pid`, as `/proc/PID/fdinfo/FD`.
fn fdinfo_of(pid: u32, path: &Path) -> Option<PathBuf> {
    for entry in fs::read_dir(format!("/proc/{pid}/fd")).ok()? {
        let entry = entry.ok()?;
        if fs::read_link(entry.path()).ok().as_deref() == Some(path) {
            return Some(PathBuf::from(format!("/proc/{pid}/fdinfo/{}", entry.file_name().to_string_lossy())));
        }
    }
    None
}

/// The file position in an fdinfo file (`pos:\tN`).
fn position(fdinfo: &Path) -> Option<u64> {
    let text = fs::read_to_string(fdinfo).ok()?;
    text.lines().find_map(|line| line.strip_prefix("pos:")).and_then(|pos| pos.trim().parse().ok())
}

fn signal(child: &Child, name: &str) {
    let status = Command::new("kill").arg(format!("-{name}")).arg(child.id().to_string()).status().unwrap();
    assert!(status.success(), "kill -{name}");
}

/// Whether the process is stopped (state `T` in `/proc/PID/stat`).
fn is_stopped(pid: u32) -> bool {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    stat.rsplit(')').next().is_some_and(|rest| rest.trim_start().starts_with('T'))
}

/// How far a verifier has read `path`: its file position (`--io read`).
fn read_position(pid: u32, path: &Path) -> Option<u64> {
    position(&fdinfo_of(pid, path)?)
}

/// How far a verifier has read `path` under `--io mmap`/`mmap-window`: the end of the
/// resident part of its mappings of the file (offset + resident size), from
/// `/proc/PID/smaps`. The reader hashes in order, so pages past it are not read yet.
fn mapped_position(pid: u32, path: &Path) -> Option<u64> {
    let smaps = fs::read_to_string(format!("/proc/{pid}/smaps")).ok()?;
    let name = path.to_str()?;
    let mut offset = None;
    let mut furthest = None;
    for line in smaps.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() >= 6 && fields[0].contains('-') {
            offset = (fields[5] == name).then(|| u64::from_str_radix(fields[2], 16).ok()).flatten();
        } else if let (Some(at), Some(kib)) = (offset, line.strip_prefix("Rss:")) {
            let resident = kib.trim().trim_end_matches("kB").trim().parse::<u64>().ok()? * 1024;
            if resident > 0 {
                furthest = furthest.max(Some(at + resident));
            }
        }
    }
    furthest
}

/// Start `verify --json ARGS` on `file` and stop it partway through reading it, as
/// `progress` tells: returns the stopped process and how far it had read.
fn stopped_mid_read(file: &Path, args: &[&str], progress: fn(u32, &Path) -> Option<u64>) -> (Child, u64) {
    let len = fs::metadata(file).unwrap().len();
    for _attempt in 0..20 {
        let child = Command::new(BIN)
            .args(["verify", "--json", "--jobs", "1"])
            .args(args)
            .arg(file)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if progress(child.id(), file).is_some_and(|at| at > 0) {
                signal(&child, "STOP");
                break;
            }
        }
        while !is_stopped(child.id()) && Instant::now() < deadline {
            std::thread::yield_now();
        }
        match progress(child.id(), file) {
            Some(at) if at > 0 && at < len => return (child, at),
            // Too fast (or too slow) this time: the read was over before the stop.
            _ => {
                signal(&child, "CONT");
                let _ = child.wait_with_output();
            }
        }
    }
    panic!("could not stop the verifier in the middle of reading {} in 20 attempts", file.display());
}

/// `stopped_mid_read` for the default reader, 4 KiB a read, at `level`.
fn stopped_mid_stream(file: &Path, level: &str) -> (Child, u64) {
    stopped_mid_read(file, &["--buffer-size", CHUNK, "--level", level], read_position)
}

/// Let the stopped verifier go on; its one JSON record.
fn resumed(child: Child) -> (i32, Value, String) {
    signal(&child, "CONT");
    let output = child.wait_with_output().unwrap();
    let code = status(&output);
    let (records, _summary) = json_lines(&output);
    assert_eq!(records.len(), 1, "one record: {}", stdout(&output));
    (code, records[0].clone(), stderr(&output))
}

/// The frame the tests verify, written at `name` in `scratch`, with a moment's pause
/// after the write so that a change during the verification moves the file's times
/// (the file system's clock has a granularity of a few milliseconds).
fn written_frame(scratch: &Scratch, name: &str, seed: u64) -> (PathBuf, Vec<u8>) {
    written_frame_of(scratch, name, PAYLOAD, seed)
}

fn written_frame_of(scratch: &Scratch, name: &str, payload: usize, seed: u64) -> (PathBuf, Vec<u8>) {
    let bytes = frame(&bytes(payload, seed));
    let path = scratch.write(name, &bytes);
    std::thread::sleep(Duration::from_millis(30));
    (fs::canonicalize(path).unwrap(), bytes)
}

/// The verdict is `io`, exit status 2, and the reason names `change`.
fn assert_changed(code: i32, record: &Value, change: &str, context: &str) {
    assert_eq!(record["code"], "io", "{context}: {record}");
    assert_eq!(code, 2, "{context}: exit status of an unreadable file");
    let reason = record.to_string();
    assert!(reason.contains("changed while it was verified") && reason.contains(change), "{context}: {record}");
}

#[test]
fn a_file_truncated_while_it_is_read_is_an_io_error() {
    let scratch = Scratch::new("change-truncate");
    let (path, bytes) = written_frame(&scratch, "f.frame", 1);
    for level in ["trailer", "full"] {
        fs::write(&path, &bytes).unwrap();
        let (child, pos) = stopped_mid_stream(&path, level);
        OpenOptions::new().write(true).open(&path).unwrap().set_len(pos / 2).unwrap();
        let (code, record, _) = resumed(child);
        assert_changed(code, &record, &format!("its length went from {} to {} bytes", bytes.len(), pos / 2), level);
    }
}

#[test]
fn a_file_grown_while_it_is_read_is_an_io_error() {
    let scratch = Scratch::new("change-grow");
    let (path, bytes) = written_frame(&scratch, "f.frame", 2);
    let (child, _) = stopped_mid_stream(&path, "trailer");
    OpenOptions::new().append(true).open(&path).unwrap().write_all(&[0u8; 100]).unwrap();
    let (code, record, _) = resumed(child);
    assert_changed(
        code,
        &record,
        &format!("its length went from {} to {} bytes", bytes.len(), bytes.len() + 100),
        "grown",
    );
}

/// The sly case: the bytes changed were already read, so what was read is a valid frame
/// from start to end — only the file's change time tells that the file is no longer it.
#[test]
fn a_file_rewritten_where_it_was_already_read_is_an_io_error_not_ok() {
    let scratch = Scratch::new("change-rewrite");
    let (path, bytes) = written_frame(&scratch, "f.frame", 3);
    let (child, pos) = stopped_mid_stream(&path, "full");
    assert!(pos >= 4096, "a whole chunk was read");
    let at = 2000u64;
    let flipped = [bytes[at as usize] ^ 0xFF];
    OpenOptions::new().write(true).open(&path).unwrap().write_all_at(&flipped, at).unwrap();
    let (code, record, _) = resumed(child);
    assert_changed(code, &record, "it was written to", "rewritten");
    // The bytes the verifier read did verify: the file as it was is a valid frame.
    fs::write(&path, &bytes).unwrap();
    assert_eq!(json_lines(&run_paths(&["verify", "--json"], &[&path])).0[0]["code"], "ok");
}

#[test]
fn a_file_renamed_over_or_removed_while_it_is_read_is_an_io_error() {
    let scratch = Scratch::new("change-replace");
    let (path, _) = written_frame(&scratch, "f.frame", 4);
    let (other, _) = written_frame(&scratch, "other.frame", 5);
    let (child, _) = stopped_mid_stream(&path, "trailer");
    fs::rename(&other, &path).unwrap();
    let (code, record, _) = resumed(child);
    assert_changed(code, &record, "another file was put in its place", "renamed over");

    let (child, _) = stopped_mid_stream(&path, "trailer");
    fs::remove_file(&path).unwrap();
    let (code, record, _) = resumed(child);
    assert_changed(code, &record, "its path no longer opens", "removed");
}

/// A file left alone through the same stop and resume verifies: the checks above see
/// the change, not the pause.
#[test]
fn a_file_only_paused_on_verifies_ok() {
    let scratch = Scratch::new("change-none");
    let (path, _) = written_frame(&scratch, "f.frame", 6);
    let (child, _) = stopped_mid_stream(&path, "full");
    std::thread::sleep(Duration::from_millis(50));
    let (code, record, _) = resumed(child);
    assert_eq!((code, record["code"].as_str()), (0, Some("ok")), "{record}");
}

/// Under `--io mmap` and `--io mmap-window` a truncation is a SIGBUS at the next lost
/// page: the run stops with a message and the I/O-error exit status, not a signal death
/// (and not a verdict).
#[test]
fn a_mapped_file_truncated_while_it_is_hashed_stops_the_run_with_a_message() {
    use std::os::unix::process::ExitStatusExt as _;
    let scratch = Scratch::new("change-mmap");
    let (path, bytes) = written_frame_of(&scratch, "f.frame", 64 << 20, 7);
    for mode in ["mmap", "mmap-window"] {
        fs::write(&path, &bytes).unwrap();
        let (child, _) = stopped_mid_read(&path, &["--io", mode, "--level", "trailer"], mapped_position);
        OpenOptions::new().write(true).open(&path).unwrap().set_len(0).unwrap();
        signal(&child, "CONT");
        let output = child.wait_with_output().unwrap();
        assert_eq!(output.status.signal(), None, "--io {mode}: killed by a signal ({:?})", output.status);
        assert_eq!(status(&output), 2, "--io {mode}: {}", stderr(&output));
        assert!(
            stderr(&output).contains("truncated while it was read (--io mmap)"),
            "--io {mode}: {}",
            stderr(&output)
        );
        assert!(!stdout(&output).contains("\"ok\""), "--io {mode}: no verdict: {}", stdout(&output));
    }
}
