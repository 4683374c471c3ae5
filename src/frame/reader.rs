//! Reading a frame in place from a borrowed buffer (SPEC §1.1–§1.3).

use super::header::{
    FrameHeader, DEFAULT_IDENTITY_LIMIT, FRAME_OVERHEAD, HEADER_LEN, MAGIC_V5, MIN_FRAME_PREFIX, SCHEMA_V5,
};
use crate::digest::Sha256Digest;
use crate::error::{Error, ErrorCode};
use crate::identity::PayloadIdentity;
use crate::json::Limits;

/// How much a reader proves (SPEC §1.2). Each level includes the ones before it.
///
/// ```
/// use membrane_frame::{ErrorCode, Frame, ReadOptions, VerifyLevel};
/// # let mut bytes = membrane_frame::example_frame();
/// let last = bytes.len() - 1;
/// bytes[last] ^= 1; // damage the trailer
/// let at = |level| Frame::parse_with(&bytes, &ReadOptions::new().level(level)).map(|_| ()).map_err(|e| e.code());
/// assert_eq!(at(VerifyLevel::Identity), Ok(())); // the payload is not hashed
/// assert_eq!(at(VerifyLevel::Trailer), Err(ErrorCode::TrailerMismatch));
/// assert_eq!(VerifyLevel::from_name("full"), Some(VerifyLevel::Full));
/// ```
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
///
/// ```
/// use membrane_frame::{ErrorCode, Frame, ParseMode, ReadOptions};
/// # let one = membrane_frame::example_frame();
/// let two = [one.as_slice(), one.as_slice()].concat();
/// let exact = Frame::parse_with(&two, &ReadOptions::new());
/// assert_eq!(exact.unwrap_err().code(), ErrorCode::TrailingBytes);
/// let (_, rest) = Frame::parse_with(&two, &ReadOptions::new().mode(ParseMode::Prefix))?;
/// assert_eq!(rest, one.as_slice());
/// # Ok::<(), membrane_frame::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ParseMode {
    /// Files and blobs: bytes after the frame are `trailing_bytes`.
    #[default]
    Exact,
    /// Concatenated frames and sockets: the rest is handed back.
    Prefix,
}

