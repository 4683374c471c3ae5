//! The experimental protobuf envelope and chunked transfer messages (SPEC §10,
//! `proto/membrane/wire/v3/wire_v3.proto`): zero-copy, allocation-free proto3 decoding
//! and exact-length encoding of `Envelope`, `TensorPayload`, `ChunkRequest` and `Chunk`,
//! and a [`ChunkReassembler`] that verifies a frame sent as `Chunk`s through the frame
//! core's [`StreamVerifier`](crate::StreamVerifier) without buffering it.
//!
//! The codec is written here (about 300 lines, no dependency): the no_std protobuf
//! crates either allocate for `bytes`/`string`/`repeated` fields or generate code at
//! build time; these four flat messages need neither.
//!
//! Proto3 decoding rules (see `docs/design.md`): unknown fields of wire types 0, 1, 2
//! and 5 are skipped; wire types 3 and 4 (groups, which proto3 does not have) and 6, 7
//! are `proto_decode`; the last value of a scalar field seen twice wins; `repeated
//! int64 shape` is read packed or unpacked, mixed in any order; strings must be UTF-8
//! (`proto_field`); varints longer than 10 bytes and lengths past the end are
//! `proto_decode`; an `int32` keeps the low 32 bits of its varint.
//!
//! ```
//! use membrane_frame::proto::{Envelope, Message};
//! // request_id = "r-1", total_bytes = -1 (a 10-byte varint), an unknown field 99.
//! let bytes = [0x0A, 3, b'r', b'-', b'1',
//!              0x30, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01,
//!              0x98, 0x06, 0x07];
//! let envelope = Envelope::decode(&bytes)?;
//! assert_eq!((envelope.request_id, envelope.total_bytes), ("r-1", -1));
//! # Ok::<(), membrane_frame::Error>(())
//! ```

mod messages;
mod reassemble;
#[cfg(test)]
mod tests;
mod wire;

pub use messages::{Chunk, ChunkRequest, Compression, Envelope, Message, Shape, ShapeIter, TensorPayload};
pub use reassemble::ChunkReassembler;
