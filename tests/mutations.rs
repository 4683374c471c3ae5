//! Exhaustive mutation suite (SPEC §1.1): every valid frame in the vectors, cut at every
//! length and with single bits flipped in every region, must be refused with the error
//! the SPEC's check order predicts — or, for flips inside the identity JSON, be refused
//! or read as a *different* identity. Never a panic, never the original frame.
//!
//! The expectation is not hard-coded per vector: [`predict`] is an independent model of
//! the §1.1 check order (header fields, lengths with checked arithmetic, the identity
//! limit, the trailer and `payload_hash` digests), with serde_json plus a duplicate-key
//! check as the strict-JSON oracle for check 8 and a direct reading of the §2.2 field
//! rules on serde_json's value for check 9. The reader must give exactly the model's
//! code (and so its class) for every mutant.
//!
//! Mutants, per valid frame (53 in the current vectors):
//! * every truncation `0 .. len` (at the trailer level; those that cut the head, also at
//!   the layout, identity and full levels);
//! * every bit of the header (magic, schema, reserved, identity_len), of payload_len and
//!   of the trailer, at all four levels;
//! * every bit of the identity JSON, at the trailer and full levels;
//! * every bit of a *sample* of payload bytes — the first and last 16 and 32 spread
//!   evenly in between — at the trailer level (each payload mutant costs a SHA-256 of
//!   the payload; the region's prediction does not depend on the position, and the full
//!   level runs the same check 12 first).
//!
//! The last line of the output is the count: `mutations: N mutants of F valid frames,
//! R rejected as predicted, …`.

mod common;

