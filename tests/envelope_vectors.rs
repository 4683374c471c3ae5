//! Conformance with the envelope and compatibility-hash vectors (SPEC §3, §11):
//! `envelopes.jsonl` and `compat.jsonl`.

mod common;

use common::read_jsonl;
use membrane_frame::envelope::{CompatInputs, FragmentMessage};
use membrane_frame::{Dtype, ErrorCode, IdentityValues, InclusiveRange};
use serde_json::Value;

fn code_of<T>(result: &Result<T, membrane_frame::Error>) -> String {
    match result {
        Ok(_) => "ok".to_string(),
        Err(err) => err.code().name().to_string(),
    }
}

fn reemit(message: &FragmentMessage<'_>) -> Vec<u8> {
    let mut out = vec![0u8; message.encoded_len()];
    let len = message.write_into(&mut out).unwrap();
    assert_eq!(len, out.len());
    out
}

/// The vector's `fields` (decoded values, as the original read them) against ours.
fn check_fields(name: &str, message: &FragmentMessage<'_>, fields: &Value) {
    assert_eq!(fields["schema_version"], 5, "{name}");
    assert_eq!(message.tenant_id().to_string(), fields["tenant_id"].as_str().unwrap(), "{name} tenant_id");
    assert_eq!(
        message.payload_ref().map(|r| r.to_string()),
        fields["payload_ref"].as_str().map(String::from),
        "{name} payload_ref"
    );
    assert_eq!(message.payload_size(), fields["payload_size"].as_u64().unwrap(), "{name} payload_size");
    assert_eq!(message.ttl().to_bits(), fields["ttl"].as_f64().unwrap().to_bits(), "{name} ttl");
    assert_eq!(
        message.reuse_score().to_bits(),
        fields["reuse_score"].as_f64().unwrap().to_bits(),
        "{name} reuse_score"
    );
    assert_eq!(message.version_id(), fields["version_id"].as_u64().unwrap(), "{name} version_id");
    assert_eq!(message.consistency().name(), fields["consistency"].as_str().unwrap(), "{name} consistency");
    assert_eq!(message.hlc().raw(), fields["hlc"].as_u64().unwrap(), "{name} hlc");
    let compat = message.fingerprint_compat().map(|d| d.to_hex().as_str().to_string()).unwrap_or_default();
    assert_eq!(compat, fields["fingerprint_compat"].as_str().unwrap(), "{name} fingerprint_compat");
}

#[test]
fn every_envelope_vector_gives_its_expected_code_and_ok_ones_reemit_identically() {
    let cases = read_jsonl("envelopes.jsonl");
    let (mut reemitted, mut rejected) = (0, 0);
    for case in &cases {
        let name = case["name"].as_str().unwrap();
        let text = case["json"].as_str().unwrap().as_bytes();
        let expected = case["expect"].as_str().unwrap();
        let result = FragmentMessage::parse(text);
        assert_eq!(code_of(&result), expected, "{name}: {result:?}");
        let message = match result {
            Ok(message) => message,
            Err(err) => {
                rejected += 1;
                let offset = err.offset().unwrap_or_else(|| panic!("{name}: {err} has no offset")) as usize;
                assert!(offset <= text.len(), "{name}: offset {offset} past the text");
                if err.code() != ErrorCode::EnvelopeJson {
                    assert!(err.field().is_some(), "{name}: {err} names no field");
                }
                continue;
            }
        };
        if let Some(fields) = case.get("fields") {
            check_fields(name, &message, fields);
        }
        if let Some(fingerprint) = case.get("identity_fingerprint") {
            assert_eq!(message.identity().fingerprint().to_hex().as_str(), fingerprint, "{name} identity fingerprint");
        }
        let out = reemit(&message);
        if case["reemit_identical"] == true {
            assert_eq!(String::from_utf8_lossy(&out), String::from_utf8_lossy(text), "{name} re-emission");
            assert!(message.is_canonical(), "{name}");
            reemitted += 1;
        } else {
            // Not written by `to_bytes` (an integer ttl, an unknown key, ...): the
            // re-emission is the normal form, a fixed point that reads back the same.
            let again = FragmentMessage::parse(&out).unwrap_or_else(|e| panic!("{name}: re-emission rejected: {e}"));
            assert_eq!(again, message, "{name}");
            assert!(again.is_canonical(), "{name}");
            assert_eq!(reemit(&again), out, "{name}");
        }
    }
    assert!(reemitted >= 60, "only {reemitted} re-emission vectors");
    assert!(rejected >= 40, "only {rejected} rejection vectors");
    println!("checked {} envelope vectors ({reemitted} re-emitted byte for byte, {rejected} rejected)", cases.len());
}

