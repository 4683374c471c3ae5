//! Emitting an envelope exactly as the original `to_bytes` does (SPEC §3.2), and
//! building one from Rust values.

use super::{field_error, rules, Consistency, FragmentMessage};
use crate::digest::Sha256Digest;
use crate::error::Error;
use crate::hlc::Hlc;
use crate::identity::{write_u64, PayloadIdentity};
use crate::json::{write_escaped, JsonStr};
use crate::pyfloat::write_repr;
use crate::sink::{encoded_len_of, write_into_checked, writes_exactly, ByteSink};

impl FragmentMessage<'_> {
    /// Write the `to_bytes` text: keys in table order, separators `", "` and `": "`,
    /// ASCII escaping, the identity in declaration order, `payload_ref` `null` when
    /// absent, `ttl` and `reuse_score` as Python `repr(float)`.
    ///
    /// ```
    /// use membrane_frame::envelope::FragmentMessage;
    /// let text = br#"{"ttl": 60, "schema_version": 5, "tenant_id": "acme", "identity": {"payload_hash": "x", "model_id": "m", "model_revision": "", "tokenizer_name": "t", "tokenizer_revision": "", "layer_range": [0, 1], "head_range": [-1, -1], "token_span": [0, 7], "dtype": "int8", "shape": [1]}, "payload_ref": null, "payload_size": 0, "reuse_score": 1e-5, "version_id": 1, "consistency": "strong", "hlc": 0, "fingerprint_compat": ""}"#;
    /// let message = FragmentMessage::parse(text)?;
    /// let mut out = [0u8; 512];
    /// let len = message.write_into(&mut out)?;
    /// assert_eq!(&out[..len], br#"{"schema_version": 5, "tenant_id": "acme", "identity": {"payload_hash": "x", "model_id": "m", "model_revision": "", "tokenizer_name": "t", "tokenizer_revision": "", "layer_range": [0, 1], "head_range": [-1, -1], "token_span": [0, 7], "dtype": "int8", "shape": [1]}, "payload_ref": null, "payload_size": 0, "ttl": 60.0, "reuse_score": 1e-05, "version_id": 1, "consistency": "strong", "hlc": 0, "fingerprint_compat": ""}"#);
    /// assert_eq!(len, message.encoded_len());
    /// # Ok::<(), membrane_frame::Error>(())
    /// ```
    pub fn write_to<S: ByteSink + ?Sized>(&self, sink: &mut S) -> Result<(), S::Error> {
        sink.write_bytes(b"{\"schema_version\": 5, \"tenant_id\": ")?;
        write_escaped(sink, &self.tenant_id)?;
        sink.write_bytes(b", \"identity\": ")?;
        self.identity.write_declaration_order(sink)?;
        sink.write_bytes(b", \"payload_ref\": ")?;
        match &self.payload_ref {
            Some(reference) => write_escaped(sink, reference)?,
            None => sink.write_bytes(b"null")?,
        }
        sink.write_bytes(b", \"payload_size\": ")?;
        write_u64(sink, self.payload_size)?;
        sink.write_bytes(b", \"ttl\": ")?;
        write_repr(sink, self.ttl)?;
        sink.write_bytes(b", \"reuse_score\": ")?;
        write_repr(sink, self.reuse_score)?;
        sink.write_bytes(b", \"version_id\": ")?;
        write_u64(sink, self.version_id)?;
        sink.write_bytes(b", \"consistency\": \"")?;
        sink.write_bytes(self.consistency.name().as_bytes())?;
        sink.write_bytes(b"\", \"hlc\": ")?;
        write_u64(sink, self.hlc.raw())?;
        sink.write_bytes(b", \"fingerprint_compat\": \"")?;
        if let Some(digest) = &self.fingerprint_compat {
            sink.write_bytes(digest.to_hex().as_bytes())?;
        }
        sink.write_bytes(b"\"}")
    }

    /// Length in bytes of the `to_bytes` text.
    pub fn encoded_len(&self) -> usize {
        encoded_len_of(|sink| self.write_to(sink))
    }

    /// Write the `to_bytes` text into `out`; returns its length, or
    /// `buffer_too_small` with the length needed (and `out` untouched).
    pub fn write_into(&self, out: &mut [u8]) -> Result<usize, Error> {
        write_into_checked(out, self.encoded_len(), |sink| self.write_to(sink))
    }

    /// Whether the text this message was parsed from is byte for byte what
    /// [`write_to`](Self::write_to) emits (the original `to_bytes` output). Built
    /// messages are canonical by construction.
    pub fn is_canonical(&self) -> bool {
        self.source.is_none_or(|source| writes_exactly(source, |sink| self.write_to(sink)))
    }
}

