//! The canonical serialisation (SPEC §2.3) and the fingerprint (SPEC §2.4).

use super::{InclusiveRange, PayloadIdentity};
use crate::digest::{Sha256Digest, Sha256Hasher};
use crate::error::Error;
use crate::frame::trailing_spaces;
use crate::json::escape;
use crate::sink::{encoded_len_of, write_erased, write_into_checked, writes_exactly, ByteSink, ErasedSink, Stopped};

/// Write a non-negative integer in shortest decimal form.
pub(crate) fn write_u64<S: ByteSink + ?Sized>(sink: &mut S, value: u64) -> Result<(), S::Error> {
    sink.write_bytes(crate::decimal::decimal(value, &mut [0u8; 20]))
}

/// Write an integer in shortest decimal form.
pub(crate) fn write_i64<S: ByteSink + ?Sized>(sink: &mut S, value: i64) -> Result<(), S::Error> {
    if value < 0 {
        sink.write_bytes(b"-")?;
    }
    write_u64(sink, value.unsigned_abs())
}

fn write_range(sink: &mut ErasedSink<'_>, range: InclusiveRange) -> Result<(), Stopped> {
    sink.write_bytes(b"[")?;
    write_i64(sink, range.start)?;
    sink.write_bytes(b",")?;
    write_i64(sink, range.end)?;
    sink.write_bytes(b"]")
}

