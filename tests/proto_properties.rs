//! Properties of the SPEC §10 protobuf codec and the chunked transfer:
//! * acceptance 2: random bytes and mutations of valid messages give a value or a clear
//!   `proto_decode`/`proto_field` error, never a panic; what decodes re-encodes stably;
//! * acceptance 3: a frame sent as `Chunk` messages of random sizes is verified end to end
//!   through `ChunkReassembler` with the one-shot reader's verdict, and broken transfers
//!   (wrong sha256_hex, missing, repeated or reordered chunk, bad offset, no is_last) are
//!   caught as `chunk_digest` / `chunk_sequence`.

use membrane_frame::proto::{Chunk, ChunkReassembler, ChunkRequest, Envelope, Message, Shape, TensorPayload};
use membrane_frame::{
    encode_frame, Dtype, ErrorCode, Frame, IdentityValues, InclusiveRange, ReadOptions, Sha256Digest, StreamVerifier,
    VerifyLevel,
};
use proptest::prelude::*;

fn encode<'a, M: Message<'a>>(msg: &M) -> Vec<u8> {
    let mut out = vec![0u8; msg.encoded_len()];
    assert_eq!(msg.encode_to_slice(&mut out).unwrap(), out.len());
    out
}

/// Decode `bytes` as the message type; if it decodes, its re-encoding must decode to the
/// same value. Errors are clear: a proto code, an offset within the input, a field name.
macro_rules! check_stable {
    ($ty:ty, $bytes:expr) => {{
        let bytes: &[u8] = $bytes;
        match <$ty>::decode(bytes) {
            Ok(msg) => {
                let again = encode(&msg);
                let decoded = <$ty>::decode(&again).expect("a re-encoded message decodes");
                assert_eq!(decoded, msg);
                Ok(())
            }
            Err(err) => {
                assert!(matches!(err.code(), ErrorCode::ProtoDecode | ErrorCode::ProtoField), "{err}");
                assert!(err.offset().is_some_and(|o| o <= bytes.len() as u64), "{err}");
                assert!(err.field().is_some(), "{err}");
                Err(err.code())
            }
        }
    }};
}

fn check_all(bytes: &[u8]) {
    let _ = check_stable!(Envelope, bytes);
    let _ = check_stable!(TensorPayload, bytes);
    let _ = check_stable!(ChunkRequest, bytes);
    let _ = check_stable!(Chunk, bytes);
}

/// Owned fields from which one message of each kind is built.
#[derive(Debug, Clone)]
struct Fields {
    strings: [String; 6],
    data: Vec<u8>,
    shape: Vec<i64>,
    ints: [i64; 3],
    int32: i32,
    flag: bool,
}

fn fields() -> impl Strategy<Value = Fields> {
    (
        [".{0,8}", ".{0,8}", ".{0,8}", ".{0,8}", ".{0,8}", ".{0,8}"],
        proptest::collection::vec(any::<u8>(), 0..64),
        proptest::collection::vec(any::<i64>(), 0..8),
        [any::<i64>(), any::<i64>(), any::<i64>()],
        any::<i32>(),
        any::<bool>(),
    )
        .prop_map(|(strings, data, shape, ints, int32, flag)| Fields { strings, data, shape, ints, int32, flag })
}

/// The four messages built from `f`, encoded.
fn encoded(f: &Fields) -> [Vec<u8>; 4] {
    let s = |i: usize| f.strings[i].as_str();
    let envelope = Envelope {
        request_id: s(0),
        tenant_id: s(1),
        model_id: s(2),
        fingerprint_compat: s(3),
        content_hash: s(4),
        total_bytes: f.ints[0],
        compression: f.int32,
        content_type: s(5),
    };
    let tensor =
        TensorPayload { data: &f.data, schema_fingerprint: s(0), shape: Shape::from_values(&f.shape), dtype: s(1) };
    let request = ChunkRequest { chunk_index: f.int32, offset: f.ints[1], length: f.ints[2] };
    let chunk = Chunk { chunk_index: f.int32, offset: f.ints[0], data: &f.data, sha256_hex: s(2), is_last: f.flag };
    let bytes = [encode(&envelope), encode(&tensor), encode(&request), encode(&chunk)];
    assert_eq!(Envelope::decode(&bytes[0]).unwrap(), envelope);
    assert_eq!(TensorPayload::decode(&bytes[1]).unwrap(), tensor);
    assert_eq!(ChunkRequest::decode(&bytes[2]).unwrap(), request);
    assert_eq!(Chunk::decode(&bytes[3]).unwrap(), chunk);
    bytes
}

