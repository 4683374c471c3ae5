//! The streaming verifier with fuzzer-chosen chunk boundaries must reach the same
//! verdict as the one-shot reader on the same bytes (SPEC §1.3).
//!
//! Input layout: byte 0 picks the level (bits 0–1), the mode (bit 2) and the identity
//! buffer (bits 3–7: 0 is 64 KiB, n is n × 64 bytes); bytes 1..=4 are chunk sizes, used
//! in turn (0 = an empty chunk); the rest is the stream. A buffer smaller than the
//! identity is the one verdict the one-shot reader cannot give (it needs no buffer):
//! it must come only for a frame whose whole head arrived.
#![no_main]

use libfuzzer_sys::fuzz_target;
use membrane_frame::{ErrorCode, Frame, ParseMode, ReadOptions, StreamStatus, StreamVerifier, VerifyLevel};

fuzz_target!(|data: &[u8]| {
    let Some((&[config, a, b, c, d], bytes)) = data.split_first_chunk::<5>() else {
        return;
    };
    let level = VerifyLevel::from_number(u32::from(config & 3)).unwrap_or_default();
    let mode = if config & 4 == 0 { ParseMode::Exact } else { ParseMode::Prefix };
    let options = ReadOptions::new().level(level);
    let sizes = if [a, b, c, d] == [0; 4] { [255; 4] } else { [a, b, c, d] };

    let capacity = match config >> 3 {
        0 => 64 * 1024,
        n => usize::from(n) * 64,
    };
    let mut identity = vec![0u8; capacity];
    let mut verifier = StreamVerifier::new(options.mode(mode), &mut identity);
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
    let one_shot = Frame::parse_with(bytes, &options.mode(mode));
    match (&streamed, &one_shot) {
        (Err(s), _) if s.code() == ErrorCode::BufferTooSmall => {
            let declared = u32::from_le_bytes(bytes[10..14].try_into().unwrap()) as usize;
            assert!(declared > capacity, "buffer_too_small for a {declared}-byte identity in {capacity} bytes");
            assert!(bytes.len() >= 22 + declared, "buffer_too_small before the head was complete");
            if let Err(o) = &one_shot {
                let before_the_identity = [
                    ErrorCode::TooShort,
                    ErrorCode::BadMagic,
                    ErrorCode::LegacyFrame,
                    ErrorCode::SchemaMismatch,
                    ErrorCode::ReservedNonzero,
                    ErrorCode::IdentityOverrun,
                    ErrorCode::IdentityTooLarge,
                ];
                assert!(!before_the_identity.contains(&o.code()), "streamed buffer_too_small vs one-shot {o}");
            }
        }
        (Ok(len), Ok((frame, _))) => {
            assert_eq!(*len, frame.len() as u64);
            assert_eq!(streamed_len, Some(frame.len()));
        }
        (Err(s), Err(o)) => assert_eq!(s.code(), o.code(), "streamed {s} vs one-shot {o}"),
        _ => panic!("streamed {streamed:?} vs one-shot {one_shot:?}"),
    }
});
