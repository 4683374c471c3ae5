//! The payload identity (SPEC §2): parsed from JSON or built from C values, kept in
//! caller storage (`mbr_identity`), read field by field, fingerprinted, written in its
//! canonical form.

use super::digest::mbr_digest;
use super::status::c_name;
use super::{boundary, guard, input, invalid, non_null, output, put, Slot};
use crate::error::Error;
#[cfg(test)]
use crate::identity::FIELD_NAMES;
use crate::identity::{Dtype, IdentityValues, InclusiveRange, PayloadIdentity, MAX_SHAPE_DIMS};
use crate::json::JsonStr;
use core::ffi::c_char;
use core::mem::{align_of, size_of, MaybeUninit};

/// Size in bytes of `mbr_identity`.
pub const MBR_IDENTITY_SIZE: usize = 512;
/// Alignment in bytes of `mbr_identity`.
pub const MBR_IDENTITY_ALIGN: usize = 8;
/// Most dimensions a shape has (SPEC §2.1).
pub const MBR_MAX_SHAPE_DIMS: usize = 16;

/// A parsed or built identity, in storage the caller owns (a local, a struct member,
/// a frame view). Opaque: read it through the `mbr_identity_*` functions.
///
/// It borrows what it was made from — the JSON text (or frame buffer) it was parsed
/// from, the strings of the `mbr_identity_values` it was built from — which must stay
/// alive and unchanged while it is used. It owns nothing: copy it freely, never free
/// it. Storage that no call has filled (e.g. zeroed) is refused with
/// `MBR_INVALID_STATE`.
#[repr(C)]
pub struct mbr_identity {
    _opaque: [MaybeUninit<u64>; 64],
}

const TAG_IDENTITY: u64 = 0x6d62_725f_6964_656e; // "mbr_iden"

