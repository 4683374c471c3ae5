//! Performance targets of the frame reader, verifier and writer, each measured next to
//! a baseline in the same run (docs/performance.md).
//!
//! ```text
//! CARGO_TARGET_DIR=/work/target-bench cargo bench --bench frame
//! ```
//!
//! How it measures (all of it printed, in a table at the end):
//! * Criterion measures every benchmark as usual, and the small ones a second time
//!   with a thread-CPU-time clock (group `small_cpu`). Afterwards this binary reads
//!   the medians Criterion saved (`<target>/criterion/<group>/<bench>/new/
//!   estimates.json`; estimates older than this run are "not measured", never reused).
//! * A paired check times each target and its baseline in alternating short rounds
//!   (A B, B A, ...) and takes the median of the per-round ratios. On a small shared
//!   machine the load changes from one second to the next; Criterion measures one
//!   benchmark after the other, so a ratio of two Criterion medians can be off by tens
//!   of percent, while adjacent rounds see the same load.
//!
//! Verdicts: the absolute targets (ns) on the thread-CPU-time median (what the
//! operation costs, whatever else the machine runs; the wall-clock median is printed
//! beside it and flagged when over the limit), the throughput targets (ratio to raw
//! `sha2`) on the paired median ratio.
//!
//! Acceptance targets:
//! * layout-level parse of `docs-hello.bin` (exact mode) <= 20 ns;
//! * identity-level parse of `docs-hello.bin` <= 300 ns;
//! * trailer-level `Frame::parse_with` (exact mode) of 1 MiB / 64 MiB payloads >= 0.95x the
//!   throughput of `sha2::Sha256::digest` over the same payload bytes;
//! * head + trailer writing (what a `writev` writer does) of 1 MiB / 64 MiB payloads
//!   >= 0.95x raw `sha2` over the same bytes.
//!
//! Vectors: `$MEMBRANE_VECTORS`, else `../shared/vectors` beside the crate. Without them
//! the bench says so loudly and builds equivalent frames in code.

mod support;

use criterion::measurement::Measurement;
use criterion::{Criterion, SamplingMode, Throughput};
use membrane_frame::{
    encode_frame, Frame, FrameEncoder, PayloadIdentity, ReadOptions, Sha256Digest, StreamVerifier, VerifyLevel,
};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, SystemTime};
use support::{
    criterion_dir, full_run, kv_identity, machine_summary, paired, thread_cpu_time, vectors_dir, Paired, ThreadCpuTime,
};

const MIB: usize = 1 << 20;
const STREAM_CHUNK: usize = 64 * 1024;
const SMALL: &str = "small";
const SMALL_CPU: &str = "small_cpu";

// ---------------------------------------------------------------------------------------
// Fixtures

struct SmallFrames {
    /// `frames/docs-hello.bin` (321 bytes, canonical 286-byte identity).
    hello: Vec<u8>,
    /// `frames/noncanonical-pretty.bin` (the same identity, pretty-printed).
    pretty: Vec<u8>,
    /// Where they came from.
    source: String,
}

fn load_small_frames() -> SmallFrames {
    let dir = vectors_dir();
    let hello = std::fs::read(dir.join("frames/docs-hello.bin"));
    let pretty = std::fs::read(dir.join("frames/noncanonical-pretty.bin"));
    match (hello, pretty) {
        (Ok(hello), Ok(pretty)) => SmallFrames { hello, pretty, source: format!("vectors at {}", dir.display()) },
        _ => {
            let bar = "!".repeat(78);
            eprintln!("\n{bar}");
            eprintln!("!!! CONFORMANCE VECTORS NOT FOUND at {}", dir.display());
            eprintln!("!!! Set MEMBRANE_VECTORS to the folder holding frames/docs-hello.bin.");
            eprintln!("!!! Benchmarking EQUIVALENT FRAMES BUILT IN CODE instead (example_frame()");
            eprintln!("!!! and a pretty-printed copy of its identity).");
            eprintln!("{bar}\n");
            let hello = membrane_frame::example_frame();
            let pretty = pretty_copy(&hello);
            SmallFrames { hello, pretty, source: "BUILT IN CODE (vectors not found)".to_string() }
        }
    }
}

