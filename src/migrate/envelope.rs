//! Schema 2, 3 and 4 envelopes to v5 (SPEC §7.2).

use crate::envelope::parse::{read, Schemas};
use crate::envelope::rules::check_tenant;
use crate::envelope::{FragmentMessage, SCHEMA_VERSION};
use crate::error::{Error, ErrorCode};
use crate::frame::WriteError;
use crate::json::{JsonStr, Limits};
use crate::sink::ByteSink;

/// The tenant migration gives envelopes that have none (SPEC §7.2).
pub const DEFAULT_TENANT: &str = "public";

/// Envelope migration policy.
///
/// ```
/// use membrane_frame::migrate::EnvelopeMigrationOptions;
/// let options = EnvelopeMigrationOptions::new().default_tenant("acme");
/// assert_eq!(options.default_tenant, "acme");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EnvelopeMigrationOptions<'t> {
    /// `tenant_id` for envelopes without one; default `"public"`. Must itself be a
    /// valid tenant id (else `invalid_argument`).
    pub default_tenant: &'t str,
    /// Limits of the JSON reader (nesting depth, default 32).
    pub json: Limits,
}

impl Default for EnvelopeMigrationOptions<'_> {
    fn default() -> Self {
        EnvelopeMigrationOptions::new()
    }
}

impl EnvelopeMigrationOptions<'static> {
    /// The defaults: tenant `"public"`, JSON depth 32.
    pub const fn new() -> EnvelopeMigrationOptions<'static> {
        EnvelopeMigrationOptions {
            default_tenant: DEFAULT_TENANT,
            json: Limits { max_depth: crate::json::DEFAULT_MAX_DEPTH },
        }
    }
}

impl<'t> EnvelopeMigrationOptions<'t> {
    /// Set the default tenant.
    #[must_use]
    pub const fn default_tenant<'u>(self, tenant: &'u str) -> EnvelopeMigrationOptions<'u> {
        EnvelopeMigrationOptions { default_tenant: tenant, json: self.json }
    }
}

/// What migrating an envelope did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EnvelopeMigration {
    /// The text is a valid v5 envelope already; nothing was written.
    AlreadyV5,
    /// A schema 2, 3 or 4 envelope was rewritten as v5.
    Rewritten {
        /// The `schema_version` it had: 2, 3 or 4.
        from_version: u8,
        /// Length of the v5 text written.
        len: usize,
    },
}

/// An envelope read for migration: the v5 message it becomes, and where it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct MigratedEnvelope<'a> {
    /// The v5 message (for a v5 input, the input itself).
    pub message: FragmentMessage<'a>,
    /// The input's `schema_version`: 2, 3, 4, or 5 for a no-op.
    pub from_version: u8,
}

impl MigratedEnvelope<'_> {
    /// Whether the input was v5 already (so there is nothing to rewrite).
    pub fn is_noop(&self) -> bool {
        i64::from(self.from_version) == SCHEMA_VERSION
    }
}

/// Read a schema 2–5 envelope and make the v5 message it becomes, applying the SPEC
/// §7.2 defaults to a legacy one: `tenant_id` := the default tenant, `consistency` :=
/// `strong`, `hlc` := 0 when absent, `fingerprint_compat` := the compatibility hash
/// derived from the identity when absent (kept as is when present, even `""`). Every
/// field present must already satisfy its v5 rule; a v5 input is judged by the v5
/// reader. Errors are the envelope reader's (`envelope_version` for other
/// versions), or `invalid_argument` for a default tenant that is not a valid tenant.
///
/// Unknown keys of a legacy envelope are dropped, as the original `to_bytes` drops
/// them.
pub fn read_for_migration<'a>(
    text: &'a [u8],
    options: &EnvelopeMigrationOptions<'a>,
) -> Result<MigratedEnvelope<'a>, Error> {
    let default_tenant = JsonStr::from_plain(options.default_tenant);
    if let Err(reason) = check_tenant(&default_tenant) {
        return Err(Error::new(ErrorCode::InvalidArgument, reason).in_field("tenant_id"));
    }
    let fields = read(text, options.json, Schemas::LegacyOrV5)?;
    let from_version = u8::try_from(fields.schema_version).unwrap_or(0);
    let message = if i64::from(from_version) == SCHEMA_VERSION {
        fields.into_message(Some(text), None)?
    } else {
        fields.into_message(None, Some(default_tenant))?
    };
    Ok(MigratedEnvelope { message, from_version })
}

/// Migrate one envelope text into a sink: a schema 2, 3 or 4 envelope is written as
/// the v5 `to_bytes` text; a v5 envelope is validated and nothing is written
/// ([`EnvelopeMigration::AlreadyV5`]: keep the text as it is). Nothing is written
/// unless the whole input was judged good.
pub fn migrate_envelope_to<S: ByteSink + ?Sized>(
    text: &[u8],
    options: &EnvelopeMigrationOptions<'_>,
    sink: &mut S,
) -> Result<EnvelopeMigration, WriteError<S::Error>> {
    let migrated = read_for_migration(text, options).map_err(WriteError::Frame)?;
    if migrated.is_noop() {
        return Ok(EnvelopeMigration::AlreadyV5);
    }
    migrated.message.write_to(sink).map_err(WriteError::Sink)?;
    Ok(EnvelopeMigration::Rewritten { from_version: migrated.from_version, len: migrated.message.encoded_len() })
}

