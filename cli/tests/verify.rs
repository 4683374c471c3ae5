//! `membrane-frame verify` driven as a user would: per-file codes, the summary, the
//! exit status, the JSON shape, and no panic on hostile trees.

mod common;

use common::*;
use membrane_frame::{Frame, ReadOptions, VerifyLevel};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::Path;
use std::process::{Command, Stdio};

/// A tree mixing valid, damaged, legacy, empty and non-frame files; returns the
/// expected code of each file at the trailer level.
fn mixed_tree(scratch: &Scratch) -> BTreeMap<String, &'static str> {
    let payload = bytes(300_000, 1);
    let good = frame(&payload);
    let mut expected = BTreeMap::new();
    let mut put = |name: &str, content: &[u8], code: &'static str| {
        scratch.write(name, content);
        expected.insert(name.to_string(), code);
    };
    put("a/good-1.frame", &good, "ok");
    put("a/b/good-2.frame", &frame(&bytes(1000, 2)), "ok");
    put("a/stale-hash.frame", &frame_with_hash(&bytes(500, 3), Some("x")), "ok");
    let mut flipped = good.clone();
    let middle = flipped.len() / 2;
    flipped[middle] ^= 1;
    put("a/flipped.frame", &flipped, "trailer_mismatch");
    put("a/truncated.frame", &good[..good.len() - 9], "payload_overrun");
    let mut trailing = good.clone();
    trailing.push(0);
    put("a/trailing.frame", &trailing, "trailing_bytes");
    put("legacy/old.blob", &legacy(&good, 4), "legacy_frame");
    put("legacy/older.blob", &legacy(&good, 2), "legacy_frame");
    put("misc/empty.frame", b"", "too_short");
    put("misc/short.frame", b"\xC0\xDE\x01\x05", "too_short");
    put("misc/readme.md", b"# not a frame at all, but long enough to have a magic\n", "bad_magic");
    let mut reserved = good.clone();
    reserved[7] = 9;
    put("misc/reserved.frame", &reserved, "reserved_nonzero");
    expected
}

#[test]
fn a_mixed_tree_gets_the_right_codes_summary_and_exit_status() {
    let scratch = Scratch::new("mixed");
    let expected = mixed_tree(&scratch);
    let output = run_paths(&["verify", "--json", "--sort"], &[scratch.path()]);
    assert_eq!(status(&output), 1, "{}", stderr(&output));
    let (records, summary) = json_lines(&output);
    let codes = codes_by_path(&records, scratch.path());
    let expected: BTreeMap<String, String> = expected.into_iter().map(|(k, v)| (k, v.to_string())).collect();
    assert_eq!(codes, expected);

    // With --sort, records come in name order, and every one has the documented shape.
    let paths: Vec<&str> = records.iter().map(|r| r["path"].as_str().unwrap()).collect();
    let mut sorted = paths.clone();
    sorted.sort();
    assert_eq!(paths, sorted);
    for record in &records {
        let code = record["code"].as_str().unwrap();
        let class = record["class"].as_str().unwrap();
        assert_eq!(record["level"], "trailer");
        assert!(record["size"].is_u64() && record["bytes_read"].is_u64());
        if code == "ok" {
            assert_eq!(class, "ok");
            assert_eq!(record["fingerprint"].as_str().unwrap().len(), 64);
            assert!(record["payload_len"].is_u64());
        } else {
            let library = membrane_frame::ErrorCode::from_name(code).unwrap();
            assert_eq!(class, library.class().name());
            assert!(record["reason"].is_string());
        }
    }
    let flipped = records.iter().find(|r| r["path"].as_str().unwrap().ends_with("flipped.frame")).unwrap();
    assert_eq!(flipped["field"], "trailer");
    assert_eq!(flipped["offset"].as_u64().unwrap() + 8, flipped["size"].as_u64().unwrap());

    assert_eq!(summary["files"], 12);
    assert_eq!(summary["ok"], 3);
    assert_eq!(summary["invalid"], 9);
    assert_eq!(summary["io_errors"], 0);
    assert_eq!(summary["exit_status"], 1);
    assert_eq!(summary["codes"]["legacy_frame"], 2);
    assert_eq!(summary["codes"]["too_short"], 2);
    assert_eq!(summary["codes"]["ok"], 3);
}