/// The same frame with its identity re-spelled non-canonically (a space after every
/// `:` and `,` outside strings), so its fingerprint needs re-serialisation.
fn pretty_copy(frame: &[u8]) -> Vec<u8> {
    let (parsed, _) = Frame::parse_with(frame, &options(VerifyLevel::Layout)).expect("example frame");
    let mut json = Vec::new();
    let (mut in_string, mut escaped) = (false, false);
    for &byte in parsed.identity_json() {
        json.push(byte);
        if in_string {
            match (escaped, byte) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
        } else if byte == b'"' {
            in_string = true;
        } else if byte == b':' || byte == b',' {
            json.push(b' ');
        }
    }
    let payload = parsed.payload();
    let mut out = vec![0xC0, 0xDE, 0x01, 0x05, 5, 0, 0, 0, 0, 0];
    out.extend_from_slice(&(json.len() as u32).to_le_bytes());
    out.extend_from_slice(&json);
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(payload);
    out.extend_from_slice(&Sha256Digest::of(payload).trailer());
    out
}

/// A valid frame around `len` pseudo-random payload bytes, written by the crate.
fn big_frame(len: usize) -> Vec<u8> {
    let mut payload = vec![0u8; len];
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15 ^ len as u64;
    for chunk in payload.chunks_mut(8) {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        chunk.copy_from_slice(&state.to_le_bytes()[..chunk.len()]);
    }
    let hash = Sha256Digest::of(&payload).to_hex();
    let identity = kv_identity(hash.as_str()).build().expect("bench identity is valid");
    let encoder = FrameEncoder::new(&identity, len as u64).expect("bench frame plan");
    let mut frame = vec![0u8; encoder.frame_len() as usize];
    let written = encode_frame(&identity, &payload, &mut frame).expect("bench frame fits");
    assert_eq!(written, frame.len());
    frame
}

fn options(level: VerifyLevel) -> ReadOptions {
    ReadOptions::new().level(level)
}

// ---------------------------------------------------------------------------------------
// The operations measured (shared by Criterion and the paired check)

/// What a caller looks at after a parse: where the payload is, or the error code.
/// (Handing the whole ~400-byte `Result` to `black_box` would time a memcpy of it.)
fn observe(result: &Result<(Frame<'_>, &[u8]), membrane_frame::Error>) -> (usize, usize) {
    match result {
        Ok((frame, _)) => (frame.payload_offset(), frame.payload().len()),
        Err(err) => (usize::MAX, err.code().number() as usize),
    }
}

fn parse(frame: &[u8], opts: &ReadOptions) -> (usize, usize) {
    observe(&Frame::parse_with(black_box(frame), black_box(opts)))
}

fn sha2_raw(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(black_box(bytes)).into()
}

fn copy_frame(frame: &[u8], out: &mut [u8]) {
    out.copy_from_slice(black_box(frame));
    black_box(out);
}

fn fingerprint(identity: &PayloadIdentity<'_>) -> Sha256Digest {
    black_box(identity).fingerprint()
}

/// A `writev` writer: one SHA-256 pass over the payload gives the `payload_hash` and the
/// trailer; build the identity, plan the frame, write the head into a buffer. The
/// payload itself is never copied.
fn write_head_trailer(payload: &[u8], head: &mut [u8]) -> (usize, [u8; 8]) {
    let payload = black_box(payload);
    let digest = Sha256Digest::of(payload);
    let hex = digest.to_hex();
    let identity = kv_identity(hex.as_str()).build().expect("identity");
    let encoder = FrameEncoder::new(&identity, payload.len() as u64).expect("plan");
    let head_len = encoder.write_head_into(head).expect("head fits");
    black_box((head_len, digest.trailer()))
}

/// The frame fed to a streaming verifier in 64 KiB chunks, as from a socket.
fn stream_verify(frame: &[u8], identity_buf: &mut [u8]) -> u64 {
    let mut verifier = StreamVerifier::new(options(VerifyLevel::Trailer), identity_buf);
    for chunk in black_box(frame).chunks(STREAM_CHUNK) {
        verifier.feed(chunk).expect("chunk");
    }
    black_box(verifier.finish().expect("verdict").payload_len())
}

/// Paired results by "group/bench" of the target.
type PairedResults = HashMap<String, Paired>;

// ---------------------------------------------------------------------------------------
// Benchmarks

/// The small fixtures, checked to be what the targets talk about.
struct Small<'a> {
    hello: &'a [u8],
    identity_json: &'a [u8],
    canonical: PayloadIdentity<'a>,
    noncanonical: PayloadIdentity<'a>,
}

