//! `verify` on a file another process changes while it is read: truncated, grown,
//! rewritten in place (bytes already read, so the bytes read still verify), renamed over
//! or removed. Each gets an `io` verdict naming the change, never `ok` and never a
//! crash.
//!
//! Each test runs under the default, which maps the file a window at a time
//! (`--io window`), and under `--io read`. A truncation under a map is the sharp case:
//! the next read of a lost page raises SIGBUS, which must become that file's `io`
//! verdict while the run goes on.
//!
//! The change has to land in the middle of the read, not before or after it: the test
//! reads how far the verifier has got (its file position in `/proc/PID/fdinfo`, or the
//! resident end of its maps of the file in `/proc/PID/smaps`), stops the process with
//! SIGSTOP once that is past the start and before the end, makes the change, and lets it
//! go on (SIGCONT).

mod common;

use common::*;
use serde_json::Value;
use std::fs::{self, OpenOptions};
use std::io::Write as _;
use std::os::unix::fs::FileExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// 32 MiB read 4 KiB at a time: about 8000 reads (or steps through a map), time enough
/// to stop the reader halfway.
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

/// How far a verifier has read `path` under a memory map (`--io window`, `--io mmap`):
/// the end of the resident part of its mappings of the file (offset + resident size),
/// from `/proc/PID/smaps`. The reader hashes in order, so pages past it are not read yet.
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

