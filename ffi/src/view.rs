//! Field read-out at the cost of a pointer: every field of an identity or an envelope in
//! one plain struct, its strings as views into the parsed text (`mbr_text`).
//!
//! The per-field accessors (`mbr_identity_string`, `mbr_envelope_string`) decode and copy
//! each string; most strings of real documents hold no escape, so their view *is* their
//! value, already proved UTF-8 by the parse. Only a string with escapes needs
//! `mbr_text_decode`. Snapshots' cursors give the same views
//! (`mbr_snapshot_cursor_text`, with the cluster metadata).

use crate::boundary::boundary;
use crate::identity::{dtype_number, mbr_identity, mbr_range, MBR_MAX_SHAPE_DIMS};
use crate::object::read_into;
use crate::out::Out;
use crate::slice::{copy_decoded, input, output, write_out};
use crate::status::mbr_error;
use core::ffi::c_char;
use membrane::identity::{InclusiveRange, PayloadIdentity};
use membrane::json::{JsonError, JsonStr, RawStr};
use membrane::Error;

/// A string of a parsed document as its text holds it: the bytes between its quotes.
/// Without escapes (`has_escapes` false) they are the value itself, UTF-8 the parse has
/// checked; with escapes (`\n`, `\u00e9`), `mbr_text_decode` gives the value. Valid as
/// long as the text it points into.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct mbr_text {
    /// The bytes (not NUL-terminated).
    pub ptr: *const c_char,
    /// Their number.
    pub len: usize,
    /// Whether they hold backslash escapes, so differ from the value.
    pub has_escapes: bool,
}

impl mbr_text {
    /// The view of a string read from a text (or given plain).
    pub(crate) fn of(value: JsonStr<'_>) -> mbr_text {
        mbr_text::of_raw(value.into())
    }

    /// The view of a string's bytes in its text (a snapshot map's batch read-out).
    #[inline]
    pub(crate) fn of_raw(value: RawStr<'_>) -> mbr_text {
        mbr_text { ptr: value.bytes.as_ptr().cast(), len: value.bytes.len(), has_escapes: value.has_escapes }
    }
}

/// A caller's buffer for the values of the strings with escapes (the `_parse_view_decoded`
/// calls): each such string whose value fits the room left is decoded there, in the
/// order of the view's fields, and its view points to the value; one that does not fit
/// keeps its view of the text. Values are no longer than their text, so a buffer of the
/// text's length holds them all. Decoding reads on into the text past a string and
/// stores whole chunks past its value (`JsonStr::decode_within`); the next value is
/// written over them.
struct DecodeRoom<'t, 'b> {
    /// The parsed text, which decoding reads on into past a string (`decode_within`).
    text: &'t [u8],
    room: &'b mut [u8],
}

impl DecodeRoom<'_, '_> {
    /// No room: every view is of the text (the plain `_parse_view` and `_get_view` calls).
    fn none() -> DecodeRoom<'static, 'static> {
        DecodeRoom { text: &[], room: &mut [] }
    }

    // In line on 64-bit CPUs, as the view builders are: with no room it is `mbr_text::of`.
    #[cfg_attr(target_pointer_width = "64", inline(always))]
    fn view(&mut self, value: JsonStr<'_>) -> mbr_text {
        if value.has_escapes() && !self.room.is_empty() {
            let room = core::mem::take(&mut self.room);
            let Ok(len) = value.decode_within(self.text, room) else {
                self.room = room;
                return mbr_text::of(value);
            };
            // `len` is at most the room's length: the split always succeeds.
            let (decoded, rest) = room.split_at_mut_checked(len).unwrap_or_default();
            self.room = rest;
            return mbr_text { ptr: decoded.as_ptr().cast(), len: decoded.len(), has_escapes: false };
        }
        mbr_text::of(value)
    }
}

/// Every field of an identity (SPEC §2.1) as C values.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct mbr_identity_view {
    /// `payload_hash`.
    pub payload_hash: mbr_text,
    /// `model_id`.
    pub model_id: mbr_text,
    /// `model_revision`.
    pub model_revision: mbr_text,
    /// `tokenizer_name`.
    pub tokenizer_name: mbr_text,
    /// `tokenizer_revision`.
    pub tokenizer_revision: mbr_text,
    /// `layer_range`.
    pub layer_range: mbr_range,
    /// `head_range` (`[-1, -1]`: all heads).
    pub head_range: mbr_range,
    /// `token_span`.
    pub token_span: mbr_range,
    /// `dtype`: an `MBR_DTYPE_*` number.
    pub dtype: u32,
    /// Number of dimensions in `shape` (1 to `MBR_MAX_SHAPE_DIMS`).
    pub shape_len: u32,
    /// `shape`; entries past `shape_len` are 0.
    pub shape: [i64; MBR_MAX_SHAPE_DIMS],
}

