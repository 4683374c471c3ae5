//! Frames (SPEC §1): `check_frame`, `parse_canonical`, `Frame.parse`, the writers
//! `canonicalize` and `frame_parts`, and `StreamVerifier`.
//!
//! The caller's buffer is read in place with the GIL released; a payload comes back as
//! a `memoryview` into that buffer (which it keeps alive), never as a copy.

use crate::buffer::{without_gil, Bytes};
use crate::errors::OrRaise;
use crate::identity::Identity;
use membrane::{
    encode_frame_with, Frame, FrameEncoder, ParseMode, PayloadAlignment, ReadOptions, Sha256Digest, StreamStatus,
    StreamVerifier, VerifyLevel, WriteOptions,
};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyMemoryView, PySlice};
use std::ptr::NonNull;
use std::sync::OnceLock;

/// A verification level argument: `"layout" | "identity" | "trailer" | "full"`.
///
/// Compared first by identity with the interned names (a literal in Python code is the
/// interned string), which costs nothing; anything else is read as text. (Reading a
/// `str` argument as Rust text costs ~100 ns under the 3.9 stable ABI.)
#[derive(Clone, Copy)]
pub struct Level(pub VerifyLevel);

impl Level {
    pub const TRAILER: Level = Level(VerifyLevel::Trailer);
}

impl<'a, 'py> FromPyObject<'a, 'py> for Level {
    type Error = PyErr;

    fn extract(object: Borrowed<'a, 'py, PyAny>) -> PyResult<Level> {
        let py = object.py();
        for (name, level) in [
            (intern!(py, "trailer"), VerifyLevel::Trailer),
            (intern!(py, "identity"), VerifyLevel::Identity),
            (intern!(py, "layout"), VerifyLevel::Layout),
            (intern!(py, "full"), VerifyLevel::Full),
        ] {
            if object.is(name) {
                return Ok(Level(level));
            }
        }
        let name: String = object.extract()?;
        level(&name).map(Level)
    }
}

/// `"layout" | "identity" | "trailer" | "full"` as the library's level.
pub fn level(name: &str) -> PyResult<VerifyLevel> {
    VerifyLevel::from_name(name).ok_or_else(|| {
        PyValueError::new_err(format!("level must be \"layout\", \"identity\", \"trailer\" or \"full\", not {name:?}"))
    })
}

fn options(level: Level, prefix: bool) -> ReadOptions {
    let mode = if prefix { ParseMode::Prefix } else { ParseMode::Exact };
    ReadOptions::new().level(level.0).mode(mode)
}

/// `buf[start:end]` as a byte-wise memoryview into the caller's object.
///
/// The slice is made by calling `slice(start, end)`: PyO3 0.28's `PySlice::new` leaks
/// its two bound integers (it hands new references to `PySlice_New`, which does not
/// take them over), which the no-leak test caught.
fn view<'py>(buf: &Bound<'py, PyAny>, start: usize, end: usize) -> PyResult<Bound<'py, PyAny>> {
    let bytes = PyMemoryView::from(buf)?.call_method1("cast", ("B",))?;
    let range = buf.py().get_type::<PySlice>().call1((start, end))?;
    bytes.get_item(range)
}

/// Verify one frame (exact mode) and return its SPEC §8 code name: `"ok"`,
/// `"trailer_mismatch"`, ... Never raises for bad bytes.
#[pyfunction]
#[pyo3(signature = (buf, level = Level::TRAILER))]
pub fn check_frame(py: Python<'_>, buf: &Bound<'_, PyAny>, level: Level) -> PyResult<&'static str> {
    let options = options(level, false);
    let bytes = Bytes::of(buf)?;
    let slice = bytes.as_slice();
    let verdict = without_gil(py, slice.len(), || Frame::parse_with(slice, &options).map(|_| ()));
    Ok(match verdict {
        Ok(()) => "ok",
        Err(err) => err.code().name(),
    })
}

