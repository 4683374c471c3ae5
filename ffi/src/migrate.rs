//! Migration to v5 (SPEC §7): a legacy frame in place (with a dry run), a legacy
//! envelope into a caller buffer. One buffer or text per call; walking directories,
//! atomic file replacement and reports are the caller's (SPEC §7.1 says how).

use crate::boundary::{boundary, guard};
use crate::frame::mbr_read_options;
use crate::out::Out;
use crate::slice::{in_buffer, input, mbr_str, output, text};
use crate::status::mbr_error;
use membrane::json::{Limits, DEFAULT_MAX_DEPTH};
use membrane::migrate::{
    migrate_envelope_into, migrate_frame_in_place_with, plan_frame_migration, EnvelopeMigration,
    EnvelopeMigrationOptions, FrameMigration, DEFAULT_TENANT,
};
use membrane::{Error, ParseMode, ReadOptions};

/// Nothing to do: the input is a valid v5 frame or envelope already.
pub const MBR_MIGRATION_ALREADY_V5: u32 = 0;
/// A legacy input — a v2 (`C0DE0102`, schema 2) or v4 (`C0DE0104`, schema 4) frame,
/// a schema 2, 3 or 4 envelope — is (or would be) rewritten as v5.
pub const MBR_MIGRATION_LEGACY: u32 = 1;
/// A frame the original `upgrade_v2_to_v5.py` half migrated (v5 magic, schema field
/// still 2 or 4) is (or would be) finished: its schema field becomes 5.
pub const MBR_MIGRATION_HALF_MIGRATED: u32 = 2;

/// What migrating a frame does (or, from `mbr_plan_frame_migration`, would do).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct mbr_frame_migration {
    /// `MBR_MIGRATION_ALREADY_V5`, `MBR_MIGRATION_LEGACY` or `MBR_MIGRATION_HALF_MIGRATED`.
    pub kind: u32,
    /// The version found: 2 or 4 (the legacy magic's, or the half-migrated schema
    /// field's), 5 for `MBR_MIGRATION_ALREADY_V5`.
    pub from_version: u32,
    /// Whether the migration writes to the buffer (bytes 0..6 only).
    pub rewrites: bool,
}

impl mbr_frame_migration {
    fn of(migration: FrameMigration) -> mbr_frame_migration {
        let (kind, from_version) = match migration {
            FrameMigration::AlreadyV5 => (MBR_MIGRATION_ALREADY_V5, 5),
            FrameMigration::Legacy { version } => (MBR_MIGRATION_LEGACY, u32::from(version)),
            FrameMigration::HalfMigrated { schema } => (MBR_MIGRATION_HALF_MIGRATED, u32::from(schema)),
        };
        mbr_frame_migration { kind, from_version, rewrites: migration.rewrites() }
    }
}

/// The reader options migration checks its result with; migration reads exactly one
/// frame, so the mode must be `MBR_MODE_EXACT`.
fn migration_options(options: mbr_read_options) -> Result<ReadOptions, Error> {
    match options.to_rust()? {
        options if options.mode == ParseMode::Exact => Ok(options),
        _ => Err(Error::invalid_argument("mode", "migration reads exactly one frame: mode must be MBR_MODE_EXACT")),
    }
}

/// Dry run: decide what migrating the frame in `buf` would do, and prove the result
/// would pass the v5 reader at `options.level` (never below `MBR_LEVEL_TRAILER`, SPEC
/// §7.1), without writing anything.
///
/// Returns `MBR_OK` (`*out` says what would happen), the SPEC §8 code the v5 reader
/// would give the migrated bytes (a buffer that is no frame at all gets the reader's
/// own verdict: `MBR_TOO_SHORT`, `MBR_BAD_MAGIC`, ...; a legacy magic whose schema
/// field does not match it is `MBR_SCHEMA_MISMATCH`), `MBR_INVALID_ARGUMENT` (an
/// unknown level, or a mode other than `MBR_MODE_EXACT`) or `MBR_NULL_POINTER`.
/// `error` may be NULL.
///
/// # Safety
/// `buf` is NULL or points to `len` readable bytes; `out` and `error` are each NULL or
/// writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_plan_frame_migration(
    buf: *const u8,
    len: usize,
    options: mbr_read_options,
    out: *mut mbr_frame_migration,
    error: *mut mbr_error,
) -> u32 {
    boundary(error, || {
        let out = Out::new(out, "out")?;
        let options = migration_options(options)?;
        out.write(mbr_frame_migration::of(plan_frame_migration(input(buf, len, "buf")?, &options)?));
        Ok(())
    })
}

