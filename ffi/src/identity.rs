//! The payload identity (SPEC §2): parsed from JSON or built from C values, kept in
//! caller storage (`mbr_identity`), read field by field, fingerprinted, written in its
//! canonical form.

use crate::boundary::{boundary, guard, NO_DETAIL};
use crate::digest::mbr_digest;
use crate::object::{self, opaque, read_into, store, try_ref};
use crate::out::Out;
use crate::slice::{c_name, copy_decoded, input, name_table, output, text, value_of, write_out, NameTable, NAME_WIDTH};
use core::ffi::c_char;
use core::mem::MaybeUninit;
use membrane::identity::FIELD_NAMES;
use membrane::identity::{Dtype, FieldSet, IdentityValues, InclusiveRange, PayloadIdentity, MAX_SHAPE_DIMS};
use membrane::json::JsonStr;
use membrane::Error;

pub use crate::slice::mbr_str;

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

opaque!(mbr_identity => PayloadIdentity<'a>, b"mbr_iden", "identity", MBR_IDENTITY_SIZE, MBR_IDENTITY_ALIGN);

const _: () = assert!(MBR_MAX_SHAPE_DIMS == MAX_SHAPE_DIMS);

impl mbr_identity {
    /// Storage holding `identity`, or no identity (`has_identity == false` in views;
    /// the identity functions refuse it with `MBR_INVALID_STATE`).
    #[cfg(feature = "envelope")]
    pub(crate) fn holding(identity: Option<PayloadIdentity<'_>>) -> mbr_identity {
        match identity {
            Some(identity) => object::holding(mbr_identity::EMPTY, identity),
            None => mbr_identity::EMPTY,
        }
    }

    /// Storage holding no identity (zeroed: refused as not initialised).
    pub(crate) const EMPTY: mbr_identity = mbr_identity { _opaque: [MaybeUninit::new(0); 64] };

    /// Store `identity` (if any) in this storage, in place.
    pub(crate) fn fill(&mut self, identity: Option<&PayloadIdentity<'_>>) {
        if let Some(identity) = identity {
            object::store(Out::to(self), identity.clone());
        }
    }
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

/// Every identity field, as a set for `mbr_identity_compare` (bit `1u << MBR_FIELD_*`
/// per field).
pub const MBR_FIELDS_ALL: u32 = (1 << 10) - 1;
/// The fields that decide whether a cached tensor fits a loaded model: `model_id`,
/// `model_revision`, `tokenizer_name`, `tokenizer_revision`, `dtype`.
pub const MBR_FIELDS_MODEL: u32 = (1 << MBR_FIELD_MODEL_ID)
    | (1 << MBR_FIELD_MODEL_REVISION)
    | (1 << MBR_FIELD_TOKENIZER_NAME)
    | (1 << MBR_FIELD_TOKENIZER_REVISION)
    | (1 << MBR_FIELD_DTYPE);

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
#[allow(clippy::indexing_slicing)] // const evaluation: an out-of-range index fails the build
static DTYPE_NAMES: NameTable<{ Dtype::ALL.len() }, NAME_WIDTH> = name_table!(Dtype::ALL, name, NAME_WIDTH);

/// The identity field names in `MBR_FIELD_*` order (a test checks the order).
#[allow(clippy::indexing_slicing)] // const evaluation: an out-of-range index fails the build
static FIELD_NAME_TABLE: NameTable<{ FIELD_NAMES.len() }, NAME_WIDTH> = {
    let mut table = [[0u8; NAME_WIDTH]; FIELD_NAMES.len()];
    let mut i = 0;
    while i < FIELD_NAMES.len() {
        table[i] = c_name::<NAME_WIDTH>(FIELD_NAMES[i]);
        i += 1;
    }
    NameTable(table)
};

fn dtype_of(number: u32) -> Option<Dtype> {
    Dtype::ALL.get(usize::try_from(number).ok()?).copied()
}

/// The dtype with this `MBR_DTYPE_*` number, or `invalid_argument`.
fn dtype_arg(number: u32) -> Result<Dtype, Error> {
    dtype_of(number).ok_or(Error::invalid_argument("dtype", "not an MBR_DTYPE_* number"))
}

pub(crate) fn dtype_number(dtype: Dtype) -> u32 {
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
        _ => {
            return Err(Error::invalid_argument(
                "field",
                "not a string field (MBR_FIELD_PAYLOAD_HASH..TOKENIZER_REVISION, DTYPE)",
            ))
        }
    })
}

