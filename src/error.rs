//! Errors as values: a stable code (SPEC §8), its class, and where it happened.
//!
//! Every reader in the crate returns [`Error`]. It is `Copy`, allocation-free and
//! carries the byte offset and the field name it concerns wherever they are known, so a
//! caller can print `identity_field at byte 71 (layer_range): start > end` without
//! re-parsing anything.

use core::fmt;

/// The error families of SPEC §8.
///
/// `Schema`: wrong format or version — do not retry, maybe migrate. `Corrupt`: our
/// format, damaged bytes. `Usage` and `Io` are API misuse and environment failures.
///
/// ```
/// use membrane_frame::{ErrorClass, Frame};
/// # let mut bytes = membrane_frame::example_frame();
/// bytes[3] = 0x04; // a v4 magic: schema, not damage
/// assert_eq!(Frame::parse(&bytes).unwrap_err().class(), ErrorClass::Schema);
/// assert_eq!(Frame::parse(&bytes[..10]).unwrap_err().class(), ErrorClass::Corrupt);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum ErrorClass {
    /// Wrong format or version: do not retry; maybe migrate.
    Schema = 1,
    /// Our format, damaged bytes.
    Corrupt = 2,
    /// The API was misused (null pointer, small buffer, length mismatch, ...).
    Usage = 3,
    /// The environment failed (I/O).
    Io = 4,
}

impl ErrorClass {
    /// Lower-case name as used in machine-readable output: `schema`, `corrupt`, ...
    pub const fn name(self) -> &'static str {
        match self {
            ErrorClass::Schema => "schema",
            ErrorClass::Corrupt => "corrupt",
            ErrorClass::Usage => "usage",
            ErrorClass::Io => "io",
        }
    }
}

macro_rules! error_codes {
    ($($variant:ident = $num:literal, $name:literal, $class:ident, $doc:literal, $description:literal;)*) => {
        /// Stable error codes (SPEC §8). Numbers are part of the C ABI: never renumber,
        /// never reuse. `0` (`ok`) is not an error and so is not a variant.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[repr(u32)]
        #[non_exhaustive]
        pub enum ErrorCode {
            $(#[doc = $doc] $variant = $num,)*
        }

        impl ErrorCode {
            /// Every code, in numeric order.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant,)*];

            /// The SPEC §8 name, e.g. `"trailer_mismatch"`.
            pub const fn name(self) -> &'static str {
                match self { $(ErrorCode::$variant => $name,)* }
            }

            /// A one-line description, lower case, for messages (`mbr_status_str` of
            /// the C ABI, the CLI's explanations).
            pub const fn description(self) -> &'static str {
                match self { $(ErrorCode::$variant => $description,)* }
            }

            /// The class the code belongs to.
            pub const fn class(self) -> ErrorClass {
                match self { $(ErrorCode::$variant => ErrorClass::$class,)* }
            }

            /// The stable number (the C ABI status).
            pub const fn number(self) -> u32 {
                self as u32
            }

            /// The code with this number, if there is one (`0` is `ok`, not a code).
            pub const fn from_number(number: u32) -> Option<ErrorCode> {
                match number { $($num => Some(ErrorCode::$variant),)* _ => None }
            }

            /// The code with this SPEC §8 name, if there is one.
            pub fn from_name(name: &str) -> Option<ErrorCode> {
                match name { $($name => Some(ErrorCode::$variant),)* _ => None }
            }
        }
    };
}