use common::{read_jsonl, read_vector_file};
use membrane_frame::{ErrorClass, ErrorCode, Frame, ReadOptions, VerifyLevel};
use serde::de::{Deserialize, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::fmt;

const DEFAULT_IDENTITY_LIMIT: u64 = 64 * 1024;
const DTYPES: [&str; 12] = [
    "float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "fp8_e4m3", "fp8_e5m2",
    "nf4",
];

/// A serde_json value read with duplicate keys refused at every level (serde_json alone
/// keeps the last one): together, the strict-JSON oracle of SPEC §4.
struct Strict(Value);

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Strict, D::Error> {
        deserializer.deserialize_any(StrictVisitor)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Strict;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Strict, E> {
        Ok(Strict(Value::Bool(v)))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Strict, E> {
        Ok(Strict(Value::from(v)))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Strict, E> {
        Ok(Strict(Value::from(v)))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Strict, E> {
        Ok(Strict(Value::from(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Strict, E> {
        Ok(Strict(Value::String(v.to_string())))
    }
    fn visit_string<E>(self, v: String) -> Result<Strict, E> {
        Ok(Strict(Value::String(v)))
    }
    fn visit_unit<E>(self) -> Result<Strict, E> {
        Ok(Strict(Value::Null))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Strict, A::Error> {
        let mut items = Vec::new();
        while let Some(Strict(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Strict(Value::Array(items)))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Strict, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let Strict(value) = map.next_value()?;
            if out.insert(key, value).is_some() {
                return Err(A::Error::custom("duplicate key"));
            }
        }
        Ok(Strict(Value::Object(out)))
    }
}

/// A JSON integer token (`-?(0|[1-9][0-9]*)`, SPEC §2.1: no fraction, no exponent)
/// within i64. Read from the token text, because serde_json's value does not keep the
/// difference between `-0` (an integer token) and `-0.0`.
fn int_token(raw: &RawValue) -> Option<i64> {
    let text = raw.get().trim();
    let digits = text.strip_prefix('-').unwrap_or(text);
    let well_formed =
        !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) && (digits == "0" || !digits.starts_with('0'));
    if well_formed {
        text.parse().ok()
    } else {
        None
    }
}

/// Check 8 and 9 of the model: `Err(code)` or the identity's value.
fn judge_identity(text: &[u8]) -> Result<Value, ErrorCode> {
    let Ok(Strict(value)) = serde_json::from_slice::<Strict>(text) else {
        return Err(ErrorCode::IdentityJson);
    };
    if !value.is_object() {
        return Err(ErrorCode::IdentityJson); // SPEC §1.1 check 8: "not an object"
    }
    let fields: HashMap<String, &RawValue> = serde_json::from_slice(text).unwrap();
    let string = |key: &str| fields.get(key).and_then(|raw| serde_json::from_str::<String>(raw.get()).ok());
    let ints = |key: &str| -> Option<Vec<i64>> {
        let items: Vec<&RawValue> = serde_json::from_str(fields.get(key)?.get()).ok()?;
        items.into_iter().map(int_token).collect()
    };
    let range = |key: &str| match ints(key)?.as_slice() {
        [a, b] => Some((*a, *b)),
        _ => None,
    };
    let ordered = |r: Option<(i64, i64)>| r.is_some_and(|(a, b)| 0 <= a && a <= b);
    let strings_ok =
        ["model_id", "model_revision", "tokenizer_name", "tokenizer_revision"].iter().all(|k| string(k).is_some());
    let hash_ok = string("payload_hash").is_some_and(|s| !s.is_empty());
    let head = range("head_range");
    let head_ok = head == Some((-1, -1)) || ordered(head);
    let dtype_ok = string("dtype").is_some_and(|d| DTYPES.contains(&d.as_str()));
    let shape_ok = ints("shape").is_some_and(|dims| (1..=16).contains(&dims.len()));
    let ok = fields.len() == 10
        && strings_ok
        && hash_ok
        && ordered(range("layer_range"))
        && head_ok
        && ordered(range("token_span"))
        && dtype_ok
        && shape_ok;
    if ok {
        Ok(value)
    } else {
        Err(ErrorCode::IdentityField)
    }
}

/// What the model remembers between mutants: identity verdicts by text, and the
/// original payload with its digest.
#[derive(Default)]
struct Memo {
    identities: HashMap<Vec<u8>, Result<Value, ErrorCode>>,
    payload: Vec<u8>,
    digest: [u8; 32],
}

/// The model's verdict on a buffer: the code of the first failing check of SPEC §1.1
/// in exact mode at `level`, or `None` for "accepted".
fn predict(buf: &[u8], level: VerifyLevel, memo: &mut Memo) -> Option<ErrorCode> {
    let len = buf.len() as u64;
    if len < 22 {
        return Some(ErrorCode::TooShort);
    }
    let u32_at = |at: usize| u32::from_le_bytes(buf[at..at + 4].try_into().unwrap());
    match &buf[0..4] {
        [0xC0, 0xDE, 0x01, 0x04] | [0xC0, 0xDE, 0x01, 0x02] => return Some(ErrorCode::LegacyFrame),
        [0xC0, 0xDE, 0x01, 0x05] => {}
        _ => return Some(ErrorCode::BadMagic),
    }
    if u16::from_le_bytes([buf[4], buf[5]]) != 5 {
        return Some(ErrorCode::SchemaMismatch);
    }
    if u32_at(6) != 0 {
        return Some(ErrorCode::ReservedNonzero);
    }
    let l = u64::from(u32_at(10));
    if 14 + l + 8 > len {
        return Some(ErrorCode::IdentityOverrun);
    }
    if l > DEFAULT_IDENTITY_LIMIT {
        return Some(ErrorCode::IdentityTooLarge);
    }
    let l = l as usize;
    let identity_text = &buf[14..14 + l];
    let identity =
        memo.identities.entry(identity_text.to_vec()).or_insert_with(|| judge_identity(identity_text)).clone();
    if level >= VerifyLevel::Identity {
        if let Err(code) = identity {
            return Some(code);
        }
    }
    let p = u64::from_le_bytes(buf[14 + l..22 + l].try_into().unwrap());
    match (30 + l as u64).checked_add(p) {
        Some(total) if total <= len => {
            if total < len {
                return Some(ErrorCode::TrailingBytes);
            }
        }
        _ => return Some(ErrorCode::PayloadOverrun),
    }
    if level >= VerifyLevel::Trailer {
        let payload = &buf[22 + l..buf.len() - 8];
        // Most mutants leave the payload alone: reuse its digest then.
        let digest: [u8; 32] = if payload == memo.payload { memo.digest } else { Sha256::digest(payload).into() };
        if digest[..8] != buf[buf.len() - 8..] {
            return Some(ErrorCode::TrailerMismatch);
        }
        if level == VerifyLevel::Full {
            let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
            let stated = identity.as_ref().ok().and_then(|v| v["payload_hash"].as_str().map(str::to_string));
            if stated.as_deref() != Some(hex.as_str()) {
                return Some(ErrorCode::PayloadHashMismatch);
            }
        }
    }
    None
}

/// SPEC §8: the class of each frame code.
fn spec_class(code: ErrorCode) -> ErrorClass {
    match code {
        ErrorCode::TooShort
        | ErrorCode::IdentityOverrun
        | ErrorCode::PayloadOverrun
        | ErrorCode::TrailingBytes
        | ErrorCode::TrailerMismatch
        | ErrorCode::PayloadHashMismatch => ErrorClass::Corrupt,
        _ => ErrorClass::Schema,
    }
}

#[derive(Default)]
struct Tally {
    mutants: u64,
    rejected: u64,
    different_identity: u64,
    same_identity: u64,
    accepted_unread: u64,
    by_region: HashMap<&'static str, (u64, HashMap<&'static str, u64>)>,
}

struct Case<'a> {
    name: &'a str,
    original: &'a [u8],
    original_identity: Value,
    original_fingerprint: [u8; 32],
}

impl Tally {
    fn check(
        &mut self,
        case: &Case<'_>,
        region: &'static str,
        what: &str,
        mutant: &[u8],
        levels: &[VerifyLevel],
        memo: &mut Memo,
    ) {
        for &level in levels {
            self.mutants += 1;
            let predicted = predict(mutant, level, memo);
            let actual = Frame::parse_with(mutant, &ReadOptions::new().level(level));
            let context = || format!("{} {region} {what} at {level:?}", case.name);
            let entry = self.by_region.entry(region).or_default();
            entry.0 += 1;
            match (&actual, predicted) {
                (Err(err), Some(code)) => {
                    assert_eq!(err.code(), code, "{}: {err}", context());
                    assert_eq!(err.class(), spec_class(code), "{}: class", context());
                    self.rejected += 1;
                    *entry.1.entry(code.name()).or_default() += 1;
                }
                (Ok((frame, _)), None) => {
                    // Only a changed identity (or, at the layout level, unread bytes) can
                    // leave the frame valid; it must never pass as the original identity
                    // unless the bytes mean the same value.
                    assert_ne!(mutant, case.original, "{}", context());
                    *entry.1.entry("accepted").or_default() += 1;
                    if let Some(identity) = frame.identity() {
                        let value = serde_json::from_slice::<Value>(frame.identity_json()).unwrap();
                        let same_value = value == case.original_identity;
                        let same_fingerprint = *identity.fingerprint().as_bytes() == case.original_fingerprint;
                        assert_eq!(same_value, same_fingerprint, "{}: identity value vs fingerprint", context());
                        if !same_value {
                            self.different_identity += 1;
                        } else if region == "identity_json" {
                            self.same_identity += 1;
                        } else {
                            self.accepted_unread += 1;
                        }
                    } else {
                        self.accepted_unread += 1;
                    }
                    assert!(
                        region == "identity_json" || level == VerifyLevel::Layout || level == VerifyLevel::Identity,
                        "{}: accepted",
                        context()
                    );
                }
                _ => panic!("{}: reader says {:?}, model predicts {predicted:?}", context(), actual.map(|_| "ok")),
            }
        }
    }
}

/// `harness = false` (Cargo.toml), so the count is printed on every run, not only when
/// a test fails: a suite that silently tried nothing would be worthless.
fn main() {
    if !common::run_custom_harness("every_truncation_and_single_bit_flip_is_refused_as_predicted") {
        return;
    }
    every_truncation_and_single_bit_flip_is_refused_as_predicted();
}

fn every_truncation_and_single_bit_flip_is_refused_as_predicted() {
    let all_levels = VerifyLevel::ALL;
    let checked = [VerifyLevel::Trailer, VerifyLevel::Full];
    let mut tally = Tally::default();
    let mut memo = Memo::default();
    let mut times: HashMap<&str, std::time::Duration> = HashMap::new();
    let mut frames = 0;
    for vector in read_jsonl("frames.jsonl") {
        if vector["expect"] != "ok" {
            continue;
        }
        frames += 1;
        let bytes = read_vector_file(vector["file"].as_str().unwrap());
        let original = Frame::parse(&bytes).unwrap();
        let l = original.identity_json().len();
        let p = original.payload().len();
        let case = Case {
            name: vector["name"].as_str().unwrap(),
            original: &bytes,
            original_identity: serde_json::from_slice(original.identity_json()).unwrap(),
            original_fingerprint: *original.identity().unwrap().fingerprint().as_bytes(),
        };
        memo.payload = original.payload().to_vec();
        memo.digest = Sha256::digest(original.payload()).into();
        // The model agrees with the vector on the unmutated frame.
        assert_eq!(predict(&bytes, VerifyLevel::Trailer, &mut memo), None, "{}", case.name);

        let start = std::time::Instant::now();
        for cut in 0..bytes.len() {
            let levels: &[VerifyLevel] = if cut < 22 + l { &all_levels } else { &[VerifyLevel::Trailer] };
            tally.check(&case, "truncation", &format!("to {cut}"), &bytes[..cut], levels, &mut memo);
        }

        let payload_sample: Vec<usize> = {
            let mut at: Vec<usize> = (0..p.min(16)).chain(p.saturating_sub(16)..p).collect();
            at.extend((1..=32).map(|i| i * p / 33));
            at.sort_unstable();
            at.dedup();
            at.into_iter().filter(|&i| i < p).map(|i| 22 + l + i).collect()
        };
        let regions: [(&'static str, Vec<usize>, &[VerifyLevel]); 8] = [
            ("magic", (0..4).collect(), &all_levels),
            ("schema", (4..6).collect(), &all_levels),
            ("reserved", (6..10).collect(), &all_levels),
            ("identity_len", (10..14).collect(), &all_levels),
            ("identity_json", (14..14 + l).collect(), &checked),
            ("payload_len", (14 + l..22 + l).collect(), &all_levels),
            ("payload (sampled)", payload_sample, &[VerifyLevel::Trailer]),
            ("trailer", (22 + l + p..30 + l + p).collect(), &all_levels),
        ];
        *times.entry("truncation").or_default() += start.elapsed();
        let mut mutant = bytes.clone();
        for (region, offsets, levels) in regions {
            let start = std::time::Instant::now();
            for at in offsets {
                for bit in 0..8 {
                    mutant[at] ^= 1 << bit;
                    tally.check(&case, region, &format!("byte {at} bit {bit}"), &mutant, levels, &mut memo);
                    mutant[at] ^= 1 << bit;
                }
            }
            *times.entry(region).or_default() += start.elapsed();
        }
    }
    assert!(frames > 0, "no valid frame vectors");
    let mut regions: Vec<_> = tally.by_region.iter().collect();
    regions.sort_by_key(|(region, _)| **region);
    for (region, (count, codes)) in regions {
        let mut codes: Vec<_> = codes.iter().collect();
        codes.sort();
        println!("mutations: {region}: {count} mutants in {:.1?}: {codes:?}", times[region]);
    }
    println!(
        "mutations: {} mutants of {frames} valid frames, {} rejected as predicted, {} identity JSON flips read as a \
         different identity and {} as the same value spelled differently (a `\\u` escape's hex digit in upper case), {} accepted at \
         levels that do not read the flipped bytes; all as predicted",
        tally.mutants, tally.rejected, tally.different_identity, tally.same_identity, tally.accepted_unread
    );
    assert_eq!(tally.rejected + tally.different_identity + tally.same_identity + tally.accepted_unread, tally.mutants);
}
