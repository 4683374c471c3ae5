//! Several frames verified while they stream in, their payloads hashed side by side by
//! the batch hasher (`crate::batch_hash::StreamLanes`): a bulk verifier reading files
//! piece by piece keeps several of them in flight and gets past one SHA-256 stream's
//! speed without holding any payload. Everything but the hashing is the one-frame
//! [`StreamVerifier`]'s, so every status and verdict is the one it gives for the same
//! chunks.

use super::reader::ReadOptions;
use super::stream::{StreamStatus, StreamVerifier, StreamedFrame};
use crate::batch_hash::{Kernel, StreamLanes, LANES};
use crate::error::Error;

/// `N` streamed frames at once ([`LANES`] by default; sixteen keep the AVX-512 kernel
/// busy, [`Kernel::width`]), each lane with its own identity buffer (given
/// once, reused by every frame the lane takes). A lane is free until
/// [`start`](Self::start) puts a frame in it; [`feed`](Self::feed) gives every busy lane
/// its next chunk; [`finish`](Self::finish) gives a lane's verdict and frees it, so a
/// lane whose frame ends takes the next while the others go on.
///
/// ```
/// use membrane_frame::frame::StreamBatch;
/// use membrane_frame::{ErrorCode, ReadOptions};
/// let good = membrane_frame::example_frame();
/// let mut bad = good.clone();
/// *bad.last_mut().unwrap() ^= 1;
/// let mut buffers = [[0u8; 4096]; 3];
/// let [a, b, c] = &mut buffers;
/// let mut batch = StreamBatch::new([a, b, c]);
/// batch.start(0, ReadOptions::new())?;
/// batch.start(1, ReadOptions::new())?;
/// for (x, y) in good.chunks(9).zip(bad.chunks(9)) {
///     batch.feed([x, y, &[]]);
/// }
/// assert_eq!(batch.finish(0)?.payload_len(), 5);
/// assert_eq!(batch.finish(1).unwrap_err().code(), ErrorCode::TrailerMismatch);
/// // Lane 1 is free again: the next frame goes there.
/// batch.start(1, ReadOptions::new())?;
/// batch.feed([&[], &good, &[]]);
/// assert!(batch.finish(1).is_ok());
/// # Ok::<(), membrane_frame::Error>(())
/// ```
#[derive(Debug)]
pub struct StreamBatch<'b, const N: usize = LANES> {
    buffers: [&'b mut [u8]; N],
    /// Each busy lane's verifier, holding an empty buffer between calls.
    verifiers: [Option<StreamVerifier<'static>>; N],
    hasher: StreamLanes<N>,
}

impl<'b, const N: usize> StreamBatch<'b, N> {
    /// Free lanes keeping identities in `identity_bufs` (one a lane, each as
    /// [`StreamVerifier::new`] needs it), hashed with the fastest kernel of this CPU.
    pub fn new(identity_bufs: [&'b mut [u8]; N]) -> StreamBatch<'b, N> {
        StreamBatch::with_kernel(Kernel::detect(), identity_bufs)
    }

    /// [`new`](Self::new) with a chosen kernel (tests force [`Kernel::Portable`]).
    pub fn with_kernel(kernel: Kernel, identity_bufs: [&'b mut [u8]; N]) -> StreamBatch<'b, N> {
        StreamBatch {
            buffers: identity_bufs,
            verifiers: core::array::from_fn(|_| None),
            hasher: StreamLanes::with_kernel(kernel),
        }
    }

    /// Begin a frame in `lane`, verified with `options`. `invalid_argument` for a lane
    /// at or past `N`, `invalid_state` for a busy one.
    pub fn start(&mut self, lane: usize, options: ReadOptions) -> Result<(), Error> {
        let slot =
            self.verifiers.get_mut(lane).ok_or_else(|| Error::invalid_argument("lane", "is past the last lane"))?;
        if slot.is_some() {
            return Err(Error::invalid_state("lane", "holds a frame not yet finished"));
        }
        *slot = Some(StreamVerifier::hashed_outside(options, &mut []));
        Ok(())
    }

    /// Feed `chunks[lane]` to the frame in each busy lane: its status, exactly as
    /// [`StreamVerifier::feed`] gives it, or `None` for a free lane (whose chunk is not
    /// read).
    pub fn feed(&mut self, chunks: [&[u8]; N]) -> [Option<Result<StreamStatus, Error>>; N] {
        let mut statuses: [Option<Result<StreamStatus, Error>>; N] = [None; N];
        let mut payloads: [&[u8]; N] = [&[]; N];
        for ((((slot, buffer), chunk), status), payload) in self
            .verifiers
            .iter_mut()
            .zip(self.buffers.iter_mut())
            .zip(chunks)
            .zip(statuses.iter_mut())
            .zip(payloads.iter_mut())
        {
            if let Some(verifier) = slot.take() {
                let (mut lent, _) = verifier.with_buffer(buffer);
                let (result, part) = lent.feed_returning_payload(chunk);
                if lent.hashes_outside() {
                    *payload = part;
                }
                *status = Some(result);
                *slot = Some(lent.with_buffer(&mut []).0);
            }
        }
        self.hasher.update(payloads);
        statuses
    }

    /// [`StreamVerifier::skip`] for the frame in `lane` (below the trailer level, past
    /// the head). `invalid_argument` past `N`, `invalid_state` for a free lane.
    pub fn skip(&mut self, lane: usize, n: u64) -> Result<StreamStatus, Error> {
        let (slot, buffer) = self.lane(lane)?;
        let verifier = slot.take().ok_or_else(|| Error::invalid_state("lane", "holds no frame"))?;
        let (mut lent, _) = verifier.with_buffer(buffer);
        let result = lent.skip(n);
        *slot = Some(lent.with_buffer(&mut []).0);
        result
    }

    /// The frame in `lane`, for its progress ([`StreamVerifier::received`],
    /// [`hashed`](StreamVerifier::hashed), [`head_complete`](StreamVerifier::head_complete)),
    /// or `None` for a free lane.
    pub fn verifier(&self, lane: usize) -> Option<&StreamVerifier<'static>> {
        self.verifiers.get(lane)?.as_ref()
    }

    /// End of the frame in `lane`: the verdict [`StreamVerifier::finish`] gives for the
    /// same chunks (its identity borrowed from the lane's buffer). The lane is free
    /// again. `invalid_argument` past `N`, `invalid_state` for a free lane.
    pub fn finish(&mut self, lane: usize) -> Result<StreamedFrame<'_>, Error> {
        let (slot, _) = self.lane(lane)?;
        let verifier = slot.take().ok_or_else(|| Error::invalid_state("lane", "holds no frame"))?;
        // Always: the lane's hash starts afresh for the next frame.
        let digest = self.hasher.finish(lane)?;
        let buffer =
            self.buffers.get_mut(lane).ok_or_else(|| Error::invalid_argument("lane", "is past the last lane"))?;
        let (lent, _) = verifier.with_buffer(buffer);
        let hashed = lent.hashes_outside();
        lent.finish_with_digest(hashed.then_some(digest))
    }

    fn lane(&mut self, lane: usize) -> Result<(&mut Option<StreamVerifier<'static>>, &mut &'b mut [u8]), Error> {
        let past = || Error::invalid_argument("lane", "is past the last lane");
        Ok((self.verifiers.get_mut(lane).ok_or_else(past)?, self.buffers.get_mut(lane).ok_or_else(past)?))
    }
}
