//! Status codes: the stable numbers of SPEC §8 (from [`ErrorCode::number`]), their
//! names and classes, and the optional error detail (`mbr_error`).

use crate::boundary::guard;
#[cfg(feature = "status-names")]
use crate::slice::{name_table, NameTable, NAME_WIDTH};
use core::ffi::c_char;
use membrane::{Error, ErrorClass, ErrorCode};

/// Success.
pub const MBR_OK: u32 = 0;
/// SPEC §8 `too_short`: fewer than 22 bytes.
pub const MBR_TOO_SHORT: u32 = 1;
/// SPEC §8 `bad_magic`: not a Membrane frame.
pub const MBR_BAD_MAGIC: u32 = 2;
/// SPEC §8 `legacy_frame`: a v2 or v4 frame; migrate it.
pub const MBR_LEGACY_FRAME: u32 = 3;
/// SPEC §8 `schema_mismatch`: the schema field is not 5.
pub const MBR_SCHEMA_MISMATCH: u32 = 4;
/// SPEC §8 `reserved_nonzero`: the reserved field is not 0.
pub const MBR_RESERVED_NONZERO: u32 = 5;
/// SPEC §8 `identity_overrun`: the identity runs past the end of the buffer.
pub const MBR_IDENTITY_OVERRUN: u32 = 6;
/// SPEC §8 `identity_too_large`: identity_len exceeds the limit.
pub const MBR_IDENTITY_TOO_LARGE: u32 = 7;
/// SPEC §8 `identity_json`: the identity is not strict JSON (or not an object).
pub const MBR_IDENTITY_JSON: u32 = 8;
/// SPEC §8 `identity_field`: an identity field breaks SPEC §2.2.
pub const MBR_IDENTITY_FIELD: u32 = 9;
/// SPEC §8 `payload_overrun`: the payload runs past the end of the buffer.
pub const MBR_PAYLOAD_OVERRUN: u32 = 10;
/// SPEC §8 `trailing_bytes`: bytes follow the frame (exact mode).
pub const MBR_TRAILING_BYTES: u32 = 11;
/// SPEC §8 `trailer_mismatch`: the trailer is not SHA-256(payload)[0..8].
pub const MBR_TRAILER_MISMATCH: u32 = 12;
/// SPEC §8 `payload_hash_mismatch`: payload_hash is not the payload's SHA-256 (full level).
pub const MBR_PAYLOAD_HASH_MISMATCH: u32 = 13;
/// SPEC §8 `envelope_json`.
pub const MBR_ENVELOPE_JSON: u32 = 20;
/// SPEC §8 `envelope_version`.
pub const MBR_ENVELOPE_VERSION: u32 = 21;
/// SPEC §8 `envelope_missing_field`.
pub const MBR_ENVELOPE_MISSING_FIELD: u32 = 22;
/// SPEC §8 `envelope_field`.
pub const MBR_ENVELOPE_FIELD: u32 = 23;
/// SPEC §8 `snapshot_json`.
pub const MBR_SNAPSHOT_JSON: u32 = 30;
/// SPEC §8 `snapshot_version`.
pub const MBR_SNAPSHOT_VERSION: u32 = 31;
/// SPEC §8 `snapshot_field`.
pub const MBR_SNAPSHOT_FIELD: u32 = 32;
/// SPEC §8 `stale_epoch`.
pub const MBR_STALE_EPOCH: u32 = 33;
/// SPEC §8 `tombstone_json`.
pub const MBR_TOMBSTONE_JSON: u32 = 40;
/// SPEC §8 `tombstone_field`.
pub const MBR_TOMBSTONE_FIELD: u32 = 41;
/// SPEC §8 (range 50, `src/proto`) `proto_decode`: a protobuf message is not valid wire format.
pub const MBR_PROTO_DECODE: u32 = 50;
/// SPEC §8 (range 50, `src/proto`) `proto_field`: a known protobuf field has the wrong wire type or value.
pub const MBR_PROTO_FIELD: u32 = 51;
/// SPEC §8 (range 50, `src/proto`) `chunk_sequence`: chunks out of sequence.
pub const MBR_CHUNK_SEQUENCE: u32 = 52;
/// SPEC §8 (range 50, `src/proto`) `chunk_digest`: a chunk's sha256_hex does not match its data.
pub const MBR_CHUNK_DIGEST: u32 = 53;
/// Usage: a required pointer argument was NULL.
pub const MBR_NULL_POINTER: u32 = 100;
/// Usage: an output buffer is too small (the length queries say how large it must be).
pub const MBR_BUFFER_TOO_SMALL: u32 = 101;
/// Usage: a chunked writer was fed more or less payload than declared.
pub const MBR_LENGTH_MISMATCH: u32 = 102;
/// Usage: a fixed-capacity table is full.
pub const MBR_TABLE_FULL: u32 = 103;
/// I/O: an operation failed (for a chunked writer: its write callback returned non-zero).
pub const MBR_IO: u32 = 104;
/// Usage: an argument is out of range (an unknown level, mode, field or dtype number,
/// a string that is not UTF-8).
pub const MBR_INVALID_ARGUMENT: u32 = 105;
/// Usage: an object is not initialised, or is already finished.
pub const MBR_INVALID_STATE: u32 = 106;
/// Usage: a typed view of a payload is impossible in place: its address is not aligned
/// to the element type, its length is not a whole number of elements, or the frame's
/// dtype is not the element type's.
pub const MBR_MISALIGNED: u32 = 107;
/// The library panicked (a bug): the call did nothing that can be relied on. Specific
/// to the C ABI (a Rust caller sees the panic itself); no SPEC §8 code uses 199.
pub const MBR_PANIC: u32 = 199;

