//! The batch frame verifier (`frame::verify_batch`: payloads hashed several at a time by
//! the multi-buffer kernel, lanes refilled out of step) on batches cut from arbitrary
//! bytes: every frame's verdict must be exactly the one-frame reader's, at every level
//! and in both modes, verdicts must come once each and in order, and nothing panics.
//! The same frames then stream through `frame::StreamBatch` (fed in chunks whose lengths
//! come from the input, so lanes run out of step): after every chunk and at the end each
//! must be exactly what the one-frame `StreamVerifier` says.
//!
//! Input: a control byte (batch size, level, mode), then elements. Each element is
//! either raw bytes (any length the input says) or a frame written around a payload cut
//! from the input, then possibly damaged at a chosen byte — so that the trailer and full
//! levels, where the batch hasher runs, are reached as often as refusals are.
#![no_main]

use libfuzzer_sys::fuzz_target;
use membrane_frame::batch_hash::LANES;
use membrane_frame::frame::{verify_batch, StreamBatch};
use membrane_frame::{encode_frame, Frame, ParseMode, PayloadIdentity, ReadOptions, StreamVerifier, VerifyLevel};

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
    streamed(&views, options, data);
});

/// Every frame through a `StreamBatch` and through its own `StreamVerifier`, chunk by
/// chunk, lanes refilled as their frames end; chunk lengths cycle through the bytes of
/// `lengths` (1 to 2 KiB each).
fn streamed(frames: &[&[u8]], options: ReadOptions, lengths: &[u8]) {
    let lengths: Vec<usize> = lengths.iter().map(|&b| usize::from(b) * 8 + 1).chain([4096]).collect();
    let mut buffers = [[0u8; 2048]; LANES];
    let [a, b, c] = &mut buffers;
    let mut batch = StreamBatch::new([a, b, c]);
    let mut single_buffer = [0u8; 2048];
    // Per lane: the frame, its bytes fed so far, its statuses one by one.
    let mut lanes: [Option<(usize, usize)>; LANES] = [None; LANES];
    let mut expected_statuses: Vec<Vec<_>> = vec![Vec::new(); frames.len()];
    let mut got_statuses: Vec<Vec<_>> = vec![Vec::new(); frames.len()];
    let (mut next, mut turn) = (0, 0);
    loop {
        for (lane, slot) in lanes.iter_mut().enumerate() {
            if slot.is_none() && next < frames.len() {
                batch.start(lane, options).expect("a free lane");
                *slot = Some((next, 0));
                next += 1;
            }
        }
        if lanes.iter().all(Option::is_none) {
            break;
        }
        for (lane, slot) in lanes.iter_mut().enumerate() {
            if let Some((index, _)) = slot.take_if(|(index, fed)| *fed == frames[*index].len()) {
                // The one-frame verifier over the same chunks, from the recorded lengths.
                let mut single = StreamVerifier::new(options, &mut single_buffer);
                let mut at = 0;
                for (len, _) in &got_statuses[index] {
                    expected_statuses[index].push((*len, single.feed(&frames[index][at..at + len])));
                    at += len;
                }
                assert_eq!(got_statuses[index], expected_statuses[index], "the statuses of streamed frame {index}");
                assert_eq!(batch.finish(lane), single.finish(), "streamed frame {index}");
            }
        }
        let mut chunks: [&[u8]; LANES] = [&[]; LANES];
        let mut fed_to: [Option<usize>; LANES] = [None; LANES];
        for ((slot, chunk), fed_to) in lanes.iter_mut().zip(chunks.iter_mut()).zip(fed_to.iter_mut()) {
            if let Some((index, fed)) = slot {
                let end = (*fed + lengths[turn % lengths.len()]).min(frames[*index].len());
                *chunk = &frames[*index][*fed..end];
                *fed = end;
                *fed_to = Some(*index);
                turn += 1;
            }
        }
        let statuses = batch.feed(chunks);
        for ((status, fed_to), chunk) in statuses.into_iter().zip(fed_to).zip(chunks) {
            match (status, fed_to) {
                (Some(status), Some(index)) => got_statuses[index].push((chunk.len(), status)),
                (None, None) => {}
                (status, _) => panic!("a status for a free lane, or none for a busy one: {status:?}"),
            }
        }
    }
}
