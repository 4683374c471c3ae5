//! The batch frame verifier (`frame::verify_batch`, trailer level) and the batch hasher
//! under it (`batch_hash`) against single-stream `sha2` over the same payload bytes, in
//! paired rounds (A B, B A, ...; the median of the per-round ratios): 64 KiB, 1 MiB and
//! 16 MiB payloads, in batches large enough to leave the caches; the streamed batch
//! verifier (`frame::StreamBatch`) fed 128 KiB chunks, as `membrane-frame verify` reads
//! files; and the hasher on three 128 KiB messages that stay in cache, as the command's
//! read buffers do, with each SHA-NI width beside the one `Kernel::detect` chose.
//!
//! ```text
//! CARGO_TARGET_DIR=/work/target-bench cargo bench --bench batch_hash
//! ```
//!
//! Target (issue 13): >= 2.0x per core at each size.

mod support;

use membrane_frame::batch_hash::{hash_batch_with, Kernel, LANES};
use membrane_frame::frame::{verify_batch, StreamBatch};
use membrane_frame::{encode_frame, Frame, ReadOptions, Sha256Digest};
use sha2::{Digest, Sha256};
use std::hint::black_box;
use std::time::Duration;
use support::{machine_summary, paired};

/// One table row: sizes, both throughputs, the paired ratio and the verdict.
fn print_row(size: usize, count: usize, result: &support::Paired) {
    let bytes = (size * count) as f64;
    let gib = |nanoseconds: f64| bytes / nanoseconds * 1e9 / f64::from(1u32 << 30);
    let ratio = result.throughput_ratio();
    println!(
        "| {} KiB | {count} | {:.1} | {:.2} | {:.2} | {ratio:.2}x | >= 2.0x | {} |",
        size >> 10,
        bytes / f64::from(1u32 << 20),
        gib(support::median(result.target.clone())),
        gib(support::median(result.baseline.clone())),
        if ratio >= 2.0 { "PASS" } else { "MISS" }
    );
}