/// The reader accepts any strict-JSON spelling; the writer always gives `to_bytes`.
#[test]
fn respelled_envelopes_read_the_same_and_reemit_the_original_bytes() {
    let mut checked = 0;
    for case in read_jsonl("envelopes.jsonl") {
        if case["reemit_identical"] != true {
            continue;
        }
        let name = case["name"].as_str().unwrap();
        let text = case["json"].as_str().unwrap();
        // serde_json without `preserve_order`: keys sorted at every level, compact,
        // non-ASCII as raw UTF-8, floats in its own shortest form.
        let value: Value = serde_json::from_str(text).unwrap();
        let compact = serde_json::to_string(&value).unwrap();
        let pretty = serde_json::to_string_pretty(&value).unwrap();
        let original = FragmentMessage::parse(text.as_bytes()).unwrap();
        for spelling in [compact, pretty] {
            let message =
                FragmentMessage::parse(spelling.as_bytes()).unwrap_or_else(|e| panic!("{name}: {e}\n{spelling}"));
            assert_eq!(message, original, "{name}");
            assert!(!message.is_canonical(), "{name}");
            assert_eq!(String::from_utf8(reemit(&message)).unwrap(), text, "{name}");
        }
        checked += 1;
    }
    assert!(checked >= 60);
}

/// A field broken in each ok vector in turn gives the error of SPEC §3.1 for it.
#[test]
fn breaking_one_field_of_a_valid_envelope_gives_its_error_and_field() {
    let breakages: [(&str, Value, ErrorCode); 9] = [
        ("schema_version", Value::from(3), ErrorCode::EnvelopeVersion),
        ("tenant_id", Value::from("a:b"), ErrorCode::EnvelopeField),
        ("identity", Value::from(7), ErrorCode::IdentityField),
        ("payload_size", Value::from(-1), ErrorCode::EnvelopeField),
        ("ttl", Value::from(-0.5), ErrorCode::EnvelopeField),
        ("reuse_score", Value::from(2), ErrorCode::EnvelopeField),
        ("version_id", Value::from(0), ErrorCode::EnvelopeField),
        ("consistency", Value::from("linearizable"), ErrorCode::EnvelopeField),
        ("fingerprint_compat", Value::from("0"), ErrorCode::EnvelopeField),
    ];
    for case in read_jsonl("envelopes.jsonl") {
        if case["reemit_identical"] != true {
            continue;
        }
        let value: Value = serde_json::from_str(case["json"].as_str().unwrap()).unwrap();
        for (key, replacement, code) in &breakages {
            let mut broken = value.clone();
            broken[*key] = replacement.clone();
            let text = serde_json::to_string(&broken).unwrap();
            let err = FragmentMessage::parse(text.as_bytes()).unwrap_err();
            assert_eq!((err.code(), err.field()), (*code, Some(*key)), "{} with {key} = {replacement}", case["name"]);
            let mut missing = value.clone();
            missing.as_object_mut().unwrap().remove(*key);
            let text = serde_json::to_string(&missing).unwrap();
            let err = FragmentMessage::parse(text.as_bytes()).unwrap_err();
            let code =
                if *key == "schema_version" { ErrorCode::EnvelopeVersion } else { ErrorCode::EnvelopeMissingField };
            assert_eq!((err.code(), err.field()), (code, Some(*key)), "{} without {key}", case["name"]);
        }
    }
}