/// Parse and validate an identity JSON text (any strict-JSON spelling, SPEC §2, §4)
/// into `*out`, which then borrows the text.
///
/// Returns `MBR_OK`, `MBR_IDENTITY_JSON`, `MBR_IDENTITY_FIELD` (offsets into the text
/// in `*error`), or a usage code. `error` may be NULL.
///
/// # Safety
/// `json` is NULL or points to `len` readable bytes that stay alive and unchanged while
/// the identity is used; `out` and `error` are each NULL or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_identity_parse(
    json: *const u8,
    len: usize,
    out: *mut mbr_identity,
    error: *mut crate::status::mbr_error,
) -> u32 {
    boundary(error, || {
        let out = Out::new(out, "out")?;
        store(out, PayloadIdentity::parse(input(json, len, "json")?)?);
        Ok(())
    })
}

/// Validate C values (SPEC §2.2) and make an identity of them in `*out`. The identity
/// borrows the strings of `values` (not `values` itself, nor `shape`, which is copied).
///
/// Returns `MBR_OK`, `MBR_IDENTITY_FIELD`, `MBR_INVALID_ARGUMENT` (a string that is not
/// UTF-8, an unknown dtype), or `MBR_NULL_POINTER`. `error` may be NULL.
///
/// # Safety
/// `values` is NULL or points to a readable `mbr_identity_values` whose strings are
/// readable and stay alive and unchanged while the identity is used, and whose `shape`
/// is NULL (with `shape_len` 0) or points to `shape_len` readable integers; `out` and
/// `error` are each NULL or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_identity_build(
    values: *const mbr_identity_values,
    out: *mut mbr_identity,
    error: *mut crate::status::mbr_error,
) -> u32 {
    boundary(error, || {
        let values = value_of(values, "values")?;
        let out = Out::new(out, "out")?;
        let shape = input(values.shape, values.shape_len, "shape")?;
        // The five strings in one loop (FIELD_NAMES starts with them): one copy of the
        // UTF-8 check and its error, not five.
        let given = [
            values.payload_hash,
            values.model_id,
            values.model_revision,
            values.tokenizer_name,
            values.tokenizer_revision,
        ];
        let mut texts = [""; 5];
        for ((slot, value), name) in texts.iter_mut().zip(given).zip(FIELD_NAMES) {
            *slot = text(value, name)?;
        }
        let [payload_hash, model_id, model_revision, tokenizer_name, tokenizer_revision] = texts;
        let identity = IdentityValues {
            payload_hash,
            model_id,
            model_revision,
            tokenizer_name,
            tokenizer_revision,
            layer_range: range(values.layer_range),
            head_range: range(values.head_range),
            token_span: range(values.token_span),
            dtype: dtype_arg(values.dtype)?,
            shape,
        }
        .build()?;
        store(out, identity);
        Ok(())
    })
}

/// The same identity with another `payload_hash` (e.g. the digest of the payload about
/// to be framed) in `*out`, which borrows what `*identity` borrows and `hash`. `out`
/// may equal `identity`.
///
/// Returns `MBR_OK`, `MBR_IDENTITY_FIELD` (an empty hash), `MBR_INVALID_ARGUMENT` (not
/// UTF-8), `MBR_INVALID_STATE` or `MBR_NULL_POINTER`. `error` may be NULL.
///
/// # Safety
/// `identity` is NULL or points to an `mbr_identity` (its borrows alive); `hash` is NULL
/// or points to `hash_len` readable bytes that outlive the result; `out` (which may be
/// `identity`) and `error` are each NULL or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_identity_with_payload_hash(
    identity: *const mbr_identity,
    hash: *const c_char,
    hash_len: usize,
    out: *mut mbr_identity,
    error: *mut crate::status::mbr_error,
) -> u32 {
    boundary(error, || {
        let out = Out::new(out, "out")?;
        let identity = try_ref(identity)?;
        let hash = text(mbr_str { ptr: hash, len: hash_len }, "hash")?;
        // Cloned before `out` is written: `out` may be the same storage.
        let changed = identity.clone().with_payload_hash(hash)?;
        store(out, changed);
        Ok(())
    })
}