#[test]
fn the_human_report_groups_by_code() {
    let scratch = Scratch::new("human");
    mixed_tree(&scratch);
    let output = run_paths(&["verify"], &[scratch.path()]);
    assert_eq!(status(&output), 1);
    let text = stdout(&output);
    // One line per invalid file, naming the file, the code and the offset.
    let flipped = text.lines().find(|l| l.contains("flipped.frame")).unwrap();
    assert!(flipped.contains("trailer_mismatch at byte "), "{flipped}");
    assert!(!text.contains("good-1.frame"), "valid files are listed only with --verbose");
    let summary: Vec<&str> = text.lines().skip_while(|l| !l.starts_with("verified 12 files")).collect();
    assert!(!summary.is_empty(), "{text}");
    let count = |code: &str| {
        let line = summary.iter().find(|l| l.split_whitespace().next() == Some(code)).unwrap();
        line.split_whitespace().nth(1).unwrap().parse::<u32>().unwrap()
    };
    assert_eq!(count("ok"), 3);
    assert_eq!(count("legacy_frame"), 2);
    assert_eq!(count("trailer_mismatch"), 1);
    assert!(summary.last().unwrap().contains("3 valid, 9 invalid"));
    // Verbose lists the valid ones too.
    let verbose = stdout(&run_paths(&["verify", "-v"], &[scratch.path()]));
    assert!(verbose.contains("good-1.frame: ok"), "{verbose}");
}

#[test]
fn all_valid_exits_zero_and_levels_are_honoured() {
    let scratch = Scratch::new("levels");
    let stale = scratch.write("stale.frame", &frame_with_hash(&bytes(4000, 5), Some("not-the-digest")));
    let good = scratch.write("good.frame", &frame(&bytes(4000, 6)));
    assert_eq!(status(&run_paths(&["verify"], &[&stale, &good])), 0);
    let full = run_paths(&["verify", "--level", "full", "--json"], &[&stale, &good]);
    assert_eq!(status(&full), 1);
    let (records, _) = json_lines(&full);
    assert_eq!(records[0]["code"], "payload_hash_mismatch");
    assert_eq!(records[0]["level"], "full");
    assert_eq!(records[1]["code"], "ok");

    // A damaged payload is invisible below the trailer level.
    let mut flipped = frame(&bytes(4000, 7));
    let at = flipped.len() - 100;
    flipped[at] ^= 0x80;
    let flipped = scratch.write("flipped.frame", &flipped);
    for (level, code) in
        [("layout", "ok"), ("identity", "ok"), ("trailer", "trailer_mismatch"), ("full", "trailer_mismatch")]
    {
        let (records, _) = json_lines(&run_paths(&["verify", "--json", "--level", level], &[&flipped]));
        assert_eq!(records[0]["code"], code, "{level}");
        if level == "layout" {
            assert!(records[0].get("fingerprint").is_none(), "no identity is parsed at the layout level");
        }
    }
}