/// Class of `MBR_OK` (no error).
pub const MBR_CLASS_NONE: u32 = 0;
/// Wrong format or version: do not retry; maybe migrate.
pub const MBR_CLASS_SCHEMA: u32 = 1;
/// Our format, damaged bytes.
pub const MBR_CLASS_CORRUPT: u32 = 2;
/// The API was misused (NULL pointer, small buffer, bad argument, `MBR_PANIC`, unknown codes).
pub const MBR_CLASS_USAGE: u32 = 3;
/// The environment failed (I/O).
pub const MBR_CLASS_IO: u32 = 4;

/// `mbr_error.offset` when the error concerns no particular byte.
pub const MBR_NO_OFFSET: u64 = u64::MAX;

// Every constant is the number of its Rust code (and the other way round, below).
const _: () = {
    const fn same(constant: u32, code: ErrorCode) -> bool {
        constant == code.number()
    }
    assert!(same(MBR_TOO_SHORT, ErrorCode::TooShort));
    assert!(same(MBR_BAD_MAGIC, ErrorCode::BadMagic));
    assert!(same(MBR_LEGACY_FRAME, ErrorCode::LegacyFrame));
    assert!(same(MBR_SCHEMA_MISMATCH, ErrorCode::SchemaMismatch));
    assert!(same(MBR_RESERVED_NONZERO, ErrorCode::ReservedNonzero));
    assert!(same(MBR_IDENTITY_OVERRUN, ErrorCode::IdentityOverrun));
    assert!(same(MBR_IDENTITY_TOO_LARGE, ErrorCode::IdentityTooLarge));
    assert!(same(MBR_IDENTITY_JSON, ErrorCode::IdentityJson));
    assert!(same(MBR_IDENTITY_FIELD, ErrorCode::IdentityField));
    assert!(same(MBR_PAYLOAD_OVERRUN, ErrorCode::PayloadOverrun));
    assert!(same(MBR_TRAILING_BYTES, ErrorCode::TrailingBytes));
    assert!(same(MBR_TRAILER_MISMATCH, ErrorCode::TrailerMismatch));
    assert!(same(MBR_PAYLOAD_HASH_MISMATCH, ErrorCode::PayloadHashMismatch));
    assert!(same(MBR_ENVELOPE_JSON, ErrorCode::EnvelopeJson));
    assert!(same(MBR_ENVELOPE_VERSION, ErrorCode::EnvelopeVersion));
    assert!(same(MBR_ENVELOPE_MISSING_FIELD, ErrorCode::EnvelopeMissingField));
    assert!(same(MBR_ENVELOPE_FIELD, ErrorCode::EnvelopeField));
    assert!(same(MBR_SNAPSHOT_JSON, ErrorCode::SnapshotJson));
    assert!(same(MBR_SNAPSHOT_VERSION, ErrorCode::SnapshotVersion));
    assert!(same(MBR_SNAPSHOT_FIELD, ErrorCode::SnapshotField));
    assert!(same(MBR_STALE_EPOCH, ErrorCode::StaleEpoch));
    assert!(same(MBR_TOMBSTONE_JSON, ErrorCode::TombstoneJson));
    assert!(same(MBR_TOMBSTONE_FIELD, ErrorCode::TombstoneField));
    assert!(same(MBR_PROTO_DECODE, ErrorCode::ProtoDecode));
    assert!(same(MBR_PROTO_FIELD, ErrorCode::ProtoField));
    assert!(same(MBR_CHUNK_SEQUENCE, ErrorCode::ChunkSequence));
    assert!(same(MBR_CHUNK_DIGEST, ErrorCode::ChunkDigest));
    assert!(same(MBR_NULL_POINTER, ErrorCode::NullPointer));
    assert!(same(MBR_BUFFER_TOO_SMALL, ErrorCode::BufferTooSmall));
    assert!(same(MBR_LENGTH_MISMATCH, ErrorCode::LengthMismatch));
    assert!(same(MBR_TABLE_FULL, ErrorCode::TableFull));
    assert!(same(MBR_IO, ErrorCode::Io));
    assert!(same(MBR_INVALID_ARGUMENT, ErrorCode::InvalidArgument));
    assert!(same(MBR_INVALID_STATE, ErrorCode::InvalidState));
    assert!(same(MBR_MISALIGNED, ErrorCode::Misaligned));
    // One constant per code: a code added to the core must get its constant here.
    assert!(ErrorCode::ALL.len() == 35);
    assert!(ErrorCode::from_number(MBR_PANIC).is_none());
    assert!(MBR_CLASS_SCHEMA == ErrorClass::Schema as u32);
    assert!(MBR_CLASS_CORRUPT == ErrorClass::Corrupt as u32);
    assert!(MBR_CLASS_USAGE == ErrorClass::Usage as u32);
    assert!(MBR_CLASS_IO == ErrorClass::Io as u32);
};