/// Reader policy: verification level, exact or prefix mode, and limits.
///
/// ```
/// use membrane_frame::{ParseMode, ReadOptions, VerifyLevel};
/// let options = ReadOptions::new().level(VerifyLevel::Full).mode(ParseMode::Prefix).identity_limit(1 << 20);
/// assert_eq!((options.level, options.mode), (VerifyLevel::Full, ParseMode::Prefix));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadOptions {
    /// What to verify; default [`VerifyLevel::Trailer`].
    pub level: VerifyLevel,
    /// Whether the buffer holds exactly one frame; default [`ParseMode::Exact`].
    pub mode: ParseMode,
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
    /// The defaults: trailer level, exact mode, 64 KiB identity limit, JSON depth 32.
    pub const fn new() -> ReadOptions {
        ReadOptions {
            level: VerifyLevel::Trailer,
            mode: ParseMode::Exact,
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

    /// Set exact or prefix mode (SPEC §1.3).
    #[must_use]
    pub const fn mode(mut self, mode: ParseMode) -> ReadOptions {
        self.mode = mode;
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

/// A frame read in place: every slice points into the caller's buffer, split once
/// when the frame was read.
///
/// ```
/// use membrane_frame::{Frame, ReadOptions, VerifyLevel};
/// # let bytes = membrane_frame::example_frame();
/// let (frame, rest) = Frame::parse_with(&bytes, &ReadOptions::new().level(VerifyLevel::Full))?;
/// assert!(rest.is_empty());
/// assert_eq!((frame.len(), frame.payload()), (bytes.len(), &b"hello"[..]));
/// assert_eq!(&bytes[frame.payload_offset()..][..5], frame.payload()); // in place
/// assert_eq!(frame.trailer(), frame.payload_digest().unwrap().trailer());
/// assert_eq!(frame.identity().unwrap().model_id().as_str(), Some("llama-3-8b"));
/// # Ok::<(), membrane_frame::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Frame<'a> {
    bytes: &'a [u8],
    header: &'a FrameHeader,
    identity_json: &'a [u8],
    payload: &'a [u8],
    trailer: &'a [u8; 8],
    level: VerifyLevel,
    identity: Option<PayloadIdentity<'a>>,
    payload_digest: Option<Sha256Digest>,
}

// ---- the checks of SPEC §1.1, shared with the streaming reader ----

/// Checks 2–5 on a header.
pub(crate) fn check_header(header: &FrameHeader) -> Result<(), Error> {
    if header.is_legacy() {
        return Err(Error::new(ErrorCode::LegacyFrame, "bad magic for v5: a v2/v4 frame, migrate it to v5")
            .at(0)
            .in_field("magic"));
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
    let mut identity = PayloadIdentity::unread();
    read_identity(json, options, &mut identity)?;
    Ok(identity)
}

/// [`parse_identity`] into the caller's `identity`: one copy of it on the stack.
pub(crate) fn read_identity<'a>(
    json: &'a [u8],
    options: &ReadOptions,
    identity: &mut PayloadIdentity<'a>,
) -> Result<(), Error> {
    crate::identity::read_into(json, options.json, HEADER_LEN as u64, identity)
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

/// Check 1, and the header at the start of `buf`.
fn read_header(buf: &[u8]) -> Result<&FrameHeader, Error> {
    match FrameHeader::read(buf) {
        Some(header) if buf.len() >= MIN_FRAME_PREFIX => Ok(header),
        _ => Err(Error::new(ErrorCode::TooShort, "shorter than a header and payload length").at(buf.len() as u64)),
    }
}

/// A buffer split after checks 1–7: the identity JSON, and what follows it (at least
/// the 8 bytes of `payload_len`).
struct Head<'a> {
    identity_json: &'a [u8],
    tail: &'a [u8],
}

/// Checks 2–7 of `header` (the header of `buf`, or what it would be after migration).
fn split_head<'a>(buf: &'a [u8], header: &FrameHeader, options: &ReadOptions) -> Result<Head<'a>, Error> {
    check_header(header)?;
    let identity_len = header.identity_len.get();
    let overrun = || {
        Error::new(ErrorCode::IdentityOverrun, "identity and payload_len run past the end")
            .at(10)
            .in_field("identity_len")
    };
    let (identity_json, tail) = buf
        .get(HEADER_LEN..)
        .zip(usize::try_from(identity_len).ok())
        .and_then(|(after_header, len)| after_header.split_at_checked(len))
        .filter(|(_, tail)| tail.len() >= 8)
        .ok_or_else(overrun)?;
    check_identity_limit(identity_len, options)?;
    Ok(Head { identity_json, tail })
}

/// The rest of a buffer split after checks 10–11: payload, trailer, what follows.
struct Body<'a> {
    payload: &'a [u8],
    trailer: &'a [u8; 8],
    rest: &'a [u8],
}

/// Checks 10–11 on what follows the identity (`identity_end` is its offset in the buffer).
fn split_body<'a>(tail: &'a [u8], identity_end: usize, mode: ParseMode) -> Result<Body<'a>, Error> {
    let overrun = || {
        Error::new(ErrorCode::PayloadOverrun, "payload and trailer run past the end")
            .at(identity_end as u64)
            .in_field("payload_len")
    };
    let (payload_len, after_len) = tail.split_first_chunk::<8>().ok_or_else(overrun)?;
    let (payload, after_payload) = usize::try_from(u64::from_le_bytes(*payload_len))
        .ok()
        .and_then(|len| after_len.split_at_checked(len))
        .ok_or_else(overrun)?;
    let (trailer, rest) = after_payload.split_first_chunk::<8>().ok_or_else(overrun)?;
    if mode == ParseMode::Exact && !rest.is_empty() {
        let total = identity_end + 8 + payload.len() + 8;
        return Err(Error::new(ErrorCode::TrailingBytes, "bytes follow the frame").at(total as u64));
    }
    Ok(Body { payload, trailer, rest })
}

/// Checks 1–13 on `buf` as if its first six bytes were the v5 magic and schema: the
/// verdict a migrated copy would get (SPEC §7.1), without writing anything. Exact mode;
/// the trailer and `payload_hash` are checked as `options.level` asks.
pub(crate) fn verify_as_v5(buf: &[u8], options: &ReadOptions) -> Result<(), Error> {
    let mut header = *read_header(buf)?;
    header.magic = MAGIC_V5;
    header.schema = zerocopy::little_endian::U16::new(SCHEMA_V5);
    let head = split_head(buf, &header, options)?;
    let identity = parse_identity(head.identity_json, options)?;
    let body = split_body(head.tail, HEADER_LEN + head.identity_json.len(), ParseMode::Exact)?;
    check_payload(&body, HEADER_LEN + head.identity_json.len() + 8, &identity, options).map(|_| ())
}