#[derive(Debug, Clone)]
enum Mutation {
    Flip(usize, u8),
    Truncate(usize),
    Insert(usize, u8),
    Delete(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 1..=255u8).prop_map(|(i, x)| Mutation::Flip(i, x)),
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Insert(i, b)),
        any::<usize>().prop_map(Mutation::Delete),
    ]
}

fn mutate(bytes: &mut Vec<u8>, m: &Mutation) {
    let n = bytes.len();
    match *m {
        Mutation::Flip(i, x) if n > 0 => bytes[i % n] ^= x,
        Mutation::Truncate(i) => bytes.truncate(i % (n + 1)),
        Mutation::Insert(i, b) => bytes.insert(i % (n + 1), b),
        Mutation::Delete(i) if n > 0 => {
            bytes.remove(i % n);
        }
        _ => {}
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..96)) {
        check_all(&bytes);
    }

    #[test]
    fn mutated_messages_never_panic(f in fields(), mutations in proptest::collection::vec(mutation(), 1..4)) {
        for mut bytes in encoded(&f) {
            for m in &mutations {
                mutate(&mut bytes, m);
            }
            check_all(&bytes);
        }
    }

    #[test]
    fn truncated_messages_are_proto_decode(f in fields()) {
        // A cut never turns a valid message into a wire-type or UTF-8 problem of its
        // own kind: it decodes (cut at a field boundary) or is `proto_decode`.
        let [envelope, tensor, request, chunk] = encoded(&f);
        for end in 0..envelope.len() {
            prop_assert!(check_stable!(Envelope, &envelope[..end]) != Err(ErrorCode::ProtoField));
        }
        for end in 0..tensor.len() {
            prop_assert!(check_stable!(TensorPayload, &tensor[..end]) != Err(ErrorCode::ProtoField));
        }
        for end in 0..request.len() {
            prop_assert!(check_stable!(ChunkRequest, &request[..end]) != Err(ErrorCode::ProtoField));
        }
        for end in 0..chunk.len() {
            prop_assert!(check_stable!(Chunk, &chunk[..end]) != Err(ErrorCode::ProtoField));
        }
    }
}

#[test]
fn prefixes_of_a_valid_chunk_fail_only_as_proto_decode() {
    let hex = Sha256Digest::of(b"\xC3\xA9 payload").to_hex();
    let chunk =
        Chunk { chunk_index: -7, offset: 1 << 40, data: b"\xC3\xA9 payload", sha256_hex: hex.as_str(), is_last: true };
    let bytes = encode(&chunk);
    for end in 0..bytes.len() {
        if let Err(code) = check_stable!(Chunk, &bytes[..end]) {
            assert_eq!(code, ErrorCode::ProtoDecode, "prefix of {end} bytes");
        }
    }
}

// ---- acceptance 3: a frame as a stream of Chunk messages -----------------------------

fn frame(payload: &[u8]) -> Vec<u8> {
    let hash = Sha256Digest::of(payload).to_hex();
    let identity = IdentityValues {
        payload_hash: hash.as_str(),
        model_id: "llama-3-8b",
        model_revision: "",
        tokenizer_name: "llama-3-8b",
        tokenizer_revision: "",
        layer_range: InclusiveRange::new(0, 3),
        head_range: InclusiveRange::ALL_HEADS,
        token_span: InclusiveRange::new(0, 15),
        dtype: Dtype::Float16,
        shape: &[1, 1, 8, 16, 16],
    }
    .build()
    .unwrap();
    let mut out = vec![0u8; 4096 + payload.len()];
    let len = encode_frame(&identity, payload, &mut out).unwrap();
    out.truncate(len);
    out
}

/// Cut `frame` at sizes taken from `cuts` (1..=max) and encode each piece as a Chunk.
fn send(frame: &[u8], cuts: &[usize], max: usize) -> Vec<Vec<u8>> {
    let mut wire = Vec::new();
    let mut offset = 0;
    let mut cuts = cuts.iter().cycle();
    while offset < frame.len() || wire.is_empty() {
        let take = (cuts.next().copied().unwrap_or(1) % max + 1).min(frame.len() - offset);
        let data = &frame[offset..offset + take];
        let hex = Sha256Digest::of(data).to_hex();
        let chunk = Chunk {
            chunk_index: wire.len() as i32,
            offset: offset as i64,
            data,
            sha256_hex: hex.as_str(),
            is_last: offset + take == frame.len(),
        };
        wire.push(encode(&chunk));
        offset += take;
    }
    wire
}

type Verdict = Result<(u64, Option<Sha256Digest>), ErrorCode>;

