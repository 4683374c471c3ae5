//! A frame that arrives as a sequence of `Chunk` messages, verified as it streams.

use super::messages::Chunk;
use crate::error::{Error, ErrorCode};
use crate::frame::{StreamStatus, StreamVerifier, StreamedFrame};

/// Checks a sequence of [`Chunk`]s and passes their data through a
/// [`StreamVerifier`]: nothing is buffered beyond what the verifier keeps (the identity),
/// so memory is bounded by the caller's chunk buffer whatever the frame's size.
///
/// Each chunk must carry the next `chunk_index` (starting at 0), the next `offset`
/// (starting at 0, advancing by the previous chunk's data length) and a `sha256_hex`
/// matching its data; no chunk may follow the one marked `is_last`. Breaks are
/// `chunk_sequence` or `chunk_digest`, reported at the chunk's `offset`, before the
/// chunk's data reaches the verifier. The verdict on the frame itself is the
/// verifier's: its errors come out of [`push`](Self::push) as soon as they are certain,
/// and [`finish`](Self::finish) gives its final result once the `is_last` chunk is in.
///
/// ```
/// use membrane_frame::proto::{Chunk, ChunkReassembler};
/// use membrane_frame::{ParseMode, ReadOptions, Sha256Digest, StreamVerifier, VerifyLevel};
/// # let frame = membrane_frame::example_frame();
/// let mut identity = [0u8; 4096];
/// let verifier = StreamVerifier::new(ReadOptions::new().level(VerifyLevel::Full), &mut identity);
/// let mut reassembler = ChunkReassembler::new(verifier);
/// let pieces: Vec<&[u8]> = frame.chunks(16).collect();
/// for (index, data) in pieces.iter().enumerate() {
///     let hex = Sha256Digest::of(data).to_hex();
///     // In a real transfer each chunk is `Chunk::decode`d from the wire.
///     let chunk = Chunk { chunk_index: index as i32, offset: (index * 16) as i64, data,
///                         sha256_hex: hex.as_str(), is_last: index + 1 == pieces.len() };
///     reassembler.push(&chunk)?;
/// }
/// let verified = reassembler.finish()?;
/// assert_eq!(verified.payload_len(), 5);
/// # Ok::<(), membrane_frame::Error>(())
/// ```
pub struct ChunkReassembler<'b> {
    verifier: StreamVerifier<'b>,
    next_index: i32,
    next_offset: i64,
    done: bool,
    failed: Option<Error>,
}

fn sequence_error(reason: &'static str, field: &'static str, offset: i64) -> Error {
    let err = Error::new(ErrorCode::ChunkSequence, reason).in_field(field);
    match u64::try_from(offset) {
        Ok(offset) => err.at(offset),
        Err(_) => err,
    }
}

impl<'b> ChunkReassembler<'b> {
    /// A reassembler feeding `verifier` (which sets the level, the mode and the
    /// identity buffer).
    pub fn new(verifier: StreamVerifier<'b>) -> ChunkReassembler<'b> {
        ChunkReassembler { verifier, next_index: 0, next_offset: 0, done: false, failed: None }
    }

    /// The `chunk_index` the next chunk must carry.
    pub fn next_index(&self) -> i32 {
        self.next_index
    }

    /// The `offset` the next chunk must carry (the bytes accepted so far).
    pub fn next_offset(&self) -> i64 {
        self.next_offset
    }

    /// Whether the chunk marked `is_last` was accepted.
    pub fn is_complete(&self) -> bool {
        self.done
    }

    /// Check the next chunk and feed its data to the verifier. After an error every
    /// further call returns the same error.
    pub fn push(&mut self, chunk: &Chunk<'_>) -> Result<StreamStatus, Error> {
        if let Some(err) = self.failed {
            return Err(err);
        }
        let result = self.accept(chunk);
        if let Err(err) = result {
            self.failed = Some(err);
        }
        result
    }

    fn accept(&mut self, chunk: &Chunk<'_>) -> Result<StreamStatus, Error> {
        if self.done {
            return Err(sequence_error("a chunk follows the one marked is_last", "Chunk.is_last", chunk.offset));
        }
        if chunk.chunk_index != self.next_index {
            return Err(sequence_error(
                "chunk_index is not the next one (missing, repeated or out of order)",
                "Chunk.chunk_index",
                chunk.offset,
            ));
        }
        if chunk.offset != self.next_offset {
            return Err(sequence_error("offset is not the end of the previous chunk", "Chunk.offset", chunk.offset));
        }
        chunk.verify_digest()?;
        let next_offset = i64::try_from(chunk.data.len())
            .ok()
            .and_then(|len| self.next_offset.checked_add(len))
            .ok_or_else(|| sequence_error("offset overflows int64", "Chunk.offset", chunk.offset))?;
        let next_index = match (self.next_index.checked_add(1), chunk.is_last) {
            (Some(next), _) => next,
            // The last possible index may still be the last chunk.
            (None, true) => self.next_index,
            (None, false) => {
                return Err(sequence_error("chunk_index overflows int32", "Chunk.chunk_index", chunk.offset));
            }
        };
        let status = self.verifier.feed(chunk.data)?;
        self.next_offset = next_offset;
        self.next_index = next_index;
        self.done = chunk.is_last;
        Ok(status)
    }

    /// The verdict: `chunk_sequence` if no chunk was marked `is_last` (the transfer was
    /// cut), else the verifier's [`finish`](StreamVerifier::finish).
    pub fn finish(self) -> Result<StreamedFrame<'b>, Error> {
        if let Some(err) = self.failed {
            return Err(err);
        }
        if !self.done {
            return Err(sequence_error(
                "the transfer ended before the chunk marked is_last",
                "Chunk.is_last",
                self.next_offset,
            ));
        }
        self.verifier.finish()
    }
}
