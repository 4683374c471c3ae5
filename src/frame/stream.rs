//! Verifying a frame that arrives in chunks (SPEC §1.3) without holding its payload.

use super::header::{FrameHeader, HEADER_LEN, MIN_FRAME_PREFIX};
use super::reader::{
    check_header, check_identity_limit, check_payload_hash, check_trailer, frame_len, parse_identity, read_identity,
    read_u64_le, ParseMode, ReadOptions, VerifyLevel,
};
#[cfg(doc)]
use super::StreamBatch;
use crate::digest::{Sha256Digest, Sha256Hasher};
use crate::error::{Error, ErrorCode};
use crate::identity::PayloadIdentity;

/// Progress of a [`StreamVerifier`] after a chunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamStatus {
    /// The frame is incomplete: at least this many more bytes are needed (the exact
    /// number to finish the part being read — header, identity, payload and trailer).
    NeedMore(u64),
    /// Every byte of the frame is in; `consumed` bytes of the last chunk belonged to
    /// it (in prefix mode the rest is the caller's). Call
    /// [`finish`](StreamVerifier::finish) for the verdict.
    Complete {
        /// Bytes of the last chunk that belonged to the frame.
        consumed: usize,
    },
}

/// Input to the verifier: bytes, or a count of bytes whose content does not matter at
/// the level being verified (see [`StreamVerifier::skip`]).
#[derive(Clone, Copy, Debug)]
enum Chunk<'c> {
    Bytes(&'c [u8]),
    Skipped(u64),
}

impl<'c> Chunk<'c> {
    fn len(&self) -> u64 {
        match self {
            Chunk::Bytes(bytes) => bytes.len() as u64,
            Chunk::Skipped(n) => *n,
        }
    }

    /// The first `n` (at most `len`) bytes and the rest.
    fn split(self, n: u64) -> (Chunk<'c>, Chunk<'c>) {
        match self {
            Chunk::Bytes(bytes) => {
                let at = usize::try_from(n).unwrap_or(usize::MAX).min(bytes.len());
                let (head, tail) = bytes.split_at_checked(at).unwrap_or((bytes, &[]));
                (Chunk::Bytes(head), Chunk::Bytes(tail))
            }
            Chunk::Skipped(total) => (Chunk::Skipped(total.min(n)), Chunk::Skipped(total.saturating_sub(n))),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    /// Bytes 0..22+L: header, identity, payload length.
    Head,
    /// Payload bytes, hashed as they pass.
    Payload,
    /// The 8 trailer bytes.
    Trailer,
    /// The whole frame is in.
    Complete,
}

/// A frame verified while it streams in: the payload is hashed as it passes and never
/// stored; the identity is kept in a caller-provided buffer.
///
/// Errors are reported as soon as they are certain and agree with what
/// [`Frame::parse_with`](crate::Frame::parse_with) says about the same bytes; a stream
/// that ends early is judged by [`finish`](Self::finish).
///
/// ```
/// use membrane_frame::{StreamVerifier, StreamStatus, ReadOptions, VerifyLevel};
/// # let frame = membrane_frame::example_frame();
/// let mut identity = [0u8; 4096];
/// let options = ReadOptions::new().level(VerifyLevel::Full);
/// let mut verifier = StreamVerifier::new(options, &mut identity);
/// for chunk in frame.chunks(7) {
///     verifier.feed(chunk)?;
/// }
/// let verified = verifier.finish()?;
/// assert_eq!(verified.payload_len(), 5);
/// # Ok::<(), membrane_frame::Error>(())
/// ```
#[derive(Debug)]
pub struct StreamVerifier<'b> {
    options: ReadOptions,
    identity_buf: &'b mut [u8],
    header: [u8; MIN_FRAME_PREFIX],
    stage: Stage,
    received: u64,
    identity_len: u64,
    payload_len: u64,
    payload_seen: u64,
    hasher: Option<Sha256Hasher>,
    /// The payload is hashed by the caller ([`StreamBatch`]), not by `hasher`.
    hashed_outside: bool,
    trailer: [u8; 8],
    trailer_seen: usize,
    failed: Option<Error>,
}

/// What a verifier says once [`StreamVerifier::finish_to`] has taken its verdict.
const SPENT: Error = Error::invalid_state("verifier", "already finished");

/// The result of a successful streamed verification.
///
/// ```
/// use membrane_frame::{ReadOptions, StreamVerifier};
/// # let bytes = membrane_frame::example_frame();
/// let mut identity = [0u8; 1024];
/// let mut verifier = StreamVerifier::new(ReadOptions::new(), &mut identity);
/// for chunk in bytes.chunks(10) {
///     verifier.feed(chunk)?;
/// }
/// let verified = verifier.finish()?;
/// assert_eq!((verified.payload_len(), verified.frame_len()), (5, bytes.len() as u64));
/// assert_eq!(verified.identity().unwrap().model_id().as_str(), Some("llama-3-8b"));
/// # Ok::<(), membrane_frame::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct StreamedFrame<'b> {
    identity_json: Option<&'b [u8]>,
    /// `identity_len` from the header: known even when the identity was not kept.
    identity_len: u64,
    identity: Option<PayloadIdentity<'b>>,
    payload_len: u64,
    payload_digest: Option<Sha256Digest>,
    trailer: [u8; 8],
    level: VerifyLevel,
}

