//! `membrane_frame._native`: the Python module over the membrane-frame Rust API
//! (PyO3). It translates between Python objects and the library and holds no format
//! logic of its own; `python/membrane_frame/__init__.py` re-exports it and adds
//! `write_frame`.

mod buffer;
mod bulk;
mod envelope;
mod errors;
mod frame;
mod identity;

use pyo3::prelude::*;

#[pymodule]
#[pyo3(name = "_native")]
fn membrane_frame_native(module: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(module)?;
    module.add_class::<identity::Identity>()?;
    module.add_class::<frame::PyFrame>()?;
    module.add_class::<frame::Stream>()?;
    module.add_class::<envelope::Message>()?;
    module.add_class::<bulk::VerifyFiles>()?;
    module.add_function(wrap_pyfunction!(frame::check_frame, module)?)?;
    module.add_function(wrap_pyfunction!(frame::parse_canonical, module)?)?;
    module.add_function(wrap_pyfunction!(frame::canonicalize, module)?)?;
    module.add_function(wrap_pyfunction!(frame::frame_parts, module)?)?;
    module.add_function(wrap_pyfunction!(envelope::check_envelope, module)?)?;
    module.add_function(wrap_pyfunction!(envelope::fingerprint_compat, module)?)?;
    module.add_function(wrap_pyfunction!(bulk::verify_files, module)?)?;
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
