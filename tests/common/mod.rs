//! Shared helpers for the integration tests: where the conformance vectors live.
#![allow(dead_code)]

use std::path::PathBuf;

/// The vectors folder: `$MEMBRANE_VECTORS`, else `../shared/vectors` beside the checkout.
///
/// A missing folder fails the test with a loud banner: a conformance check that did
/// not run is never reported as a pass.
pub fn vectors_dir() -> PathBuf {
    let dir = match std::env::var_os("MEMBRANE_VECTORS") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/vectors"),
    };
    if !dir.join("frames.jsonl").is_file() {
        eprintln!("\n{}", "!".repeat(78));
        eprintln!("!!! CONFORMANCE VECTORS NOT FOUND at {}", dir.display());
        eprintln!("!!! Set MEMBRANE_VECTORS to the folder holding frames.jsonl. These tests");
        eprintln!("!!! FAIL rather than pass without checking anything.");
        eprintln!("{}\n", "!".repeat(78));
        panic!("conformance vectors not found at {}", dir.display());
    }
    dir
}

/// Every line of a JSON-lines vector file, parsed.
pub fn read_jsonl(name: &str) -> Vec<serde_json::Value> {
    read_lines(name).iter().map(|line| serde_json::from_str(line).unwrap()).collect()
}

/// Every non-blank line of a vector file.
pub fn read_lines(name: &str) -> Vec<String> {
    let path = vectors_dir().join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let lines: Vec<String> = text.lines().filter(|l| !l.trim().is_empty()).map(String::from).collect();
    assert!(!lines.is_empty(), "{} has no vectors", path.display());
    lines
}

/// The bytes of a file named in a vector, relative to the vectors folder.
pub fn read_vector_file(relative: &str) -> Vec<u8> {
    let path = vectors_dir().join(relative);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The bytes of every frame vector (`frames.jsonl`), in its order.
pub fn vector_frames() -> Vec<Vec<u8>> {
    read_jsonl("frames.jsonl").iter().map(|case| read_vector_file(case["file"].as_str().unwrap())).collect()
}

/// Damaged copies of `frames`, for the tests that compare two readers on bad input: a
/// bit flipped at a spread of positions, cut to a third, a half and one to three bytes
/// short, one and two bytes longer.
pub fn damaged_frames(frames: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for (n, frame) in frames.iter().enumerate() {
        for step in [1usize, 5, 7, 11, 13] {
            let at = (n * 31 + step * 977) % frame.len().max(1);
            if let Some(byte) = frame.get(at) {
                let mut copy = frame.clone();
                copy[at] = byte ^ (1 << (step % 8));
                out.push(copy);
            }
        }
        for keep in [frame.len() / 3, frame.len() / 2] {
            out.push(frame[..keep].to_vec());
        }
        for short in [1, 3] {
            out.push(frame[..frame.len().saturating_sub(short)].to_vec());
        }
        for extra in [&b"\0"[..], b"xy"] {
            let mut longer = frame.clone();
            longer.extend_from_slice(extra);
            out.push(longer);
        }
    }
    out
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// For a test binary with its own `main` (`harness = false`): answers cargo-nextest's
/// `--list` (one test named `test_name`, none ignored), so `cargo mutants` can run the
/// binary through nextest too. False when the call only listed: `main` returns then.
pub fn run_custom_harness(test_name: &str) -> bool {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|arg| arg == "--list") {
        if !args.iter().any(|arg| arg == "--ignored") {
            println!("{test_name}: test");
        }
        return false;
    }
    true
}
