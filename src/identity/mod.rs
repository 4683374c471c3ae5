//! `PayloadIdentity` (SPEC §2): the ten-field identity of a fragment, as a borrowed view.
//!
//! Parsed identities borrow their strings from the JSON text; identities built for
//! writing borrow them from the caller's Rust values. Either way the canonical
//! serialisation (§2.3) and the fingerprint (§2.4) stream into any [`ByteSink`]
//! without allocating.
//!
//! [`ByteSink`]: crate::ByteSink

mod canonical;
mod compare;
mod dtype;
mod flat;
mod parse;

pub use compare::FieldSet;
pub use dtype::Dtype;

pub(crate) use canonical::{write_i64, write_u64};
#[cfg(feature = "fuzzing")]
pub(crate) use flat::parse_flat;
pub(crate) use parse::{parse_any_order, parse_declaration_order, parse_object, read_into};
#[cfg(feature = "fuzzing")]
pub(crate) use parse::{parse_any_spelling, parse_canonical, parse_general};

use crate::error::{Error, ErrorCode};
use crate::json::JsonStr;

/// Identities support at least this many shape dimensions (SPEC §2.1); more is
/// `identity_field`.
pub const MAX_SHAPE_DIMS: usize = 16;

/// The field names in declaration order (the order of the original `to_dict`).
pub const FIELD_NAMES: [&str; 10] = [
    "payload_hash",
    "model_id",
    "model_revision",
    "tokenizer_name",
    "tokenizer_revision",
    "layer_range",
    "head_range",
    "token_span",
    "dtype",
    "shape",
];

/// Each field's index in [`FIELD_NAMES`], for the readers' arms: a name cannot be
/// matched with another field's index by a mistyped number.
pub(crate) mod field {
    pub(crate) const PAYLOAD_HASH: usize = 0;
    pub(crate) const MODEL_ID: usize = 1;
    pub(crate) const MODEL_REVISION: usize = 2;
    pub(crate) const TOKENIZER_NAME: usize = 3;
    pub(crate) const TOKENIZER_REVISION: usize = 4;
    pub(crate) const LAYER_RANGE: usize = 5;
    pub(crate) const HEAD_RANGE: usize = 6;
    pub(crate) const TOKEN_SPAN: usize = 7;
    pub(crate) const DTYPE: usize = 8;
    pub(crate) const SHAPE: usize = 9;
}

/// An inclusive `[start, end]` pair as stored in `layer_range`, `head_range`, `token_span`.
///
/// ```
/// use membrane_frame::InclusiveRange;
/// let layers = InclusiveRange::new(0, 31);
/// assert_eq!((layers.start, layers.end), (0, 31));
/// assert_eq!(InclusiveRange::ALL_HEADS, InclusiveRange::new(-1, -1));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct InclusiveRange {
    /// First index, inclusive.
    pub start: i64,
    /// Last index, inclusive.
    pub end: i64,
}

impl InclusiveRange {
    /// `[-1, -1]`: the `head_range` that means "all heads".
    pub const ALL_HEADS: InclusiveRange = InclusiveRange { start: -1, end: -1 };

    /// A range from its two bounds.
    pub const fn new(start: i64, end: i64) -> InclusiveRange {
        InclusiveRange { start, end }
    }

    /// `0 <= start <= end`.
    pub const fn is_ordered_non_negative(&self) -> bool {
        0 <= self.start && self.start <= self.end
    }
}

/// The tensor dimensions of an identity (1 to [`MAX_SHAPE_DIMS`] integers).
pub type Shape = heapless::Vec<i64, MAX_SHAPE_DIMS>;

