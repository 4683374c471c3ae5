//! Inputs found by the cargo-fuzz targets (fuzz/), kept as regression tests
//! (docs/reliability.md lists each finding and what it was).

use membrane_frame::{ErrorCode, Frame, ParseMode, ReadOptions, VerifyLevel};

/// A frame with an empty identity (`identity_len` 0) and payload `hello`, followed by
/// a second copy of itself. Found by the `frame` target on its first run: the target
/// assumed that a lower level's error is repeated by every higher level, but the
/// layout level skips checks 8–9 and so stops at check 11 (`trailing_bytes`), while the
/// identity level stops earlier, at check 8 (`identity_json`: an empty text). That is
/// the SPEC's check order, not a library bug; the target now allows exactly this case,
/// and this test pins the verdicts it relies on.
#[test]
fn identity_checks_precede_length_checks_only_at_the_identity_level() {
    let one: &[u8] = &[
        0xC0, 0xDE, 0x01, 0x05, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, b'h', b'e', b'l', b'l', b'o', 0x2C, 0xF2, 0x4D, 0xBA, 0x5F, 0xB0, 0xA3, 0x0E,
    ];
    let two = [one, one].concat();
    let code = |bytes: &[u8], level, mode| {
        Frame::parse_with(bytes, &ReadOptions::new().level(level).mode(mode))
            .map(|_| ())
            .map_err(|e| (e.code(), e.offset()))
    };
    assert_eq!(code(one, VerifyLevel::Layout, ParseMode::Exact), Ok(()));
    assert_eq!(code(&two, VerifyLevel::Layout, ParseMode::Exact), Err((ErrorCode::TrailingBytes, Some(35))));
    assert_eq!(code(&two, VerifyLevel::Layout, ParseMode::Prefix), Ok(()));
    for level in [VerifyLevel::Identity, VerifyLevel::Trailer, VerifyLevel::Full] {
        for mode in [ParseMode::Exact, ParseMode::Prefix] {
            assert_eq!(code(&two, level, mode), Err((ErrorCode::IdentityJson, Some(14))), "{level:?} {mode:?}");
        }
    }
}

/// Found by the `stream` target once it chose the identity buffer's size:
/// at the layout level the streaming verifier does not need the identity, so a buffer
/// too small to keep it is fine — but `StreamedFrame::frame_len` then computed the
/// length from the identity it had kept (none: 0 bytes) instead of the header's
/// `identity_len`, so a prefix-mode reader would have resumed in the middle of the
/// frame. The crash input was a 307-byte frame with a 277-byte identity, streamed with a
/// 64-byte buffer: streamed length 30, one-shot 307. Fixed in the library
/// (`StreamedFrame` keeps `identity_len`).
#[test]
fn a_streamed_frame_knows_its_length_without_keeping_the_identity() {
    use membrane_frame::{StreamStatus, StreamVerifier};
    let frame = membrane_frame::example_frame();
    let mut bytes = frame.clone();
    bytes.extend_from_slice(b"next frame");
    let one_shot =
        Frame::parse_with(&bytes, &ReadOptions::new().level(VerifyLevel::Layout).mode(ParseMode::Prefix)).unwrap();
    let mut tiny = [0u8; 8];
    for mode in [ParseMode::Prefix, ParseMode::Exact] {
        let options = ReadOptions::new().level(VerifyLevel::Layout);
        let mut verifier = StreamVerifier::new(options.mode(mode), &mut tiny);
        let input: &[u8] = if mode == ParseMode::Prefix { &bytes } else { &frame };
        assert!(matches!(verifier.feed(input), Ok(StreamStatus::Complete { .. })), "{mode:?}");
        let streamed = verifier.finish().unwrap();
        assert_eq!(streamed.identity_json(), None, "{mode:?}: the identity did not fit");
        assert_eq!(streamed.frame_len(), one_shot.0.len() as u64, "{mode:?}");
        assert_eq!(streamed.identity_len(), one_shot.0.identity_json().len() as u64, "{mode:?}");
    }
}
