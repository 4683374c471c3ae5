//! A strict JSON reader (SPEC §4), shared by every reader in the crate.
//!
//! RFC 8259 and nothing more: UTF-8 only, no comments, no trailing commas, no NaN, no
//! leading zeros, escapes checked, surrogates paired, duplicate keys rejected at every
//! level, one top-level value. Nesting is tracked without recursion, so the depth limit
//! protects the stack. Strings and numbers are borrowed from the text; nothing is
//! copied or allocated.
//!
//! [`Reader`] is a pull parser that yields [`Event`]s; [`validate`] checks a whole text.

mod digits;
mod error;
mod escape;
mod float;
pub(crate) mod keys;
pub(crate) mod map_index;
mod nested;
mod number;
mod pow5_table;
mod reader;
pub(crate) mod spelled;
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
mod sse2;
mod string;
mod walk;
mod whitespace;

/// `text` as a `str`: `core::str::from_utf8`, whose error says where the first invalid
/// byte is, after one SSE2 pass on x86-64 that takes an ASCII text at once (core's
/// check steps byte by byte through a short text that is not word-aligned). For the
/// C ABI's checks of strings handed back to it.
///
/// ```
/// use membrane_frame::json::text_str;
/// assert_eq!(text_str(b"caf\xc3\xa9"), Ok("café"));
/// assert_eq!(text_str(b"caf\xc3").map_err(|e| e.valid_up_to()), Err(3));
/// ```
#[inline]
pub fn text_str(text: &[u8]) -> Result<&str, core::str::Utf8Error> {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    if let Some(ascii) = sse2::ascii_str(text) {
        return Ok(ascii);
    }
    core::str::from_utf8(text)
}

/// Whether `byte` is below DEL (0x7F): printable ASCII or a control byte. The crate's
/// writers put no raw byte at or above DEL in a canonical string (they escape it).
#[cfg(any(all(target_arch = "x86_64", target_feature = "sse2"), feature = "fast-identity", test, feature = "fuzzing"))]
#[inline(always)]
fn is_below_del(byte: u8) -> bool {
    byte < 0x7F
}

pub use error::{JsonError, JsonErrorKind};
pub(crate) use escape::escape;
pub use escape::write_escaped;
pub(crate) use nested::{keys_before, skip_nested};
pub(crate) use number::scan_number;
pub use number::JsonNumber;
pub(crate) use reader::{literal_end, utf8_aware, valid_prefix};
pub use reader::{validate, Event, Limits, Reader, DEFAULT_KEY_CAPACITY, DEFAULT_MAX_DEPTH, MAX_DEPTH};
pub use string::{Chars, JsonStr, RawStr};
#[cfg(test)]
pub(crate) use walk::tests::generated_map;
pub(crate) use walk::{StringArray, StringMapEntries};
pub(crate) use whitespace::{whitespace_end, Run};

/// Whether `bytes` holds one of the eight bytes of `set` (on x86-64 sixteen bytes a
/// step with SSE2).
#[inline]
pub(crate) fn contains_any(bytes: &[u8], set: &[u8; 8]) -> bool {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    return sse2::contains_any(bytes, set);
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    bytes.iter().any(|byte| set.contains(byte))
}
