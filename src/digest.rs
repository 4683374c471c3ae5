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

    /// The digest 64 lower-case hex digits spell; `None` when a byte is anything else.
    ///
    /// A machine word of digits a step (SWAR; eight on 64-bit CPUs, four on 32-bit
    /// ones): a compare and branch a digit cost an envelope's `fingerprint_compat` ~300
    /// instructions (callgrind).
    pub(crate) fn from_lower_hex(hex: &[u8; 64]) -> Option<Sha256Digest> {
        const WORD: usize = core::mem::size_of::<usize>();
        const ONES: usize = usize::MAX / 0xFF;
        const HIGH: usize = ONES * 0x80;
        const LOW_BYTES: usize = usize::MAX / 0xFFFF * 0xFF;
        let mut digest = [0u8; 32];
        for (word, out) in hex.chunks_exact(WORD).zip(digest.chunks_exact_mut(WORD / 2)) {
            let x = usize::from_le_bytes(word.try_into().ok()?);
            if x & HIGH != 0 {
                return None;
            }
            // Every byte is below 0x80: adding 0x80 - n sets a byte's high bit exactly
            // when the byte is at least n, and no carry leaves the byte.
            let at_least = |n: u8| x.wrapping_add(ONES * usize::from(0x80 - n)) & HIGH;
            let digit = at_least(b'0') & !at_least(b'9' + 1);
            let letter = at_least(b'a') & !at_least(b'f' + 1);
            if !digit & !letter & HIGH != 0 {
                return None;
            }
            // '0'..'9' are 0x30..0x39, 'a'..'f' 0x61..0x66: the low nibble, plus 9 for letters.
            let nibbles = (x & (ONES * 0x0F)) + (letter >> 7) * 9;
            // Each pair of bytes (first digit, second digit) becomes one byte: the first
            // digit's nibble moved up beside the second's (added: the bits are disjoint).
            let pairs = ((nibbles & LOW_BYTES) << 4) + ((nibbles >> 8) & LOW_BYTES);
            for (i, byte) in out.iter_mut().enumerate() {
                *byte = (pairs >> (16 * i)) as u8;
            }
        }
        Some(Sha256Digest(digest))
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
    fn lower_hex_reads_as_the_digest_it_spells_and_any_other_byte_is_refused() {
        let digest = Sha256Digest::of(b"hello");
        let hex = *digest.to_hex().as_bytes();
        assert_eq!(Sha256Digest::from_lower_hex(&hex), Some(digest));
        let all = *b"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
        let expected: std::vec::Vec<u8> = (0..32).map(|i| (((2 * i % 16) << 4) | ((2 * i + 1) % 16)) as u8).collect();
        assert_eq!(Sha256Digest::from_lower_hex(&all).map(|d| d.0.to_vec()), Some(expected));
        // Every byte value at every position: a hex digit reads as its value, anything
        // else (upper case, `/`, `:`, `` ` ``, `g`, non-ASCII) is refused. Under Miri
        // (over two minutes for all 64) the positions at the ends of the first, a middle
        // and the last word.
        let positions: &[usize] = if cfg!(miri) { &[0, 7, 8, 31, 56, 63] } else { &[] };
        for at in (0..64).filter(|at| positions.is_empty() || positions.contains(at)) {
            for byte in 0..=255u8 {
                let mut text = hex;
                text[at] = byte;
                let value = match byte {
                    b'0'..=b'9' => Some(byte - b'0'),
                    b'a'..=b'f' => Some(byte - b'a' + 10),
                    _ => None,
                };
                let got = Sha256Digest::from_lower_hex(&text);
                match value {
                    None => assert_eq!(got, None, "{byte:#04x} at {at}"),
                    Some(nibble) => {
                        let mut want = digest.0;
                        let shift = if at % 2 == 0 { 4 } else { 0 };
                        want[at / 2] = (want[at / 2] & !(0xF << shift)) | (nibble << shift);
                        assert_eq!(got, Some(Sha256Digest(want)), "{byte:#04x} at {at}");
                    }
                }
            }
        }
    }

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
