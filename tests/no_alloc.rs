//! Zero heap allocation on parse, verify, fingerprint and write (issue acceptance 5).
//!
//! A counting global allocator wraps the system one; every operation runs between two
//! readings of the counter. `harness = false`, so no test-runner thread allocates
//! concurrently.

mod common;

use membrane_frame::{
    encode_frame, ChunkedFrameWriter, Frame, FrameEncoder, ParseMode, PayloadIdentity, ReadOptions, SliceSink,
    StreamVerifier, VerifyLevel,
};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards every call to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::SeqCst);
        // SAFETY: same contract as our caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as our caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::SeqCst);
        // SAFETY: same contract as our caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Run `f` and return how many allocations it made.
fn allocations_in(f: impl FnOnce()) -> usize {
    let before = ALLOCATIONS.load(Ordering::SeqCst);
    f();
    ALLOCATIONS.load(Ordering::SeqCst) - before
}

fn main() {
    if !common::run_custom_harness("parse_verify_fingerprint_and_write_allocate_nothing") {
        return;
    }
    // Inputs and output buffers are prepared before any counting starts.
    let cases = common::read_jsonl("frames.jsonl");
    let frames: Vec<(String, Vec<u8>)> = cases
        .iter()
        .map(|c| (c["name"].as_str().unwrap().to_string(), common::read_vector_file(c["file"].as_str().unwrap())))
        .collect();
    let mut out = vec![0u8; 1 << 20];
    let mut identity_buf = vec![0u8; 64 * 1024];
    let (mut checked, mut failed) = (0usize, 0usize);
    let mut expect_none = |what: &str, name: &str, count: usize| {
        checked += 1;
        if count != 0 {
            failed += 1;
            eprintln!("FAIL: {what} of {name} made {count} allocations");
        }
    };

    for (name, bytes) in &frames {
        for level in VerifyLevel::ALL {
            let options = ReadOptions::new().level(level);
            let n = allocations_in(|| {
                let _ = std::hint::black_box(Frame::parse_with(bytes, &options));
                let _ = std::hint::black_box(Frame::parse_with(bytes, &options.mode(ParseMode::Prefix)));
            });
            expect_none("parse", name, n);
            let n = allocations_in(|| {
                let mut verifier = StreamVerifier::new(options, &mut identity_buf);
                for chunk in bytes.chunks(13) {
                    if verifier.feed(chunk).is_err() {
                        break;
                    }
                }
                let _ = std::hint::black_box(verifier.finish());
            });
            expect_none("streaming verify", name, n);
        }
        let Ok(frame) = Frame::parse(bytes) else {
            continue;
        };
        let identity: &PayloadIdentity = frame.identity().unwrap();
        let n = allocations_in(|| {
            std::hint::black_box(identity.fingerprint());
            std::hint::black_box(identity.is_canonical());
            let _ = std::hint::black_box(identity.write_canonical_into(&mut out));
        });
        expect_none("fingerprint and canonical write", name, n);
        let n = allocations_in(|| {
            let _ = std::hint::black_box(encode_frame(identity, frame.payload(), &mut out));
            let encoder = FrameEncoder::new(identity, frame.payload().len() as u64).unwrap();
            let _ = std::hint::black_box(encoder.write_head_into(&mut out));
        });
        expect_none("encode", name, n);
        let n = allocations_in(|| {
            let sink = SliceSink::new(&mut out);
            let mut writer = ChunkedFrameWriter::begin(identity, frame.payload().len() as u64, sink).unwrap();
            for chunk in frame.payload().chunks(100) {
                writer.write_payload(chunk).unwrap();
            }
            let _ = std::hint::black_box(writer.finish().map(|(outcome, _)| outcome));
        });
        expect_none("chunked write", name, n);
    }
    // Envelopes (SPEC §3), migration (SPEC §7), Python float repr and HLC.
    use membrane_frame::envelope::FragmentMessage;
    use membrane_frame::migrate::{migrate_envelope_into, migrate_frame_in_place, EnvelopeMigrationOptions};
    use membrane_frame::{pyfloat::PyFloat, Hlc};
    let envelopes: Vec<(String, String)> = common::read_jsonl("envelopes.jsonl")
        .iter()
        .map(|c| (c["name"].as_str().unwrap().to_string(), c["json"].as_str().unwrap().to_string()))
        .collect();
    for (name, text) in &envelopes {
        let n = allocations_in(|| {
            if let Ok(message) = std::hint::black_box(FragmentMessage::parse(text.as_bytes())) {
                let _ = std::hint::black_box(message.write_into(&mut out));
                std::hint::black_box(message.identity().fingerprint_compat());
                std::hint::black_box(message.is_canonical());
            }
        });
        expect_none("envelope parse and write", name, n);
    }
    for case in common::read_jsonl("migration_envelopes.jsonl") {
        let (name, text) = (case["name"].as_str().unwrap().to_string(), case["input"].as_str().unwrap().to_string());
        let n = allocations_in(|| {
            let options = EnvelopeMigrationOptions::new();
            let _ = std::hint::black_box(migrate_envelope_into(text.as_bytes(), &options, &mut out));
        });
        expect_none("envelope migration", &name, n);
    }
    for case in common::read_jsonl("migration_frames.jsonl") {
        let name = case["name"].as_str().unwrap().to_string();
        let mut legacy = common::read_vector_file(case["input"].as_str().unwrap());
        let n = allocations_in(|| {
            let _ = std::hint::black_box(migrate_frame_in_place(&mut legacy));
            let _ = std::hint::black_box(migrate_frame_in_place(&mut legacy));
        });
        expect_none("frame migration", &name, n);
    }
    let n = allocations_in(|| {
        for value in [0.0, 5e-324, 0.1, 1e16, f64::MAX, 1234567890123456.2] {
            std::hint::black_box(PyFloat::new(value));
        }
        let _ = std::hint::black_box(Hlc::pack(1, 2).and_then(|h| h.tick(3)).and_then(|h| h.merge(Hlc(9), 4)));
    });
    expect_none("float repr and hlc", "samples", n);
    // Cluster metadata (SPEC §5, §6): snapshots, gossip maps, op bodies, tables.
    {
        use membrane_frame::refcount::{RefCounts, RefSlot};
        use membrane_frame::snapshot::{check_epoch, Member, Snapshot};
        use membrane_frame::table::NodeSlot;
        use membrane_frame::tombstone::{GossipMap, OpDelete, OpTombstone, TombstoneSlot, TombstoneTable};
        let metadata = common::read_jsonl("metadata.jsonl");
        let mut slots = vec![TombstoneSlot::EMPTY; 4096];
        let mut other_slots = vec![TombstoneSlot::EMPTY; 64];
        let mut nodes = vec![NodeSlot::EMPTY; 16];
        let mut other_nodes = vec![NodeSlot::EMPTY; 16];
        for case in &metadata {
            let name = case["name"].as_str().unwrap();
            if case["kind"] == "snapshot" {
                let text = case["json"].as_str().unwrap().as_bytes();
                let n = allocations_in(|| {
                    if let Ok(snapshot) = std::hint::black_box(Snapshot::parse(text)) {
                        for member in snapshot.membership().iter() {
                            std::hint::black_box(member);
                        }
                        for entry in snapshot.primary_map().iter() {
                            std::hint::black_box(entry);
                        }
                        for (hash, replicas) in snapshot.replica_map().iter() {
                            std::hint::black_box((hash, replicas.iter().count()));
                        }
                        let _ = std::hint::black_box(snapshot.write_into(&mut out));
                        std::hint::black_box(snapshot.is_canonical());
                    }
                    let _ = std::hint::black_box(Snapshot::parse_guarded(text, 5));
                });
                expect_none("snapshot parse, iterate and write", name, n);
            } else {
                let (a, b) = (case["a"].as_str().unwrap().as_bytes(), case["b"].as_str().unwrap().as_bytes());
                let now = case["now"].as_f64().unwrap();
                let n = allocations_in(|| {
                    if let Ok(map) = std::hint::black_box(GossipMap::parse(b)) {
                        std::hint::black_box(map.iter().count());
                    }
                    let mut table = TombstoneTable::new(&mut slots, &mut nodes);
                    let _ = table.merge_gossip(a, now);
                    let _ = table.merge_gossip(b, now);
                    let _ = std::hint::black_box(table.write_gossip_into(now, &mut out));
                    let mut peer = TombstoneTable::new(&mut other_slots, &mut other_nodes);
                    let _ = peer.record_nodes("h1", now + 1.0, &["n1", "n2"]);
                    let _ = table.merge_from(&peer);
                    std::hint::black_box(table.is_active("h1", now));
                    table.sweep(now, |hash| {
                        std::hint::black_box(hash);
                    });
                });
                expect_none("gossip parse, merge, write and sweep", name, n);
            }
        }
        let mut ref_slots = vec![RefSlot::EMPTY; 8];
        let n = allocations_in(|| {
            let tombstone = br#"{"content_hash": "h\u00e9", "until": 10, "node_id": "n1"}"#;
            if let Ok(op) = OpTombstone::parse(tombstone) {
                let _ = std::hint::black_box(op.write_into(&mut out));
            }
            if let Ok(op) = OpDelete::parse(br#"{"content_hash": "h", "node_id": "n1", "tombstone_until": null}"#) {
                let _ = std::hint::black_box(op.write_into(&mut out));
                let mut table = TombstoneTable::new(&mut slots, &mut nodes);
                let _ = std::hint::black_box(table.apply_op_delete(&op, 100.0));
            }
            let mut refs = RefCounts::new(&mut ref_slots, &mut other_nodes);
            let _ = refs.acquire("h", "a");
            let _ = refs.acquire("h", "b");
            std::hint::black_box(refs.holders("h").count());
            std::hint::black_box(refs.release("h", "a"));
            std::hint::black_box(refs.forget("h"));
            let members = [Member::new("n1", "10.0.0.1", 1)];
            if let Ok(snapshot) = Snapshot::builder(1, 2.0).membership(&members).primary_map(&[("a", "n1")]).build() {
                let _ = std::hint::black_box(snapshot.write_into(&mut out));
            }
            let _ = std::hint::black_box(check_epoch(10, Some(8)));
        });
        expect_none("op bodies, ref counts, snapshot builder", "samples", n);
    }
    // The counter must be live: prove it sees an allocation.
    let sanity = allocations_in(|| drop(std::hint::black_box(vec![1u8; 64])));
    assert!(sanity > 0, "the counting allocator is not counting");
    println!("no_alloc: {} passed, {} failed", checked - failed, failed);
    if failed > 0 {
        std::process::exit(1);
    }
}