/// A verified frame: its identity, a view of its payload, and what was checked.
#[pyclass(frozen, module = "membrane_frame", name = "Frame")]
pub struct PyFrame {
    /// The validated identity text (identity level and above); the `PayloadIdentity`
    /// object is made from it on first use.
    identity_json: Option<IdentityText>,
    identity: OnceLock<Py<Identity>>,
    /// The caller's buffer (None for a streamed frame); the payload view is made from
    /// it when asked for.
    source: Option<Py<PyAny>>,
    #[pyo3(get)]
    frame_len: u64,
    #[pyo3(get)]
    payload_len: u64,
    #[pyo3(get)]
    identity_len: u64,
    /// Offset of the payload in the frame, `22 + identity_len` (SPEC §1.5).
    #[pyo3(get)]
    payload_offset: u64,
    /// Spaces after a canonical identity, put there by an aligned writer (SPEC §1.5);
    /// 0 when the identity is not canonical or was not read (layout level).
    #[pyo3(get)]
    padding: usize,
    #[pyo3(get)]
    level: &'static str,
    trailer: [u8; 8],
    digest: Option<Sha256Digest>,
}

/// Where a parsed frame's identity text is kept until its `PayloadIdentity` is asked for.
enum IdentityText {
    /// A copy (the caller's buffer may change after the parse: `bytearray`, `mmap`, ...).
    Copied(Box<[u8]>),
    /// In the caller's `bytes`, which cannot change: nothing copied until used.
    InBytes { start: usize, len: usize },
}

impl IdentityText {
    /// The identity text `json` of a frame parsed from `buf`, which ends just before
    /// `payload_start`.
    fn of(buf: &Bound<'_, PyAny>, json: &[u8], payload_start: usize) -> IdentityText {
        let start = payload_start.saturating_sub(8 + json.len());
        if buf.is_exact_instance_of::<PyBytes>() {
            IdentityText::InBytes { start, len: json.len() }
        } else {
            IdentityText::Copied(json.into())
        }
    }
}

#[pymethods]
impl PyFrame {
    /// Parse and verify the frame at the start of `buf` at `level`. Exact by default
    /// (the buffer holds one frame); `prefix=True` allows bytes after it (the next
    /// frame starts at `frame_len`). Raises `SchemaError` or `CorruptPayloadError`.
    #[staticmethod]
    #[pyo3(signature = (buf, level = Level::TRAILER, prefix = false))]
    fn parse(py: Python<'_>, buf: &Bound<'_, PyAny>, level: Level, prefix: bool) -> PyResult<PyFrame> {
        let options = options(level, prefix);
        let bytes = Bytes::of(buf)?;
        let slice = bytes.as_slice();
        let (frame, _) = without_gil(py, slice.len(), || Frame::parse_with(slice, &options)).or_raise(py)?;
        let start = frame.payload_offset();
        Ok(PyFrame {
            identity_json: frame.identity().map(|_| IdentityText::of(buf, frame.identity_json(), start)),
            identity: OnceLock::new(),
            source: Some(buf.clone().unbind()),
            frame_len: frame.len() as u64,
            payload_len: frame.payload().len() as u64,
            identity_len: frame.identity_json().len() as u64,
            payload_offset: start as u64,
            padding: frame.padding(),
            level: frame.level().name(),
            trailer: frame.trailer(),
            digest: frame.payload_digest(),
        })
    }

    /// The identity (None at the layout level).
    #[getter]
    fn identity(&self, py: Python<'_>) -> PyResult<Option<Py<Identity>>> {
        let Some(json) = &self.identity_json else { return Ok(None) };
        if let Some(identity) = self.identity.get() {
            return Ok(Some(identity.clone_ref(py)));
        }
        let text = match json {
            IdentityText::Copied(text) => text.clone(),
            IdentityText::InBytes { start, len } => {
                let source = self.source.as_ref().map(|source| source.bind(py));
                let bytes = source.and_then(|source| source.cast_exact::<PyBytes>().ok());
                let text = bytes.as_ref().and_then(|bytes| bytes.as_bytes().get(*start..start + len));
                text.ok_or_else(|| PyValueError::new_err("the frame's buffer no longer holds its identity"))?.into()
            }
        };
        let made = Py::new(py, Identity::from_validated(text))?;
        Ok(Some(self.identity.get_or_init(|| made).clone_ref(py)))
    }

