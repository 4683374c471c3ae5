//! `fingerprint_compat`, the model-compatibility hash (SPEC §3.3).

use crate::digest::{Sha256Digest, Sha256Hasher};
use crate::error::Error;
use crate::identity::{write_i64, PayloadIdentity};
use crate::json::{write_escaped, JsonStr};
use crate::sink::ByteSink;

/// What decides whether two fragments come from compatible models.
///
/// The hash is the SHA-256 of the compact, key-sorted, ASCII JSON of these eight
/// values — the same rules as the canonical identity (SPEC §2.3).
///
/// ```
/// use membrane_frame::envelope::CompatInputs;
/// let inputs = CompatInputs {
///     model_id: "llama-3-8b",
///     model_revision: "abc123",
///     model_layout_version: 0,
///     tokenizer_name: "llama-3-8b",
///     tokenizer_revision: "",
///     tokenizer_layout_version: 0,
///     dtype: "float16",
///     config_hash: "",
/// };
/// let mut json = Vec::new();
/// inputs.write_json(&mut membrane_frame::IoSink(&mut json)).unwrap();
/// assert_eq!(json, br#"{"config_hash":"","dtype":"float16","model_id":"llama-3-8b","model_layout_version":0,"model_revision":"abc123","tokenizer_layout_version":0,"tokenizer_name":"llama-3-8b","tokenizer_revision":""}"#);
/// assert_eq!(inputs.fingerprint(), membrane_frame::Sha256Digest::of(&json));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompatInputs<'a> {
    /// The model's id.
    pub model_id: &'a str,
    /// The model's revision (`""` = unpinned).
    pub model_revision: &'a str,
    /// Version of the model's KV layout (0 when derived from an identity).
    pub model_layout_version: i64,
    /// The tokenizer's name.
    pub tokenizer_name: &'a str,
    /// The tokenizer's revision.
    pub tokenizer_revision: &'a str,
    /// Version of the tokenizer's layout (0 when derived from an identity).
    pub tokenizer_layout_version: i64,
    /// Element type name, e.g. `float16`.
    pub dtype: &'a str,
    /// Hash of the model configuration (`""` when derived from an identity).
    pub config_hash: &'a str,
}

/// The same values as JSON strings (so an identity's escaped strings need no copy).
struct CompatJson<'a> {
    model_id: JsonStr<'a>,
    model_revision: JsonStr<'a>,
    model_layout_version: i64,
    tokenizer_name: JsonStr<'a>,
    tokenizer_revision: JsonStr<'a>,
    tokenizer_layout_version: i64,
    dtype: JsonStr<'a>,
    config_hash: JsonStr<'a>,
}

impl CompatJson<'_> {
    fn write<S: ByteSink + ?Sized>(&self, sink: &mut S) -> Result<(), S::Error> {
        sink.write_bytes(b"{\"config_hash\":")?;
        write_escaped(sink, &self.config_hash)?;
        sink.write_bytes(b",\"dtype\":")?;
        write_escaped(sink, &self.dtype)?;
        sink.write_bytes(b",\"model_id\":")?;
        write_escaped(sink, &self.model_id)?;
        sink.write_bytes(b",\"model_layout_version\":")?;
        write_i64(sink, self.model_layout_version)?;
        sink.write_bytes(b",\"model_revision\":")?;
        write_escaped(sink, &self.model_revision)?;
        sink.write_bytes(b",\"tokenizer_layout_version\":")?;
        write_i64(sink, self.tokenizer_layout_version)?;
        sink.write_bytes(b",\"tokenizer_name\":")?;
        write_escaped(sink, &self.tokenizer_name)?;
        sink.write_bytes(b",\"tokenizer_revision\":")?;
        write_escaped(sink, &self.tokenizer_revision)?;
        sink.write_bytes(b"}")
    }

    fn fingerprint(&self) -> Sha256Digest {
        let mut hasher = Sha256Hasher::new();
        let Ok(()) = self.write(&mut hasher);
        hasher.finish()
    }
}