const _: () = {
    assert!(size_of::<mbr_identity>() == MBR_IDENTITY_SIZE);
    assert!(align_of::<mbr_identity>() == MBR_IDENTITY_ALIGN);
    assert!(Slot::<PayloadIdentity<'static>>::fits::<mbr_identity>());
    assert!(MBR_MAX_SHAPE_DIMS == MAX_SHAPE_DIMS);
};

impl mbr_identity {
    /// Storage that holds no identity (`has_identity == false` in views).
    pub(crate) const EMPTY: mbr_identity = mbr_identity { _opaque: [MaybeUninit::new(0); 64] };

    /// Storage holding `identity`.
    pub(crate) fn holding(identity: PayloadIdentity<'_>) -> mbr_identity {
        let mut storage = mbr_identity::EMPTY;
        // SAFETY: `storage` is a live, aligned mbr_identity, which fits the slot (asserted above).
        unsafe { Slot::store(&mut storage, TAG_IDENTITY, identity) };
        storage
    }
}

/// The identity in caller storage.
///
/// # Safety
/// `ptr`, if non-NULL, points to an `mbr_identity`; if it holds an identity, what that
/// identity borrows is alive and unchanged for `'s`.
pub(crate) unsafe fn identity_ref<'s>(ptr: *const mbr_identity) -> Result<&'s PayloadIdentity<'s>, Error> {
    non_null(ptr, "identity")?;
    // SAFETY: forwarded from the caller; identities are never mutated in place.
    unsafe { Slot::<PayloadIdentity<'s>>::shared(ptr, TAG_IDENTITY, "identity") }
}

/// `payload_hash` (a string).
pub const MBR_FIELD_PAYLOAD_HASH: u32 = 0;
/// `model_id` (a string).
pub const MBR_FIELD_MODEL_ID: u32 = 1;
/// `model_revision` (a string; `""` = unpinned).
pub const MBR_FIELD_MODEL_REVISION: u32 = 2;
/// `tokenizer_name` (a string).
pub const MBR_FIELD_TOKENIZER_NAME: u32 = 3;
/// `tokenizer_revision` (a string).
pub const MBR_FIELD_TOKENIZER_REVISION: u32 = 4;
/// `layer_range` (a range).
pub const MBR_FIELD_LAYER_RANGE: u32 = 5;
/// `head_range` (a range; `[-1, -1]` = all heads).
pub const MBR_FIELD_HEAD_RANGE: u32 = 6;
/// `token_span` (a range).
pub const MBR_FIELD_TOKEN_SPAN: u32 = 7;
/// `dtype` (a dtype number, or its name as a string).
pub const MBR_FIELD_DTYPE: u32 = 8;
/// `shape` (an array of integers).
pub const MBR_FIELD_SHAPE: u32 = 9;

/// `float16`, 16 bits.
pub const MBR_DTYPE_FLOAT16: u32 = 0;
/// `bfloat16`, 16 bits.
pub const MBR_DTYPE_BFLOAT16: u32 = 1;
/// `float32`, 32 bits.
pub const MBR_DTYPE_FLOAT32: u32 = 2;
/// `float64`, 64 bits.
pub const MBR_DTYPE_FLOAT64: u32 = 3;
/// `int8`, 8 bits.
pub const MBR_DTYPE_INT8: u32 = 4;
/// `int16`, 16 bits.
pub const MBR_DTYPE_INT16: u32 = 5;
/// `int32`, 32 bits.
pub const MBR_DTYPE_INT32: u32 = 6;
/// `int64`, 64 bits.
pub const MBR_DTYPE_INT64: u32 = 7;
/// `uint8`, 8 bits.
pub const MBR_DTYPE_UINT8: u32 = 8;
/// `fp8_e4m3`, 8 bits.
pub const MBR_DTYPE_FP8_E4M3: u32 = 9;
/// `fp8_e5m2`, 8 bits.
pub const MBR_DTYPE_FP8_E5M2: u32 = 10;
/// `nf4`, 4 bits.
pub const MBR_DTYPE_NF4: u32 = 11;

// The dtype numbers are positions in `Dtype::ALL` (SPEC order).
#[allow(clippy::indexing_slicing)]
const _: () = {
    const fn at(number: u32, dtype: Dtype) -> bool {
        Dtype::ALL[number as usize] as u32 == dtype as u32
    }
    assert!(at(MBR_DTYPE_FLOAT16, Dtype::Float16) && at(MBR_DTYPE_BFLOAT16, Dtype::Bfloat16));
    assert!(at(MBR_DTYPE_FLOAT32, Dtype::Float32) && at(MBR_DTYPE_FLOAT64, Dtype::Float64));
    assert!(at(MBR_DTYPE_INT8, Dtype::Int8) && at(MBR_DTYPE_INT16, Dtype::Int16));
    assert!(at(MBR_DTYPE_INT32, Dtype::Int32) && at(MBR_DTYPE_INT64, Dtype::Int64));
    assert!(at(MBR_DTYPE_UINT8, Dtype::Uint8) && at(MBR_DTYPE_FP8_E4M3, Dtype::Fp8E4m3));
    assert!(at(MBR_DTYPE_FP8_E5M2, Dtype::Fp8E5m2) && at(MBR_DTYPE_NF4, Dtype::Nf4));
    assert!(Dtype::ALL.len() == 12);
};

/// Dtype names (from [`Dtype::name`]), NUL-terminated.
#[allow(clippy::indexing_slicing)]
static DTYPE_NAMES: [[u8; 32]; Dtype::ALL.len()] = {
    let mut table = [[0u8; 32]; Dtype::ALL.len()];
    let mut i = 0;
    while i < table.len() {
        table[i] = c_name(Dtype::ALL[i].name());
        i += 1;
    }
    table
};

fn dtype_of(number: u32) -> Option<Dtype> {
    Dtype::ALL.get(usize::try_from(number).ok()?).copied()
}

/// The dtype with this `MBR_DTYPE_*` number, or `invalid_argument`.
fn dtype_arg(number: u32) -> Result<Dtype, Error> {
    dtype_of(number).ok_or_else(|| invalid("dtype", "not an MBR_DTYPE_* number"))
}

fn dtype_number(dtype: Dtype) -> u32 {
    Dtype::ALL.iter().position(|&d| d == dtype).map_or(u32::MAX, |i| i as u32)
}

/// An inclusive `[start, end]` range.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct mbr_range {
    /// First index, inclusive.
    pub start: i64,
    /// Last index, inclusive.
    pub end: i64,
}