    /// A memoryview of the payload in the caller's buffer, which it keeps alive (None
    /// for a streamed frame). Made on first use: a parse that only needs the identity
    /// pays nothing for it.
    #[getter]
    fn payload(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        let Some(source) = &self.source else { return Ok(None) };
        let start = usize::try_from(self.payload_offset).map_err(|_| PyValueError::new_err("offset too large"))?;
        let end = usize::try_from(self.payload_len).map_err(|_| PyValueError::new_err("payload too large"))? + start;
        let payload = view(source.bind(py), start, end)?;
        // A buffer resized since the parse would give a shorter view (slices clamp).
        if payload.len()? as u64 != self.payload_len {
            return Err(PyValueError::new_err("the buffer was resized after it was parsed; parse it again"));
        }
        Ok(Some(payload.unbind()))
    }

    /// The stored trailer (8 bytes).
    #[getter]
    fn trailer<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.trailer)
    }

    /// SHA-256 of the payload as hex (trailer level and above), else None.
    #[getter]
    fn payload_sha256(&self) -> Option<String> {
        self.digest.map(|digest| digest.to_hex().to_string())
    }

    /// Pickling and `copy`: a copy of the frame's bytes (payload included, which the
    /// payload view needs), verified again at the same level when unpickled. A streamed
    /// frame holds no payload and cannot be pickled; its `identity` can.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Reduced<'py>> {
        let Some(source) = &self.source else {
            return Err(PyTypeError::new_err("a streamed Frame holds no payload to pickle; pickle its identity"));
        };
        let end = usize::try_from(self.frame_len).map_err(|_| PyValueError::new_err("frame too large"))?;
        let bytes = Bytes::of(source.bind(py))?;
        let frame = bytes
            .as_slice()
            .get(..end)
            .ok_or_else(|| PyValueError::new_err("the buffer was resized after it was parsed; parse it again"))?;
        let restore = py.import("membrane_frame._native")?.getattr("_restore_frame")?;
        Ok((restore, (PyBytes::new(py, frame), self.level)))
    }

    fn __repr__(&self) -> String {
        format!("Frame(frame_len={}, payload_len={}, level={:?})", self.frame_len, self.payload_len, self.level)
    }
}

/// What `Frame.__reduce__` returns: the restoring function and its arguments.
type Reduced<'py> = (Bound<'py, PyAny>, (Bound<'py, PyBytes>, &'static str));

/// Unpickle a frame: parse the pickled bytes again at the pickled level.
#[pyfunction]
pub fn _restore_frame(py: Python<'_>, buf: &Bound<'_, PyAny>, level: Level) -> PyResult<PyFrame> {
    PyFrame::parse(py, buf, level, false)
}

/// The drop-in for the Python implementation's `parse_canonical`: verify at the
/// trailer level (exact) and return `(identity, payload)`, the payload a memoryview
/// into `buf`.
#[pyfunction]
pub fn parse_canonical(py: Python<'_>, buf: &Bound<'_, PyAny>) -> PyResult<(Py<Identity>, Py<PyAny>)> {
    let frame = PyFrame::parse(py, buf, Level::TRAILER, false)?;
    match (frame.identity(py)?, frame.payload(py)?) {
        (Some(identity), Some(payload)) => Ok((identity, payload)),
        _ => Err(PyValueError::new_err("internal error: a trailer-level frame without identity or payload")),
    }
}

/// The identity with `payload_hash` set to the payload's digest, when asked.
fn identity_for<'a>(
    py: Python<'_>,
    identity: &'a Identity,
    digest_hex: Option<&'a str>,
) -> PyResult<membrane::PayloadIdentity<'a>> {
    let parsed = identity.parsed(py)?;
    match digest_hex {
        Some(hex) => parsed.with_payload_hash(hex).or_raise(py),
        None => Ok(parsed),
    }
}

