//! The canonical frame (SPEC §1): reading in place, streaming verification, writing.

mod align;
mod batch;
#[cfg(feature = "std")]
mod file_state;
mod header;
mod reader;
mod stream;
mod stream_batch;
mod typed;
#[cfg(feature = "std")]
mod vectored;
mod writer;

pub(crate) use align::trailing_spaces;
pub use align::{alignment_of, PayloadAlignment, MAX_PAYLOAD_ALIGN};
pub use batch::{verify_batch, VERIFY_BATCH_GROUP};
#[cfg(feature = "std")]
pub use file_state::{FileChange, FileState};
pub use header::{
    magic_name, FrameHeader, HeadFields, HeaderKind, DEFAULT_IDENTITY_LIMIT, FRAME_OVERHEAD, HEADER_LEN, MAGIC_V2,
    MAGIC_V4, MAGIC_V5, MIN_FRAME_PREFIX, SCHEMA_V5,
};
pub(crate) use reader::verify_as_v5;
pub use reader::{Frame, ParseMode, ReadOptions, VerifyLevel};
pub use stream::{StreamStatus, StreamVerifier, StreamedFrame};
pub use stream_batch::StreamBatch;
pub use typed::{view_payload_as, PayloadElement};
#[cfg(feature = "std")]
pub use vectored::{write_frame_vectored, WrittenFrame};
pub use writer::{
    encode_frame, encode_frame_with, ChunkedFrameWriter, ChunkedOutcome, FrameEncoder, WriteError, WriteOptions,
};

/// A small valid frame (payload `hello`) for documentation examples and tests.
#[cfg(any(test, feature = "std"))]
#[allow(clippy::expect_used)]
pub(crate) fn example_frame() -> std::vec::Vec<u8> {
    use crate::{Dtype, IdentityValues, InclusiveRange, Sha256Digest};
    let payload = b"hello";
    let hash = Sha256Digest::of(payload).to_hex();
    let identity = IdentityValues {
        payload_hash: hash.as_str(),
        model_id: "llama-3-8b",
        model_revision: "",
        tokenizer_name: "llama-3-8b",
        tokenizer_revision: "",
        layer_range: InclusiveRange::new(0, 31),
        head_range: InclusiveRange::ALL_HEADS,
        token_span: InclusiveRange::new(0, 127),
        dtype: Dtype::Float16,
        shape: &[1, 32, 8, 128, 64],
    }
    .build()
    .expect("example identity is valid");
    let mut out = std::vec![0u8; 1024];
    let len = encode_frame(&identity, payload, &mut out).expect("example frame fits");
    out.truncate(len);
    out
}

#[cfg(all(test, feature = "std"))]
mod tests;
