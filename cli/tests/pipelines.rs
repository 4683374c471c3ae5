//! `membrane-frame verify` in shell pipelines and on big trees: a closed pipe or a full
//! disk on stdout, standard input, empty and missing paths, every path in `--json`
//! (skipped ones and non-UTF-8 names included), `--quiet`, the walk order, honest byte
//! counts, and memory that does not grow with the number of files.

mod common;

use common::*;
use std::fs;
use std::io::{BufRead, BufReader};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// `count` names in `dir` for copies of `content` (hard links, so a big tree is cheap).
fn linked_tree(dir: &Path, content: &[u8], count: usize) {
    fs::create_dir_all(dir).unwrap();
    // ext4 allows 65 000 links to one inode: a fresh source file every 50 000.
    let mut source = PathBuf::new();
    for i in 0..count {
        if i % 50_000 == 0 {
            source = dir.join(format!("source-{i}.frame"));
            fs::write(&source, content).unwrap();
        }
        fs::hard_link(&source, dir.join(format!("f{i:06}.frame"))).unwrap();
    }
}

/// Run `verify ARGS`, read the first line of stdout, close the pipe, wait.
fn first_line_then_close(args: &[&str], path: &Path) -> (String, std::process::Output) {
    let mut child = Command::new(BIN)
        .arg("verify")
        .args(args)
        .arg(path)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    // The reader (and so the pipe) is gone here, as after `| head -1`.
    let output = child.wait_with_output().unwrap();
    (line, output)
}

#[test]
fn a_pipe_closed_after_one_line_stops_the_run_quietly() {
    let scratch = Scratch::new("head");
    linked_tree(&scratch.path().join("valid"), &frame(&bytes(64, 1)), 20_000);
    let (line, output) = first_line_then_close(&["-v"], &scratch.path().join("valid"));
    assert!(line.contains(": ok, payload 64 bytes"), "{line}");
    // Nothing on stderr (at most one line is allowed; none is written), and the status
    // of what was reported: all valid so far.
    assert!(stderr(&output).lines().count() <= 1, "{}", stderr(&output));
    assert_eq!(stderr(&output), "");
    assert_eq!(status(&output), 0);

    // An invalid file reported before the close: status 1, still quiet.
    linked_tree(&scratch.path().join("invalid"), b"not a frame, one line each", 20_000);
    let (line, output) = first_line_then_close(&["--json"], &scratch.path().join("invalid"));
    assert!(line.contains("\"bad_magic\"") || line.contains("\"too_short\""), "{line}");
    assert_eq!(stderr(&output), "");
    assert_eq!(status(&output), 1);
}

#[test]
fn a_full_disk_on_stdout_is_one_message_and_status_2() {
    if !Path::new("/dev/full").exists() {
        panic!("this test needs /dev/full");
    }
    let scratch = Scratch::new("full");
    linked_tree(scratch.path(), &frame(&bytes(64, 1)), 5_000);
    let output = Command::new(BIN)
        .args(["verify", "-v"])
        .arg(scratch.path())
        .stdin(Stdio::null())
        .stdout(fs::File::create("/dev/full").unwrap())
        .output()
        .unwrap();
    assert_eq!(status(&output), 2);
    let lines: Vec<String> = stderr(&output).lines().map(str::to_string).collect();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].contains("cannot write to standard output") && lines[0].contains("No space left"), "{lines:?}");
}

/// `verify --json ARGS -` with `input` on stdin.
fn verify_stdin(args: &[&str], input: &[u8]) -> std::process::Output {
    run_with_stdin(&[&["verify", "--json"][..], args, &["-"]].concat(), input)
}

#[test]
fn standard_input_is_verified_like_a_file() {
    let good = frame(&bytes(100_000, 3));
    let output = verify_stdin(&[], &good);
    assert_eq!(status(&output), 0, "{}", stderr(&output));
    let (records, summary) = json_lines(&output);
    assert_eq!(records[0]["path"], "-");
    assert_eq!(records[0]["code"], "ok");
    assert_eq!(records[0]["size"], good.len());
    assert_eq!(summary["bytes_read"], good.len());
    assert_eq!(summary["bytes_hashed"], 100_000);

    let mut damaged = good.clone();
    let last = damaged.len() - 1;
    damaged[last] ^= 1;
    let output = verify_stdin(&[], &damaged);
    assert_eq!(status(&output), 1);
    let (records, _) = json_lines(&output);
    assert_eq!(records[0]["code"], "trailer_mismatch");
    assert_eq!(records[0]["offset"], (good.len() - 8) as u64);

    // Below the trailer level a stream is still read to its end: its length decides.
    let mut long = good.clone();
    long.push(0);
    let output = verify_stdin(&["--level", "layout"], &long);
    let (records, summary) = json_lines(&output);
    assert_eq!(records[0]["code"], "trailing_bytes");
    assert_eq!(summary["bytes_hashed"], 0);
}