/// Migrate one envelope text into `out` (see [`migrate_envelope_to`]); the v5 text
/// written is checked with the v5 envelope reader before this returns.
///
/// ```
/// use membrane_frame::migrate::{migrate_envelope_into, EnvelopeMigration, EnvelopeMigrationOptions};
/// use membrane_frame::envelope::{Consistency, FragmentMessage};
/// let v4 = br#"{"schema_version": 4, "identity": {"payload_hash": "x", "model_id": "m", "model_revision": "", "tokenizer_name": "t", "tokenizer_revision": "", "layer_range": [0, 1], "head_range": [-1, -1], "token_span": [0, 7], "dtype": "int8", "shape": [1]}, "payload_ref": null, "payload_size": 0, "ttl": 60, "reuse_score": 0.5, "version_id": 1}"#;
/// let mut out = [0u8; 1024];
/// let outcome = migrate_envelope_into(v4, &EnvelopeMigrationOptions::new(), &mut out)?;
/// let EnvelopeMigration::Rewritten { from_version: 4, len } = outcome else { panic!() };
/// let v5 = FragmentMessage::parse(&out[..len])?;
/// assert_eq!(v5.tenant_id().as_str(), Some("public"));
/// assert_eq!(v5.consistency(), Consistency::Strong);
/// assert_eq!(v5.fingerprint_compat(), Some(v5.identity().fingerprint_compat()));
/// // Migrating the result again is a no-op.
/// let again = migrate_envelope_into(&out[..len], &EnvelopeMigrationOptions::new(), &mut [0u8; 0])?;
/// assert_eq!(again, EnvelopeMigration::AlreadyV5);
/// # Ok::<(), membrane_frame::Error>(())
/// ```
pub fn migrate_envelope_into(
    text: &[u8],
    options: &EnvelopeMigrationOptions<'_>,
    out: &mut [u8],
) -> Result<EnvelopeMigration, Error> {
    let migrated = read_for_migration(text, options)?;
    if migrated.is_noop() {
        return Ok(EnvelopeMigration::AlreadyV5);
    }
    let len = migrated.message.write_into(out)?;
    // The message satisfies every v5 rule by construction; prove the text does too.
    FragmentMessage::parse_with(out.get(..len).unwrap_or(&[]), options.json)?;
    Ok(EnvelopeMigration::Rewritten { from_version: migrated.from_version, len })
}

/// Migrate one envelope text into a new `Vec` of the size it needs (see
/// [`migrate_envelope_into`]): `None` for a valid v5 envelope (keep the text as it is),
/// else the input's `schema_version` and the v5 text, checked with the v5 envelope
/// reader. For tools that hold whole files in memory (the CLI, the Python package).
///
/// ```
/// use membrane_frame::migrate::{migrate_envelope_to_vec, EnvelopeMigrationOptions};
/// let v4 = br#"{"schema_version": 4, "identity": {"payload_hash": "x", "model_id": "m", "model_revision": "", "tokenizer_name": "t", "tokenizer_revision": "", "layer_range": [0, 1], "head_range": [-1, -1], "token_span": [0, 7], "dtype": "int8", "shape": [1]}, "payload_ref": null, "payload_size": 0, "ttl": 60, "reuse_score": 0.5, "version_id": 1}"#;
/// let (from, v5) = migrate_envelope_to_vec(v4, &EnvelopeMigrationOptions::new())?.unwrap();
/// assert_eq!(from, 4);
/// assert_eq!(migrate_envelope_to_vec(&v5, &EnvelopeMigrationOptions::new())?, None);
/// # Ok::<(), membrane_frame::Error>(())
/// ```
#[cfg(feature = "std")]
pub fn migrate_envelope_to_vec(
    text: &[u8],
    options: &EnvelopeMigrationOptions<'_>,
) -> Result<Option<(u8, std::vec::Vec<u8>)>, Error> {
    let migrated = read_for_migration(text, options)?;
    if migrated.is_noop() {
        return Ok(None);
    }
    let mut out = std::vec![0u8; migrated.message.encoded_len()];
    let len = migrated.message.write_into(&mut out)?;
    out.truncate(len);
    // The message satisfies every v5 rule by construction; prove the text does too.
    FragmentMessage::parse_with(&out, options.json)?;
    Ok(Some((migrated.from_version, out)))
}

#[cfg(test)]
mod tests {
    use super::*;

    const IDENTITY_JSON: &str = r#"{"payload_hash": "x", "model_id": "m", "model_revision": "", "tokenizer_name": "t", "tokenizer_revision": "", "layer_range": [0, 1], "head_range": [-1, -1], "token_span": [0, 7], "dtype": "int8", "shape": [1]}"#;

