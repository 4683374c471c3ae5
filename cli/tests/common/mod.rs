//! Helpers shared by the CLI's integration tests: running the binary, scratch
//! directories, and frames built with the library.
#![allow(dead_code)]

use membrane_frame::{encode_frame, Dtype, IdentityValues, InclusiveRange, Sha256Digest};
use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

pub const BIN: &str = env!("CARGO_BIN_EXE_membrane-frame");

/// A scratch directory under the system temp dir, removed on drop.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(name: &str) -> Scratch {
        static COUNT: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "membrane-cli-test-{name}-{}-{}",
            std::process::id(),
            COUNT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    pub fn write(&self, relative: &str, bytes: &[u8]) -> PathBuf {
        let path = self.0.join(relative);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, bytes).unwrap();
        path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        // Restore permissions a test may have taken away, then remove everything.
        let _ = Command::new("chmod").arg("-R").arg("u+rwx").arg(&self.0).status();
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// Run the binary with arguments; stdin is closed.
pub fn run(args: &[&str]) -> Output {
    Command::new(BIN).args(args).stdin(Stdio::null()).output().expect("the binary runs")
}

/// Run the binary with arguments and `input` on stdin (written from another thread, so
/// a command that stops reading early cannot block the test).
pub fn run_with_stdin(args: &[&str], input: &[u8]) -> Output {
    use std::io::Write as _;
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut stdin = child.stdin.take().expect("a stdin pipe");
    let input = input.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let output = child.wait_with_output().expect("the binary runs");
    writer.join().expect("the writer thread");
    output
}

pub fn run_paths(args: &[&str], paths: &[&Path]) -> Output {
    Command::new(BIN).args(args).args(paths).stdin(Stdio::null()).output().expect("the binary runs")
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Exit status; a panic (101) or a signal fails the test with the output shown.
pub fn status(output: &Output) -> i32 {
    let code = output.status.code().unwrap_or_else(|| panic!("killed by a signal: {output:?}"));
    assert_ne!(code, 101, "the binary panicked:\n{}", stderr(output));
    assert!(!stderr(output).contains("panicked"), "the binary panicked:\n{}", stderr(output));
    code
}

/// Parse JSON lines; the last one must be the summary.
pub fn json_lines(output: &Output) -> (Vec<Value>, Value) {
    let mut lines: Vec<Value> = stdout(output)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|err| panic!("not JSON ({err}): {line}")))
        .collect();
    let summary = lines.pop().expect("a summary line");
    let summary = summary.get("summary").cloned().unwrap_or_else(|| panic!("last line is not a summary: {summary}"));
    (lines, summary)
}

/// Per-file code by path (relative to `root`).
pub fn codes_by_path(records: &[Value], root: &Path) -> std::collections::BTreeMap<String, String> {
    records
        .iter()
        .map(|record| {
            let path = Path::new(record["path"].as_str().unwrap());
            let relative = path.strip_prefix(root).unwrap_or(path).to_string_lossy().into_owned();
            (relative, record["code"].as_str().unwrap().to_string())
        })
        .collect()
}

/// Deterministic bytes.
pub fn bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect()
}

/// A valid v5 frame of `payload` (payload_hash = its digest unless `payload_hash` is given).
pub fn frame_with_hash(payload: &[u8], payload_hash: Option<&str>) -> Vec<u8> {
    let hex = Sha256Digest::of(payload).to_hex();
    let identity = IdentityValues {
        payload_hash: payload_hash.unwrap_or(hex.as_str()),
        model_id: "llama-3-8b",
        model_revision: "main",
        tokenizer_name: "llama-3-8b",
        tokenizer_revision: "main",
        layer_range: InclusiveRange::new(0, 3),
        head_range: InclusiveRange::ALL_HEADS,
        token_span: InclusiveRange::new(0, 127),
        dtype: Dtype::Float16,
        shape: &[2, 4, 8, 128, 128],
    }
    .build()
    .unwrap();
    let mut out = vec![0u8; payload.len() + 4096];
    let len = encode_frame(&identity, payload, &mut out).unwrap();
    out.truncate(len);
    out
}

pub fn frame(payload: &[u8]) -> Vec<u8> {
    frame_with_hash(payload, None)
}

/// The frame as a legacy frame of `version` (2 or 4): magic and schema rewritten.
pub fn legacy(frame: &[u8], version: u8) -> Vec<u8> {
    let mut bytes = frame.to_vec();
    bytes[3] = version;
    bytes[4] = version;
    bytes
}

/// Where the conformance vectors are (`$MEMBRANE_VECTORS` or `../shared/vectors`).
pub fn vectors_dir() -> PathBuf {
    let dir = std::env::var_os("MEMBRANE_VECTORS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/vectors"));
    assert!(
        dir.join("frames.jsonl").is_file(),
        "conformance vectors not found at {} (set MEMBRANE_VECTORS)",
        dir.display()
    );
    dir
}