/// UTF-8 text given by pointer and length (no NUL needed; `{NULL, 0}` is `""`).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct mbr_str {
    /// The bytes.
    pub ptr: *const c_char,
    /// Their number.
    pub len: usize,
}

/// The ten fields of an identity as C values, for `mbr_identity_build`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct mbr_identity_values {
    /// Non-empty; by convention the payload's SHA-256 in hex (`mbr_digest.hex`).
    pub payload_hash: mbr_str,
    /// Any text.
    pub model_id: mbr_str,
    /// Any text; `""` = unpinned.
    pub model_revision: mbr_str,
    /// Any text.
    pub tokenizer_name: mbr_str,
    /// Any text.
    pub tokenizer_revision: mbr_str,
    /// `0 <= start <= end`.
    pub layer_range: mbr_range,
    /// `[-1, -1]` (all heads) or `0 <= start <= end`.
    pub head_range: mbr_range,
    /// `0 <= start <= end`.
    pub token_span: mbr_range,
    /// An `MBR_DTYPE_*` number.
    pub dtype: u32,
    /// 1 to `MBR_MAX_SHAPE_DIMS` dimensions.
    pub shape: *const i64,
    /// Number of dimensions at `shape`.
    pub shape_len: usize,
}

/// # Safety
/// A non-NULL `value.ptr` points to `value.len` readable bytes alive for `'a`.
pub(crate) unsafe fn text<'a>(value: mbr_str, field: &'static str) -> Result<&'a str, Error> {
    // SAFETY: forwarded from the caller.
    let bytes = unsafe { input(value.ptr.cast(), value.len, field)? };
    core::str::from_utf8(bytes).map_err(|_| invalid(field, "string is not UTF-8"))
}

fn range(value: mbr_range) -> InclusiveRange {
    InclusiveRange::new(value.start, value.end)
}

fn c_range(value: InclusiveRange) -> mbr_range {
    mbr_range { start: value.start, end: value.end }
}

fn string_field<'a>(identity: &PayloadIdentity<'a>, field: u32) -> Result<JsonStr<'a>, Error> {
    Ok(match field {
        MBR_FIELD_PAYLOAD_HASH => identity.payload_hash(),
        MBR_FIELD_MODEL_ID => identity.model_id(),
        MBR_FIELD_MODEL_REVISION => identity.model_revision(),
        MBR_FIELD_TOKENIZER_NAME => identity.tokenizer_name(),
        MBR_FIELD_TOKENIZER_REVISION => identity.tokenizer_revision(),
        MBR_FIELD_DTYPE => JsonStr::from_plain(identity.dtype().name()),
        _ => return Err(invalid("field", "not a string field (MBR_FIELD_PAYLOAD_HASH..TOKENIZER_REVISION, DTYPE)")),
    })
}

/// Parse and validate an identity JSON text (any strict-JSON spelling, SPEC §2, §4)
/// into `*out`, which then borrows the text.
///
/// Returns `MBR_OK`, `MBR_IDENTITY_JSON`, `MBR_IDENTITY_FIELD` (offsets into the text
/// in `*error`), or a usage code. `error` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn mbr_identity_parse(
    json: *const u8,
    len: usize,
    out: *mut mbr_identity,
    error: *mut super::status::mbr_error,
) -> u32 {
    boundary(error, || {
        non_null(out, "out")?;
        // SAFETY: the caller passes `len` readable bytes that outlive the identity.
        let json = unsafe { input(json, len, "json")? };
        let identity = PayloadIdentity::parse(json)?;
        // SAFETY: `out` is non-NULL and points to writable mbr_identity storage.
        unsafe { put(out, mbr_identity::holding(identity)) };
        Ok(())
    })
}

