//! v2 and v4 frames to v5, in place (SPEC §7.1).

use crate::error::{Error, ErrorCode};
use crate::frame::{verify_as_v5, Frame, HeaderKind, ParseMode, ReadOptions, VerifyLevel, MIN_FRAME_PREFIX};

/// What migration writes over bytes 0..6 of a legacy frame: the v5 magic and schema 5.
pub const V5_HEAD: [u8; 6] = [0xC0, 0xDE, 0x01, 0x05, 0x05, 0x00];

/// What migrating a frame does (or, from [`plan_frame_migration`], would do).
///
/// ```
/// use membrane_frame::migrate::{migrate_frame_in_place, FrameMigration};
/// # let mut bytes = membrane_frame::example_frame();
/// bytes[4] = 2; // a v5 magic with the schema field still 2: half migrated
/// assert_eq!(migrate_frame_in_place(&mut bytes)?, FrameMigration::HalfMigrated { schema: 2 });
/// assert!(!migrate_frame_in_place(&mut bytes)?.rewrites());
/// # Ok::<(), membrane_frame::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FrameMigration {
    /// Already a v5 frame that passes the reader: nothing to write.
    AlreadyV5,
    /// A legacy frame (`C0DE0102` with schema 2, or `C0DE0104` with schema 4) whose
    /// first six bytes become [`V5_HEAD`].
    Legacy {
        /// 2 or 4.
        version: u16,
    },
    /// A frame the original `tools/upgrade_v2_to_v5.py` half migrated: the v5 magic
    /// but the schema field still 2 or 4, which the v5 reader rejects
    /// (`schema_mismatch`). Its schema field becomes 5.
    HalfMigrated {
        /// The schema field found: 2 or 4.
        schema: u16,
    },
}

impl FrameMigration {
    /// Whether the migration writes to the buffer.
    pub const fn rewrites(&self) -> bool {
        !matches!(self, FrameMigration::AlreadyV5)
    }
}

/// Decide what migrating `buf` would do, and prove the result would pass the v5
/// reader, without writing anything: a dry run.
///
/// The result is checked at `options.level`, but never below the trailer level (SPEC
/// §7.1), in exact mode (a file or blob holds one frame). Errors are what the v5
/// reader would report for the migrated bytes; a buffer that is neither a frame nor a
/// legacy frame gets the reader's own verdict (`too_short`, `bad_magic`, ...), and a
/// legacy magic whose schema field does not match it is `schema_mismatch`.
///
/// ```
/// use membrane_frame::migrate::{plan_frame_migration, FrameMigration};
/// use membrane_frame::ReadOptions;
/// # let mut bytes = membrane_frame::example_frame();
/// assert_eq!(plan_frame_migration(&bytes, &ReadOptions::new())?, FrameMigration::AlreadyV5);
/// bytes[3] = 0x04; // a v4 frame ...
/// bytes[4] = 0x04; // ... with schema 4
/// assert_eq!(plan_frame_migration(&bytes, &ReadOptions::new())?, FrameMigration::Legacy { version: 4 });
/// # Ok::<(), membrane_frame::Error>(())
/// ```
pub fn plan_frame_migration(buf: &[u8], options: &ReadOptions) -> Result<FrameMigration, Error> {
    let options = at_least_trailer(options);
    let kind = if buf.len() >= MIN_FRAME_PREFIX { HeaderKind::of_bytes(buf) } else { HeaderKind::Foreign };
    let migration = match kind.migratable()? {
        HeaderKind::HalfMigrated { schema } => FrameMigration::HalfMigrated { schema },
        HeaderKind::Legacy { version } => FrameMigration::Legacy { version },
        // A v5 frame, or anything else: the v5 reader's verdict (bad_magic, ...).
        HeaderKind::V5 | HeaderKind::Foreign | HeaderKind::LegacyMismatch => {
            Frame::parse_with(buf, &options)?;
            return Ok(FrameMigration::AlreadyV5);
        }
    };
    verify_as_v5(buf, &options)?;
    Ok(migration)
}

/// Migrate a v2 or v4 frame to v5 in place: bytes 0..6 become [`V5_HEAD`], nothing
/// else changes. The result is verified (trailer level, exact) *before* anything is
/// written, so on any error the buffer is untouched. A valid v5 frame is left as it
/// is ([`FrameMigration::AlreadyV5`]); running the migration twice is the same as
/// running it once.
///
/// ```
/// use membrane_frame::migrate::{migrate_frame_in_place, FrameMigration};
/// use membrane_frame::{ErrorCode, Frame};
/// # let v5 = membrane_frame::example_frame();
/// let mut bytes = v5.clone();
/// bytes[..6].copy_from_slice(&[0xC0, 0xDE, 0x01, 0x02, 0x02, 0x00]); // as a v2 frame
/// assert_eq!(Frame::parse(&bytes).unwrap_err().code(), ErrorCode::LegacyFrame);
/// assert_eq!(migrate_frame_in_place(&mut bytes)?, FrameMigration::Legacy { version: 2 });
/// assert_eq!(bytes, v5);
/// assert_eq!(migrate_frame_in_place(&mut bytes)?, FrameMigration::AlreadyV5);
///
/// let mut garbage = *b"not a frame, just some bytes";
/// assert!(migrate_frame_in_place(&mut garbage).is_err());
/// assert_eq!(&garbage, b"not a frame, just some bytes");
/// # Ok::<(), membrane_frame::Error>(())
/// ```
pub fn migrate_frame_in_place(buf: &mut [u8]) -> Result<FrameMigration, Error> {
    migrate_frame_in_place_with(buf, &ReadOptions::new())
}