/// Builds a [`FragmentMessage`] from Rust values; [`build`](Self::build) checks every
/// field rule of SPEC §3.1 (`envelope_field` with the field's name).
///
/// Unset fields take these values: `payload_ref` null, `payload_size` 0, `ttl` 0.0,
/// `reuse_score` 0.0, `version_id` 1, `consistency` strong, `hlc` 0,
/// `fingerprint_compat` `""`.
///
/// ```
/// use membrane_frame::envelope::{Consistency, FragmentMessage};
/// use membrane_frame::{Frame, Hlc};
/// # let bytes = membrane_frame::example_frame();
/// # let frame = Frame::parse(&bytes)?;
/// let identity = frame.identity().unwrap().clone();
/// let message = FragmentMessage::builder("acme", identity)
///     .payload_ref(Some("blob-1"))
///     .payload_size(5)
///     .ttl(60.0)
///     .reuse_score(0.87)
///     .version_id(3)
///     .consistency(Consistency::Quorum)
///     .hlc(Hlc::pack(1_735_600_000_000, 0)?)
///     .derive_fingerprint_compat()
///     .build()?;
/// let mut out = [0u8; 1024];
/// let len = message.write_into(&mut out)?;
/// assert_eq!(FragmentMessage::parse(&out[..len])?, message);
/// assert!(FragmentMessage::builder("a b", message.identity().clone()).build().is_err());
/// # Ok::<(), membrane_frame::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct EnvelopeBuilder<'a> {
    tenant_id: &'a str,
    identity: PayloadIdentity<'a>,
    payload_ref: Option<&'a str>,
    payload_size: u64,
    ttl: f64,
    reuse_score: f64,
    version_id: u64,
    consistency: Consistency,
    hlc: Hlc,
    fingerprint_compat: CompatChoice<'a>,
}

#[derive(Clone, Copy, Debug)]
enum CompatChoice<'a> {
    Value(Option<Sha256Digest>),
    Hex(&'a str),
    Derive,
}

impl<'a> FragmentMessage<'a> {
    /// Start building a message for `tenant_id` about `identity`.
    pub fn builder(tenant_id: &'a str, identity: PayloadIdentity<'a>) -> EnvelopeBuilder<'a> {
        EnvelopeBuilder {
            tenant_id,
            identity,
            payload_ref: None,
            payload_size: 0,
            ttl: 0.0,
            reuse_score: 0.0,
            version_id: 1,
            consistency: Consistency::Strong,
            hlc: Hlc::ZERO,
            fingerprint_compat: CompatChoice::Value(None),
        }
    }
}

impl<'a> EnvelopeBuilder<'a> {
    /// `payload_ref` (`None` is written as `null`).
    #[must_use]
    pub fn payload_ref(mut self, payload_ref: Option<&'a str>) -> Self {
        self.payload_ref = payload_ref;
        self
    }

    /// `payload_size`.
    #[must_use]
    pub fn payload_size(mut self, payload_size: u64) -> Self {
        self.payload_size = payload_size;
        self
    }

    /// `ttl`, seconds: finite and `>= 0`.
    #[must_use]
    pub fn ttl(mut self, ttl: f64) -> Self {
        self.ttl = ttl;
        self
    }

    /// `reuse_score`: finite, in `[0, 1]`.
    #[must_use]
    pub fn reuse_score(mut self, reuse_score: f64) -> Self {
        self.reuse_score = reuse_score;
        self
    }

    /// `version_id`: `1 ..= 2^63-1`.
    #[must_use]
    pub fn version_id(mut self, version_id: u64) -> Self {
        self.version_id = version_id;
        self
    }

    /// `consistency`.
    #[must_use]
    pub fn consistency(mut self, consistency: Consistency) -> Self {
        self.consistency = consistency;
        self
    }

    /// `hlc`.
    #[must_use]
    pub fn hlc(mut self, hlc: Hlc) -> Self {
        self.hlc = hlc;
        self
    }

    /// `fingerprint_compat` (`None` is written as `""`).
    #[must_use]
    pub fn fingerprint_compat(mut self, digest: Option<Sha256Digest>) -> Self {
        self.fingerprint_compat = CompatChoice::Value(digest);
        self
    }

    /// `fingerprint_compat` as written in an envelope: `""` or 64 lower-case hex digits
    /// (anything else fails [`build`](Self::build) with `envelope_field`).
    #[must_use]
    pub fn fingerprint_compat_hex(mut self, hex: &'a str) -> Self {
        self.fingerprint_compat = CompatChoice::Hex(hex);
        self
    }

