//! Conformance with the vectors produced by the deployed Python implementation
//! (SPEC §11): frames and identities.

mod common;

use common::{hex, read_jsonl, read_lines, read_vector_file};
use membrane_frame::{Frame, ParseMode, PayloadIdentity, ReadOptions, StreamStatus, StreamVerifier, VerifyLevel};
use serde_json::value::RawValue;
use std::collections::HashMap;

fn code_of<T>(result: &Result<T, membrane_frame::Error>) -> String {
    match result {
        Ok(_) => "ok".to_string(),
        Err(err) => err.code().name().to_string(),
    }
}

/// Stream `bytes` through a verifier in chunks of `chunk` bytes; the final verdict.
/// Finishing into a slot gives the same verdict, and leaves the verifier spent.
fn stream_code(bytes: &[u8], level: VerifyLevel, chunk: usize) -> String {
    let mut identity = vec![0u8; 64 * 1024];
    let mut again = vec![0u8; 64 * 1024];
    let mut verifier = StreamVerifier::new(ReadOptions::new().level(level), &mut identity);
    let mut twin = StreamVerifier::new(ReadOptions::new().level(level), &mut again);
    for part in bytes.chunks(chunk.max(1)) {
        let fed = verifier.feed(part);
        assert_eq!(twin.feed(part), fed);
        if let Err(err) = fed {
            return err.code().name().to_string();
        }
    }
    let mut slot = None;
    let slotted = twin.finish_to(&mut slot).map(|()| slot.clone().unwrap());
    assert_eq!(slot.is_some(), slotted.is_ok());
    assert_eq!(twin.feed(b"x").map_err(|err| err.code().name()), Err("invalid_state"));
    let verdict = verifier.finish();
    assert_eq!(slotted, verdict);
    code_of(&verdict)
}

#[test]
fn every_frame_vector_gives_its_expected_code_at_trailer_and_full_level() {
    let cases = read_jsonl("frames.jsonl");
    let example = membrane_frame::example_frame();
    let mut accepted = 0;
    for case in &cases {
        let name = case["name"].as_str().unwrap();
        let bytes = read_vector_file(case["file"].as_str().unwrap());
        for (level, key) in [(VerifyLevel::Trailer, "expect"), (VerifyLevel::Full, "expect_full")] {
            let expected = case[key].as_str().unwrap();
            let result = Frame::parse_with(&bytes, &ReadOptions::new().level(level));
            assert_eq!(code_of(&result), expected, "{name} at {level:?}: {result:?}");
            for chunk in [1, 7, 64, bytes.len()] {
                assert_eq!(
                    stream_code(&bytes, level, chunk),
                    expected,
                    "{name} streamed in {chunk}-byte chunks at {level:?}"
                );
            }
        }
        // The check without the view, and the read into a slot, give what the reader
        // gives, error and all, at every level and in both modes.
        for level in [VerifyLevel::Layout, VerifyLevel::Identity, VerifyLevel::Trailer, VerifyLevel::Full] {
            for mode in [ParseMode::Exact, ParseMode::Prefix] {
                let options = ReadOptions::new().level(level).mode(mode);
                let viewed = Frame::parse_with(&bytes, &options);
                let checked = Frame::check_with(&bytes, &options);
                assert_eq!(checked, viewed.clone().map(|(frame, _)| frame.len()), "{name} checked, {level:?} {mode:?}");
                let mut slot = Some(Frame::parse(&example).unwrap());
                let filled = Frame::parse_to(&bytes, &options, &mut slot).map(|rest| (slot.clone().unwrap(), rest));
                assert_eq!(filled, viewed, "{name} into a slot, {level:?} {mode:?}");
                assert_eq!(slot.is_some(), filled.is_ok(), "{name}: a failed read leaves no frame");
            }
        }
        if case["expect"] == "ok" {
            accepted += 1;
            let frame = Frame::parse(&bytes).unwrap();
            let identity = frame.identity().unwrap();
            assert_eq!(identity.fingerprint().to_hex().as_str(), case["fingerprint"], "{name} fingerprint");
            assert_eq!(frame.payload().len() as u64, case["payload_len"].as_u64().unwrap(), "{name} payload_len");
            assert_eq!(
                hex(frame.payload_digest().unwrap().as_bytes()),
                case["payload_sha256"],
                "{name} payload digest"
            );
            assert_eq!(identity.is_canonical(), case["canonical"].as_bool().unwrap(), "{name} canonical flag");
            // identity_json_len is the length of the canonical serialisation.
            assert_eq!(identity.canonical_len() as u64, case["identity_json_len"].as_u64().unwrap(), "{name}");
        }
    }
    assert!(accepted >= 40, "only {accepted} accepted frames among {} vectors", cases.len());
    println!("checked {} frame vectors ({accepted} accepted) at two levels and four chunkings", cases.len());
}

