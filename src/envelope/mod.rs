//! `FragmentMessage` — the v5 JSON envelope (SPEC §3): reading, writing, and the
//! model-compatibility hash.
//!
//! [`FragmentMessage::parse`] validates an envelope text in one pass over the strict
//! JSON reader and hands back a view that borrows its strings from the text.
//! [`FragmentMessage::write_to`] emits exactly the original `to_bytes` text (keys in
//! table order, `", "` / `": "` separators, ASCII escaping, floats as Python
//! `repr`). [`EnvelopeBuilder`] makes a message from Rust values for writing.
//! [`CompatInputs`] and [`PayloadIdentity::fingerprint_compat`] compute
//! `fingerprint_compat` (§3.3).
//!
//! ## Errors, in this order (SPEC §3.1)
//! 1. `envelope_json`: any strict-JSON problem anywhere in the text (the whole text is
//!    read before any field is judged), or a top-level value that is not an object.
//!    Problems inside the nested identity's *JSON* are JSON problems of the envelope
//!    text, so they are `envelope_json` too.
//! 2. `envelope_version`: `schema_version` missing, not an integer token, or not 5.
//! 3. `envelope_missing_field`: the first missing field in table order.
//! 4. `identity_field`: the identity is not an object or breaks §2.2 — before any other
//!    field's problem, because the original parses the identity before it validates
//!    the rest.
//! 5. `envelope_field`: the first other field, in table order, that breaks its rule.
//!
//! Judging in table order rather than document order makes the verdict independent of
//! how the keys happen to be ordered in the text. Errors carry the byte offset (of the
//! offending value; of the envelope's closing `}` for a missing field) and the field
//! name (for identity problems, the identity's own field name).
//!
//! ```
//! use membrane_frame::envelope::{Consistency, FragmentMessage};
//! let text = br#"{"schema_version": 5, "tenant_id": "acme", "identity": {"payload_hash": "x", "model_id": "m", "model_revision": "", "tokenizer_name": "t", "tokenizer_revision": "", "layer_range": [0, 1], "head_range": [-1, -1], "token_span": [0, 7], "dtype": "int8", "shape": [1]}, "payload_ref": null, "payload_size": 0, "ttl": 60.0, "reuse_score": 0.5, "version_id": 1, "consistency": "strong", "hlc": 0, "fingerprint_compat": ""}"#;
//! let message = FragmentMessage::parse(text)?;
//! assert_eq!(message.tenant_id().as_str(), Some("acme"));
//! assert_eq!(message.consistency(), Consistency::Strong);
//! assert_eq!(message.ttl(), 60.0);
//! assert!(message.is_canonical()); // the text is exactly what `write_to` produces
//! # Ok::<(), membrane_frame::Error>(())
//! ```

mod compat;
pub(crate) mod parse;
mod write;

pub use compat::CompatInputs;
pub use write::EnvelopeBuilder;

use crate::digest::Sha256Digest;
use crate::error::{Error, ErrorCode};
use crate::hlc::Hlc;
use crate::identity::PayloadIdentity;
use crate::json::JsonStr;
use core::fmt;

/// The only `schema_version` a v5 envelope may carry.
pub const SCHEMA_VERSION: i64 = 5;

/// Most code points a `tenant_id` may have.
pub const MAX_TENANT_CHARS: usize = 128;

/// Capacity of the envelope reader's duplicate-key table: how many keys may be open
/// at once (the envelope's own keys plus those of the nested object being read). An
/// envelope needs 21; the rest is room for unknown keys. More is `envelope_json`.
pub const ENVELOPE_KEY_CAPACITY: usize = 128;

/// The envelope's keys in table (and emission) order.
pub const FIELD_NAMES: [&str; 11] = [
    "schema_version",
    "tenant_id",
    "identity",
    "payload_ref",
    "payload_size",
    "ttl",
    "reuse_score",
    "version_id",
    "consistency",
    "hlc",
    "fingerprint_compat",
];

/// The replication consistency an envelope asks for.
///
/// ```
/// use membrane_frame::Consistency;
/// assert_eq!(Consistency::from_name("quorum"), Some(Consistency::Quorum));
/// assert_eq!(Consistency::from_name("Quorum"), None); // names are case-sensitive
/// assert_eq!(Consistency::default().name(), "strong");
/// assert_eq!(Consistency::Eventual.to_string(), "eventual");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Consistency {
    /// `strong` (the default migration fills in).
    #[default]
    Strong,
    /// `quorum`.
    Quorum,
    /// `eventual`.
    Eventual,
}

impl Consistency {
    /// Every value.
    pub const ALL: [Consistency; 3] = [Consistency::Strong, Consistency::Quorum, Consistency::Eventual];