    /// `fingerprint_compat` derived from the identity
    /// ([`PayloadIdentity::fingerprint_compat`]).
    #[must_use]
    pub fn derive_fingerprint_compat(mut self) -> Self {
        self.fingerprint_compat = CompatChoice::Derive;
        self
    }

    /// Check the field rules and make the message.
    pub fn build(self) -> Result<FragmentMessage<'a>, Error> {
        let tenant_id = JsonStr::from_plain(self.tenant_id);
        rules::check_tenant(&tenant_id).map_err(|reason| field_error("tenant_id", reason))?;
        rules::check_ttl(self.ttl).map_err(|reason| field_error("ttl", reason))?;
        rules::check_reuse_score(self.reuse_score).map_err(|reason| field_error("reuse_score", reason))?;
        rules::check_version_id(self.version_id).map_err(|reason| field_error("version_id", reason))?;
        let fingerprint_compat = match self.fingerprint_compat {
            CompatChoice::Value(digest) => digest,
            CompatChoice::Hex(hex) => rules::parse_fingerprint_compat(&JsonStr::from_plain(hex))
                .map_err(|reason| field_error("fingerprint_compat", reason))?,
            CompatChoice::Derive => Some(self.identity.fingerprint_compat()),
        };
        Ok(FragmentMessage {
            source: None,
            tenant_id,
            identity: self.identity,
            payload_ref: self.payload_ref.map(JsonStr::from_plain),
            payload_size: self.payload_size,
            ttl: self.ttl,
            reuse_score: self.reuse_score,
            version_id: self.version_id,
            consistency: self.consistency,
            hlc: self.hlc,
            fingerprint_compat,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::{Dtype, IdentityValues, InclusiveRange};

    fn identity() -> PayloadIdentity<'static> {
        values().build().unwrap()
    }

    fn values() -> IdentityValues<'static> {
        IdentityValues {
            payload_hash: "x",
            model_id: "m\u{e8}",
            model_revision: "",
            tokenizer_name: "t",
            tokenizer_revision: "",
            layer_range: InclusiveRange::new(0, 1),
            head_range: InclusiveRange::ALL_HEADS,
            token_span: InclusiveRange::new(0, 7),
            dtype: Dtype::Int8,
            shape: &[1, 2],
        }
    }

