//! Property tests of the frame core (issue acceptance 2): write → read → re-serialise
//! round trips, streaming agrees with one-shot reading, and damaged frames are never
//! accepted as the original.

use membrane_frame::{
    encode_frame, encode_frame_with, Dtype, Frame, IdentityValues, InclusiveRange, ParseMode, PayloadAlignment,
    PayloadIdentity, ReadOptions, Sha256Digest, StreamStatus, StreamVerifier, VerifyLevel, WriteOptions,
};
use proptest::prelude::*;

/// Owned values from which an identity is built.
#[derive(Debug, Clone)]
struct Values {
    strings: [String; 4],
    layer: (i64, i64),
    head: Option<(i64, i64)>,
    span: (i64, i64),
    dtype: Dtype,
    shape: Vec<i64>,
}

fn ordered_range() -> impl Strategy<Value = (i64, i64)> {
    (0..=i64::MAX, 0..=i64::MAX).prop_map(|(a, b)| (a.min(b), a.max(b)))
}

fn any_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z0-9./_-]{0,24}",
        any::<String>(),
        proptest::collection::vec(
            prop_oneof![
                Just('"'),
                Just('\\'),
                Just('\n'),
                Just('\u{7f}'),
                Just('\u{1}'),
                Just('é'),
                Just('😀'),
                Just('/')
            ],
            0..8
        )
        .prop_map(|chars| chars.into_iter().collect()),
    ]
}

fn values() -> impl Strategy<Value = Values> {
    (
        [any_text(), any_text(), any_text(), any_text()],
        ordered_range(),
        proptest::option::of(ordered_range()),
        ordered_range(),
        proptest::sample::select(Dtype::ALL),
        proptest::collection::vec(any::<i64>(), 1..=16),
    )
        .prop_map(|(strings, layer, head, span, dtype, shape)| Values { strings, layer, head, span, dtype, shape })
}

fn identity<'a>(values: &'a Values, payload_hash: &'a str) -> PayloadIdentity<'a> {
    let head = values.head.map_or(InclusiveRange::ALL_HEADS, |(a, b)| InclusiveRange::new(a, b));
    IdentityValues {
        payload_hash,
        model_id: &values.strings[0],
        model_revision: &values.strings[1],
        tokenizer_name: &values.strings[2],
        tokenizer_revision: &values.strings[3],
        layer_range: InclusiveRange::new(values.layer.0, values.layer.1),
        head_range: head,
        token_span: InclusiveRange::new(values.span.0, values.span.1),
        dtype: values.dtype,
        shape: &values.shape,
    }
    .build()
    .unwrap()
}

fn frame_bytes(values: &Values, payload: &[u8]) -> Vec<u8> {
    let hash = Sha256Digest::of(payload).to_hex();
    let identity = identity(values, hash.as_str());
    let mut out = vec![0u8; 70_000 + payload.len()];
    let len = encode_frame(&identity, payload, &mut out).unwrap();
    out.truncate(len);
    out
}

/// The verdict of the one-shot reader: the error code, or the facts of the frame.
fn one_shot(bytes: &[u8], level: VerifyLevel) -> Result<(u64, Option<Sha256Digest>), String> {
    Frame::parse_with(bytes, &ReadOptions::new().level(level))
        .map(|(f, _)| (f.payload().len() as u64, f.payload_digest()))
        .map_err(|e| e.code().name().to_string())
}

fn streamed(bytes: &[u8], level: VerifyLevel, cuts: &[usize]) -> Result<(u64, Option<Sha256Digest>), String> {
    let mut identity = vec![0u8; 64 * 1024];
    let mut verifier = StreamVerifier::new(ReadOptions::new().level(level), &mut identity);
    let mut rest = bytes;
    let mut cuts = cuts.iter().cycle();
    while !rest.is_empty() {
        let take = (cuts.next().copied().unwrap_or(1) % 97 + 1).min(rest.len());
        let (chunk, tail) = rest.split_at(take);
        match verifier.feed(chunk) {
            Err(e) => return Err(e.code().name().to_string()),
            Ok(StreamStatus::NeedMore(n)) => assert!(n > 0),
            Ok(StreamStatus::Complete { consumed }) => assert!(consumed <= chunk.len()),
        }
        rest = tail;
    }
    verifier.finish().map(|f| (f.payload_len(), f.payload_digest())).map_err(|e| e.code().name().to_string())
}

