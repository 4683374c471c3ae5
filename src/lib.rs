//! Reader, verifier and writer for the Membrane v5 KV-cache fragment formats.
//!
//! The core is `no_std` and allocation-free: it parses and verifies frames in place on
//! borrowed buffers or memory maps, and writes them into caller buffers or any
//! [`ByteSink`], byte-compatible with the deployed Python implementation. The contract
//! is `SPEC.md`; section numbers in these docs refer to it.
//!
//! ```
//! use membrane_frame::{Frame, ReadOptions, VerifyLevel};
//! # let bytes = membrane_frame::example_frame();
//! let (frame, _) = Frame::parse_with(&bytes, &ReadOptions::new().level(VerifyLevel::Full))?;
//! println!("{} bytes of {}", frame.payload().len(), frame.identity().unwrap().dtype());
//! # Ok::<(), membrane_frame::Error>(())
//! ```
#![cfg_attr(not(any(test, feature = "std")), no_std)]
// No unsafe code but three measured kernels, allowed there alone: `batch_hash::sha_ni`
// (SHA-NI intrinsics), `batch_hash::avx512` (sixteen SHA-256 lanes in AVX-512) and
// `json::sse2` (string bytes sixteen a step); the C ABI (the `membrane-frame-ffi`
// crate) holds the rest.
#![deny(unsafe_code)]
#![warn(missing_docs)]
#![warn(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::todo,
    clippy::unimplemented,
    clippy::std_instead_of_core
)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::std_instead_of_core))]

pub mod batch_hash;
mod decimal;
mod digest;
pub mod envelope;
mod error;
pub mod frame;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
pub mod hlc;
pub mod identity;
pub mod json;
pub mod migrate;
mod page_ahead;
pub mod proto;
pub mod pyfloat;
pub mod refcount;
#[cfg(all(test, feature = "std"))]
mod scratch;
mod sink;
pub mod snapshot;
pub mod table;
pub mod tombstone;

pub use digest::{HexDigest, Sha256Digest, Sha256Hasher};
pub use envelope::{CompatInputs, Consistency, EnvelopeBuilder, FragmentMessage};
pub use error::{Error, ErrorClass, ErrorCode};
pub use frame::{
    encode_frame, encode_frame_with, ChunkedFrameWriter, ChunkedOutcome, Frame, FrameEncoder, FrameHeader, ParseMode,
    PayloadAlignment, PayloadElement, ReadOptions, StreamStatus, StreamVerifier, StreamedFrame, VerifyLevel,
    WriteError, WriteOptions,
};
pub use hlc::Hlc;
pub use identity::{Dtype, IdentityValues, InclusiveRange, PayloadIdentity};
#[cfg(feature = "std")]
pub use sink::IoSink;
pub use sink::{BufferFull, ByteSink, CountingSink, SliceSink};

#[doc(hidden)]
/// A small valid frame for documentation examples.
#[cfg(feature = "std")]
pub fn example_frame() -> std::vec::Vec<u8> {
    frame::example_frame()
}
