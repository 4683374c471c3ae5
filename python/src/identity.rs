//! `PayloadIdentity`: the ten identity fields of SPEC §2.
//!
//! The object keeps the identity's strict JSON (as stored in the frame or envelope, or
//! the canonical form when built from values; at most the identity limit, 64 KiB by
//! default) and decodes a field when it is asked for, so reading a frame costs one small
//! copy and no Python objects beyond the ones used.

use crate::errors::{self, OrRaise};
use membrane::json::JsonStr;
use membrane::{Dtype, ErrorCode, IdentityValues, InclusiveRange, PayloadIdentity};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};

/// The ten identity fields (SPEC §2). Build one from values, `from_dict`, or
/// `from_json`; frames and envelopes hand them out.
#[pyclass(frozen, module = "membrane_frame", name = "PayloadIdentity")]
pub struct Identity {
    /// Strict JSON that passed the identity rules.
    json: Box<[u8]>,
}

/// A JSON string as Python text.
pub fn text(value: &JsonStr<'_>) -> String {
    match value.as_str() {
        Some(plain) => plain.to_owned(),
        None => value.chars().collect(),
    }
}

/// The Python string of a JSON string: straight from the text when it holds no escape.
pub fn py_text<'py>(py: Python<'py>, value: &JsonStr<'_>) -> Bound<'py, PyString> {
    match value.as_str() {
        Some(plain) => PyString::new(py, plain),
        None => PyString::new(py, &text(value)),
    }
}

impl Identity {
    /// Keep an identity the library has validated: its stored text when it has one,
    /// else its canonical form.
    pub fn keep(identity: &PayloadIdentity<'_>) -> Identity {
        let json = match identity.source() {
            Some(source) => source.into(),
            None => canonical(identity).into_boxed_slice(),
        };
        Identity { json }
    }

    /// The kept text.
    pub fn into_json(self) -> Box<[u8]> {
        self.json
    }

    /// An identity from text the library has already validated (a frame's identity).
    pub fn from_validated(json: Box<[u8]>) -> Identity {
        Identity { json }
    }

    /// The identity, parsed again from the kept text (it passed the rules before, so
    /// this cannot fail unless memory is corrupted; it raises rather than panics).
    pub fn parsed(&self, py: Python<'_>) -> PyResult<PayloadIdentity<'_>> {
        PayloadIdentity::parse(&self.json).or_raise(py)
    }
}

fn canonical(identity: &PayloadIdentity<'_>) -> Vec<u8> {
    let mut out = vec![0u8; identity.canonical_len()];
    let written = identity.write_canonical_into(&mut out).unwrap_or(0);
    out.truncate(written);
    out
}

/// `[start, end]` (any sequence of two integers) as a range.
fn pair(py: Python<'_>, field: &str, values: &[i64]) -> PyResult<InclusiveRange> {
    match values {
        [start, end] => Ok(InclusiveRange::new(*start, *end)),
        _ => Err(errors::raise(
            py,
            ErrorCode::IdentityField,
            None,
            Some(field),
            "a range is [start, end]",
            format!("identity_field ({field}): {} values where [start, end] is expected", values.len()),
        )),
    }
}

fn dtype(py: Python<'_>, name: &str) -> PyResult<Dtype> {
    Dtype::from_name(name).ok_or_else(|| {
        errors::raise(
            py,
            ErrorCode::IdentityField,
            None,
            Some("dtype"),
            "not a known dtype name",
            format!("identity_field (dtype): {name:?} is not a known dtype name"),
        )
    })
}

#[pymethods]
impl Identity {
    /// Build an identity from its ten fields (the rules of SPEC §2.2 apply; the result
    /// is stored in canonical form).
    #[new]
    #[pyo3(signature = (payload_hash, model_id, model_revision, tokenizer_name, tokenizer_revision, layer_range, head_range, token_span, dtype, shape))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        payload_hash: &str,
        model_id: &str,
        model_revision: &str,
        tokenizer_name: &str,
        tokenizer_revision: &str,
        layer_range: Vec<i64>,
        head_range: Vec<i64>,
        token_span: Vec<i64>,
        dtype: &str,
        shape: Vec<i64>,
    ) -> PyResult<Identity> {
        let values = IdentityValues {
            payload_hash,
            model_id,
            model_revision,
            tokenizer_name,
            tokenizer_revision,
            layer_range: pair(py, "layer_range", &layer_range)?,
            head_range: pair(py, "head_range", &head_range)?,
            token_span: pair(py, "token_span", &token_span)?,
            dtype: self::dtype(py, dtype)?,
            shape: &shape,
        };
        let identity = values.build().or_raise(py)?;
        Ok(Identity { json: canonical(&identity).into_boxed_slice() })
    }

