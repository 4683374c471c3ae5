//! Envelope parsing (SPEC §3) next to `serde_json` in the same run (docs/performance.md).
//!
//! ```text
//! CARGO_TARGET_DIR=/work/target-bench cargo bench --bench envelope
//! ```
//!
//! Target: `FragmentMessage::parse` of the docs-style envelope (the `docs-hello` identity
//! in a v5 envelope, about 520 bytes) at least 2× faster than `serde_json` parsing the
//! same text into a struct, with zero allocations. Two `serde_json` baselines, both
//! `#[derive(Deserialize)]` structs of the envelope's fields: one of owned `String`s (what
//! a consumer usually writes) and one that borrows its strings from the text (serde's
//! zero-copy best case; it cannot take a string with escapes). Our parse does more than
//! either: strict JSON (duplicate keys, depth), every field rule of SPEC §2.2 and §3.1.
//!
//! How it measures: Criterion for each of the three (wall clock, and thread CPU time
//! where the platform has it), then a paired check that times ours and a baseline in
//! alternating rounds and takes the median of the per-round ratios (adjacent rounds see
//! the same machine load). The allocation count comes from a counting global allocator
//! switched on around a batch of calls.
//!
//! The envelope: `envelopes.jsonl` case `env-ok-unknown-key` (the docs-style envelope
//! with one unknown key), re-emitted in its SPEC §3.2 form (which drops the unknown key).
//! That is the form writers store, and `FragmentMessage::parse` reads it in one direct
//! pass. Any other spelling goes through the general reader; for the record, the bench
//! also times the vector as stored (the unknown key sends it there) against `serde_json`
//! on the same text (no target).
//! Vectors: `$MEMBRANE_VECTORS`, else `../shared/vectors`; without them the bench says so
//! loudly and builds the same envelope with the crate's builder (and the other spelling
//! by adding the same unknown key).

mod support;

#[path = "support/respell.rs"]
mod respell;

use criterion::measurement::Measurement;
use criterion::Criterion;
use membrane_frame::snapshot::Snapshot;
use membrane_frame::{FragmentMessage, Frame, PayloadIdentity};
use respell::{respell, Spelling};
use serde::Deserialize;
use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::HashMap;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;
use support::{
    criterion_dir, full_run, kv_identity, machine_summary, median, paired, thread_cpu_time, vectors_dir, ThreadCpuTime,
};

// ---------------------------------------------------------------------------------------
// Allocation counting

/// The system allocator, counting allocations while `COUNTING` is on.
struct CountingAllocator;

static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded unchanged to `System`, which upholds the contract;
// the counter only observes.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: forwarded with the caller's layout.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: forwarded unchanged.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

/// Allocations per call of `f`, over `calls` calls.
fn allocations_per_call<T>(calls: usize, mut f: impl FnMut() -> T) -> f64 {
    ALLOCATIONS.store(0, Ordering::Relaxed);
    COUNTING.store(true, Ordering::Relaxed);
    for _ in 0..calls {
        black_box(f());
    }
    COUNTING.store(false, Ordering::Relaxed);
    ALLOCATIONS.load(Ordering::Relaxed) as f64 / calls as f64
}

// ---------------------------------------------------------------------------------------
// The three parsers