fn level() -> impl Strategy<Value = VerifyLevel> {
    proptest::sample::select(VerifyLevel::ALL.to_vec())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn write_read_reserialise_is_identical(values in values(), payload in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let bytes = frame_bytes(&values, &payload);
        let (frame, _) = Frame::parse_with(&bytes, &ReadOptions::new().level(VerifyLevel::Full)).unwrap();
        prop_assert_eq!(frame.payload(), &payload[..]);
        let parsed = frame.identity().unwrap();
        prop_assert!(parsed.is_canonical());
        // Re-serialise the parsed identity, and re-encode the whole frame from it.
        let mut again = vec![0u8; parsed.canonical_len()];
        parsed.write_canonical_into(&mut again).unwrap();
        prop_assert_eq!(&again[..], frame.identity_json());
        let mut reencoded = vec![0u8; bytes.len()];
        encode_frame(parsed, frame.payload(), &mut reencoded).unwrap();
        prop_assert_eq!(&reencoded, &bytes);
        // The fingerprint does not depend on how the identity was obtained.
        let hash = Sha256Digest::of(&payload).to_hex();
        prop_assert_eq!(parsed.fingerprint(), identity(&values, hash.as_str()).fingerprint());
    }

    /// SPEC §1.5: for any identity, payload, alignment `A` and base `B`, the payload
    /// lands at `(B + offset) % A == 0` with the fewest spaces; removing them gives the
    /// original writer's frame; every reader level and the streaming reader accept it and
    /// report the padding; the fingerprint is the unpadded identity's.
    #[test]
    fn aligned_frames_place_the_payload_with_the_fewest_spaces(
        values in values(),
        payload in proptest::collection::vec(any::<u8>(), 0..512),
        align_shift in 0u32..=12,
        base in prop_oneof![0u64..10_000, any::<u64>()],
        cuts in proptest::collection::vec(any::<usize>(), 1..8),
    ) {
        let align = 1u32 << align_shift;
        let hash = Sha256Digest::of(&payload).to_hex();
        let identity = identity(&values, hash.as_str());
        let options = WriteOptions::new().aligned(PayloadAlignment::new(align, base).unwrap());
        let mut out = vec![0u8; 80_000 + payload.len()];
        let len = encode_frame_with(&identity, &payload, &mut out, &options).unwrap();
        let bytes = &out[..len];
        let unpadded = frame_bytes(&values, &payload);
        let padding = bytes.len() - unpadded.len();
        let offset = unpadded.len() - payload.len() - 8 + padding;
        prop_assert_eq!((u128::from(base) + offset as u128) % u128::from(align), 0);
        // The fewest: one space less would not do (and none is added when none is needed).
        prop_assert!(padding < align as usize);
        // Removing the spaces (and correcting identity_len) gives the unpadded frame.
        let canonical_len = identity.canonical_len();
        let mut stripped = bytes[..14 + canonical_len].to_vec();
        stripped[10..14].copy_from_slice(&(canonical_len as u32).to_le_bytes());
        prop_assert!(bytes[14 + canonical_len..14 + canonical_len + padding].iter().all(|&b| b == b' '));
        stripped.extend_from_slice(&bytes[14 + canonical_len + padding..]);
        prop_assert_eq!(&stripped, &unpadded);
        for level in VerifyLevel::ALL {
            let (frame, _) = Frame::parse_with(bytes, &ReadOptions::new().level(level)).unwrap();
            prop_assert_eq!(frame.payload_offset(), offset);
            prop_assert_eq!(frame.payload(), &payload[..]);
            if let Some(parsed) = frame.identity() {
                prop_assert!(parsed.is_canonical());
                prop_assert_eq!((frame.padding(), parsed.canonical_len()), (padding, canonical_len));
                prop_assert_eq!(parsed.fingerprint(), identity.fingerprint());
            }
            prop_assert_eq!(streamed(bytes, level, &cuts), one_shot(bytes, level));
        }
    }

    #[test]
    fn streaming_agrees_with_one_shot_on_valid_frames(
        values in values(),
        payload in proptest::collection::vec(any::<u8>(), 0..4096),
        cuts in proptest::collection::vec(any::<usize>(), 1..16),
        level in level(),
    ) {
        let bytes = frame_bytes(&values, &payload);
        prop_assert_eq!(streamed(&bytes, level, &cuts), one_shot(&bytes, level));
    }

    #[test]
    fn streaming_agrees_with_one_shot_on_damaged_frames(
        values in values(),
        payload in proptest::collection::vec(any::<u8>(), 0..512),
        cuts in proptest::collection::vec(any::<usize>(), 1..16),
        damage in (any::<prop::sample::Index>(), any::<u8>(), any::<prop::sample::Index>()),
        level in level(),
    ) {
        let mut bytes = frame_bytes(&values, &payload);
        let (at, xor, cut) = damage;
        let i = at.index(bytes.len());
        bytes[i] ^= xor;
        bytes.truncate(cut.index(bytes.len() + 1).max(i / 2));
        prop_assert_eq!(streamed(&bytes, level, &cuts), one_shot(&bytes, level));
    }

    #[test]
    fn truncations_are_never_accepted(values in values(), payload in proptest::collection::vec(any::<u8>(), 0..256), cut in any::<prop::sample::Index>()) {
        let bytes = frame_bytes(&values, &payload);
        let short = &bytes[..cut.index(bytes.len())];
        for level in VerifyLevel::ALL {
            prop_assert!(Frame::parse_with(short, &ReadOptions::new().level(level)).is_err());
            prop_assert!(Frame::parse_with(short, &ReadOptions::new().level(level).mode(ParseMode::Prefix)).is_err());
        }
    }

    #[test]
    fn bit_flips_outside_the_identity_are_never_accepted(
        values in values(),
        payload in proptest::collection::vec(any::<u8>(), 1..256),
        region in 0usize..4,
        at in any::<prop::sample::Index>(),
        bit in 0u8..8,
    ) {
        let bytes = frame_bytes(&values, &payload);
        let identity_end = 14 + u32::from_le_bytes(bytes[10..14].try_into().unwrap()) as usize;
        // Header and identity_len; payload_len; payload; trailer.
        let (start, end) = match region {
            0 => (0, 14),
            1 => (identity_end, identity_end + 8),
            2 => (identity_end + 8, bytes.len() - 8),
            _ => (bytes.len() - 8, bytes.len()),
        };
        let mut damaged = bytes.clone();
        damaged[start + at.index(end - start)] ^= 1 << bit;
        // Rejected at the trailer level, which proves the payload; a layout-level read
        // may only accept a flip that leaves every length and magic intact.
        prop_assert!(Frame::parse_with(&damaged, &ReadOptions::new()).is_err());
        prop_assert!(Frame::parse_with(&damaged, &ReadOptions::new().level(VerifyLevel::Full)).is_err());
    }
}