/// Length in bytes of a string field's decoded (unescaped) UTF-8 value, without a NUL.
/// `field` is `MBR_FIELD_PAYLOAD_HASH` .. `MBR_FIELD_TOKENIZER_REVISION` or
/// `MBR_FIELD_DTYPE` (its name).
///
/// Returns `MBR_OK`, `MBR_INVALID_ARGUMENT`, `MBR_INVALID_STATE` or `MBR_NULL_POINTER`.
///
/// # Safety
/// `identity` is NULL or points to an `mbr_identity` (its borrows alive); `out_len` is
/// NULL or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_identity_string_len(
    identity: *const mbr_identity,
    field: u32,
    out_len: *mut usize,
) -> u32 {
    read_into(identity, out_len, "out_len", |identity| Ok(string_field(identity, field)?.decoded_len()))
}

/// Copy a string field's decoded (unescaped) UTF-8 value and a NUL into `buf`
/// (`capacity` bytes); `*out_len` gets its length without the NUL. A value may itself
/// contain NUL characters (`\u0000`): trust `*out_len`, not `strlen`.
///
/// Returns `MBR_OK`, `MBR_BUFFER_TOO_SMALL` (when `capacity` < length + 1; see
/// `mbr_identity_string_len`), `MBR_INVALID_ARGUMENT`, `MBR_INVALID_STATE` or
/// `MBR_NULL_POINTER`.
///
/// # Safety
/// `identity` is NULL or points to an `mbr_identity` (its borrows alive); `buf` is NULL
/// or points to `capacity` writable bytes; `out_len` is NULL or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_identity_string(
    identity: *const mbr_identity,
    field: u32,
    buf: *mut c_char,
    capacity: usize,
    out_len: *mut usize,
) -> u32 {
    read_into(identity, out_len, "out_len", |identity| {
        let value = string_field(identity, field)?;
        copy_decoded(&value, output(buf.cast(), capacity, "buf")?)
    })
}

/// A string field's value in place, without a copy: `*out` points into what the
/// identity borrows (the JSON text or frame it was parsed from, the strings it was built
/// from) and is valid as long as that is. Only a value written without JSON escapes is
/// its own decoded text; for one written with escapes (`\u00e9`, `\"`) there is no view
/// in place, and the call returns `MBR_BUFFER_TOO_SMALL`: decode it with
/// `mbr_identity_string` into `mbr_identity_string_len` + 1 bytes.
///
/// Returns `MBR_OK`, `MBR_BUFFER_TOO_SMALL` (escapes), `MBR_INVALID_ARGUMENT`,
/// `MBR_INVALID_STATE` or `MBR_NULL_POINTER`.
///
/// # Safety
/// `identity` is NULL or points to an `mbr_identity` (its borrows alive); `out` is NULL
/// or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_identity_string_view(
    identity: *const mbr_identity,
    field: u32,
    out: *mut crate::slice::mbr_str,
) -> u32 {
    read_into(identity, out, "out", |identity| {
        let value = string_field(identity, field)?;
        let text =
            value.as_str().ok_or_else(|| Error::buffer_too_small(value.decoded_len() as u64 + 1).in_field("field"))?;
        Ok(crate::slice::mbr_str { ptr: text.as_ptr().cast(), len: text.len() })
    })
}

/// A range field (`MBR_FIELD_LAYER_RANGE`, `MBR_FIELD_HEAD_RANGE`, `MBR_FIELD_TOKEN_SPAN`).
///
/// Returns `MBR_OK`, `MBR_INVALID_ARGUMENT`, `MBR_INVALID_STATE` or `MBR_NULL_POINTER`.
///
/// # Safety
/// `identity` is NULL or points to an `mbr_identity` (its borrows alive); `out` is NULL
/// or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_identity_range(identity: *const mbr_identity, field: u32, out: *mut mbr_range) -> u32 {
    read_into(identity, out, "out", |identity| {
        let value = match field {
            MBR_FIELD_LAYER_RANGE => identity.layer_range(),
            MBR_FIELD_HEAD_RANGE => identity.head_range(),
            MBR_FIELD_TOKEN_SPAN => identity.token_span(),
            _ => {
                return Err(Error::invalid_argument(
                    "field",
                    "not a range field (MBR_FIELD_LAYER_RANGE, HEAD_RANGE, TOKEN_SPAN)",
                ))
            }
        };
        Ok(c_range(value))
    })
}

/// The `dtype` as an `MBR_DTYPE_*` number.
///
/// Returns `MBR_OK`, `MBR_INVALID_STATE` or `MBR_NULL_POINTER`.
///
/// # Safety
/// `identity` is NULL or points to an `mbr_identity` (its borrows alive); `out` is NULL
/// or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_identity_dtype(identity: *const mbr_identity, out: *mut u32) -> u32 {
    read_into(identity, out, "out", |identity| Ok(dtype_number(identity.dtype())))
}

