//! Migration to v5 (SPEC §7): legacy frames in place, legacy envelopes into a buffer.
//!
//! These are the library halves of a migration tool: each works on one buffer or one
//! text, never touches files, and never leaves a half-written result. Walking
//! directories, dry runs over trees, atomic file replacement and reports are the
//! caller's (SPEC §7.1 describes how).
//!
//! * Frames ([`migrate_frame_in_place`], dry run [`plan_frame_migration`]): a v2
//!   (`C0DE0102`, schema 2) or v4 (`C0DE0104`, schema 4) frame gets bytes 0..6 :=
//!   `C0 DE 01 05 05 00`, after proving that the result passes the v5 reader at the
//!   trailer level; on any error the buffer is untouched. A valid v5 frame is a no-op.
//!   A frame half migrated by the original tool (v5 magic, schema field still 2 or 4)
//!   is finished the same way.
//! * Envelopes ([`migrate_envelope_into`], [`migrate_envelope_to`],
//!   [`read_for_migration`]): schema 2, 3 and 4 texts become the v5 `to_bytes` text
//!   with the SPEC §7.2 defaults; a valid v5 envelope is a no-op.

mod envelope;
mod frame;

#[cfg(feature = "std")]
pub use envelope::migrate_envelope_to_vec;
pub use envelope::{
    migrate_envelope_into, migrate_envelope_to, read_for_migration, EnvelopeMigration, EnvelopeMigrationOptions,
    MigratedEnvelope, DEFAULT_TENANT,
};
pub use frame::{migrate_frame_in_place, migrate_frame_in_place_with, plan_frame_migration, FrameMigration, V5_HEAD};
