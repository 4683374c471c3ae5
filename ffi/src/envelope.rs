//! The v5 JSON envelope (SPEC §3): checked in one call, canonicalised in one call,
//! parsed into caller storage (`mbr_envelope`) and read field by field, built from C
//! values, written in the `to_bytes` form (§3.2); and the model-compatibility hash
//! `fingerprint_compat` (§3.3), from explicit values or from an identity.

use crate::boundary::{boundary, guard, NO_DETAIL};
use crate::identity::mbr_identity;
use crate::object::{opaque, read_into, store, try_ref};
use crate::out::Out;
use crate::slice::{
    copy_decoded, hex65, in_buffer, input, mbr_str, name_table, output, report_written, text, value_of, write_out,
    NameTable, NAME_WIDTH,
};
use crate::status::mbr_error;
use core::ffi::c_char;
use core::mem::MaybeUninit;
use membrane::hlc::Hlc;
use membrane::json::JsonStr;
use membrane::{CompatInputs, Consistency, Error, FragmentMessage};

/// Size in bytes of `mbr_envelope`.
pub const MBR_ENVELOPE_SIZE: usize = 768;
/// Alignment in bytes of `mbr_envelope`.
pub const MBR_ENVELOPE_ALIGN: usize = 8;

/// A parsed or built envelope, in storage the caller owns (a local, a struct member).
/// Opaque: read it through the `mbr_envelope_*` functions.
///
/// It borrows what it was made from — the JSON text it was parsed from, or the strings
/// of the `mbr_envelope_values` and what the identity given there borrows — which must
/// stay alive and unchanged while it is used. It owns nothing: copy it freely, never
/// free it. Storage that no call has filled (e.g. zeroed) is refused with
/// `MBR_INVALID_STATE`.
#[repr(C)]
pub struct mbr_envelope {
    _opaque: [MaybeUninit<u64>; 96],
}