impl<'a> CompatInputs<'a> {
    fn as_json(&self) -> CompatJson<'a> {
        CompatJson {
            model_id: JsonStr::from_plain(self.model_id),
            model_revision: JsonStr::from_plain(self.model_revision),
            model_layout_version: self.model_layout_version,
            tokenizer_name: JsonStr::from_plain(self.tokenizer_name),
            tokenizer_revision: JsonStr::from_plain(self.tokenizer_revision),
            tokenizer_layout_version: self.tokenizer_layout_version,
            dtype: JsonStr::from_plain(self.dtype),
            config_hash: JsonStr::from_plain(self.config_hash),
        }
    }

    /// The rules of the Python implementation's `ModelCompatibilityFingerprint`, for
    /// callers that build these values by hand: `model_id`, `tokenizer_name` and `dtype`
    /// not empty, layout versions `>= 0` (`invalid_argument` naming the field). The hash
    /// itself is defined for any values: one derived from an identity (SPEC §3.3) may
    /// have an empty `model_id`.
    ///
    /// ```
    /// use membrane_frame::envelope::CompatInputs;
    /// let inputs = CompatInputs {
    ///     model_id: "m", model_revision: "", model_layout_version: -1,
    ///     tokenizer_name: "m", tokenizer_revision: "", tokenizer_layout_version: 0,
    ///     dtype: "float16", config_hash: "",
    /// };
    /// assert_eq!(inputs.check().unwrap_err().field(), Some("model_layout_version"));
    /// ```
    pub fn check(&self) -> Result<(), Error> {
        let empty = [("model_id", self.model_id), ("tokenizer_name", self.tokenizer_name), ("dtype", self.dtype)]
            .into_iter()
            .find(|(_, value)| value.is_empty());
        if let Some((field, _)) = empty {
            return Err(Error::invalid_argument(field, "must be a non-empty string"));
        }
        let negative = [
            ("model_layout_version", self.model_layout_version),
            ("tokenizer_layout_version", self.tokenizer_layout_version),
        ]
        .into_iter()
        .find(|(_, value)| *value < 0);
        match negative {
            Some((field, _)) => Err(Error::invalid_argument(field, "layout versions must be non-negative")),
            None => Ok(()),
        }
    }

    /// Write the JSON text that is hashed (compact, keys sorted, ASCII).
    pub fn write_json<S: ByteSink + ?Sized>(&self, sink: &mut S) -> Result<(), S::Error> {
        self.as_json().write(sink)
    }

    /// The compatibility hash; its [`to_hex`](Sha256Digest::to_hex) is the envelope's
    /// `fingerprint_compat`.
    pub fn fingerprint(&self) -> Sha256Digest {
        self.as_json().fingerprint()
    }
}

impl PayloadIdentity<'_> {
    /// The compatibility hash derived from this identity (SPEC §3.3): its model and
    /// tokenizer names and revisions and its dtype, with layout versions 0 and
    /// `config_hash` `""`. This is what migration writes into envelopes that have no
    /// `fingerprint_compat` (SPEC §7.2).
    ///
    /// ```
    /// use membrane_frame::{envelope::CompatInputs, Frame};
    /// # let bytes = membrane_frame::example_frame();
    /// let frame = Frame::parse(&bytes)?;
    /// let identity = frame.identity().unwrap();
    /// let explicit = CompatInputs {
    ///     model_id: "llama-3-8b", model_revision: "", model_layout_version: 0,
    ///     tokenizer_name: "llama-3-8b", tokenizer_revision: "", tokenizer_layout_version: 0,
    ///     dtype: "float16", config_hash: "",
    /// };
    /// assert_eq!(identity.fingerprint_compat(), explicit.fingerprint());
    /// # Ok::<(), membrane_frame::Error>(())
    /// ```
    pub fn fingerprint_compat(&self) -> Sha256Digest {
        CompatJson {
            model_id: self.model_id(),
            model_revision: self.model_revision(),
            model_layout_version: 0,
            tokenizer_name: self.tokenizer_name(),
            tokenizer_revision: self.tokenizer_revision(),
            tokenizer_layout_version: 0,
            dtype: JsonStr::from_plain(self.dtype().name()),
            config_hash: JsonStr::from_plain(""),
        }
        .fingerprint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: CompatInputs<'static> = CompatInputs {
        model_id: "m",
        model_revision: "",
        model_layout_version: 0,
        tokenizer_name: "t",
        tokenizer_revision: "",
        tokenizer_layout_version: 0,
        dtype: "float16",
        config_hash: "",
    };

    /// The field `check` names, with the code it must have.
    fn field_of(inputs: CompatInputs<'_>) -> Option<&'static str> {
        inputs.check().err().and_then(|err| {
            assert_eq!(err.code(), crate::ErrorCode::InvalidArgument);
            err.field()
        })
    }

    #[test]
    fn check_names_the_field_that_breaks_a_rule() {
        // Empty revisions and config hash, and layout versions of 0, are all allowed.
        assert_eq!(field_of(GOOD), None);
        assert_eq!(field_of(CompatInputs { model_layout_version: 7, tokenizer_layout_version: 1, ..GOOD }), None);
        assert_eq!(field_of(CompatInputs { model_id: "", ..GOOD }), Some("model_id"));
        assert_eq!(field_of(CompatInputs { tokenizer_name: "", ..GOOD }), Some("tokenizer_name"));
        assert_eq!(field_of(CompatInputs { dtype: "", ..GOOD }), Some("dtype"));
        assert_eq!(field_of(CompatInputs { model_layout_version: -1, ..GOOD }), Some("model_layout_version"));
        assert_eq!(field_of(CompatInputs { tokenizer_layout_version: -1, ..GOOD }), Some("tokenizer_layout_version"));
    }
}