    /// The name as written in an envelope.
    pub const fn name(self) -> &'static str {
        match self {
            Consistency::Strong => "strong",
            Consistency::Quorum => "quorum",
            Consistency::Eventual => "eventual",
        }
    }

    /// The value with exactly this (case-sensitive) name.
    pub fn from_name(name: &str) -> Option<Consistency> {
        Consistency::ALL.into_iter().find(|c| c.name() == name)
    }

    /// The value a JSON string names (escapes allowed).
    pub fn from_json(value: &JsonStr<'_>) -> Option<Consistency> {
        Consistency::ALL.into_iter().find(|c| value.eq_str(c.name()))
    }
}

impl fmt::Display for Consistency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A validated v5 envelope (SPEC §3.1).
///
/// Parsed messages borrow their strings from the text; built ones from the caller's
/// values (see [`EnvelopeBuilder`]). Either way every field satisfies its rule.
///
/// Two messages are equal when their values are: strings compare decoded (`"\u00e9"`
/// equals `"é"`), floats bit for bit (`-0.0` is not `0.0`: they are written
/// differently), and the text a message was parsed from does not matter.
///
/// ```
/// use membrane_frame::{Consistency, FragmentMessage};
/// # let bytes = membrane_frame::example_frame();
/// # let identity = membrane_frame::Frame::parse(&bytes)?.identity().unwrap().clone();
/// let built = FragmentMessage::builder("tenant-a", identity)
///     .payload_size(5)
///     .consistency(Consistency::Quorum)
///     .derive_fingerprint_compat()
///     .build()?;
/// let mut text = [0u8; 1024];
/// let len = built.write_into(&mut text)?; // the Python nodes' to_bytes, byte for byte
/// let read = FragmentMessage::parse(&text[..len])?;
/// assert!(read.is_canonical() && read == built);
/// assert_eq!(read.tenant_id().as_str(), Some("tenant-a"));
/// # Ok::<(), membrane_frame::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct FragmentMessage<'a> {
    source: Option<&'a [u8]>,
    tenant_id: JsonStr<'a>,
    identity: PayloadIdentity<'a>,
    payload_ref: Option<JsonStr<'a>>,
    payload_size: u64,
    ttl: f64,
    reuse_score: f64,
    version_id: u64,
    consistency: Consistency,
    hlc: Hlc,
    fingerprint_compat: Option<Sha256Digest>,
}

impl<'a> FragmentMessage<'a> {
    /// `tenant_id`: 1–128 code points, none of space `:` `/` `\` `"` LF TAB CR.
    pub fn tenant_id(&self) -> JsonStr<'a> {
        self.tenant_id
    }

    /// The nested identity (SPEC §2).
    pub fn identity(&self) -> &PayloadIdentity<'a> {
        &self.identity
    }

    /// `payload_ref` (`None` for JSON `null`).
    pub fn payload_ref(&self) -> Option<JsonStr<'a>> {
        self.payload_ref
    }

    /// `payload_size`.
    pub fn payload_size(&self) -> u64 {
        self.payload_size
    }

    /// `ttl`, seconds: finite and `>= 0` (`-0.0` allowed).
    pub fn ttl(&self) -> f64 {
        self.ttl
    }

    /// `reuse_score`: finite, `0 <= x <= 1`.
    pub fn reuse_score(&self) -> f64 {
        self.reuse_score
    }

    /// `version_id`: `1 ..= 2^63-1`.
    pub fn version_id(&self) -> u64 {
        self.version_id
    }

    /// `consistency`.
    pub fn consistency(&self) -> Consistency {
        self.consistency
    }

    /// `hlc` (SPEC §9).
    pub fn hlc(&self) -> Hlc {
        self.hlc
    }

    /// `fingerprint_compat`: `None` for `""`, else the 32-byte digest its 64 hex digits
    /// spell.
    pub fn fingerprint_compat(&self) -> Option<Sha256Digest> {
        self.fingerprint_compat
    }

    /// The text this message was parsed from (`None` for built messages).
    pub fn source(&self) -> Option<&'a [u8]> {
        self.source
    }
}

impl PartialEq for FragmentMessage<'_> {
    fn eq(&self, other: &Self) -> bool {
        let strings_eq = |a: Option<JsonStr<'_>>, b: Option<JsonStr<'_>>| match (a, b) {
            (Some(a), Some(b)) => a.eq_decoded(&b),
            (None, None) => true,
            _ => false,
        };
        let (a, b) = (&self.identity, &other.identity);
        let identity_eq = a.payload_hash().eq_decoded(&b.payload_hash())
            && a.model_id().eq_decoded(&b.model_id())
            && a.model_revision().eq_decoded(&b.model_revision())
            && a.tokenizer_name().eq_decoded(&b.tokenizer_name())
            && a.tokenizer_revision().eq_decoded(&b.tokenizer_revision())
            && a.layer_range() == b.layer_range()
            && a.head_range() == b.head_range()
            && a.token_span() == b.token_span()
            && a.dtype() == b.dtype()
            && a.shape() == b.shape();
        identity_eq
            && self.tenant_id.eq_decoded(&other.tenant_id)
            && strings_eq(self.payload_ref, other.payload_ref)
            && self.payload_size == other.payload_size
            && self.ttl.to_bits() == other.ttl.to_bits()
            && self.reuse_score.to_bits() == other.reuse_score.to_bits()
            && self.version_id == other.version_id
            && self.consistency == other.consistency
            && self.hlc == other.hlc
            && self.fingerprint_compat == other.fingerprint_compat
    }
}