/// The SPEC §8 names of every code (from [`ErrorCode::name`]), NUL-terminated.
#[cfg(feature = "status-names")]
#[allow(clippy::indexing_slicing)] // const evaluation: an out-of-range index fails the build
static CODE_NAMES: NameTable<{ ErrorCode::ALL.len() }, NAME_WIDTH> = name_table!(ErrorCode::ALL, name, NAME_WIDTH);

/// Width of a NUL-terminated description.
#[cfg(feature = "status-names")]
const DESCRIPTION_WIDTH: usize = 128;

/// The one-line descriptions of every code (from [`ErrorCode::description`]).
#[cfg(feature = "status-names")]
#[allow(clippy::indexing_slicing)] // const evaluation: an out-of-range index fails the build
static DESCRIPTIONS: NameTable<{ ErrorCode::ALL.len() }, DESCRIPTION_WIDTH> =
    name_table!(ErrorCode::ALL, description, DESCRIPTION_WIDTH);

#[cfg(feature = "status-names")]
fn code_index(status: u32) -> Option<usize> {
    ErrorCode::ALL.iter().position(|code| code.number() == status)
}

/// The SPEC §8 name of a status: `"ok"`, `"trailer_mismatch"`, `"null_pointer"`, ...;
/// `"panic"` for `MBR_PANIC` and `"unknown"` for a number that is no status. Never
/// NULL; the string is static.
#[cfg(feature = "status-names")]
#[no_mangle]
#[must_use]
pub extern "C" fn mbr_status_name(status: u32) -> *const c_char {
    guard(c"unknown".as_ptr(), || match (status, code_index(status)) {
        (MBR_OK, _) => c"ok".as_ptr(),
        (MBR_PANIC, _) => c"panic".as_ptr(),
        (_, Some(index)) => CODE_NAMES.get(index, c"unknown"),
        (_, None) => c"unknown".as_ptr(),
    })
}