// One row per code: variant = number, SPEC §8 name, class, doc, one-line description.
error_codes! {
    TooShort = 1, "too_short", Corrupt, "Fewer than 22 bytes: not even a header and a payload length.",
        "fewer than 22 bytes: not even a header and a payload length";
    BadMagic = 2, "bad_magic", Schema, "The first four bytes are not a Membrane magic.",
        "the first four bytes are not a Membrane magic";
    LegacyFrame = 3, "legacy_frame", Schema, "A v2 or v4 frame: migrate it (SPEC §7).",
        "a v2 or v4 frame: migrate it to v5";
    SchemaMismatch = 4, "schema_mismatch", Schema, "The schema field is not 5.",
        "the schema field is not 5";
    ReservedNonzero = 5, "reserved_nonzero", Schema, "The reserved field is not 0.",
        "the reserved field is not 0";
    IdentityOverrun = 6, "identity_overrun", Corrupt, "The identity and payload length run past the end of the buffer.",
        "the identity and payload length run past the end of the buffer";
    IdentityTooLarge = 7, "identity_too_large", Schema, "The identity length exceeds the configured limit.",
        "the identity length exceeds the configured limit";
    IdentityJson = 8, "identity_json", Schema, "The identity is not strict JSON (SPEC §4) or not an object.",
        "the identity is not strict JSON or not an object";
    IdentityField = 9, "identity_field", Schema, "An identity field breaks SPEC §2.2.",
        "an identity field breaks the identity rules";
    PayloadOverrun = 10, "payload_overrun", Corrupt, "The payload and trailer run past the end of the buffer.",
        "the payload and trailer run past the end of the buffer";
    TrailingBytes = 11, "trailing_bytes", Corrupt, "Bytes follow the frame (exact parsing only).",
        "bytes follow the frame";
    TrailerMismatch = 12, "trailer_mismatch", Corrupt, "The trailer is not the first 8 bytes of SHA-256(payload).",
        "the trailer is not the first 8 bytes of SHA-256(payload)";
    PayloadHashMismatch = 13, "payload_hash_mismatch", Corrupt, "payload_hash is not the lower-case hex SHA-256 of the payload.",
        "payload_hash is not the lower-case hex SHA-256 of the payload";
    EnvelopeJson = 20, "envelope_json", Schema, "The envelope is not strict JSON.",
        "the envelope is not strict JSON";
    EnvelopeVersion = 21, "envelope_version", Schema, "schema_version is missing or not 5.",
        "the envelope schema_version is missing or not 5";
    EnvelopeMissingField = 22, "envelope_missing_field", Schema, "A required envelope field is missing.",
        "a required envelope field is missing";
    EnvelopeField = 23, "envelope_field", Schema, "An envelope field breaks SPEC §3.1.",
        "an envelope field breaks the envelope rules";
    SnapshotJson = 30, "snapshot_json", Schema, "The snapshot is not strict JSON.",
        "the snapshot is not strict JSON";
    SnapshotVersion = 31, "snapshot_version", Schema, "The snapshot schema_version is missing or unsupported.",
        "the snapshot schema_version is missing or unsupported";
    SnapshotField = 32, "snapshot_field", Schema, "A snapshot field breaks SPEC §5.",
        "a snapshot field breaks the snapshot rules";
    StaleEpoch = 33, "stale_epoch", Schema, "The snapshot epoch is two or more behind the live epoch.",
        "the snapshot epoch is two or more behind the live epoch";
    TombstoneJson = 40, "tombstone_json", Schema, "A tombstone body is not strict JSON.",
        "a tombstone body is not strict JSON";
    TombstoneField = 41, "tombstone_field", Schema, "A tombstone body field breaks SPEC §6.",
        "a tombstone body field breaks the tombstone rules";
    ProtoDecode = 50, "proto_decode", Corrupt, "A protobuf message (SPEC §10) is not valid wire format: truncated or over-long varint, length past the end, group or unknown wire type, field number 0.",
        "a protobuf message is not valid wire format";
    ProtoField = 51, "proto_field", Schema, "A known protobuf field (SPEC §10) has the wrong wire type or an invalid value (a string that is not UTF-8).",
        "a known protobuf field has the wrong wire type or an invalid value";
    ChunkSequence = 52, "chunk_sequence", Corrupt, "Chunks (SPEC §10) out of sequence: a chunk_index or offset gap, a chunk after is_last, or no is_last.",
        "chunks out of sequence: index or offset gap, data after is_last, or no is_last";
    ChunkDigest = 53, "chunk_digest", Corrupt, "A chunk's sha256_hex is not the lower-case hex SHA-256 of its data (SPEC §10).",
        "a chunk's sha256_hex is not the SHA-256 of its data";
    NullPointer = 100, "null_pointer", Usage, "A required pointer was NULL (C ABI).",
        "a required pointer argument was NULL";
    BufferTooSmall = 101, "buffer_too_small", Usage, "The output buffer is too small; the error says how many bytes are needed.",
        "an output buffer is too small";
    LengthMismatch = 102, "length_mismatch", Usage, "The payload fed to a chunked writer does not match its declared length.",
        "the payload fed does not match the declared length";
    TableFull = 103, "table_full", Usage, "A fixed-capacity table is full.",
        "a fixed-capacity table is full";
    Io = 104, "io", Io, "An I/O operation failed.",
        "an I/O operation failed";
    InvalidArgument = 105, "invalid_argument", Usage, "An argument is out of its allowed range (an unknown level, a bad option).",
        "an argument is out of its allowed range";
    InvalidState = 106, "invalid_state", Usage, "The object is not in a state that allows this call (e.g. fed after it failed).",
        "the object is not initialised or already finished";
    Misaligned = 107, "misaligned", Usage, "A typed view of a payload was asked for where its address is not aligned to the element type, its length is not a whole number of elements, or the frame's dtype is not that type's (SPEC §1.5).",
        "the payload cannot be viewed as that element type in place";
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An error with its code, the byte offset and field it concerns, and a short reason.
///
/// Offsets are absolute within the buffer handed to the reader (for a frame, offset 14
/// is the first byte of the identity JSON).
///
/// ```
/// use membrane_frame::{Frame, ErrorCode, ErrorClass};
/// let err = Frame::parse(&[0u8; 10]).unwrap_err();
/// assert_eq!(err.code(), ErrorCode::TooShort);
/// assert_eq!(err.class(), ErrorClass::Corrupt);
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Error {
    // `UNKNOWN` and `""` stand for "none" (no buffer or offset reaches 2^64 - 1 bytes):
    // without `Option`s an error is 32 bytes instead of 48 on a 32-bit CPU, and every
    // error a reader returns is built and moved in fewer words.
    offset: u64,
    needed: u64,
    field: &'static str,
    /// Without the `error-text` feature errors carry no reason: a firmware keeps the
    /// code, offset and field and drops the texts and the code that stores them.
    #[cfg(feature = "error-text")]
    reason: &'static str,
    code: ErrorCode,
}

/// The stored offset or size of an error that has none.
const UNKNOWN: u64 = u64::MAX;

impl Error {
    /// An error with a code and a short reason. Crate-private: the library's readers
    /// decide what is a format error; callers get the usage errors below.
    pub(crate) const fn new(code: ErrorCode, reason: &'static str) -> Error {
        #[cfg(not(feature = "error-text"))]
        let _ = reason;
        Error {
            offset: UNKNOWN,
            needed: UNKNOWN,
            field: "",
            #[cfg(feature = "error-text")]
            reason,
            code,
        }
    }

    /// `null_pointer` for a required pointer `argument` (for C bindings).
    pub const fn null_pointer(argument: &'static str) -> Error {
        Error::new(ErrorCode::NullPointer, "a required pointer argument is NULL").in_field(argument)
    }

    /// `invalid_argument`: `argument` is out of its allowed range, for `reason`.
    pub const fn invalid_argument(argument: &'static str, reason: &'static str) -> Error {
        Error::new(ErrorCode::InvalidArgument, reason).in_field(argument)
    }

    /// `invalid_state`: the object `argument` does not allow this call, for `reason`.
    pub const fn invalid_state(argument: &'static str, reason: &'static str) -> Error {
        Error::new(ErrorCode::InvalidState, reason).in_field(argument)
    }

    /// `io`: an operation on `argument` (a file, a callback) failed, for `reason`.
    pub const fn io(argument: &'static str, reason: &'static str) -> Error {
        Error::new(ErrorCode::Io, reason).in_field(argument)
    }

    /// A `buffer_too_small` error that reports the size needed (`u64::MAX`: not known).
    pub const fn buffer_too_small(needed: u64) -> Error {
        let mut err = Error::new(ErrorCode::BufferTooSmall, "output buffer too small");
        err.needed = needed;
        err
    }

    /// The same error at a byte offset (`u64::MAX` stands for none: no buffer reaches
    /// it).
    #[must_use]
    pub const fn at(mut self, offset: u64) -> Error {
        self.offset = offset;
        self
    }

    /// The same error about a named field.
    #[must_use]
    pub const fn in_field(mut self, field: &'static str) -> Error {
        self.field = field;
        self
    }

    /// Shift the offset by `base` (used when a nested reader's offsets become a frame's),
    /// saturating at `u64::MAX - 1`.
    #[must_use]
    pub const fn shifted(mut self, base: u64) -> Error {
        if self.offset != UNKNOWN {
            // Kept below `UNKNOWN`: a shifted offset is still an offset.
            let shifted = self.offset.saturating_add(base);
            self.offset = if shifted == UNKNOWN { UNKNOWN - 1 } else { shifted };
        }
        self
    }

    /// The stable code.
    pub const fn code(&self) -> ErrorCode {
        self.code
    }

    /// The code's class.
    pub const fn class(&self) -> ErrorClass {
        self.code.class()
    }

    /// Byte offset the error concerns, where known.
    pub const fn offset(&self) -> Option<u64> {
        known(self.offset)
    }

    /// Field name the error concerns, where known (`"layer_range"`, `"payload_len"`, ...).
    pub const fn field(&self) -> Option<&'static str> {
        if self.field.is_empty() {
            None
        } else {
            Some(self.field)
        }
    }

    /// A short human-readable reason; empty when the crate is built without its
    /// `error-text` feature (a default one).
    pub const fn reason(&self) -> &'static str {
        #[cfg(feature = "error-text")]
        return self.reason;
        #[cfg(not(feature = "error-text"))]
        ""
    }

    /// For `buffer_too_small`: the number of bytes the output needs.
    pub const fn needed(&self) -> Option<u64> {
        known(self.needed)
    }
}

