//! Unit tests of the frame reader, streaming verifier and writers on small frames
//! (small enough for Miri; the vector and property suites live in `tests/`).

use super::*;
use crate::{ErrorCode, IoSink, SliceSink};
use std::vec::Vec;
use zerocopy::IntoBytes as _;

fn frame() -> Vec<u8> {
    example_frame()
}

fn code(bytes: &[u8], level: VerifyLevel) -> Option<ErrorCode> {
    Frame::parse_with(bytes, &ReadOptions::new().level(level)).err().map(|e| e.code())
}

#[test]
fn accepts_a_valid_frame_at_every_level() {
    let bytes = frame();
    for level in VerifyLevel::ALL {
        let (parsed, _) = Frame::parse_with(&bytes, &ReadOptions::new().level(level)).unwrap();
        assert_eq!(parsed.payload(), b"hello");
        assert_eq!(parsed.len(), bytes.len());
        assert_eq!(parsed.identity().is_some(), level >= VerifyLevel::Identity);
        assert_eq!(parsed.payload_digest().is_some(), level >= VerifyLevel::Trailer);
    }
}

#[test]
fn rejects_each_header_field() {
    let bytes = frame();
    let damaged = |at: usize, value: u8| {
        let mut copy = bytes.clone();
        copy[at] = value;
        code(&copy, VerifyLevel::Layout)
    };
    assert_eq!(damaged(3, 0x04), Some(ErrorCode::LegacyFrame));
    assert_eq!(damaged(3, 0x02), Some(ErrorCode::LegacyFrame));
    assert_eq!(damaged(0, 0x00), Some(ErrorCode::BadMagic));
    assert_eq!(damaged(4, 4), Some(ErrorCode::SchemaMismatch));
    assert_eq!(damaged(5, 5), Some(ErrorCode::SchemaMismatch));
    assert_eq!(damaged(8, 1), Some(ErrorCode::ReservedNonzero));
    assert_eq!(damaged(13, 1), Some(ErrorCode::IdentityOverrun));
    assert_eq!(code(&bytes[..21], VerifyLevel::Layout), Some(ErrorCode::TooShort));
}

#[test]
fn reports_offsets_and_fields() {
    let bytes = frame();
    let mut flipped = bytes.clone();
    let last = flipped.len() - 1;
    flipped[last] ^= 1;
    let err = Frame::parse(&flipped).unwrap_err();
    assert_eq!(
        (err.code(), err.offset(), err.field()),
        (ErrorCode::TrailerMismatch, Some(last as u64 - 7), Some("trailer"))
    );
    let mut extra = bytes.clone();
    extra.push(0);
    let err = Frame::parse(&extra).unwrap_err();
    assert_eq!((err.code(), err.offset()), (ErrorCode::TrailingBytes, Some(bytes.len() as u64)));
    let (_, rest) = Frame::parse_with(&extra, &ReadOptions::new().mode(ParseMode::Prefix)).unwrap();
    assert_eq!(rest, &[0]);
}

#[test]
fn body_errors_point_at_the_same_byte_at_every_level() {
    // The payload length field follows the identity; bytes past the trailer start at the
    // frame's end. The layout level, which reads no identity, counts the same offsets.
    let bytes = frame();
    let identity_end = (HEADER_LEN + Frame::parse(&bytes).unwrap().identity_json().len()) as u64;
    let mut extra = bytes.clone();
    extra.push(0);
    for level in VerifyLevel::ALL {
        let options = ReadOptions::new().level(level);
        let err = Frame::parse_with(&bytes[..bytes.len() - 1], &options).unwrap_err();
        assert_eq!(
            (err.code(), err.offset(), err.field()),
            (ErrorCode::PayloadOverrun, Some(identity_end), Some("payload_len"))
        );
        let err = Frame::parse_with(&extra, &options).unwrap_err();
        assert_eq!((err.code(), err.offset()), (ErrorCode::TrailingBytes, Some(bytes.len() as u64)), "{level:?}");
    }
}