#[test]
fn a_256_mib_frame_on_standard_input_is_verified_in_bounded_memory() {
    assert!(Path::new("/usr/bin/time").exists(), "this test needs GNU time (apt-get install time)");
    let scratch = Scratch::new("stdin-big");
    let made = run(&[
        "demo",
        "--out",
        scratch.path().join("c").to_str().unwrap(),
        "--frames",
        "1",
        "--frame-size",
        "256MiB",
        "--only-valid",
        "--no-verify",
    ]);
    assert_eq!(status(&made), 0, "{}", stderr(&made));
    let frame_path = fs::read_dir(scratch.path().join("c")).unwrap().next().unwrap().unwrap().path();
    let rss_file = scratch.path().join("rss");
    let output = Command::new("/usr/bin/time")
        .arg("-f")
        .arg("%M")
        .arg("-o")
        .arg(&rss_file)
        .args([BIN, "verify", "--json", "-"])
        .stdin(fs::File::open(&frame_path).unwrap())
        .output()
        .unwrap();
    assert_eq!(status(&output), 0, "{}", stderr(&output));
    let (records, summary) = json_lines(&output);
    assert_eq!(records[0]["code"], "ok");
    assert_eq!(summary["bytes_hashed"], 256u64 << 20);
    let rss_kib: u64 = fs::read_to_string(&rss_file).unwrap().trim().parse().unwrap();
    assert!(rss_kib < 32 << 10, "peak RSS {rss_kib} KiB for a 256 MiB stream");
}

#[test]
fn a_missing_path_is_unreadable_and_an_empty_tree_is_not_a_success() {
    let scratch = Scratch::new("empty-missing");
    let missing = scratch.path().join("no-such-volume");
    let output = run_paths(&["verify"], &[&missing]);
    assert_eq!(status(&output), 2);
    assert!(stdout(&output).contains("verified 0 files"), "{}", stdout(&output));
    assert!(stdout(&output).contains("1 unreadable"), "{}", stdout(&output));
    let output = run_paths(&["verify", "--json"], &[&missing]);
    let (records, summary) = json_lines(&output);
    assert_eq!(records[0]["code"], "io");
    assert_eq!((summary["files"].as_u64(), summary["io_errors"].as_u64()), (Some(0), Some(1)));

    let empty = scratch.path().join("mnt");
    fs::create_dir(&empty).unwrap();
    let output = run_paths(&["verify"], &[&empty]);
    assert_eq!(status(&output), 1);
    assert!(stderr(&output).contains("nothing to verify") && stderr(&output).contains("--allow-empty"));
    let output = run_paths(&["verify", "--json", "--allow-empty"], &[&empty]);
    assert_eq!(status(&output), 0);
    let (_, summary) = json_lines(&output);
    assert_eq!(summary["exit_status"], 0);
}

#[test]
fn json_has_a_line_for_every_path_and_non_utf8_names_survive() {
    let scratch = Scratch::new("every-path");
    let good = frame(&bytes(100, 1));
    scratch.write("good.frame", &good);
    let raw_name = std::ffi::OsStr::from_bytes(b"bad\xff\xfename.frame");
    fs::write(scratch.path().join(raw_name), &good).unwrap();
    let fifo = scratch.path().join("pipe");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    std::os::unix::fs::symlink("..", scratch.path().join("up")).unwrap();
    let output = run_paths(&["verify", "--json", "--sort"], &[scratch.path()]);
    assert_eq!(status(&output), 0, "{}", stderr(&output));
    assert_eq!(stderr(&output), "", "with --json, skipped entries are lines on stdout");
    let (records, summary) = json_lines(&output);
    assert_eq!(records.len(), 4, "{records:?}");
    let by_name = |end: &str| records.iter().find(|r| r["path"].as_str().unwrap().ends_with(end)).unwrap();
    assert_eq!(by_name("pipe")["code"], "skipped");
    assert!(by_name("pipe")["reason"].as_str().unwrap().contains("not a regular file"));
    assert_eq!(by_name("up")["code"], "skipped");
    assert!(by_name("up")["reason"].as_str().unwrap().contains("loop"));
    assert_eq!(summary["skipped"], 2);
    // The lossy path for people, the exact bytes for scripts.
    let odd = records.iter().find(|r| r.get("path_bytes").is_some()).expect("a path_bytes field");
    assert!(odd["path"].as_str().unwrap().contains('\u{FFFD}'));
    let exact = decode_base64(odd["path_bytes"].as_str().unwrap());
    assert_eq!(Path::new(std::ffi::OsStr::from_bytes(&exact)), scratch.path().join(raw_name));
    assert_eq!(odd["code"], "ok");
    assert!(by_name("good.frame").get("path_bytes").is_none(), "UTF-8 paths have no path_bytes");
}

/// Standard base64 (the test's own decoder, independent of the binary's encoder).
fn decode_base64(text: &str) -> Vec<u8> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut bits = 0u32;
    let mut count = 0;
    let mut out = Vec::new();
    for byte in text.bytes().filter(|&b| b != b'=') {
        let value = ALPHABET.iter().position(|&a| a == byte).expect("base64 alphabet") as u32;
        bits = (bits << 6) | value;
        count += 6;
        if count >= 8 {
            count -= 8;
            out.push((bits >> count) as u8);
        }
    }
    out
}