/// Copy the `shape` into `dims` (room for `capacity` integers; `MBR_MAX_SHAPE_DIMS`
/// always suffices); `*out_len` gets the number of dimensions.
///
/// Returns `MBR_OK`, `MBR_BUFFER_TOO_SMALL`, `MBR_INVALID_STATE` or `MBR_NULL_POINTER`.
///
/// # Safety
/// `identity` is NULL or points to an `mbr_identity` (its borrows alive); `dims` is NULL
/// or points to `capacity` writable integers; `out_len` is NULL or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_identity_shape(
    identity: *const mbr_identity,
    dims: *mut i64,
    capacity: usize,
    out_len: *mut usize,
) -> u32 {
    read_into(identity, out_len, "out_len", |identity| {
        let shape = identity.shape();
        let dims = output(dims, capacity, "dims")?;
        let too_small = Error::buffer_too_small(shape.len() as u64).in_field("dims");
        dims.get_mut(..shape.len()).ok_or(too_small)?.copy_from_slice(shape);
        Ok(shape.len())
    })
}

/// Bytes of the tensor `shape` x `dtype` describes, rounded up (a helper, not a reader
/// rule: SPEC §2.1).
///
/// Returns `MBR_OK`, `MBR_INVALID_ARGUMENT` (a negative dimension, or more than
/// 2^64-1 bytes), `MBR_INVALID_STATE` or `MBR_NULL_POINTER`.
///
/// # Safety
/// `identity` is NULL or points to an `mbr_identity` (its borrows alive); `out` is NULL
/// or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_identity_tensor_bytes(identity: *const mbr_identity, out: *mut u64) -> u32 {
    read_into(identity, out, "out", |identity| {
        identity
            .tensor_bytes()
            .ok_or(Error::invalid_argument("identity", "shape has a negative dimension or its size overflows"))
    })
}

/// Whether the identity's stored text is byte for byte its canonical serialisation
/// (SPEC §2.3); built identities are canonical.
///
/// Returns `MBR_OK`, `MBR_INVALID_STATE` or `MBR_NULL_POINTER`.
///
/// # Safety
/// `identity` is NULL or points to an `mbr_identity` (its borrows alive); `out` is NULL
/// or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_identity_is_canonical(identity: *const mbr_identity, out: *mut bool) -> u32 {
    read_into(identity, out, "out", |identity| Ok(identity.is_canonical()))
}

/// The fingerprint (SPEC §2.4): SHA-256 of the canonical serialisation (`hex` is the
/// usual 64-digit form).
///
/// Returns `MBR_OK`, `MBR_INVALID_STATE` or `MBR_NULL_POINTER`.
///
/// # Safety
/// `identity` is NULL or points to an `mbr_identity` (its borrows alive); `out` is NULL
/// or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_identity_fingerprint(identity: *const mbr_identity, out: *mut mbr_digest) -> u32 {
    read_into(identity, out, "out", |identity| Ok(mbr_digest::of(&identity.fingerprint())))
}

/// Fingerprint of an identity JSON text: 64 lower-case hex digits and a NUL into `out`
/// (at least 65 bytes).
///
/// Returns `MBR_OK`, `MBR_IDENTITY_JSON`, `MBR_IDENTITY_FIELD` or `MBR_NULL_POINTER`.
///
/// # Safety
/// `json` is NULL or points to `len` readable bytes; `out` is NULL or points to 65
/// writable bytes.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_identity_fingerprint_hex(json: *const u8, len: usize, out: *mut c_char) -> u32 {
    boundary(NO_DETAIL, || {
        let out = Out::new(out.cast::<[c_char; 65]>(), "out")?;
        let digest = mbr_digest::of(&PayloadIdentity::parse(input(json, len, "json")?)?.fingerprint());
        out.write(digest.hex);
        Ok(())
    })
}

/// Length in bytes of the canonical serialisation (SPEC §2.3).
///
/// Returns `MBR_OK`, `MBR_INVALID_STATE` or `MBR_NULL_POINTER`.
///
/// # Safety
/// `identity` is NULL or points to an `mbr_identity` (its borrows alive); `out_len` is
/// NULL or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_identity_canonical_len(identity: *const mbr_identity, out_len: *mut usize) -> u32 {
    read_into(identity, out_len, "out_len", |identity| Ok(identity.canonical_len()))
}