/// Validate C values (SPEC §2.2) and make an identity of them in `*out`. The identity
/// borrows the strings of `values` (not `values` itself, nor `shape`, which is copied).
///
/// Returns `MBR_OK`, `MBR_IDENTITY_FIELD`, `MBR_INVALID_ARGUMENT` (a string that is not
/// UTF-8, an unknown dtype), or `MBR_NULL_POINTER`. `error` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn mbr_identity_build(
    values: *const mbr_identity_values,
    out: *mut mbr_identity,
    error: *mut super::status::mbr_error,
) -> u32 {
    boundary(error, || {
        non_null(values, "values")?;
        non_null(out, "out")?;
        // SAFETY: non-NULL; the caller passes a readable mbr_identity_values.
        let values = unsafe { *values };
        // SAFETY: the caller passes readable strings that outlive the identity and
        // `shape_len` readable, aligned integers at `shape`.
        let identity = unsafe {
            let shape: &[i64] = if values.shape.is_null() && values.shape_len == 0 {
                &[]
            } else {
                non_null(values.shape, "shape")?;
                core::slice::from_raw_parts(values.shape, values.shape_len)
            };
            IdentityValues {
                payload_hash: text(values.payload_hash, "payload_hash")?,
                model_id: text(values.model_id, "model_id")?,
                model_revision: text(values.model_revision, "model_revision")?,
                tokenizer_name: text(values.tokenizer_name, "tokenizer_name")?,
                tokenizer_revision: text(values.tokenizer_revision, "tokenizer_revision")?,
                layer_range: range(values.layer_range),
                head_range: range(values.head_range),
                token_span: range(values.token_span),
                dtype: dtype_arg(values.dtype)?,
                shape,
            }
            .build()?
        };
        // SAFETY: `out` is non-NULL and points to writable mbr_identity storage.
        unsafe { put(out, mbr_identity::holding(identity)) };
        Ok(())
    })
}

/// The same identity with another `payload_hash` (e.g. the digest of the payload about
/// to be framed) in `*out`, which borrows what `*identity` borrows and `hash`. `out`
/// may equal `identity`.
///
/// Returns `MBR_OK`, `MBR_IDENTITY_FIELD` (an empty hash), `MBR_INVALID_ARGUMENT` (not
/// UTF-8), `MBR_INVALID_STATE` or `MBR_NULL_POINTER`. `error` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn mbr_identity_with_payload_hash(
    identity: *const mbr_identity,
    hash: *const c_char,
    hash_len: usize,
    out: *mut mbr_identity,
    error: *mut super::status::mbr_error,
) -> u32 {
    boundary(error, || {
        non_null(out, "out")?;
        // SAFETY: the caller passes a valid identity and `hash_len` readable bytes
        // that outlive the result.
        let (identity, hash) =
            unsafe { (identity_ref(identity)?, text(mbr_str { ptr: hash, len: hash_len }, "hash")?) };
        let changed = identity.clone().with_payload_hash(hash)?;
        // SAFETY: `out` is non-NULL and points to writable storage; `identity` is no
        // longer used (it was cloned), so `out` may alias it.
        unsafe { put(out, mbr_identity::holding(changed)) };
        Ok(())
    })
}

/// Length in bytes of a string field's decoded (unescaped) UTF-8 value, without a NUL.
/// `field` is `MBR_FIELD_PAYLOAD_HASH` .. `MBR_FIELD_TOKENIZER_REVISION` or
/// `MBR_FIELD_DTYPE` (its name).
///
/// Returns `MBR_OK`, `MBR_INVALID_ARGUMENT`, `MBR_INVALID_STATE` or `MBR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn mbr_identity_string_len(
    identity: *const mbr_identity,
    field: u32,
    out_len: *mut usize,
) -> u32 {
    boundary(core::ptr::null_mut(), || {
        non_null(out_len, "out_len")?;
        // SAFETY: the caller passes a valid identity.
        let value = string_field(unsafe { identity_ref(identity)? }, field)?;
        // SAFETY: `out_len` is non-NULL and writable.
        unsafe { put(out_len, value.decoded_len()) };
        Ok(())
    })
}

