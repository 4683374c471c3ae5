//! Reading a frame in place from a borrowed buffer (SPEC §1.1–§1.3).

use super::header::{
    FrameHeader, DEFAULT_IDENTITY_LIMIT, FRAME_OVERHEAD, HEADER_LEN, MAGIC_V5, MIN_FRAME_PREFIX, SCHEMA_V5,
};
use crate::digest::Sha256Digest;
use crate::error::{Error, ErrorCode};
use crate::identity::PayloadIdentity;
use crate::json::Limits;

/// How much a reader proves (SPEC §1.2). Each level includes the ones before it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u32)]
pub enum VerifyLevel {
    /// Header and lengths are consistent. O(1).
    Layout = 0,
    /// And the identity is a valid v5 identity. O(identity).
    Identity = 1,
    /// And the trailer matches SHA-256(payload): the original `parse_canonical`.
    #[default]
    Trailer = 2,
    /// And `payload_hash` is the lower-case hex SHA-256 of the payload.
    Full = 3,
}

impl VerifyLevel {
    /// Every level, cheapest first.
    pub const ALL: [VerifyLevel; 4] =
        [VerifyLevel::Layout, VerifyLevel::Identity, VerifyLevel::Trailer, VerifyLevel::Full];

    /// The level with this number (0 layout … 3 full), as the C ABI passes it.
    pub const fn from_number(number: u32) -> Option<VerifyLevel> {
        match number {
            0 => Some(VerifyLevel::Layout),
            1 => Some(VerifyLevel::Identity),
            2 => Some(VerifyLevel::Trailer),
            3 => Some(VerifyLevel::Full),
            _ => None,
        }
    }

    /// `layout`, `identity`, `trailer` or `full`.
    pub const fn name(self) -> &'static str {
        match self {
            VerifyLevel::Layout => "layout",
            VerifyLevel::Identity => "identity",
            VerifyLevel::Trailer => "trailer",
            VerifyLevel::Full => "full",
        }
    }

    /// The level with this name.
    pub fn from_name(name: &str) -> Option<VerifyLevel> {
        VerifyLevel::ALL.into_iter().find(|level| level.name() == name)
    }
}

/// Whether the buffer must hold exactly one frame (SPEC §1.3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ParseMode {
    /// Files and blobs: bytes after the frame are `trailing_bytes`.
    #[default]
    Exact,
    /// Concatenated frames and sockets: the rest is handed back.
    Prefix,
}

/// Reader policy: verification level and limits.
///
/// ```
/// use membrane_frame::{ReadOptions, VerifyLevel};
/// let options = ReadOptions::new().level(VerifyLevel::Full).identity_limit(1 << 20);
/// assert_eq!(options.level, VerifyLevel::Full);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadOptions {
    /// What to verify; default [`VerifyLevel::Trailer`].
    pub level: VerifyLevel,
    /// Largest accepted `identity_len` (check 7); default 64 KiB.
    pub identity_limit: u32,
    /// Limits of the identity's JSON reader (nesting depth, default 32).
    pub json: Limits,
}

impl Default for ReadOptions {
    fn default() -> ReadOptions {
        ReadOptions::new()
    }
}

impl ReadOptions {
    /// The defaults: trailer level, 64 KiB identity limit, JSON depth 32.
    pub const fn new() -> ReadOptions {
        ReadOptions {
            level: VerifyLevel::Trailer,
            identity_limit: DEFAULT_IDENTITY_LIMIT,
            json: Limits { max_depth: crate::json::DEFAULT_MAX_DEPTH },
        }
    }

    /// Set the verification level.
    #[must_use]
    pub const fn level(mut self, level: VerifyLevel) -> ReadOptions {
        self.level = level;
        self
    }

    /// Set the identity length limit (check 7).
    #[must_use]
    pub const fn identity_limit(mut self, limit: u32) -> ReadOptions {
        self.identity_limit = limit;
        self
    }

    /// Set the identity JSON nesting limit.
    #[must_use]
    pub const fn max_depth(mut self, depth: u32) -> ReadOptions {
        self.json.max_depth = depth;
        self
    }
}

/// A frame read in place: every slice points into the caller's buffer.
#[derive(Clone, Debug, PartialEq)]
pub struct Frame<'a> {
    bytes: &'a [u8],
    identity_len: usize,
    payload_len: usize,
    level: VerifyLevel,
    identity: Option<PayloadIdentity<'a>>,
    payload_digest: Option<Sha256Digest>,
}