fn range(value: InclusiveRange) -> mbr_range {
    mbr_range { start: value.start, end: value.end }
}

// In line on 64-bit CPUs, so that the view is built where the caller writes it, not on
// the stack and then copied there (a `memcpy` of some 300 bytes a call). On 32-bit
// ones (microcontrollers), where flash counts, one copy of it serves every caller.
// `room` makes each string's view (`DecodeRoom::none()`: of the text).
#[cfg_attr(target_pointer_width = "64", inline(always))]
fn identity_view(identity: &PayloadIdentity<'_>, room: &mut DecodeRoom<'_, '_>) -> mbr_identity_view {
    let mut shape = [0i64; MBR_MAX_SHAPE_DIMS];
    let dims = identity.shape();
    if let Some(head) = shape.get_mut(..dims.len()) {
        head.copy_from_slice(dims);
    }
    mbr_identity_view {
        payload_hash: room.view(identity.payload_hash()),
        model_id: room.view(identity.model_id()),
        model_revision: room.view(identity.model_revision()),
        tokenizer_name: room.view(identity.tokenizer_name()),
        tokenizer_revision: room.view(identity.tokenizer_revision()),
        layer_range: range(identity.layer_range()),
        head_range: range(identity.head_range()),
        token_span: range(identity.token_span()),
        dtype: dtype_number(identity.dtype()),
        shape_len: dims.len() as u32,
        shape,
    }
}

/// Every field of `*identity` into `*out`; its strings point into what the identity
/// borrows (the text or frame it was parsed from, or the strings it was built from).
///
/// Returns `MBR_OK`, `MBR_INVALID_STATE` or `MBR_NULL_POINTER`.
///
/// # Safety
/// `identity` is NULL or points to an `mbr_identity` (its borrows alive); `out` is NULL
/// or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_identity_get_view(identity: *const mbr_identity, out: *mut mbr_identity_view) -> u32 {
    read_into(identity, out, "out", |identity| Ok(identity_view(identity, &mut DecodeRoom::none())))
}

/// Parse and validate an identity JSON text (SPEC §2, as `mbr_identity_parse`) straight
/// into a view of its fields, whose strings point into `json`.
///
/// Returns `MBR_OK`, a code of `mbr_identity_parse` (with the byte offset and the field
/// in `*error`), or `MBR_NULL_POINTER`. `error` may be NULL.
///
/// # Safety
/// `json` is NULL or points to `len` readable bytes that stay alive and unchanged while
/// the view is used; `out` and `error` are each NULL or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_identity_parse_view(
    json: *const u8,
    len: usize,
    out: *mut mbr_identity_view,
    error: *mut mbr_error,
) -> u32 {
    // SAFETY: the caller's contract; `(NULL, 0)` is no room.
    unsafe { parse_view_into(json, len, core::ptr::null_mut(), 0, out, error, PayloadIdentity::parse, identity_view) }
}

/// `mbr_identity_parse_view`, with the strings that hold escapes decoded into `buf`
/// (`capacity` bytes), so that every view is a value: in the order of the view's
/// fields, each such string whose value fits the room left is decoded there (no NUL)
/// and its view points to it, `has_escapes` false; one that does not fit keeps its view
/// of the text (`mbr_text_decode` gives its value). A `buf` of `len` bytes holds every
/// value. `(NULL, 0)` decodes none, as `mbr_identity_parse_view`. `buf` is written only
/// when the parse succeeds, and then its bytes after the values are unspecified (values
/// are copied sixteen bytes at a time).
///
/// Returns `MBR_OK`, a code of `mbr_identity_parse` (with the byte offset and the field
/// in `*error`), or `MBR_NULL_POINTER`. `error` may be NULL.
///
/// # Safety
/// `json` is NULL or points to `len` readable bytes that stay alive and unchanged while
/// the view is used; `buf` is NULL or points to `capacity` writable bytes, apart from
/// `json`, that stay alive and unchanged likewise; `out` and `error` are each NULL or
/// writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_identity_parse_view_decoded(
    json: *const u8,
    len: usize,
    buf: *mut c_char,
    capacity: usize,
    out: *mut mbr_identity_view,
    error: *mut mbr_error,
) -> u32 {
    // SAFETY: the caller's contract.
    unsafe { parse_view_into(json, len, buf, capacity, out, error, PayloadIdentity::parse, identity_view) }
}