/// A one-line English description of a status. Never NULL; the string is static.
#[cfg(feature = "status-names")]
#[no_mangle]
#[must_use]
pub extern "C" fn mbr_status_str(status: u32) -> *const c_char {
    guard(c"unknown status".as_ptr(), || match (status, code_index(status)) {
        (MBR_OK, _) => c"success".as_ptr(),
        (MBR_PANIC, _) => c"the library panicked (a bug); the call did nothing reliable".as_ptr(),
        (_, Some(index)) => DESCRIPTIONS.get(index, c"unknown status"),
        (_, None) => c"unknown status".as_ptr(),
    })
}

/// The class of a status: `MBR_CLASS_NONE` for `MBR_OK`, else `MBR_CLASS_SCHEMA`
/// (do not retry; maybe migrate), `MBR_CLASS_CORRUPT` (damaged bytes),
/// `MBR_CLASS_USAGE` (API misuse; also `MBR_PANIC` and unknown numbers) or
/// `MBR_CLASS_IO`.
#[no_mangle]
#[must_use]
pub extern "C" fn mbr_status_class(status: u32) -> u32 {
    guard(MBR_CLASS_USAGE, || match (status, ErrorCode::from_number(status)) {
        (MBR_OK, _) => MBR_CLASS_NONE,
        (_, Some(code)) => code.class() as u32,
        (_, None) => MBR_CLASS_USAGE,
    })
}

/// The name of a class: `"none"`, `"schema"`, `"corrupt"`, `"usage"`, `"io"`, or
/// `"unknown"`. Never NULL; the string is static.
#[cfg(feature = "status-names")]
#[no_mangle]
#[must_use]
pub extern "C" fn mbr_class_name(class: u32) -> *const c_char {
    guard(c"unknown".as_ptr(), || {
        let name = match class {
            MBR_CLASS_NONE => c"none",
            MBR_CLASS_SCHEMA => c"schema",
            MBR_CLASS_CORRUPT => c"corrupt",
            MBR_CLASS_USAGE => c"usage",
            MBR_CLASS_IO => c"io",
            _ => c"unknown",
        };
        name.as_ptr()
    })
}

/// Where and why a call failed: what the Rust [`Error`] carries, copied into C
/// storage. Functions that take an `mbr_error *` write it only when they fail, and
/// only when the pointer is not NULL (it is the one optional pointer argument).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct mbr_error {
    /// The status the call returned.
    pub status: u32,
    /// Its class (`MBR_CLASS_*`).
    pub error_class: u32,
    /// The byte offset the error concerns (absolute in the buffer given), or
    /// `MBR_NO_OFFSET`.
    pub offset: u64,
    /// For `MBR_BUFFER_TOO_SMALL`: the size needed, when known, in the buffer's own unit
    /// (bytes; words for `mbr_snapshot_parse_indexed`'s `index`); else 0.
    pub needed: u64,
    /// The field or argument concerned (`"layer_range"`, `"payload_len"`, `"buf"`),
    /// NUL-terminated; empty when none.
    pub field: [c_char; 32],
    /// The whole error as one line, e.g. `identity_field at byte 71 (layer_range):
    /// range start is after its end`, NUL-terminated (cut at 127 bytes). Empty in a
    /// library built without the `error-text` feature (a firmware's size choice).
    pub message: [c_char; 128],
}

/// Writes UTF-8 into a C char array, always leaving room for the final NUL; text that
/// does not fit is cut at a character boundary, and nothing after the cut is written.
/// Plain string pieces, not `core::fmt`: filling an error detail links no formatter.
struct CText<'b> {
    out: &'b mut [c_char],
    len: usize,
    cut: bool,
}