/// The CLI's verdict must be the library's, at every level, for every conformance
/// vector and for large frames read in many chunks or mapped in many windows, whichever
/// way the files are read.
#[test]
fn verdicts_equal_the_library_reader_on_vectors_and_large_frames() {
    let vectors = vectors_dir();
    let scratch = Scratch::new("agree");
    let mut files: Vec<std::path::PathBuf> =
        fs::read_dir(vectors.join("frames")).unwrap().map(|e| e.unwrap().path()).collect();
    // Large frames, damaged at the start, middle and end of the payload, cut at
    // chunk boundaries, and with trailing bytes.
    let big = frame(&bytes(700_000, 9));
    files.push(scratch.write("big/ok.frame", &big));
    for (i, at) in [40usize, 300_000, 65_558, big.len() - 9, big.len() - 1].into_iter().enumerate() {
        let mut damaged = big.clone();
        damaged[at] ^= 0x40;
        files.push(scratch.write(&format!("big/flip-{i}.frame"), &damaged));
    }
    for cut in [22, 65_536, 65_558, 200_000, big.len() - 8, big.len() - 1] {
        files.push(scratch.write(&format!("big/cut-{cut}.frame"), &big[..cut]));
    }
    let mut longer = big.clone();
    longer.extend_from_slice(&[0u8; 70_000]);
    files.push(scratch.write("big/longer.frame", &longer));
    // Frames large enough to be mapped by default (2 MiB and up), damaged on both sides
    // of a window boundary (every MiB), cut past one, and with trailing bytes.
    let mapped = frame(&bytes(2_300_000, 10));
    files.push(scratch.write("mapped/ok.frame", &mapped));
    for at in [(1 << 20) - 1, 1 << 20, (2 << 20) + 5] {
        let mut damaged = mapped.clone();
        damaged[at] ^= 0x01;
        files.push(scratch.write(&format!("mapped/flip-{at}.frame"), &damaged));
    }
    files.push(scratch.write("mapped/cut.frame", &mapped[..(2 << 20) + 100]));
    let mut longer = mapped.clone();
    longer.extend_from_slice(&[0u8; 70_000]);
    files.push(scratch.write("mapped/longer.frame", &longer));
    files.sort();
    let paths: Vec<&Path> = files.iter().map(|p| p.as_path()).collect();

    let table: BTreeMap<String, (String, String)> = fs::read_to_string(vectors.join("frames.jsonl"))
        .unwrap()
        .lines()
        .map(|line| {
            let v: Value = serde_json::from_str(line).unwrap();
            let file = v["file"].as_str().unwrap().to_string();
            (file, (v["expect"].as_str().unwrap().to_string(), v["expect_full"].as_str().unwrap().to_string()))
        })
        .collect();

    for level in VerifyLevel::ALL {
        // `--io mmap` first: the one-shot reader, whose records every other way of
        // reading must give (the default maps several files at once on each worker at
        // the hashing levels, `--io read` reads them; `--jobs 1` puts every file through
        // one worker's lanes).
        let reads = [
            ["--io", "mmap"],
            ["--buffer-size", "4KiB"],
            ["--buffer-size", "128KiB"],
            ["--jobs", "1"],
            ["--io", "read"],
        ];
        let mut one_shot: Option<Vec<Value>> = None;
        for read in reads {
            let output = run_paths(&[&["verify", "--json", "--level", level.name()][..], &read[..]].concat(), &paths);
            let (mut records, summary) = json_lines(&output);
            for record in &mut records {
                // What was read differs by design (a map counts the whole file).
                record.as_object_mut().unwrap().remove("bytes_read");
            }
            match &one_shot {
                None => one_shot = Some(records.clone()),
                Some(expected) => assert_eq!(&records, expected, "{read:?} at {}", level.name()),
            }
            assert_eq!(records.len(), files.len());
            assert_eq!(summary["files"].as_u64().unwrap() as usize, files.len());
            for (record, path) in records.iter().zip(&files) {
                assert_eq!(record["path"].as_str().unwrap(), path.to_str().unwrap());
                let bytes = fs::read(path).unwrap();
                let library = match Frame::parse_with(&bytes, &ReadOptions::new().level(level)) {
                    Ok(_) => "ok".to_string(),
                    Err(err) => err.code().name().to_string(),
                };
                assert_eq!(record["code"].as_str().unwrap(), library, "{} at {}", path.display(), level.name());
                let relative = format!("frames/{}", path.file_name().unwrap().to_string_lossy());
                if let Some((expect, expect_full)) = table.get(&relative) {
                    match level {
                        VerifyLevel::Trailer => assert_eq!(&library, expect, "{relative}"),
                        VerifyLevel::Full => assert_eq!(&library, expect_full, "{relative}"),
                        _ => {}
                    }
                }
            }
        }
    }
}

#[test]
fn unreadable_paths_are_io_errors_with_exit_status_2() {
    let scratch = Scratch::new("io");
    let good = scratch.write("good.frame", &frame(&bytes(100, 1)));
    let missing = scratch.path().join("missing.frame");
    let output = run_paths(&["verify", "--json"], &[&good, &missing]);
    assert_eq!(status(&output), 2);
    let (records, summary) = json_lines(&output);
    assert_eq!(records[0]["code"], "ok");
    assert_eq!(records[1]["code"], "io");
    assert_eq!(records[1]["class"], "io");
    assert_eq!(summary["io_errors"], 1);
    assert_eq!(summary["exit_status"], 2);
    // The human form names the file on stderr.
    let output = run_paths(&["verify"], &[&good, &missing]);
    assert_eq!(status(&output), 2);
    assert!(stderr(&output).contains("missing.frame: cannot read"), "{}", stderr(&output));
}

#[test]
fn symlink_loops_dangling_links_and_fifos_do_not_stop_the_walk() {
    let scratch = Scratch::new("links");
    scratch.write("tree/good.frame", &frame(&bytes(100, 1)));
    symlink("..", scratch.path().join("tree/up")).unwrap();
    symlink(".", scratch.path().join("tree/self")).unwrap();
    symlink("loop-b", scratch.path().join("tree/loop-a")).unwrap();
    symlink("loop-a", scratch.path().join("tree/loop-b")).unwrap();
    symlink("good.frame", scratch.path().join("tree/alias.frame")).unwrap();
    let fifo = scratch.path().join("tree/pipe");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let output = run_paths(&["verify", "--json"], &[&scratch.path().join("tree")]);
    // The symlink loop (loop-a <-> loop-b) cannot be read: an I/O error, exit 2.
    assert_eq!(status(&output), 2);
    let (records, summary) = json_lines(&output);
    let codes = codes_by_path(&records, &scratch.path().join("tree"));
    assert_eq!(codes.get("good.frame").map(String::as_str), Some("ok"));
    assert_eq!(codes.get("alias.frame").map(String::as_str), Some("ok"));
    assert_eq!(codes.get("loop-a").map(String::as_str), Some("io"));
    assert_eq!(summary["skipped"], 3, "the fifo and the two directory loops: {}", stderr(&output));
    assert_eq!(codes.get("pipe").map(String::as_str), Some("skipped"));
    assert_eq!(codes.get("up").map(String::as_str), Some("skipped"));
    // The human form says why on stderr.
    let output = run_paths(&["verify"], &[&scratch.path().join("tree")]);
    assert!(stderr(&output).contains("pipe: skipped: not a regular file"), "{}", stderr(&output));
    assert!(stderr(&output).contains("up: skipped: symlink loop"), "{}", stderr(&output));
    // A FIFO given directly is refused without blocking on it.
    let output = run_paths(&["verify", "--json"], &[&fifo]);
    assert_eq!(status(&output), 2);
}

