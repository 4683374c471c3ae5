//! The batch frame verifier (`frame::verify_batch`, payloads hashed several at a time)
//! gives every frame exactly the one-frame reader's verdict: on every frame vector and
//! on damaged copies of them (bit flips, truncations, extensions), at every level, in
//! exact and prefix mode, whatever the batch's size and order.

mod common;

use common::{damaged_frames, vector_frames};
use membrane_frame::frame::verify_batch;
use membrane_frame::{Frame, ParseMode, ReadOptions, VerifyLevel};

const LEVELS: [VerifyLevel; 4] = [VerifyLevel::Layout, VerifyLevel::Identity, VerifyLevel::Trailer, VerifyLevel::Full];

fn assert_same_verdicts(frames: &[Vec<u8>], options: &ReadOptions) {
    let views: Vec<&[u8]> = frames.iter().map(Vec::as_slice).collect();
    let mut seen = 0;
    verify_batch(&views, options, |index, verdict| {
        assert_eq!(index, seen, "verdicts come in order");
        seen += 1;
        let expected = Frame::parse_with(views[index], options);
        assert_eq!(verdict, expected, "frame {index} at {:?}", options.level);
    });
    assert_eq!(seen, frames.len());
}

#[test]
fn the_batch_verifier_equals_the_one_frame_reader_on_every_vector_and_damaged_copy() {
    let frames = vector_frames();
    assert!(frames.len() >= 100, "frame vectors found: {}", frames.len());
    let damaged = damaged_frames(&frames);
    for level in LEVELS {
        for mode in [ParseMode::Exact, ParseMode::Prefix] {
            let options = ReadOptions::new().level(level).mode(mode);
            assert_same_verdicts(&frames, &options);
            assert_same_verdicts(&damaged, &options);
        }
    }
    // Batches of every size from 0 to 30 (groups fill and part-fill; lanes refill out of step).
    for size in 0..30 {
        let mixed: Vec<Vec<u8>> = frames.iter().chain(&damaged).skip(size * 3).take(size).cloned().collect();
        assert_same_verdicts(&mixed, &ReadOptions::new().level(VerifyLevel::Full));
    }
}

#[test]
fn large_frames_of_uneven_sizes_verify_as_one_by_one() {
    let base = membrane_frame::example_frame();
    let template = Frame::parse(&base).unwrap().identity().unwrap().clone();
    let mut frames = Vec::new();
    for (i, len) in [0usize, 1, 55, 56, 64, 65, 200_000, 1 << 20, 3_000_001, 119].into_iter().enumerate() {
        let payload: Vec<u8> = (0..len).map(|j| (j * 31 + i) as u8).collect();
        let mut out = vec![0u8; len + 4096];
        let written = membrane_frame::encode_frame(&template, &payload, &mut out).unwrap();
        out.truncate(written);
        if i % 3 == 1 && len > 0 {
            let middle = 22 + template.canonical_len() + len / 2;
            out[middle] ^= 0x40;
        }
        frames.push(out);
    }
    for level in LEVELS {
        assert_same_verdicts(&frames, &ReadOptions::new().level(level));
    }
}