fn main() {
    println!("{}", machine_summary());
    println!("kernel: {}", Kernel::detect().name());
    println!();
    println!("| message size | messages | MiB | batch GiB/s | sha2 GiB/s | ratio (paired median) | target | verdict |");
    println!("|---|---|---|---|---|---|---|---|");
    for (size, count) in [(64usize << 10, 1536usize), (1 << 20, 96), (16 << 20, 16)] {
        hash_batch_row(Kernel::detect(), size, count, sha2_first_byte);
    }
    // The library reads a page ahead of every long hash (its `page_ahead` module); where
    // the machine stalls at untouched pages, that alone beats plain `sha2`. The same rows
    // against `sha2` reading ahead the same way show what interleaving adds.
    println!();
    println!("| message size | messages | MiB | batch GiB/s | sha2 reading ahead GiB/s | ratio (paired median) | target | verdict |");
    println!("|---|---|---|---|---|---|---|---|");
    for (size, count) in [(64usize << 10, 1536usize), (1 << 20, 96), (16 << 20, 16)] {
        hash_batch_row(Kernel::detect(), size, count, sha2_reading_ahead);
    }
    println!();
    println!(
        "| payload size | frames | MiB | verify_batch GiB/s | sha2 GiB/s | ratio (paired median) | target | verdict |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let example = membrane_frame::example_frame();
    let identity = Frame::parse(&example).unwrap().identity().unwrap().clone();
    for (size, count) in [(64usize << 10, 1536usize), (1 << 20, 96), (16 << 20, 16)] {
        let frames: Vec<Vec<u8>> = (0..count)
            .map(|i| {
                let payload = vec![(i * 5 + 3) as u8; size];
                let mut out = vec![0u8; size + 4096];
                let len = encode_frame(&identity, &payload, &mut out).unwrap();
                out.truncate(len);
                out
            })
            .collect();
        let views: Vec<&[u8]> = frames.iter().map(Vec::as_slice).collect();
        let payloads: Vec<&[u8]> = views.iter().map(|f| Frame::parse(f).unwrap().payload()).collect();
        let options = ReadOptions::new();
        let result = paired(
            || {
                let mut ok = 0usize;
                verify_batch(black_box(&views), &options, |_, verdict| ok += usize::from(verdict.is_ok()));
                assert_eq!(ok, count);
                ok
            },
            || payloads.iter().fold(0u8, |x, p| x ^ Sha256::digest(black_box(p))[0]),
            9,
            Duration::from_millis(400),
        );
        print_row(size, count, &result);
    }
    println!();
    println!(
        "| payload size | frames | MiB | StreamBatch GiB/s (128 KiB chunks, lanes as `verify`) | sha2 GiB/s | ratio (paired median) | target | verdict |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for (size, count) in [(64usize << 10, 1536usize), (1 << 20, 96), (16 << 20, 16)] {
        let frames: Vec<Vec<u8>> = (0..count)
            .map(|i| {
                let payload = vec![(i * 3 + 2) as u8; size];
                let mut out = vec![0u8; size + 4096];
                let len = encode_frame(&identity, &payload, &mut out).unwrap();
                out.truncate(len);
                out
            })
            .collect();
        let payloads: Vec<&[u8]> = frames.iter().map(|f| Frame::parse(f).unwrap().payload()).collect();
        assert_eq!(stream_all(&frames, 128 << 10), count);
        let result = paired(
            || stream_all(black_box(&frames), 128 << 10),
            || payloads.iter().fold(0u8, |x, p| x ^ Sha256::digest(black_box(p))[0]),
            9,
            Duration::from_millis(400),
        );
        print_row(size, count, &result);
    }
    // The kernel on data already in cache, as `membrane-frame verify` hashes its read
    // buffers: the batch's loss out of cache (above) is memory, not arithmetic.
    println!();
    println!("| in cache | messages | MiB | batch GiB/s | sha2 GiB/s | ratio (paired median) | target | verdict |");
    println!("|---|---|---|---|---|---|---|---|");
    hash_batch_row(Kernel::detect(), 128 << 10, Kernel::detect().in_flight(), sha2_first_byte);
    // Every kernel this CPU runs, so the run shows whether detection chose the fastest
    // (each on as many messages as it steps together, at least three).
    println!();
    println!(
        "| kernel | in cache | messages | MiB | batch GiB/s | sha2 GiB/s | ratio (paired median) | target | verdict |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for kernel in Kernel::on_this_cpu() {
        print!("| {} ", kernel.name());
        hash_batch_row(kernel, 128 << 10, kernel.in_flight(), sha2_first_byte);
    }
    // The portable path (what non-SHA-NI CPUs run) costs what sha2 does.
    let data = vec![3u8; 1 << 20];
    let messages = [data.as_slice(); 6];
    let mut digests = [Sha256Digest([0; 32]); 6];
    let result = paired(
        || hash_batch_with(Kernel::Portable, black_box(&messages), &mut digests).map(|()| digests[0]),
        || messages.iter().fold(0u8, |x, m| x ^ Sha256::digest(black_box(m))[0]),
        7,
        Duration::from_millis(300),
    );
    println!("\nportable kernel, 6 x 1 MiB: {:.2}x sha2 (expected ~1.0x)", result.throughput_ratio());
}

/// The first byte of `sha2`'s digest of `bytes`, hashed in one call.
fn sha2_first_byte(bytes: &[u8]) -> u8 {
    Sha256::digest(bytes)[0]
}

/// The same, hashed a page at a time after a load four pages ahead, as the library's
/// hashes read (`src/page_ahead.rs`).
fn sha2_reading_ahead(bytes: &[u8]) -> u8 {
    let mut hasher = Sha256::new();
    for (index, page) in bytes.chunks(4096).enumerate() {
        if let Some(&byte) = bytes.get(index * 4096 + (16 << 10)) {
            black_box(byte);
        }
        hasher.update(page);
    }
    hasher.finalize()[0]
}

/// One row of `hash_batch_with(kernel, ..)` against `baseline` (a `sha2` digest) on
/// `count` messages of `size` bytes (checked against `sha2` first).
fn hash_batch_row(kernel: Kernel, size: usize, count: usize, baseline: fn(&[u8]) -> u8) {
    let data: Vec<Vec<u8>> = (0..count).map(|i| vec![(i * 7 + 1) as u8; size]).collect();
    let messages: Vec<&[u8]> = data.iter().map(Vec::as_slice).collect();
    let mut digests = vec![Sha256Digest([0; 32]); count];
    hash_batch_with(kernel, &messages, &mut digests).unwrap();
    for (message, digest) in messages.iter().zip(&digests) {
        assert_eq!(digest.as_bytes()[..], Sha256::digest(message)[..], "the batch agrees with sha2");
    }
    let result = paired(
        || {
            hash_batch_with(kernel, black_box(&messages), &mut digests).unwrap();
            digests[0]
        },
        || messages.iter().fold(0u8, |x, m| x ^ baseline(black_box(m))),
        9,
        Duration::from_millis(400),
    );
    print_row(size, count, &result);
}

/// Verify every frame at the trailer level through a `StreamBatch`, `chunk_len` bytes a
/// frame a round, a lane refilled as its frame ends; returns how many verified.
fn stream_all(frames: &[Vec<u8>], chunk_len: usize) -> usize {
    // As many lanes as `membrane-frame verify` keeps files in flight.
    if Kernel::detect().in_flight() > LANES {
        stream_all_in::<16>(frames, chunk_len)
    } else {
        stream_all_in::<LANES>(frames, chunk_len)
    }
}

/// [`stream_all`] with `N` lanes.
fn stream_all_in<const N: usize>(frames: &[Vec<u8>], chunk_len: usize) -> usize {
    let mut buffers = [[0u8; 1024]; N];
    let mut each = buffers.iter_mut();
    let identity_bufs: [&mut [u8]; N] = std::array::from_fn(|_| each.next().unwrap().as_mut_slice());
    let mut batch = StreamBatch::<N>::new(identity_bufs);
    let options = ReadOptions::new();
    let (mut ok, mut next) = (0, 0);
    let mut lanes: [Option<&[u8]>; N] = [None; N];
    loop {
        for (lane, slot) in lanes.iter_mut().enumerate() {
            if slot.is_none() {
                if let Some(frame) = frames.get(next) {
                    batch.start(lane, options).unwrap();
                    *slot = Some(frame);
                    next += 1;
                }
            }
        }
        if lanes.iter().all(Option::is_none) {
            return ok;
        }
        let mut chunks: [&[u8]; N] = [&[]; N];
        for (slot, chunk) in lanes.iter_mut().zip(chunks.iter_mut()) {
            if let Some(rest) = slot {
                let (head, tail) = rest.split_at(rest.len().min(chunk_len));
                (*chunk, *rest) = (head, tail);
            }
        }
        batch.feed(black_box(chunks));
        for (lane, slot) in lanes.iter_mut().enumerate() {
            if slot.take_if(|rest| rest.is_empty()).is_some() {
                ok += usize::from(batch.finish(lane).is_ok());
            }
        }
    }
}