/// A validated Membrane v5 payload identity.
///
/// ```
/// use membrane_frame::{PayloadIdentity, Dtype};
/// let text = br#"{"dtype":"float16","head_range":[-1,-1],"layer_range":[0,31],"model_id":"llama-3-8b","model_revision":"","payload_hash":"2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824","shape":[1,32,8,128,64],"token_span":[0,127],"tokenizer_name":"llama-3-8b","tokenizer_revision":""}"#;
/// let identity = PayloadIdentity::parse(text)?;
/// assert_eq!(identity.dtype(), Dtype::Float16);
/// assert_eq!(identity.model_id().as_str(), Some("llama-3-8b"));
/// assert!(identity.is_canonical());
/// println!("{}", identity.fingerprint());
/// # Ok::<(), membrane_frame::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct PayloadIdentity<'a> {
    source: Option<&'a [u8]>,
    /// The parser proved `source` is the canonical serialisation followed by `padding`
    /// spaces (so the fingerprint is the digest of `source` without them). `false`
    /// means "not known", not "no".
    source_is_canonical: bool,
    /// Trailing spaces of a `source` proved canonical (SPEC §1.5); 0 otherwise.
    padding: u32,
    payload_hash: JsonStr<'a>,
    payload_hash_offset: Option<usize>,
    model_id: JsonStr<'a>,
    model_revision: JsonStr<'a>,
    tokenizer_name: JsonStr<'a>,
    tokenizer_revision: JsonStr<'a>,
    layer_range: InclusiveRange,
    head_range: InclusiveRange,
    token_span: InclusiveRange,
    dtype: Dtype,
    shape: Shape,
}

/// Equal when every field and the source text are equal; whether the parser happened to
/// prove the source canonical is a cached fact, not part of the value.
impl PartialEq for PayloadIdentity<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
            && self.payload_hash == other.payload_hash
            && self.payload_hash_offset == other.payload_hash_offset
            && self.model_id == other.model_id
            && self.model_revision == other.model_revision
            && self.tokenizer_name == other.tokenizer_name
            && self.tokenizer_revision == other.tokenizer_revision
            && self.layer_range == other.layer_range
            && self.head_range == other.head_range
            && self.token_span == other.token_span
            && self.dtype == other.dtype
            && self.shape == other.shape
    }
}

/// Plain Rust values for building an identity to write.
///
/// ```
/// use membrane_frame::{IdentityValues, InclusiveRange, Dtype, Sha256Digest};
/// let payload = [0u8; 64];
/// let hash = Sha256Digest::of(&payload).to_hex();
/// let identity = IdentityValues {
///     payload_hash: hash.as_str(),
///     model_id: "llama-3-8b",
///     model_revision: "",
///     tokenizer_name: "llama-3-8b",
///     tokenizer_revision: "",
///     layer_range: InclusiveRange::new(0, 31),
///     head_range: InclusiveRange::ALL_HEADS,
///     token_span: InclusiveRange::new(0, 127),
///     dtype: Dtype::Float16,
///     shape: &[1, 32, 8, 128, 64],
/// }
/// .build()?;
/// assert!(identity.is_canonical());
/// # Ok::<(), membrane_frame::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IdentityValues<'a> {
    /// Non-empty; by convention the hex SHA-256 of the payload.
    pub payload_hash: &'a str,
    /// Any text.
    pub model_id: &'a str,
    /// `""` = unpinned.
    pub model_revision: &'a str,
    /// Any text.
    pub tokenizer_name: &'a str,
    /// Any text.
    pub tokenizer_revision: &'a str,
    /// `0 <= start <= end`.
    pub layer_range: InclusiveRange,
    /// [`InclusiveRange::ALL_HEADS`] or `0 <= start <= end`.
    pub head_range: InclusiveRange,
    /// `0 <= start <= end`.
    pub token_span: InclusiveRange,
    /// Element type.
    pub dtype: Dtype,
    /// 1 to 16 dimensions.
    pub shape: &'a [i64],
}

impl<'a> IdentityValues<'a> {
    /// Validate the values (SPEC §2.2) and make an identity of them.
    pub fn build(&self) -> Result<PayloadIdentity<'a>, Error> {
        rules::check_payload_hash(&JsonStr::from_plain(self.payload_hash))?;
        rules::check_range("layer_range", self.layer_range)?;
        rules::check_head_range(self.head_range)?;
        rules::check_range("token_span", self.token_span)?;
        let shape = Shape::from_slice(self.shape).map_err(|_| field_error("shape", "more than 16 dimensions"))?;
        rules::check_shape(&shape)?;
        Ok(PayloadIdentity {
            source: None,
            source_is_canonical: false,
            padding: 0,
            payload_hash: JsonStr::from_plain(self.payload_hash),
            payload_hash_offset: None,
            model_id: JsonStr::from_plain(self.model_id),
            model_revision: JsonStr::from_plain(self.model_revision),
            tokenizer_name: JsonStr::from_plain(self.tokenizer_name),
            tokenizer_revision: JsonStr::from_plain(self.tokenizer_revision),
            layer_range: self.layer_range,
            head_range: self.head_range,
            token_span: self.token_span,
            dtype: self.dtype,
            shape,
        })
    }
}