#[test]
fn skipping_is_refused_until_the_head_is_in_and_leaves_the_verifier_usable() {
    // The head stage ends with its last byte (the next stage starts in the same call),
    // so a verifier still in it always lacks head bytes.
    let bytes = frame();
    let head_len = Frame::parse(&bytes).unwrap().payload_offset();
    let options = ReadOptions::new().level(VerifyLevel::Identity);
    let mut identity = [0u8; 1024];
    let mut verifier = StreamVerifier::new(options, &mut identity);
    for cut in [0, 1, 14, head_len - 1] {
        assert_eq!(verifier.skip(1).unwrap_err().code(), ErrorCode::InvalidState, "after {cut} bytes");
        verifier.feed(&bytes[verifier.received() as usize..cut]).unwrap();
    }
    verifier.feed(&bytes[head_len - 1..head_len]).unwrap();
    assert_eq!(verifier.skip(13).unwrap(), StreamStatus::Complete { consumed: 13 });
    assert!(verifier.finish().is_ok());
}

#[test]
fn the_identity_length_is_known_from_the_fourteenth_byte() {
    // identity_len's last byte is the header's 14th: from there on the stream knows how
    // many head bytes it still needs, even for a length whose top byte is not zero.
    let mut head = FrameHeader::v5(0x0100_0005).as_bytes().to_vec();
    head.extend_from_slice(&[0; 8]);
    for chunk in [1, 14] {
        let mut identity = [0u8; 16];
        let mut verifier = StreamVerifier::new(ReadOptions::new(), &mut identity);
        let mut status = None;
        for piece in head[..14].chunks(chunk) {
            status = Some(verifier.feed(piece).unwrap());
        }
        assert_eq!(status, Some(StreamStatus::NeedMore(8 + 0x0100_0005)), "fed {chunk} bytes at a time");
    }
}

#[test]
fn the_header_is_checked_when_its_twenty_second_byte_arrives() {
    // 22 bytes (header and payload length) decide; one fewer is still a short stream.
    let mut bytes = frame();
    bytes[0] = b'X';
    for chunk in [1, 22] {
        let mut identity = [0u8; 1024];
        let mut verifier = StreamVerifier::new(ReadOptions::new(), &mut identity);
        let mut fed = bytes[..22].chunks(chunk);
        let last = fed.next_back().unwrap();
        for piece in fed {
            assert!(matches!(verifier.feed(piece), Ok(StreamStatus::NeedMore(_))), "fed {chunk} at a time");
        }
        assert_eq!(verifier.feed(last).unwrap_err().code(), ErrorCode::BadMagic, "fed {chunk} at a time");
    }
}

#[test]
fn streamed_errors_point_where_the_one_shot_reader_does() {
    // (code, offset, field) of both readers on the same bytes, at the trailer level.
    let verdicts = |bytes: &[u8]| {
        let said = |err: crate::Error| (err.code(), err.offset(), err.field());
        let one_shot = Frame::parse(bytes).map(|_| ()).map_err(said);
        let mut identity = [0u8; 1024];
        let mut verifier = StreamVerifier::new(ReadOptions::new(), &mut identity);
        let streamed = verifier.feed(bytes).map_err(said).and_then(|_| verifier.finish().map(|_| ()).map_err(said));
        (one_shot, streamed)
    };
    let bytes = frame();
    let identity_end = HEADER_LEN + Frame::parse(&bytes).unwrap().identity_json().len();
    let mut trailer_flipped = bytes.clone();
    *trailer_flipped.last_mut().unwrap() ^= 1;
    let mut endless = bytes.clone();
    endless[identity_end..identity_end + 8].copy_from_slice(&u64::MAX.to_le_bytes());
    for (damaged, code) in [
        (&bytes[..bytes.len() - 3], ErrorCode::PayloadOverrun),
        (&trailer_flipped[..], ErrorCode::TrailerMismatch),
        (&endless[..], ErrorCode::PayloadOverrun),
    ] {
        let (one_shot, streamed) = verdicts(damaged);
        assert_eq!(one_shot.unwrap_err().0, code);
        assert_eq!(streamed, one_shot, "{code:?}");
    }
}

#[test]
fn identity_limit_applies_after_the_overrun_check() {
    let bytes = frame();
    let small = ReadOptions::new().identity_limit(10);
    assert_eq!(Frame::parse_with(&bytes, &small).unwrap_err().code(), ErrorCode::IdentityTooLarge);
}

fn stream(bytes: &[u8], level: VerifyLevel, chunk: usize) -> Result<u64, ErrorCode> {
    let mut identity = [0u8; 512];
    let mut verifier = StreamVerifier::new(ReadOptions::new().level(level), &mut identity);
    for part in bytes.chunks(chunk) {
        verifier.feed(part).map_err(|e| e.code())?;
    }
    verifier.finish().map(|f| f.payload_len()).map_err(|e| e.code())
}

