//! Envelopes (SPEC §3): `check_envelope`, `FragmentMessage` (`from_bytes`, `to_bytes`
//! byte-identical to the Python nodes' `to_bytes`), and `fingerprint_compat`.
//!
//! A message keeps the envelope text it was read from (or the `to_bytes` text, when
//! built) and decodes a field when it is asked for.

use crate::buffer::{without_gil, Bytes};
use crate::errors::{self, OrRaise};
use crate::identity::{text, Identity};
use membrane::{CompatInputs, Consistency, ErrorCode, FragmentMessage, Hlc};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// Validate one envelope and return its SPEC §8 code name (`"ok"`,
/// `"envelope_field"`, ...). Never raises for bad text.
#[pyfunction]
pub fn check_envelope(py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<&'static str> {
    let text = text_bytes(text)?;
    let slice = text.as_slice();
    Ok(match without_gil(py, slice.len(), || FragmentMessage::parse(slice).map(|_| ())) {
        Ok(()) => "ok",
        Err(err) => err.code().name(),
    })
}

/// `str` as its UTF-8 bytes, anything else through the buffer protocol.
pub enum Text<'py> {
    Str(String),
    Buffer(Bytes<'py>),
}

impl Text<'_> {
    pub fn as_slice(&self) -> &[u8] {
        match self {
            Text::Str(text) => text.as_bytes(),
            Text::Buffer(bytes) => bytes.as_slice(),
        }
    }
}

pub fn text_bytes<'py>(object: &Bound<'py, PyAny>) -> PyResult<Text<'py>> {
    match object.extract::<String>() {
        Ok(text) => Ok(Text::Str(text)),
        Err(_) => Ok(Text::Buffer(Bytes::of(object)?)),
    }
}

/// A validated v5 envelope (SPEC §3.1).
#[pyclass(frozen, module = "membrane_frame", name = "FragmentMessage")]
pub struct Message {
    text: Box<[u8]>,
}

impl Message {
    fn parsed(&self, py: Python<'_>) -> PyResult<FragmentMessage<'_>> {
        FragmentMessage::parse(&self.text).or_raise(py)
    }

    fn emit(message: &FragmentMessage<'_>) -> Vec<u8> {
        let mut out = vec![0u8; message.encoded_len()];
        let written = message.write_into(&mut out).unwrap_or(0);
        out.truncate(written);
        out
    }
}

#[pymethods]
impl Message {
    /// Build a message; `fingerprint_compat=None` derives it from the identity
    /// (SPEC §3.3), `""` leaves it empty.
    #[new]
    #[pyo3(signature = (tenant_id, identity, payload_ref = None, payload_size = 0, ttl = 0.0, reuse_score = 0.0, version_id = 1, consistency = "strong", hlc = 0, fingerprint_compat = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        tenant_id: &str,
        identity: PyRef<'_, Identity>,
        payload_ref: Option<&str>,
        payload_size: i128,
        ttl: f64,
        reuse_score: f64,
        version_id: i128,
        consistency: &str,
        hlc: i128,
        fingerprint_compat: Option<&str>,
    ) -> PyResult<Message> {
        let payload_size =
            field_u64(py, "payload_size", payload_size, "payload_size must be an integer in 0..=2^64-1")?;
        let version_id = field_u64(py, "version_id", version_id, "version_id must be an integer in 1..=2^63-1")?;
        let hlc = field_u64(py, "hlc", hlc, "hlc must be an integer in 0..=2^64-1")?;
        let consistency = Consistency::from_name(consistency).ok_or_else(|| {
            errors::raise(
                py,
                ErrorCode::EnvelopeField,
                None,
                Some("consistency"),
                "consistency must be strong, quorum or eventual",
                format!("envelope_field (consistency): {consistency:?} is not strong, quorum or eventual"),
            )
        })?;
        let builder = FragmentMessage::builder(tenant_id, identity.parsed(py)?)
            .payload_ref(payload_ref)
            .payload_size(payload_size)
            .ttl(ttl)
            .reuse_score(reuse_score)
            .version_id(version_id)
            .consistency(consistency)
            .hlc(Hlc(hlc));
        let builder = match fingerprint_compat {
            None => builder.derive_fingerprint_compat(),
            Some(hex) => builder.fingerprint_compat_hex(hex),
        };
        let message = builder.build().or_raise(py)?;
        Ok(Message { text: Message::emit(&message).into_boxed_slice() })
    }