/// Decode each message and push it; the verdict of the reassembler.
fn receive(wire: &[Vec<u8>], level: VerifyLevel) -> Verdict {
    let mut identity = [0u8; 4096];
    let verifier = StreamVerifier::new(ReadOptions::new().level(level), &mut identity);
    let mut reassembler = ChunkReassembler::new(verifier);
    for message in wire {
        let chunk = Chunk::decode(message).map_err(|e| e.code())?;
        reassembler.push(&chunk).map_err(|e| e.code())?;
    }
    reassembler.finish().map(|f| (f.payload_len(), f.payload_digest())).map_err(|e| e.code())
}

fn one_shot(bytes: &[u8], level: VerifyLevel) -> Verdict {
    Frame::parse_with(bytes, &ReadOptions::new().level(level))
        .map(|(f, _)| (f.payload().len() as u64, f.payload_digest()))
        .map_err(|e| e.code())
}

/// Rewrite message `i` of `wire` with `edit` applied to its decoded chunk.
fn edit(wire: &mut [Vec<u8>], i: usize, edit: impl FnOnce(&mut Chunk<'_>)) {
    let old = wire[i].clone();
    let mut chunk = Chunk::decode(&old).unwrap();
    edit(&mut chunk);
    wire[i] = encode(&chunk);
}

#[test]
fn reassembler_state_is_small_whatever_the_frame() {
    // The reassembler holds a SHA-256 state, the header and counters: no payload.
    assert!(core::mem::size_of::<ChunkReassembler<'_>>() < 512, "{}", core::mem::size_of::<ChunkReassembler<'_>>());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn chunked_transfer_agrees_with_one_shot(
        payload in proptest::collection::vec(any::<u8>(), 0..3000),
        cuts in proptest::collection::vec(any::<usize>(), 1..16),
        max in 1usize..600,
        damage in proptest::option::of((any::<usize>(), 1..=255u8)),
    ) {
        let mut bytes = frame(&payload);
        if let Some((i, x)) = damage {
            let n = bytes.len();
            bytes[i % n] ^= x; // damage the frame itself: the transport stays intact
        }
        let wire = send(&bytes, &cuts, max);
        for level in [VerifyLevel::Trailer, VerifyLevel::Full] {
            prop_assert_eq!(receive(&wire, level), one_shot(&bytes, level));
        }
        if damage.is_none() {
            prop_assert!(receive(&wire, VerifyLevel::Full).is_ok());
        }
    }

    #[test]
    fn broken_transfers_are_caught(
        payload in proptest::collection::vec(any::<u8>(), 1..2000),
        cuts in proptest::collection::vec(any::<usize>(), 1..8),
        pick in any::<usize>(),
        kind in 0u8..7,
    ) {
        let bytes = frame(&payload);
        let mut wire = send(&bytes, &cuts, 300);
        prop_assume!(wire.len() >= 3);
        let n = wire.len();
        let i = pick % (n - 1); // a chunk that is not the last
        let expected = match kind {
            0 => {
                edit(&mut wire, i, |c| c.sha256_hex = "00");
                ErrorCode::ChunkDigest
            }
            1 => {
                // sha256_hex of other data (a byte of the data changed in transit)
                let old = wire[i].clone();
                let chunk = Chunk::decode(&old).unwrap();
                let mut data = chunk.data.to_vec();
                data[0] ^= 1;
                wire[i] = encode(&Chunk { data: &data, ..chunk });
                ErrorCode::ChunkDigest
            }
            2 => {
                wire.remove(i);
                ErrorCode::ChunkSequence
            }
            3 => {
                wire.swap(i, i + 1);
                ErrorCode::ChunkSequence
            }
            4 => {
                edit(&mut wire, i, |c| c.offset += 1);
                ErrorCode::ChunkSequence
            }
            5 => {
                wire.pop(); // the is_last chunk never arrives
                ErrorCode::ChunkSequence
            }
            _ => {
                let again = wire[i].clone();
                wire.insert(i + 1, again); // a chunk repeated
                ErrorCode::ChunkSequence
            }
        };
        prop_assert_eq!(receive(&wire, VerifyLevel::Full), Err(expected));
    }
}

#[test]
fn a_chunk_after_is_last_is_refused() {
    let bytes = frame(b"payload");
    let mut wire = send(&bytes, &[10], 10);
    let last = Chunk::decode(wire.last().unwrap()).unwrap();
    let hex = Sha256Digest::of(b"").to_hex();
    let extra = Chunk {
        chunk_index: last.chunk_index + 1,
        offset: bytes.len() as i64,
        data: b"",
        sha256_hex: hex.as_str(),
        is_last: true,
    };
    wire.push(encode(&extra));
    assert_eq!(receive(&wire, VerifyLevel::Full), Err(ErrorCode::ChunkSequence));
}
