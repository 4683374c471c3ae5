//! The streamed batch verifier (`frame::StreamBatch`: several frames fed in chunks, their
//! payloads hashed side by side) gives every frame exactly the one-frame
//! `StreamVerifier`'s status after every chunk and its verdict at the end: on every frame
//! vector and damaged copies, at every level, in exact and prefix mode, with chunkings
//! that put the lanes out of step, on the detected kernel and on the forced portable one.

mod common;

use common::{damaged_frames, vector_frames};
use membrane_frame::batch_hash::{Kernel, LANES};
use membrane_frame::frame::StreamBatch;
use membrane_frame::{Error, Frame, ParseMode, ReadOptions, StreamStatus, StreamVerifier, StreamedFrame, VerifyLevel};

const LEVELS: [VerifyLevel; 4] = [VerifyLevel::Layout, VerifyLevel::Identity, VerifyLevel::Trailer, VerifyLevel::Full];
const IDENTITY_BUF: usize = 8192;

type Statuses = Vec<Result<StreamStatus, Error>>;
/// A frame in a lane: its index, its chunks, how many are fed, its statuses so far.
type InLane<'a> = (usize, Vec<&'a [u8]>, usize, Statuses);

/// The chunks frame `index` is fed in: lengths cycling through `pattern` from a phase
/// that depends on the frame, so lanes end their frames out of step.
fn chunks<'a>(frame: &'a [u8], index: usize, pattern: &[usize]) -> Vec<&'a [u8]> {
    let mut out = Vec::new();
    let mut at = 0;
    let mut turn = index;
    while at < frame.len() {
        let end = (at + pattern[turn % pattern.len()]).min(frame.len());
        out.push(&frame[at..end]);
        at = end;
        turn += 1;
    }
    out
}

/// The one-frame verifier's statuses and verdict for each frame.
fn one_by_one(frames: &[Vec<u8>], options: ReadOptions, pattern: &[usize]) -> Vec<(Statuses, Owned)> {
    let mut buffer = vec![0u8; IDENTITY_BUF];
    let mut out = Vec::new();
    for (index, frame) in frames.iter().enumerate() {
        let mut verifier = StreamVerifier::new(options, &mut buffer);
        let statuses = chunks(frame, index, pattern).into_iter().map(|chunk| verifier.feed(chunk)).collect();
        out.push((statuses, owned(verifier.finish())));
    }
    out
}