#[test]
// Exhaustive loops over safe code: minutes under Miri, and the same paths run there
// through the other tests; the normal test run keeps them.
#[cfg_attr(miri, ignore = "minutes under Miri")]
fn streaming_matches_one_shot_for_every_truncation() {
    let bytes = frame();
    for len in 0..=bytes.len() {
        for level in VerifyLevel::ALL {
            let one_shot = Frame::parse_with(&bytes[..len], &ReadOptions::new().level(level))
                .map(|(f, _)| f.payload().len() as u64)
                .map_err(|e| e.code());
            assert_eq!(stream(&bytes[..len], level, 3), one_shot, "len {len} {level:?}");
        }
    }
}

#[test]
fn streaming_reports_what_it_needs() {
    let bytes = frame();
    let mut identity = [0u8; 512];
    let mut verifier = StreamVerifier::new(ReadOptions::new(), &mut identity);
    assert_eq!(verifier.feed(&bytes[..4]).unwrap(), StreamStatus::NeedMore(10));
    let identity_len = bytes.len() as u64 - 30 - 5;
    assert_eq!(verifier.feed(&bytes[4..14]).unwrap(), StreamStatus::NeedMore(identity_len + 8));
    assert_eq!(verifier.feed(&bytes[14..bytes.len() - 1]).unwrap(), StreamStatus::NeedMore(1));
    assert_eq!(verifier.feed(&bytes[bytes.len() - 1..]).unwrap(), StreamStatus::Complete { consumed: 1 });
    assert!(verifier.feed(b"x").is_err());
}

#[test]
fn streaming_needs_room_for_the_identity() {
    let bytes = frame();
    let mut tiny = [0u8; 8];
    let mut verifier = StreamVerifier::new(ReadOptions::new(), &mut tiny);
    let err = verifier.feed(&bytes).unwrap_err();
    assert_eq!(err.code(), ErrorCode::BufferTooSmall);
    assert_eq!(err.needed(), Some(bytes.len() as u64 - 35));
}

#[test]
fn a_stream_cut_short_is_an_overrun_even_with_a_small_identity_buffer() {
    // The declared identity does not fit the buffer, but the stream ends inside it: the
    // bytes are damaged or cut, as the one-shot reader says, not the caller's buffer.
    let bytes = frame();
    let cut = &bytes[..30];
    let mut tiny = [0u8; 8];
    let mut verifier = StreamVerifier::new(ReadOptions::new(), &mut tiny);
    assert!(matches!(verifier.feed(cut), Ok(StreamStatus::NeedMore(_))));
    let one_shot = Frame::parse_with(cut, &ReadOptions::new()).unwrap_err().code();
    assert_eq!(one_shot, ErrorCode::IdentityOverrun);
    assert_eq!(verifier.finish().unwrap_err().code(), one_shot);
}

#[test]
fn encoders_agree_and_report_sizes() {
    let bytes = frame();
    let parsed = Frame::parse(&bytes).unwrap();
    let identity = parsed.identity().unwrap();
    let mut small = [0u8; 40];
    let err = encode_frame(identity, b"hello", &mut small).unwrap_err();
    assert_eq!((err.code(), err.needed()), (ErrorCode::BufferTooSmall, Some(bytes.len() as u64)));
    let encoder = FrameEncoder::new(identity, 5).unwrap();
    assert_eq!(encoder.frame_len(), bytes.len() as u64);
    let mut head = [0u8; 512];
    let head_len = encoder.write_head_into(&mut head).unwrap();
    // The head is everything before the payload: its length is what the call returns.
    assert_eq!(head_len, parsed.payload_offset());
    assert_eq!(&head[..head_len], &bytes[..head_len]);
}

#[test]
fn chunked_writer_checks_the_declared_length() {
    let bytes = frame();
    let parsed = Frame::parse(&bytes).unwrap();
    let identity = parsed.identity().unwrap();
    let mut out = Vec::new();
    let mut writer = ChunkedFrameWriter::begin(identity, 5, IoSink(&mut out)).unwrap();
    writer.write_payload(b"hel").unwrap();
    // The refused chunk would have started at the frame's byte head + 3.
    let head_len = parsed.payload_offset() as u64;
    assert!(matches!(writer.write_payload(b"lo!"),
        Err(WriteError::Frame(e)) if (e.code(), e.offset()) == (ErrorCode::LengthMismatch, Some(head_len + 3))));
    assert!(matches!(writer.finish(), Err(WriteError::Frame(e)) if e.code() == ErrorCode::LengthMismatch));
    let mut buf = [0u8; 512];
    let mut writer = ChunkedFrameWriter::begin(identity, 5, SliceSink::new(&mut buf)).unwrap();
    writer.write_payload(b"hello").unwrap();
    let (outcome, sink) = writer.finish().unwrap();
    assert!(outcome.payload_hash_matches);
    assert_eq!(sink.written(), &bytes[..]);
}