impl StreamedFrame<'_> {
    /// The identity JSON as stored (`None` at the layout level when the caller's buffer
    /// was too small to keep it).
    pub fn identity_json(&self) -> Option<&[u8]> {
        self.identity_json
    }

    /// The parsed identity (identity level and above).
    pub fn identity(&self) -> Option<&PayloadIdentity<'_>> {
        self.identity.as_ref()
    }

    /// Identity length in bytes (`identity_len` of the header), also when the identity
    /// was not kept.
    pub fn identity_len(&self) -> u64 {
        self.identity_len
    }

    /// Payload length in bytes.
    pub fn payload_len(&self) -> u64 {
        self.payload_len
    }

    /// Offset of the payload within the frame: `22 + identity_len`.
    pub fn payload_offset(&self) -> u64 {
        MIN_FRAME_PREFIX as u64 + self.identity_len
    }

    /// The spaces after a canonical identity (SPEC §1.5); 0 when the identity is not
    /// canonical or was not read (layout level).
    pub fn padding(&self) -> usize {
        self.identity.as_ref().map_or(0, PayloadIdentity::padding)
    }

    /// SHA-256 of the payload (trailer level and above).
    pub fn payload_digest(&self) -> Option<Sha256Digest> {
        self.payload_digest
    }

    /// The stored trailer.
    pub fn trailer(&self) -> [u8; 8] {
        self.trailer
    }

    /// The level verified.
    pub fn level(&self) -> VerifyLevel {
        self.level
    }

    /// Total frame length.
    pub fn frame_len(&self) -> u64 {
        frame_len(self.identity_len, self.payload_len).unwrap_or(u64::MAX)
    }
}