impl<'a> Small<'a> {
    fn new(frames: &'a SmallFrames) -> Small<'a> {
        let (hello, pretty) = (frames.hello.as_slice(), frames.pretty.as_slice());
        let (parsed, _) = Frame::parse_with(hello, &options(VerifyLevel::Full)).expect("docs-hello is valid");
        let canonical = parsed.identity().expect("identity").clone();
        assert!(canonical.is_canonical(), "docs-hello identity must be canonical");
        let (pretty_frame, _) =
            Frame::parse_with(pretty, &options(VerifyLevel::Full)).expect("noncanonical-pretty is valid");
        let noncanonical = pretty_frame.identity().expect("identity").clone();
        assert!(!noncanonical.is_canonical(), "noncanonical-pretty identity must not be canonical");
        assert_eq!(canonical.fingerprint(), noncanonical.fingerprint());
        let identity_json = parsed.identity_json();
        println!(
            "fixtures: docs-hello {} bytes (identity {} bytes), noncanonical-pretty {} bytes; {}",
            hello.len(),
            identity_json.len(),
            pretty.len(),
            frames.source
        );
        Small { hello, identity_json, canonical, noncanonical }
    }
}

const LEVELS: [(&str, VerifyLevel); 4] = [
    ("parse_layout", VerifyLevel::Layout),
    ("parse_identity", VerifyLevel::Identity),
    ("parse_trailer", VerifyLevel::Trailer),
    ("parse_full", VerifyLevel::Full),
];

/// The small benchmarks under Criterion, with wall-clock or thread CPU time.
fn bench_small<M: Measurement>(c: &mut Criterion<M>, group_name: &str, small: &Small<'_>) {
    let Small { hello, identity_json, canonical, noncanonical } = small;
    let mut group = c.benchmark_group(group_name);
    group.warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_millis(1500)).sample_size(50);
    // Baselines: copy the frame; hash the identity text.
    let mut copy = vec![0u8; hello.len()];
    group.bench_function("memcpy_frame", |b| b.iter(|| copy_frame(hello, &mut copy)));
    group.bench_function("sha2_identity", |b| b.iter(|| sha2_raw(identity_json)));
    for (name, level) in LEVELS {
        let opts = options(level);
        group.bench_function(name, |b| b.iter(|| parse(hello, &opts)));
    }
    group.bench_function("fingerprint_canonical", |b| b.iter(|| fingerprint(canonical)));
    group.bench_function("fingerprint_noncanonical", |b| b.iter(|| fingerprint(noncanonical)));
    group.finish();
}