/// Writer options: the payload at a multiple of `align` bytes, the frame starting at
/// `base` (SPEC §1.5). A bad `align` is `ValueError`.
fn write_options(align: u32, base: u64) -> PyResult<WriteOptions> {
    let alignment = PayloadAlignment::new(align, base)
        .map_err(|_| PyValueError::new_err(format!("align must be a power of two from 1 to 4096, not {align}")))?;
    Ok(WriteOptions::new().aligned(alignment))
}

/// The whole frame as `bytes` (one copy of the payload: into the result). With
/// `fill_payload_hash=True`, `payload_hash` is set to the payload's SHA-256. With
/// `align`, the payload starts at a multiple of `align` bytes counted from `base`
/// bytes before the frame (SPEC §1.5: the identity is padded with spaces).
#[pyfunction]
#[pyo3(signature = (identity, payload, fill_payload_hash = false, align = 1, base = 0))]
pub fn canonicalize<'py>(
    py: Python<'py>,
    identity: PyRef<'py, Identity>,
    payload: &Bound<'py, PyAny>,
    fill_payload_hash: bool,
    align: u32,
    base: u64,
) -> PyResult<Bound<'py, PyBytes>> {
    let options = write_options(align, base)?;
    let bytes = Bytes::of(payload)?;
    let payload = bytes.as_slice();
    let hex = fill_payload_hash.then(|| without_gil(py, payload.len(), || Sha256Digest::of(payload)).to_hex());
    let identity = identity_for(py, &identity, hex.as_ref().map(|hex| hex.as_str()))?;
    let len = FrameEncoder::with_options(&identity, payload.len() as u64, &options).or_raise(py)?.frame_len();
    let len = usize::try_from(len).map_err(|_| PyValueError::new_err("frame too large for memory"))?;
    PyBytes::new_with(py, len, |out| {
        without_gil(py, payload.len(), || encode_frame_with(&identity, payload, out, &options)).map(|_| ()).or_raise(py)
    })
}

/// `(head, trailer)` of the frame for `payload`: write head, payload and trailer one
/// after another (`os.writev`, or `write_frame`) and the payload is never copied.
/// `align` and `base` as for `canonicalize`.
#[pyfunction]
#[pyo3(signature = (identity, payload, fill_payload_hash = false, align = 1, base = 0))]
pub fn frame_parts<'py>(
    py: Python<'py>,
    identity: PyRef<'py, Identity>,
    payload: &Bound<'py, PyAny>,
    fill_payload_hash: bool,
    align: u32,
    base: u64,
) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
    let options = write_options(align, base)?;
    let bytes = Bytes::of(payload)?;
    let payload = bytes.as_slice();
    let digest = without_gil(py, payload.len(), || Sha256Digest::of(payload));
    let hex = digest.to_hex();
    let identity = identity_for(py, &identity, fill_payload_hash.then_some(hex.as_str()))?;
    let encoder = FrameEncoder::with_options(&identity, payload.len() as u64, &options).or_raise(py)?;
    let head = PyBytes::new_with(py, encoder.head_len(), |out| encoder.write_head_into(out).map(|_| ()).or_raise(py))?;
    Ok((head, PyBytes::new(py, &digest.trailer())))
}

/// The identity buffer a `StreamVerifier` writes into, owned by the Python object and
/// lent to the library's verifier for the object's whole life.
struct IdentityBuffer(NonNull<[u8]>);

// SAFETY: the buffer is plain bytes owned by one `Stream`; PyO3 gives that object to
// one thread at a time (it is not `frozen`: every method borrows it mutably).
unsafe impl Send for IdentityBuffer {}
// SAFETY: as above; no method hands out a shared reference to the bytes.
unsafe impl Sync for IdentityBuffer {}

impl IdentityBuffer {
    fn new(len: usize) -> IdentityBuffer {
        IdentityBuffer(NonNull::from(Box::leak(vec![0u8; len].into_boxed_slice())))
    }

