//! The fixed 14-byte frame header (SPEC §1) as a zerocopy struct.

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
}

const _: () = assert!(core::mem::size_of::<FrameHeader>() == HEADER_LEN);