impl<'b> StreamVerifier<'b> {
    /// A verifier that keeps the identity in `identity_buf`. At the identity level and
    /// above the buffer must hold the whole identity (at most `options.identity_limit`
    /// bytes), else `feed` fails with `buffer_too_small` once the whole head is in. Not
    /// earlier: until then the declared length may be damage in a stream that ends
    /// short, which the one-shot reader calls `identity_overrun`, and so does `finish`.
    pub fn new(options: ReadOptions, identity_buf: &'b mut [u8]) -> StreamVerifier<'b> {
        StreamVerifier {
            options,
            identity_buf,
            header: [0; MIN_FRAME_PREFIX],
            stage: Stage::Head,
            received: 0,
            identity_len: 0,
            payload_len: 0,
            payload_seen: 0,
            hasher: (options.level >= VerifyLevel::Trailer).then(Sha256Hasher::new),
            hashed_outside: false,
            trailer: [0; 8],
            trailer_seen: 0,
            failed: None,
        }
    }

    /// A verifier whose payload the caller hashes ([`StreamBatch`]): it gives back the
    /// payload part of each chunk and takes the digest at the end.
    pub(super) fn hashed_outside(options: ReadOptions, identity_buf: &'b mut [u8]) -> StreamVerifier<'b> {
        let mut verifier = StreamVerifier::new(options, identity_buf);
        verifier.hashed_outside = verifier.hasher.take().is_some();
        verifier
    }

    /// The same verifier holding `identity_buf` instead of its buffer, and the buffer
    /// it held: a [`StreamBatch`] keeps its lanes' verifiers without a buffer (holding
    /// none, they borrow nothing) and lends each its own for every call.
    pub(super) fn with_buffer<'x>(self, identity_buf: &'x mut [u8]) -> (StreamVerifier<'x>, &'b mut [u8]) {
        let StreamVerifier {
            options,
            identity_buf: held,
            header,
            stage,
            received,
            identity_len,
            payload_len,
            payload_seen,
            hasher,
            hashed_outside,
            trailer,
            trailer_seen,
            failed,
        } = self;
        let verifier = StreamVerifier {
            options,
            identity_buf,
            header,
            stage,
            received,
            identity_len,
            payload_len,
            payload_seen,
            hasher,
            hashed_outside,
            trailer,
            trailer_seen,
            failed,
        };
        (verifier, held)
    }

    /// Whether the caller hashes the payload (made by `hashed_outside`, at the trailer
    /// level or above).
    pub(super) fn hashes_outside(&self) -> bool {
        self.hashed_outside
    }

    /// Bytes of the frame received so far.
    pub fn received(&self) -> u64 {
        self.received
    }

    /// Payload bytes hashed so far: what a bulk verifier reports as work done. Zero
    /// below the trailer level, where nothing is hashed.
    ///
    /// ```
    /// use membrane_frame::{ReadOptions, StreamVerifier};
    /// # let frame = membrane_frame::example_frame();
    /// let mut identity = [0u8; 4096];
    /// let mut verifier = StreamVerifier::new(ReadOptions::new(), &mut identity);
    /// verifier.feed(&frame)?;
    /// assert_eq!(verifier.hashed(), 5); // the example's payload
    /// # Ok::<(), membrane_frame::Error>(())
    /// ```
    pub fn hashed(&self) -> u64 {
        if self.hasher.is_some() || self.hashed_outside {
            self.payload_seen
        } else {
            0
        }
    }

    /// Whether the head (header, identity, payload length) is in and verified, so what
    /// follows is payload: from here [`skip`](Self::skip) works below the trailer level.
    pub fn head_complete(&self) -> bool {
        self.stage != Stage::Head
    }

    /// Feed the next chunk (any size, including empty).
    pub fn feed(&mut self, chunk: &[u8]) -> Result<StreamStatus, Error> {
        self.feed_returning_payload(chunk).0
    }

    /// [`feed`](Self::feed), also giving back the part of `chunk` that is payload (empty
    /// if none), which a verifier hashing outside (a [`StreamBatch`] lane) hashes itself.
    pub(super) fn feed_returning_payload<'c>(&mut self, chunk: &'c [u8]) -> (Result<StreamStatus, Error>, &'c [u8]) {
        let mut payload: &[u8] = &[];
        if let Some(err) = self.failed {
            return (Err(err), payload);
        }
        let result = self.consume(Chunk::Bytes(chunk), &mut payload);
        if let Err(err) = result {
            self.failed = Some(err);
        }
        (result, payload)
    }