pub(crate) fn field_error(field: &'static str, reason: &'static str) -> Error {
    Error::new(ErrorCode::IdentityField, reason).in_field(field)
}

/// The field rules of SPEC §2.2 that do not depend on JSON syntax.
pub(crate) mod rules {
    use super::{field_error, InclusiveRange, Shape};
    use crate::error::Error;
    use crate::json::JsonStr;

    pub(crate) fn check_payload_hash(value: &JsonStr<'_>) -> Result<(), Error> {
        if value.is_empty() {
            return Err(field_error("payload_hash", "payload_hash is empty"));
        }
        Ok(())
    }

    pub(crate) fn check_range(field: &'static str, range: InclusiveRange) -> Result<(), Error> {
        if range.start < 0 {
            return Err(field_error(field, "range start is negative"));
        }
        if range.start > range.end {
            return Err(field_error(field, "range start is after its end"));
        }
        Ok(())
    }

    pub(crate) fn check_head_range(range: InclusiveRange) -> Result<(), Error> {
        if range == InclusiveRange::ALL_HEADS {
            return Ok(());
        }
        if range.start < 0 || range.end < 0 {
            return Err(field_error("head_range", "head_range must be [-1, -1] or non-negative"));
        }
        check_range("head_range", range)
    }

    pub(crate) fn check_shape(shape: &Shape) -> Result<(), Error> {
        if shape.is_empty() {
            return Err(field_error("shape", "shape is empty"));
        }
        Ok(())
    }
}

impl<'a> PayloadIdentity<'a> {
    /// `payload_hash`: by convention the hex SHA-256 of the payload (checked only at the
    /// full verification level).
    pub fn payload_hash(&self) -> JsonStr<'a> {
        self.payload_hash
    }

    /// `model_id`.
    pub fn model_id(&self) -> JsonStr<'a> {
        self.model_id
    }

    /// `model_revision` (`""` = unpinned).
    pub fn model_revision(&self) -> JsonStr<'a> {
        self.model_revision
    }

    /// `tokenizer_name`.
    pub fn tokenizer_name(&self) -> JsonStr<'a> {
        self.tokenizer_name
    }

    /// `tokenizer_revision`.
    pub fn tokenizer_revision(&self) -> JsonStr<'a> {
        self.tokenizer_revision
    }

    /// `layer_range`, inclusive.
    pub fn layer_range(&self) -> InclusiveRange {
        self.layer_range
    }

    /// `head_range`, inclusive; [`InclusiveRange::ALL_HEADS`] for all heads.
    pub fn head_range(&self) -> InclusiveRange {
        self.head_range
    }

    /// `token_span`, inclusive.
    pub fn token_span(&self) -> InclusiveRange {
        self.token_span
    }

    /// `dtype`.
    pub fn dtype(&self) -> Dtype {
        self.dtype
    }

    /// `shape`.
    pub fn shape(&self) -> &[i64] {
        &self.shape
    }

    /// The JSON text this identity was parsed from (`None` for built identities).
    pub fn source(&self) -> Option<&'a [u8]> {
        self.source
    }

    /// Offset of the `payload_hash` string within the source text, when parsed.
    pub fn payload_hash_offset(&self) -> Option<usize> {
        self.payload_hash_offset
    }

    /// The same identity with another `payload_hash` (e.g. the digest of the payload a
    /// writer is about to frame). The result is no longer tied to a source text.
    pub fn with_payload_hash(mut self, payload_hash: &'a str) -> Result<PayloadIdentity<'a>, Error> {
        let value = JsonStr::from_plain(payload_hash);
        rules::check_payload_hash(&value)?;
        self.payload_hash = value;
        self.payload_hash_offset = None;
        self.source = None;
        self.source_is_canonical = false;
        self.padding = 0;
        Ok(self)
    }

    /// Byte count of the tensor `shape` × `dtype` describes, rounded up to whole bytes;
    /// `None` when a dimension is negative or the count overflows `u64`. A helper, not a
    /// reader rule (SPEC §2.1).
    pub fn tensor_bytes(&self) -> Option<u64> {
        let mut elements: u64 = 1;
        for &dim in self.shape.iter() {
            elements = elements.checked_mul(u64::try_from(dim).ok()?)?;
        }
        let bits = elements.checked_mul(u64::from(self.dtype.bits()))?;
        Some(bits.div_ceil(8))
    }
}

#[cfg(test)]
mod tests;