    fn legacy(version: u8, extra: &str) -> std::string::String {
        std::format!(
            r#"{{"schema_version": {version}, "identity": {IDENTITY_JSON}, "payload_ref": "r", "payload_size": 5, "ttl": 1e-5, "reuse_score": 0.5, "version_id": 1{extra}}}"#
        )
    }

    fn migrate(text: &str, options: &EnvelopeMigrationOptions<'_>) -> Result<std::string::String, Error> {
        let mut out = [0u8; 2048];
        match migrate_envelope_into(text.as_bytes(), options, &mut out)? {
            EnvelopeMigration::Rewritten { len, .. } => {
                Ok(std::string::String::from_utf8(out[..len].to_vec()).unwrap())
            }
            EnvelopeMigration::AlreadyV5 => Ok(text.into()),
        }
    }

    #[test]
    fn defaults_are_filled_and_present_values_kept() {
        let options = EnvelopeMigrationOptions::new();
        let v5 = migrate(&legacy(2, ""), &options).unwrap();
        let message = FragmentMessage::parse(v5.as_bytes()).unwrap();
        assert_eq!(message.tenant_id().as_str(), Some("public"));
        assert_eq!(message.hlc().raw(), 0);
        assert_eq!(message.fingerprint_compat(), Some(message.identity().fingerprint_compat()));
        assert!(v5.contains("\"ttl\": 1e-05,"));
        let kept = migrate(
            &legacy(
                4,
                r#", "tenant_id": "acme", "consistency": "quorum", "hlc": 7, "fingerprint_compat": "", "extra": [1]"#,
            ),
            &options.default_tenant("other"),
        )
        .unwrap();
        let message = FragmentMessage::parse(kept.as_bytes()).unwrap();
        assert_eq!(message.tenant_id().as_str(), Some("acme"));
        assert_eq!(message.hlc().raw(), 7);
        assert_eq!(message.fingerprint_compat(), None);
        assert!(!kept.contains("extra"));
        let tenant = migrate(&legacy(3, ""), &options.default_tenant("other")).unwrap();
        assert!(tenant.contains("\"tenant_id\": \"other\""));
    }

    #[test]
    fn bad_inputs_and_options_are_refused_without_writing() {
        let options = EnvelopeMigrationOptions::new();
        let cases: [(std::string::String, ErrorCode); 6] = [
            (legacy(1, ""), ErrorCode::EnvelopeVersion),
            (legacy(6, ""), ErrorCode::EnvelopeVersion),
            (legacy(4, r#", "tenant_id": "a b""#), ErrorCode::EnvelopeField),
            (legacy(4, r#", "ttl": 1"#), ErrorCode::EnvelopeJson),
            (legacy(4, "").replace("\"version_id\": 1", "\"x\": 1"), ErrorCode::EnvelopeMissingField),
            ("garbage".into(), ErrorCode::EnvelopeJson),
        ];
        for (text, code) in cases {
            let mut out = [0xAAu8; 2048];
            let err = migrate_envelope_into(text.as_bytes(), &options, &mut out).unwrap_err();
            assert_eq!(err.code(), code, "{text}");
            assert!(out.iter().all(|&b| b == 0xAA));
        }
        let err = migrate(&legacy(2, ""), &options.default_tenant("a/b")).unwrap_err();
        assert_eq!((err.code(), err.field()), (ErrorCode::InvalidArgument, Some("tenant_id")));
        let mut small = [0u8; 8];
        let err = migrate_envelope_into(legacy(2, "").as_bytes(), &options, &mut small).unwrap_err();
        assert_eq!(err.code(), ErrorCode::BufferTooSmall);
    }

    #[test]
    fn v5_input_is_a_noop_and_migration_is_idempotent() {
        let options = EnvelopeMigrationOptions::new();
        let v5 = migrate(&legacy(3, ""), &options).unwrap();
        let mut out = [0u8; 4];
        assert_eq!(migrate_envelope_into(v5.as_bytes(), &options, &mut out), Ok(EnvelopeMigration::AlreadyV5));
        let mut sink = crate::sink::CountingSink::default();
        assert!(matches!(migrate_envelope_to(v5.as_bytes(), &options, &mut sink), Ok(EnvelopeMigration::AlreadyV5)));
        assert_eq!(sink.0, 0);
        // A broken v5 envelope is not a no-op.
        let broken = v5.replace("\"hlc\": 0", "\"hlc\": -1");
        assert_eq!(migrate(&broken, &options).unwrap_err().code(), ErrorCode::EnvelopeField);
    }

    #[test]
    fn default_options_are_the_documented_ones() {
        let options = EnvelopeMigrationOptions::default();
        assert_eq!(options, EnvelopeMigrationOptions::new());
        assert_eq!(options.default_tenant, "public");
        assert_eq!(options.json, Limits::default());
    }
}