/// Two fields broken at once, in every ok vector and every pair of the breakages
/// above (and a bad identity field), give the error an independent model of the SPEC
/// §3.1 order predicts: the version first, then a missing field (none here), then the
/// identity's problems, then the first other field in table order — whatever the order
/// of the keys in the text.
#[test]
fn two_faults_are_judged_in_the_spec_order() {
    const TABLE: [&str; 11] = [
        "schema_version",
        "tenant_id",
        "identity",
        "payload_ref",
        "payload_size",
        "ttl",
        "reuse_score",
        "version_id",
        "consistency",
        "hlc",
        "fingerprint_compat",
    ];
    let rank = |key: &str| match key {
        "schema_version" => 0,
        "identity" => 1,
        other => 2 + TABLE.iter().position(|k| *k == other).unwrap(),
    };
    let breakages: [(&str, Value, ErrorCode); 9] = [
        ("schema_version", Value::from(3), ErrorCode::EnvelopeVersion),
        ("tenant_id", Value::from("a:b"), ErrorCode::EnvelopeField),
        ("identity", Value::from(7), ErrorCode::IdentityField),
        ("payload_size", Value::from(-1), ErrorCode::EnvelopeField),
        ("ttl", Value::from(-0.5), ErrorCode::EnvelopeField),
        ("reuse_score", Value::from(2), ErrorCode::EnvelopeField),
        ("version_id", Value::from(0), ErrorCode::EnvelopeField),
        ("consistency", Value::from("linearizable"), ErrorCode::EnvelopeField),
        ("hlc", Value::from(-1), ErrorCode::EnvelopeField),
    ];
    let mut checked = 0;
    for case in read_jsonl("envelopes.jsonl") {
        if case["reemit_identical"] != true {
            continue;
        }
        let value: Value = serde_json::from_str(case["json"].as_str().unwrap()).unwrap();
        let mut bad_dtype = value.clone();
        bad_dtype["identity"]["dtype"] = Value::from("float17");
        for (i, (first, first_value, first_code)) in breakages.iter().enumerate() {
            for (second, second_value, second_code) in &breakages[i + 1..] {
                let mut broken = value.clone();
                broken[*first] = first_value.clone();
                broken[*second] = second_value.clone();
                let expected = if rank(first) < rank(second) { (*first_code, *first) } else { (*second_code, *second) };
                // serde_json's map is sorted, so the text's key order differs from the table's.
                let text = serde_json::to_string(&broken).unwrap();
                let err = FragmentMessage::parse(text.as_bytes()).unwrap_err();
                assert_eq!((err.code(), err.field()), (expected.0, Some(expected.1)), "{}: {text}", case["name"]);
                checked += 1;
            }
            // An identity field problem (the identity's own field name) beside each breakage.
            let mut broken = bad_dtype.clone();
            broken[*first] = first_value.clone();
            let text = serde_json::to_string(&broken).unwrap();
            let err = FragmentMessage::parse(text.as_bytes()).unwrap_err();
            let expected = match *first {
                "schema_version" => (ErrorCode::EnvelopeVersion, "schema_version"),
                "identity" => (ErrorCode::IdentityField, "identity"),
                _ => (ErrorCode::IdentityField, "dtype"),
            };
            assert_eq!((err.code(), err.field()), (expected.0, Some(expected.1)), "{}: {text}", case["name"]);
        }
    }
    assert!(checked >= 60 * 36, "{checked}");
}

