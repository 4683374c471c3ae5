//! Aligned frames (SPEC §1.5): where a writer puts the payload, and how many spaces of
//! padding after the canonical identity put it there.
//!
//! The payload of a frame starts at `22 + identity_len`, so its alignment follows from
//! the identity's length. A writer asked for alignment `A` at base offset `B` (where the
//! frame starts in its file or buffer) appends the fewest spaces to the canonical
//! identity that make `B + 22 + L` a multiple of `A`. Every v5 reader accepts the
//! spaces (JSON whitespace after the object), and readers count them as padding.

use super::header::MIN_FRAME_PREFIX;
use crate::error::{Error, ErrorCode};

/// The largest alignment a writer may be asked for: a page, what O_DIRECT and
/// GPUDirect Storage need.
pub const MAX_PAYLOAD_ALIGN: u32 = 4096;

/// Where a writer places the payload: a multiple of `align` bytes from the start of the
/// file or buffer, given that the frame itself starts at byte `base` of it.
///
/// ```
/// use membrane_frame::frame::PayloadAlignment;
/// let page = PayloadAlignment::new(4096, 0)?;
/// // A 283-byte canonical identity: the payload would start at 22 + 283 = 305.
/// assert_eq!(page.padding_for(283), 4096 - 305);
/// assert_eq!(PayloadAlignment::NONE.padding_for(283), 0);
/// // The frame will be written at byte 100 of its file: 100 + 22 + 283 + 19 = 424 = 8 * 53.
/// assert_eq!(PayloadAlignment::new(8, 100)?.padding_for(283), 3);
/// assert!(PayloadAlignment::new(3, 0).is_err()); // not a power of two
/// # Ok::<(), membrane_frame::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PayloadAlignment {
    align: u32,
    base: u64,
}

impl Default for PayloadAlignment {
    fn default() -> PayloadAlignment {
        PayloadAlignment::NONE
    }
}

impl PayloadAlignment {
    /// Alignment 1 at base 0: no padding, the bytes of the original writer.
    pub const NONE: PayloadAlignment = PayloadAlignment { align: 1, base: 0 };

    /// `align` must be a power of two from 1 to [`MAX_PAYLOAD_ALIGN`]; anything else is
    /// `invalid_argument` (field `align`). `base` is any offset.
    pub const fn new(align: u32, base: u64) -> Result<PayloadAlignment, Error> {
        if !align.is_power_of_two() || align > MAX_PAYLOAD_ALIGN {
            return Err(
                Error::new(ErrorCode::InvalidArgument, "align must be a power of two from 1 to 4096").in_field("align")
            );
        }
        Ok(PayloadAlignment { align, base })
    }

    /// The alignment `A`.
    pub const fn align(&self) -> u32 {
        self.align
    }

    /// The base offset `B`.
    pub const fn base(&self) -> u64 {
        self.base
    }

    /// The fewest spaces `N` such that `(B + 22 + canonical_len + N) mod A == 0`.
    pub const fn padding_for(&self, canonical_len: u32) -> u32 {
        let mask = self.align as u64 - 1;
        // A divides 2^64, so wrapping sums keep the residue mod A.
        let start = self.base.wrapping_add(MIN_FRAME_PREFIX as u64).wrapping_add(canonical_len as u64);
        (start.wrapping_neg() & mask) as u32
    }
}

/// The number of space bytes (0x20) that end `text`.
///
/// Padding may run to 4095 bytes, so the run is measured 32 bytes a step with an OR of
/// differences the compiler vectorises, not a byte loop.
pub(crate) fn trailing_spaces(text: &[u8]) -> usize {
    const SPACES: u8 = b' ';
    // Most texts have no padding: one compare (the word loop cost a canonical identity
    // ~200 of its 4 100 instructions, callgrind).
    if text.last() != Some(&SPACES) {
        return 0;
    }
    let mut end = text.len();
    let (head, words) = text.as_rchunks::<32>();
    for word in words.iter().rev() {
        if word.iter().fold(0, |differs, &byte| differs | (byte ^ SPACES)) != 0 {
            // The run ends in this word: count its last spaces one by one.
            return text.len() - end + word.iter().rev().take_while(|&&byte| byte == SPACES).count();
        }
        end -= 32;
    }
    text.len() - end + head.iter().rev().take_while(|&&byte| byte == SPACES).count()
}