    /// Account for the next `n` bytes without reading them, where their content does
    /// not matter: at the layout and identity levels, past the head (payload, trailer
    /// and — in exact mode, an error — anything after). The verdict is the one `feed`
    /// would give for any bytes there, so a file verifier can read just the head and
    /// pass the rest of the file's length here. Before the head is complete, or at the
    /// trailer level and above, this is `invalid_state`.
    ///
    /// ```
    /// use membrane_frame::{StreamVerifier, StreamStatus, ReadOptions, VerifyLevel};
    /// # let frame = membrane_frame::example_frame();
    /// let mut identity = [0u8; 4096];
    /// let options = ReadOptions::new().level(VerifyLevel::Identity);
    /// let mut verifier = StreamVerifier::new(options, &mut identity);
    /// let head_len = frame.len() - 5 - 8; // all but the payload and the trailer
    /// verifier.feed(&frame[..head_len])?;
    /// assert_eq!(verifier.skip(13)?, StreamStatus::Complete { consumed: 13 });
    /// assert!(verifier.finish().is_ok());
    /// # Ok::<(), membrane_frame::Error>(())
    /// ```
    pub fn skip(&mut self, n: u64) -> Result<StreamStatus, Error> {
        if let Some(err) = self.failed {
            return Err(err);
        }
        if self.options.level >= VerifyLevel::Trailer || self.stage == Stage::Head {
            return Err(Error::new(
                ErrorCode::InvalidState,
                "only bytes past the head can be skipped, below the trailer level",
            ));
        }
        let result = self.consume(Chunk::Skipped(n), &mut &[][..]);
        if let Err(err) = result {
            self.failed = Some(err);
        }
        result
    }