impl<'b> CText<'b> {
    fn new(out: &'b mut [c_char]) -> Self {
        out.fill(0);
        CText { out, len: 0, cut: false }
    }

    fn push(&mut self, text: &str) {
        if self.cut {
            return;
        }
        // The longest head of `text` that leaves room for the NUL, cut where a
        // character starts.
        let room = self.out.len().saturating_sub(self.len + 1);
        let mut end = text.len().min(room);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let head = text.as_bytes().get(..end).unwrap_or(&[]);
        for (slot, &byte) in self.out.iter_mut().skip(self.len).zip(head) {
            *slot = byte as c_char;
        }
        self.len += head.len();
        self.cut = head.len() < text.len();
    }
}

impl mbr_error {
    /// A blank detail, for [`fill`](Self::fill) to fill in place (built on the stack
    /// and copied, its 184 bytes would sit in the frame of every entry point).
    // All zeros: written with a memset, not copied from a constant.
    pub(crate) const EMPTY: mbr_error =
        mbr_error { status: 0, error_class: 0, offset: 0, needed: 0, field: [0; 32], message: [0; 128] };

    /// The detail of `err`, into this blank detail.
    pub(crate) fn fill(&mut self, err: &Error) {
        self.status = err.code().number();
        self.error_class = err.class() as u32;
        self.offset = err.offset().unwrap_or(MBR_NO_OFFSET);
        self.needed = err.needed().unwrap_or(0);
        CText::new(&mut self.field).push(err.field().unwrap_or(""));
        #[cfg(feature = "error-text")]
        {
            let mut message = CText::new(&mut self.message);
            err.message_pieces(|piece| message.push(piece));
        }
    }

    /// The detail of a panic, into this blank detail.
    pub(crate) fn fill_panic(&mut self) {
        self.status = MBR_PANIC;
        self.error_class = MBR_CLASS_USAGE;
        self.offset = MBR_NO_OFFSET;
        CText::new(&mut self.message).push("panic: the library hit a bug");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::ffi::CStr;

    fn text<'a>(ptr: *const c_char) -> &'a str {
        // SAFETY: the functions under test return NUL-terminated strings that outlive 'a.
        unsafe { CStr::from_ptr(ptr) }.to_str().unwrap()
    }

    #[test]
    fn status_names_are_the_spec_names() {
        assert_eq!(text(mbr_status_name(MBR_OK)), "ok");
        for &code in ErrorCode::ALL {
            assert_eq!(text(mbr_status_name(code.number())), code.name());
            assert_eq!(mbr_status_class(code.number()), code.class() as u32);
            assert!(!text(mbr_status_str(code.number())).is_empty());
        }
        assert_eq!(text(mbr_status_name(MBR_PANIC)), "panic");
        assert_eq!(text(mbr_status_name(14)), "unknown");
        assert_eq!(text(mbr_class_name(mbr_status_class(MBR_TRAILER_MISMATCH))), "corrupt");
    }

    #[test]
    fn error_detail_is_cut_and_terminated() {
        let mut out = [1 as c_char; 8];
        let mut cut = CText::new(&mut out);
        cut.push("identity_field at byte 71");
        // Nothing after a cut, even a piece that would fit.
        cut.push("!");
        assert_eq!(text(out.as_ptr()), "identit");
        // A cut falls where a character starts: "é" (2 bytes) does not fit in the
        // last byte before the NUL, and nothing is written in its place.
        let mut out = [1 as c_char; 6];
        let mut cut = CText::new(&mut out);
        cut.push("ab");
        cut.push("cdé");
        // The byte left free does not take a later piece either.
        cut.push("x");
        assert_eq!(text(out.as_ptr()), "abcd");
        let mut out = [1 as c_char; 7];
        CText::new(&mut out).push("abcdé");
        assert_eq!(text(out.as_ptr()), "abcdé");
    }
}