opaque!(mbr_envelope => FragmentMessage<'a>, b"mbr_envl", "envelope", MBR_ENVELOPE_SIZE, MBR_ENVELOPE_ALIGN);

/// `consistency` `"strong"` (what migration fills in).
pub const MBR_CONSISTENCY_STRONG: u32 = 0;
/// `consistency` `"quorum"`.
pub const MBR_CONSISTENCY_QUORUM: u32 = 1;
/// `consistency` `"eventual"`.
pub const MBR_CONSISTENCY_EVENTUAL: u32 = 2;

// The consistency numbers are positions in `Consistency::ALL`.
#[allow(clippy::indexing_slicing)]
const _: () = {
    const fn at(number: u32, consistency: Consistency) -> bool {
        Consistency::ALL[number as usize] as u32 == consistency as u32
    }
    assert!(at(MBR_CONSISTENCY_STRONG, Consistency::Strong));
    assert!(at(MBR_CONSISTENCY_QUORUM, Consistency::Quorum));
    assert!(at(MBR_CONSISTENCY_EVENTUAL, Consistency::Eventual));
    assert!(Consistency::ALL.len() == 3);
};

/// Consistency names (from [`Consistency::name`]), NUL-terminated.
#[allow(clippy::indexing_slicing)] // const evaluation: an out-of-range index fails the build
static CONSISTENCY_NAMES: NameTable<{ Consistency::ALL.len() }, NAME_WIDTH> =
    name_table!(Consistency::ALL, name, NAME_WIDTH);

pub(crate) fn consistency_number(consistency: Consistency) -> u32 {
    Consistency::ALL.iter().position(|&c| c == consistency).map_or(u32::MAX, |i| i as u32)
}

/// The consistency with this `MBR_CONSISTENCY_*` number, or `invalid_argument`.
fn consistency_arg(number: u32) -> Result<Consistency, Error> {
    usize::try_from(number)
        .ok()
        .and_then(|index| Consistency::ALL.get(index).copied())
        .ok_or(Error::invalid_argument("consistency", "not an MBR_CONSISTENCY_* number"))
}

/// `tenant_id` (a string), for `mbr_envelope_string`. The field numbers are the
/// positions in the SPEC §3.1 table.
pub const MBR_ENVELOPE_FIELD_TENANT_ID: u32 = 1;
/// `payload_ref` (a string; JSON `null` reads as `""`: `has_payload_ref` tells them apart).
pub const MBR_ENVELOPE_FIELD_PAYLOAD_REF: u32 = 3;
/// `consistency` (its name: `"strong"`, `"quorum"` or `"eventual"`).
pub const MBR_ENVELOPE_FIELD_CONSISTENCY: u32 = 8;
/// `fingerprint_compat` (`""` or 64 lower-case hex digits).
pub const MBR_ENVELOPE_FIELD_FINGERPRINT_COMPAT: u32 = 10;

#[allow(clippy::indexing_slicing)]
const _: () = {
    const fn named(number: u32, name: &str) -> bool {
        let field = membrane::envelope::FIELD_NAMES[number as usize].as_bytes();
        let name = name.as_bytes();
        if field.len() != name.len() {
            return false;
        }
        let mut i = 0;
        while i < field.len() {
            if field[i] != name[i] {
                return false;
            }
            i += 1;
        }
        true
    }
    assert!(named(MBR_ENVELOPE_FIELD_TENANT_ID, "tenant_id"));
    assert!(named(MBR_ENVELOPE_FIELD_PAYLOAD_REF, "payload_ref"));
    assert!(named(MBR_ENVELOPE_FIELD_CONSISTENCY, "consistency"));
    assert!(named(MBR_ENVELOPE_FIELD_FINGERPRINT_COMPAT, "fingerprint_compat"));
};

/// Call `use_value` with the decoded value of a string field.
fn with_string_field<T>(
    message: &FragmentMessage<'_>,
    field: u32,
    use_value: impl FnOnce(JsonStr<'_>) -> Result<T, Error>,
) -> Result<T, Error> {
    match field {
        MBR_ENVELOPE_FIELD_TENANT_ID => use_value(message.tenant_id()),
        MBR_ENVELOPE_FIELD_PAYLOAD_REF => use_value(message.payload_ref().unwrap_or(JsonStr::from_plain(""))),
        MBR_ENVELOPE_FIELD_CONSISTENCY => use_value(JsonStr::from_plain(message.consistency().name())),
        MBR_ENVELOPE_FIELD_FINGERPRINT_COMPAT => {
            let hex = message.fingerprint_compat().map(|digest| digest.to_hex());
            use_value(JsonStr::from_plain(hex.as_ref().map_or("", |hex| hex.as_str())))
        }
        _ => Err(Error::invalid_argument(
            "field",
            "not an envelope string field (MBR_ENVELOPE_FIELD_TENANT_ID, PAYLOAD_REF, CONSISTENCY, FINGERPRINT_COMPAT)",
        )),
    }
}

/// Validate one envelope JSON text (SPEC §3.1, strict JSON §4); returns the SPEC §8
/// code, 0 (`MBR_OK`) when the envelope is accepted: `MBR_ENVELOPE_JSON`,
/// `MBR_ENVELOPE_VERSION`, `MBR_ENVELOPE_MISSING_FIELD`, `MBR_ENVELOPE_FIELD`,
/// `MBR_IDENTITY_FIELD` (the nested identity breaks SPEC §2.2), in that order of
/// precedence.
///
/// `(NULL, 0)` is an empty text (`MBR_ENVELOPE_JSON`); `(NULL, n > 0)` is
/// `MBR_NULL_POINTER`. For the offset and field of a problem, use `mbr_envelope_parse`.
///
/// # Safety
/// `json` is NULL or points to `len` readable bytes.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_envelope_check(json: *const u8, len: usize) -> u32 {
    boundary(NO_DETAIL, || FragmentMessage::parse(input(json, len, "json")?).map(|_| ()))
}

/// Parse an envelope JSON text, then write it in the SPEC §3.2 (`to_bytes`) form into
/// `out` (`cap` bytes, no NUL); `*written` gets its length. `out` must not overlap
/// `json`.
///
/// Returns `MBR_OK`, a code of `mbr_envelope_check`, `MBR_BUFFER_TOO_SMALL` or
/// `MBR_NULL_POINTER`. A too-small buffer is reported like this: the status is
/// `MBR_BUFFER_TOO_SMALL`, `out` is left untouched and — the one exception to
/// "out-parameters are written only on success", as this function has no `mbr_error`
/// to carry `needed` — `*written` gets the length needed. So
/// `mbr_envelope_canonicalize(json, len, NULL, 0, &n)` asks for the length. On any
/// other failure `*written` and `out` are untouched.
///
/// # Safety
/// `json` is NULL or points to `len` readable bytes; `out` is NULL or points to `cap`
/// writable bytes that do not overlap them; `written` is NULL or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_envelope_canonicalize(
    json: *const u8,
    len: usize,
    out: *mut u8,
    cap: usize,
    written: *mut usize,
) -> u32 {
    boundary(NO_DETAIL, || {
        let written = Out::new(written, "written")?;
        let (json, out) = (input(json, len, "json")?, output(out, cap, "out")?);
        let message = FragmentMessage::parse(json)?;
        report_written(written, message.write_into(out).map_err(|err| in_buffer(err, "out")))
    })
}