#[test]
fn quiet_prints_nothing_and_keeps_the_status() {
    let scratch = Scratch::new("quiet");
    scratch.write("good.frame", &frame(&bytes(100, 1)));
    scratch.write("bad.frame", b"garbage garbage garbage garbage");
    let output = run_paths(&["verify", "--quiet"], &[scratch.path()]);
    assert_eq!(status(&output), 1);
    assert_eq!(stdout(&output), "");
    assert_eq!(stderr(&output), "");
    let output = run_paths(&["verify", "-q"], &[&scratch.path().join("good.frame")]);
    assert_eq!((status(&output), stdout(&output)), (0, String::new()));
    let output = run_paths(&["verify", "-q", "-v"], &[scratch.path()]);
    assert_eq!(status(&output), 2, "--quiet and --verbose conflict");
}

#[test]
fn the_walk_order_does_not_depend_on_the_number_of_workers_and_sort_gives_names() {
    let scratch = Scratch::new("order");
    for i in 0..300 {
        // Sizes that finish out of order: some large, most small.
        let size = if i % 37 == 0 { 400_000 } else { 100 };
        scratch.write(&format!("d{}/f{:03}.frame", i % 3, (i * 7919) % 1000), &frame(&bytes(size, i)));
    }
    let order = |args: &[&str]| -> Vec<String> {
        let output = run_paths(&[&["verify", "--json"][..], args].concat(), &[scratch.path()]);
        assert_eq!(status(&output), 0);
        json_lines(&output).0.iter().map(|r| r["path"].as_str().unwrap().to_string()).collect()
    };
    let one = order(&["-j", "1"]);
    assert_eq!(one.len(), 300);
    assert_eq!(order(&["-j", "4"]), one);
    assert_eq!(order(&["-j", "2"]), one);
    let sorted = order(&["--sort", "-j", "3"]);
    let mut names = one.clone();
    names.sort();
    assert_eq!(sorted, names);
}

#[test]
fn bytes_read_are_the_bytes_read() {
    let scratch = Scratch::new("honest");
    let big = frame(&bytes(4 << 20, 9));
    let path = scratch.write("big.frame", &big);
    let output = run_paths(&["verify", "--json", "--level", "layout"], &[&path]);
    let (records, summary) = json_lines(&output);
    assert_eq!(records[0]["size"], big.len());
    let read = summary["bytes_read"].as_u64().unwrap();
    assert!(read < 1 << 20, "layout reads the head, not {read} bytes");
    assert_eq!(records[0]["bytes_read"], read);
    assert_eq!(summary["bytes_hashed"], 0);
    let output = run_paths(&["verify", "--json", "--level", "full"], &[&path]);
    let (_, summary) = json_lines(&output);
    assert_eq!(summary["bytes_read"], big.len());
    assert_eq!(summary["bytes_hashed"], 4u64 << 20);
    let human = stdout(&run_paths(&["verify", "--level", "layout"], &[&path]));
    assert!(human.contains(" hashed)") && human.contains("0 B hashed"), "{human}");
}

#[test]
fn memory_does_not_grow_with_the_number_of_files() {
    assert!(Path::new("/usr/bin/time").exists(), "this test needs GNU time (apt-get install time)");
    let scratch = Scratch::new("many");
    let content = frame(&bytes(16, 5));
    linked_tree(&scratch.path().join("tree"), &content, 200_000);
    scratch.write("one/one.frame", &content);
    let peak = |dir: &str| -> (u64, String) {
        let rss_file = scratch.path().join("rss");
        let output = Command::new("/usr/bin/time")
            .args(["-f", "%M", "-o"])
            .arg(&rss_file)
            .args([BIN, "verify"])
            .arg(scratch.path().join(dir))
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(status(&output), 0, "{}", stderr(&output));
        (fs::read_to_string(&rss_file).unwrap().trim().parse().unwrap(), stdout(&output))
    };
    let (one, _) = peak("one");
    let (many, report) = peak("tree");
    assert!(report.contains("verified 200004 files"), "{report}");
    assert!(many <= one + 2048, "peak RSS {many} KiB for 200 000 files, {one} KiB for one");
}

#[test]
fn envelope_check_json_has_a_line_for_a_skipped_entry_too() {
    let scratch = Scratch::new("envelope-skipped");
    let fifo = scratch.path().join("outbox.jsonl");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let output = run_paths(&["envelope", "check", "--json"], &[scratch.path()]);
    assert_eq!(stderr(&output), "");
    let first: serde_json::Value = serde_json::from_str(stdout(&output).lines().next().unwrap()).unwrap();
    assert_eq!(first["code"], "skipped");
    assert!(first["path"].as_str().unwrap().ends_with("outbox.jsonl"));
}
