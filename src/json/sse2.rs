//! Sixteen string bytes a step with SSE2: the one `unsafe` of the JSON reader, a
//! measured kernel (docs/performance.md, session 9). SSE2 is part of every x86-64
//! target, so the module is compiled only where the build enables it
//! (`target_feature = "sse2"`), and the CPU running the code has it; the one load reads
//! a 16-byte array. Everywhere else the string scanner uses its eight-byte words.
#![allow(unsafe_code)]

use core::arch::x86_64::{
    _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
};

/// Bit `i` set when byte `i` of `chunk` is not plain in a string: below 0x20, `"` or
/// `\`.
#[inline(always)]
pub(super) fn special_lanes(chunk: &[u8; 16]) -> u32 {
    // SAFETY: this module is compiled only with SSE2 enabled for the whole build (see
    // the module doc), so the CPU has the instructions `special_lanes_sse2` uses.
    unsafe { special_lanes_sse2(chunk) }
}

#[target_feature(enable = "sse2")]
fn special_lanes_sse2(chunk: &[u8; 16]) -> u32 {
    // SAFETY: `chunk` is 16 readable bytes; the load needs no alignment.
    let x = unsafe { _mm_loadu_si128(chunk.as_ptr().cast()) };
    let quote = _mm_cmpeq_epi8(x, _mm_set1_epi8(b'"' as i8));
    let backslash = _mm_cmpeq_epi8(x, _mm_set1_epi8(b'\\' as i8));
    // Below 0x20 exactly when the unsigned minimum with 0x1F is the byte itself.
    let control = _mm_cmpeq_epi8(_mm_min_epu8(x, _mm_set1_epi8(0x1F)), x);
    _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(quote, backslash), control)) as u32
}