/// Migrate the v2 or v4 frame in `buf` to v5 in place: bytes 0..6 become
/// `C0 DE 01 05 05 00`, nothing else changes. The result is verified (as
/// `mbr_plan_frame_migration`) before anything is written, so on any failure the
/// buffer is untouched. A valid v5 frame is left as it is (`MBR_MIGRATION_ALREADY_V5`):
/// running the migration twice is the same as running it once.
///
/// Returns as `mbr_plan_frame_migration`. `error` may be NULL.
///
/// # Safety
/// `buf` is NULL or points to `len` writable bytes not used elsewhere during the call;
/// `out` and `error` are each NULL or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_migrate_frame_in_place(
    buf: *mut u8,
    len: usize,
    options: mbr_read_options,
    out: *mut mbr_frame_migration,
    error: *mut mbr_error,
) -> u32 {
    boundary(error, || {
        let out = Out::new(out, "out")?;
        let options = migration_options(options)?;
        out.write(mbr_frame_migration::of(migrate_frame_in_place_with(output(buf, len, "buf")?, &options)?));
        Ok(())
    })
}

/// Envelope migration policy, passed by value. Start from
/// `mbr_envelope_migration_options_default()`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct mbr_envelope_migration_options {
    /// `tenant_id` for envelopes without one (UTF-8, pointer and length); default
    /// `"public"` (a static string). Must itself be a valid tenant id, else the
    /// migration fails with `MBR_INVALID_ARGUMENT`.
    pub default_tenant: mbr_str,
    /// JSON nesting limit; default `MBR_DEFAULT_MAX_DEPTH`.
    pub max_depth: u32,
}

/// The defaults: tenant `"public"`, JSON depth 32.
#[no_mangle]
#[must_use]
pub extern "C" fn mbr_envelope_migration_options_default() -> mbr_envelope_migration_options {
    let defaults = || mbr_envelope_migration_options {
        default_tenant: mbr_str::from_static(DEFAULT_TENANT),
        max_depth: DEFAULT_MAX_DEPTH,
    };
    guard(defaults(), defaults)
}

/// What migrating an envelope did.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct mbr_envelope_migration {
    /// `MBR_MIGRATION_ALREADY_V5` (nothing written: keep the text as it is) or
    /// `MBR_MIGRATION_LEGACY` (the v5 text is in the buffer).
    pub kind: u32,
    /// The input's `schema_version`: 2, 3, 4, or 5.
    pub from_version: u32,
    /// Length of the v5 text written (0 for `MBR_MIGRATION_ALREADY_V5`).
    pub len: usize,
}

/// Migrate one envelope text (SPEC §7.2): a schema 2, 3 or 4 envelope is written as
/// the v5 `to_bytes` text into `out` (`capacity` bytes, no NUL) with the defaults
/// filled in — `tenant_id` := `options.default_tenant`, `consistency` := `"strong"`
/// and `hlc` := 0 when absent, `fingerprint_compat` := the compatibility hash derived
/// from the identity when absent — and checked with the v5 reader; a valid v5
/// envelope is validated and nothing is written. `out` must not overlap `json`, and is
/// written only on success.
///
/// Returns `MBR_OK` (`*result` says which), an envelope code (`MBR_ENVELOPE_VERSION`
/// for a `schema_version` other than 2-5, ...; offsets into `json` in `*error`),
/// `MBR_BUFFER_TOO_SMALL` (`error->needed` says how much), `MBR_INVALID_ARGUMENT` (a
/// default tenant that is not a valid tenant id, or not UTF-8) or `MBR_NULL_POINTER`.
/// `error` may be NULL.
///
/// # Safety
/// `json` is NULL or points to `len` readable bytes; `options.default_tenant` is
/// readable; `out` is NULL or points to `capacity` writable bytes that overlap neither;
/// `result` and `error` are each NULL or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_migrate_envelope(
    json: *const u8,
    len: usize,
    options: mbr_envelope_migration_options,
    out: *mut u8,
    capacity: usize,
    result: *mut mbr_envelope_migration,
    error: *mut mbr_error,
) -> u32 {
    boundary(error, || {
        let result = Out::new(result, "result")?;
        let json = input(json, len, "json")?;
        let tenant = text(options.default_tenant, "default_tenant")?;
        let out = output(out, capacity, "out")?;
        let options =
            EnvelopeMigrationOptions { default_tenant: tenant, json: Limits { max_depth: options.max_depth } };
        let outcome = match migrate_envelope_into(json, &options, out).map_err(|err| in_buffer(err, "out"))? {
            EnvelopeMigration::AlreadyV5 => {
                mbr_envelope_migration { kind: MBR_MIGRATION_ALREADY_V5, from_version: 5, len: 0 }
            }
            EnvelopeMigration::Rewritten { from_version, len } => {
                mbr_envelope_migration { kind: MBR_MIGRATION_LEGACY, from_version: u32::from(from_version), len }
            }
        };
        result.write(outcome);
        Ok(())
    })
}