/// Parse and validate an envelope JSON text (SPEC §3.1) into `*out`, which then
/// borrows the text.
///
/// Returns `MBR_OK`, a code of `mbr_envelope_check` (with the byte offset into the
/// text and the field in `*error`), or `MBR_NULL_POINTER`. `error` may be NULL.
///
/// # Safety
/// `json` is NULL or points to `len` readable bytes that stay alive and unchanged while
/// the envelope is used; `out` and `error` are each NULL or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_envelope_parse(
    json: *const u8,
    len: usize,
    out: *mut mbr_envelope,
    error: *mut mbr_error,
) -> u32 {
    boundary(error, || {
        let out = Out::new(out, "out")?;
        store(out, FragmentMessage::parse(input(json, len, "json")?)?);
        Ok(())
    })
}

/// The fields of an envelope as C values, for `mbr_envelope_build`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct mbr_envelope_values {
    /// 1-128 code points, none of space `:` `/` `\` `"` LF TAB CR.
    pub tenant_id: mbr_str,
    /// The identity (`mbr_identity_parse`, `mbr_identity_build`, a frame's or an
    /// envelope's); copied, so only what it borrows must outlive the envelope.
    pub identity: *const mbr_identity,
    /// Whether there is a `payload_ref`; `false` writes JSON `null`.
    pub has_payload_ref: bool,
    /// `payload_ref` when `has_payload_ref` (any text; by convention the payload's
    /// SHA-256 in hex).
    pub payload_ref: mbr_str,
    /// Any value.
    pub payload_size: u64,
    /// Seconds: finite and `>= 0`.
    pub ttl: f64,
    /// Finite, `0 <= x <= 1`.
    pub reuse_score: f64,
    /// `1 ..= 2^63-1`.
    pub version_id: u64,
    /// An `MBR_CONSISTENCY_*` number.
    pub consistency: u32,
    /// A packed HLC (SPEC §9; `mbr_hlc_pack`).
    pub hlc: u64,
    /// Whether to derive `fingerprint_compat` from the identity (SPEC §3.3, as
    /// `mbr_identity_compat_hash`); then `fingerprint_compat` is ignored.
    pub derive_fingerprint_compat: bool,
    /// `""` (`{NULL, 0}`) or exactly 64 lower-case hex digits.
    pub fingerprint_compat: mbr_str,
}