    /// Take `chunk` into the frame; the part of it that is payload (one run of bytes, as
    /// the stages follow one another) is left in `payload`.
    fn consume<'c>(&mut self, chunk: Chunk<'c>, payload: &mut &'c [u8]) -> Result<StreamStatus, Error> {
        let mut rest = chunk;
        loop {
            let needed = match self.stage {
                Stage::Head => self.head_remaining(),
                Stage::Payload => self.payload_len - self.payload_seen,
                Stage::Trailer => (8 - self.trailer_seen) as u64,
                Stage::Complete => {
                    if self.options.mode == ParseMode::Exact && rest.len() > 0 {
                        return Err(Error::new(ErrorCode::TrailingBytes, "bytes follow the frame").at(self.received));
                    }
                    let consumed = chunk.len() - rest.len();
                    return Ok(StreamStatus::Complete { consumed: usize::try_from(consumed).unwrap_or(usize::MAX) });
                }
            };
            if needed == 0 {
                self.advance()?;
                continue;
            }
            if rest.len() == 0 {
                return Ok(StreamStatus::NeedMore(self.total_remaining()));
            }
            let (part, tail) = rest.split(needed);
            if let (Stage::Payload, Chunk::Bytes(bytes)) = (self.stage, part) {
                *payload = bytes;
            }
            self.absorb(part)?;
            rest = tail;
        }
    }

    /// Bytes still missing from the head part currently being read.
    fn head_remaining(&self) -> u64 {
        if self.received < HEADER_LEN as u64 {
            return HEADER_LEN as u64 - self.received;
        }
        (MIN_FRAME_PREFIX as u64 + self.identity_len).saturating_sub(self.received)
    }

    /// Bytes still missing from the whole frame, as far as it is known.
    fn total_remaining(&self) -> u64 {
        match self.stage {
            Stage::Head => self.head_remaining(),
            _ => frame_len(self.identity_len, self.payload_len).unwrap_or(u64::MAX).saturating_sub(self.received),
        }
    }

    fn absorb(&mut self, part: Chunk<'_>) -> Result<(), Error> {
        match (self.stage, part) {
            (Stage::Head, Chunk::Bytes(bytes)) => {
                for &byte in bytes {
                    self.head_byte(byte)?;
                    self.received += 1;
                }
                return Ok(());
            }
            // `skip` refuses the head and the hashing levels, so this is never reached.
            (Stage::Head, Chunk::Skipped(_)) => {
                return Err(Error::new(ErrorCode::InvalidState, "the head cannot be skipped"));
            }
            (Stage::Payload, chunk) => {
                if let (Some(hasher), Chunk::Bytes(bytes)) = (self.hasher.as_mut(), chunk) {
                    hasher.update(bytes);
                }
                self.payload_seen += chunk.len();
            }
            (Stage::Trailer, chunk) => {
                let len = usize::try_from(chunk.len()).unwrap_or(8);
                if let (Some(slot), Chunk::Bytes(bytes)) =
                    (self.trailer.get_mut(self.trailer_seen..self.trailer_seen + len), chunk)
                {
                    slot.copy_from_slice(bytes);
                }
                self.trailer_seen += len;
            }
            (Stage::Complete, _) => {}
        }
        self.received += part.len();
        Ok(())
    }

    /// One byte of the head: header bytes and the payload length go to the fixed
    /// buffer, identity bytes to the caller's. Header checks run once 22 bytes are in
    /// (before that a short stream is `too_short`, whatever its magic says).
    fn head_byte(&mut self, byte: u8) -> Result<(), Error> {
        let at = self.received;
        let identity_end = HEADER_LEN as u64 + self.identity_len;
        if at < HEADER_LEN as u64 {
            if let Some(slot) = self.header.get_mut(at as usize) {
                *slot = byte;
            }
            if at + 1 == HEADER_LEN as u64 {
                let header = FrameHeader::read(&self.header).copied().unwrap_or_else(|| FrameHeader::v5(0));
                self.identity_len = u64::from(header.identity_len.get());
            }
        } else if at < identity_end {
            if let Some(slot) = self.identity_buf.get_mut((at - HEADER_LEN as u64) as usize) {
                *slot = byte;
            }
        } else if let Some(slot) = self.header.get_mut((HEADER_LEN as u64 + at - identity_end) as usize) {
            *slot = byte;
        }
        if at + 1 == MIN_FRAME_PREFIX as u64 {
            let header = FrameHeader::read(&self.header).copied().unwrap_or_else(|| FrameHeader::v5(0));
            check_header(&header)?;
        }
        Ok(())
    }

    /// Move to the next stage once the current one is complete.
    fn advance(&mut self) -> Result<(), Error> {
        match self.stage {
            Stage::Head => {
                // identity_len came from a u32 field.
                check_identity_limit(self.identity_len as u32, &self.options)?;
                if self.options.level >= VerifyLevel::Identity {
                    let identity_json = self
                        .identity_json()
                        .ok_or_else(|| Error::buffer_too_small(self.identity_len).in_field("identity_buf"))?;
                    parse_identity(identity_json, &self.options)?;
                }
                let length_at = (MIN_FRAME_PREFIX - 8)..MIN_FRAME_PREFIX;
                self.payload_len = read_u64_le(self.header.get(length_at).unwrap_or(&[]));
                if frame_len(self.identity_len, self.payload_len).is_none() {
                    // No stream can be long enough: the one-shot reader says the same.
                    return Err(Error::new(ErrorCode::PayloadOverrun, "payload and trailer run past the end")
                        .at(HEADER_LEN as u64 + self.identity_len)
                        .in_field("payload_len"));
                }
                self.stage = Stage::Payload;
            }
            Stage::Payload => self.stage = Stage::Trailer,
            Stage::Trailer | Stage::Complete => self.stage = Stage::Complete,
        }
        Ok(())
    }

    fn identity_json(&self) -> Option<&[u8]> {
        self.identity_buf.get(..usize::try_from(self.identity_len).ok()?)
    }

    /// End of stream: the verdict on the bytes fed. Checks the trailer (and, at the
    /// full level, `payload_hash`) or says what the frame was cut short in.
    pub fn finish(mut self) -> Result<StreamedFrame<'b>, Error> {
        let digest = self.hasher.take().map(Sha256Hasher::finish);
        self.finish_with_digest(digest)
    }

    /// [`finish`](Self::finish) into the caller's `slot`: `Some(verdict)` when it
    /// returns `Ok`, `None` when it returns the error. The verdict is built in place,
    /// its identity read straight into it: for callers that keep it in storage of their
    /// own and count their stack (the C library on a microcontroller). The verifier is
    /// spent either way — its identity buffer went to the verdict — and every later
    /// call fails with `invalid_state`.
    ///
    /// ```
    /// use membrane_frame::{ReadOptions, StreamVerifier};
    /// # let bytes = membrane_frame::example_frame();
    /// let mut identity = [0u8; 1024];
    /// let mut verifier = StreamVerifier::new(ReadOptions::new(), &mut identity);
    /// verifier.feed(&bytes)?;
    /// let mut verdict = None;
    /// verifier.finish_to(&mut verdict)?;
    /// assert_eq!(verdict.map(|frame| frame.payload_len()), Some(5));
    /// assert!(verifier.feed(b"more").is_err());
    /// # Ok::<(), membrane_frame::Error>(())
    /// ```
    pub fn finish_to(&mut self, slot: &mut Option<StreamedFrame<'b>>) -> Result<(), Error> {
        let digest = self.hasher.take().map(Sha256Hasher::finish);
        self.finish_into(digest, slot)
    }

    /// [`finish`](Self::finish) with the payload's digest computed by the caller (`None`
    /// below the trailer level, where nothing is hashed).
    pub(super) fn finish_with_digest(
        mut self,
        payload_digest: Option<Sha256Digest>,
    ) -> Result<StreamedFrame<'b>, Error> {
        let mut slot = None;
        self.finish_into(payload_digest, &mut slot)?;
        slot.ok_or(SPENT)
    }

    /// The body of [`finish_to`](Self::finish_to), with the digest given.
    fn finish_into(
        &mut self,
        payload_digest: Option<Sha256Digest>,
        slot: &mut Option<StreamedFrame<'b>>,
    ) -> Result<(), Error> {
        *slot = None;
        let verdict = self.verdict(payload_digest, slot);
        if verdict.is_err() {
            *slot = None;
        }
        self.failed = Some(SPENT);
        verdict
    }

    /// The checks of [`finish`](Self::finish), the verdict built in `slot`.
    fn verdict(
        &mut self,
        payload_digest: Option<Sha256Digest>,
        slot: &mut Option<StreamedFrame<'b>>,
    ) -> Result<(), Error> {
        if let Some(err) = self.failed {
            return Err(err);
        }
        // The trailer's last byte moved the stream to `Complete` in the same call.
        if self.stage != Stage::Complete {
            return Err(self.truncation_error());
        }
        if let Some(digest) = &payload_digest {
            let trailer_at = self.received - 8;
            check_trailer(digest, self.trailer, trailer_at)?;
        }
        let identity_buf: &'b mut [u8] = core::mem::take(&mut self.identity_buf);
        let identity_buf: &'b [u8] = identity_buf;
        let identity_json = identity_buf.get(..usize::try_from(self.identity_len).unwrap_or(usize::MAX));
        let level = self.options.level;
        let verdict = slot.insert(StreamedFrame {
            identity_json,
            identity_len: self.identity_len,
            identity: None,
            payload_len: self.payload_len,
            payload_digest,
            trailer: self.trailer,
            level,
        });
        if let (true, Some(json)) = (level >= VerifyLevel::Identity, identity_json) {
            let identity = verdict.identity.insert(PayloadIdentity::unread());
            read_identity(json, &self.options, identity)?;
            if let (VerifyLevel::Full, Some(digest)) = (level, &verdict.payload_digest) {
                check_payload_hash(identity, digest)?;
            }
        }
        Ok(())
    }

    fn truncation_error(&self) -> Error {
        if self.received < MIN_FRAME_PREFIX as u64 {
            return Error::new(ErrorCode::TooShort, "shorter than a header and payload length").at(self.received);
        }
        if self.stage == Stage::Head {
            return Error::new(ErrorCode::IdentityOverrun, "identity and payload_len run past the end")
                .at(10)
                .in_field("identity_len");
        }
        Error::new(ErrorCode::PayloadOverrun, "payload and trailer run past the end")
            .at(HEADER_LEN as u64 + self.identity_len)
            .in_field("payload_len")
    }
}