/// The body of the `_parse_view` calls: `json` parsed by `parse`, and its view, built by
/// `view` with the strings that hold escapes decoded into `buf` where they fit (`(NULL,
/// 0)`: none), written to `*out`. In line on 64-bit CPUs (see `identity_view`); on
/// 32-bit ones a call with and a call without a room share one copy.
///
/// # Safety
/// As `mbr_identity_parse_view_decoded`.
#[cfg_attr(target_pointer_width = "64", inline(always))]
#[allow(clippy::too_many_arguments)] // the C call's six, and what parses and what views
unsafe fn parse_view_into<'a, T, V>(
    json: *const u8,
    len: usize,
    buf: *mut c_char,
    capacity: usize,
    out: *mut V,
    error: *mut mbr_error,
    parse: impl FnOnce(&'a [u8]) -> Result<T, Error>,
    view: impl FnOnce(&T, &mut DecodeRoom<'_, '_>) -> V,
) -> u32 {
    boundary(error, || {
        let out = Out::new(out, "out")?;
        let text = input(json, len, "json")?;
        let mut room = DecodeRoom { text, room: output(buf.cast::<u8>(), capacity, "buf")? };
        // Read where the parse left it: `?` would move the value out first, a copy of
        // some 350 bytes (perf: copies were a tenth of an identity's time).
        match &parse(text) {
            Ok(value) => out.write(view(value, &mut room)),
            Err(err) => return Err(*err),
        }
        Ok(())
    })
}

/// The value of a string view: its bytes with the escapes decoded, and a NUL, into
/// `buf` (`capacity` bytes; `(NULL, 0)` asks for the length, `MBR_BUFFER_TOO_SMALL`
/// with `error->needed`); `*out_len` gets the length without the NUL. A value may hold
/// NUL characters (`\u0000`): trust `*out_len`, not `strlen`. A view from this library
/// is always accepted. Other bytes must be UTF-8, and when `has_escapes` is set they are
/// checked as the reader checks a string (`MBR_INVALID_ARGUMENT` naming `text`, with the
/// offset of the first bad byte; `buf` may then hold part of the value); without it
/// they are the value as they are. No value is longer than `text.len`, so a `buf` of
/// `text.len + 1` bytes always fits, and is then filled in one pass.
///
/// Returns `MBR_OK`, `MBR_BUFFER_TOO_SMALL`, `MBR_INVALID_ARGUMENT` or
/// `MBR_NULL_POINTER`. `error` may be NULL.
///
/// # Safety
/// `text.ptr` is NULL or points to `text.len` readable bytes; `buf` is NULL or points
/// to `capacity` writable bytes; `out_len` and `error` are each NULL or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_text_decode(
    text: mbr_text,
    buf: *mut c_char,
    capacity: usize,
    out_len: *mut usize,
    error: *mut mbr_error,
) -> u32 {
    write_out(buf.cast(), capacity, out_len, error, |buf| {
        let bytes = input(text.ptr.cast::<u8>(), text.len, "text")?;
        let raw = membrane::json::text_str(bytes)
            .map_err(|err| Error::invalid_argument("text", "not UTF-8").at(err.valid_up_to() as u64))?;
        let invalid = |err: JsonError| Error::invalid_argument("text", err.kind.reason()).at(err.offset as u64);
        // A buffer with room for the raw text and the NUL holds any value: checked and
        // decoded in one pass. Otherwise checked, measured, then decoded, so that a
        // buffer too small is left untouched.
        if text.has_escapes && buf.len() > raw.len() {
            let room = buf.get_mut(..raw.len()).unwrap_or_default();
            let len = JsonStr::decode_raw_into(raw, room)
                .map_err(invalid)?
                .map_err(|needed| Error::buffer_too_small(needed.saturating_add(1) as u64).in_field("buf"))?;
            // The value is no longer than the raw text: its NUL is within `buf`.
            if let Some(nul) = buf.get_mut(len) {
                *nul = 0;
            }
            return Ok(len);
        }
        // Without escapes the bytes are the value (a built identity's `"` included).
        let value = match text.has_escapes {
            true => JsonStr::from_raw(raw).map_err(invalid)?,
            false => JsonStr::from_plain(raw),
        };
        copy_decoded(&value, buf)
    })
}

#[cfg(feature = "envelope")]
pub use envelope_view::*;

#[cfg(feature = "envelope")]
mod envelope_view {
    use super::*;
    use crate::envelope::{consistency_number, mbr_envelope};
    use membrane::FragmentMessage;

