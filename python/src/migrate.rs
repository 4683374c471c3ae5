//! Migration to v5 (SPEC §7) and the HLC (SPEC §9) for Python: the core's frame and
//! envelope migrations, which prove their output passes the v5 readers, and its clock
//! arithmetic.

use crate::buffer::{without_gil, Bytes, BytesMut};
use crate::envelope::text_bytes;
use crate::errors::{self, OrRaise};
use crate::frame::Level;
use membrane::frame::{ReadOptions, MAGIC_V2, MAGIC_V4, MAGIC_V5};
use membrane::migrate::{
    migrate_envelope_to_vec, migrate_frame_in_place_with, plan_frame_migration, EnvelopeMigrationOptions,
    FrameMigration,
};
use membrane::{Error, Hlc};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// The frame version a buffer's magic names: 5, 4, 2, or 0 for anything else (fewer
/// than four bytes included). Only the magic is looked at.
#[pyfunction]
pub fn frame_magic_version(buf: &Bound<'_, PyAny>) -> PyResult<u8> {
    let bytes = Bytes::of(buf)?;
    Ok(match bytes.as_slice().get(..4) {
        Some(magic) if magic == MAGIC_V5 => 5,
        Some(magic) if magic == MAGIC_V4 => 4,
        Some(magic) if magic == MAGIC_V2 => 2,
        _ => 0,
    })
}

fn migration_options(level: Level) -> ReadOptions {
    ReadOptions::new().level(level.0)
}

/// What migrating a frame does, as `(kind, version)`: `("v5", 5)` for a v5 frame
/// (nothing to write), `("legacy", 2 | 4)`, or `("half_migrated", 2 | 4)` for a frame
/// the original tool left with the v5 magic and the old schema field. Nothing is
/// written; the migrated frame is proved to pass the v5 reader at `level` (never
/// below `trailer`), else the reader's error is raised.
#[pyfunction]
#[pyo3(signature = (buf, level = Level::TRAILER))]
pub fn plan_migration(py: Python<'_>, buf: &Bound<'_, PyAny>, level: Level) -> PyResult<(&'static str, u16)> {
    let options = migration_options(level);
    let bytes = Bytes::of(buf)?;
    let slice = bytes.as_slice();
    let plan = without_gil(py, slice.len(), || plan_frame_migration(slice, &options)).or_raise(py)?;
    Ok(describe(plan))
}

fn describe(plan: FrameMigration) -> (&'static str, u16) {
    match plan {
        FrameMigration::AlreadyV5 => ("v5", 5),
        FrameMigration::Legacy { version } => ("legacy", version),
        FrameMigration::HalfMigrated { schema } => ("half_migrated", schema),
    }
}

/// The v5 frame a v2 or v4 frame becomes (bytes 0..6 rewritten, the rest as it was),
/// or None for a frame that is v5 already. Raises the v5 reader's error when the
/// result would not pass it at `level` (never below `trailer`); the input is not
/// changed.
#[pyfunction]
#[pyo3(signature = (buf, level = Level::TRAILER))]
pub fn migrate_frame<'py>(
    py: Python<'py>,
    buf: &Bound<'py, PyAny>,
    level: Level,
) -> PyResult<Option<Bound<'py, PyBytes>>> {
    let options = migration_options(level);
    let mut copy = Bytes::of(buf)?.as_slice().to_vec();
    let plan = without_gil(py, copy.len(), || migrate_frame_in_place_with(&mut copy, &options)).or_raise(py)?;
    Ok(plan.rewrites().then(|| PyBytes::new(py, &copy)))
}

/// Migrate the frame in a writable buffer (`bytearray`, writable `memoryview`, `mmap`)
/// in place: bytes 0..6 of a v2 or v4 frame are rewritten, nothing else is copied or
/// changed. Returns the plan as `plan_migration` does; raises the v5 reader's error (the
/// buffer then unchanged) when the result would not pass it at `level`.
#[pyfunction]
#[pyo3(signature = (buf, level = Level::TRAILER))]
pub fn migrate_frame_in_place(py: Python<'_>, buf: &Bound<'_, PyAny>, level: Level) -> PyResult<(&'static str, u16)> {
    let options = migration_options(level);
    let mut bytes = BytesMut::of(buf)?;
    let slice = bytes.as_mut_slice();
    let plan = without_gil(py, slice.len(), || migrate_frame_in_place_with(slice, &options)).or_raise(py)?;
    Ok(describe(plan))
}

/// The v5 `to_bytes` text a schema 2, 3 or 4 envelope becomes (SPEC §7.2: the
/// defaults for a missing `tenant_id`, `consistency`, `hlc` and `fingerprint_compat`),
/// or None for a valid v5 envelope. Raises `SchemaError` for text that is neither.
#[pyfunction]
#[pyo3(signature = (text, default_tenant = "public"))]
pub fn migrate_envelope<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyAny>,
    default_tenant: &str,
) -> PyResult<Option<Bound<'py, PyBytes>>> {
    let text = text_bytes(text)?;
    let options = EnvelopeMigrationOptions::new().default_tenant(default_tenant);
    let migrated = migrate_envelope_to_vec(text.as_slice(), &options).or_raise(py)?;
    Ok(migrated.map(|(_, v5)| PyBytes::new(py, &v5)))
}

fn hlc_result(py: Python<'_>, result: Result<Hlc, Error>) -> PyResult<u64> {
    result.map(Hlc::raw).or_raise(py)
}

/// `(physical_ms << 16) | logical` (SPEC §9); `UsageError` when `physical_ms` needs
/// more than 48 bits or `logical` more than 16.
#[pyfunction]
pub fn hlc_pack(py: Python<'_>, physical_ms: u64, logical: u32) -> PyResult<u64> {
    let logical =
        u16::try_from(logical).map_err(|_| errors::invalid_argument(py, "logical", "logical must fit 16 bits"))?;
    hlc_result(py, Hlc::pack(physical_ms, logical))
}

/// `(physical_ms, logical)` of a packed HLC.
#[pyfunction]
pub fn hlc_unpack(value: u64) -> (u64, u16) {
    Hlc::from_raw(value).unpack()
}

/// The next local HLC after `previous` at wall-clock `now_ms` (SPEC §9): physical
/// `max(previous, now_ms)`, the logical part bumped when it does not advance.
#[pyfunction]
pub fn hlc_tick(py: Python<'_>, previous: u64, now_ms: u64) -> PyResult<u64> {
    hlc_result(py, Hlc::from_raw(previous).tick(now_ms))
}

/// The local HLC after observing `remote` at wall-clock `now_ms` (SPEC §9): the larger
/// of the two (and `now_ms`), strictly greater than both.
#[pyfunction]
pub fn hlc_merge(py: Python<'_>, local: u64, remote: u64, now_ms: u64) -> PyResult<u64> {
    hlc_result(py, Hlc::from_raw(local).merge(Hlc::from_raw(remote), now_ms))
}
