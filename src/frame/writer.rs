//! Writing frames (SPEC §1.4): without copying the payload when the caller can
//! `writev`, in one buffer when it cannot, or in chunks when the payload streams.

use super::align::PayloadAlignment;
use super::header::{FrameHeader, DEFAULT_IDENTITY_LIMIT, MIN_FRAME_PREFIX};
use super::reader::frame_len;
use crate::digest::{Sha256Digest, Sha256Hasher};
use crate::error::{Error, ErrorCode};
use crate::identity::PayloadIdentity;
use crate::sink::{write_into_checked, BufferedSink, ByteSink, SliceSink};
use core::fmt;
use zerocopy::IntoBytes;

/// Plans a frame for one identity and payload length: its exact size, its head.
///
/// The head (header, canonical identity, payload length) and the trailer are separate
/// so a caller can `writev(head, payload, trailer)` with no copy of the payload.
///
/// ```
/// use membrane_frame::{FrameEncoder, Frame, PayloadIdentity, Sha256Digest};
/// # let bytes = membrane_frame::example_frame();
/// # let identity = Frame::parse(&bytes)?.identity().unwrap().clone();
/// let payload = b"hello";
/// let digest = Sha256Digest::of(payload);          // one pass: trailer (and payload_hash)
/// let encoder = FrameEncoder::new(&identity, payload.len() as u64)?;
/// let mut head = [0u8; 512];
/// let head_len = encoder.write_head_into(&mut head)?;
/// let frame = [&head[..head_len], payload, &digest.trailer()].concat();
/// assert_eq!(frame.len() as u64, encoder.frame_len());
/// assert!(Frame::parse(&frame).is_ok());
/// # Ok::<(), membrane_frame::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct FrameEncoder<'i, 'a> {
    identity: &'i PayloadIdentity<'a>,
    identity_len: u32,
    padding: u32,
    payload_len: u64,
}

/// Writer policy: where the payload goes (SPEC §1.5) and the identity limit of the
/// readers the frame is for.
///
/// ```
/// use membrane_frame::{encode_frame_with, Frame, PayloadAlignment, WriteOptions};
/// # let bytes = membrane_frame::example_frame();
/// # let identity = Frame::parse(&bytes)?.identity().unwrap().clone();
/// let options = WriteOptions::new().aligned(PayloadAlignment::new(64, 0)?);
/// let mut out = [0u8; 1024];
/// let len = encode_frame_with(&identity, b"hello", &mut out, &options)?;
/// let frame = Frame::parse(&out[..len])?;
/// assert_eq!(frame.payload_offset() % 64, 0);
/// assert!(frame.identity().unwrap().is_canonical() && frame.padding() > 0);
/// # Ok::<(), membrane_frame::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteOptions {
    /// Where the payload starts; default [`PayloadAlignment::NONE`] (no padding).
    pub alignment: PayloadAlignment,
    /// Largest `identity_len` (padding included) the frame's readers accept; default
    /// 64 KiB, the readers' default.
    pub identity_limit: u32,
}

impl Default for WriteOptions {
    fn default() -> WriteOptions {
        WriteOptions::new()
    }
}

impl WriteOptions {
    /// No padding, the default identity limit: the bytes of the original writer.
    pub const fn new() -> WriteOptions {
        WriteOptions { alignment: PayloadAlignment::NONE, identity_limit: DEFAULT_IDENTITY_LIMIT }
    }

    /// Place the payload as `alignment` says.
    #[must_use]
    pub const fn aligned(mut self, alignment: PayloadAlignment) -> WriteOptions {
        self.alignment = alignment;
        self
    }

    /// Write for readers configured with another identity limit.
    #[must_use]
    pub const fn identity_limit(mut self, limit: u32) -> WriteOptions {
        self.identity_limit = limit;
        self
    }
}

/// Spaces for the padding, written a slice at a time.
const SPACES: [u8; 64] = [b' '; 64];