/// Write the canonical serialisation (compact, sorted keys, ASCII; no NUL) into `buf`
/// (`capacity` bytes); `*out_len` gets its length.
///
/// Returns `MBR_OK`, `MBR_BUFFER_TOO_SMALL` (`error->needed` says how much), or a usage
/// code. `error` may be NULL.
///
/// # Safety
/// `identity` is NULL or points to an `mbr_identity` (its borrows alive); `buf` is NULL
/// or points to `capacity` writable bytes; `out_len` and `error` are each NULL or
/// writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_identity_write_canonical(
    identity: *const mbr_identity,
    buf: *mut u8,
    capacity: usize,
    out_len: *mut usize,
    error: *mut crate::status::mbr_error,
) -> u32 {
    write_out(buf, capacity, out_len, error, |buf| try_ref(identity)?.write_canonical_into(buf))
}

/// The name of a dtype number (`"float16"`, ..., `"nf4"`), or `"unknown"`. Never NULL;
/// the string is static.
#[no_mangle]
#[must_use]
pub extern "C" fn mbr_dtype_name(dtype: u32) -> *const c_char {
    guard(c"unknown".as_ptr(), || DTYPE_NAMES.get(usize::try_from(dtype).unwrap_or(usize::MAX), c"unknown"))
}

/// Which of the `fields` (a set of `1u << MBR_FIELD_*` bits: `MBR_FIELDS_MODEL`,
/// `MBR_FIELDS_ALL`, or any union) differ between `identity` and `expected`, into
/// `*differing` (0 when they agree on all of them). Strings are compared decoded, so any
/// JSON spelling of the same text matches; ranges, dtype and shape by value. Nothing is
/// copied: checking that a frame's identity belongs to the loaded model is one call.
///
/// Returns `MBR_OK`, `MBR_INVALID_ARGUMENT` (a bit that names no field),
/// `MBR_INVALID_STATE` or `MBR_NULL_POINTER`.
///
/// # Safety
/// `identity` and `expected` are NULL or point to `mbr_identity`s (their borrows alive);
/// `differing` is NULL or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_identity_compare(
    identity: *const mbr_identity,
    expected: *const mbr_identity,
    fields: u32,
    differing: *mut u32,
) -> u32 {
    read_into(identity, differing, "differing", |identity| {
        object::non_null(expected, "expected")?;
        let expected = try_ref(expected)?;
        let fields = FieldSet::from_bits(fields)
            .ok_or(Error::invalid_argument("fields", "a bit that names no field (MBR_FIELDS_ALL holds them all)"))?;
        Ok(identity.differing_fields(expected, fields).bits())
    })
}

/// The name of an identity field number (`MBR_FIELD_PAYLOAD_HASH` is `"payload_hash"`,
/// ..., `MBR_FIELD_SHAPE` is `"shape"`), or `"unknown"`. Never NULL; the string is static.
#[no_mangle]
#[must_use]
pub extern "C" fn mbr_field_name(field: u32) -> *const c_char {
    guard(c"unknown".as_ptr(), || FIELD_NAME_TABLE.get(usize::try_from(field).unwrap_or(usize::MAX), c"unknown"))
}

/// Bits per element of a dtype number.
///
/// Returns `MBR_OK`, `MBR_INVALID_ARGUMENT` or `MBR_NULL_POINTER`.
///
/// # Safety
/// `out` is NULL or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_dtype_bits(dtype: u32, out: *mut u32) -> u32 {
    boundary(NO_DETAIL, || {
        let out = Out::new(out, "out")?;
        out.write(dtype_arg(dtype)?.bits());
        Ok(())
    })
}

/// The dtype number of a name (exact, case-sensitive: `"float16"`, ...).
///
/// Returns `MBR_OK`, `MBR_INVALID_ARGUMENT` (no such dtype) or `MBR_NULL_POINTER`.
///
/// # Safety
/// `name` is NULL or points to `len` readable bytes; `out` is NULL or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_dtype_from_name(name: *const c_char, len: usize, out: *mut u32) -> u32 {
    boundary(NO_DETAIL, || {
        let out = Out::new(out, "out")?;
        let name = text(mbr_str { ptr: name, len }, "name")?;
        let dtype = Dtype::from_name(name).ok_or(Error::invalid_argument("name", "not a dtype name"))?;
        out.write(dtype_number(dtype));
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

    #[test]
    fn the_field_sets_are_the_cores() {
        assert_eq!(MBR_FIELDS_ALL, FieldSet::ALL.bits());
        assert_eq!(MBR_FIELDS_MODEL, FieldSet::MODEL.bits());
    }
}
