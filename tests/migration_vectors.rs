//! Conformance with the migration vectors (SPEC §7, §11): `migration_frames.jsonl` with
//! `migration/`, and `migration_envelopes.jsonl`.

mod common;

use common::{read_jsonl, read_vector_file};
use membrane_frame::envelope::FragmentMessage;
use membrane_frame::migrate::{
    migrate_envelope_into, migrate_envelope_to, migrate_frame_in_place, plan_frame_migration, EnvelopeMigration,
    EnvelopeMigrationOptions, FrameMigration,
};
use membrane_frame::{ErrorCode, Frame, IoSink, ReadOptions, VerifyLevel};

#[test]
fn every_legacy_frame_becomes_exactly_its_expected_v5_bytes() {
    let cases = read_jsonl("migration_frames.jsonl");
    for case in &cases {
        let name = case["name"].as_str().unwrap();
        let input = read_vector_file(case["input"].as_str().unwrap());
        let expected = read_vector_file(case["expected_v5"].as_str().unwrap());
        let version = case["from_version"].as_u64().unwrap() as u16;
        assert_eq!(Frame::parse(&input).unwrap_err().code(), ErrorCode::LegacyFrame, "{name}");
        // The dry run says what will happen and writes nothing (it takes `&[u8]`).
        assert_eq!(plan_frame_migration(&input, &ReadOptions::new()), Ok(FrameMigration::Legacy { version }), "{name}");
        let mut buf = input.clone();
        assert_eq!(migrate_frame_in_place(&mut buf), Ok(FrameMigration::Legacy { version }), "{name}");
        assert_eq!(buf, expected, "{name}: migrated bytes");
        assert_eq!(buf[6..], input[6..], "{name}: only bytes 0..6 change");
        Frame::parse_with(&buf, &ReadOptions::new().level(VerifyLevel::Trailer))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        // Idempotent: the result, and the expected file itself, are v5 no-ops.
        assert_eq!(migrate_frame_in_place(&mut buf), Ok(FrameMigration::AlreadyV5), "{name}");
        assert_eq!(buf, expected, "{name}");
        let mut again = expected.clone();
        assert_eq!(migrate_frame_in_place(&mut again), Ok(FrameMigration::AlreadyV5), "{name}");
        assert_eq!(again, expected, "{name}");
    }
    assert!(cases.len() >= 12, "only {} frame migration vectors", cases.len());
    println!("migrated {} legacy frames", cases.len());
}

/// Damaged or foreign input: an error, and not one byte of the buffer changes.
#[test]
fn migrating_garbage_is_an_error_and_leaves_the_buffer_untouched() {
    let mut checked = 0;
    for case in read_jsonl("migration_frames.jsonl") {
        let name = case["name"].as_str().unwrap();
        let input = read_vector_file(case["input"].as_str().unwrap());
        let last = input.len() - 1;
        let identity_byte = 14 + 1; // the first key's opening quote
        let mut variants: Vec<(&str, Vec<u8>, ErrorCode)> = vec![
            ("truncated", input[..input.len() - 1].to_vec(), ErrorCode::PayloadOverrun),
            ("too short", input[..21].to_vec(), ErrorCode::TooShort),
            ("empty", Vec::new(), ErrorCode::TooShort),
            ("trailing byte", [input.as_slice(), &[0]].concat(), ErrorCode::TrailingBytes),
            (
                "not a frame",
                b"{\"schema_version\": 2, \"just\": \"some json, not a frame\"}".to_vec(),
                ErrorCode::BadMagic,
            ),
        ];
        let mut flip = |what: &'static str, at: usize, code: ErrorCode| {
            let mut bytes = input.clone();
            bytes[at] ^= 0x20;
            variants.push((what, bytes, code));
        };
        flip("trailer flipped", last, ErrorCode::TrailerMismatch);
        flip("magic flipped", 0, ErrorCode::BadMagic);
        flip("schema flipped", 4, ErrorCode::SchemaMismatch);
        flip("reserved flipped", 7, ErrorCode::ReservedNonzero);
        flip("identity flipped", identity_byte, ErrorCode::IdentityJson);
        for (what, bytes, code) in variants {
            let mut buf = bytes.clone();
            let err = migrate_frame_in_place(&mut buf).unwrap_err();
            assert_eq!(err.code(), code, "{name} {what}: {err}");
            assert_eq!(buf, bytes, "{name} {what}: the buffer changed");
            assert_eq!(plan_frame_migration(&bytes, &ReadOptions::new()), Err(err), "{name} {what}: dry run");
            checked += 1;
        }
    }
    assert!(checked >= 100);
}

