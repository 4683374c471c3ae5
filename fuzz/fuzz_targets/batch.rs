//! The batch frame verifier (`frame::verify_batch`: payloads hashed several at a time by
//! the multi-buffer kernel, lanes refilled out of step) on batches cut from arbitrary
//! bytes: every frame's verdict must be exactly the one-frame reader's, at every level
//! and in both modes, verdicts must come once each and in order, and nothing panics.
//!
//! Input: a control byte (batch size, level, mode), then elements. Each element is
//! either raw bytes (any length the input says) or a frame written around a payload cut
//! from the input, then possibly damaged at a chosen byte — so that the trailer and full
//! levels, where the batch hasher runs, are reached as often as refusals are.
#![no_main]

use libfuzzer_sys::fuzz_target;
use membrane_frame::frame::verify_batch;
use membrane_frame::{encode_frame, Frame, ParseMode, PayloadIdentity, ReadOptions, VerifyLevel};

/// Takes `n` bytes (fewer at the end of the input).
fn take<'a>(data: &mut &'a [u8], n: usize) -> &'a [u8] {
    let (head, rest) = data.split_at(n.min(data.len()));
    *data = rest;
    head
}

fn byte(data: &mut &[u8]) -> u8 {
    take(data, 1).first().copied().unwrap_or(0)
}

fuzz_target!(|input: &[u8]| {
    let mut data = input;
    let control = byte(&mut data);
    let level = VerifyLevel::ALL[usize::from(control & 3)];
    let mode = if control & 4 == 0 { ParseMode::Exact } else { ParseMode::Prefix };
    let count = usize::from(control >> 3) + 1; // 1..=32: more than one group of the verifier
    let example = membrane_frame::example_frame();
    let identity: PayloadIdentity<'_> = Frame::parse(&example).expect("the example frame is valid").identity().expect("parsed").clone();
    let mut frames: Vec<Vec<u8>> = Vec::new();
    for _ in 0..count {
        let kind = byte(&mut data);
        // Lengths up to ~64 KiB from two bytes, scaled so some cross many blocks.
        let len = usize::from(u16::from_le_bytes([byte(&mut data), byte(&mut data)])) % 4096 * (usize::from(kind >> 6) + 1);
        if kind & 1 == 0 {
            frames.push(take(&mut data, len).to_vec());
            continue;
        }
        let payload: Vec<u8> = take(&mut data, len).iter().copied().cycle().take(len * usize::from(kind >> 4 & 3)).collect();
        let mut frame = vec![0u8; payload.len() + 1024];
        let Ok(written) = encode_frame(&identity, &payload, &mut frame) else { continue };
        frame.truncate(written);
        if kind & 2 != 0 {
            let at = usize::from(u16::from_le_bytes([byte(&mut data), byte(&mut data)])) % frame.len();
            frame[at] ^= byte(&mut data) | 1;
        }
        if kind & 4 != 0 {
            frame.truncate(frame.len() - usize::from(byte(&mut data)).min(frame.len()));
        }
        if kind & 8 != 0 {
            frame.extend_from_slice(take(&mut data, 8));
        }
        frames.push(frame);
    }
    let views: Vec<&[u8]> = frames.iter().map(Vec::as_slice).collect();
    let options = ReadOptions::new().level(level).mode(mode);
    let mut seen = 0;
    verify_batch(&views, &options, |index, verdict| {
        assert_eq!(index, seen, "verdicts come once each, in order");
        seen += 1;
        assert_eq!(verdict, Frame::parse_with(views[index], &options), "frame {index} at {level:?}, {mode:?}");
    });
    assert_eq!(seen, views.len());
});
