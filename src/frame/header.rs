//! The fixed 14-byte frame header (SPEC §1) as a zerocopy struct, the magic/schema
//! decision table (legacy, half-migrated, foreign), and the decoding of a head for tools.

use crate::error::{Error, ErrorCode};
use zerocopy::little_endian::{U16, U32};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

/// Magic of a v5 frame.
pub const MAGIC_V5: [u8; 4] = [0xC0, 0xDE, 0x01, 0x05];
/// Magic of a legacy v4 frame (SPEC §7).
pub const MAGIC_V4: [u8; 4] = [0xC0, 0xDE, 0x01, 0x04];
/// Magic of a legacy v2 frame (SPEC §7).
pub const MAGIC_V2: [u8; 4] = [0xC0, 0xDE, 0x01, 0x02];
/// The schema a v5 frame carries.
pub const SCHEMA_V5: u16 = 5;
/// Header length: magic, schema, reserved, identity_len.
pub const HEADER_LEN: usize = 14;
/// Bytes of a frame besides the identity and the payload: header, payload_len, trailer.
pub const FRAME_OVERHEAD: usize = HEADER_LEN + 8 + 8;
/// The smallest buffer that can hold a header and a payload length.
pub const MIN_FRAME_PREFIX: usize = HEADER_LEN + 8;
/// Default limit on `identity_len` (SPEC §1.1 check 7).
pub const DEFAULT_IDENTITY_LIMIT: u32 = 64 * 1024;

/// The fixed header at the start of every frame. All integers little-endian.
///
/// ```
/// use membrane_frame::frame::{FrameHeader, HeaderKind, MAGIC_V5};
/// # let bytes = membrane_frame::example_frame();
/// let header = FrameHeader::read(&bytes).unwrap();
/// assert_eq!((header.magic, header.kind()), (MAGIC_V5, HeaderKind::V5));
/// let frame = membrane_frame::Frame::parse(&bytes)?;
/// assert_eq!(header.identity_len.get() as usize, frame.identity_json().len());
/// # Ok::<(), membrane_frame::Error>(())
/// ```
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned, Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct FrameHeader {
    /// `C0 DE 01 05` for v5.
    pub magic: [u8; 4],
    /// 5 for v5.
    pub schema: U16,
    /// Always 0.
    pub reserved: U32,
    /// Length of the identity JSON that follows.
    pub identity_len: U32,
}

impl FrameHeader {
    /// A v5 header for an identity of `identity_len` bytes.
    pub fn v5(identity_len: u32) -> FrameHeader {
        FrameHeader {
            magic: MAGIC_V5,
            schema: U16::new(SCHEMA_V5),
            reserved: U32::new(0),
            identity_len: U32::new(identity_len),
        }
    }

    /// The header at the start of `buf`, if `buf` has 14 bytes.
    pub fn read(buf: &[u8]) -> Option<&FrameHeader> {
        FrameHeader::ref_from_prefix(buf).ok().map(|(header, _)| header)
    }

    /// Whether the magic is a legacy (v2 or v4) magic.
    pub fn is_legacy(&self) -> bool {
        self.magic == MAGIC_V4 || self.magic == MAGIC_V2
    }

    /// What the magic and schema make of the frame (see [`HeaderKind`]).
    pub fn kind(&self) -> HeaderKind {
        HeaderKind::of(self.magic, self.schema.get())
    }
}

const _: () = assert!(core::mem::size_of::<FrameHeader>() == HEADER_LEN);

/// What the magic and schema fields (bytes 0..6) make of a buffer: the decision table
/// of SPEC §1.1 checks 2–4 and §7.1, in one place for the reader, the migration and
/// the tools.
///
/// ```
/// use membrane_frame::frame::{HeaderKind, MAGIC_V2, MAGIC_V4, MAGIC_V5};
/// assert_eq!(HeaderKind::of(MAGIC_V2, 2), HeaderKind::Legacy { version: 2 });
/// assert_eq!(HeaderKind::of(MAGIC_V5, 4), HeaderKind::HalfMigrated { schema: 4 });
/// assert!(HeaderKind::of(MAGIC_V4, 5).migratable().is_err()); // schema_mismatch
/// assert!(!HeaderKind::of(*b"JUNK", 5).needs_migration());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HeaderKind {
    /// The v5 magic with schema 5.
    V5,
    /// A legacy frame: the v2 magic with schema 2, or the v4 magic with schema 4.
    Legacy {
        /// 2 or 4.
        version: u16,
    },
    /// The v5 magic with the schema field still 2 or 4: a frame the original
    /// `upgrade_v2_to_v5.py` half migrated.
    HalfMigrated {
        /// The schema field found: 2 or 4.
        schema: u16,
    },
    /// A legacy magic whose schema field does not match it.
    LegacyMismatch,
    /// Anything else — another magic, another schema, fewer than six bytes: the v5
    /// reader's verdict applies.
    Foreign,
}

impl HeaderKind {
    /// The kind of a magic and schema field.
    pub const fn of(magic: [u8; 4], schema: u16) -> HeaderKind {
        match (magic, schema) {
            (MAGIC_V5, SCHEMA_V5) => HeaderKind::V5,
            (MAGIC_V5, 2 | 4) => HeaderKind::HalfMigrated { schema },
            (MAGIC_V2, 2) | (MAGIC_V4, 4) => HeaderKind::Legacy { version: schema },
            (MAGIC_V2 | MAGIC_V4, _) => HeaderKind::LegacyMismatch,
            _ => HeaderKind::Foreign,
        }
    }

