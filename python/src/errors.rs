//! Library errors as Python exceptions: `MembraneError` with the SPEC §8 `code`, its
//! `class_`, and the `offset` and `field` it concerns; `SchemaError` and
//! `CorruptPayloadError` for the two format classes (the names the Python
//! implementation raises, so `except SchemaError` keeps its meaning), `UsageError` for
//! misuse of the API.

use membrane::{Error, ErrorClass, ErrorCode};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

create_exception!(membrane_frame, MembraneError, PyException, "A Membrane format error (SPEC section 8).");
create_exception!(membrane_frame, SchemaError, MembraneError, "Wrong format or version: do not retry; maybe migrate.");
create_exception!(membrane_frame, CorruptPayloadError, MembraneError, "Our format, damaged bytes.");
create_exception!(membrane_frame, UsageError, MembraneError, "The API was misused (a bad argument or state).");

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
    let exception = match code.class() {
        ErrorClass::Schema => SchemaError::new_err(message),
        ErrorClass::Corrupt => CorruptPayloadError::new_err(message),
        ErrorClass::Usage | ErrorClass::Io => UsageError::new_err(message),
    };
    let value = exception.value(py);
    let set = || -> PyResult<()> {
        value.setattr("code", code.name())?;
        value.setattr("class_", code.class().name())?;
        value.setattr("offset", offset)?;
        value.setattr("field", field)?;
        value.setattr("reason", reason)?;
        Ok(())
    };
    match set() {
        Ok(()) => exception,
        Err(failed) => failed,
    }
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

pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = module.py();
    module.add("MembraneError", py.get_type::<MembraneError>())?;
    module.add("SchemaError", py.get_type::<SchemaError>())?;
    module.add("CorruptPayloadError", py.get_type::<CorruptPayloadError>())?;
    module.add("UsageError", py.get_type::<UsageError>())?;
    Ok(())
}