impl Error {
    /// The text `Display` shows (`trailer_mismatch at byte 315 (trailer): ...`), handed
    /// to `piece` a piece at a time. Numbers are written here, not by `core::fmt`, so a
    /// C library that only fills its error detail links no formatting machinery.
    pub fn message_pieces(&self, mut piece: impl FnMut(&str)) {
        let mut digits = [0u8; 20];
        piece(self.code.name());
        if let Some(offset) = self.offset() {
            piece(" at byte ");
            piece(decimal(offset, &mut digits));
        }
        if let Some(field) = self.field() {
            piece(" (");
            piece(field);
            piece(")");
        }
        if !self.reason().is_empty() {
            piece(": ");
            piece(self.reason());
        }
        if let Some(needed) = self.needed() {
            piece(" (needs ");
            piece(decimal(needed, &mut digits));
            piece(" bytes)");
        }
    }
}

const fn known(value: u64) -> Option<u64> {
    if value == UNKNOWN {
        None
    } else {
        Some(value)
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("code", &self.code)
            .field("offset", &self.offset())
            .field("field", &self.field())
            .field("reason", &self.reason())
            .field("needed", &self.needed())
            .finish()
    }
}

/// `value` in decimal, in `digits`.
fn decimal(value: u64, digits: &mut [u8; 20]) -> &str {
    // Only ASCII digits are written.
    core::str::from_utf8(crate::decimal::decimal(value, digits)).unwrap_or("")
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut result = Ok(());
        self.message_pieces(|piece| {
            if result.is_ok() {
                result = f.write_str(piece);
            }
        });
        result
    }
}