/// Copy a string field's decoded (unescaped) UTF-8 value and a NUL into `buf`
/// (`capacity` bytes); `*out_len` gets its length without the NUL. A value may itself
/// contain NUL characters (`\u0000`): trust `*out_len`, not `strlen`.
///
/// Returns `MBR_OK`, `MBR_BUFFER_TOO_SMALL` (when `capacity` < length + 1; see
/// `mbr_identity_string_len`), `MBR_INVALID_ARGUMENT`, `MBR_INVALID_STATE` or
/// `MBR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn mbr_identity_string(
    identity: *const mbr_identity,
    field: u32,
    buf: *mut c_char,
    capacity: usize,
    out_len: *mut usize,
) -> u32 {
    boundary(core::ptr::null_mut(), || {
        non_null(out_len, "out_len")?;
        // SAFETY: the caller passes a valid identity and `capacity` writable bytes.
        let (value, buf) =
            unsafe { (string_field(identity_ref(identity)?, field)?, output(buf.cast(), capacity, "buf")?) };
        let written = copy_decoded(&value, buf)?;
        // SAFETY: `out_len` is non-NULL and writable.
        unsafe { put(out_len, written) };
        Ok(())
    })
}

/// Copy the decoded value of `value` and a NUL into `buf`; returns the length without
/// the NUL, or `buffer_too_small` (length + 1) with `buf` untouched.
pub(crate) fn copy_decoded(value: &JsonStr<'_>, buf: &mut [u8]) -> Result<usize, Error> {
    let needed = value.decoded_len() + 1;
    let (text, nul) = match buf.get_mut(..needed) {
        Some(target) => target.split_at_mut(needed - 1),
        None => return Err(Error::buffer_too_small(needed as u64).in_field("buf")),
    };
    let written = value.unescape_into(text).map_err(|n| Error::buffer_too_small(n as u64 + 1))?.len();
    nul.fill(0);
    Ok(written)
}

/// A range field (`MBR_FIELD_LAYER_RANGE`, `MBR_FIELD_HEAD_RANGE`, `MBR_FIELD_TOKEN_SPAN`).
///
/// Returns `MBR_OK`, `MBR_INVALID_ARGUMENT`, `MBR_INVALID_STATE` or `MBR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn mbr_identity_range(identity: *const mbr_identity, field: u32, out: *mut mbr_range) -> u32 {
    boundary(core::ptr::null_mut(), || {
        non_null(out, "out")?;
        // SAFETY: the caller passes a valid identity.
        let identity = unsafe { identity_ref(identity)? };
        let value = match field {
            MBR_FIELD_LAYER_RANGE => identity.layer_range(),
            MBR_FIELD_HEAD_RANGE => identity.head_range(),
            MBR_FIELD_TOKEN_SPAN => identity.token_span(),
            _ => return Err(invalid("field", "not a range field (MBR_FIELD_LAYER_RANGE, HEAD_RANGE, TOKEN_SPAN)")),
        };
        // SAFETY: `out` is non-NULL and writable.
        unsafe { put(out, c_range(value)) };
        Ok(())
    })
}

/// The `dtype` as an `MBR_DTYPE_*` number.
///
/// Returns `MBR_OK`, `MBR_INVALID_STATE` or `MBR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn mbr_identity_dtype(identity: *const mbr_identity, out: *mut u32) -> u32 {
    boundary(core::ptr::null_mut(), || {
        non_null(out, "out")?;
        // SAFETY: the caller passes a valid identity; `out` is non-NULL and writable.
        unsafe { put(out, dtype_number(identity_ref(identity)?.dtype())) };
        Ok(())
    })
}