/// The largest power of two (up to 2^63) that divides `offset`; for 0, 2^63. How a
/// tool words the alignment an offset happens to have.
pub const fn alignment_of(offset: u64) -> u64 {
    if offset == 0 {
        1 << 63
    } else {
        1 << offset.trailing_zeros()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg_attr(miri, ignore = "25 000 texts; the identity parse tests run it on padded texts under Miri")]
    fn trailing_spaces_counts_the_run_at_the_end_at_every_length_and_position() {
        for len in 0..100 {
            for run in 0..=len {
                for stop in [b'}', b'\n', b'\t', 0x20 ^ 0x80, 0] {
                    let mut text = std::vec![b'x'; len - run];
                    if let Some(last) = text.last_mut() {
                        *last = stop;
                    }
                    text.resize(len, b' ');
                    let expected = text.iter().rev().take_while(|&&b| b == b' ').count();
                    assert_eq!(trailing_spaces(&text), expected, "{len} {run} {stop}");
                }
            }
        }
        // Two equal bytes in the last word must not cancel out (an XOR would).
        assert_eq!(trailing_spaces(&[&b"}}"[..], &[b' '; 30]].concat()), 30);
        assert_eq!(trailing_spaces(&[&[b'x'; 40][..], b"}}", &[b' '; 62]].concat()), 62);
    }

    #[test]
    #[cfg_attr(miri, ignore = "a search of up to 4096 candidates per case: arithmetic only, nothing for Miri")]
    fn padding_is_the_fewest_spaces_that_align_the_payload() {
        for align in (0..=12).map(|shift| 1u32 << shift) {
            for base in [0u64, 1, 100, 4095, u64::MAX - 5, u64::MAX] {
                let placement = PayloadAlignment::new(align, base).unwrap();
                for canonical_len in [0u32, 1, 250, 283, 4073, 70000] {
                    let padding = placement.padding_for(canonical_len);
                    let fewest = (0..align)
                        .find(|n| {
                            (base as u128 + 22 + u128::from(canonical_len) + u128::from(*n))
                                .is_multiple_of(u128::from(align))
                        })
                        .unwrap();
                    assert_eq!(padding, fewest, "A {align} B {base} L {canonical_len}");
                }
            }
        }
    }

    #[test]
    fn only_powers_of_two_up_to_a_page_are_alignments() {
        let boundaries = [0, 1, 2, 3, 64, 100, 4095, 4096, 4097, 8192];
        let candidates: std::vec::Vec<u32> = if cfg!(miri) { boundaries.to_vec() } else { (0..=8192).collect() };
        for align in candidates {
            let ok = align.is_power_of_two() && align <= 4096;
            assert_eq!(PayloadAlignment::new(align, 0).is_ok(), ok, "{align}");
        }
        assert_eq!(PayloadAlignment::new(0, 0).unwrap_err().code(), ErrorCode::InvalidArgument);
        assert_eq!(PayloadAlignment::default(), PayloadAlignment::NONE);
        let placement = PayloadAlignment::new(64, 100).unwrap();
        assert_eq!((placement.align(), placement.base()), (64, 100));
        assert_eq!((PayloadAlignment::NONE.align(), PayloadAlignment::NONE.base()), (1, 0));
    }

    #[test]
    fn alignment_of_an_offset_is_its_largest_power_of_two_divisor() {
        assert_eq!(alignment_of(4096), 4096);
        assert_eq!(alignment_of(312), 8);
        assert_eq!(alignment_of(305), 1);
        assert_eq!(alignment_of(0), 1 << 63);
        assert_eq!(alignment_of(3 << 20), 1 << 20);
    }
}
