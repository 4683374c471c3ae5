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
fn stream_code(bytes: &[u8], level: VerifyLevel, chunk: usize) -> String {
    let mut identity = vec![0u8; 64 * 1024];
    let mut verifier = StreamVerifier::new(ReadOptions::new().level(level), &mut identity);
    for part in bytes.chunks(chunk.max(1)) {
        if let Err(err) = verifier.feed(part) {
            return err.code().name().to_string();
        }
    }
    code_of(&verifier.finish())
}

#[test]
fn every_frame_vector_gives_its_expected_code_at_trailer_and_full_level() {
    let cases = read_jsonl("frames.jsonl");
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