/// [`migrate_frame_in_place`] with explicit reader options (identity limit, JSON
/// limits, a level above trailer).
pub fn migrate_frame_in_place_with(buf: &mut [u8], options: &ReadOptions) -> Result<FrameMigration, Error> {
    let migration = plan_frame_migration(buf, options)?;
    if !migration.rewrites() {
        return Ok(migration);
    }
    let Some(head) = buf.get_mut(..V5_HEAD.len()) else {
        // plan_frame_migration accepted at least 22 bytes; unreachable.
        return Err(Error::new(ErrorCode::TooShort, "shorter than a header and payload length"));
    };
    let mut previous = [0u8; 6];
    previous.copy_from_slice(head);
    head.copy_from_slice(&V5_HEAD);
    // The plan proved the v5 bytes at the trailer level or above. Only bytes 0..6
    // changed, so the reader's header and length checks confirm them without hashing
    // the payload again; on disagreement the old bytes are put back.
    let header_checks = at_least_trailer(options).level(VerifyLevel::Layout);
    if let Err(err) = Frame::parse_with(buf, &header_checks) {
        if let Some(head) = buf.get_mut(..previous.len()) {
            head.copy_from_slice(&previous);
        }
        return Err(err);
    }
    Ok(migration)
}

/// The options migration reads with: exact mode (a file or blob holds one frame), never
/// below the trailer level (SPEC §7.1).
fn at_least_trailer(options: &ReadOptions) -> ReadOptions {
    options.level(options.level.max(VerifyLevel::Trailer)).mode(ParseMode::Exact)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A valid v5 frame (payload `hello`, full-level valid).
    fn v5_frame() -> std::vec::Vec<u8> {
        crate::frame::example_frame()
    }

    fn legacy(version: u8) -> std::vec::Vec<u8> {
        let mut bytes = v5_frame();
        bytes[3] = version;
        bytes[4] = version;
        bytes
    }

    #[test]
    // Exhaustive loops over safe code: minutes under Miri, and the same paths run there
    // through the other tests; the normal test run keeps them.
    #[cfg_attr(miri, ignore = "minutes under Miri")]
    fn the_dry_run_agrees_with_the_reader_on_every_single_byte_corruption() {
        let v5 = v5_frame();
        for level in [VerifyLevel::Trailer, VerifyLevel::Full] {
            let options = ReadOptions::new().level(level);
            for version in [2u8, 4] {
                let original = legacy(version);
                for at in 6..original.len() {
                    for flip in [0x01u8, 0x80, 0xFF] {
                        let mut corrupt = original.clone();
                        corrupt[at] ^= flip;
                        let mut migrated = v5.clone();
                        migrated[at] ^= flip;
                        let reader = Frame::parse_with(&migrated, &options).map(|_| ());
                        let plan = plan_frame_migration(&corrupt, &options).map(|_| ());
                        assert_eq!(plan, reader, "byte {at} ^ {flip:#x} at {level:?}");
                        let mut buf = corrupt.clone();
                        let done = migrate_frame_in_place_with(&mut buf, &options).map(|_| ());
                        assert_eq!(done, reader);
                        assert_eq!(buf, if reader.is_ok() { migrated } else { corrupt });
                    }
                }
                for cut in 0..original.len() {
                    let mut truncated = original[..cut].to_vec();
                    let reader = Frame::parse_with(&v5[..cut], &options).map(|_| ());
                    assert!(reader.is_err());
                    let before = truncated.clone();
                    assert_eq!(migrate_frame_in_place_with(&mut truncated, &options).map(|_| ()), reader, "cut {cut}");
                    assert_eq!(truncated, before);
                }
            }
        }
    }

    #[test]
    fn half_migrated_frames_are_finished() {
        let v5 = v5_frame();
        for schema in [2u8, 4] {
            let mut bytes = v5.clone();
            bytes[4] = schema;
            assert_eq!(Frame::parse(&bytes).unwrap_err().code(), ErrorCode::SchemaMismatch);
            assert_eq!(
                migrate_frame_in_place(&mut bytes),
                Ok(FrameMigration::HalfMigrated { schema: u16::from(schema) })
            );
            assert_eq!(bytes, v5);
        }
    }

    #[test]
    fn mismatched_legacy_magic_and_schema_are_refused() {
        for (version, schema) in [(2u8, 4u8), (4, 2), (2, 5), (4, 0)] {
            let mut bytes = legacy(version);
            bytes[4] = schema;
            let before = bytes.clone();
            let err = migrate_frame_in_place(&mut bytes).unwrap_err();
            assert_eq!((err.code(), err.offset()), (ErrorCode::SchemaMismatch, Some(4)));
            assert_eq!(bytes, before);
        }
        let mut bytes = legacy(4);
        bytes[5] = 1; // schema 0x0104
        assert_eq!(migrate_frame_in_place(&mut bytes).unwrap_err().code(), ErrorCode::SchemaMismatch);
        let mut bytes = legacy(3);
        assert_eq!(migrate_frame_in_place(&mut bytes).unwrap_err().code(), ErrorCode::BadMagic);
    }
}