/// Start `verify --json ARGS FILE` and stop it partway through reading `file`, as
/// `progress` tells: returns the stopped process and how far it had read.
fn stopped_mid_read(file: &Path, args: &[&str], progress: Progress) -> (Child, u64) {
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

/// How far a verifier has got through a file, or `None` while it has not opened it.
type Progress = fn(u32, &Path) -> Option<u64>;

/// The ways `verify` streams a file (`--io`), each with how to tell how far it has got.
const MODES: [(&str, Progress); 2] = [("window", mapped_position), ("read", read_position)];

/// `stopped_mid_read` under `--io MODE`, 4 KiB a step, at `level`.
fn stopped_mid_stream(file: &Path, mode: (&str, Progress), level: &str) -> (Child, u64) {
    stopped_mid_read(file, &["--io", mode.0, "--buffer-size", CHUNK, "--level", level], mode.1)
}

/// Let the stopped verifier go on; its exit status and JSON records.
fn resumed_all(child: Child) -> (i32, Vec<Value>) {
    signal(&child, "CONT");
    let output = child.wait_with_output().unwrap();
    let code = status(&output);
    (code, json_lines(&output).0)
}

/// [`resumed_all`] of a verifier given one file: its one record.
fn resumed(child: Child) -> (i32, Value) {
    let (code, records) = resumed_all(child);
    assert_eq!(records.len(), 1, "one record: {records:?}");
    (code, records[0].clone())
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
    for mode in MODES {
        for level in ["trailer", "full"] {
            let context = format!("--io {} --level {level}", mode.0);
            fs::write(&path, &bytes).unwrap();
            let (child, pos) = stopped_mid_stream(&path, mode, level);
            OpenOptions::new().write(true).open(&path).unwrap().set_len(pos / 2).unwrap();
            let (code, record) = resumed(child);
            let change = format!("its length went from {} to {} bytes", bytes.len(), pos / 2);
            assert_changed(code, &record, &change, &context);
        }
    }
}

/// A truncation that ends inside the file's last page frees no page, so a read under a
/// map does not fault: the cut-off bytes read as zeros. On a system with 64 KiB pages
/// (aarch64 servers) most truncations near a file's end are of this kind. The verdict is
/// still `io`, because a file's verdict stands only if its size and times are those it
/// was opened with.
#[test]
fn a_file_truncated_inside_its_last_page_is_an_io_error_under_every_io_mode() {
    let page: u64 = {
        let out = Command::new("getconf").arg("PAGESIZE").output().unwrap();
        String::from_utf8(out.stdout).unwrap().trim().parse().unwrap()
    };
    let scratch = Scratch::new("change-truncate-last-page");
    let (path, bytes) = written_frame(&scratch, "f.frame", 21);
    let len = bytes.len() as u64;
    let cut = (len - 10).max((len - 1) / page * page + 1);
    assert_eq!((cut - 1) / page, (len - 1) / page, "the cut stays in the last page");
    let modes: [(&str, Progress); 3] =
        [("window", mapped_position), ("mmap", mapped_position), ("read", read_position)];
    for (io, progress) in modes {
        fs::write(&path, &bytes).unwrap();
        let (child, _) = stopped_mid_read(&path, &["--io", io, "--buffer-size", CHUNK, "--level", "trailer"], progress);
        OpenOptions::new().write(true).open(&path).unwrap().set_len(cut).unwrap();
        let (code, record) = resumed(child);
        assert_changed(code, &record, &format!("its length went from {len} to {cut} bytes"), io);
    }
}

/// The SIGBUS of a truncation under a map ends that file, not the run: another file in
/// flight on the same worker verifies, and so does one after it.
#[test]
fn a_file_truncated_under_its_map_leaves_the_other_files_verified() {
    let scratch = Scratch::new("change-truncate-others");
    let (path, bytes) = written_frame(&scratch, "b.frame", 11);
    let (beside, _) = written_frame(&scratch, "a.frame", 12);
    let (after, _) = written_frame_of(&scratch, "c.frame", 1 << 20, 13);
    for io in ["window", "mmap"] {
        fs::write(&path, &bytes).unwrap();
        // Reported in the order given: a, c, then b (the file stopped in).
        let args = ["--io", io, "--buffer-size", CHUNK, "--level", "trailer"];
        let args = [&args[..], &[beside.to_str().unwrap(), after.to_str().unwrap()]].concat();
        let (child, _) = stopped_mid_read(&path, &args, mapped_position);
        OpenOptions::new().write(true).open(&path).unwrap().set_len(0).unwrap();
        let (code, records) = resumed_all(child);
        let codes: Vec<&str> = records.iter().map(|record| record["code"].as_str().unwrap_or("?")).collect();
        assert_eq!(codes, ["ok", "ok", "io"], "--io {io}: a, c, b (truncated): {records:?}");
        assert_eq!(records[2]["path"].as_str(), path.to_str(), "--io {io}");
        assert_changed(code, &records[2], &format!("its length went from {} to 0 bytes", bytes.len()), io);
    }
}

#[test]
fn a_file_grown_while_it_is_read_is_an_io_error() {
    let scratch = Scratch::new("change-grow");
    let (path, bytes) = written_frame(&scratch, "f.frame", 2);
    for mode in MODES {
        fs::write(&path, &bytes).unwrap();
        let (child, _) = stopped_mid_stream(&path, mode, "trailer");
        OpenOptions::new().append(true).open(&path).unwrap().write_all(&[0u8; 100]).unwrap();
        let (code, record) = resumed(child);
        let change = format!("its length went from {} to {} bytes", bytes.len(), bytes.len() + 100);
        assert_changed(code, &record, &change, mode.0);
    }
}

/// The sly case: the bytes changed were already read, so what was read is a valid frame
/// from start to end — only the file's change time tells that the file is no longer it.
#[test]
fn a_file_rewritten_where_it_was_already_read_is_an_io_error_not_ok() {
    let scratch = Scratch::new("change-rewrite");
    let (path, bytes) = written_frame(&scratch, "f.frame", 3);
    for mode in MODES {
        fs::write(&path, &bytes).unwrap();
        std::thread::sleep(Duration::from_millis(30));
        let (child, pos) = stopped_mid_stream(&path, mode, "full");
        assert!(pos >= 4096, "a whole chunk was read");
        let at = 2000u64;
        let flipped = [bytes[at as usize] ^ 0xFF];
        OpenOptions::new().write(true).open(&path).unwrap().write_all_at(&flipped, at).unwrap();
        let (code, record) = resumed(child);
        assert_changed(code, &record, "it was written to", mode.0);
        // The bytes the verifier read did verify: the file as it was is a valid frame.
        fs::write(&path, &bytes).unwrap();
        assert_eq!(json_lines(&run_paths(&["verify", "--json"], &[&path])).0[0]["code"], "ok");
    }
}

#[test]
fn a_file_renamed_over_or_removed_while_it_is_read_is_an_io_error() {
    let scratch = Scratch::new("change-replace");
    for mode in MODES {
        let (path, _) = written_frame(&scratch, "f.frame", 4);
        let (other, _) = written_frame(&scratch, "other.frame", 5);
        let (child, _) = stopped_mid_stream(&path, mode, "trailer");
        fs::rename(&other, &path).unwrap();
        let (code, record) = resumed(child);
        assert_changed(code, &record, "another file was put in its place", &format!("renamed over, {}", mode.0));

        let (child, _) = stopped_mid_stream(&path, mode, "trailer");
        fs::remove_file(&path).unwrap();
        let (code, record) = resumed(child);
        assert_changed(code, &record, "its path no longer opens", &format!("removed, {}", mode.0));
    }
}

/// A file left alone through the same stop and resume verifies: the checks above see
/// the change, not the pause.
#[test]
fn a_file_only_paused_on_verifies_ok() {
    let scratch = Scratch::new("change-none");
    let (path, _) = written_frame(&scratch, "f.frame", 6);
    for mode in MODES {
        let (child, _) = stopped_mid_stream(&path, mode, "full");
        std::thread::sleep(Duration::from_millis(50));
        let (code, record) = resumed(child);
        assert_eq!((code, record["code"].as_str()), (0, Some("ok")), "--io {}: {record}", mode.0);
    }
}