/// A sink that fails after a number of writes.
struct Flaky {
    writes_left: usize,
}

impl crate::ByteSink for Flaky {
    type Error = ();
    fn write_bytes(&mut self, _bytes: &[u8]) -> Result<(), ()> {
        self.writes_left = self.writes_left.checked_sub(1).ok_or(())?;
        Ok(())
    }
}

#[test]
fn chunked_writer_sends_the_head_in_one_write_and_stops_after_a_sink_failure() {
    let bytes = frame();
    let parsed = Frame::parse(&bytes).unwrap();
    let identity = parsed.identity().unwrap();
    // One write for the head, then one for the first chunk; the second chunk fails.
    let mut writer = ChunkedFrameWriter::begin(identity, 5, Flaky { writes_left: 2 }).unwrap();
    writer.write_payload(b"he").unwrap();
    assert!(matches!(writer.write_payload(b"ll"), Err(WriteError::Sink(()))));
    assert!(matches!(writer.write_payload(b"o"), Err(WriteError::Frame(e)) if e.code() == ErrorCode::InvalidState));
    assert!(matches!(writer.finish(), Err(WriteError::Frame(e)) if e.code() == ErrorCode::InvalidState));
}

#[test]
fn skipping_past_the_head_gives_the_same_verdict_as_feeding() {
    let bytes = frame();
    let head_len = bytes.len() - 5 - 8;
    for level in [VerifyLevel::Layout, VerifyLevel::Identity] {
        for (extra, truncate) in [(0usize, 0usize), (3, 0), (0, 4), (0, 13)] {
            let total = (bytes.len() + extra - truncate) as u64;
            let mut identity = [0u8; 512];
            let mut fed = StreamVerifier::new(ReadOptions::new().level(level), &mut identity);
            let mut all = bytes.clone();
            all.resize(total as usize, 0);
            let fed_verdict = fed.feed(&all).and_then(|_| fed.finish().map(|f| f.payload_len())).map_err(|e| e.code());
            let mut identity = [0u8; 512];
            let mut skipped = StreamVerifier::new(ReadOptions::new().level(level), &mut identity);
            skipped.feed(&bytes[..head_len]).unwrap();
            let skipped_verdict = skipped
                .skip(total - head_len as u64)
                .and_then(|_| skipped.finish().map(|f| f.payload_len()))
                .map_err(|e| e.code());
            assert_eq!(skipped_verdict, fed_verdict, "{level:?} +{extra} -{truncate}");
        }
    }
    let mut identity = [0u8; 512];
    let mut hashing = StreamVerifier::new(ReadOptions::new(), &mut identity);
    hashing.feed(&bytes[..head_len]).unwrap();
    assert_eq!(hashing.skip(5).unwrap_err().code(), ErrorCode::InvalidState);
    let mut identity = [0u8; 512];
    let mut early = StreamVerifier::new(ReadOptions::new().level(VerifyLevel::Layout), &mut identity);
    early.feed(&bytes[..10]).unwrap();
    assert_eq!(early.skip(5).unwrap_err().code(), ErrorCode::InvalidState);
}

#[test]
fn migration_rewrites_legacy_and_half_migrated_heads_only() {
    let rewritten = [HeaderKind::of(MAGIC_V4, 4), HeaderKind::of(MAGIC_V2, 2), HeaderKind::of(MAGIC_V5, 4)];
    for kind in rewritten {
        assert!(kind.needs_migration(), "{kind:?}");
    }
    for kind in [HeaderKind::of(MAGIC_V5, 5), HeaderKind::of(MAGIC_V4, 5), HeaderKind::of(*b"JUNK", 5)] {
        assert!(!kind.needs_migration(), "{kind:?}");
    }
}

#[test]
fn every_membrane_magic_has_its_name_and_no_other_magic_has_one() {
    assert_eq!(magic_name(MAGIC_V5), Some("v5"));
    assert_eq!(magic_name(MAGIC_V4), Some("legacy v4"));
    assert_eq!(magic_name(MAGIC_V2), Some("legacy v2"));
    assert_eq!(magic_name(*b"JUNK"), None);
    assert_eq!(magic_name([0xC0, 0xDE, 0x01, 0x03]), None);
}