#[test]
fn prefix_parsing_accepts_what_follows_the_frame() {
    for case in read_jsonl("frames.jsonl") {
        if case["expect"] != "trailing_bytes" || case["reference"] != "ok" {
            continue;
        }
        let bytes = read_vector_file(case["file"].as_str().unwrap());
        let (frame, rest) = Frame::parse_with(&bytes, &ReadOptions::new().mode(ParseMode::Prefix)).unwrap();
        assert_eq!(frame.len() + rest.len(), bytes.len());
        assert!(!rest.is_empty());
        let mut identity = vec![0u8; 1024];
        let mut verifier = StreamVerifier::new(ReadOptions::new().mode(ParseMode::Prefix), &mut identity);
        assert_eq!(verifier.feed(&bytes).unwrap(), StreamStatus::Complete { consumed: frame.len() });
        assert!(verifier.finish().is_ok());
    }
}

#[test]
fn every_identity_vector_serialises_to_its_canonical_json_and_fingerprint() {
    let lines = read_lines("identities.jsonl");
    for line in &lines {
        let case: HashMap<String, Box<RawValue>> = serde_json::from_str(line).unwrap();
        let name = case["name"].get();
        let expected_json: String = serde_json::from_str(case["canonical_json"].get()).unwrap();
        let expected_fingerprint: String = serde_json::from_str(case["fingerprint"].get()).unwrap();
        // The identity as Python's json.dumps wrote it (", " separators, declaration order).
        let spelled = case["identity"].get().as_bytes();
        let identity = PayloadIdentity::parse(spelled).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut out = vec![0u8; identity.canonical_len()];
        let written = identity.write_canonical_into(&mut out).unwrap();
        assert_eq!(std::str::from_utf8(&out[..written]).unwrap(), expected_json, "{name}");
        assert_eq!(identity.fingerprint().to_hex().as_str(), expected_fingerprint, "{name}");
        assert!(!identity.is_canonical(), "{name}: the spaced spelling is not canonical");
        let canonical = PayloadIdentity::parse(expected_json.as_bytes()).unwrap();
        assert!(canonical.is_canonical(), "{name}");
        assert_eq!(canonical.fingerprint().to_hex().as_str(), expected_fingerprint, "{name}");
    }
    println!("checked {} identity vectors", lines.len());
}

#[test]
fn fingerprint_vector_of_docs_hello_matches_sha256_of_its_identity() {
    let bytes = read_vector_file("frames/docs-hello.bin");
    let frame = Frame::parse(&bytes).unwrap();
    let identity = frame.identity().unwrap();
    assert!(identity.is_canonical());
    assert_eq!(identity.fingerprint(), membrane_frame::Sha256Digest::of(frame.identity_json()));
}