impl<'i, 'a> FrameEncoder<'i, 'a> {
    /// Plan an unpadded frame; fails with `identity_too_large` when the canonical
    /// identity exceeds the default reader limit (64 KiB), so no frame is written that
    /// the default reader would refuse.
    pub fn new(identity: &'i PayloadIdentity<'a>, payload_len: u64) -> Result<FrameEncoder<'i, 'a>, Error> {
        FrameEncoder::with_options(identity, payload_len, &WriteOptions::new())
    }

    /// [`new`](Self::new) for readers configured with another identity limit.
    pub fn with_identity_limit(
        identity: &'i PayloadIdentity<'a>,
        payload_len: u64,
        identity_limit: u32,
    ) -> Result<FrameEncoder<'i, 'a>, Error> {
        FrameEncoder::with_options(identity, payload_len, &WriteOptions::new().identity_limit(identity_limit))
    }

    /// Plan a frame as `options` say: the canonical identity followed by the fewest
    /// spaces that put the payload where `options.alignment` asks (SPEC §1.5). Fails
    /// with `identity_too_large` when the identity and its padding exceed
    /// `options.identity_limit`.
    ///
    /// ```
    /// use membrane_frame::{Frame, FrameEncoder, PayloadAlignment, WriteOptions};
    /// # let bytes = membrane_frame::example_frame();
    /// # let identity = Frame::parse(&bytes)?.identity().unwrap().clone();
    /// let page = WriteOptions::new().aligned(PayloadAlignment::new(4096, 0)?);
    /// let encoder = FrameEncoder::with_options(&identity, 5, &page)?;
    /// assert_eq!(encoder.payload_offset(), 4096);
    /// assert_eq!(encoder.identity_len() as usize, identity.canonical_len() + encoder.padding() as usize);
    /// # Ok::<(), membrane_frame::Error>(())
    /// ```
    pub fn with_options(
        identity: &'i PayloadIdentity<'a>,
        payload_len: u64,
        options: &WriteOptions,
    ) -> Result<FrameEncoder<'i, 'a>, Error> {
        let too_large = || {
            Error::new(ErrorCode::IdentityTooLarge, "canonical identity and padding exceed the identity limit")
                .in_field("identity")
        };
        let canonical_len = u32::try_from(identity.canonical_len()).map_err(|_| too_large())?;
        let padding = options.alignment.padding_for(canonical_len);
        let identity_len =
            canonical_len.checked_add(padding).filter(|&len| len <= options.identity_limit).ok_or_else(too_large)?;
        if frame_len(u64::from(identity_len), payload_len).is_none() {
            return Err(Error::new(ErrorCode::InvalidArgument, "frame length overflows u64").in_field("payload_len"));
        }
        Ok(FrameEncoder { identity, identity_len, padding, payload_len })
    }

    /// Total frame length `30 + L + P`.
    pub fn frame_len(&self) -> u64 {
        frame_len(u64::from(self.identity_len), self.payload_len).unwrap_or(u64::MAX)
    }

    /// Length of the head: `14 + L + 8`.
    pub fn head_len(&self) -> usize {
        MIN_FRAME_PREFIX + self.identity_len as usize
    }

    /// Offset of the payload in the frame, `22 + L`: the head's length.
    pub fn payload_offset(&self) -> usize {
        self.head_len()
    }

    /// The stored identity length `L`: the canonical identity and its padding.
    pub fn identity_len(&self) -> u32 {
        self.identity_len
    }

    /// The spaces after the canonical identity (0 without alignment).
    pub fn padding(&self) -> u32 {
        self.padding
    }

    /// Write the head to any sink.
    pub fn write_head_to<S: ByteSink + ?Sized>(&self, sink: &mut S) -> Result<(), S::Error> {
        sink.write_bytes(FrameHeader::v5(self.identity_len).as_bytes())?;
        self.identity.write_canonical(sink)?;
        let mut padding = self.padding as usize;
        while padding > 0 {
            let step = padding.min(SPACES.len());
            sink.write_bytes(SPACES.get(..step).unwrap_or(&SPACES))?;
            padding -= step;
        }
        sink.write_bytes(&self.payload_len.to_le_bytes())
    }