    /// The buffer for the verifier.
    ///
    /// # Safety
    /// Called once per buffer; the reference must be gone (the verifier dropped) before
    /// the buffer is.
    unsafe fn lend(&mut self) -> &'static mut [u8] {
        // SAFETY: the pointer came from Box::leak, is valid and unaliased (this is the
        // only reference ever made, per the contract above).
        unsafe { self.0.as_mut() }
    }
}

impl Drop for IdentityBuffer {
    fn drop(&mut self) {
        // SAFETY: the pointer came from Box::leak of a boxed slice and is freed once;
        // `Stream` drops its verifier (the borrower) before this field (field order).
        drop(unsafe { Box::from_raw(self.0.as_ptr()) });
    }
}

/// Verify a frame that arrives in chunks (a socket, a pipe) without holding its
/// payload: `feed(chunk)` returns how many more bytes are needed (0 when the frame is
/// complete), `finish()` the verdict as a `Frame` without payload, or raises.
#[pyclass(module = "membrane_frame", name = "StreamVerifier")]
pub struct Stream {
    // Field order matters: the verifier borrows `_identity` and is dropped first.
    verifier: Option<StreamVerifier<'static>>,
    consumed: Option<u64>,
    _identity: IdentityBuffer,
}

#[pymethods]
impl Stream {
    #[new]
    #[pyo3(signature = (level = Level::TRAILER, prefix = false, identity_limit = 65536))]
    fn new(level: Level, prefix: bool, identity_limit: u32) -> PyResult<Stream> {
        let options = options(level, prefix).identity_limit(identity_limit);
        let mut identity = IdentityBuffer::new(identity_limit as usize);
        // SAFETY: lent once; `verifier` is declared before `_identity`, so it is dropped
        // first, and it is never moved out of this object except to be consumed in
        // `finish` (which copies what it returns before the verifier goes).
        let buffer = unsafe { identity.lend() };
        Ok(Stream { verifier: Some(StreamVerifier::new(options, buffer)), consumed: None, _identity: identity })
    }

    /// Feed the next chunk (any object with the buffer protocol); returns the number of
    /// bytes still needed, 0 once the frame is complete. Raises on the first error.
    fn feed(&mut self, py: Python<'_>, chunk: &Bound<'_, PyAny>) -> PyResult<u64> {
        let bytes = Bytes::of(chunk)?;
        let slice = bytes.as_slice();
        let verifier = self.verifier.as_mut().ok_or_else(|| PyValueError::new_err("finish() was called"))?;
        match without_gil(py, slice.len(), || verifier.feed(slice)).or_raise(py)? {
            StreamStatus::NeedMore(n) => Ok(n),
            StreamStatus::Complete { consumed } => {
                self.consumed = Some(consumed as u64);
                Ok(0)
            }
        }
    }

    /// Bytes received so far.
    #[getter]
    fn received(&self) -> u64 {
        self.verifier.as_ref().map_or(0, StreamVerifier::received)
    }

    /// In prefix mode: how many bytes of the last chunk belonged to the frame, once
    /// complete (the rest is the caller's).
    #[getter]
    fn consumed(&self) -> Option<u64> {
        self.consumed
    }

    /// The verdict: a `Frame` (its `payload` is None), or `SchemaError` /
    /// `CorruptPayloadError` (an incomplete frame is judged as the one-shot reader
    /// would judge those bytes).
    fn finish(&mut self, py: Python<'_>) -> PyResult<PyFrame> {
        let verifier = self.verifier.take().ok_or_else(|| PyValueError::new_err("finish() was called"))?;
        let frame = verifier.finish().or_raise(py)?;
        Ok(PyFrame {
            identity_json: frame.identity().map(|identity| IdentityText::Copied(Identity::keep(identity).into_json())),
            identity: OnceLock::new(),
            source: None,
            frame_len: frame.frame_len(),
            payload_len: frame.payload_len(),
            identity_len: frame.identity_len(),
            payload_offset: frame.payload_offset(),
            padding: frame.padding(),
            level: frame.level().name(),
            trailer: frame.trailer(),
            digest: frame.payload_digest(),
        })
    }
}