/// Validate C values (SPEC §3.1) and make an envelope of them in `*out`. The envelope
/// borrows the strings of `values` and what `*values->identity` borrows (not `values`
/// or the `mbr_identity` storage itself).
///
/// Returns `MBR_OK`, `MBR_ENVELOPE_FIELD` (a value breaking its rule, named in
/// `error->field`), `MBR_INVALID_ARGUMENT` (a string that is not UTF-8, an unknown
/// consistency), `MBR_INVALID_STATE` (an uninitialised identity) or
/// `MBR_NULL_POINTER`. `error` may be NULL.
///
/// # Safety
/// `values` is NULL or points to a readable `mbr_envelope_values` whose strings and
/// identity (and what it borrows) stay alive and unchanged while the envelope is used;
/// `out` and `error` are each NULL or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_envelope_build(
    values: *const mbr_envelope_values,
    out: *mut mbr_envelope,
    error: *mut mbr_error,
) -> u32 {
    boundary(error, || {
        let values = value_of(values, "values")?;
        let out = Out::new(out, "out")?;
        let identity = try_ref(values.identity)?;
        let tenant_id = text(values.tenant_id, "tenant_id")?;
        let payload_ref = if values.has_payload_ref { Some(text(values.payload_ref, "payload_ref")?) } else { None };
        let compat_hex = if values.derive_fingerprint_compat {
            None
        } else {
            Some(text(values.fingerprint_compat, "fingerprint_compat")?)
        };
        let builder = FragmentMessage::builder(tenant_id, identity.clone())
            .payload_ref(payload_ref)
            .payload_size(values.payload_size)
            .ttl(values.ttl)
            .reuse_score(values.reuse_score)
            .version_id(values.version_id)
            .consistency(consistency_arg(values.consistency)?)
            .hlc(Hlc::from_raw(values.hlc));
        let builder = match compat_hex {
            None => builder.derive_fingerprint_compat(),
            Some(hex) => builder.fingerprint_compat_hex(hex),
        };
        store(out, builder.build()?);
        Ok(())
    })
}

/// The non-string fields of an envelope, and its identity.
#[repr(C)]
pub struct mbr_envelope_fields {
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
    /// `consistency`: an `MBR_CONSISTENCY_*` number.
    pub consistency: u32,
    /// Whether `payload_ref` is a string (else JSON `null`); read it with
    /// `mbr_envelope_string`.
    pub has_payload_ref: bool,
    /// Whether `fingerprint_compat` is a digest (else `""`).
    pub has_fingerprint_compat: bool,
    /// `fingerprint_compat` as bytes (zeros when `""`).
    pub fingerprint_compat: [u8; 32],
    /// `fingerprint_compat` as written: 64 lower-case hex digits and a NUL, or `""`.
    pub fingerprint_compat_hex: [c_char; 65],
    /// The nested identity (read it with `mbr_identity_*`); it borrows what the
    /// envelope borrows.
    pub identity: mbr_identity,
}

/// Every field but the strings (`tenant_id`, `payload_ref`: `mbr_envelope_string`)
/// into `*out`.
///
/// Returns `MBR_OK`, `MBR_INVALID_STATE` or `MBR_NULL_POINTER`.
///
/// # Safety
/// `envelope` is NULL or points to an `mbr_envelope` (its borrows alive); `out` is NULL
/// or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_envelope_get_fields(envelope: *const mbr_envelope, out: *mut mbr_envelope_fields) -> u32 {
    read_into(envelope, out, "out", |message| {
        let compat = message.fingerprint_compat();
        Ok(mbr_envelope_fields {
            payload_size: message.payload_size(),
            ttl: message.ttl(),
            reuse_score: message.reuse_score(),
            version_id: message.version_id(),
            hlc: message.hlc().raw(),
            consistency: consistency_number(message.consistency()),
            has_payload_ref: message.payload_ref().is_some(),
            has_fingerprint_compat: compat.is_some(),
            fingerprint_compat: compat.map_or([0; 32], |digest| *digest.as_bytes()),
            fingerprint_compat_hex: compat.as_ref().map_or([0; 65], hex65),
            identity: mbr_identity::holding(Some(message.identity().clone())),
        })
    })
}