#[test]
fn every_legacy_envelope_becomes_exactly_its_expected_v5_text() {
    let cases = read_jsonl("migration_envelopes.jsonl");
    for case in &cases {
        let name = case["name"].as_str().unwrap();
        let input = case["input"].as_str().unwrap().as_bytes();
        let expected = case["expected_v5"].as_str().unwrap();
        let from_version = case["from_version"].as_u64().unwrap() as u8;
        let options = EnvelopeMigrationOptions::new().default_tenant(case["default_tenant"].as_str().unwrap());
        assert_eq!(FragmentMessage::parse(input).unwrap_err().code(), ErrorCode::EnvelopeVersion, "{name}");
        let mut out = vec![0u8; 4096];
        let outcome = migrate_envelope_into(input, &options, &mut out).unwrap_or_else(|e| panic!("{name}: {e}"));
        let EnvelopeMigration::Rewritten { from_version: got, len } = outcome else { panic!("{name}: {outcome:?}") };
        assert_eq!(got, from_version, "{name}");
        assert_eq!(std::str::from_utf8(&out[..len]).unwrap(), expected, "{name}");
        // The result passes the v5 reader, and migrating it again is a no-op.
        let message = FragmentMessage::parse(&out[..len]).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(message.is_canonical(), "{name}");
        assert_eq!(
            migrate_envelope_into(&out[..len], &options, &mut [0u8; 0]),
            Ok(EnvelopeMigration::AlreadyV5),
            "{name}"
        );
        assert_eq!(
            migrate_envelope_into(expected.as_bytes(), &options, &mut [0u8; 0]),
            Ok(EnvelopeMigration::AlreadyV5)
        );
        // The sink form writes the same text.
        let mut written = Vec::new();
        let outcome = migrate_envelope_to(input, &options, &mut IoSink(&mut written)).unwrap();
        assert_eq!(outcome, EnvelopeMigration::Rewritten { from_version, len });
        assert_eq!(written, expected.as_bytes(), "{name}");
    }
    assert!(cases.len() >= 8, "only {} envelope migration vectors", cases.len());
    println!("migrated {} legacy envelopes", cases.len());
}

#[test]
fn migrating_a_garbage_envelope_is_an_error_and_writes_nothing() {
    let case = &read_jsonl("migration_envelopes.jsonl")[0];
    let input = case["input"].as_str().unwrap();
    let garbage: [(String, ErrorCode); 5] = [
        ("".into(), ErrorCode::EnvelopeJson),
        (input[..input.len() - 1].into(), ErrorCode::EnvelopeJson),
        (input.replacen("\"schema_version\": 2", "\"schema_version\": 1", 1), ErrorCode::EnvelopeVersion),
        (input.replacen("\"schema_version\": 2", "\"schema_version\": \"2\"", 1), ErrorCode::EnvelopeVersion),
        (input.replacen("\"version_id\": 1", "\"version_id\": 0", 1), ErrorCode::EnvelopeField),
    ];
    for (text, code) in garbage {
        let mut out = vec![0x5Au8; 4096];
        let err = migrate_envelope_into(text.as_bytes(), &EnvelopeMigrationOptions::new(), &mut out).unwrap_err();
        assert_eq!(err.code(), code, "{text}");
        assert!(out.iter().all(|&b| b == 0x5A), "{text}: output written");
        let mut written = Vec::new();
        assert!(
            migrate_envelope_to(text.as_bytes(), &EnvelopeMigrationOptions::new(), &mut IoSink(&mut written)).is_err()
        );
        assert!(written.is_empty());
    }
}