#[derive(Deserialize)]
#[allow(dead_code)] // read by serde, then only black-boxed
struct OwnedIdentity {
    payload_hash: String,
    model_id: String,
    model_revision: String,
    tokenizer_name: String,
    tokenizer_revision: String,
    layer_range: [i64; 2],
    head_range: [i64; 2],
    token_span: [i64; 2],
    dtype: String,
    shape: Vec<i64>,
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct OwnedEnvelope {
    schema_version: i64,
    tenant_id: String,
    identity: OwnedIdentity,
    payload_ref: Option<String>,
    payload_size: u64,
    ttl: f64,
    reuse_score: f64,
    version_id: u64,
    consistency: String,
    hlc: u64,
    fingerprint_compat: String,
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct BorrowedIdentity<'a> {
    payload_hash: &'a str,
    model_id: &'a str,
    model_revision: &'a str,
    tokenizer_name: &'a str,
    tokenizer_revision: &'a str,
    layer_range: [i64; 2],
    head_range: [i64; 2],
    token_span: [i64; 2],
    dtype: &'a str,
    shape: Vec<i64>,
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct BorrowedEnvelope<'a> {
    schema_version: i64,
    #[serde(borrow)]
    tenant_id: &'a str,
    #[serde(borrow)]
    identity: BorrowedIdentity<'a>,
    payload_ref: Option<&'a str>,
    payload_size: u64,
    ttl: f64,
    reuse_score: f64,
    version_id: u64,
    consistency: &'a str,
    hlc: u64,
    fingerprint_compat: &'a str,
}

fn ours(text: &[u8]) -> u64 {
    let message = FragmentMessage::parse(black_box(text)).expect("the bench envelope is valid");
    message.version_id() ^ message.payload_size()
}

fn serde_owned(text: &[u8]) -> u64 {
    let message: OwnedEnvelope = serde_json::from_slice(black_box(text)).expect("serde_json reads it");
    message.version_id ^ message.payload_size
}

fn serde_borrowed(text: &[u8]) -> u64 {
    let message: BorrowedEnvelope<'_> = serde_json::from_slice(black_box(text)).expect("serde_json reads it");
    message.version_id ^ message.payload_size
}

// ---------------------------------------------------------------------------------------
// The envelope

/// The docs-style envelope in its SPEC §3.2 form, the same envelope in another
/// spelling, and where they came from.
fn docs_envelope() -> (Vec<u8>, Vec<u8>, String) {
    let path = vectors_dir().join("envelopes.jsonl");
    let from_vectors = std::fs::read_to_string(&path).ok().and_then(|text| {
        text.lines().find_map(|line| {
            let case: serde_json::Value = serde_json::from_str(line).ok()?;
            (case["name"] == "env-ok-unknown-key").then(|| case["json"].as_str().map(str::to_owned))?
        })
    });
    if let Some(json) = from_vectors {
        let message = FragmentMessage::parse(json.as_bytes()).expect("the vector is valid");
        let written = reemit(&message);
        return (written, json.into_bytes(), format!("{} case env-ok-unknown-key", path.display()));
    }
    let bar = "!".repeat(78);
    eprintln!("\n{bar}\n!!! CONFORMANCE VECTORS NOT FOUND at {}", path.display());
    eprintln!("!!! the envelope is built with the crate's builder instead\n{bar}\n");
    let hash = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824";
    let identity = kv_identity(hash).build().expect("a valid identity");
    let message = FragmentMessage::builder("public", identity).ttl(60.0).reuse_score(0.5).build().expect("valid");
    let written = reemit(&message);
    let mut other = written[..written.len() - 1].to_vec();
    other.extend_from_slice(br#", "x-extra": {"a": [1]}}"#);
    (written, other, "built in code (vectors missing)".to_owned())
}

fn reemit(message: &FragmentMessage<'_>) -> Vec<u8> {
    let mut text = vec![0u8; message.encoded_len()];
    let written = message.write_into(&mut text).expect("sized by encoded_len");
    text.truncate(written);
    text
}

// ---------------------------------------------------------------------------------------

fn bench<M: Measurement>(c: &mut Criterion<M>, group: &str, text: &[u8], other: &[u8]) {
    let mut g = c.benchmark_group(group);
    g.bench_function("membrane_frame", |b| b.iter(|| ours(text)));
    g.bench_function("serde_json_owned", |b| b.iter(|| serde_owned(text)));
    g.bench_function("serde_json_borrowed", |b| b.iter(|| serde_borrowed(text)));
    g.bench_function("membrane_frame_other_spelling", |b| b.iter(|| ours(other)));
    g.bench_function("serde_json_owned_other_spelling", |b| b.iter(|| serde_owned(other)));
    g.finish();
}

fn main() {
    println!("machine: {}", machine_summary());
    let (text, other, source) = docs_envelope();
    println!("envelope: {} bytes in the to_bytes form, {} bytes as stored; from {source}", text.len(), other.len());
    // All read the same values before anything is timed.
    assert_eq!(ours(&text), serde_owned(&text));
    assert_eq!(ours(&text), serde_borrowed(&text));
    assert_eq!(ours(&other), serde_owned(&other));

    let dir = criterion_dir();
    let mut c = Criterion::default().output_directory(&dir).configure_from_args();
    bench(&mut c, "envelope", &text, &other);
    if thread_cpu_time().is_some() {
        let mut cpu = Criterion::default().with_measurement(ThreadCpuTime).output_directory(&dir).configure_from_args();
        bench(&mut cpu, "envelope_cpu", &text, &other);
    }
    c.final_summary();
    if !full_run() {
        return;
    }

    let allocations = [
        ("membrane_frame", allocations_per_call(1000, || ours(&text))),
        ("serde_json_owned", allocations_per_call(1000, || serde_owned(&text))),
        ("serde_json_borrowed", allocations_per_call(1000, || serde_borrowed(&text))),
    ];
    let (rounds, round) = (41, Duration::from_millis(25));
    let owned = paired(|| ours(&text), || serde_owned(&text), rounds, round);
    let borrowed = paired(|| ours(&text), || serde_borrowed(&text), rounds, round);
    let general = paired(|| ours(&other), || serde_owned(&other), rounds, round);

    let line = "=".repeat(96);
    println!(
        "\n{line}\nenvelope parse, {} bytes: paired check, {rounds} alternating rounds of ~{round:?} each",
        text.len()
    );
    println!("| parser | ns per parse (median round) | allocations per parse | membrane_frame speedup (paired median) | target | verdict |");
    println!("|---|---|---|---|---|---|");
    let ours_ns = median(owned.target.iter().chain(&borrowed.target).copied().collect());
    println!(
        "| membrane_frame `FragmentMessage::parse` | {ours_ns:.0} | {} | — | 0 allocations | {} |",
        allocations[0].1,
        verdict(allocations[0].1 == 0.0)
    );
    for (name, pair, allocs) in [
        ("serde_json, owned struct", &owned, allocations[1].1),
        ("serde_json, borrowed struct", &borrowed, allocations[2].1),
    ] {
        let speedup = pair.throughput_ratio();
        println!(
            "| {name} | {:.0} | {allocs} | {speedup:.2}x | >= 2x | {} |",
            median(pair.baseline.clone()),
            verdict(speedup >= 2.0)
        );
    }
    println!(
        "| for the record: membrane_frame on the other spelling ({} bytes, general reader) | {:.0} | {} | {:.2}x vs serde_json owned on the same text ({:.0} ns) | — | info |",
        other.len(),
        median(general.target.clone()),
        allocations_per_call(1000, || ours(&other)),
        general.throughput_ratio(),
        median(general.baseline.clone())
    );
    spelling_table(21, Duration::from_millis(40));
    pretty_identity_row();
    snapshot_row(9);
    println!("load average at the end: {}", std::fs::read_to_string("/proc/loadavg").unwrap_or_default().trim());
    println!("{line}");
}

// ---------------------------------------------------------------------------------------
// The general reader on other spellings (issue 16)

/// The accepted envelope vectors (`"expect": "ok"`), as stored.
fn accepted_envelopes() -> Vec<Vec<u8>> {
    let path = vectors_dir().join("envelopes.jsonl");
    let Ok(text) = std::fs::read_to_string(&path) else {
        let bar = "!".repeat(78);
        eprintln!("\n{bar}\n!!! CONFORMANCE VECTORS NOT FOUND at {}: no spelling table\n{bar}\n", path.display());
        return Vec::new();
    };
    text.lines()
        .filter_map(|line| {
            let case: serde_json::Value = serde_json::from_str(line).ok()?;
            (case["expect"] == "ok").then(|| case["json"].as_str().map(|json| json.as_bytes().to_vec()))?
        })
        .collect()
}

/// `FragmentMessage::parse` against `serde_json` (owned struct) over every accepted
/// envelope vector in each spelling: ns per envelope and the paired ratio.
fn spelling_table(rounds: usize, round: Duration) {
    let accepted = accepted_envelopes();
    if accepted.is_empty() {
        return;
    }
    println!(
        "\nevery accepted envelope vector ({} of them) in four spellings; paired, {rounds} rounds of ~{round:?}",
        accepted.len()
    );
    println!("| spelling | mean bytes | membrane_frame ns per envelope | allocations | serde_json owned ns per envelope | speedup (paired median) | target | verdict |");
    println!("|---|---|---|---|---|---|---|---|");
    for spelling in Spelling::ALL {
        let texts: Vec<Vec<u8>> =
            accepted.iter().map(|text| respell(text, spelling).expect("an accepted vector is strict JSON")).collect();
        for text in &texts {
            assert_eq!(ours(text), serde_owned(text), "{}", String::from_utf8_lossy(text));
        }
        let all_ours = || texts.iter().map(|text| ours(text)).fold(0, |a, b| a ^ b);
        let all_serde = || texts.iter().map(|text| serde_owned(text)).fold(0, |a, b| a ^ b);
        let allocations = allocations_per_call(100, all_ours) / texts.len() as f64;
        let pair = paired(all_ours, all_serde, rounds, round);
        let n = texts.len() as f64;
        let speedup = pair.throughput_ratio();
        println!(
            "| {} | {} | {:.0} | {allocations} | {:.0} | {speedup:.2}x | >= 2x, 0 allocations | {} |",
            spelling.name(),
            texts.iter().map(Vec::len).sum::<usize>() / texts.len(),
            median(pair.target.clone()) / n,
            median(pair.baseline.clone()) / n,
            verdict(speedup >= 2.0 && allocations == 0.0)
        );
    }
}

/// Thread CPU time per call of `f` (ns), the least of `rounds` batches of `calls`.
fn cpu_ns_per_call<T>(rounds: usize, calls: u32, mut f: impl FnMut() -> T) -> Option<f64> {
    let mut best = f64::INFINITY;
    for _ in 0..rounds {
        let start = thread_cpu_time()?;
        for _ in 0..calls {
            black_box(f());
        }
        best = best.min((thread_cpu_time()? - start).as_nanos() as f64 / f64::from(calls));
    }
    Some(best)
}

/// The pretty-printed docs-hello identity (`frames/noncanonical-pretty.bin`), parsed by
/// the identity reader's any-spelling pass (the canonical fast path declines it).
fn pretty_identity_row() {
    let path = vectors_dir().join("frames/noncanonical-pretty.bin");
    let Ok(frame) = std::fs::read(&path) else {
        eprintln!("!!! {} not found: no pretty identity row", path.display());
        return;
    };
    let parsed = Frame::parse(&frame).expect("the vector is valid");
    let json = parsed.identity_json().to_vec();
    let identity = PayloadIdentity::parse(&json).expect("valid");
    assert!(!identity.is_canonical());
    let parse = || PayloadIdentity::parse(black_box(&json)).map(|identity| identity.token_span().end).ok();
    let serde =
        || serde_json::from_slice::<OwnedIdentity>(black_box(&json)).map(|identity| identity.token_span[1]).ok();
    let (Some(ours_ns), Some(serde_ns)) = (cpu_ns_per_call(15, 20_000, parse), cpu_ns_per_call(15, 20_000, serde))
    else {
        eprintln!("!!! no thread CPU clock: no pretty identity row");
        return;
    };
    println!("\n| identity reader, pretty-printed docs-hello ({} bytes) | thread CPU ns per parse (least of 15 x 20 000) | target | verdict |", json.len());
    println!("|---|---|---|---|");
    println!(
        "| `PayloadIdentity::parse` (any-spelling pass) | {ours_ns:.0} | <= 400 ns | {} |",
        verdict(ours_ns <= 400.0)
    );
    println!("| serde_json into an owned struct, for the record | {serde_ns:.0} | — | info |");
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct OwnedMember {
    node_id: String,
    host: String,
    port: u16,
    cluster_epoch: Option<u64>,
    healthy: Option<bool>,
    suspect: Option<bool>,
    missed_heartbeats: Option<u64>,
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct OwnedShards {
    primary_map: HashMap<String, String>,
    replica_map: HashMap<String, Vec<String>>,
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct OwnedServer {
    request_count: u64,
    error_count: u64,
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct OwnedSnapshot {
    captured_at: f64,
    cluster_epoch: u64,
    membership: Vec<OwnedMember>,
    schema_version: i64,
    server: OwnedServer,
    shards: OwnedShards,
}

/// A snapshot of about `target` bytes in the writer's form (keys sorted, `", "` and
/// `": "`): 64 members, and maps from 64-hex content hashes to nodes.
fn big_snapshot(target: usize) -> Vec<u8> {
    let members: Vec<String> = (0..64)
        .map(|i| format!("{{\"cluster_epoch\": 17, \"healthy\": true, \"host\": \"10.0.{}.{}\", \"missed_heartbeats\": 0, \"node_id\": \"node-{i:03}\", \"port\": 8080, \"suspect\": false}}", i / 256, i % 256))
        .collect();
    // A primary and a replica entry take about 174 bytes together.
    let entries = target / 174;
    let hash = |i: usize| format!("{:016x}{:016x}{:016x}{:016x}", i, i.wrapping_mul(0x9E37_79B9), !i, i ^ 0x5555);
    let mut keys: Vec<String> = (0..entries).map(hash).collect();
    keys.sort();
    let primary: Vec<String> =
        keys.iter().enumerate().map(|(i, k)| format!("\"{k}\": \"node-{:03}\"", i % 64)).collect();
    let replica: Vec<String> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| format!("\"{k}\": [\"node-{:03}\", \"node-{:03}\"]", (i + 1) % 64, (i + 2) % 64))
        .collect();
    format!(
        "{{\"captured_at\": 1735600000.123, \"cluster_epoch\": 17, \"membership\": [{}], \"schema_version\": 5, \"server\": {{\"error_count\": 4, \"request_count\": 123}}, \"shards\": {{\"primary_map\": {{{}}}, \"replica_map\": {{{}}}}}}}",
        members.join(", "),
        primary.join(", "),
        replica.join(", ")
    )
    .into_bytes()
}

/// `Snapshot::parse` of a 10 MiB snapshot with large maps, beside serde_json.
fn snapshot_row(rounds: usize) {
    let text = big_snapshot(10 << 20);
    let snapshot = Snapshot::parse(&text).expect("the bench snapshot is valid");
    let entries = snapshot.primary_map().len();
    let owned: OwnedSnapshot = serde_json::from_slice(&text).expect("serde_json reads it");
    assert_eq!(owned.shards.primary_map.len(), entries);
    let ours = || Snapshot::parse(black_box(&text)).map(|s| s.primary_map().len()).ok();
    let serde = || serde_json::from_slice::<OwnedSnapshot>(black_box(&text)).map(|s| s.shards.primary_map.len()).ok();
    let pair = paired(ours, serde, rounds, Duration::from_millis(200));
    let gbs = |ns: f64| text.len() as f64 / ns;
    let (ours_ns, serde_ns) = (median(pair.target.clone()), median(pair.baseline.clone()));
    println!("\n| snapshot, {:.1} MiB, {entries} primary + {entries} replica entries | GB/s (median round) | target | verdict |", text.len() as f64 / 1048576.0);
    println!("|---|---|---|---|");
    println!("| `Snapshot::parse` | {:.2} | >= 1 GB/s | {} |", gbs(ours_ns), verdict(gbs(ours_ns) >= 1.0));
    println!(
        "| serde_json into an owned struct (HashMaps), same rounds | {:.2} ({:.2}x ours) | — | info |",
        gbs(serde_ns),
        pair.throughput_ratio()
    );
}

fn verdict(pass: bool) -> &'static str {
    if pass {
        "**PASS**"
    } else {
        "**MISS**"
    }
}
