//! The JSON reader's SSE2 kernels, its only `unsafe`, each measured (`cargo bench
//! --bench envelope`, docs/performance.md): string bytes and a tenant_id's forbidden bytes sixteen a step, and an
//! ASCII text taken as a `str` after a check sixty-four bytes a step. SSE2 is part of
//! every x86-64 target, so the module is compiled only where the build enables it
//! (`target_feature = "sse2"`), and the CPU running the code has it; every load reads a
//! 16-byte array. Elsewhere the string scanner uses its eight-byte words, the tenant
//! check a byte loop, and `core::str::from_utf8` checks every text.
#![allow(unsafe_code)]

use core::arch::x86_64::{
    __m128i, _mm_add_epi8, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128,
    _mm_set1_epi8,
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
#[inline]
fn special_lanes_sse2(chunk: &[u8; 16]) -> u32 {
    // SAFETY: `chunk` is 16 readable bytes; the load needs no alignment.
    let x = unsafe { _mm_loadu_si128(chunk.as_ptr().cast()) };
    let quote = _mm_cmpeq_epi8(x, _mm_set1_epi8(b'"' as i8));
    let backslash = _mm_cmpeq_epi8(x, _mm_set1_epi8(b'\\' as i8));
    // Below 0x20 exactly when the unsigned minimum with 0x1F is the byte itself.
    let control = _mm_cmpeq_epi8(_mm_min_epu8(x, _mm_set1_epi8(0x1F)), x);
    _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(quote, backslash), control)) as u32
}

/// `bytes` as a `str` when every byte is ASCII (so valid UTF-8); `None` when one is
/// not (the caller then asks `core::str::from_utf8`, which also says where). Core's
/// check reads two words a step: 426 of the pretty envelope's 11 700 instructions.
#[inline]
pub(super) fn ascii_str(bytes: &[u8]) -> Option<&str> {
    // SAFETY: SSE2 is enabled for the whole build (see `special_lanes`).
    if !unsafe { is_ascii_sse2(bytes) } {
        return None;
    }
    // SAFETY: every byte is below 0x80, and an ASCII text is valid UTF-8.
    Some(unsafe { core::str::from_utf8_unchecked(bytes) })
}

/// `bytes` as a `str` when every byte is below DEL (0x7F): ASCII, and printable or a
/// control byte, which is how the crate's writers spell every string of a canonical
/// identity. `None` when one is not (the caller then asks [`ascii_str`] or
/// `core::str::from_utf8`). One pass tells the canonical identity reader that no string
/// needs its own look for raw non-ASCII or DEL bytes (a fold over each string's bytes
/// cost ~540 of its 3 300 instructions, callgrind).
#[inline]
pub(super) fn below_del_str(bytes: &[u8]) -> Option<&str> {
    // SAFETY: SSE2 is enabled for the whole build (see `special_lanes`).
    if !unsafe { is_below_del_sse2(bytes) } {
        return None;
    }
    // SAFETY: every byte is below 0x7F, and an ASCII text is valid UTF-8.
    Some(unsafe { core::str::from_utf8_unchecked(bytes) })
}

#[target_feature(enable = "sse2")]
fn is_below_del_sse2(bytes: &[u8]) -> bool {
    // SAFETY: `chunk` is 16 readable bytes; the load needs no alignment.
    let load = |chunk: &[u8; 16]| unsafe { _mm_loadu_si128(chunk.as_ptr().cast::<__m128i>()) };
    // A byte is 0x7F or above exactly when it or the byte plus one (wrapping) has its
    // high bit set: 0x7F + 1 is 0x80, and 0xFF + 1 is 0 but 0xFF has it.
    let high = |lane: &[u8; 16]| {
        let x = load(lane);
        _mm_or_si128(x, _mm_add_epi8(x, _mm_set1_epi8(1)))
    };
    let (blocks, rest) = bytes.as_chunks::<64>();
    for block in blocks {
        let (lanes, _) = block.as_chunks::<16>();
        let any = lanes.iter().fold(_mm_set1_epi8(0), |any, lane| _mm_or_si128(any, high(lane)));
        if _mm_movemask_epi8(any) != 0 {
            return false;
        }
    }
    let (lanes, tail) = rest.as_chunks::<16>();
    lanes.iter().all(|lane| _mm_movemask_epi8(high(lane)) == 0) && tail.iter().copied().all(super::is_below_del)
}