fn pair_small(small: &Small<'_>, pairs: &mut PairedResults) {
    let Small { hello, identity_json, canonical, noncanonical } = small;
    let mut copy = vec![0u8; hello.len()];
    let (rounds, round) = (40, Duration::from_millis(2));
    for (name, level) in LEVELS {
        let opts = options(level);
        let result = if level == VerifyLevel::Layout {
            paired(|| parse(hello, &opts), || copy_frame(hello, &mut copy), rounds, round)
        } else {
            paired(|| parse(hello, &opts), || sha2_raw(identity_json), rounds, round)
        };
        pairs.insert(format!("{SMALL}/{name}"), result);
    }
    for (name, identity) in [("fingerprint_canonical", canonical), ("fingerprint_noncanonical", noncanonical)] {
        let result = paired(|| fingerprint(identity), || sha2_raw(identity_json), rounds, round);
        pairs.insert(format!("{SMALL}/{name}"), result);
    }
}

fn payload_group(len: usize) -> String {
    format!("payload_{}mib", len / MIB)
}

fn bench_payload(c: &mut Criterion, len: usize, pairs: Option<&mut PairedResults>) {
    let frame = big_frame(len);
    let (parsed, _) = Frame::parse_with(&frame, &options(VerifyLevel::Full)).expect("bench frame is valid");
    let payload = parsed.payload();
    assert_eq!(payload.len(), len);
    let big = len >= 16 * MIB;
    let mut head = vec![0u8; 4096];
    let mut identity_buf = vec![0u8; 64 * 1024];
    let levels = [("parse_trailer", VerifyLevel::Trailer), ("parse_full", VerifyLevel::Full)];

    let name = payload_group(len);
    let mut group = c.benchmark_group(name.as_str());
    group.throughput(Throughput::Bytes(len as u64));
    if big {
        group
            .sampling_mode(SamplingMode::Flat)
            .sample_size(10)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_millis(2500));
    } else {
        group.sample_size(30).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_millis(1500));
    }
    // The baseline: raw sha2 over the very payload bytes inside the frame.
    group.bench_function("sha2_raw", |b| b.iter(|| sha2_raw(payload)));
    for (id, level) in levels {
        let opts = options(level);
        group.bench_function(id, |b| b.iter(|| parse(&frame, &opts)));
    }
    group.bench_function("write_head_trailer", |b| b.iter(|| write_head_trailer(payload, &mut head)));
    if big {
        group.bench_function("stream_trailer_64k", |b| b.iter(|| stream_verify(&frame, &mut identity_buf)));
    }
    group.finish();

    let Some(pairs) = pairs else { return };
    let (rounds, round) = if big { (20, Duration::from_millis(30)) } else { (30, Duration::from_millis(4)) };
    for (id, level) in levels {
        let opts = options(level);
        let result = paired(|| parse(&frame, &opts), || sha2_raw(payload), rounds, round);
        pairs.insert(format!("{name}/{id}"), result);
    }
    let result = paired(|| write_head_trailer(payload, &mut head), || sha2_raw(payload), rounds, round);
    pairs.insert(format!("{name}/write_head_trailer"), result);
    if big {
        let result = paired(|| stream_verify(&frame, &mut identity_buf), || sha2_raw(payload), rounds, round);
        pairs.insert(format!("{name}/stream_trailer_64k"), result);
    }
}

// ---------------------------------------------------------------------------------------
// The report

/// Median time per iteration (ns) Criterion saved for `group/bench` in this run.
fn criterion_median(dir: &Path, group: &str, bench: &str, since: SystemTime) -> Option<f64> {
    let path = dir.join(group).join(bench).join("new").join("estimates.json");
    let modified = std::fs::metadata(&path).and_then(|m| m.modified()).ok()?;
    if modified < since {
        return None; // left over from an earlier run
    }
    let value: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).ok()?).ok()?;
    value["median"]["point_estimate"].as_f64()
}

#[derive(Clone, Copy)]
enum Rule {
    /// At most this many ns per iteration (Criterion median).
    AtMostNs(f64),
    /// Throughput at least this fraction of the baseline's (paired median ratio).
    AtLeastRatio(f64),
    /// Reported, not judged.
    Info,
}