    /// Every field of an envelope (SPEC §3.1) as C values, its identity's included.
    #[repr(C)]
    #[derive(Clone, Copy)]
    pub struct mbr_envelope_view {
        /// `tenant_id`.
        pub tenant_id: mbr_text,
        /// `payload_ref` (empty when `has_payload_ref` is false: JSON `null`).
        pub payload_ref: mbr_text,
        /// Whether `payload_ref` is a string.
        pub has_payload_ref: bool,
        /// Whether `fingerprint_compat` is a digest (else `""`).
        pub has_fingerprint_compat: bool,
        /// `consistency`: an `MBR_CONSISTENCY_*` number.
        pub consistency: u32,
        /// `payload_size`.
        pub payload_size: u64,
        /// `ttl`, seconds (finite, `>= 0`; may be `-0.0`).
        pub ttl: f64,
        /// `reuse_score` (finite, in `[0, 1]`).
        pub reuse_score: f64,
        /// `version_id` (`1 ..= 2^63-1`).
        pub version_id: u64,
        /// `hlc`, packed (`mbr_hlc_unpack`).
        pub hlc: u64,
        /// `fingerprint_compat` as its 32 bytes (zeros when `""`).
        pub fingerprint_compat: [u8; 32],
        /// The identity.
        pub identity: mbr_identity_view,
    }

    // In line on 64-bit CPUs, as `identity_view` is.
    #[cfg_attr(target_pointer_width = "64", inline(always))]
    fn envelope_view(message: &FragmentMessage<'_>, room: &mut DecodeRoom<'_, '_>) -> mbr_envelope_view {
        let compat = message.fingerprint_compat();
        let payload_ref = message.payload_ref();
        mbr_envelope_view {
            tenant_id: room.view(message.tenant_id()),
            payload_ref: room.view(payload_ref.unwrap_or(JsonStr::from_plain(""))),
            has_payload_ref: payload_ref.is_some(),
            has_fingerprint_compat: compat.is_some(),
            consistency: consistency_number(message.consistency()),
            payload_size: message.payload_size(),
            ttl: message.ttl(),
            reuse_score: message.reuse_score(),
            version_id: message.version_id(),
            hlc: message.hlc().raw(),
            fingerprint_compat: compat.map_or([0; 32], |digest| *digest.as_bytes()),
            identity: identity_view(message.identity(), room),
        }
    }

    /// Every field of `*envelope` into `*out`; its strings point into what the
    /// envelope borrows.
    ///
    /// Returns `MBR_OK`, `MBR_INVALID_STATE` or `MBR_NULL_POINTER`.
    ///
    /// # Safety
    /// `envelope` is NULL or points to an `mbr_envelope` (its borrows alive); `out` is
    /// NULL or writable.
    #[no_mangle]
    #[must_use]
    pub unsafe extern "C" fn mbr_envelope_get_view(envelope: *const mbr_envelope, out: *mut mbr_envelope_view) -> u32 {
        read_into(envelope, out, "out", |message| Ok(envelope_view(message, &mut DecodeRoom::none())))
    }

    /// Parse and validate an envelope JSON text (SPEC §3.1, as `mbr_envelope_parse`)
    /// straight into a view of every field, whose strings point into `json`: the
    /// parse and the read-out in one call, with no `mbr_envelope` in between.
    ///
    /// Returns `MBR_OK`, a code of `mbr_envelope_check` (with the byte offset into the
    /// text and the field in `*error`), or `MBR_NULL_POINTER`. `error` may be NULL.
    ///
    /// # Safety
    /// `json` is NULL or points to `len` readable bytes that stay alive and unchanged
    /// while the view is used; `out` and `error` are each NULL or writable.
    #[no_mangle]
    #[must_use]
    pub unsafe extern "C" fn mbr_envelope_parse_view(
        json: *const u8,
        len: usize,
        out: *mut mbr_envelope_view,
        error: *mut mbr_error,
    ) -> u32 {
        // SAFETY: the caller's contract; `(NULL, 0)` is no room.
        unsafe {
            parse_view_into(json, len, core::ptr::null_mut(), 0, out, error, FragmentMessage::parse, envelope_view)
        }
    }