#[test]
fn directories_and_files_without_permission_are_reported() {
    let scratch = Scratch::new("perm");
    scratch.write("open/good.frame", &frame(&bytes(100, 1)));
    let closed = scratch.write("closed/hidden.frame", &frame(&bytes(100, 2)));
    let secret = scratch.write("open/secret.frame", &frame(&bytes(100, 3)));
    let closed_dir = closed.parent().unwrap().to_path_buf();
    fs::set_permissions(scratch.path(), fs::Permissions::from_mode(0o755)).unwrap();
    fs::set_permissions(&closed_dir, fs::Permissions::from_mode(0o000)).unwrap();
    fs::set_permissions(&secret, fs::Permissions::from_mode(0o000)).unwrap();
    let mut command = Command::new(BIN);
    if fs::read_dir(&closed_dir).is_ok() {
        // Root ignores permissions: run the binary as `nobody` so they apply.
        assert!(Path::new("/usr/bin/setpriv").exists(), "running as root needs setpriv (util-linux) for this test");
        command = Command::new("/usr/bin/setpriv");
        command.args(["--reuid=65534", "--regid=65534", "--clear-groups", BIN]);
    }
    let output = command.args(["verify", "--json"]).arg(scratch.path()).stdin(Stdio::null()).output().unwrap();
    assert_eq!(status(&output), 2, "{}", stderr(&output));
    let (records, summary) = json_lines(&output);
    let codes = codes_by_path(&records, scratch.path());
    assert_eq!(codes.get("closed").map(String::as_str), Some("io"), "{codes:?}");
    let closed = records.iter().find(|r| r["path"].as_str().unwrap().ends_with("closed")).unwrap();
    assert!(
        closed["reason"].as_str().unwrap().starts_with("cannot list this directory: Permission denied"),
        "{closed}"
    );
    assert_eq!(codes.get("open/secret.frame").map(String::as_str), Some("io"), "{codes:?}");
    assert_eq!(codes.get("open/good.frame").map(String::as_str), Some("ok"), "{codes:?}");
    assert_eq!(summary["io_errors"], 2);
}

#[test]
fn usage_errors_exit_2_and_help_has_examples() {
    for args in
        [&["verify"][..], &["verify", "--level", "paranoid", "x"], &["verify", "--bogus", "x"], &["frobnicate"], &[]]
    {
        let output = run(args);
        assert_eq!(status(&output), 2, "{args:?}");
        assert!(!stderr(&output).is_empty(), "{args:?}");
    }
    let help = run(&["--help"]);
    assert_eq!(status(&help), 0);
    assert!(stdout(&help).contains("Examples:"));
    let help = run(&["verify", "--help"]);
    assert!(stdout(&help).contains("Examples:") && stdout(&help).contains("--level"));
    let version = run(&["--version"]);
    assert_eq!(status(&version), 0);
    assert!(stdout(&version).starts_with("membrane-frame "));
}

#[test]
fn json_output_has_the_documented_shape_for_an_empty_walk() {
    let scratch = Scratch::new("empty");
    let output = run_paths(&["verify", "--json", "--allow-empty"], &[scratch.path()]);
    assert_eq!(status(&output), 0);
    let (records, summary) = json_lines(&output);
    assert!(records.is_empty());
    for key in [
        "files",
        "ok",
        "invalid",
        "io_errors",
        "skipped",
        "bytes_read",
        "bytes_hashed",
        "seconds",
        "bytes_per_second",
        "files_per_second",
        "level",
        "jobs",
        "codes",
        "exit_status",
    ] {
        assert!(summary.get(key).is_some(), "summary lacks {key}: {summary}");
    }
}