    /// The kind of the first six bytes of `bytes` ([`Foreign`](Self::Foreign) when
    /// there are fewer).
    ///
    /// ```
    /// use membrane_frame::frame::HeaderKind;
    /// assert_eq!(HeaderKind::of_bytes(&[0xC0, 0xDE, 0x01, 0x04, 0x04, 0x00]), HeaderKind::Legacy { version: 4 });
    /// assert_eq!(HeaderKind::of_bytes(b"{\"schema_version\": 5}"), HeaderKind::Foreign);
    /// ```
    pub fn of_bytes(bytes: &[u8]) -> HeaderKind {
        HeadFields::decode(bytes).kind()
    }

    /// Whether migration rewrites bytes 0..6 of such a frame.
    pub const fn needs_migration(self) -> bool {
        matches!(self, HeaderKind::Legacy { .. } | HeaderKind::HalfMigrated { .. })
    }

    /// The kind, or — for [`LegacyMismatch`](Self::LegacyMismatch) — the error migration
    /// gives such a frame: `schema_mismatch` at byte 4.
    pub fn migratable(self) -> Result<HeaderKind, Error> {
        match self {
            HeaderKind::LegacyMismatch => {
                Err(Error::new(ErrorCode::SchemaMismatch, "legacy magic with a schema field that does not match it")
                    .at(4)
                    .in_field("schema"))
            }
            kind => Ok(kind),
        }
    }
}

/// The name of a magic: `"v5"`, `"legacy v4"`, `"legacy v2"`, or `None` for a magic
/// that is not Membrane's.
pub const fn magic_name(magic: [u8; 4]) -> Option<&'static str> {
    match magic {
        MAGIC_V5 => Some("v5"),
        MAGIC_V4 => Some("legacy v4"),
        MAGIC_V2 => Some("legacy v2"),
        _ => None,
    }
}

/// The fields of a frame's head as far as a (possibly short or damaged) buffer holds
/// them, decoded without any check: for tools that show what a file contains. Readers
/// that decide validity use [`Frame`](crate::Frame) and [`FrameHeader`].
///
/// ```
/// use membrane_frame::frame::HeadFields;
/// # let bytes = membrane_frame::example_frame();
/// let head = HeadFields::decode(&bytes);
/// assert_eq!(head.payload_len, Some(5));
/// assert_eq!(head.identity_json(&bytes).map(<[u8]>::len).ok(), head.identity_len.map(|n| n as usize));
/// assert_eq!(HeadFields::decode(&bytes[..12]).identity_len, None);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HeadFields {
    /// Bytes 0..4.
    pub magic: Option<[u8; 4]>,
    /// Bytes 4..6.
    pub schema: Option<u16>,
    /// Bytes 6..10.
    pub reserved: Option<u32>,
    /// Bytes 10..14: the identity length `L`.
    pub identity_len: Option<u32>,
    /// Bytes `14 + L .. 22 + L`.
    pub payload_len: Option<u64>,
}

impl HeadFields {
    /// Decode what `bytes` holds of a head.
    pub fn decode(bytes: &[u8]) -> HeadFields {
        fn field<const N: usize>(bytes: &[u8], start: usize) -> Option<[u8; N]> {
            bytes.get(start..start.checked_add(N)?)?.try_into().ok()
        }
        let identity_len = field(bytes, 10).map(u32::from_le_bytes);
        HeadFields {
            magic: field(bytes, 0),
            schema: field(bytes, 4).map(u16::from_le_bytes),
            reserved: field(bytes, 6).map(u32::from_le_bytes),
            identity_len,
            payload_len: identity_len
                .and_then(|len| field(bytes, HEADER_LEN.checked_add(len as usize)?))
                .map(u64::from_le_bytes),
        }
    }

    /// The kind of the magic and schema, if both are there.
    pub fn kind(&self) -> HeaderKind {
        match (self.magic, self.schema) {
            (Some(magic), Some(schema)) => HeaderKind::of(magic, schema),
            _ => HeaderKind::Foreign,
        }
    }

    /// The identity JSON within `bytes` (the buffer this was decoded from), or the
    /// reader's `identity_overrun` when it is not all there.
    pub fn identity_json<'a>(&self, bytes: &'a [u8]) -> Result<&'a [u8], Error> {
        let overrun =
            || Error::new(ErrorCode::IdentityOverrun, "the identity runs past the end").at(10).in_field("identity_len");
        let len = self.identity_len.and_then(|len| usize::try_from(len).ok()).ok_or_else(overrun)?;
        HEADER_LEN.checked_add(len).and_then(|end| bytes.get(HEADER_LEN..end)).ok_or_else(overrun)
    }

    /// Where the payload starts: `22 + L`.
    pub fn payload_start(&self) -> Option<u64> {
        Some(MIN_FRAME_PREFIX as u64 + u64::from(self.identity_len?))
    }

    /// Where the trailer starts: `22 + L + P` (if it fits a `u64`).
    pub fn trailer_start(&self) -> Option<u64> {
        self.payload_start()?.checked_add(self.payload_len?)
    }
}