    /// `mbr_envelope_parse_view`, with the strings that hold escapes decoded into `buf`
    /// (`capacity` bytes) as `mbr_identity_parse_view_decoded` does: `tenant_id`,
    /// `payload_ref`, then the identity's, each whose value fits the room left. A `buf`
    /// of `len` bytes holds every value; `(NULL, 0)` decodes none.
    ///
    /// Returns `MBR_OK`, a code of `mbr_envelope_check` (with the byte offset into the
    /// text and the field in `*error`), or `MBR_NULL_POINTER`. `error` may be NULL.
    ///
    /// # Safety
    /// As `mbr_identity_parse_view_decoded`.
    #[no_mangle]
    #[must_use]
    pub unsafe extern "C" fn mbr_envelope_parse_view_decoded(
        json: *const u8,
        len: usize,
        buf: *mut c_char,
        capacity: usize,
        out: *mut mbr_envelope_view,
        error: *mut mbr_error,
    ) -> u32 {
        // SAFETY: the caller's contract.
        unsafe { parse_view_into(json, len, buf, capacity, out, error, FragmentMessage::parse, envelope_view) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::mem::MaybeUninit;

    fn text_of(view: &mbr_text) -> &[u8] {
        // SAFETY: a view from this library points to `len` bytes of the static text.
        unsafe { core::slice::from_raw_parts(view.ptr.cast::<u8>(), view.len) }
    }

    fn decode(text: mbr_text) -> Result<std::string::String, (u32, u64)> {
        let mut buf = [0 as c_char; 64];
        let mut len = 0usize;
        let mut error = MaybeUninit::<mbr_error>::zeroed();
        // SAFETY: valid pointers and lengths.
        let status = unsafe { mbr_text_decode(text, buf.as_mut_ptr(), buf.len(), &mut len, error.as_mut_ptr()) };
        if status != 0 {
            // SAFETY: a failing call wrote the error.
            return Err((status, unsafe { error.assume_init() }.offset));
        }
        Ok(std::string::String::from_utf8(buf[..len].iter().map(|&c| c as u8).collect()).unwrap())
    }

    const IDENTITY: &str = r#"{"payload_hash": "abc", "model_id": "caf\u00e9 \"m\"", "model_revision": "main", "tokenizer_name": "t", "tokenizer_revision": "r", "layer_range": [0, 3], "head_range": [-1, -1], "token_span": [5, 9], "dtype": "bfloat16", "shape": [2, 3]}"#;

    #[test]
    fn an_identity_view_holds_every_field() {
        let mut view = MaybeUninit::<mbr_identity_view>::uninit();
        // SAFETY: valid pointers; the view points into IDENTITY, which is static.
        let view = unsafe {
            assert_eq!(
                mbr_identity_parse_view(IDENTITY.as_ptr(), IDENTITY.len(), view.as_mut_ptr(), core::ptr::null_mut()),
                0
            );
            view.assume_init()
        };
        assert_eq!((text_of(&view.payload_hash), view.payload_hash.has_escapes), (&b"abc"[..], false));
        assert_eq!((text_of(&view.model_id), view.model_id.has_escapes), (&br#"caf\u00e9 \"m\""#[..], true));
        assert_eq!(decode(view.model_id).as_deref(), Ok("caf\u{e9} \"m\""));
        assert_eq!(decode(view.tokenizer_revision).as_deref(), Ok("r"));
        assert_eq!((view.layer_range.start, view.layer_range.end), (0, 3));
        assert_eq!((view.head_range.start, view.head_range.end), (-1, -1));
        assert_eq!((view.token_span.start, view.token_span.end), (5, 9));
        assert_eq!(view.dtype, dtype_number(membrane::Dtype::Bfloat16));
        assert_eq!((view.shape_len, &view.shape[..3]), (2, &[2, 3, 0][..]));
    }

    /// The five strings of an identity view, in field order.
    fn strings(view: &mbr_identity_view) -> [mbr_text; 5] {
        [view.payload_hash, view.model_id, view.model_revision, view.tokenizer_name, view.tokenizer_revision]
    }

    /// Each of `decoded`'s strings against the same string of `plain` (a view of the
    /// text): the value in the room, for those with escapes that fit it in order, the
    /// same view otherwise. Returns the room used.
    fn check_decoded(decoded: &[mbr_text], plain: &[mbr_text], buf: &[c_char], capacity: usize) -> usize {
        let mut used = 0;
        for (got, text) in decoded.iter().zip(plain) {
            let value = decode(*text).unwrap();
            if text.has_escapes && value.len() <= capacity - used {
                assert!(!got.has_escapes, "{value:?} fits {} bytes", capacity - used);
                assert_eq!(got.ptr, buf[used..].as_ptr(), "{value:?} next in the room");
                assert_eq!(text_of(got), value.as_bytes());
                used += value.len();
            } else {
                assert_eq!((got.ptr, got.len, got.has_escapes), (text.ptr, text.len, text.has_escapes), "{value:?}");
            }
        }
        used
    }

    #[test]
    fn a_decoded_identity_view_holds_the_values_that_fit_its_room() {
        const TEXT: &str = r#"{"payload_hash": "a\tb", "model_id": "caf\u00e9 \"m\"", "model_revision": "main", "tokenizer_name": "\u20ac\ud83d\ude00 and a run of plain bytes longer than a chunk", "tokenizer_revision": "r\/", "layer_range": [0, 3], "head_range": [-1, -1], "token_span": [5, 9], "dtype": "bfloat16", "shape": [2, 3]}"#;
        let mut plain = MaybeUninit::<mbr_identity_view>::uninit();
        // SAFETY: valid pointers; the view points into TEXT, which is static.
        let plain = unsafe {
            assert_eq!(
                mbr_identity_parse_view(TEXT.as_ptr(), TEXT.len(), plain.as_mut_ptr(), core::ptr::null_mut()),
                0
            );
            plain.assume_init()
        };
        let mut all_fit = 0;
        for capacity in 0..=TEXT.len() {
            let mut buf = std::vec![0x55 as c_char; capacity.max(1)];
            let room = if capacity == 0 { core::ptr::null_mut() } else { buf.as_mut_ptr() };
            let mut view = MaybeUninit::<mbr_identity_view>::uninit();
            // SAFETY: `room` is NULL with 0 or `capacity` writable bytes; valid pointers.
            let view = unsafe {
                let status = mbr_identity_parse_view_decoded(
                    TEXT.as_ptr(),
                    TEXT.len(),
                    room,
                    capacity,
                    view.as_mut_ptr(),
                    core::ptr::null_mut(),
                );
                assert_eq!(status, 0, "capacity {capacity}");
                view.assume_init()
            };
            let used = check_decoded(&strings(&view), &strings(&plain), &buf, capacity);
            all_fit = all_fit.max(used);
            assert!(strings(&view).iter().all(|text| !text.has_escapes) || capacity < TEXT.len());
            assert_eq!((view.layer_range.end, view.token_span.start, view.dtype), (3, 5, plain.dtype));
            assert_eq!((view.shape_len, view.shape), (plain.shape_len, plain.shape));
        }
        let values: usize =
            strings(&plain).iter().filter(|text| text.has_escapes).map(|&text| decode(text).unwrap().len()).sum();
        assert_eq!((all_fit, values), (66, 66), "every value, end to end");
        // A room without its pointer, and a bad text, which leaves the room alone.
        let mut buf = [0x55 as c_char; 8];
        let mut view = MaybeUninit::<mbr_identity_view>::uninit();
        let mut error = MaybeUninit::<mbr_error>::zeroed();
        // SAFETY: valid pointers and lengths (the NULL is the case under test).
        unsafe {
            let null_room = mbr_identity_parse_view_decoded(
                TEXT.as_ptr(),
                TEXT.len(),
                core::ptr::null_mut(),
                8,
                view.as_mut_ptr(),
                error.as_mut_ptr(),
            );
            assert_eq!(null_room, crate::status::MBR_NULL_POINTER);
            let bad = mbr_identity_parse_view_decoded(
                TEXT.as_ptr(),
                40,
                buf.as_mut_ptr(),
                8,
                view.as_mut_ptr(),
                error.as_mut_ptr(),
            );
            assert_eq!((bad, error.assume_init().offset), (crate::status::MBR_IDENTITY_JSON, 40));
        }
        assert!(buf.iter().all(|&c| c == 0x55), "a failed parse wrote the room");
    }

    #[cfg(feature = "envelope")]
    #[test]
    fn a_decoded_envelope_view_decodes_its_own_strings_then_its_identitys() {
        const TEXT: &[u8] = br#"{"schema_version": 5, "tenant_id": "t\u00e9", "identity": {"payload_hash": "x", "model_id": "m\n", "model_revision": "", "tokenizer_name": "t", "tokenizer_revision": "", "layer_range": [0, 1], "head_range": [-1, -1], "token_span": [0, 7], "dtype": "int8", "shape": [1]}, "payload_ref": "r\/1", "payload_size": 3, "ttl": 60.0, "reuse_score": 0.5, "version_id": 9, "consistency": "eventual", "hlc": 7, "fingerprint_compat": ""}"#;
        let parse = |buf: *mut c_char, capacity: usize| {
            let mut view = MaybeUninit::<mbr_envelope_view>::uninit();
            // SAFETY: `buf` is NULL with 0 or `capacity` writable bytes; valid pointers.
            unsafe {
                let status = mbr_envelope_parse_view_decoded(
                    TEXT.as_ptr(),
                    TEXT.len(),
                    buf,
                    capacity,
                    view.as_mut_ptr(),
                    core::ptr::null_mut(),
                );
                assert_eq!(status, 0, "capacity {capacity}");
                view.assume_init()
            }
        };
        let all = |view: &mbr_envelope_view| {
            let mut texts = std::vec![view.tenant_id, view.payload_ref];
            texts.extend(strings(&view.identity));
            texts
        };
        let plain = parse(core::ptr::null_mut(), 0);
        assert!(plain.tenant_id.has_escapes && plain.payload_ref.has_escapes && plain.identity.model_id.has_escapes);
        for capacity in 1..=TEXT.len() {
            let mut buf = std::vec![0x55 as c_char; capacity];
            let view = parse(buf.as_mut_ptr(), capacity);
            let used = check_decoded(&all(&view), &all(&plain), &buf, capacity);
            assert!(used == 3 + 3 + 2 || capacity < 3 + 3 + 2, "capacity {capacity}: {used} bytes used");
            assert!(view.has_payload_ref && (view.version_id, view.hlc) == (9, 7) && !view.has_fingerprint_compat);
        }
    }

    #[cfg(feature = "envelope")]
    #[test]
    fn an_envelope_view_holds_every_field_and_matches_the_parsed_envelope() {
        const TEXT: &[u8] = br#"{"schema_version": 5, "tenant_id": "t\u00e9", "identity": {"payload_hash": "x", "model_id": "m", "model_revision": "", "tokenizer_name": "t", "tokenizer_revision": "", "layer_range": [0, 1], "head_range": [-1, -1], "token_span": [0, 7], "dtype": "int8", "shape": [1]}, "payload_ref": null, "payload_size": 3, "ttl": 60.0, "reuse_score": 0.5, "version_id": 9, "consistency": "eventual", "hlc": 7, "fingerprint_compat": "00000000000000000000000000000000000000000000000000000000000000ff"}"#;
        let mut view = MaybeUninit::<mbr_envelope_view>::uninit();
        let mut envelope = MaybeUninit::<crate::envelope::mbr_envelope>::uninit();
        let mut again = MaybeUninit::<mbr_envelope_view>::uninit();
        // SAFETY: valid pointers; the views point into TEXT, which is static.
        let (view, again) = unsafe {
            assert_eq!(mbr_envelope_parse_view(TEXT.as_ptr(), TEXT.len(), view.as_mut_ptr(), core::ptr::null_mut()), 0);
            let parsed = crate::envelope::mbr_envelope_parse(
                TEXT.as_ptr(),
                TEXT.len(),
                envelope.as_mut_ptr(),
                core::ptr::null_mut(),
            );
            assert_eq!(parsed, 0);
            assert_eq!(mbr_envelope_get_view(envelope.as_ptr(), again.as_mut_ptr()), 0);
            (view.assume_init(), again.assume_init())
        };
        assert_eq!((text_of(&view.tenant_id), view.tenant_id.has_escapes), (&br"t\u00e9"[..], true));
        assert_eq!(decode(view.tenant_id).as_deref(), Ok("t\u{e9}"));
        assert!(!view.has_payload_ref && view.payload_ref.len == 0);
        assert_eq!((view.payload_size, view.ttl, view.reuse_score, view.version_id, view.hlc), (3, 60.0, 0.5, 9, 7));
        assert_eq!(view.consistency, crate::envelope::MBR_CONSISTENCY_EVENTUAL);
        assert!(view.has_fingerprint_compat && view.fingerprint_compat[31] == 0xff && view.fingerprint_compat[0] == 0);
        assert_eq!(text_of(&view.identity.model_id), b"m");
        assert_eq!((view.identity.shape_len, view.identity.shape[0]), (1, 1));
        // The same view from an envelope object, pointing at the same bytes.
        assert_eq!((again.tenant_id.ptr, again.tenant_id.len), (view.tenant_id.ptr, view.tenant_id.len));
        assert_eq!(again.identity.token_span.end, 7);
        // A bad text leaves the view untouched and says where.
        let mut error = MaybeUninit::<mbr_error>::zeroed();
        let mut untouched = MaybeUninit::<mbr_envelope_view>::zeroed();
        // SAFETY: valid pointers and lengths.
        let status = unsafe { mbr_envelope_parse_view(TEXT.as_ptr(), 40, untouched.as_mut_ptr(), error.as_mut_ptr()) };
        assert_eq!(status, crate::status::MBR_ENVELOPE_JSON);
        // SAFETY: zeroed storage is a valid view (null pointers and zeros).
        assert_eq!(unsafe { untouched.assume_init() }.payload_size, 0);
    }

    #[test]
    fn decoding_checks_views_it_did_not_make() {
        let view = |raw: &'static [u8]| mbr_text { ptr: raw.as_ptr().cast(), len: raw.len(), has_escapes: true };
        assert_eq!(decode(view(br"a\tb")).as_deref(), Ok("a\tb"));
        assert_eq!(decode(view(b"plain")).as_deref(), Ok("plain"));
        assert_eq!(decode(view(br#"a"b"#)), Err((crate::status::MBR_INVALID_ARGUMENT, 1)));
        assert_eq!(decode(view(br"ab\")), Err((crate::status::MBR_INVALID_ARGUMENT, 2)));
        assert_eq!(decode(view(b"a\xffb")), Err((crate::status::MBR_INVALID_ARGUMENT, 1)));
        assert_eq!(decode(mbr_text { ptr: core::ptr::null(), len: 0, has_escapes: false }).as_deref(), Ok(""));
        // Without escapes the bytes are the value, quotes and backslashes included.
        let plain = br#"say "hi" \o/"#;
        let plain_view = mbr_text { ptr: plain.as_ptr().cast(), len: plain.len(), has_escapes: false };
        assert_eq!(decode(plain_view).as_deref(), Ok(r#"say "hi" \o/"#));
        let mut len = 0usize;
        // SAFETY: (NULL, 0) asks for the length; valid out pointer.
        let status =
            unsafe { mbr_text_decode(view(br"\u00e9"), core::ptr::null_mut(), 0, &mut len, core::ptr::null_mut()) };
        assert_eq!(status, crate::status::MBR_BUFFER_TOO_SMALL);
    }

    #[test]
    fn every_buffer_size_gets_the_value_and_its_nul_or_needed_with_the_buffer_untouched() {
        // 22 raw bytes, a 10-byte value: buffers of 11..=22 bytes take the checked,
        // measured path, 23 and more the one-pass path.
        let raw = br"caf\u00e9 \ud83d\ude00";
        let value = "caf\u{e9} \u{1F600}".as_bytes();
        let text = mbr_text { ptr: raw.as_ptr().cast(), len: raw.len(), has_escapes: true };
        for capacity in 0..=raw.len() + 2 {
            let mut buf = [b'#' as c_char; 32];
            let (mut len, mut error) = (usize::MAX, MaybeUninit::<mbr_error>::zeroed());
            // SAFETY: `buf` has 32 >= capacity writable bytes; valid out pointers.
            let status = unsafe { mbr_text_decode(text, buf.as_mut_ptr(), capacity, &mut len, error.as_mut_ptr()) };
            let bytes: std::vec::Vec<u8> = buf.iter().map(|&c| c as u8).collect();
            if capacity > value.len() {
                assert_eq!((status, len), (0, value.len()), "capacity {capacity}");
                assert_eq!((&bytes[..len], bytes[len]), (value, 0), "capacity {capacity}");
                assert!(bytes[len + 1..].iter().all(|&b| b == b'#'), "capacity {capacity}: written past the NUL");
            } else {
                assert_eq!(status, crate::status::MBR_BUFFER_TOO_SMALL, "capacity {capacity}");
                // SAFETY: a failing call wrote the error.
                assert_eq!(unsafe { error.assume_init() }.needed, value.len() as u64 + 1);
                assert!(bytes.iter().all(|&b| b == b'#'), "capacity {capacity}: a short buffer was written");
            }
        }
        // A bad escape after a good run is found where it stands by the one-pass path.
        let bad = br"caf\u00e9 \q";
        let bad_text = mbr_text { ptr: bad.as_ptr().cast(), len: bad.len(), has_escapes: true };
        let mut buf = [0 as c_char; 32];
        let (mut len, mut error) = (0usize, MaybeUninit::<mbr_error>::zeroed());
        // SAFETY: valid pointers and lengths.
        let status = unsafe { mbr_text_decode(bad_text, buf.as_mut_ptr(), buf.len(), &mut len, error.as_mut_ptr()) };
        assert_eq!(status, crate::status::MBR_INVALID_ARGUMENT);
        // SAFETY: a failing call wrote the error.
        assert_eq!(unsafe { error.assume_init() }.offset, 10);
    }
}