/// Aligned and padded frames (SPEC §1.5, `aligned.jsonl`): every reader reports the
/// padding, the payload offset and the canonical flag the original reader's run
/// recorded; a writer asked for a vector's alignment and base writes its exact bytes.
#[test]
fn every_aligned_vector_is_read_with_its_padding_and_written_byte_for_byte() {
    use membrane_frame::migrate::migrate_frame_in_place;
    use membrane_frame::{encode_frame, encode_frame_with, ChunkedFrameWriter, FrameEncoder, PayloadAlignment};
    use membrane_frame::{IoSink, WriteOptions};
    let cases = read_jsonl("aligned.jsonl");
    let mut written = 0;
    for case in &cases {
        let name = case["name"].as_str().unwrap();
        let bytes = read_vector_file(case["file"].as_str().unwrap());
        let number = |key: &str| case[key].as_u64().unwrap_or_else(|| panic!("{name}: no {key}"));
        for (level, key) in [(VerifyLevel::Trailer, "expect"), (VerifyLevel::Full, "expect_full")] {
            let result = Frame::parse_with(&bytes, &ReadOptions::new().level(level));
            assert_eq!(code_of(&result), case[key].as_str().unwrap(), "{name} at {level:?}");
        }
        let frame = Frame::parse_with(&bytes, &ReadOptions::new().level(VerifyLevel::Full)).unwrap().0;
        let identity = frame.identity().unwrap();
        assert_eq!(frame.identity_json().len() as u64, number("identity_json_len"), "{name}");
        assert_eq!(identity.is_canonical(), case["canonical"].as_bool().unwrap(), "{name} canonical");
        assert_eq!(
            (frame.padding() as u64, identity.padding() as u64),
            (number("padding"), number("padding")),
            "{name}"
        );
        assert_eq!(frame.payload_offset() as u64, number("payload_offset"), "{name} payload_offset");
        assert_eq!(identity.fingerprint().to_hex().as_str(), case["fingerprint"], "{name} fingerprint");
        assert_eq!(frame.payload().len() as u64, number("payload_len"), "{name}");
        assert_eq!(hex(frame.payload_digest().unwrap().as_bytes()), case["payload_sha256"], "{name}");
        // The layout level reads no identity, so it knows no padding; the offset it knows.
        let layout = Frame::parse_with(&bytes, &ReadOptions::new().level(VerifyLevel::Layout)).unwrap().0;
        assert_eq!((layout.payload_offset(), layout.padding()), (frame.payload_offset(), 0), "{name}");
        // The streaming reader reports the same, whatever the chunking.
        for chunk in [1, 7, 64, bytes.len()] {
            let mut buffer = vec![0u8; 64 * 1024];
            let mut verifier = StreamVerifier::new(ReadOptions::new().level(VerifyLevel::Full), &mut buffer);
            for part in bytes.chunks(chunk) {
                verifier.feed(part).unwrap();
            }
            let streamed = verifier.finish().unwrap();
            assert_eq!(streamed.padding() as u64, number("padding"), "{name} streamed in {chunk}");
            assert_eq!(streamed.payload_offset(), number("payload_offset"), "{name} streamed in {chunk}");
        }
        // Migration keeps the identity bytes, padding and all (SPEC §7.1).
        let mut legacy = bytes.clone();
        legacy[..6].copy_from_slice(&[0xC0, 0xDE, 0x01, 0x04, 0x04, 0x00]);
        migrate_frame_in_place(&mut legacy).unwrap();
        assert_eq!(legacy, bytes, "{name}: migrated from v4");

        if !identity.is_canonical() {
            continue;
        }
        // Removing the padding recovers the original writer's frame.
        let mut unpadded = vec![0u8; bytes.len()];
        let len = encode_frame(identity, frame.payload(), &mut unpadded).unwrap();
        let canonical_len = identity.canonical_len();
        let mut stripped = bytes[..14 + canonical_len].to_vec();
        stripped[10..14].copy_from_slice(&(canonical_len as u32).to_le_bytes());
        stripped.extend_from_slice(&bytes[14 + frame.identity_json().len()..]);
        assert_eq!(unpadded[..len], stripped[..], "{name}: padding removed");

        let Some(align) = case.get("align") else { continue };
        let alignment = PayloadAlignment::new(align.as_u64().unwrap() as u32, number("base")).unwrap();
        let options = WriteOptions::new().aligned(alignment);
        let mut out = vec![0u8; bytes.len()];
        let len = encode_frame_with(identity, frame.payload(), &mut out, &options).unwrap();
        assert_eq!(out[..len], bytes[..], "{name}: encode_frame_with");
        let encoder = FrameEncoder::with_options(identity, frame.payload().len() as u64, &options).unwrap();
        assert_eq!(encoder.padding() as u64, number("padding"), "{name}");
        let mut head = vec![0u8; encoder.head_len()];
        encoder.write_head_into(&mut head).unwrap();
        assert_eq!(head[..], bytes[..encoder.payload_offset()], "{name}: FrameEncoder head");
        let mut chunked = Vec::new();
        let mut writer =
            ChunkedFrameWriter::begin_with(identity, frame.payload().len() as u64, IoSink(&mut chunked), &options)
                .unwrap();
        for part in frame.payload().chunks(1000) {
            writer.write_payload(part).unwrap();
        }
        let (outcome, _) = writer.finish().unwrap();
        assert!(outcome.payload_hash_matches, "{name}");
        assert_eq!(chunked, bytes, "{name}: ChunkedFrameWriter");
        written += 1;
    }
    assert!(written >= 4, "only {written} of {} aligned vectors had an alignment to write", cases.len());
    println!("checked {} aligned vectors ({written} written byte for byte)", cases.len());
}