/// Copy the `shape` into `dims` (room for `capacity` integers; `MBR_MAX_SHAPE_DIMS`
/// always suffices); `*out_len` gets the number of dimensions.
///
/// Returns `MBR_OK`, `MBR_BUFFER_TOO_SMALL`, `MBR_INVALID_STATE` or `MBR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn mbr_identity_shape(
    identity: *const mbr_identity,
    dims: *mut i64,
    capacity: usize,
    out_len: *mut usize,
) -> u32 {
    boundary(core::ptr::null_mut(), || {
        non_null(out_len, "out_len")?;
        // SAFETY: the caller passes a valid identity.
        let shape = unsafe { identity_ref(identity)? }.shape();
        if dims.is_null() && capacity > 0 {
            return Err(super::null("dims"));
        }
        if capacity < shape.len() {
            return Err(Error::buffer_too_small(shape.len() as u64).in_field("dims"));
        }
        // SAFETY: `dims` is non-NULL here (capacity >= shape.len() >= 1) and the caller
        // passes `capacity` writable, aligned integers.
        unsafe {
            core::slice::from_raw_parts_mut(dims, shape.len()).copy_from_slice(shape);
            put(out_len, shape.len());
        }
        Ok(())
    })
}

/// Bytes of the tensor `shape` x `dtype` describes, rounded up (a helper, not a reader
/// rule: SPEC §2.1).
///
/// Returns `MBR_OK`, `MBR_INVALID_ARGUMENT` (a negative dimension, or more than
/// 2^64-1 bytes), `MBR_INVALID_STATE` or `MBR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn mbr_identity_tensor_bytes(identity: *const mbr_identity, out: *mut u64) -> u32 {
    boundary(core::ptr::null_mut(), || {
        non_null(out, "out")?;
        // SAFETY: the caller passes a valid identity.
        let bytes = unsafe { identity_ref(identity)? }
            .tensor_bytes()
            .ok_or_else(|| invalid("identity", "shape has a negative dimension or its size overflows"))?;
        // SAFETY: `out` is non-NULL and writable.
        unsafe { put(out, bytes) };
        Ok(())
    })
}

/// Whether the identity's stored text is byte for byte its canonical serialisation
/// (SPEC §2.3); built identities are canonical.
///
/// Returns `MBR_OK`, `MBR_INVALID_STATE` or `MBR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn mbr_identity_is_canonical(identity: *const mbr_identity, out: *mut bool) -> u32 {
    boundary(core::ptr::null_mut(), || {
        non_null(out, "out")?;
        // SAFETY: the caller passes a valid identity; `out` is non-NULL and writable.
        unsafe { put(out, identity_ref(identity)?.is_canonical()) };
        Ok(())
    })
}

/// The fingerprint (SPEC §2.4): SHA-256 of the canonical serialisation (`hex` is the
/// usual 64-digit form).
///
/// Returns `MBR_OK`, `MBR_INVALID_STATE` or `MBR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn mbr_identity_fingerprint(identity: *const mbr_identity, out: *mut mbr_digest) -> u32 {
    boundary(core::ptr::null_mut(), || {
        non_null(out, "out")?;
        // SAFETY: the caller passes a valid identity; `out` is non-NULL and writable.
        unsafe { put(out, mbr_digest::of(&identity_ref(identity)?.fingerprint())) };
        Ok(())
    })
}

/// Fingerprint of an identity JSON text: 64 lower-case hex digits and a NUL into `out`
/// (at least 65 bytes).
///
/// Returns `MBR_OK`, `MBR_IDENTITY_JSON`, `MBR_IDENTITY_FIELD` or `MBR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn mbr_identity_fingerprint_hex(json: *const u8, len: usize, out: *mut c_char) -> u32 {
    boundary(core::ptr::null_mut(), || {
        non_null(out, "out")?;
        // SAFETY: the caller passes `len` readable bytes.
        let json = unsafe { input(json, len, "json")? };
        let digest = mbr_digest::of(&PayloadIdentity::parse(json)?.fingerprint());
        // SAFETY: `out` is non-NULL and the caller passes 65 writable bytes.
        unsafe { core::ptr::copy_nonoverlapping(digest.hex.as_ptr(), out, digest.hex.len()) };
        Ok(())
    })
}

