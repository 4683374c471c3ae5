//! The SPEC §10 protobuf decoders: never panic; errors carry a proto code, an offset
//! inside the input and a field name; what decodes re-encodes (with an exact length) to
//! bytes that decode to the same value, and re-encoding is a fixed point. The same bytes
//! also go through a `ChunkReassembler` as a stream of length-prefixed Chunk messages.
#![no_main]

use libfuzzer_sys::fuzz_target;
use membrane_frame::proto::{Chunk, ChunkReassembler, ChunkRequest, Envelope, Message, TensorPayload};
use membrane_frame::{ErrorCode, ReadOptions, StreamVerifier};

macro_rules! round_trip {
    ($ty:ty, $data:expr) => {{
        let data: &[u8] = $data;
        match <$ty>::decode(data) {
            Ok(msg) => {
                let mut out = vec![0u8; msg.encoded_len()];
                let len = msg.encode_to_slice(&mut out).expect("encoded_len is enough");
                assert_eq!(len, out.len());
                let again = <$ty>::decode(&out).expect("re-encoded message decodes");
                assert_eq!(again, msg);
                let mut twice = vec![0u8; again.encoded_len()];
                again.encode_to_slice(&mut twice).expect("encoded_len is enough");
                assert_eq!(twice, out, "re-encoding is a fixed point");
            }
            Err(err) => {
                assert!(matches!(err.code(), ErrorCode::ProtoDecode | ErrorCode::ProtoField));
                assert!(err.offset().is_some_and(|o| o <= data.len() as u64));
                assert!(err.field().is_some());
                let _ = err.to_string();
            }
        }
    }};
}

fuzz_target!(|data: &[u8]| {
    round_trip!(Envelope, data);
    round_trip!(TensorPayload, data);
    round_trip!(ChunkRequest, data);
    round_trip!(Chunk, data);

    // A stream of Chunk messages, each prefixed by a one-byte length.
    let mut identity = [0u8; 4096];
    let verifier = StreamVerifier::new(ReadOptions::new(), &mut identity);
    let mut reassembler = ChunkReassembler::new(verifier);
    let mut rest = data;
    while let Some((&len, tail)) = rest.split_first() {
        let (message, tail) = tail.split_at(usize::from(len).min(tail.len()));
        rest = tail;
        let Ok(chunk) = Chunk::decode(message) else { continue };
        if reassembler.push(&chunk).is_err() {
            return;
        }
    }
    let _ = reassembler.finish();
});
