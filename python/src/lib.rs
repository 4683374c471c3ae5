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
mod migrate;
mod snapshot;
mod tables;

use membrane::frame::{FRAME_OVERHEAD, HEADER_LEN, MAGIC_V2, MAGIC_V4, MAGIC_V5, SCHEMA_V5};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

#[pymodule]
#[pyo3(name = "_native")]
fn membrane_frame_native(module: &Bound<'_, PyModule>) -> PyResult<()> {
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
    module.add_class::<snapshot::PySnapshot>()?;
    module.add_class::<snapshot::Store>()?;
    module.add_function(wrap_pyfunction!(snapshot::epoch_accepted, module)?)?;
    module.add_class::<tables::Tombstones>()?;
    module.add_class::<tables::Refs>()?;
    module.add_function(wrap_pyfunction!(migrate::frame_magic_version, module)?)?;
    module.add_function(wrap_pyfunction!(migrate::plan_migration, module)?)?;
    module.add_function(wrap_pyfunction!(migrate::migrate_frame, module)?)?;
    module.add_function(wrap_pyfunction!(migrate::migrate_frame_in_place, module)?)?;
    module.add_function(wrap_pyfunction!(migrate::migrate_envelope, module)?)?;
    module.add_function(wrap_pyfunction!(migrate::hlc_pack, module)?)?;
    module.add_function(wrap_pyfunction!(migrate::hlc_unpack, module)?)?;
    module.add_function(wrap_pyfunction!(migrate::hlc_tick, module)?)?;
    module.add_function(wrap_pyfunction!(migrate::hlc_merge, module)?)?;
    // Unpickling: values are rebuilt from the text they keep, checked again.
    module.add_function(wrap_pyfunction!(identity::_restore_identity, module)?)?;
    module.add_function(wrap_pyfunction!(envelope::_restore_message, module)?)?;
    module.add_function(wrap_pyfunction!(frame::_restore_frame, module)?)?;
    module.add_function(wrap_pyfunction!(envelope::check_tenant_id, module)?)?;
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // The format's constants, from the library.
    let py = module.py();
    module.add("MAGIC", PyBytes::new(py, &MAGIC_V5))?;
    module.add("MAGIC_V4", PyBytes::new(py, &MAGIC_V4))?;
    module.add("MAGIC_V2", PyBytes::new(py, &MAGIC_V2))?;
    module.add("HEADER_LEN", HEADER_LEN)?;
    // The frame is head, identity, payload_len (8), payload, trailer.
    module.add("TRAILER_LEN", FRAME_OVERHEAD - HEADER_LEN - 8)?;
    module.add("CANONICAL_SCHEMA_VERSION", SCHEMA_V5)?;
    module.add("ENVELOPE_SCHEMA_VERSION", membrane::envelope::SCHEMA_VERSION)?;
    module.add("SNAPSHOT_SCHEMA_VERSION", membrane::snapshot::SCHEMA_VERSION)?;
    module.add("LEGACY_SNAPSHOT_SCHEMA_VERSION", membrane::snapshot::LEGACY_SCHEMA_VERSION)?;
    module.add("DEFAULT_TOMBSTONE_TTL", membrane::tombstone::DEFAULT_TOMBSTONE_TTL)?;
    Ok(())
}