/// The nested identity into `*out` (read it with `mbr_identity_*`); it borrows what
/// the envelope borrows.
///
/// Returns `MBR_OK`, `MBR_INVALID_STATE` or `MBR_NULL_POINTER`.
///
/// # Safety
/// `envelope` is NULL or points to an `mbr_envelope` (its borrows alive); `out` is NULL
/// or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_envelope_identity(envelope: *const mbr_envelope, out: *mut mbr_identity) -> u32 {
    read_into(envelope, out, "out", |message| Ok(mbr_identity::holding(Some(message.identity().clone()))))
}

/// Length in bytes of a string field's decoded (unescaped) UTF-8 value, without a NUL.
/// `field` is an `MBR_ENVELOPE_FIELD_*` number.
///
/// Returns `MBR_OK`, `MBR_INVALID_ARGUMENT`, `MBR_INVALID_STATE` or `MBR_NULL_POINTER`.
///
/// # Safety
/// `envelope` is NULL or points to an `mbr_envelope` (its borrows alive); `out_len` is
/// NULL or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_envelope_string_len(
    envelope: *const mbr_envelope,
    field: u32,
    out_len: *mut usize,
) -> u32 {
    read_into(envelope, out_len, "out_len", |message| {
        with_string_field(message, field, |value| Ok(value.decoded_len()))
    })
}

/// Copy a string field's decoded (unescaped) UTF-8 value and a NUL into `buf`
/// (`capacity` bytes); `*out_len` gets its length without the NUL. A value may itself
/// contain NUL characters (`\u0000`): trust `*out_len`, not `strlen`.
///
/// Returns `MBR_OK`, `MBR_BUFFER_TOO_SMALL` (when `capacity` < length + 1; see
/// `mbr_envelope_string_len`; `buf` untouched), `MBR_INVALID_ARGUMENT`,
/// `MBR_INVALID_STATE` or `MBR_NULL_POINTER`.
///
/// # Safety
/// `envelope` is NULL or points to an `mbr_envelope` (its borrows alive); `buf` is NULL
/// or points to `capacity` writable bytes; `out_len` is NULL or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_envelope_string(
    envelope: *const mbr_envelope,
    field: u32,
    buf: *mut c_char,
    capacity: usize,
    out_len: *mut usize,
) -> u32 {
    read_into(envelope, out_len, "out_len", |message| {
        let buf = output(buf.cast(), capacity, "buf")?;
        with_string_field(message, field, |value| copy_decoded(&value, buf))
    })
}

/// Whether the text the envelope was parsed from is byte for byte its SPEC §3.2
/// (`to_bytes`) form; built envelopes are canonical.
///
/// Returns `MBR_OK`, `MBR_INVALID_STATE` or `MBR_NULL_POINTER`.
///
/// # Safety
/// `envelope` is NULL or points to an `mbr_envelope` (its borrows alive); `out` is NULL
/// or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_envelope_is_canonical(envelope: *const mbr_envelope, out: *mut bool) -> u32 {
    read_into(envelope, out, "out", |message| Ok(message.is_canonical()))
}

/// Length in bytes of the SPEC §3.2 (`to_bytes`) text of an envelope.
///
/// Returns `MBR_OK`, `MBR_INVALID_STATE` or `MBR_NULL_POINTER`.
///
/// # Safety
/// `envelope` is NULL or points to an `mbr_envelope` (its borrows alive); `out_len` is
/// NULL or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_envelope_encoded_len(envelope: *const mbr_envelope, out_len: *mut usize) -> u32 {
    read_into(envelope, out_len, "out_len", |message| Ok(message.encoded_len()))
}

/// Write the SPEC §3.2 (`to_bytes`) text of an envelope (ASCII, no NUL) into `buf`
/// (`capacity` bytes); `*out_len` gets its length (see `mbr_envelope_encoded_len`).
///
/// Returns `MBR_OK`, `MBR_BUFFER_TOO_SMALL` (`error->needed` says how much; `buf`
/// untouched), `MBR_INVALID_STATE` or `MBR_NULL_POINTER`. `error` may be NULL.
///
/// # Safety
/// `envelope` is NULL or points to an `mbr_envelope` (its borrows alive); `buf` is NULL
/// or points to `capacity` writable bytes that do not overlap what it borrows; `out_len`
/// and `error` are each NULL or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_envelope_write(
    envelope: *const mbr_envelope,
    buf: *mut u8,
    capacity: usize,
    out_len: *mut usize,
    error: *mut mbr_error,
) -> u32 {
    write_out(buf, capacity, out_len, error, |buf| try_ref(envelope)?.write_into(buf))
}