// ---- the checks of SPEC §1.1, shared with the streaming reader ----

/// Checks 2–5 on a header.
pub(crate) fn check_header(header: &FrameHeader) -> Result<(), Error> {
    if header.is_legacy() {
        return Err(Error::new(ErrorCode::LegacyFrame, "v2/v4 frame: migrate it to v5").at(0).in_field("magic"));
    }
    if header.magic != MAGIC_V5 {
        return Err(Error::new(ErrorCode::BadMagic, "not a Membrane frame").at(0).in_field("magic"));
    }
    if header.schema.get() != SCHEMA_V5 {
        return Err(Error::new(ErrorCode::SchemaMismatch, "schema is not 5").at(4).in_field("schema"));
    }
    if header.reserved.get() != 0 {
        return Err(Error::new(ErrorCode::ReservedNonzero, "reserved field is not 0").at(6).in_field("reserved"));
    }
    Ok(())
}

/// Check 7.
pub(crate) fn check_identity_limit(identity_len: u32, options: &ReadOptions) -> Result<(), Error> {
    if identity_len > options.identity_limit {
        return Err(Error::new(ErrorCode::IdentityTooLarge, "identity_len exceeds the limit")
            .at(10)
            .in_field("identity_len"));
    }
    Ok(())
}

/// Checks 8–9, with offsets made absolute.
pub(crate) fn parse_identity<'a>(json: &'a [u8], options: &ReadOptions) -> Result<PayloadIdentity<'a>, Error> {
    PayloadIdentity::parse_with(json, options.json).map_err(|err| err.shifted(HEADER_LEN as u64))
}

/// Total frame length `30 + L + P`, if it fits a `u64`.
pub(crate) fn frame_len(identity_len: u64, payload_len: u64) -> Option<u64> {
    (FRAME_OVERHEAD as u64).checked_add(identity_len)?.checked_add(payload_len)
}

/// Check 12.
pub(crate) fn check_trailer(digest: &Sha256Digest, trailer: [u8; 8], trailer_offset: u64) -> Result<(), Error> {
    if digest.trailer() != trailer {
        return Err(Error::new(ErrorCode::TrailerMismatch, "trailer does not match SHA-256 of the payload")
            .at(trailer_offset)
            .in_field("trailer"));
    }
    Ok(())
}

/// Check 13.
pub(crate) fn check_payload_hash(identity: &PayloadIdentity<'_>, digest: &Sha256Digest) -> Result<(), Error> {
    if !digest.matches_hex(&identity.payload_hash()) {
        let err = Error::new(ErrorCode::PayloadHashMismatch, "payload_hash is not the hex SHA-256 of the payload")
            .in_field("payload_hash");
        return Err(match identity.payload_hash_offset() {
            Some(offset) => err.at((HEADER_LEN + offset) as u64),
            None => err,
        });
    }
    Ok(())
}

pub(crate) fn read_u64_le(bytes: &[u8]) -> u64 {
    let mut raw = [0u8; 8];
    if let Some(src) = bytes.get(..8) {
        raw.copy_from_slice(src);
    }
    u64::from_le_bytes(raw)
}

/// Checks 1–7; returns where the identity ends (`14 + L`, with room for payload_len).
fn check_head(buf: &[u8], options: &ReadOptions) -> Result<usize, Error> {
    check_head_with(read_header(buf)?, buf.len(), options)
}

/// Check 1, and the header at the start of `buf`.
fn read_header(buf: &[u8]) -> Result<&FrameHeader, Error> {
    match FrameHeader::read(buf) {
        Some(header) if buf.len() >= MIN_FRAME_PREFIX => Ok(header),
        _ => Err(Error::new(ErrorCode::TooShort, "shorter than a header and payload length").at(buf.len() as u64)),
    }
}

/// Checks 2–7 of `header` for a buffer of `len` bytes.
fn check_head_with(header: &FrameHeader, len: usize, options: &ReadOptions) -> Result<usize, Error> {
    check_header(header)?;
    let identity_len = header.identity_len.get();
    let identity_end = HEADER_LEN as u64 + u64::from(identity_len);
    if identity_end + 8 > len as u64 {
        return Err(Error::new(ErrorCode::IdentityOverrun, "identity and payload_len run past the end")
            .at(10)
            .in_field("identity_len"));
    }
    check_identity_limit(identity_len, options)?;
    // Checked above: identity_end + 8 <= len, so it fits usize.
    Ok(identity_end as usize)
}