/// Check a tenant id by the envelope's rule (SPEC §3.1: 1–128 code points, none of
/// space `:` `/` `\` `"` LF TAB CR): `envelope_field` in `tenant_id` when it breaks it.
///
/// ```
/// use membrane_frame::envelope::check_tenant_id;
/// assert!(check_tenant_id("acme").is_ok());
/// assert_eq!(check_tenant_id("acme corp").unwrap_err().field(), Some("tenant_id"));
/// assert!(check_tenant_id("").is_err() && check_tenant_id(&"t".repeat(129)).is_err());
/// ```
pub fn check_tenant_id(tenant_id: &str) -> Result<(), Error> {
    rules::check_tenant(&JsonStr::from_plain(tenant_id))
        .map_err(|reason| Error::new(ErrorCode::EnvelopeField, reason).in_field("tenant_id"))
}

/// The field rules of SPEC §3.1 that do not depend on JSON syntax. Each returns the
/// reason a value is refused.
pub(crate) mod rules {
    use super::MAX_TENANT_CHARS;
    use crate::digest::Sha256Digest;
    use crate::json::JsonStr;

    pub(crate) fn check_tenant(value: &JsonStr<'_>) -> Result<(), &'static str> {
        const FORBIDDEN: &str = "tenant_id contains a forbidden character (space : / \\ \" LF TAB CR)";
        if value.is_empty() {
            return Err("tenant_id is empty");
        }
        if let Some(plain) = value.as_str() {
            // The forbidden characters are ASCII, so bytes say it; code points are the bytes
            // that do not continue a UTF-8 sequence, counted past 128 bytes only.
            if crate::json::contains_any(plain.as_bytes(), b" :/\\\"\n\t\r") {
                return Err(FORBIDDEN);
            }
            if MAX_TENANT_CHARS < plain.len() && plain.bytes().filter(|&b| b & 0xC0 != 0x80).count() > MAX_TENANT_CHARS
            {
                return Err("tenant_id is longer than 128 characters");
            }
            return Ok(());
        }
        let mut count = 0usize;
        for ch in value.chars() {
            if matches!(ch, ' ' | ':' | '/' | '\\' | '"' | '\n' | '\t' | '\r') {
                return Err(FORBIDDEN);
            }
            count = count.saturating_add(1);
        }
        if count > MAX_TENANT_CHARS {
            return Err("tenant_id is longer than 128 characters");
        }
        Ok(())
    }

    pub(crate) fn check_ttl(ttl: f64) -> Result<(), &'static str> {
        if ttl.is_finite() && ttl >= 0.0 {
            Ok(())
        } else {
            Err("ttl must be a finite number >= 0")
        }
    }

    pub(crate) fn check_reuse_score(score: f64) -> Result<(), &'static str> {
        if score.is_finite() && (0.0..=1.0).contains(&score) {
            Ok(())
        } else {
            Err("reuse_score must be a finite number in [0, 1]")
        }
    }

    pub(crate) fn check_version_id(version_id: u64) -> Result<(), &'static str> {
        if version_id >= 1 && version_id <= i64::MAX as u64 {
            Ok(())
        } else {
            Err("version_id must be an integer in 1..=2^63-1")
        }
    }

    /// `""` is `None`; 64 lower-case hex digits are the digest they spell.
    pub(crate) fn parse_fingerprint_compat(value: &JsonStr<'_>) -> Result<Option<Sha256Digest>, &'static str> {
        const REASON: &str = "fingerprint_compat must be \"\" or a 64-char hex digest (0-9a-f)";
        if value.is_empty() {
            return Ok(None);
        }
        let mut bytes = [0u8; 32];
        if let Some(plain) = value.as_str() {
            // Without escapes the text is the value.
            let hex = plain.as_bytes().first_chunk::<64>().filter(|_| plain.len() == 64).ok_or(REASON)?;
            return Sha256Digest::from_lower_hex(hex).map(Some).ok_or(REASON);
        }
        let mut count = 0usize;
        for ch in value.chars() {
            let nibble = match ch {
                '0'..='9' => ch as u8 - b'0',
                'a'..='f' => ch as u8 - b'a' + 10,
                _ => return Err(REASON),
            };
            let slot = bytes.get_mut(count / 2).ok_or(REASON)?;
            *slot |= if count.is_multiple_of(2) { nibble << 4 } else { nibble };
            count += 1;
        }
        if count != 64 {
            return Err(REASON);
        }
        Ok(Some(Sha256Digest(bytes)))
    }
}

pub(crate) fn field_error(field: &'static str, reason: &'static str) -> Error {
    Error::new(ErrorCode::EnvelopeField, reason).in_field(field)
}