#[test]
fn head_fields_place_the_payload_and_the_trailer() {
    let bytes = crate::example_frame();
    let head = HeadFields::decode(&bytes);
    let frame = Frame::parse(&bytes).unwrap();
    let identity_len = frame.identity_json().len() as u64;
    assert_eq!(head.payload_start(), Some(22 + identity_len));
    assert_eq!(head.trailer_start(), Some(22 + identity_len + frame.payload().len() as u64));
    assert_eq!(head.trailer_start(), Some(bytes.len() as u64 - 8));
    // Not knowable from the first ten bytes.
    assert_eq!(HeadFields::decode(&bytes[..10]).payload_start(), None);
}

#[test]
fn level_numbers_are_the_c_abi_numbers_cheapest_first() {
    for (number, level) in (0u32..).zip(VerifyLevel::ALL) {
        assert_eq!(VerifyLevel::from_number(number), Some(level));
        assert_eq!(VerifyLevel::from_name(level.name()), Some(level));
    }
    assert_eq!(VerifyLevel::from_number(4), None);
    assert_eq!(VerifyLevel::from_number(u32::MAX), None);
}

#[test]
fn a_stream_counts_what_it_received_and_knows_when_the_head_is_in() {
    let bytes = frame();
    let mut identity = [0u8; 1024];
    let mut verifier = StreamVerifier::new(ReadOptions::new(), &mut identity);
    assert_eq!((verifier.received(), verifier.head_complete()), (0, false));
    verifier.feed(&bytes[..10]).unwrap();
    assert_eq!((verifier.received(), verifier.head_complete()), (10, false));
    let head = bytes.len() - 5 - 8;
    verifier.feed(&bytes[10..head]).unwrap();
    assert_eq!((verifier.received(), verifier.head_complete()), (head as u64, true));
    verifier.feed(&bytes[head..]).unwrap();
    assert_eq!(verifier.received(), bytes.len() as u64);
}

#[test]
fn the_encoder_takes_an_identity_at_the_limit_and_not_one_byte_over() {
    let bytes = frame();
    let parsed = Frame::parse(&bytes).unwrap();
    let identity = parsed.identity().unwrap();
    let len = identity.canonical_len() as u32;
    let encoder = FrameEncoder::with_identity_limit(identity, 5, len).unwrap();
    assert_eq!((encoder.identity_len(), encoder.head_len()), (len, 22 + len as usize));
    let over = FrameEncoder::with_identity_limit(identity, 5, len - 1).unwrap_err();
    assert_eq!(over.code(), ErrorCode::IdentityTooLarge);
}

#[test]
fn an_identity_exactly_at_the_limit_is_read_and_one_byte_over_is_too_large() {
    let bytes = frame();
    let identity_len = Frame::parse(&bytes).unwrap().identity_json().len() as u32;
    for level in VerifyLevel::ALL {
        let at_limit = ReadOptions::new().level(level).identity_limit(identity_len);
        assert!(Frame::parse_with(&bytes, &at_limit).is_ok(), "{level:?}");
        let err = Frame::parse_with(&bytes, &at_limit.identity_limit(identity_len - 1)).unwrap_err();
        assert_eq!(
            (err.code(), err.offset(), err.field()),
            (ErrorCode::IdentityTooLarge, Some(10), Some("identity_len"))
        );
    }
}

#[test]
fn a_payload_hash_mismatch_points_at_the_payload_hash_string_in_the_frame() {
    let bytes = frame();
    let (parsed, _) = Frame::parse_with(&bytes, &ReadOptions::new().level(VerifyLevel::Identity)).unwrap();
    let wrong = "0".repeat(64);
    let identity = parsed.identity().unwrap().clone().with_payload_hash(&wrong).unwrap();
    let mut out = std::vec![0u8; bytes.len() + 16];
    let len = encode_frame(&identity, parsed.payload(), &mut out).unwrap();
    let damaged = &out[..len];
    let err = Frame::parse_with(damaged, &ReadOptions::new().level(VerifyLevel::Full)).unwrap_err();
    assert_eq!((err.code(), err.field()), (ErrorCode::PayloadHashMismatch, Some("payload_hash")));
    let at = err.offset().unwrap() as usize;
    assert!(damaged[at..].starts_with(std::format!("\"{wrong}\"").as_bytes()), "offset {at}");
}