struct Row {
    what: String,
    group: String,
    bench: &'static str,
    baseline: &'static str,
    rule: Rule,
    /// On the project's acceptance list (PASS/MISS) or an extra (meets/below).
    acceptance: bool,
}

fn rows(sizes: &[usize]) -> Vec<Row> {
    let row = |what: &str, group: &str, bench, baseline, rule, acceptance| Row {
        what: what.to_string(),
        group: group.to_string(),
        bench,
        baseline,
        rule,
        acceptance,
    };
    let mut rows = vec![
        row("layout parse, docs-hello", SMALL, "parse_layout", "memcpy_frame", Rule::AtMostNs(20.0), true),
        row("identity parse, docs-hello", SMALL, "parse_identity", "sha2_identity", Rule::AtMostNs(300.0), true),
        row("trailer parse, docs-hello", SMALL, "parse_trailer", "sha2_identity", Rule::Info, false),
        row("full parse, docs-hello", SMALL, "parse_full", "sha2_identity", Rule::Info, false),
        row("fingerprint, canonical", SMALL, "fingerprint_canonical", "sha2_identity", Rule::Info, false),
        row("fingerprint, non-canonical", SMALL, "fingerprint_noncanonical", "sha2_identity", Rule::Info, false),
    ];
    for &len in sizes {
        let group = payload_group(len);
        let size = format!("{} MiB", len / MIB);
        let ratio = Rule::AtLeastRatio(0.95);
        rows.push(row(&format!("trailer parse, {size}"), &group, "parse_trailer", "sha2_raw", ratio, true));
        rows.push(row(&format!("head+trailer write, {size}"), &group, "write_head_trailer", "sha2_raw", ratio, true));
        rows.push(row(&format!("full parse, {size}"), &group, "parse_full", "sha2_raw", ratio, false));
        if len >= 16 * MIB {
            let what = format!("stream verify, 64 KiB chunks, {size}");
            rows.push(row(&what, &group, "stream_trailer_64k", "sha2_raw", ratio, false));
        }
    }
    rows
}

fn fmt_ns(ns: Option<f64>) -> String {
    match ns {
        None => "-".to_string(),
        Some(ns) if ns >= 1e6 => format!("{:.2} ms", ns / 1e6),
        Some(ns) if ns >= 1e3 => format!("{:.1} us", ns / 1e3),
        Some(ns) => format!("{ns:.1} ns"),
    }
}

fn fmt_ratio(ratio: Option<f64>) -> String {
    ratio.map_or("-".to_string(), |r| format!("{r:.3}x"))
}