// `core::error::Error` (Rust 1.81) serves no_std users too.
impl core::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_writes_every_u64_as_display_does() {
        let mut digits = [0u8; 20];
        for value in [0, 1, 9, 10, 99, 100, 315, 4_294_967_296, u64::MAX - 1, u64::MAX] {
            assert_eq!(decimal(value, &mut digits), std::format!("{value}"));
        }
    }

    #[test]
    fn the_message_pieces_are_the_display_text() {
        let err = Error::buffer_too_small(65).at(315).in_field("trailer");
        let mut joined = std::string::String::new();
        err.message_pieces(|piece| joined.push_str(piece));
        assert_eq!(joined, std::format!("{err}"));
        assert!(joined.contains(" at byte 315") && joined.contains("(needs 65 bytes)"), "{joined}");
    }

    #[test]
    fn numbers_and_names_round_trip() {
        for &code in ErrorCode::ALL {
            assert_eq!(ErrorCode::from_number(code.number()), Some(code));
            assert_eq!(ErrorCode::from_name(code.name()), Some(code));
            assert_eq!(std::format!("{code}"), code.name(), "a code displays as its name");
        }
        assert_eq!(ErrorCode::from_number(0), None);
        assert_eq!(ErrorCode::from_number(14), None);
    }

    #[test]
    fn every_code_has_its_own_one_line_description() {
        for (i, &code) in ErrorCode::ALL.iter().enumerate() {
            let text = code.description();
            assert!(!text.is_empty() && !text.ends_with('.') && !text.contains('\n'), "{code}: {text:?}");
            assert!(text.starts_with(|c: char| !c.is_ascii_uppercase()), "{code}: lower case: {text:?}");
            for &other in &ErrorCode::ALL[i + 1..] {
                assert_ne!(text, other.description(), "{code} and {other}");
            }
        }
        assert_eq!(
            ErrorCode::TrailerMismatch.description(),
            "the trailer is not the first 8 bytes of SHA-256(payload)"
        );
    }

    #[test]
    fn class_names_are_the_machine_readable_words() {
        let names = [ErrorClass::Schema, ErrorClass::Corrupt, ErrorClass::Usage, ErrorClass::Io].map(ErrorClass::name);
        assert_eq!(names, ["schema", "corrupt", "usage", "io"]);
    }

    #[test]
    fn usage_errors_name_their_argument_and_display_every_part() {
        let cases = [
            (Error::null_pointer("out"), ErrorCode::NullPointer),
            (Error::invalid_argument("out", "why"), ErrorCode::InvalidArgument),
            (Error::invalid_state("out", "why"), ErrorCode::InvalidState),
            (Error::io("out", "why"), ErrorCode::Io),
        ];
        for (err, code) in cases {
            assert_eq!(
                (err.code(), err.class(), err.field(), err.offset(), err.needed()),
                (code, code.class(), Some("out"), None, None)
            );
        }
        let small = Error::buffer_too_small(42);
        assert_eq!((small.code(), small.needed(), small.field()), (ErrorCode::BufferTooSmall, Some(42), None));
        let err = Error::new(ErrorCode::IdentityField, "bad").at(7).in_field("dtype");
        if cfg!(feature = "error-text") {
            assert_eq!(Error::invalid_argument("n", "too big").reason(), "too big");
            assert_eq!(std::format!("{small}"), "buffer_too_small: output buffer too small (needs 42 bytes)");
            assert_eq!(std::format!("{err}"), "identity_field at byte 7 (dtype): bad");
        } else {
            // Without the texts, everything else is still there.
            assert_eq!(Error::invalid_argument("n", "too big").reason(), "");
            assert_eq!(std::format!("{small}"), "buffer_too_small (needs 42 bytes)");
            assert_eq!(std::format!("{err}"), "identity_field at byte 7 (dtype)");
        }
    }

    #[test]
    fn debug_shows_the_parts_as_options() {
        let err = Error::new(ErrorCode::IdentityField, "bad").at(7).in_field("dtype");
        let shown = std::format!("{err:?}");
        assert!(shown.contains("code: IdentityField") && shown.contains("offset: Some(7)"), "{shown}");
        assert!(shown.contains(r#"field: Some("dtype")"#) && shown.contains("needed: None"), "{shown}");
        let shown = std::format!("{:?}", Error::buffer_too_small(9));
        assert!(shown.contains("offset: None") && shown.contains("field: None") && shown.contains("needed: Some(9)"));
    }

    #[test]
    fn shifting_moves_a_known_offset_and_saturates() {
        let err = Error::new(ErrorCode::IdentityJson, "x");
        assert_eq!(err.shifted(14).offset(), None);
        assert_eq!(err.at(3).shifted(14).offset(), Some(17));
        // u64::MAX stands for "no offset": a shifted offset saturates just below it.
        assert_eq!(err.at(u64::MAX - 20).shifted(14).offset(), Some(u64::MAX - 6));
        assert_eq!(err.at(u64::MAX - 1).shifted(14).offset(), Some(u64::MAX - 1));
        assert_eq!(err.at(u64::MAX).offset(), None);
    }

    #[test]
    fn usage_codes_start_at_100() {
        for &code in ErrorCode::ALL {
            let usage = matches!(code.class(), ErrorClass::Usage | ErrorClass::Io);
            assert_eq!(usage, code.number() >= 100, "{code}");
        }
    }
}