/// Checks 12–13 at the levels that ask for them; returns the payload digest if computed.
/// Out of line: the hash state is on the stack only while it runs, not under the
/// identity reader's frames (a microcontroller's stack budget).
#[inline(never)]
fn check_payload(
    body: &Body<'_>,
    payload_start: usize,
    identity: &PayloadIdentity<'_>,
    options: &ReadOptions,
) -> Result<Option<Sha256Digest>, Error> {
    if options.level < VerifyLevel::Trailer {
        return Ok(None);
    }
    let digest = Sha256Digest::of(body.payload);
    check_trailer(&digest, *body.trailer, (payload_start + body.payload.len()) as u64)?;
    if options.level == VerifyLevel::Full {
        check_payload_hash(identity, &digest)?;
    }
    Ok(Some(digest))
}

/// `assemble!(buf, header, head, body, level, identity, payload_digest)`: `Ok((Frame, rest))`
/// for the two read paths. A macro rather than a function: a frame is a few hundred
/// bytes (nearly all the optional identity); built in place in the caller's slot it
/// costs a few stores, built in a temporary and moved it costs a copy of the whole,
/// which doubled the layout-level parse.
macro_rules! assemble {
    ($buf:expr, $header:expr, $head:expr, $body:expr, $level:expr, $identity:expr, $digest:expr) => {{
        // `body.rest` is a suffix of `buf`, so the frame is what comes before it.
        let frame_len = $buf.len().saturating_sub($body.rest.len());
        Ok((
            Frame {
                bytes: $buf.get(..frame_len).unwrap_or($buf),
                header: $header,
                identity_json: $head.identity_json,
                payload: $body.payload,
                trailer: $body.trailer,
                level: $level,
                identity: $identity,
                payload_digest: $digest,
            },
            $body.rest,
        ))
    }};
}

impl<'a> Frame<'a> {
    /// Read exactly one frame with the default options (trailer level, exact mode).
    ///
    /// ```
    /// # let bytes = membrane_frame::example_frame();
    /// let frame = membrane_frame::Frame::parse(&bytes)?;
    /// assert_eq!(frame.payload(), b"hello");
    /// # Ok::<(), membrane_frame::Error>(())
    /// ```
    pub fn parse(buf: &'a [u8]) -> Result<Frame<'a>, Error> {
        Frame::parse_with(buf, &ReadOptions::new()).map(|(frame, _)| frame)
    }

    /// Read the frame at the start of `buf` with `options` (level, mode, limits); the
    /// second value is what follows the frame — in exact mode always empty, since bytes
    /// after the frame are `trailing_bytes` there. Checks run in the order of SPEC
    /// §1.1; the first failing one decides the error.
    ///
    /// ```
    /// # let one = membrane_frame::example_frame();
    /// use membrane_frame::{Frame, ParseMode, ReadOptions};
    /// let two = [one.as_slice(), one.as_slice()].concat();
    /// let prefix = ReadOptions::new().mode(ParseMode::Prefix);
    /// let (first, rest) = Frame::parse_with(&two, &prefix)?;
    /// let (second, rest) = Frame::parse_with(rest, &prefix)?;
    /// assert!(rest.is_empty() && first == second);
    /// assert!(Frame::parse_with(&two, &ReadOptions::new()).is_err()); // exact: trailing_bytes
    /// # Ok::<(), membrane_frame::Error>(())
    /// ```
    pub fn parse_with(buf: &'a [u8], options: &ReadOptions) -> Result<(Frame<'a>, &'a [u8]), Error> {
        if options.level == VerifyLevel::Layout {
            Frame::read_layout(buf, options)
        } else {
            Frame::read_verified(buf, options)
        }
    }

    /// [`parse_with`](Self::parse_with) into the caller's `slot`: `Some(frame)` when it
    /// returns `Ok` (with what follows the frame), `None` when it returns the error.
    /// The frame is built in place, its identity read straight into it: for callers
    /// that keep the view in storage of their own and count their stack (the C
    /// library's `mbr_frame_parse` on a microcontroller), where a returned view would
    /// sit on the stack twice while its identity is read.
    ///
    /// ```
    /// # let bytes = membrane_frame::example_frame();
    /// use membrane_frame::{Frame, ReadOptions};
    /// let mut slot = None;
    /// let rest = Frame::parse_to(&bytes, &ReadOptions::new(), &mut slot)?;
    /// assert!(rest.is_empty());
    /// assert_eq!(slot.map(|frame| frame.payload().len()), Some(5));
    /// # Ok::<(), membrane_frame::Error>(())
    /// ```
    pub fn parse_to(buf: &'a [u8], options: &ReadOptions, slot: &mut Option<Frame<'a>>) -> Result<&'a [u8], Error> {
        let filled = Frame::fill(buf, options, slot);
        if filled.is_err() {
            *slot = None;
        }
        filled
    }

