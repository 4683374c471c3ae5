//! What aligning the payload costs (SPEC §1.5), each case timed against its unpadded
//! twin in the same run (docs/performance.md):
//!
//! ```text
//! CARGO_TARGET_DIR=/work/target-bench cargo bench --bench aligned
//! ```
//!
//! * writing the head aligned to 64 and to 4096 bytes against writing it unaligned;
//! * reading a padded frame at the identity level against the canonical frame it was
//!   padded from (acceptance: within 5% for the 64-byte alignment, the padding a cache
//!   line or SIMD load needs; the 4096-byte alignment, ~3.8 KB of spaces for this
//!   identity, is reported);
//! * the fingerprint of a padded identity against the unpadded one.
//!
//! Each ratio is the median over alternating rounds (target, baseline, baseline,
//! target, ...), so both sides see the same load on a shared machine. The frames are
//! built from the docs-hello identity, so no vectors are needed.

mod support;

use membrane_frame::{
    encode_frame_with, Frame, FrameEncoder, PayloadAlignment, PayloadIdentity, ReadOptions, Sha256Digest, VerifyLevel,
    WriteOptions,
};
use std::hint::black_box;
use std::time::Duration;
use support::{kv_identity, machine_summary, paired, Paired};

const ROUNDS: usize = 81;
const ROUND: Duration = Duration::from_millis(4);

fn options(align: u32) -> WriteOptions {
    WriteOptions::new().aligned(PayloadAlignment::new(align, 0).expect("a power of two up to 4096"))
}

/// The frame for `payload` with its payload aligned to `align`.
fn frame(identity: &PayloadIdentity<'_>, payload: &[u8], align: u32) -> Vec<u8> {
    let mut out = vec![0u8; 8192 + payload.len()];
    let len = encode_frame_with(identity, payload, &mut out, &options(align)).expect("the frame fits");
    out.truncate(len);
    out
}

fn write_head(identity: &PayloadIdentity<'_>, options: &WriteOptions, head: &mut [u8]) -> usize {
    let encoder = FrameEncoder::with_options(black_box(identity), 5, options).expect("plans");
    encoder.write_head_into(head).expect("the head fits")
}

fn parse_identity(frame: &[u8]) -> usize {
    let options = ReadOptions::new().level(VerifyLevel::Identity);
    let (frame, _) = Frame::parse_with(black_box(frame), &options).expect("valid");
    frame.payload_offset() + frame.padding()
}

fn fingerprint(identity: &PayloadIdentity<'_>) -> Sha256Digest {
    black_box(identity).fingerprint()
}

struct Row {
    what: String,
    baseline: &'static str,
    result: Paired,
    /// The largest acceptable time ratio, for an acceptance row.
    limit: Option<f64>,
}

fn main() {
    if std::env::args().any(|a| a == "--test" || a == "--list") {
        return; // `cargo test --benches` and listing: nothing to check without measuring
    }
    println!("machine: {}", machine_summary());
    let payload = b"hello";
    let hex = Sha256Digest::of(payload).to_hex();
    let built = kv_identity(hex.as_str()).build().expect("the docs-hello identity is valid");
    let canonical = frame(&built, payload, 1);
    let padded_64 = frame(&built, payload, 64);
    let padded_4096 = frame(&built, payload, 4096);
    let read = |bytes| Frame::parse(bytes).expect("valid").identity().cloned().expect("identity");
    let (plain_identity, identity_64, identity_4096) = (read(&canonical), read(&padded_64), read(&padded_4096));
    println!(
        "frames: canonical identity {} bytes; padded to 64: {} spaces; padded to 4096: {} spaces",
        plain_identity.canonical_len(),
        identity_64.padding(),
        identity_4096.padding()
    );

    let mut head = vec![0u8; 8192];
    let unaligned = WriteOptions::new();
    let mut rows = Vec::new();
    for align in [64, 4096] {
        let aligned = options(align);
        let mut base_head = vec![0u8; 8192];
        rows.push(Row {
            what: format!("write head, align {align}"),
            baseline: "unaligned head",
            result: paired(
                || write_head(&built, &aligned, &mut head),
                || write_head(&built, &unaligned, &mut base_head),
                ROUNDS,
                ROUND,
            ),
            limit: None,
        });
    }
    for (align, padded, limit) in [(64, &padded_64, Some(1.05)), (4096, &padded_4096, None)] {
        rows.push(Row {
            what: format!("parse identity level, align {align}"),
            baseline: "canonical frame",
            result: paired(|| parse_identity(padded), || parse_identity(&canonical), ROUNDS, ROUND),
            limit,
        });
    }
    for (align, identity) in [(64, &identity_64), (4096, &identity_4096)] {
        rows.push(Row {
            what: format!("fingerprint, align {align}"),
            baseline: "unpadded identity",
            result: paired(|| fingerprint(identity), || fingerprint(&plain_identity), ROUNDS, ROUND),
            limit: None,
        });
    }

    let line = "=".repeat(100);
    println!("\n{line}");
    println!("the cost of aligned frames: time per call, target and baseline in alternating rounds ({ROUNDS})");
    println!("  ratio = median over rounds of target time / baseline time");
    println!("{line}");
    println!("{:<36} {:>10} {:<18} {:>10} {:>8}  verdict", "benchmark", "target", "baseline", "base", "ratio");
    let (mut pass, mut miss) = (0, 0);
    for row in &rows {
        let ratio = row.result.time_ratio();
        let verdict = match row.limit {
            Some(limit) if ratio <= limit => {
                pass += 1;
                format!("PASS (<= {limit}x)")
            }
            Some(limit) => {
                miss += 1;
                format!("MISS (<= {limit}x)")
            }
            None => "info".to_string(),
        };
        println!(
            "{:<36} {:>8.1}ns {:<18} {:>8.1}ns {:>7.3}x  {verdict}",
            row.what,
            support::median(row.result.target.clone()),
            row.baseline,
            support::median(row.result.baseline.clone()),
            ratio
        );
    }
    println!("{}", "-".repeat(100));
    println!("acceptance targets: {pass} PASS, {miss} MISS");
    println!("load average at the end: {}", std::fs::read_to_string("/proc/loadavg").unwrap_or_default().trim());
    println!("{line}");
}