#[test]
fn every_compat_vector_digest_is_reproduced() {
    let cases = read_jsonl("compat.jsonl");
    let mut derived = 0;
    for case in &cases {
        let name = case["name"].as_str().unwrap();
        let input = &case["input"];
        let text = |key: &str| input[key].as_str().unwrap_or_else(|| panic!("{name}: {key}"));
        let inputs = CompatInputs {
            model_id: text("model_id"),
            model_revision: text("model_revision"),
            model_layout_version: input["model_layout_version"].as_i64().unwrap(),
            tokenizer_name: text("tokenizer_name"),
            tokenizer_revision: text("tokenizer_revision"),
            tokenizer_layout_version: input["tokenizer_layout_version"].as_i64().unwrap(),
            dtype: text("dtype"),
            config_hash: text("config_hash"),
        };
        let expected = case["compatibility_hash"].as_str().unwrap();
        assert_eq!(inputs.fingerprint().to_hex().as_str(), expected, "{name}");
        // The hashed text is what the original hashed: Python's sorted compact ASCII dump.
        let mut json = Vec::new();
        inputs.write_json(&mut membrane_frame::IoSink(&mut json)).unwrap();
        assert!(json.is_ascii(), "{name}");
        assert_eq!(serde_json::from_slice::<Value>(&json).unwrap(), *input, "{name}");
        // Where the inputs are what an identity implies, the derived hash agrees.
        if inputs.model_layout_version == 0 && inputs.tokenizer_layout_version == 0 && inputs.config_hash.is_empty() {
            let identity = IdentityValues {
                payload_hash: "x",
                model_id: inputs.model_id,
                model_revision: inputs.model_revision,
                tokenizer_name: inputs.tokenizer_name,
                tokenizer_revision: inputs.tokenizer_revision,
                layer_range: InclusiveRange::new(0, 0),
                head_range: InclusiveRange::ALL_HEADS,
                token_span: InclusiveRange::new(0, 0),
                dtype: Dtype::from_name(inputs.dtype).unwrap(),
                shape: &[1],
            }
            .build()
            .unwrap();
            assert_eq!(identity.fingerprint_compat().to_hex().as_str(), expected, "{name} derived from an identity");
            derived += 1;
        }
    }
    assert!(cases.len() >= 40 && derived > 0, "{} cases, {derived} derived", cases.len());
    println!("checked {} compat vectors ({derived} also derived from an identity)", cases.len());
}

/// Damaged envelopes: no panic; what serde_json refuses is `envelope_json`; whatever is
/// accepted re-emits to a fixed point the reader accepts; migration agrees.
#[test]
fn mutated_envelopes_never_panic_and_json_errors_come_first() {
    use membrane_frame::migrate::{migrate_envelope_into, EnvelopeMigration, EnvelopeMigrationOptions};
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move |bound: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % bound as u64) as usize
    };
    let replacements = b"{}[]\",:0-5.eE \\u\xc3\xa9\x00nultrfas";
    let (mut accepted, mut json_errors) = (0, 0);
    let mut out = vec![0u8; 8192];
    for case in read_jsonl("envelopes.jsonl") {
        let original = case["json"].as_str().unwrap().as_bytes().to_vec();
        for _ in 0..300 {
            let mut text = original.clone();
            for _ in 0..1 + next(3) {
                let at = next(text.len());
                match next(3) {
                    0 => text[at] = replacements[next(replacements.len())],
                    1 => {
                        text.remove(at);
                    }
                    _ => text.insert(at, replacements[next(replacements.len())]),
                }
            }
            let result = FragmentMessage::parse(&text);
            if serde_json::from_slice::<Value>(&text).is_err() {
                assert_eq!(code_of(&result), "envelope_json", "{}", String::from_utf8_lossy(&text));
                json_errors += 1;
            }
            if let Ok(message) = &result {
                accepted += 1;
                let emitted = reemit(message);
                let again = FragmentMessage::parse(&emitted).unwrap();
                assert_eq!(&again, message);
                assert_eq!(reemit(&again), emitted);
            }
            match migrate_envelope_into(&text, &EnvelopeMigrationOptions::new(), &mut out) {
                Ok(EnvelopeMigration::Rewritten { len, .. }) => {
                    FragmentMessage::parse(&out[..len]).unwrap();
                }
                Ok(EnvelopeMigration::AlreadyV5) => assert!(result.is_ok()),
                Err(err) => assert!(result.is_err() || err.code() == ErrorCode::BufferTooSmall),
            }
        }
    }
    assert!(accepted > 100 && json_errors > 1000, "{accepted} accepted, {json_errors} JSON errors");
}
