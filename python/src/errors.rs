//! Library errors as Python exceptions. The classes are defined in Python
//! (`membrane_frame/_errors.py`), where they can take several bases (the Python
//! implementation's hierarchy and `ValueError`), and are looked up here once.
//! `MembraneError` carries the SPEC §8 `code`, its `class_`, and the `offset`, `field`
//! and `reason` it concerns; `SchemaError` and `CorruptPayloadError` are the two format
//! classes, `UsageError` the misuse of the API.

use membrane::{Error, ErrorClass, ErrorCode};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

/// The exception classes of `membrane_frame._errors`, by error class.
struct Classes {
    schema: Py<PyType>,
    corrupt: Py<PyType>,
    usage: Py<PyType>,
}

static CLASSES: PyOnceLock<Classes> = PyOnceLock::new();

fn classes(py: Python<'_>) -> PyResult<&Classes> {
    CLASSES.get_or_try_init(py, || {
        let module = py.import("membrane_frame._errors")?;
        let class = |name: &str| -> PyResult<Py<PyType>> { Ok(module.getattr(name)?.cast_into::<PyType>()?.unbind()) };
        Ok(Classes {
            schema: class("SchemaError")?,
            corrupt: class("CorruptPayloadError")?,
            usage: class("UsageError")?,
        })
    })
}

/// The Python exception for a library error, with its attributes set.
pub fn to_py(py: Python<'_>, err: &Error) -> PyErr {
    raise(py, err.code(), err.offset(), err.field(), err.reason(), err.to_string())
}

/// The exception for an error this skin finds itself, in the library's terms (a
/// Python value that cannot become a field: an unknown dtype name, a negative size).
pub fn raise(
    py: Python<'_>,
    code: ErrorCode,
    offset: Option<u64>,
    field: Option<&str>,
    reason: &str,
    message: String,
) -> PyErr {
    let made = || -> PyResult<PyErr> {
        let classes = classes(py)?;
        let class = match code.class() {
            ErrorClass::Schema => &classes.schema,
            ErrorClass::Corrupt => &classes.corrupt,
            ErrorClass::Usage | ErrorClass::Io => &classes.usage,
        };
        let value = class.bind(py).call1((message,))?;
        value.setattr("code", code.name())?;
        value.setattr("class_", code.class().name())?;
        value.setattr("offset", offset)?;
        value.setattr("field", field)?;
        value.setattr("reason", reason)?;
        Ok(PyErr::from_value(value))
    };
    made().unwrap_or_else(|failed| failed)
}

/// `invalid_argument` for a Python value out of the range of a field.
pub fn invalid_argument(py: Python<'_>, field: &str, reason: &str) -> PyErr {
    let message = format!("invalid_argument ({field}): {reason}");
    raise(py, ErrorCode::InvalidArgument, None, Some(field), reason, message)
}

/// `Result<T, Error>` into a Python result.
pub trait OrRaise<T> {
    fn or_raise(self, py: Python<'_>) -> PyResult<T>;
}

impl<T> OrRaise<T> for Result<T, Error> {
    fn or_raise(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|err| to_py(py, &err))
    }
}