    /// Parse and validate envelope text (`bytes`, `str` or any buffer); raises
    /// `SchemaError` with the code, offset and field.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<Message> {
        let text = text_bytes(data)?;
        let slice = text.as_slice();
        without_gil(py, slice.len(), || FragmentMessage::parse(slice).map(|_| ())).or_raise(py)?;
        Ok(Message { text: slice.into() })
    }

    /// The v5 text exactly as the Python nodes' `to_bytes` writes it (SPEC §3.2).
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &Message::emit(&self.parsed(py)?)))
    }

    /// Whether the text it was read from is already the `to_bytes` text.
    #[getter]
    fn is_canonical(&self, py: Python<'_>) -> PyResult<bool> {
        Ok(self.parsed(py)?.is_canonical())
    }

    #[getter]
    fn schema_version(&self) -> u32 {
        5
    }

    #[getter]
    fn tenant_id(&self, py: Python<'_>) -> PyResult<String> {
        Ok(text(&self.parsed(py)?.tenant_id()))
    }

    #[getter]
    fn identity(&self, py: Python<'_>) -> PyResult<Identity> {
        Ok(Identity::keep(self.parsed(py)?.identity()))
    }

    #[getter]
    fn payload_ref(&self, py: Python<'_>) -> PyResult<Option<String>> {
        Ok(self.parsed(py)?.payload_ref().map(|value| text(&value)))
    }

    #[getter]
    fn payload_size(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.parsed(py)?.payload_size())
    }

    #[getter]
    fn ttl(&self, py: Python<'_>) -> PyResult<f64> {
        Ok(self.parsed(py)?.ttl())
    }

    #[getter]
    fn reuse_score(&self, py: Python<'_>) -> PyResult<f64> {
        Ok(self.parsed(py)?.reuse_score())
    }

    #[getter]
    fn version_id(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.parsed(py)?.version_id())
    }

    #[getter]
    fn consistency(&self, py: Python<'_>) -> PyResult<&'static str> {
        Ok(self.parsed(py)?.consistency().name())
    }

    #[getter]
    fn hlc(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.parsed(py)?.hlc().0)
    }

    /// The compatibility hash as hex, `""` when the envelope has none.
    #[getter]
    fn fingerprint_compat(&self, py: Python<'_>) -> PyResult<String> {
        Ok(self.parsed(py)?.fingerprint_compat().map_or_else(String::new, |digest| digest.to_hex().to_string()))
    }

    /// Pickling and `copy`: the message is rebuilt from its kept text.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyBytes>,))> {
        let restore = py.import("membrane_frame._native")?.getattr("_restore_message")?;
        Ok((restore, (PyBytes::new(py, &self.text),)))
    }

    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        match other.cast::<Message>() {
            Ok(other) => Ok(self.parsed(py)? == other.get().parsed(py)?),
            Err(_) => Ok(false),
        }
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let message = self.parsed(py)?;
        Ok(format!(
            "FragmentMessage(tenant_id={:?}, version_id={}, consistency={:?}, payload_size={})",
            text(&message.tenant_id()),
            message.version_id(),
            message.consistency().name(),
            message.payload_size()
        ))
    }
}

/// Check a tenant id by the envelope's rule (SPEC §3.1); raises `SchemaError`
/// (`envelope_field`, a `ValueError`) naming what is wrong.
#[pyfunction]
pub fn check_tenant_id(py: Python<'_>, tenant_id: &str) -> PyResult<()> {
    membrane::envelope::check_tenant_id(tenant_id).or_raise(py)
}

/// A Python integer for an envelope field that is a `u64` (its own rule, such as
/// `version_id >= 1`, is the builder's): out of that range is `envelope_field`.
fn field_u64(py: Python<'_>, field: &str, value: i128, reason: &str) -> PyResult<u64> {
    u64::try_from(value).map_err(|_| {
        errors::raise(
            py,
            ErrorCode::EnvelopeField,
            None,
            Some(field),
            reason,
            format!("envelope_field ({field}): {value} is out of range: {reason}"),
        )
    })
}

/// Unpickle a message from the text `__reduce__` kept (validated again).
#[pyfunction]
pub fn _restore_message(py: Python<'_>, text: &[u8]) -> PyResult<Message> {
    FragmentMessage::parse(text).or_raise(py)?;
    Ok(Message { text: text.into() })
}

/// The model-compatibility hash (SPEC §3.3) as 64 hex digits. The values follow the
/// Python implementation's `ModelCompatibilityFingerprint` rules: `model_id`,
/// `tokenizer_name` and `dtype` not empty and layout versions `>= 0`, else
/// `UsageError` (a `ValueError`).
#[pyfunction]
#[pyo3(signature = (model_id, model_revision, tokenizer_name, tokenizer_revision, dtype, config_hash = "", model_layout_version = 0, tokenizer_layout_version = 0))]
#[allow(clippy::too_many_arguments)]
pub fn fingerprint_compat(
    py: Python<'_>,
    model_id: &str,
    model_revision: &str,
    tokenizer_name: &str,
    tokenizer_revision: &str,
    dtype: &str,
    config_hash: &str,
    model_layout_version: i64,
    tokenizer_layout_version: i64,
) -> PyResult<String> {
    let inputs = CompatInputs {
        model_id,
        model_revision,
        model_layout_version,
        tokenizer_name,
        tokenizer_revision,
        tokenizer_layout_version,
        dtype,
        config_hash,
    };
    inputs.check().or_raise(py)?;
    Ok(inputs.fingerprint().to_hex().to_string())
}