    /// Write the head into `out`; returns its length, or `buffer_too_small` (with
    /// `out` untouched).
    pub fn write_head_into(&self, out: &mut [u8]) -> Result<usize, Error> {
        write_into_checked(out, self.head_len(), |sink| self.write_head_to(sink))
    }
}

/// Encode a whole unpadded frame into `out` (head, a copy of the payload, trailer);
/// returns the frame length, or `buffer_too_small` with the length needed.
pub fn encode_frame(identity: &PayloadIdentity<'_>, payload: &[u8], out: &mut [u8]) -> Result<usize, Error> {
    encode_frame_with(identity, payload, out, &WriteOptions::new())
}

/// [`encode_frame`] as `options` say (alignment, identity limit).
pub fn encode_frame_with(
    identity: &PayloadIdentity<'_>,
    payload: &[u8],
    out: &mut [u8],
    options: &WriteOptions,
) -> Result<usize, Error> {
    let encoder = FrameEncoder::with_options(identity, payload.len() as u64, options)?;
    let total = encoder.frame_len();
    if (out.len() as u64) < total {
        return Err(Error::buffer_too_small(total));
    }
    let mut sink = SliceSink::new(out);
    encoder.write_head_to(&mut sink).map_err(|_| Error::buffer_too_small(total))?;
    sink.write_bytes(payload).map_err(|_| Error::buffer_too_small(total))?;
    sink.write_bytes(&Sha256Digest::of(payload).trailer()).map_err(|_| Error::buffer_too_small(total))?;
    Ok(sink.len())
}

/// A failure of a [`ChunkedFrameWriter`]: the frame was misused, or the sink failed.
#[derive(Debug)]
pub enum WriteError<E> {
    /// A usage error (`length_mismatch`, `identity_too_large`, ...).
    Frame(Error),
    /// The sink refused bytes.
    Sink(E),
}

impl<E: fmt::Debug> fmt::Display for WriteError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WriteError::Frame(err) => write!(f, "{err}"),
            WriteError::Sink(err) => write!(f, "sink failed: {err:?}"),
        }
    }
}

// `core::error::Error` (Rust 1.81) serves no_std users too.
impl<E: fmt::Debug> core::error::Error for WriteError<E> {}

/// What a [`ChunkedFrameWriter`] reports when it finishes.
///
/// ```
/// use membrane_frame::{ChunkedFrameWriter, Frame, SliceSink};
/// # let bytes = membrane_frame::example_frame();
/// # let identity = membrane_frame::Frame::parse(&bytes)?.identity().unwrap().clone();
/// let mut out = [0u8; 1024];
/// let mut writer = ChunkedFrameWriter::begin(&identity, 5, SliceSink::new(&mut out)).unwrap();
/// writer.write_payload(b"hel").unwrap();
/// writer.write_payload(b"lo").unwrap();
/// let (outcome, sink) = writer.finish().unwrap();
/// assert!(outcome.payload_hash_matches);
/// assert_eq!(outcome.frame_len as usize, sink.len());
/// assert_eq!(Frame::parse(sink.written())?.payload(), b"hello");
/// # Ok::<(), membrane_frame::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkedOutcome {
    /// SHA-256 of the payload fed.
    pub payload_digest: Sha256Digest,
    /// Whether the identity's `payload_hash` is that digest in hex (if not, the frame
    /// is valid at the trailer level but fails the full level).
    pub payload_hash_matches: bool,
    /// Bytes written in all.
    pub frame_len: u64,
}