#[target_feature(enable = "sse2")]
fn is_ascii_sse2(bytes: &[u8]) -> bool {
    // SAFETY: `chunk` is 16 readable bytes; the load needs no alignment.
    let load = |chunk: &[u8; 16]| unsafe { _mm_loadu_si128(chunk.as_ptr().cast::<__m128i>()) };
    let (blocks, rest) = bytes.as_chunks::<64>();
    for block in blocks {
        let (lanes, _) = block.as_chunks::<16>();
        let mut any = _mm_set1_epi8(0);
        for lane in lanes {
            any = _mm_or_si128(any, load(lane));
        }
        // The high bit of a byte is set exactly when it is not ASCII.
        if _mm_movemask_epi8(any) != 0 {
            return false;
        }
    }
    let (lanes, tail) = rest.as_chunks::<16>();
    lanes.iter().all(|lane| _mm_movemask_epi8(load(lane)) == 0) && tail.is_ascii()
}

/// Whether `bytes` holds one of the eight bytes of `set`, sixteen bytes a step (the
/// tenant check: 450 of the pretty envelope's 11 000 instructions byte by byte).
#[inline]
pub(super) fn contains_any(bytes: &[u8], set: &[u8; 8]) -> bool {
    // SAFETY: SSE2 is enabled for the whole build (see `special_lanes`).
    unsafe { contains_any_sse2(bytes, set) }
}

#[target_feature(enable = "sse2")]
fn contains_any_sse2(bytes: &[u8], set: &[u8; 8]) -> bool {
    let splats = set.map(|byte| _mm_set1_epi8(byte as i8));
    let hit = |lane: &[u8; 16]| {
        // SAFETY: `lane` is 16 readable bytes; the load needs no alignment.
        let x = unsafe { _mm_loadu_si128(lane.as_ptr().cast::<__m128i>()) };
        let any = splats.iter().fold(_mm_set1_epi8(0), |any, &byte| _mm_or_si128(any, _mm_cmpeq_epi8(x, byte)));
        _mm_movemask_epi8(any) != 0
    };
    let (lanes, tail) = bytes.as_chunks::<16>();
    if lanes.iter().any(hit) {
        return true;
    }
    match bytes.last_chunk::<16>() {
        // The last sixteen bytes again, overlapping: the tail, if any, is in them.
        Some(last) => hit(last),
        None => tail.iter().any(|byte| set.contains(byte)),
    }
}

#[cfg(test)]
mod tests {
    use super::ascii_str;

    #[test]
    fn a_text_is_taken_as_ascii_exactly_when_every_byte_is_below_0x80() {
        // Every length across the 64-byte blocks, the 16-byte lanes and the tail, with
        // one high byte at every position (and none).
        for len in 0..if cfg!(miri) { 70 } else { 200 } {
            let ascii: std::vec::Vec<u8> = (0..len).map(|i| b' ' + (i % 95) as u8).collect();
            assert_eq!(ascii_str(&ascii).map(str::as_bytes), Some(&ascii[..]), "length {len}");
            for at in 0..len {
                for high in [0x80, 0xC3, 0xFF] {
                    let mut text = ascii.clone();
                    text[at] = high;
                    assert_eq!(ascii_str(&text), None, "length {len}, {high:#x} at {at}");
                }
            }
        }
    }

    #[test]
    fn a_text_is_taken_as_below_del_exactly_when_every_byte_is_below_0x7f() {
        for len in 0..if cfg!(miri) { 70 } else { 200 } {
            let plain: std::vec::Vec<u8> = (0..len).map(|i| (i * 7 % 0x7F) as u8).collect();
            assert_eq!(super::below_del_str(&plain).map(str::as_bytes), Some(&plain[..]), "length {len}");
            for at in 0..len {
                for high in [0x7F, 0x80, 0xC3, 0xFE, 0xFF] {
                    let mut text = plain.clone();
                    text[at] = high;
                    assert_eq!(super::below_del_str(&text), None, "length {len}, {high:#x} at {at}");
                }
            }
        }
    }

    #[test]
    fn a_byte_of_the_set_is_found_at_every_position_of_every_length() {
        const SET: &[u8; 8] = b" :/\\\"\n\t\r";
        for len in 0..if cfg!(miri) { 40 } else { 100 } {
            let plain = std::vec![b'a'; len];
            assert!(!super::contains_any(&plain, SET), "length {len}");
            for at in 0..len {
                for &byte in SET.iter().chain(b"\x00\xFF;.") {
                    let mut text = plain.clone();
                    text[at] = byte;
                    assert_eq!(super::contains_any(&text, SET), SET.contains(&byte), "length {len}, {byte:#x} at {at}");
                }
            }
        }
    }
}