/// The name of an `MBR_CONSISTENCY_*` number (`"strong"`, `"quorum"`, `"eventual"`),
/// or `"unknown"`. Never NULL; the string is static.
#[no_mangle]
#[must_use]
pub extern "C" fn mbr_consistency_name(consistency: u32) -> *const c_char {
    guard(c"unknown".as_ptr(), || CONSISTENCY_NAMES.get(usize::try_from(consistency).unwrap_or(usize::MAX), c"unknown"))
}

/// What decides whether two fragments come from compatible models (SPEC §3.3), for
/// `mbr_compat_hash`. Strings are UTF-8, pointer and length (`{NULL, 0}` is `""`).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct mbr_compat_inputs {
    /// The model's id.
    pub model_id: mbr_str,
    /// The model's revision (`""` = unpinned).
    pub model_revision: mbr_str,
    /// Version of the model's KV layout (0 when derived from an identity).
    pub model_layout_version: i64,
    /// The tokenizer's name.
    pub tokenizer_name: mbr_str,
    /// The tokenizer's revision.
    pub tokenizer_revision: mbr_str,
    /// Version of the tokenizer's layout (0 when derived from an identity).
    pub tokenizer_layout_version: i64,
    /// Element type name, e.g. `"float16"` (any text; not checked against the dtypes).
    pub dtype: mbr_str,
    /// Hash of the model configuration (`""` when derived from an identity).
    pub config_hash: mbr_str,
}

/// The compatibility hash (SPEC §3.3) of explicit values: SHA-256 of their compact,
/// key-sorted, ASCII JSON, as 64 lower-case hex digits and a NUL into `out` (at least
/// 65 bytes) — an envelope's `fingerprint_compat`.
///
/// Returns `MBR_OK`, `MBR_INVALID_ARGUMENT` (a string that is not UTF-8) or
/// `MBR_NULL_POINTER`.
///
/// # Safety
/// `inputs` is NULL or points to a readable `mbr_compat_inputs` whose strings are
/// readable; `out` is NULL or points to 65 writable bytes.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_compat_hash(inputs: *const mbr_compat_inputs, out: *mut c_char) -> u32 {
    boundary(NO_DETAIL, || {
        let inputs = value_of(inputs, "inputs")?;
        let out = Out::new(out.cast::<[c_char; 65]>(), "out")?;
        let digest = CompatInputs {
            model_id: text(inputs.model_id, "model_id")?,
            model_revision: text(inputs.model_revision, "model_revision")?,
            model_layout_version: inputs.model_layout_version,
            tokenizer_name: text(inputs.tokenizer_name, "tokenizer_name")?,
            tokenizer_revision: text(inputs.tokenizer_revision, "tokenizer_revision")?,
            tokenizer_layout_version: inputs.tokenizer_layout_version,
            dtype: text(inputs.dtype, "dtype")?,
            config_hash: text(inputs.config_hash, "config_hash")?,
        }
        .fingerprint();
        out.write(hex65(&digest));
        Ok(())
    })
}