    #[test]
    fn builder_rejects_each_rule() {
        let cases: [(EnvelopeBuilder<'_>, &str); 6] = [
            (FragmentMessage::builder("", identity()), "tenant_id"),
            (FragmentMessage::builder("a:b", identity()), "tenant_id"),
            (FragmentMessage::builder("a", identity()).ttl(f64::NAN), "ttl"),
            (FragmentMessage::builder("a", identity()).ttl(-1.0), "ttl"),
            (FragmentMessage::builder("a", identity()).reuse_score(1.5), "reuse_score"),
            (FragmentMessage::builder("a", identity()).version_id(1 << 63), "version_id"),
        ];
        for (builder, field) in cases {
            let err = builder.build().unwrap_err();
            assert_eq!((err.code(), err.field()), (crate::ErrorCode::EnvelopeField, Some(field)));
        }
    }

    #[test]
    fn built_messages_round_trip_through_the_reader() {
        let message = FragmentMessage::builder("t\u{e9}nant", identity())
            .payload_ref(Some("r\"ef"))
            .payload_size(u64::MAX)
            .ttl(1e-7)
            .reuse_score(1.0)
            .version_id(i64::MAX as u64)
            .consistency(Consistency::Eventual)
            .hlc(Hlc(u64::MAX))
            .derive_fingerprint_compat()
            .build()
            .unwrap();
        let mut out = [0u8; 1024];
        let len = message.write_into(&mut out).unwrap();
        assert_eq!(len, message.encoded_len());
        let text = core::str::from_utf8(&out[..len]).unwrap();
        assert!(text.is_ascii());
        assert!(text.contains("\"ttl\": 1e-07, \"reuse_score\": 1.0,"), "{text}");
        assert!(text.contains("\"tenant_id\": \"t\\u00e9nant\""), "{text}");
        let parsed = FragmentMessage::parse(&out[..len]).unwrap();
        assert!(parsed.is_canonical());
        assert_eq!(parsed, message);
        let mut small = [0u8; 16];
        assert_eq!(message.write_into(&mut small).unwrap_err().needed(), Some(len as u64));
    }

    #[test]
    fn consistency_names_are_exact_and_are_what_display_writes() {
        let names = Consistency::ALL.map(Consistency::name);
        assert_eq!(names, ["strong", "quorum", "eventual"]);
        for consistency in Consistency::ALL {
            assert_eq!(Consistency::from_name(consistency.name()), Some(consistency));
            assert_eq!(std::format!("{consistency}"), consistency.name());
        }
        for other in ["Quorum", "", "quorum ", "strongly"] {
            assert_eq!(Consistency::from_name(other), None, "{other:?}");
        }
    }

    #[test]
    fn messages_are_equal_exactly_when_every_field_is() {
        let builder = |tenant: &'static str, identity: PayloadIdentity<'static>| {
            FragmentMessage::builder(tenant, identity)
                .payload_ref(Some("ref"))
                .payload_size(5)
                .ttl(2.0)
                .reuse_score(0.5)
                .version_id(3)
                .consistency(Consistency::Quorum)
                .hlc(Hlc(9))
        };
        let message = builder("tenant", identity()).build().unwrap();
        // A parsed message equals the built one it was written from, and keeps its text.
        let mut out = [0u8; 1024];
        let len = message.write_into(&mut out).unwrap();
        let parsed = FragmentMessage::parse(&out[..len]).unwrap();
        assert_eq!(parsed, message);
        assert_eq!(parsed.source(), Some(&out[..len]));
        assert_eq!(message.source(), None);
        // Strings compare decoded: an escaped spelling of the same tenant is equal.
        let text = core::str::from_utf8(&out[..len]).unwrap().replace("\"tenant\"", "\"\\u0074enant\"");
        assert_eq!(FragmentMessage::parse(text.as_bytes()).unwrap(), message);
        // A change to any one field makes the messages differ.
        let with = |edit: fn(&mut IdentityValues<'static>)| {
            let mut values = values();
            edit(&mut values);
            builder("tenant", values.build().unwrap())
        };
        let changed = [
            ("tenant_id", builder("tenant2", identity())),
            ("payload_hash", with(|v| v.payload_hash = "y")),
            ("model_id", with(|v| v.model_id = "m")),
            ("model_revision", with(|v| v.model_revision = "r")),
            ("tokenizer_name", with(|v| v.tokenizer_name = "u")),
            ("tokenizer_revision", with(|v| v.tokenizer_revision = "r")),
            ("layer_range", with(|v| v.layer_range = InclusiveRange::new(0, 2))),
            ("head_range", with(|v| v.head_range = InclusiveRange::new(0, 2))),
            ("token_span", with(|v| v.token_span = InclusiveRange::new(1, 7))),
            ("dtype", with(|v| v.dtype = Dtype::Float16)),
            ("shape", with(|v| v.shape = &[2, 1])),
            ("payload_ref", builder("tenant", identity()).payload_ref(None)),
            ("payload_ref", builder("tenant", identity()).payload_ref(Some("other"))),
            ("payload_size", builder("tenant", identity()).payload_size(6)),
            ("ttl", builder("tenant", identity()).ttl(2.5)),
            ("reuse_score", builder("tenant", identity()).reuse_score(0.25)),
            ("version_id", builder("tenant", identity()).version_id(4)),
            ("consistency", builder("tenant", identity()).consistency(Consistency::Strong)),
            ("hlc", builder("tenant", identity()).hlc(Hlc(10))),
            ("fingerprint_compat", builder("tenant", identity()).derive_fingerprint_compat()),
        ];
        for (field, other) in changed {
            let other = other.build().unwrap();
            assert_ne!(other, message, "{field} differs");
            assert_ne!(message, other, "{field} differs");
        }
    }

    #[test]
    fn fingerprint_compat_hex_is_the_digest_it_spells_or_an_envelope_field_error() {
        let hex = "00112233445566778899aabbccddeeff0123456789abcdef0f1e2d3c4b5a6978";
        let built = FragmentMessage::builder("a", identity()).fingerprint_compat_hex(hex).build().unwrap();
        let digest = built.fingerprint_compat().unwrap();
        assert_eq!(digest.0[..4], [0x00, 0x11, 0x22, 0x33]);
        assert_eq!(digest.0[31], 0x78);
        let by_value = FragmentMessage::builder("a", identity()).fingerprint_compat(Some(digest)).build().unwrap();
        assert_eq!(built, by_value);
        let empty = FragmentMessage::builder("a", identity()).fingerprint_compat_hex("").build().unwrap();
        assert_eq!(empty.fingerprint_compat(), None);
        for bad in [&hex[1..], &hex.to_uppercase(), "xyz"] {
            let err = FragmentMessage::builder("a", identity()).fingerprint_compat_hex(bad).build().unwrap_err();
            assert_eq!((err.code(), err.field()), (crate::ErrorCode::EnvelopeField, Some("fingerprint_compat")));
        }
    }
}