/// Checks 1–13 on `buf` as if its first six bytes were the v5 magic and schema: the
/// verdict a migrated copy would get (SPEC §7.1), without writing anything. Exact mode;
/// the trailer and `payload_hash` are checked as `options.level` asks.
pub(crate) fn verify_as_v5(buf: &[u8], options: &ReadOptions) -> Result<(), Error> {
    let mut header = *read_header(buf)?;
    header.magic = MAGIC_V5;
    header.schema = zerocopy::little_endian::U16::new(SCHEMA_V5);
    let identity_end = check_head_with(&header, buf.len(), options)?;
    let identity = parse_identity(buf.get(HEADER_LEN..identity_end).unwrap_or(&[]), options)?;
    let (bytes, payload_len) = check_lengths(buf, identity_end, ParseMode::Exact)?;
    check_payload(bytes, identity_end, payload_len, &identity, options).map(|_| ())
}

/// Checks 10–11; returns the frame's bytes and the payload length.
fn check_lengths(buf: &[u8], identity_end: usize, mode: ParseMode) -> Result<(&[u8], usize), Error> {
    let len = buf.len();
    let identity_len = (identity_end - HEADER_LEN) as u64;
    let payload_len = read_u64_le(buf.get(identity_end..).unwrap_or(&[]));
    let total = frame_len(identity_len, payload_len).filter(|&total| total <= len as u64).ok_or_else(|| {
        Error::new(ErrorCode::PayloadOverrun, "payload and trailer run past the end")
            .at(identity_end as u64)
            .in_field("payload_len")
    })?;
    // total <= len, so every offset below fits usize.
    let (total, payload_len) = (total as usize, payload_len as usize);
    if mode == ParseMode::Exact && total < len {
        return Err(Error::new(ErrorCode::TrailingBytes, "bytes follow the frame").at(total as u64));
    }
    Ok((buf.get(..total).unwrap_or(buf), payload_len))
}

/// Checks 12–13 at the levels that ask for them; returns the payload digest if computed.
#[inline(always)]
fn check_payload(
    bytes: &[u8],
    identity_end: usize,
    payload_len: usize,
    identity: &PayloadIdentity<'_>,
    options: &ReadOptions,
) -> Result<Option<Sha256Digest>, Error> {
    if options.level < VerifyLevel::Trailer {
        return Ok(None);
    }
    let payload_start = identity_end + 8;
    let trailer_start = payload_start + payload_len;
    let digest = Sha256Digest::of(bytes.get(payload_start..trailer_start).unwrap_or(&[]));
    let mut trailer = [0u8; 8];
    trailer.copy_from_slice(bytes.get(trailer_start..trailer_start + 8).unwrap_or(&[0; 8]));
    check_trailer(&digest, trailer, trailer_start as u64)?;
    if options.level == VerifyLevel::Full {
        check_payload_hash(identity, &digest)?;
    }
    Ok(Some(digest))
}

