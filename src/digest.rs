//! SHA-256 digests as the formats use them: the frame trailer (first 8 bytes), the
//! `payload_hash` and fingerprint (64 lower-case hex digits), and the running hasher
//! behind them. This is the one module that names `sha2`: a faster kernel, when one
//! comes, changes only this file.

use crate::json::JsonStr;
use crate::page_ahead;
use crate::sink::ByteSink;
use core::convert::Infallible;
use core::fmt;
use sha2::{Digest, Sha256};

/// SHA-256 over bytes that arrive in pieces (a payload read in chunks, a serialisation
/// written into it as a [`ByteSink`]).
///
/// ```
/// use membrane_frame::{Sha256Digest, Sha256Hasher};
/// let mut hasher = Sha256Hasher::new();
/// hasher.update(b"hel");
/// hasher.update(b"lo");
/// assert_eq!(hasher.finish(), Sha256Digest::of(b"hello"));
/// ```
#[derive(Clone, Default)]
pub struct Sha256Hasher(Sha256);

impl Sha256Hasher {
    /// A hasher that has seen nothing.
    pub fn new() -> Sha256Hasher {
        Sha256Hasher(Sha256::new())
    }

    /// Hash `bytes` after everything before (a page at a time, read ahead:
    /// `crate::page_ahead`).
    pub fn update(&mut self, bytes: &[u8]) {
        page_ahead::in_pieces(bytes, |piece| self.0.update(piece));
    }

    /// The digest of everything given.
    pub fn finish(self) -> Sha256Digest {
        Sha256Digest(self.0.finalize().into())
    }
}

impl fmt::Debug for Sha256Hasher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Sha256Hasher")
    }
}

impl ByteSink for Sha256Hasher {
    type Error = Infallible;
    fn write_bytes(&mut self, bytes: &[u8]) -> Result<(), Infallible> {
        self.update(bytes);
        Ok(())
    }
}

/// A SHA-256 digest.
///
/// ```
/// use membrane_frame::Sha256Digest;
/// let digest = Sha256Digest::of(b"hello");
/// assert_eq!(digest.to_hex().as_str(),
///            "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824");
/// assert_eq!(digest.trailer(), [0x2c, 0xf2, 0x4d, 0xba, 0x5f, 0xb0, 0xa3, 0x0e]);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Sha256Digest(pub [u8; 32]);

impl Sha256Digest {
    /// The digest of `bytes`.
    pub fn of(bytes: &[u8]) -> Sha256Digest {
        let mut hasher = Sha256Hasher::new();
        hasher.update(bytes);
        hasher.finish()
    }

    /// The raw 32 bytes.
    pub const fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// The frame trailer: the first 8 bytes.
    pub fn trailer(&self) -> [u8; 8] {
        let mut trailer = [0u8; 8];
        trailer.copy_from_slice(self.0.get(..8).unwrap_or(&[0; 8]));
        trailer
    }

    /// The 64 lower-case hex digits.
    pub fn to_hex(&self) -> HexDigest {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut out = [0u8; 64];
        for (pair, byte) in out.chunks_exact_mut(2).zip(self.0.iter()) {
            let digit = |n: u8| HEX.get(usize::from(n)).copied().unwrap_or(b'0');
            pair.copy_from_slice(&[digit(byte >> 4), digit(byte & 0xF)]);
        }
        HexDigest(out)
    }

    /// Whether a JSON string value is exactly this digest in lower-case hex.
    pub fn matches_hex(&self, value: &JsonStr<'_>) -> bool {
        value.eq_str(self.to_hex().as_str())
    }
}

impl fmt::Debug for Sha256Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Sha256Digest({})", self.to_hex().as_str())
    }
}

impl fmt::Display for Sha256Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.to_hex().as_str())
    }
}

/// 64 lower-case hex digits of a digest, on the stack.
///
/// ```
/// let hex = membrane_frame::Sha256Digest::of(b"").to_hex();
/// assert!(hex.as_str().starts_with("e3b0c442"));
/// assert_eq!(hex.as_bytes().len(), 64);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct HexDigest([u8; 64]);

impl HexDigest {
    /// The digits as text.
    pub fn as_str(&self) -> &str {
        // Only ASCII hex digits are ever stored.
        core::str::from_utf8(&self.0).unwrap_or("")
    }

    /// The digits as bytes.
    pub const fn as_bytes(&self) -> &[u8; 64] {
        &self.0
    }
}

impl fmt::Debug for HexDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for HexDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hasher_shows_its_name_and_nothing_of_what_it_has_seen() {
        let mut hasher = Sha256Hasher::new();
        hasher.update(b"secret");
        assert_eq!(std::format!("{hasher:?}"), "Sha256Hasher");
    }

    #[test]
    fn a_digest_displays_as_its_hex_and_debugs_with_its_type() {
        let digest = Sha256Digest::of(b"");
        let hex = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
        assert_eq!(std::format!("{digest}"), hex);
        assert_eq!(std::format!("{digest:?}"), std::format!("Sha256Digest({hex})"));
        // The hex form on its own prints the digits either way.
        assert_eq!(std::format!("{}", digest.to_hex()), hex);
        assert_eq!(std::format!("{:?}", digest.to_hex()), hex);
    }
}
