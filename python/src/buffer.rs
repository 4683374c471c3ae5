//! Borrowing the bytes of any object with the buffer protocol (`bytes`, `bytearray`,
//! `memoryview`, `mmap.mmap`, NumPy arrays) without copying them.
//!
//! `PyObject_GetBuffer` and `PyBuffer_Release` are in the stable ABI only from 3.11 (so
//! PyO3's `PyBuffer` is unavailable to an abi3 module for 3.9), but every CPython 3
//! exports them with the same signature, and `Py_buffer` has had the same layout since
//! 3.3: they are declared here. This module and `Frame`'s view of the payload are the
//! only places that touch raw memory.

use pyo3::exceptions::PyBufferError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::ffi::{c_char, c_int, c_void};
use std::marker::PhantomData;

/// `Py_buffer` (Include/pybuffer.h), unchanged since CPython 3.3.
#[repr(C)]
struct PyBufferView {
    buf: *mut c_void,
    obj: *mut ffi::PyObject,
    len: ffi::Py_ssize_t,
    itemsize: ffi::Py_ssize_t,
    readonly: c_int,
    ndim: c_int,
    format: *mut c_char,
    shape: *mut ffi::Py_ssize_t,
    strides: *mut ffi::Py_ssize_t,
    suboffsets: *mut ffi::Py_ssize_t,
    internal: *mut c_void,
}

/// PyBUF_SIMPLE: contiguous bytes, read-only access is enough.
const PYBUF_SIMPLE: c_int = 0;
/// PyBUF_WRITABLE: contiguous bytes the caller may change.
const PYBUF_WRITABLE: c_int = 1;

extern "C" {
    fn PyObject_GetBuffer(obj: *mut ffi::PyObject, view: *mut PyBufferView, flags: c_int) -> c_int;
    fn PyBuffer_Release(view: *mut PyBufferView);
}

/// The bytes of a buffer-protocol object, held (the exporter may not resize or free
/// them) until this is dropped. Dropped with the GIL held: it is created from, and never
/// leaves, a `Python<'py>` scope (`'py` ties it there; it is not `Send`).
pub struct Bytes<'py> {
    held: Held<'py>,
}

enum Held<'py> {
    /// A `bytes` object (held by a reference of our own): immutable, so its storage is
    /// read directly, with no buffer to acquire and release.
    Immutable(Bound<'py, PyBytes>),
    /// Any other exporter, through the buffer protocol.
    View(PyBufferView, PhantomData<Python<'py>>),
}

impl<'py> Bytes<'py> {
    /// Borrow `object`'s bytes (a `BufferError` or `TypeError` for objects without
    /// contiguous bytes).
    pub fn of(object: &Bound<'py, PyAny>) -> PyResult<Bytes<'py>> {
        if let Ok(bytes) = object.cast_exact::<PyBytes>() {
            return Ok(Bytes { held: Held::Immutable(bytes.clone()) });
        }
        Ok(Bytes { held: Held::View(get_buffer(object, PYBUF_SIMPLE)?, PhantomData) })
    }

    /// The bytes. Valid while `self` lives; not to be changed by other threads meanwhile
    /// (as for `hashlib`, which also reads a buffer without the GIL).
    pub fn as_slice(&self) -> &[u8] {
        let view = match &self.held {
            Held::Immutable(bytes) => return bytes.as_bytes(),
            Held::View(view, _) => view,
        };
        let len = usize::try_from(view.len).unwrap_or(0);
        if len == 0 || view.buf.is_null() {
            return &[];
        }
        // SAFETY: with PyBUF_SIMPLE the exporter provides `len` contiguous bytes at
        // `buf`, kept alive and in place until the view is released in `drop`, which
        // cannot happen while this borrow of `self` lives.
        unsafe { std::slice::from_raw_parts(view.buf as *const u8, len) }
    }
}

/// Ask `object` for a contiguous buffer with `flags`.
fn get_buffer(object: &Bound<'_, PyAny>, flags: c_int) -> PyResult<PyBufferView> {
    let mut view = std::mem::MaybeUninit::<PyBufferView>::zeroed();
    // SAFETY: `object` is a live object (a Bound holds a reference and the GIL);
    // `view` points at writable memory the size of Py_buffer. On success the
    // exporter fills the view and holds its memory until PyBuffer_Release.
    let status = unsafe { PyObject_GetBuffer(object.as_ptr(), view.as_mut_ptr(), flags) };
    if status != 0 {
        return Err(PyErr::take(object.py())
            .unwrap_or_else(|| PyBufferError::new_err("the object does not expose a contiguous buffer")));
    }
    // SAFETY: PyObject_GetBuffer succeeded, so it initialised the view.
    Ok(unsafe { view.assume_init() })
}

/// The bytes of a writable buffer-protocol object (`bytearray`, a writable
/// `memoryview`, `mmap.mmap`, a NumPy array), held as [`Bytes`] holds them, for work
/// done in place. A read-only object (`bytes`) is a `BufferError`.
pub struct BytesMut<'py> {
    view: PyBufferView,
    _held: PhantomData<Python<'py>>,
}

impl<'py> BytesMut<'py> {
    /// Borrow `object`'s bytes for writing.
    pub fn of(object: &Bound<'py, PyAny>) -> PyResult<BytesMut<'py>> {
        Ok(BytesMut { view: get_buffer(object, PYBUF_WRITABLE)?, _held: PhantomData })
    }

    /// The bytes, to change. Valid while `self` lives; not to be read or changed by
    /// other threads meanwhile (the exporter cannot be resized while the view is held).
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        let len = usize::try_from(self.view.len).unwrap_or(0);
        if len == 0 || self.view.buf.is_null() {
            return &mut [];
        }
        // SAFETY: with PyBUF_WRITABLE the exporter provides `len` contiguous writable
        // bytes at `buf`, kept alive and in place until the view is released in `drop`,
        // which cannot happen while this borrow of `self` lives; `&mut self` makes this
        // the only slice made from the view.
        unsafe { std::slice::from_raw_parts_mut(self.view.buf as *mut u8, len) }
    }
}

impl Drop for BytesMut<'_> {
    fn drop(&mut self) {
        // SAFETY: the view was filled by a successful PyObject_GetBuffer and is released
        // once; the GIL is held (it never leaves its `Python<'py>` scope).
        unsafe { PyBuffer_Release(&mut self.view) }
    }
}

impl Drop for Bytes<'_> {
    fn drop(&mut self) {
        if let Held::View(view, _) = &mut self.held {
            // SAFETY: the view was filled by a successful PyObject_GetBuffer and is
            // released once; the GIL is held (see the type's documentation).
            unsafe { PyBuffer_Release(view) }
        }
    }
}

/// Below this many bytes the work is shorter than releasing and taking back the GIL
/// (about 0.2 us): small inputs are handled with the GIL held.
const DETACH_FROM: usize = 16 << 10;

/// Run `work` on `len` bytes without the GIL when it is worth it.
pub fn without_gil<T: Send>(py: Python<'_>, len: usize, work: impl FnOnce() -> T + Send) -> T {
    if len >= DETACH_FROM {
        py.detach(work)
    } else {
        work()
    }
}
