//! Which fields of two identities differ: how a reader checks that a frame was made for
//! the model it serves, in one call and without copying a string.

use super::{PayloadIdentity, FIELD_NAMES};
use core::ops::BitOr;

/// A set of identity fields: bit `i` is field `i` of [`FIELD_NAMES`] (the C ABI's
/// `MBR_FIELD_*` numbers).
///
/// ```
/// use membrane_frame::identity::FieldSet;
/// let model = FieldSet::MODEL_ID | FieldSet::MODEL_REVISION;
/// assert!(model.contains(FieldSet::MODEL_ID) && !model.contains(FieldSet::SHAPE));
/// assert_eq!(FieldSet::from_bits(model.bits()), Some(model));
/// assert_eq!(FieldSet::from_bits(1 << 10), None);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct FieldSet(u16);

impl FieldSet {
    /// No field.
    pub const NONE: FieldSet = FieldSet(0);
    /// `payload_hash`.
    pub const PAYLOAD_HASH: FieldSet = FieldSet(1);
    /// `model_id`.
    pub const MODEL_ID: FieldSet = FieldSet(1 << 1);
    /// `model_revision`.
    pub const MODEL_REVISION: FieldSet = FieldSet(1 << 2);
    /// `tokenizer_name`.
    pub const TOKENIZER_NAME: FieldSet = FieldSet(1 << 3);
    /// `tokenizer_revision`.
    pub const TOKENIZER_REVISION: FieldSet = FieldSet(1 << 4);
    /// `layer_range`.
    pub const LAYER_RANGE: FieldSet = FieldSet(1 << 5);
    /// `head_range`.
    pub const HEAD_RANGE: FieldSet = FieldSet(1 << 6);
    /// `token_span`.
    pub const TOKEN_SPAN: FieldSet = FieldSet(1 << 7);
    /// `dtype`.
    pub const DTYPE: FieldSet = FieldSet(1 << 8);
    /// `shape`.
    pub const SHAPE: FieldSet = FieldSet(1 << 9);
    /// Every field.
    pub const ALL: FieldSet = FieldSet((1 << FIELD_NAMES.len()) - 1);
    /// What decides whether a cached tensor fits a loaded model: the model and tokenizer
    /// names and revisions, and the dtype.
    pub const MODEL: FieldSet = Self::MODEL_ID
        .union(Self::MODEL_REVISION)
        .union(Self::TOKENIZER_NAME)
        .union(Self::TOKENIZER_REVISION)
        .union(Self::DTYPE);

    /// The set with these bits, or `None` when a bit names no field.
    pub const fn from_bits(bits: u32) -> Option<FieldSet> {
        if bits & !(Self::ALL.0 as u32) != 0 {
            return None;
        }
        Some(FieldSet(bits as u16))
    }

    /// The bits of the set.
    pub const fn bits(self) -> u32 {
        self.0 as u32
    }

    /// The fields of either set (also `a | b`).
    pub const fn union(self, other: FieldSet) -> FieldSet {
        FieldSet(self.0 | other.0)
    }

    /// Whether every field of `other` is in the set.
    pub const fn contains(self, other: FieldSet) -> bool {
        self.0 & other.0 == other.0
    }

    /// Whether the set is empty.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The name of the first field in the set (declaration order), if any.
    pub fn first_name(self) -> Option<&'static str> {
        FIELD_NAMES.get(self.0.trailing_zeros() as usize).copied()
    }
}

impl BitOr for FieldSet {
    type Output = FieldSet;
    fn bitor(self, other: FieldSet) -> FieldSet {
        self.union(other)
    }
}

impl PayloadIdentity<'_> {
    /// The fields among `fields` whose values differ from `expected`'s: strings compared
    /// decoded (any JSON spelling of the same text matches), ranges, dtype and shape by
    /// value. Empty when the two agree on every field asked about.
    ///
    /// ```
    /// use membrane_frame::identity::FieldSet;
    /// use membrane_frame::{Dtype, IdentityValues, InclusiveRange};
    /// let hash = "0".repeat(64);
    /// let values = IdentityValues {
    ///     payload_hash: &hash,
    ///     model_id: "llama-3-8b",
    ///     model_revision: "2024-05",
    ///     tokenizer_name: "llama-3-8b",
    ///     tokenizer_revision: "",
    ///     layer_range: InclusiveRange::new(0, 31),
    ///     head_range: InclusiveRange::ALL_HEADS,
    ///     token_span: InclusiveRange::new(0, 99),
    ///     dtype: Dtype::Float16,
    ///     shape: &[2, 32, 8, 100, 128],
    /// };
    /// let loaded = values.build().unwrap();
    /// let frame = IdentityValues { model_revision: "2024-06", token_span: InclusiveRange::new(100, 199), ..values }
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(frame.differing_fields(&loaded, FieldSet::MODEL), FieldSet::MODEL_REVISION);
    /// assert_eq!(frame.differing_fields(&loaded, FieldSet::DTYPE | FieldSet::SHAPE), FieldSet::NONE);
    /// ```
    pub fn differing_fields(&self, expected: &PayloadIdentity<'_>, fields: FieldSet) -> FieldSet {
        let mut out = FieldSet::NONE;
        // Only the fields asked about are compared.
        let mut compare = |field: FieldSet, differs: &dyn Fn() -> bool| {
            if fields.contains(field) && differs() {
                out = out | field;
            }
        };
        compare(FieldSet::PAYLOAD_HASH, &|| !self.payload_hash.eq_decoded(&expected.payload_hash));
        compare(FieldSet::MODEL_ID, &|| !self.model_id.eq_decoded(&expected.model_id));
        compare(FieldSet::MODEL_REVISION, &|| !self.model_revision.eq_decoded(&expected.model_revision));
        compare(FieldSet::TOKENIZER_NAME, &|| !self.tokenizer_name.eq_decoded(&expected.tokenizer_name));
        compare(FieldSet::TOKENIZER_REVISION, &|| !self.tokenizer_revision.eq_decoded(&expected.tokenizer_revision));
        compare(FieldSet::LAYER_RANGE, &|| self.layer_range != expected.layer_range);
        compare(FieldSet::HEAD_RANGE, &|| self.head_range != expected.head_range);
        compare(FieldSet::TOKEN_SPAN, &|| self.token_span != expected.token_span);
        compare(FieldSet::DTYPE, &|| self.dtype != expected.dtype);
        compare(FieldSet::SHAPE, &|| self.shape() != expected.shape());
        out
    }
}
