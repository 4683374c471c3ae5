//! The streaming verifier with fuzzer-chosen chunk boundaries must reach the same
//! verdict as the one-shot reader on the same bytes (SPEC §1.3).
//!
//! Input layout: byte 0 picks the level (bits 0–1) and the mode (bit 2); bytes 1..=4 are
//! chunk sizes, used in turn (0 = an empty chunk); the rest is the stream.
#![no_main]

use libfuzzer_sys::fuzz_target;
use membrane_frame::{Frame, ParseMode, ReadOptions, StreamStatus, StreamVerifier, VerifyLevel};

fuzz_target!(|data: &[u8]| {
    let Some((&[config, a, b, c, d], bytes)) = data.split_first_chunk::<5>() else {
        return;
    };
    let level = VerifyLevel::from_number(u32::from(config & 3)).unwrap_or_default();
    let mode = if config & 4 == 0 { ParseMode::Exact } else { ParseMode::Prefix };
    let options = ReadOptions::new().level(level);
    let sizes = if [a, b, c, d] == [0; 4] { [255; 4] } else { [a, b, c, d] };

    let mut identity = vec![0u8; 64 * 1024];
    let mut verifier = StreamVerifier::new(options, mode, &mut identity);
    let mut fed = 0usize;
    let mut streamed_len = None;
    let mut early = None;
    for size in sizes.iter().cycle() {
        let end = (fed + usize::from(*size)).min(bytes.len());
        match verifier.feed(&bytes[fed..end]) {
            Ok(StreamStatus::Complete { consumed }) => {
                streamed_len = Some(fed + consumed);
                if mode == ParseMode::Prefix || end == bytes.len() {
                    break;
                }
            }
            Ok(StreamStatus::NeedMore(n)) => assert!(n > 0),
            Err(err) => {
                early = Some(err);
                break;
            }
        }
        fed = end;
        if fed == bytes.len() {
            break;
        }
    }
    let streamed = match early {
        Some(err) => Err(err),
        None => verifier.finish().map(|frame| frame.frame_len()),
    };
    let one_shot = Frame::parse_mode(bytes, &options, mode);
    match (&streamed, &one_shot) {
        (Ok(len), Ok((frame, _))) => {
            assert_eq!(*len, frame.len() as u64);
            assert_eq!(streamed_len, Some(frame.len()));
        }
        (Err(s), Err(o)) => assert_eq!(s.code(), o.code(), "streamed {s} vs one-shot {o}"),
        _ => panic!("streamed {streamed:?} vs one-shot {one_shot:?}"),
    }
});