/// Length in bytes of the canonical serialisation (SPEC §2.3).
///
/// Returns `MBR_OK`, `MBR_INVALID_STATE` or `MBR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn mbr_identity_canonical_len(identity: *const mbr_identity, out_len: *mut usize) -> u32 {
    boundary(core::ptr::null_mut(), || {
        non_null(out_len, "out_len")?;
        // SAFETY: the caller passes a valid identity; `out_len` is non-NULL and writable.
        unsafe { put(out_len, identity_ref(identity)?.canonical_len()) };
        Ok(())
    })
}

/// Write the canonical serialisation (compact, sorted keys, ASCII; no NUL) into `buf`
/// (`capacity` bytes); `*out_len` gets its length.
///
/// Returns `MBR_OK`, `MBR_BUFFER_TOO_SMALL` (`error->needed` says how much), or a usage
/// code. `error` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn mbr_identity_write_canonical(
    identity: *const mbr_identity,
    buf: *mut u8,
    capacity: usize,
    out_len: *mut usize,
    error: *mut super::status::mbr_error,
) -> u32 {
    boundary(error, || {
        non_null(out_len, "out_len")?;
        // SAFETY: the caller passes a valid identity and `capacity` writable bytes.
        let (identity, buf) = unsafe { (identity_ref(identity)?, output(buf, capacity, "buf")?) };
        let written = identity.write_canonical_into(buf)?;
        // SAFETY: `out_len` is non-NULL and writable.
        unsafe { put(out_len, written) };
        Ok(())
    })
}

/// The name of a dtype number (`"float16"`, ..., `"nf4"`), or `"unknown"`. Never NULL;
/// the string is static.
#[no_mangle]
pub extern "C" fn mbr_dtype_name(dtype: u32) -> *const c_char {
    guard(c"unknown".as_ptr(), || {
        let name = usize::try_from(dtype).ok().and_then(|index| DTYPE_NAMES.get(index));
        name.map_or(c"unknown".as_ptr(), |name| name.as_ptr().cast())
    })
}

/// Bits per element of a dtype number.
///
/// Returns `MBR_OK`, `MBR_INVALID_ARGUMENT` or `MBR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn mbr_dtype_bits(dtype: u32, out: *mut u32) -> u32 {
    boundary(core::ptr::null_mut(), || {
        non_null(out, "out")?;
        let dtype = dtype_arg(dtype)?;
        // SAFETY: `out` is non-NULL and writable.
        unsafe { put(out, dtype.bits()) };
        Ok(())
    })
}

/// The dtype number of a name (exact, case-sensitive: `"float16"`, ...).
///
/// Returns `MBR_OK`, `MBR_INVALID_ARGUMENT` (no such dtype) or `MBR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn mbr_dtype_from_name(name: *const c_char, len: usize, out: *mut u32) -> u32 {
    boundary(core::ptr::null_mut(), || {
        non_null(out, "out")?;
        // SAFETY: the caller passes `len` readable bytes.
        let name = unsafe { text(mbr_str { ptr: name, len }, "name")? };
        let dtype = Dtype::from_name(name).ok_or_else(|| invalid("name", "not a dtype name"))?;
        // SAFETY: `out` is non-NULL and writable.
        unsafe { put(out, dtype_number(dtype)) };
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_numbers_follow_the_declaration_order() {
        let numbers = [
            MBR_FIELD_PAYLOAD_HASH,
            MBR_FIELD_MODEL_ID,
            MBR_FIELD_MODEL_REVISION,
            MBR_FIELD_TOKENIZER_NAME,
            MBR_FIELD_TOKENIZER_REVISION,
            MBR_FIELD_LAYER_RANGE,
            MBR_FIELD_HEAD_RANGE,
            MBR_FIELD_TOKEN_SPAN,
            MBR_FIELD_DTYPE,
            MBR_FIELD_SHAPE,
        ];
        assert_eq!(numbers.len(), FIELD_NAMES.len());
        for (i, number) in numbers.into_iter().enumerate() {
            assert_eq!(number as usize, i, "{}", FIELD_NAMES[i]);
        }
    }
}