impl PayloadIdentity<'_> {
    /// Write the canonical serialisation: compact, keys sorted, pure ASCII — byte for
    /// byte Python's `json.dumps(d, sort_keys=True, separators=(",", ":"))`.
    pub fn write_canonical<S: ByteSink + ?Sized>(&self, sink: &mut S) -> Result<(), S::Error> {
        write_erased(sink, |sink| self.canonical(sink))
    }

    /// [`write_canonical`](Self::write_canonical) compiled once for every sink type (not
    /// inlined: a copy specialised to the sink at hand is what the erasure avoids).
    #[inline(never)]
    fn canonical(&self, sink: &mut ErasedSink<'_>) -> Result<(), Stopped> {
        sink.write_bytes(b"{\"dtype\":\"")?;
        sink.write_bytes(self.dtype.name().as_bytes())?;
        sink.write_bytes(b"\",\"head_range\":")?;
        write_range(sink, self.head_range)?;
        sink.write_bytes(b",\"layer_range\":")?;
        write_range(sink, self.layer_range)?;
        sink.write_bytes(b",\"model_id\":")?;
        escape(sink, &self.model_id)?;
        sink.write_bytes(b",\"model_revision\":")?;
        escape(sink, &self.model_revision)?;
        sink.write_bytes(b",\"payload_hash\":")?;
        escape(sink, &self.payload_hash)?;
        sink.write_bytes(b",\"shape\":[")?;
        for (i, &dim) in self.shape.iter().enumerate() {
            if i > 0 {
                sink.write_bytes(b",")?;
            }
            write_i64(sink, dim)?;
        }
        sink.write_bytes(b"],\"token_span\":")?;
        write_range(sink, self.token_span)?;
        sink.write_bytes(b",\"tokenizer_name\":")?;
        escape(sink, &self.tokenizer_name)?;
        sink.write_bytes(b",\"tokenizer_revision\":")?;
        escape(sink, &self.tokenizer_revision)?;
        sink.write_bytes(b"}")
    }

    /// Write the identity as the original `json.dumps(identity.to_dict())` does: keys in
    /// declaration order (`payload_hash, model_id, model_revision, tokenizer_name,
    /// tokenizer_revision, layer_range, head_range, token_span, dtype, shape`),
    /// separators `", "` and `": "`, ASCII escaping. This is the nested form inside the
    /// v5 envelope (SPEC §3.2); it is not the canonical form and not what the
    /// fingerprint hashes.
    ///
    /// ```
    /// # use membrane_frame::PayloadIdentity;
    /// let identity = PayloadIdentity::parse(br#"{"dtype":"int8","head_range":[-1,-1],"layer_range":[0,1],"model_id":"m","model_revision":"","payload_hash":"x","shape":[1],"token_span":[0,7],"tokenizer_name":"t","tokenizer_revision":""}"#)?;
    /// let mut out = Vec::new();
    /// identity.write_declaration_order(&mut membrane_frame::IoSink(&mut out)).unwrap();
    /// assert_eq!(out, br#"{"payload_hash": "x", "model_id": "m", "model_revision": "", "tokenizer_name": "t", "tokenizer_revision": "", "layer_range": [0, 1], "head_range": [-1, -1], "token_span": [0, 7], "dtype": "int8", "shape": [1]}"#);
    /// # Ok::<(), membrane_frame::Error>(())
    /// ```
    pub fn write_declaration_order<S: ByteSink + ?Sized>(&self, sink: &mut S) -> Result<(), S::Error> {
        write_erased(sink, |sink| self.declaration_order(sink))
    }

    /// [`write_declaration_order`](Self::write_declaration_order) compiled once.
    fn declaration_order(&self, sink: &mut ErasedSink<'_>) -> Result<(), Stopped> {
        fn spaced_range(sink: &mut ErasedSink<'_>, range: InclusiveRange) -> Result<(), Stopped> {
            sink.write_bytes(b"[")?;
            write_i64(sink, range.start)?;
            sink.write_bytes(b", ")?;
            write_i64(sink, range.end)?;
            sink.write_bytes(b"]")
        }
        sink.write_bytes(b"{\"payload_hash\": ")?;
        escape(sink, &self.payload_hash)?;
        sink.write_bytes(b", \"model_id\": ")?;
        escape(sink, &self.model_id)?;
        sink.write_bytes(b", \"model_revision\": ")?;
        escape(sink, &self.model_revision)?;
        sink.write_bytes(b", \"tokenizer_name\": ")?;
        escape(sink, &self.tokenizer_name)?;
        sink.write_bytes(b", \"tokenizer_revision\": ")?;
        escape(sink, &self.tokenizer_revision)?;
        sink.write_bytes(b", \"layer_range\": ")?;
        spaced_range(sink, self.layer_range)?;
        sink.write_bytes(b", \"head_range\": ")?;
        spaced_range(sink, self.head_range)?;
        sink.write_bytes(b", \"token_span\": ")?;
        spaced_range(sink, self.token_span)?;
        sink.write_bytes(b", \"dtype\": \"")?;
        sink.write_bytes(self.dtype.name().as_bytes())?;
        sink.write_bytes(b"\", \"shape\": [")?;
        for (i, &dim) in self.shape.iter().enumerate() {
            if i > 0 {
                sink.write_bytes(b", ")?;
            }
            write_i64(sink, dim)?;
        }
        sink.write_bytes(b"]}")
    }

    /// Length in bytes of the canonical serialisation (without any padding).
    pub fn canonical_len(&self) -> usize {
        if let Some(text) = self.proved_canonical_text() {
            return text.len();
        }
        encoded_len_of(|sink| self.write_canonical(sink))
    }

    /// The stored text without its padding, when parsing proved it canonical.
    fn proved_canonical_text(&self) -> Option<&[u8]> {
        let source = self.source.filter(|_| self.source_is_canonical)?;
        source.get(..source.len().saturating_sub(self.padding as usize))
    }

    /// The spaces (0x20) that follow a canonical stored text (SPEC §1.5): how an
    /// aligned frame's writer placed its payload. 0 when the text is not canonical
    /// (trailing whitespace there is only whitespace) and for built identities.
    ///
    /// ```
    /// # use membrane_frame::PayloadIdentity;
    /// let canonical = br#"{"dtype":"int8","head_range":[-1,-1],"layer_range":[0,1],"model_id":"m","model_revision":"","payload_hash":"x","shape":[1],"token_span":[0,7],"tokenizer_name":"t","tokenizer_revision":""}"#;
    /// let padded = [&canonical[..], b"    "].concat();
    /// let identity = PayloadIdentity::parse(&padded)?;
    /// assert!(identity.is_canonical());
    /// assert_eq!((identity.padding(), identity.canonical_len()), (4, canonical.len()));
    /// assert_eq!(identity.fingerprint(), PayloadIdentity::parse(canonical)?.fingerprint());
    /// let newline = [&canonical[..], b"\n"].concat();
    /// let identity = PayloadIdentity::parse(&newline)?;
    /// assert!(!identity.is_canonical() && identity.padding() == 0);
    /// # Ok::<(), membrane_frame::Error>(())
    /// ```
    pub fn padding(&self) -> usize {
        if self.source_is_canonical {
            return self.padding as usize;
        }
        self.padding_of_canonical_source().unwrap_or(0)
    }

    /// Write the canonical serialisation into `out`; returns the length written, or
    /// `buffer_too_small` with the length needed (and `out` untouched).
    pub fn write_canonical_into(&self, out: &mut [u8]) -> Result<usize, Error> {
        write_into_checked(out, self.canonical_len(), |sink| self.write_canonical(sink))
    }

    /// Whether the stored text is byte for byte the canonical serialisation, followed by
    /// zero or more spaces of padding (SPEC §1.5). Built identities are canonical by
    /// construction.
    pub fn is_canonical(&self) -> bool {
        self.source.is_none() || self.source_is_canonical || self.is_canonical_source()
    }

    fn is_canonical_source(&self) -> bool {
        self.padding_of_canonical_source().is_some()
    }

    /// The trailing spaces of the stored text, when the rest of it is the canonical
    /// serialisation (found by comparison).
    fn padding_of_canonical_source(&self) -> Option<usize> {
        let source = self.source?;
        let padding = trailing_spaces(source);
        let unpadded = source.get(..source.len() - padding)?;
        writes_exactly(unpadded, |sink| self.write_canonical(sink)).then_some(padding)
    }

    /// SHA-256 of the canonical serialisation. When parsing proved the stored text
    /// canonical (the spelling every writer uses), the text without its padding is
    /// hashed in one pass as it stands; otherwise the serialisation streams into the
    /// hasher (no comparison first: that would cost more than it saves). Either way
    /// nothing is allocated.
    ///
    /// ```
    /// # use membrane_frame::PayloadIdentity;
    /// let pretty = br#"{ "payload_hash": "x", "model_id": "m", "model_revision": "",
    ///   "tokenizer_name": "t", "tokenizer_revision": "", "layer_range": [0, 1],
    ///   "head_range": [-1, -1], "token_span": [0, 7], "dtype": "int8", "shape": [1] }"#;
    /// let compact = br#"{"dtype":"int8","head_range":[-1,-1],"layer_range":[0,1],"model_id":"m","model_revision":"","payload_hash":"x","shape":[1],"token_span":[0,7],"tokenizer_name":"t","tokenizer_revision":""}"#;
    /// let a = PayloadIdentity::parse(pretty)?;
    /// let b = PayloadIdentity::parse(compact)?;
    /// assert!(!a.is_canonical() && b.is_canonical());
    /// assert_eq!(a.fingerprint(), b.fingerprint());
    /// # Ok::<(), membrane_frame::Error>(())
    /// ```
    pub fn fingerprint(&self) -> Sha256Digest {
        if let Some(text) = self.proved_canonical_text() {
            return Sha256Digest::of(text);
        }
        let mut hasher = Sha256Hasher::new();
        let Ok(()) = self.write_canonical(&mut hasher);
        hasher.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sink::SliceSink;

    #[test]
    fn integers_in_shortest_form() {
        for value in [0, 7, -1, 10, i64::MAX, i64::MIN, -9_007_199_254_740_993] {
            let mut buf = [0u8; 24];
            let mut sink = SliceSink::new(&mut buf);
            write_i64(&mut sink, value).unwrap();
            assert_eq!(sink.written(), value.to_string().as_bytes());
        }
    }
}