fn report(dir: &Path, since: SystemTime, sizes: &[usize], pairs: &PairedResults) {
    let line = "=".repeat(120);
    println!("\n{line}");
    println!("membrane-frame performance targets, each against a baseline measured in this run");
    println!("  wall  = Criterion median wall-clock time per iteration");
    println!("  cpu   = Criterion median thread CPU time per iteration (small benchmarks)");
    println!("  base  = the baseline's median on the clock the verdict uses (cpu for ns targets, wall otherwise)");
    println!("  ratio = ns rows: target time / baseline time; throughput rows: baseline time / target time");
    println!("          (= target throughput / raw sha2 throughput), from the Criterion medians");
    println!("  paired = the same ratio as the median of alternating wall-clock rounds (target, baseline, ...)");
    println!("  Verdicts: ns targets on cpu, throughput targets on paired (see docs/performance.md).");
    println!("{line}");
    println!(
        "{:<36} {:>10} {:>10} {:<14} {:>10} {:>8} {:>8}  {:<9} verdict",
        "benchmark", "wall", "cpu", "baseline", "base", "ratio", "paired", "target"
    );
    let (mut pass, mut miss, mut absent) = (0, 0, 0);
    for r in rows(sizes) {
        let wall = criterion_median(dir, &r.group, r.bench, since);
        let cpu_group = if r.group == SMALL { Some(SMALL_CPU) } else { None };
        let cpu = cpu_group.and_then(|g| criterion_median(dir, g, r.bench, since));
        let pair = pairs.get(&format!("{}/{}", r.group, r.bench));
        let (value, base, ratio, paired_ratio) = match r.rule {
            Rule::AtLeastRatio(_) => {
                let base = criterion_median(dir, &r.group, r.baseline, since);
                (wall, base, wall.zip(base).map(|(t, b)| b / t), pair.map(Paired::throughput_ratio))
            }
            _ => {
                let base = cpu_group.and_then(|g| criterion_median(dir, g, r.baseline, since));
                (cpu, base, cpu.zip(base).map(|(t, b)| t / b), pair.map(Paired::time_ratio))
            }
        };
        let (target, judged) = match r.rule {
            Rule::AtMostNs(limit) => (format!("<= {limit} ns"), value.map(|t| t <= limit)),
            Rule::AtLeastRatio(min) => (format!(">= {min}x"), paired_ratio.map(|p| p >= min)),
            Rule::Info => (String::new(), None),
        };
        let mut verdict = match (r.acceptance, judged) {
            (_, None) if !matches!(r.rule, Rule::Info) => {
                absent += 1;
                "NOT MEASURED in this run".to_string()
            }
            (true, Some(true)) => {
                pass += 1;
                "PASS".to_string()
            }
            (true, Some(false)) => {
                miss += 1;
                "MISS".to_string()
            }
            (false, Some(true)) => "extra: meets".to_string(),
            (false, Some(false)) => "extra: below".to_string(),
            (_, None) => "info".to_string(),
        };
        if let (Rule::AtMostNs(limit), Some(wall)) = (r.rule, wall) {
            if wall > limit {
                verdict.push_str(&format!(" (wall-clock median {} over the limit)", fmt_ns(Some(wall))));
            }
        }
        println!(
            "{:<36} {:>10} {:>10} {:<14} {:>10} {:>8} {:>8}  {:<9} {}",
            r.what,
            fmt_ns(wall),
            fmt_ns(cpu),
            r.baseline,
            fmt_ns(base),
            fmt_ratio(ratio),
            fmt_ratio(paired_ratio),
            target,
            verdict
        );
    }
    println!("{}", "-".repeat(120));
    println!("acceptance targets: {pass} PASS, {miss} MISS, {absent} not measured in this run");
    if pairs.is_empty() {
        println!("(paired checks not run: a benchmark filter, --test or --profile-time was given)");
    }
    if thread_cpu_time().is_none() {
        println!("(no per-thread CPU clock on this platform: the ns targets cannot be judged)");
    }
    println!("load average at the end: {}", std::fs::read_to_string("/proc/loadavg").unwrap_or_default().trim());
    println!("{line}");
}

fn main() {
    let since = SystemTime::now() - Duration::from_secs(1);
    let dir = criterion_dir();
    let full = full_run();
    println!("machine: {}", machine_summary());
    let mut c = Criterion::default().nresamples(20_000).output_directory(&dir).configure_from_args();
    let mut pairs = PairedResults::new();

    let frames = load_small_frames();
    let small = Small::new(&frames);
    bench_small(&mut c, SMALL, &small);
    if thread_cpu_time().is_some() {
        let mut cpu = Criterion::default()
            .with_measurement(ThreadCpuTime)
            .nresamples(20_000)
            .output_directory(&dir)
            .configure_from_args();
        bench_small(&mut cpu, SMALL_CPU, &small);
    }
    if full {
        pair_small(&small, &mut pairs);
    }
    let sizes = [MIB, 64 * MIB];
    for len in sizes {
        bench_payload(&mut c, len, full.then_some(&mut pairs));
    }
    c.final_summary();
    if std::env::args().all(|a| a != "--test" && a != "--list") {
        report(&dir, since, &sizes, &pairs);
    }
}