/// The compatibility hash derived from an identity (SPEC §3.3: its model and tokenizer
/// names and revisions and its dtype, layout versions 0, `config_hash` `""`) — what
/// migration writes into envelopes without one — as 64 lower-case hex digits and a NUL
/// into `out` (at least 65 bytes).
///
/// Returns `MBR_OK`, `MBR_INVALID_STATE` or `MBR_NULL_POINTER`.
///
/// # Safety
/// `identity` is NULL or points to an `mbr_identity` (its borrows alive); `out` is NULL
/// or points to 65 writable bytes.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_identity_compat_hash(identity: *const mbr_identity, out: *mut c_char) -> u32 {
    read_into(identity, out.cast::<[c_char; 65]>(), "out", |identity| Ok(hex65(&identity.fingerprint_compat())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::{MBR_BUFFER_TOO_SMALL, MBR_ENVELOPE_VERSION, MBR_OK};

    const TEXT: &[u8] = br#"{"schema_version": 5, "tenant_id": "t\u00e9", "identity": {"payload_hash": "x", "model_id": "m", "model_revision": "", "tokenizer_name": "t", "tokenizer_revision": "", "layer_range": [0, 1], "head_range": [-1, -1], "token_span": [0, 7], "dtype": "int8", "shape": [1]}, "payload_ref": "r", "payload_size": 0, "ttl": 60.0, "reuse_score": 0.5, "version_id": 1, "consistency": "eventual", "hlc": 7, "fingerprint_compat": ""}"#;

    #[test]
    fn canonicalize_reports_the_length_needed_and_leaves_the_buffer_alone() {
        let mut out = [0xA5u8; 1024];
        let mut written = 0usize;
        // SAFETY: valid pointers and lengths.
        let status =
            unsafe { mbr_envelope_canonicalize(TEXT.as_ptr(), TEXT.len(), out.as_mut_ptr(), 10, &mut written) };
        assert_eq!((status, written), (MBR_BUFFER_TOO_SMALL, TEXT.len()));
        assert!(out.iter().all(|&b| b == 0xA5));
        // SAFETY: as above.
        let status =
            unsafe { mbr_envelope_canonicalize(TEXT.as_ptr(), TEXT.len(), out.as_mut_ptr(), out.len(), &mut written) };
        assert_eq!((status, &out[..written]), (MBR_OK, TEXT));
        let legacy = br#"{"schema_version": 4}"#;
        written = 12345;
        // SAFETY: as above.
        let status = unsafe {
            mbr_envelope_canonicalize(legacy.as_ptr(), legacy.len(), out.as_mut_ptr(), out.len(), &mut written)
        };
        assert_eq!((status, written), (MBR_ENVELOPE_VERSION, 12345));
    }

    #[test]
    fn string_fields_read_back_decoded() {
        let mut envelope = MaybeUninit::<mbr_envelope>::uninit();
        // SAFETY: valid pointers; the envelope borrows TEXT, which is static.
        let envelope = unsafe {
            assert_eq!(mbr_envelope_parse(TEXT.as_ptr(), TEXT.len(), envelope.as_mut_ptr(), core::ptr::null_mut()), 0);
            envelope.assume_init()
        };
        let read = |field: u32| {
            let mut buf = [0 as c_char; 16];
            let mut len = 0usize;
            // SAFETY: valid pointers and lengths.
            assert_eq!(unsafe { mbr_envelope_string(&envelope, field, buf.as_mut_ptr(), buf.len(), &mut len) }, 0);
            buf[..len].iter().map(|&c| c as u8).collect::<std::vec::Vec<u8>>()
        };
        assert_eq!(read(MBR_ENVELOPE_FIELD_TENANT_ID), "t\u{e9}".as_bytes());
        assert_eq!(read(MBR_ENVELOPE_FIELD_PAYLOAD_REF), b"r");
        assert_eq!(read(MBR_ENVELOPE_FIELD_CONSISTENCY), b"eventual");
        assert_eq!(read(MBR_ENVELOPE_FIELD_FINGERPRINT_COMPAT), b"");
        let mut fields = MaybeUninit::<mbr_envelope_fields>::uninit();
        // SAFETY: valid pointers.
        let fields = unsafe {
            assert_eq!(mbr_envelope_get_fields(&envelope, fields.as_mut_ptr()), 0);
            fields.assume_init()
        };
        assert_eq!((fields.hlc, fields.consistency, fields.has_payload_ref), (7, MBR_CONSISTENCY_EVENTUAL, true));
        // SAFETY: the names are static NUL-terminated strings.
        let name = unsafe { core::ffi::CStr::from_ptr(mbr_consistency_name(fields.consistency)) };
        assert_eq!(name.to_str(), Ok("eventual"));
    }
}