#[test]
fn write_errors_display_the_frame_error_or_the_sinks() {
    let frame: WriteError<()> = WriteError::Frame(crate::Error::new(ErrorCode::LengthMismatch, "too many bytes"));
    assert_eq!(
        std::format!("{frame}"),
        std::format!("{}", crate::Error::new(ErrorCode::LengthMismatch, "too many bytes"))
    );
    assert!(std::format!("{frame}").contains("too many bytes"));
    let sink: WriteError<&str> = WriteError::Sink("disk full");
    assert_eq!(std::format!("{sink}"), "sink failed: \"disk full\"");
}

#[test]
fn a_parsed_frame_shows_its_parts_where_they_are() {
    let bytes = frame();
    let parsed = Frame::parse(&bytes).unwrap();
    assert_eq!(parsed.as_bytes(), &bytes[..]);
    assert!(!parsed.is_empty());
    assert_eq!(parsed.header().kind(), HeaderKind::V5);
    assert_eq!(parsed.header().identity_len.get() as usize, parsed.identity_json().len());
    assert_eq!(parsed.payload_offset(), 22 + parsed.identity_json().len());
    assert_eq!(&bytes[parsed.payload_offset()..][..5], b"hello");
    assert_eq!(parsed.trailer(), bytes[bytes.len() - 8..]);
    assert_eq!(parsed.trailer(), parsed.payload_digest().unwrap().0[..8]);
    assert_eq!(parsed.level(), VerifyLevel::Trailer, "the default level");
    for level in VerifyLevel::ALL {
        assert_eq!(Frame::parse_with(&bytes, &ReadOptions::new().level(level)).unwrap().0.level(), level);
    }
    assert_eq!(ReadOptions::default(), ReadOptions::new());
}

#[test]
fn a_streamed_frame_reports_what_the_one_shot_reader_does() {
    let bytes = frame();
    let parsed = Frame::parse(&bytes).unwrap();
    for level in VerifyLevel::ALL {
        let mut identity = [0u8; 4096];
        let mut verifier = StreamVerifier::new(ReadOptions::new().level(level), &mut identity);
        for chunk in bytes.chunks(7) {
            verifier.feed(chunk).unwrap();
        }
        assert_eq!(verifier.hashed(), if level >= VerifyLevel::Trailer { 5 } else { 0 }, "{level:?}");
        let streamed = verifier.finish().unwrap();
        assert_eq!(streamed.level(), level);
        assert_eq!(streamed.identity_json(), Some(parsed.identity_json()));
        assert_eq!(streamed.identity().is_some(), level >= VerifyLevel::Identity);
        if let Some(identity) = streamed.identity() {
            assert_eq!(identity.token_span(), parsed.identity().unwrap().token_span());
        }
        let digest = streamed.payload_digest();
        assert_eq!(digest.is_some(), level >= VerifyLevel::Trailer);
        assert_eq!(digest.map(|d| d.0), (level >= VerifyLevel::Trailer).then(|| parsed.payload_digest().unwrap().0));
        assert_eq!(streamed.trailer(), parsed.trailer());
        assert_eq!(streamed.frame_len(), bytes.len() as u64);
        assert_eq!((streamed.identity_len(), streamed.payload_len()), (parsed.identity_json().len() as u64, 5));
    }
}

#[test]
fn head_fields_say_what_part_of_a_head_is_there() {
    let bytes = frame();
    let head = HeadFields::decode(&bytes);
    assert_eq!(head.kind(), HeaderKind::V5);
    let identity_len = head.identity_len.unwrap() as usize;
    assert_eq!(head.identity_json(&bytes).unwrap(), &bytes[14..14 + identity_len]);
    assert_eq!(head.payload_len, Some(5));
    // Without the schema bytes the kind is foreign; with the identity cut short it is
    // the reader's identity_overrun at the length field.
    assert_eq!(HeadFields::decode(&bytes[..5]).kind(), HeaderKind::Foreign);
    let cut = HeadFields::decode(&bytes[..20]);
    assert_eq!(cut.kind(), HeaderKind::V5);
    let err = cut.identity_json(&bytes[..20]).unwrap_err();
    assert_eq!((err.code(), err.offset(), err.field()), (ErrorCode::IdentityOverrun, Some(10), Some("identity_len")));
    assert_eq!(
        HeadFields::decode(&bytes[..3]).identity_json(&bytes[..3]).unwrap_err().code(),
        ErrorCode::IdentityOverrun
    );
}