/// Writes a frame whose payload arrives in chunks, with its length declared up front.
/// The head goes out at once; each chunk passes straight through (hashed on the way);
/// the trailer goes out at [`finish`](Self::finish). Feeding more or fewer bytes than
/// declared is `length_mismatch`, and nothing past the declared length is written.
/// Once the sink has failed, every later call fails with `invalid_state`: a frame is
/// never continued after a gap.
///
/// ```
/// use membrane_frame::{ChunkedFrameWriter, Frame, IoSink};
/// # let bytes = membrane_frame::example_frame();
/// # let identity = Frame::parse(&bytes)?.identity().unwrap().clone();
/// let mut out = Vec::new();
/// let mut writer = ChunkedFrameWriter::begin(&identity, 5, IoSink(&mut out)).unwrap();
/// writer.write_payload(b"hel").unwrap();
/// writer.write_payload(b"lo").unwrap();
/// let (outcome, _sink) = writer.finish().unwrap();
/// assert!(outcome.payload_hash_matches);
/// drop(_sink);
/// assert_eq!(out, bytes);
/// # Ok::<(), membrane_frame::Error>(())
/// ```
pub struct ChunkedFrameWriter<'i, 'a, S: ByteSink> {
    sink: S,
    identity: &'i PayloadIdentity<'a>,
    declared: u64,
    fed: u64,
    head_len: u64,
    frame_len: u64,
    hasher: Sha256Hasher,
    sink_failed: bool,
}

impl<'i, 'a, S: ByteSink> ChunkedFrameWriter<'i, 'a, S> {
    /// Write the head of an unpadded frame for a payload of `payload_len` bytes.
    pub fn begin(identity: &'i PayloadIdentity<'a>, payload_len: u64, sink: S) -> Result<Self, WriteError<S::Error>> {
        ChunkedFrameWriter::begin_with(identity, payload_len, sink, &WriteOptions::new())
    }

    /// [`begin`](Self::begin) as `options` say (alignment, identity limit).
    pub fn begin_with(
        identity: &'i PayloadIdentity<'a>,
        payload_len: u64,
        mut sink: S,
        options: &WriteOptions,
    ) -> Result<Self, WriteError<S::Error>> {
        let encoder = FrameEncoder::with_options(identity, payload_len, options).map_err(WriteError::Frame)?;
        // Batch the head's many small pieces: a sink may make a system call per write.
        let mut buffered = BufferedSink::<_, 512>::new(&mut sink);
        encoder.write_head_to(&mut buffered).and_then(|()| buffered.flush()).map_err(WriteError::Sink)?;
        Ok(ChunkedFrameWriter {
            sink,
            identity,
            declared: payload_len,
            fed: 0,
            head_len: encoder.head_len() as u64,
            frame_len: encoder.frame_len(),
            hasher: Sha256Hasher::new(),
            sink_failed: false,
        })
    }

    /// Payload bytes still expected.
    pub fn remaining(&self) -> u64 {
        self.declared - self.fed
    }

    /// Pass the next payload chunk through.
    pub fn write_payload(&mut self, chunk: &[u8]) -> Result<(), WriteError<S::Error>> {
        self.check_sink()?;
        if chunk.len() as u64 > self.remaining() {
            return Err(WriteError::Frame(
                Error::new(ErrorCode::LengthMismatch, "more payload than declared").at(self.head_len + self.fed),
            ));
        }
        self.hasher.update(chunk);
        if let Err(err) = self.sink.write_bytes(chunk) {
            self.sink_failed = true;
            return Err(WriteError::Sink(err));
        }
        self.fed += chunk.len() as u64;
        Ok(())
    }

    fn check_sink(&self) -> Result<(), WriteError<S::Error>> {
        if self.sink_failed {
            return Err(WriteError::Frame(Error::new(ErrorCode::InvalidState, "the sink failed earlier")));
        }
        Ok(())
    }

    /// Write the trailer and hand the sink back.
    pub fn finish(mut self) -> Result<(ChunkedOutcome, S), WriteError<S::Error>> {
        self.check_sink()?;
        if self.fed != self.declared {
            return Err(WriteError::Frame(
                Error::new(ErrorCode::LengthMismatch, "less payload than declared").in_field("payload_len"),
            ));
        }
        let payload_digest = self.hasher.finish();
        self.sink.write_bytes(&payload_digest.trailer()).map_err(WriteError::Sink)?;
        let outcome = ChunkedOutcome {
            payload_digest,
            payload_hash_matches: payload_digest.matches_hex(&self.identity.payload_hash()),
            frame_len: self.frame_len,
        };
        Ok((outcome, self.sink))
    }
}
