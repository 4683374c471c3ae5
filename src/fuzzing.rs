//! The general readers beside the fast paths that normally stand in front of them, so
//! the fuzz targets (`fuzz/`, feature `fuzzing`) can check that whatever a fast path
//! accepts, the general reader accepts with the identical result. Not part of the API.

use crate::envelope::FragmentMessage;
use crate::error::Error;
use crate::identity::PayloadIdentity;
use crate::json::Limits;

/// The canonical-identity fast path alone (`None`: not taken).
pub fn identity_fast(text: &[u8], limits: Limits) -> Option<PayloadIdentity<'_>> {
    crate::identity::parse_canonical(text, limits)
}

/// The any-spelling identity path alone (`None`: not taken).
pub fn identity_any_spelling(text: &[u8], limits: Limits) -> Option<PayloadIdentity<'_>> {
    crate::identity::parse_any_spelling(text, limits)
}

/// The flat identity reader alone (what follows the canonical fast path).
pub fn identity_flat(text: &[u8], limits: Limits) -> Result<PayloadIdentity<'_>, Error> {
    crate::identity::parse_flat(text, limits)
}

/// The general identity reader alone.
pub fn identity_general(text: &[u8], limits: Limits) -> Result<PayloadIdentity<'_>, Error> {
    crate::identity::parse_general(text, limits)
}

/// The envelope's `to_bytes`-form fast path alone (`None`: not taken).
pub fn envelope_fast(text: &[u8], limits: Limits) -> Option<FragmentMessage<'_>> {
    crate::envelope::parse::parse_written_form(text, limits)
}

/// The envelope's compact-form fast path alone (`None`: not taken).
#[cfg(target_pointer_width = "64")]
pub fn envelope_compact(text: &[u8], limits: Limits) -> Option<FragmentMessage<'_>> {
    crate::envelope::parse::parse_compact_form(text, limits)
}

/// The envelope's indented-form fast path alone (`None`: not taken).
#[cfg(target_pointer_width = "64")]
pub fn envelope_indented(text: &[u8], limits: Limits) -> Option<FragmentMessage<'_>> {
    crate::envelope::parse::parse_indented_form(text, limits)
}

/// The envelope's table-order path with any whitespace alone (`None`: not taken).
#[cfg(target_pointer_width = "64")]
pub fn envelope_any_whitespace(text: &[u8], limits: Limits) -> Option<FragmentMessage<'_>> {
    crate::envelope::parse::parse_any_whitespace(text, limits)
}

/// The any-spelling envelope path alone (`None`: not taken).
pub fn envelope_any_spelling(text: &[u8], limits: Limits) -> Option<FragmentMessage<'_>> {
    crate::envelope::parse::parse_any_spelling(text, limits)
}

/// The any-spelling envelope path's pass with the written form's separators alone
/// (`None`: not taken), whatever the text's start.
#[cfg(target_pointer_width = "64")]
pub fn envelope_any_order_written(text: &[u8], limits: Limits) -> Option<FragmentMessage<'_>> {
    let at = crate::json::spelled::Spelled::new(text)?;
    crate::envelope::parse::parse_in_any_order(at, limits, crate::json::spelled::Members::Written)
}

/// The same with compact text's separators.
#[cfg(target_pointer_width = "64")]
pub fn envelope_any_order_compact(text: &[u8], limits: Limits) -> Option<FragmentMessage<'_>> {
    let at = crate::json::spelled::Spelled::new(text)?;
    crate::envelope::parse::parse_in_any_order(at, limits, crate::json::spelled::Members::Compact)
}

/// The same with any whitespace.
pub fn envelope_any_order_any_whitespace(text: &[u8], limits: Limits) -> Option<FragmentMessage<'_>> {
    let at = crate::json::spelled::Spelled::new(text)?;
    crate::envelope::parse::parse_in_any_order(at, limits, crate::json::spelled::Members::AnyWhitespace)
}

/// The general envelope reader alone.
pub fn envelope_general(text: &[u8], limits: Limits) -> Result<FragmentMessage<'_>, Error> {
    crate::envelope::parse::parse_general(text, limits)
}
