//! Interop of the SPEC §10 protobuf codec with the official Python protobuf runtime
//! (issue acceptance 1), both ways, through `scripts/proto_interop.py`:
//! * Python encodes random and edge-case messages (every field, defaults, unknown fields
//!   of every wire type, repeated scalars, unpacked and interleaved `shape`, int64/uint64
//!   extremes, negative int32) with classes generated from the `.proto` by
//!   `grpc_tools.protoc`; Rust decodes each to exactly the values Python reads back.
//! * Rust encodes random and edge-case messages; Python decodes them to the values Rust
//!   meant and re-encodes them to the same bytes.
//!
//! Needs `python3` with `protobuf` and `grpcio-tools` (`.ci/run` installs them). Without
//! them this test FAILS: it never passes silently. `$PYTHON` overrides the interpreter.

use membrane_frame::proto::{Chunk, ChunkRequest, Envelope, Message, Shape, TensorPayload};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

fn python() -> String {
    std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_string())
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Panic loudly unless python3 with the two packages is there.
fn require_python() {
    let probe = Command::new(python())
        .args(["-c", "import google.protobuf, grpc_tools; print(google.protobuf.__version__)"])
        .output();
    match probe {
        Ok(out) if out.status.success() => {
            eprintln!("python protobuf {}", String::from_utf8_lossy(&out.stdout).trim());
        }
        Ok(out) => panic!(
            "proto interop needs the Python packages `protobuf` and `grpcio-tools` \
             (python3 -m pip install 'protobuf==7.36.2' 'grpcio-tools==1.85.1'; .ci/run does it): {}",
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(err) => panic!("proto interop needs python3 (or $PYTHON) on PATH: {err}"),
    }
}

fn run_script(args: &[&str], dir: &Path) {
    let out = Command::new(python())
        .arg(repo().join("scripts/proto_interop.py"))
        .args(args)
        .arg("--proto-root")
        .arg(repo().join("proto"))
        .arg("--out")
        .arg(dir)
        .output()
        .expect("run scripts/proto_interop.py");
    eprintln!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "scripts/proto_interop.py {args:?} failed (output above)");
}

fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("membrane-proto-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn shape_json(shape: &Shape<'_>) -> Value {
    Value::from(shape.iter().collect::<Vec<i64>>())
}

/// The values of a decoded message, in the JSON form the Python script uses.
fn describe(message: &str, bytes: &[u8]) -> Result<Value, membrane_frame::Error> {
    Ok(match message {
        "Envelope" => {
            let m = Envelope::decode(bytes)?;
            json!({"request_id": m.request_id, "tenant_id": m.tenant_id, "model_id": m.model_id,
                   "fingerprint_compat": m.fingerprint_compat, "content_hash": m.content_hash,
                   "total_bytes": m.total_bytes, "compression": m.compression, "content_type": m.content_type})
        }
        "TensorPayload" => {
            let m = TensorPayload::decode(bytes)?;
            json!({"data": hex(m.data), "schema_fingerprint": m.schema_fingerprint,
                   "shape": shape_json(&m.shape), "dtype": m.dtype})
        }
        "ChunkRequest" => {
            let m = ChunkRequest::decode(bytes)?;
            json!({"chunk_index": m.chunk_index, "offset": m.offset, "length": m.length})
        }
        "Chunk" => {
            let m = Chunk::decode(bytes)?;
            json!({"chunk_index": m.chunk_index, "offset": m.offset, "data": hex(m.data),
                   "sha256_hex": m.sha256_hex, "is_last": m.is_last})
        }
        other => panic!("unknown message {other}"),
    })
}