    /// An identity from a dict with the ten keys (as `json.loads` gives it, or as
    /// `to_dict` returns it).
    #[staticmethod]
    fn from_dict(py: Python<'_>, values: &Bound<'_, PyDict>) -> PyResult<Identity> {
        let get = |key: &str| -> PyResult<Bound<'_, PyAny>> {
            values.get_item(key)?.ok_or_else(|| {
                errors::raise(
                    py,
                    ErrorCode::IdentityField,
                    None,
                    Some(key),
                    "missing identity field",
                    format!("identity_field ({key}): missing"),
                )
            })
        };
        Identity::new(
            py,
            &get("payload_hash")?.extract::<String>()?,
            &get("model_id")?.extract::<String>()?,
            &get("model_revision")?.extract::<String>()?,
            &get("tokenizer_name")?.extract::<String>()?,
            &get("tokenizer_revision")?.extract::<String>()?,
            get("layer_range")?.extract()?,
            get("head_range")?.extract()?,
            get("token_span")?.extract()?,
            &get("dtype")?.extract::<String>()?,
            get("shape")?.extract()?,
        )
    }

    /// An identity from its JSON text in any strict spelling (SPEC §4); the text is
    /// kept as given (`json`), and `canonical_json()` gives the canonical form.
    #[staticmethod]
    fn from_json(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<Identity> {
        let bytes = crate::buffer::Bytes::of(data)?;
        let identity = PayloadIdentity::parse(bytes.as_slice()).or_raise(py)?;
        Ok(Identity::keep(&identity))
    }

    /// The ten fields as a dict of str, int and lists (ranges as `[start, end]`).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let identity = self.parsed(py)?;
        let dict = PyDict::new(py);
        dict.set_item("payload_hash", text(&identity.payload_hash()))?;
        dict.set_item("model_id", text(&identity.model_id()))?;
        dict.set_item("model_revision", text(&identity.model_revision()))?;
        dict.set_item("tokenizer_name", text(&identity.tokenizer_name()))?;
        dict.set_item("tokenizer_revision", text(&identity.tokenizer_revision()))?;
        for (key, value) in [
            ("layer_range", identity.layer_range()),
            ("head_range", identity.head_range()),
            ("token_span", identity.token_span()),
        ] {
            dict.set_item(key, PyList::new(py, [value.start, value.end])?)?;
        }
        dict.set_item("dtype", identity.dtype().name())?;
        dict.set_item("shape", PyList::new(py, identity.shape())?)?;
        Ok(dict)
    }

    /// The canonical JSON (SPEC §2.3): the bytes a v5 writer stores.
    fn canonical_json<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let identity = self.parsed(py)?;
        Ok(PyBytes::new(py, &canonical(&identity)))
    }

    /// The JSON text as stored (or canonical, when built from values).
    #[getter]
    fn json<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.json)
    }

    /// Whether the stored text is the canonical form (followed by nothing but the
    /// spaces of an aligned frame's padding, SPEC §1.5).
    #[getter]
    fn is_canonical(&self, py: Python<'_>) -> PyResult<bool> {
        Ok(self.parsed(py)?.is_canonical())
    }

    /// SHA-256 of the canonical JSON, 64 lower-case hex digits (SPEC §2.4).
    fn fingerprint(&self, py: Python<'_>) -> PyResult<String> {
        Ok(self.parsed(py)?.fingerprint().to_hex().to_string())
    }

    /// The same identity with another `payload_hash`.
    fn with_payload_hash(&self, py: Python<'_>, payload_hash: &str) -> PyResult<Identity> {
        let identity = self.parsed(py)?.with_payload_hash(payload_hash).or_raise(py)?;
        Ok(Identity { json: canonical(&identity).into_boxed_slice() })
    }

    #[getter]
    fn payload_hash(&self, py: Python<'_>) -> PyResult<String> {
        Ok(text(&self.parsed(py)?.payload_hash()))
    }

    #[getter]
    fn model_id(&self, py: Python<'_>) -> PyResult<String> {
        Ok(text(&self.parsed(py)?.model_id()))
    }

    #[getter]
    fn model_revision(&self, py: Python<'_>) -> PyResult<String> {
        Ok(text(&self.parsed(py)?.model_revision()))
    }

    #[getter]
    fn tokenizer_name(&self, py: Python<'_>) -> PyResult<String> {
        Ok(text(&self.parsed(py)?.tokenizer_name()))
    }

    #[getter]
    fn tokenizer_revision(&self, py: Python<'_>) -> PyResult<String> {
        Ok(text(&self.parsed(py)?.tokenizer_revision()))
    }

    #[getter]
    fn layer_range(&self, py: Python<'_>) -> PyResult<(i64, i64)> {
        let value = self.parsed(py)?.layer_range();
        Ok((value.start, value.end))
    }

    #[getter]
    fn head_range(&self, py: Python<'_>) -> PyResult<(i64, i64)> {
        let value = self.parsed(py)?.head_range();
        Ok((value.start, value.end))
    }

    #[getter]
    fn token_span(&self, py: Python<'_>) -> PyResult<(i64, i64)> {
        let value = self.parsed(py)?.token_span();
        Ok((value.start, value.end))
    }

    #[getter]
    fn dtype(&self, py: Python<'_>) -> PyResult<&'static str> {
        Ok(self.parsed(py)?.dtype().name())
    }

    /// The dimensions as a tuple, like the ranges (and the Python implementation's).
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.parsed(py)?.shape())
    }

    /// Bytes of the tensor `shape` x `dtype` describes (None if a dimension is negative).
    #[getter]
    fn tensor_bytes(&self, py: Python<'_>) -> PyResult<Option<u64>> {
        Ok(self.parsed(py)?.tensor_bytes())
    }

    /// Equal when the canonical forms are (the same fingerprint).
    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        match other.cast::<Identity>() {
            Ok(other) => Ok(self.fingerprint(py)? == other.get().fingerprint(py)?),
            Err(_) => Ok(false),
        }
    }

    fn __hash__(&self, py: Python<'_>) -> PyResult<u64> {
        let identity = self.parsed(py)?;
        Ok(u64::from_le_bytes(identity.fingerprint().trailer()))
    }

    /// Pickling and `copy`: the identity is rebuilt from its kept text.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyBytes>,))> {
        let restore = py.import("membrane_frame._native")?.getattr("_restore_identity")?;
        Ok((restore, (PyBytes::new(py, &self.json),)))
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let identity = self.parsed(py)?;
        Ok(format!(
            "PayloadIdentity(model_id={:?}, layer_range={:?}, token_span={:?}, dtype={:?}, fingerprint={:?})",
            text(&identity.model_id()),
            (identity.layer_range().start, identity.layer_range().end),
            (identity.token_span().start, identity.token_span().end),
            identity.dtype().name(),
            identity.fingerprint().to_hex().to_string()
        ))
    }
}

/// Unpickle an identity from the text `__reduce__` kept (checked again: a pickle is
/// input like any other).
#[pyfunction]
pub fn _restore_identity(py: Python<'_>, json: &[u8]) -> PyResult<Identity> {
    let identity = PayloadIdentity::parse(json).or_raise(py)?;
    Ok(Identity::keep(&identity))
}
