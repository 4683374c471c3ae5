//! What can be wrong with a JSON text, and where.

use crate::error::{Error, ErrorCode};
use core::fmt;

/// The kind of strict-JSON violation (SPEC §4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum JsonErrorKind {
    /// The text ended where more was required (including an empty text).
    UnexpectedEnd,
    /// A byte that cannot start or continue what was expected here.
    UnexpectedByte,
    /// Something follows the single top-level value.
    TrailingCharacters,
    /// Not valid UTF-8 (bad sequence, overlong form, encoded surrogate, BOM is a syntax error).
    InvalidUtf8,
    /// A raw control character (below 0x20) inside a string.
    ControlCharacter,
    /// A backslash escape other than `\" \\ \/ \b \f \n \r \t \uXXXX`.
    InvalidEscape,
    /// A `\u` surrogate that is not part of a valid high/low pair.
    LoneSurrogate,
    /// A number with a leading zero (`01`), or a malformed number (`-`, `1.`, `1e`).
    InvalidNumber,
    /// The same key twice in one object (compared after unescaping).
    DuplicateKey,
    /// Nesting deeper than the configured limit.
    DepthExceeded,
    /// More keys open at once than the reader's key table holds.
    TooManyKeys,
    /// `:` missing after an object key.
    ExpectedColon,
    /// Something other than a string where an object key must be.
    ExpectedKey,
}

impl JsonErrorKind {
    /// A short description.
    pub const fn reason(self) -> &'static str {
        match self {
            JsonErrorKind::UnexpectedEnd => "JSON text ends too early",
            JsonErrorKind::UnexpectedByte => "unexpected byte in JSON text",
            JsonErrorKind::TrailingCharacters => "characters after the JSON value",
            JsonErrorKind::InvalidUtf8 => "invalid UTF-8",
            JsonErrorKind::ControlCharacter => "raw control character in string",
            JsonErrorKind::InvalidEscape => "invalid escape in string",
            JsonErrorKind::LoneSurrogate => "\\u escape is an unpaired surrogate",
            JsonErrorKind::InvalidNumber => "malformed number",
            JsonErrorKind::DuplicateKey => "duplicate key in object",
            JsonErrorKind::DepthExceeded => "nesting deeper than the limit",
            JsonErrorKind::TooManyKeys => "more object keys open at once than the key table holds",
            JsonErrorKind::ExpectedColon => "expected ':' after object key",
            JsonErrorKind::ExpectedKey => "expected a string key",
        }
    }
}

/// A strict-JSON violation at a byte offset of the text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JsonError {
    /// What is wrong.
    pub kind: JsonErrorKind,
    /// Byte offset in the text where it was found.
    pub offset: usize,
}

impl JsonError {
    pub(crate) const fn new(kind: JsonErrorKind, offset: usize) -> JsonError {
        JsonError { kind, offset }
    }

    /// This error as a crate [`Error`] with the given code (`identity_json`,
    /// `envelope_json`, ...), its offset shifted by `base` (where the text starts in
    /// the enclosing buffer).
    pub fn to_error(self, code: ErrorCode, base: u64) -> Error {
        Error::new(code, self.kind.reason()).at((self.offset as u64).saturating_add(base))
    }
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.kind.reason(), self.offset)
    }
}

// `core::error::Error` (Rust 1.81) serves no_std users too.
impl core::error::Error for JsonError {}

#[cfg(test)]
mod tests {
    use super::{JsonError, JsonErrorKind};

    #[test]
    fn an_error_displays_its_reason_and_offset() {
        let error = JsonError::new(JsonErrorKind::TooManyKeys, 17);
        assert_eq!(std::format!("{error}"), "more object keys open at once than the key table holds at byte 17");
        assert_eq!(
            std::format!("{}", JsonError::new(JsonErrorKind::ExpectedColon, 0)),
            "expected ':' after object key at byte 0"
        );
    }
}