#[test]
fn rust_decodes_what_python_encodes() {
    require_python();
    for seed in [1u64, 2, 3] {
        let dir = temp_dir(&format!("py{seed}"));
        run_script(&["gen", "--seed", &seed.to_string(), "--count", "60"], &dir);
        let cases: Vec<Value> = serde_json::from_slice(&std::fs::read(dir.join("py_cases.json")).unwrap()).unwrap();
        assert!(cases.len() > 200, "too few cases: {}", cases.len());
        for case in &cases {
            let file = case["file"].as_str().unwrap();
            let message = case["message"].as_str().unwrap();
            let bytes = std::fs::read(dir.join(file)).unwrap();
            let got = describe(message, &bytes).unwrap_or_else(|err| panic!("{file} ({message}): Rust refuses: {err}"));
            assert_eq!(got, case["values"], "{file} ({message}), seed {seed}, bytes {}", hex(&bytes));
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// xorshift64*: reproducible without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn i64(&mut self) -> i64 {
        let picks = [0, 1, -1, i64::MIN, i64::MAX, i64::MIN + 1, 127, 128, -128, 300];
        match self.below(3) {
            0 => picks[self.below(picks.len() as u64) as usize],
            1 => (self.next() >> self.below(64)) as i64,
            _ => self.next() as i64,
        }
    }
    fn i32(&mut self) -> i32 {
        let picks = [0, 1, -1, i32::MIN, i32::MAX, -2, 255];
        match self.below(2) {
            0 => picks[self.below(picks.len() as u64) as usize],
            _ => self.next() as i32,
        }
    }
    fn string(&mut self) -> String {
        const CHARS: &[char] =
            &['a', 'Z', '0', '-', ' ', '"', '\\', '\n', '\0', 'é', '中', '😀', '\u{7ff}', '\u{ffff}', '\u{10ffff}'];
        let len = [0, 1, 5, 40][self.below(4) as usize];
        (0..len).map(|_| CHARS[self.below(CHARS.len() as u64) as usize]).collect()
    }
    fn bytes(&mut self) -> Vec<u8> {
        let len = [0, 1, 17, 200][self.below(4) as usize];
        (0..len).map(|_| self.next() as u8).collect()
    }
}

/// Owned storage for one message of each kind.
struct Owned {
    strings: Vec<String>,
    data: Vec<u8>,
    shape: Vec<i64>,
    ints: [i64; 3],
    int32: i32,
    flag: bool,
}

fn owned(rng: &mut Rng, full: bool) -> Owned {
    let mut strings: Vec<String> = (0..6).map(|_| rng.string()).collect();
    let mut data = rng.bytes();
    let mut shape: Vec<i64> = (0..rng.below(9)).map(|_| rng.i64()).collect();
    if full {
        strings.iter_mut().filter(|s| s.is_empty()).for_each(|s| s.push('x'));
        data.push(0);
        shape.push(i64::MIN);
    }
    let ints = [rng.i64(), rng.i64(), rng.i64()];
    Owned { strings, data, shape, ints, int32: rng.i32(), flag: full || rng.below(2) == 1 }
}

fn encode<'a, M: Message<'a>>(msg: &M) -> Vec<u8> {
    let mut out = vec![0u8; msg.encoded_len()];
    let len = msg.encode_to_slice(&mut out).unwrap();
    assert_eq!(len, out.len(), "encoded_len is exact");
    out
}

#[test]
fn python_decodes_what_rust_encodes() {
    require_python();
    let dir = temp_dir("rs");
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut cases = Vec::new();
    let mut write = |message: &str, bytes: Vec<u8>| {
        let values = describe(message, &bytes).unwrap();
        let file = format!("rs_{}.bin", cases.len());
        std::fs::write(dir.join(&file), &bytes).unwrap();
        cases.push(json!({"message": message, "file": file, "values": values}));
    };
    for round in 0..240 {
        let o = owned(&mut rng, round % 10 == 0);
        let s = |i: usize| o.strings[i].as_str();
        let envelope = Envelope {
            request_id: s(0),
            tenant_id: s(1),
            model_id: s(2),
            fingerprint_compat: s(3),
            content_hash: s(4),
            total_bytes: o.ints[0],
            compression: o.int32,
            content_type: s(5),
        };
        write("Envelope", encode(&envelope));
        let tensor =
            TensorPayload { data: &o.data, schema_fingerprint: s(0), shape: Shape::from_values(&o.shape), dtype: s(1) };
        write("TensorPayload", encode(&tensor));
        let request = ChunkRequest { chunk_index: o.int32, offset: o.ints[1], length: o.ints[2] };
        write("ChunkRequest", encode(&request));
        let chunk = Chunk { chunk_index: o.int32, offset: o.ints[0], data: &o.data, sha256_hex: s(2), is_last: o.flag };
        write("Chunk", encode(&chunk));
    }
    // Defaults: nothing on the wire.
    write("Envelope", encode(&Envelope::default()));
    write("Chunk", encode(&Chunk::default()));
    std::fs::write(dir.join("rust_cases.json"), serde_json::to_vec(&cases).unwrap()).unwrap();
    let manifest = dir.join("rust_cases.json");
    run_script(&["check", "--manifest", manifest.to_str().unwrap()], &dir);
    std::fs::remove_dir_all(&dir).unwrap();
}