/// The same through a `StreamBatch`: a free lane takes the next frame, every busy lane
/// gets its next chunk each round, a lane whose chunks are all fed is finished (its
/// verdict kept as it would read once the lane's buffer is reused: copied out).
fn batched<const N: usize>(
    frames: &[Vec<u8>],
    options: ReadOptions,
    pattern: &[usize],
    kernel: Kernel,
) -> Vec<(Statuses, Owned)> {
    let mut buffers = vec![[0u8; IDENTITY_BUF]; N];
    let mut each = buffers.iter_mut();
    let identity_bufs: [&mut [u8]; N] = std::array::from_fn(|_| each.next().unwrap().as_mut_slice());
    let mut batch = StreamBatch::<N>::with_kernel(kernel, identity_bufs);
    let mut results: Vec<Option<(Statuses, Owned)>> = frames.iter().map(|_| None).collect();
    let mut lanes: [Option<InLane<'_>>; N] = std::array::from_fn(|_| None);
    let mut next = 0;
    loop {
        for (lane, slot) in lanes.iter_mut().enumerate() {
            if slot.is_none() && next < frames.len() {
                batch.start(lane, options).unwrap();
                *slot = Some((next, chunks(&frames[next], next, pattern), 0, Vec::new()));
                next += 1;
            }
        }
        if lanes.iter().all(Option::is_none) {
            break;
        }
        // A lane whose frame has no chunk left (or none at all: an empty file) is finished.
        for (lane, slot) in lanes.iter_mut().enumerate() {
            if let Some((index, _, _, statuses)) = slot.take_if(|(_, chunks, fed, _)| *fed == chunks.len()) {
                results[index] = Some((statuses, owned(batch.finish(lane))));
            }
        }
        let mut round: [&[u8]; N] = [&[]; N];
        for (slot, chunk) in lanes.iter_mut().zip(round.iter_mut()) {
            if let Some((_, chunks, fed, _)) = slot {
                *chunk = chunks[*fed];
                *fed += 1;
            }
        }
        let statuses = batch.feed(round);
        for (slot, status) in lanes.iter_mut().zip(statuses) {
            match (slot, status) {
                (Some((_, _, _, statuses)), Some(status)) => statuses.push(status),
                (None, None) => {}
                (slot, status) => panic!("a busy lane has a status, a free one none: {:?} {status:?}", slot.is_some()),
            }
        }
    }
    results.into_iter().map(Option::unwrap).collect()
}

/// A verdict with its borrowed parts copied: everything `StreamedFrame` tells.
type Owned = Result<
    (Option<Vec<u8>>, Option<String>, u64, u64, Option<membrane_frame::Sha256Digest>, [u8; 8], VerifyLevel, u64),
    Error,
>;

fn owned(verdict: Result<StreamedFrame<'_>, Error>) -> Owned {
    verdict.map(|frame| {
        (
            frame.identity_json().map(<[u8]>::to_vec),
            frame.identity().map(|identity| format!("{identity:?}")),
            frame.identity_len(),
            frame.payload_len(),
            frame.payload_digest(),
            frame.trailer(),
            frame.level(),
            frame.frame_len(),
        )
    })
}

/// Every kernel this CPU runs (the portable one everywhere).
fn kernels() -> Vec<Kernel> {
    let kernels: Vec<Kernel> = Kernel::on_this_cpu().collect();
    if kernels.len() == 1 {
        println!("NOTE: this CPU has no multi-buffer kernel: only the portable one was tested");
    }
    kernels
}

/// The batch, three lanes wide and sixteen, through every kernel, equals the one-frame
/// verifier on every frame.
fn assert_same(frames: &[Vec<u8>], options: ReadOptions, pattern: &[usize]) {
    let expected = one_by_one(frames, options, pattern);
    for kernel in kernels() {
        for (lanes, got) in [
            (LANES, batched::<LANES>(frames, options, pattern, kernel)),
            (16, batched::<16>(frames, options, pattern, kernel)),
        ] {
            for (index, (got, expected)) in got.iter().zip(&expected).enumerate() {
                assert_eq!(
                    got,
                    expected,
                    "frame {index} at {:?}, {:?}, chunks {pattern:?}, {}, {lanes} lanes",
                    options.level,
                    options.mode,
                    kernel.name()
                );
            }
        }
    }
}

#[test]
fn the_streamed_batch_equals_the_one_frame_verifier_on_every_vector_and_damaged_copy() {
    let frames = vector_frames();
    assert!(frames.len() >= 100, "frame vectors found: {}", frames.len());
    let damaged = damaged_frames(&frames);
    let patterns: [&[usize]; 3] = [&[4096], &[1, 63, 64, 200, 7], &[13, 1000]];
    for level in LEVELS {
        for mode in [ParseMode::Exact, ParseMode::Prefix] {
            let options = ReadOptions::new().level(level).mode(mode);
            for pattern in patterns {
                assert_same(&frames, options, pattern);
                assert_same(&damaged, options, pattern);
            }
        }
    }
}

#[test]
fn large_frames_of_uneven_sizes_stream_as_one_by_one() {
    let base = membrane_frame::example_frame();
    let template = Frame::parse(&base).unwrap().identity().unwrap().clone();
    let mut frames = Vec::new();
    for (i, len) in [0usize, 1, 55, 56, 64, 65, 200_000, 1 << 20, 3_000_001, 119, 0].into_iter().enumerate() {
        let payload: Vec<u8> = (0..len).map(|j| (j * 29 + i) as u8).collect();
        let mut out = vec![0u8; len + 4096];
        let written = membrane_frame::encode_frame(&template, &payload, &mut out).unwrap();
        out.truncate(written);
        if i % 3 == 1 && len > 0 {
            let middle = 22 + template.canonical_len() + len / 2;
            out[middle] ^= 0x40;
        }
        frames.push(out);
    }
    frames.push(Vec::new());
    for level in LEVELS {
        assert_same(&frames, ReadOptions::new().level(level), &[128 << 10, 50_000, 64]);
    }
}

#[test]
fn lanes_are_checked() {
    let mut buffers = [[0u8; 64]; LANES];
    let [a, b, c] = &mut buffers;
    let mut batch = StreamBatch::new([a, b, c]);
    let err = batch.finish(0).unwrap_err();
    assert_eq!((err.code(), err.field()), (membrane_frame::ErrorCode::InvalidState, Some("lane")));
    assert_eq!(batch.skip(1, 5).unwrap_err().code(), membrane_frame::ErrorCode::InvalidState);
    let err = batch.start(LANES, ReadOptions::new()).unwrap_err();
    assert_eq!((err.code(), err.field()), (membrane_frame::ErrorCode::InvalidArgument, Some("lane")));
    assert_eq!(batch.finish(LANES).unwrap_err().code(), membrane_frame::ErrorCode::InvalidArgument);
    assert_eq!(batch.skip(LANES, 5).unwrap_err().code(), membrane_frame::ErrorCode::InvalidArgument);
    assert!(batch.verifier(0).is_none() && batch.verifier(LANES).is_none());
    batch.start(0, ReadOptions::new()).unwrap();
    assert!(batch.verifier(0).is_some_and(|verifier| verifier.received() == 0));
    let err = batch.start(0, ReadOptions::new()).unwrap_err();
    assert_eq!(err.code(), membrane_frame::ErrorCode::InvalidState, "a busy lane is not restarted");
    // Free again once finished (an empty stream: too short).
    assert_eq!(batch.finish(0).unwrap_err().code(), membrane_frame::ErrorCode::TooShort);
    assert!(batch.start(0, ReadOptions::new()).is_ok());
}

#[test]
fn each_lane_keeps_its_identity_in_its_own_buffer() {
    let frame = membrane_frame::example_frame();
    let mut buffers = [[0u8; 4096]; LANES];
    let [a, b, c] = &mut buffers;
    let mut batch = StreamBatch::new([a, b, c]);
    for lane in 0..LANES {
        batch.start(lane, ReadOptions::new()).unwrap();
    }
    // The lanes read the frame out of step: lane 0 byte by byte, the others in halves.
    let half = frame.len() / 2;
    for at in 0..frame.len() {
        let rest: &[u8] = if at == 0 {
            &frame[..half]
        } else if at == 1 {
            &frame[half..]
        } else {
            &[]
        };
        batch.feed([&frame[at..at + 1], rest, rest]);
    }
    let expected = Frame::parse(&frame).unwrap().identity().unwrap().canonical_len() as u64;
    for lane in 0..LANES {
        let verified = batch.finish(lane).unwrap();
        assert_eq!(verified.identity_len(), expected);
        assert_eq!(verified.identity().unwrap().model_id().as_str(), Some("llama-3-8b"), "lane {lane}");
    }
    drop(batch);
    let start = membrane_frame::frame::HEADER_LEN;
    let identity_json = &frame[start..start + expected as usize];
    for buffer in &buffers {
        assert_eq!(&buffer[..identity_json.len()], identity_json);
    }
}

#[test]
fn skipping_below_the_trailer_level_is_the_one_frame_verifiers() {
    let frame = membrane_frame::example_frame();
    let head = frame.len() - 5 - 8;
    let options = ReadOptions::new().level(VerifyLevel::Identity);
    let mut buffers = [[0u8; 4096]; LANES];
    let [a, b, c] = &mut buffers;
    let mut batch = StreamBatch::new([a, b, c]);
    let mut single_buffer = [0u8; 4096];
    batch.start(2, options).unwrap();
    let mut single = StreamVerifier::new(options, &mut single_buffer);
    assert_eq!(batch.feed([&[], &[], &frame[..head]])[2], Some(single.feed(&frame[..head])));
    assert_eq!(batch.skip(2, 13), single.skip(13));
    assert_eq!(batch.verifier(2).map(StreamVerifier::hashed), Some(0));
    assert_eq!(owned(batch.finish(2)), owned(single.finish()));
    // At the trailer level skipping is refused, as one by one.
    let options = ReadOptions::new().level(VerifyLevel::Trailer);
    batch.start(2, options).unwrap();
    batch.feed([&[], &[], &frame[..head + 2]]);
    assert_eq!(batch.verifier(2).map(StreamVerifier::hashed), Some(2), "payload bytes count as hashed");
    assert_eq!(batch.skip(2, 11).unwrap_err().code(), membrane_frame::ErrorCode::InvalidState);
}
