//! Zero heap allocation on parse, verify, fingerprint and write (issue acceptance 5).
//!
//! A counting global allocator wraps the system one; every operation runs between two
//! readings of the counter. `harness = false`, so no test-runner thread allocates
//! concurrently.

mod common;

use membrane_frame::{
    encode_frame, ChunkedFrameWriter, Frame, FrameEncoder, ParseMode, PayloadIdentity, ReadOptions,
    SliceSink, StreamVerifier, VerifyLevel,
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
    // Inputs and output buffers are prepared before any counting starts.
    let cases = common::read_jsonl("frames.jsonl");
    let frames: Vec<(String, Vec<u8>)> = cases
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_string(),
                common::read_vector_file(c["file"].as_str().unwrap()),
            )
        })
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
                let _ = std::hint::black_box(Frame::parse_exact(bytes, &options));
                let _ = std::hint::black_box(Frame::parse_prefix(bytes, &options));
            });
            expect_none("parse", name, n);
            let n = allocations_in(|| {
                let mut verifier =
                    StreamVerifier::new(options, ParseMode::Exact, &mut identity_buf);
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
            let _ = std::hint::black_box(encoder.write_head(&mut out));
        });
        expect_none("encode", name, n);
        let n = allocations_in(|| {
            let sink = SliceSink::new(&mut out);
            let mut writer =
                ChunkedFrameWriter::begin(identity, frame.payload().len() as u64, sink).unwrap();
            for chunk in frame.payload().chunks(100) {
                writer.write_payload(chunk).unwrap();
            }
            let _ = std::hint::black_box(writer.finish().map(|(outcome, _)| outcome));
        });
        expect_none("chunked write", name, n);
    }
    // The counter must be live: prove it sees an allocation.
    let sanity = allocations_in(|| drop(std::hint::black_box(vec![1u8; 64])));
    assert!(sanity > 0, "the counting allocator is not counting");
    println!("no_alloc: {} passed, {} failed", checked - failed, failed);
    if failed > 0 {
        std::process::exit(1);
    }
}