impl<'a> Frame<'a> {
    /// Read exactly one frame at the default (trailer) level.
    ///
    /// ```
    /// # let bytes = membrane_frame::example_frame();
    /// let frame = membrane_frame::Frame::parse(&bytes)?;
    /// assert_eq!(frame.payload(), b"hello");
    /// # Ok::<(), membrane_frame::Error>(())
    /// ```
    pub fn parse(buf: &'a [u8]) -> Result<Frame<'a>, Error> {
        Frame::parse_exact(buf, &ReadOptions::new())
    }

    /// Read exactly one frame: bytes after it are `trailing_bytes`.
    pub fn parse_exact(buf: &'a [u8], options: &ReadOptions) -> Result<Frame<'a>, Error> {
        Frame::read(buf, options, ParseMode::Exact)
    }

    /// Read the frame at the start of `buf` and return it with the bytes after it.
    ///
    /// ```
    /// # let one = membrane_frame::example_frame();
    /// use membrane_frame::{Frame, ReadOptions};
    /// let two = [one.as_slice(), one.as_slice()].concat();
    /// let (first, rest) = Frame::parse_prefix(&two, &ReadOptions::new())?;
    /// let (second, rest) = Frame::parse_prefix(rest, &ReadOptions::new())?;
    /// assert!(rest.is_empty() && first == second);
    /// # Ok::<(), membrane_frame::Error>(())
    /// ```
    pub fn parse_prefix(buf: &'a [u8], options: &ReadOptions) -> Result<(Frame<'a>, &'a [u8]), Error> {
        Frame::parse_mode(buf, options, ParseMode::Prefix)
    }

    /// Read a frame in either mode; the second value is what follows the frame (always
    /// empty in exact mode). Checks run in the order of SPEC §1.1; the first failing
    /// one decides the error.
    pub fn parse_mode(buf: &'a [u8], options: &ReadOptions, mode: ParseMode) -> Result<(Frame<'a>, &'a [u8]), Error> {
        let frame = Frame::read(buf, options, mode)?;
        let rest = buf.get(frame.len()..).unwrap_or(&[]);
        Ok((frame, rest))
    }

    /// The reader behind the entry points. A `Frame` is a few hundred bytes, nearly all
    /// of them the identity; the layout level has its own path (kept out of line, so the
    /// compiler does not merge it with the other) that writes a few offsets straight into
    /// the caller's slot instead of copying an absent identity around. That is most of
    /// its cost otherwise.
    #[inline(always)]
    fn read(buf: &'a [u8], options: &ReadOptions, mode: ParseMode) -> Result<Frame<'a>, Error> {
        if options.level == VerifyLevel::Layout {
            Frame::read_layout(buf, options, mode)
        } else {
            Frame::read_verified(buf, options, mode)
        }
    }

    /// Checks 1–7, 10, 11.
    #[inline(never)]
    fn read_layout(buf: &'a [u8], options: &ReadOptions, mode: ParseMode) -> Result<Frame<'a>, Error> {
        let identity_end = check_head(buf, options)?;
        let (bytes, payload_len) = check_lengths(buf, identity_end, mode)?;
        Ok(Frame {
            bytes,
            identity_len: identity_end - HEADER_LEN,
            payload_len,
            level: options.level,
            identity: None,
            payload_digest: None,
        })
    }

    /// Checks 1–11, and 12–13 at the levels that ask for them.
    #[inline(never)]
    fn read_verified(buf: &'a [u8], options: &ReadOptions, mode: ParseMode) -> Result<Frame<'a>, Error> {
        let identity_end = check_head(buf, options)?;
        let identity = parse_identity(buf.get(HEADER_LEN..identity_end).unwrap_or(&[]), options)?;
        let (bytes, payload_len) = check_lengths(buf, identity_end, mode)?;
        let payload_digest = check_payload(bytes, identity_end, payload_len, &identity, options)?;
        Ok(Frame {
            bytes,
            identity_len: identity_end - HEADER_LEN,
            payload_len,
            level: options.level,
            identity: Some(identity),
            payload_digest,
        })
    }

    /// The frame's own bytes (without anything that followed it).
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Total frame length, `30 + identity_len + payload_len`.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Always false: a frame has at least 30 bytes.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The 14-byte header.
    pub fn header(&self) -> FrameHeader {
        FrameHeader::read(self.bytes).copied().unwrap_or_else(|| FrameHeader::v5(0))
    }

    /// The identity JSON exactly as stored.
    pub fn identity_json(&self) -> &'a [u8] {
        self.bytes.get(HEADER_LEN..HEADER_LEN + self.identity_len).unwrap_or(&[])
    }

    /// The parsed identity (`None` at the layout level).
    pub fn identity(&self) -> Option<&PayloadIdentity<'a>> {
        self.identity.as_ref()
    }

    /// Offset of the payload within the frame.
    pub fn payload_offset(&self) -> usize {
        HEADER_LEN + self.identity_len + 8
    }

    /// The payload, in place.
    pub fn payload(&self) -> &'a [u8] {
        let start = self.payload_offset();
        self.bytes.get(start..start + self.payload_len).unwrap_or(&[])
    }

    /// The stored trailer.
    pub fn trailer(&self) -> [u8; 8] {
        let mut trailer = [0u8; 8];
        let start = self.payload_offset() + self.payload_len;
        trailer.copy_from_slice(self.bytes.get(start..start + 8).unwrap_or(&[0; 8]));
        trailer
    }

    /// SHA-256 of the payload (computed at the trailer level and above).
    pub fn payload_digest(&self) -> Option<Sha256Digest> {
        self.payload_digest
    }

    /// The level the frame was verified at.
    pub fn level(&self) -> VerifyLevel {
        self.level
    }
}