    /// The body of [`parse_to`](Self::parse_to): the checks of `read_layout` and
    /// `read_verified` in their order, into the frame in `slot`.
    fn fill(buf: &'a [u8], options: &ReadOptions, slot: &mut Option<Frame<'a>>) -> Result<&'a [u8], Error> {
        let header = read_header(buf)?;
        let head = split_head(buf, header, options)?;
        let identity_end = HEADER_LEN + head.identity_json.len();
        let frame = slot.insert(Frame {
            bytes: buf,
            header,
            identity_json: head.identity_json,
            payload: &[],
            trailer: &[0; 8],
            level: options.level,
            identity: None,
            payload_digest: None,
        });
        if options.level > VerifyLevel::Layout {
            let identity = frame.identity.insert(PayloadIdentity::unread());
            read_identity(head.identity_json, options, identity)?;
        }
        let body = split_body(head.tail, identity_end, options.mode)?;
        if let Some(identity) = &frame.identity {
            frame.payload_digest = check_payload(&body, identity_end + 8, identity, options)?;
        }
        frame.bytes = buf.get(..buf.len().saturating_sub(body.rest.len())).unwrap_or(buf);
        frame.payload = body.payload;
        frame.trailer = body.trailer;
        Ok(body.rest)
    }

    /// [`parse_with`](Self::parse_with) without the view: the same checks in the same
    /// order with the same errors, and the frame's length when it passes. Nothing is
    /// built for the caller, so a verifier's stack holds one identity, not the view's
    /// copies too (the C library's `mbr_frame_check`, which must fit a microcontroller).
    ///
    /// ```
    /// # let bytes = membrane_frame::example_frame();
    /// use membrane_frame::{Frame, ReadOptions, VerifyLevel};
    /// let len = Frame::check_with(&bytes, &ReadOptions::new().level(VerifyLevel::Full))?;
    /// assert_eq!(len, bytes.len());
    /// # Ok::<(), membrane_frame::Error>(())
    /// ```
    pub fn check_with(buf: &[u8], options: &ReadOptions) -> Result<usize, Error> {
        let header = read_header(buf)?;
        let head = split_head(buf, header, options)?;
        let identity_end = HEADER_LEN + head.identity_json.len();
        let body = if options.level == VerifyLevel::Layout {
            split_body(head.tail, identity_end, options.mode)?
        } else {
            let mut identity = PayloadIdentity::unread();
            read_identity(head.identity_json, options, &mut identity)?;
            let body = split_body(head.tail, identity_end, options.mode)?;
            check_payload(&body, identity_end + 8, &identity, options)?;
            body
        };
        Ok(buf.len().saturating_sub(body.rest.len()))
    }

    /// Checks 1–7, 10, 11. Kept out of line, so that the compiler does not merge it with
    /// the verified path and copy an absent identity around: most of its cost otherwise.
    #[inline(never)]
    fn read_layout(buf: &'a [u8], options: &ReadOptions) -> Result<(Frame<'a>, &'a [u8]), Error> {
        let header = read_header(buf)?;
        let head = split_head(buf, header, options)?;
        let body = split_body(head.tail, HEADER_LEN + head.identity_json.len(), options.mode)?;
        assemble!(buf, header, head, body, options.level, None, None)
    }

    /// Checks 1–11, and 12–13 at the levels that ask for them.
    #[inline(never)]
    fn read_verified(buf: &'a [u8], options: &ReadOptions) -> Result<(Frame<'a>, &'a [u8]), Error> {
        let header = read_header(buf)?;
        let head = split_head(buf, header, options)?;
        let mut identity = PayloadIdentity::unread();
        read_identity(head.identity_json, options, &mut identity)?;
        let identity_end = HEADER_LEN + head.identity_json.len();
        let body = split_body(head.tail, identity_end, options.mode)?;
        let payload_digest = check_payload(&body, identity_end + 8, &identity, options)?;
        assemble!(buf, header, head, body, options.level, Some(identity), payload_digest)
    }

    /// Checks 12–13 on a frame read at the identity level, with its payload's digest
    /// computed elsewhere (the batch verifier, several payloads at once): the frame
    /// the one-shot reader at `level` would return, or the error it would give.
    pub(crate) fn with_payload_digest(mut self, digest: Sha256Digest, level: VerifyLevel) -> Result<Frame<'a>, Error> {
        if level < VerifyLevel::Trailer {
            return Ok(self);
        }
        check_trailer(&digest, *self.trailer, (self.payload_offset() + self.payload.len()) as u64)?;
        if level == VerifyLevel::Full {
            if let Some(identity) = &self.identity {
                check_payload_hash(identity, &digest)?;
            }
        }
        self.level = level;
        self.payload_digest = Some(digest);
        Ok(self)
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
        false
    }

    /// The 14-byte header.
    pub fn header(&self) -> FrameHeader {
        *self.header
    }

    /// The identity JSON exactly as stored.
    pub fn identity_json(&self) -> &'a [u8] {
        self.identity_json
    }

    /// The parsed identity (`None` at the layout level).
    pub fn identity(&self) -> Option<&PayloadIdentity<'a>> {
        self.identity.as_ref()
    }

    /// Offset of the payload within the frame: `22 + identity_len`. Whether it suits
    /// an alignment depends on where the frame lies: compare the caller's base offset
    /// plus this, or the payload's address, with the alignment needed (SPEC §1.5).
    pub fn payload_offset(&self) -> usize {
        MIN_FRAME_PREFIX + self.identity_json.len()
    }

    /// The spaces an aligned frame's writer put after the canonical identity (SPEC
    /// §1.5); 0 for an identity that is not canonical, and at the layout level, where
    /// the identity is not read.
    pub fn padding(&self) -> usize {
        self.identity.as_ref().map_or(0, PayloadIdentity::padding)
    }

    /// The payload in place as a slice of `T` (`f32`, `u16` for float16 bits,
    /// `U16<LE>`, ...: see [`PayloadElement`](super::PayloadElement)), never a copy.
    /// `misaligned` when the payload's address is not aligned to `T`, its length is
    /// not a whole number of elements, or the identity's dtype (when read) is not one
    /// `T` holds.
    ///
    /// ```
    /// use membrane_frame::{encode_frame_with, Frame, PayloadAlignment, WriteOptions, ErrorCode};
    /// # let bytes = membrane_frame::example_frame();
    /// # let identity = Frame::parse(&bytes)?.identity().unwrap().clone(); // float16
    /// #[repr(align(64))]
    /// struct Page([u8; 1024]);
    /// let mut page = Page([0; 1024]);
    /// let options = WriteOptions::new().aligned(PayloadAlignment::new(64, 0)?);
    /// let len = encode_frame_with(&identity, &[1, 0, 2, 0], &mut page.0, &options)?;
    /// let frame = Frame::parse(&page.0[..len])?;
    /// let halves: &[u16] = frame.payload_as()?;  // in place
    /// assert_eq!(halves.as_ptr().cast(), frame.payload().as_ptr());
    /// assert_eq!(frame.payload_as::<f32>().unwrap_err().code(), ErrorCode::Misaligned); // not float32
    /// # Ok::<(), membrane_frame::Error>(())
    /// ```
    pub fn payload_as<T: super::PayloadElement>(&self) -> Result<&'a [T], Error> {
        super::typed::view_payload_as(
            self.payload,
            self.payload_offset(),
            self.identity.as_ref().map(PayloadIdentity::dtype),
        )
    }

    /// The payload, in place.
    pub fn payload(&self) -> &'a [u8] {
        self.payload
    }

    /// The stored trailer.
    pub fn trailer(&self) -> [u8; 8] {
        *self.trailer
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
