//! The x86-64 SHA-NI kernel: SHA-256 compression of `N` independent messages at once
//! (two or three, [`super::Kernel`]). One message is a chain of dependent `sha256rnds2`
//! instructions, so a single stream runs at the instruction's latency; interleaving
//! independent chains fills the gaps (ISA-L's `sha256_ni_x2` does the same). Written here
//! rather than taken from a crate: `tape-sha256` (the one maintained multi-buffer crate)
//! needs `std` and Rust 1.89, has no incremental batch API, and measured 1.43x / 2.00x /
//! 1.87x single-stream `sha2` at 64 KiB / 1 MiB / 16 MiB on AMD Zen 4 (`cargo bench
//! --bench batch_hash`'s rows, 2026-12-01).
//!
//! `unsafe` here (as in `avx512`): the function is compiled for the `sha`, `ssse3` and
//! `sse4.1` features and may run only where [`available`] found them, the block loads
//! read 16 bytes from 64-byte arrays, and `cpuid` names the CPU.
#![allow(unsafe_code)]
// Fixed-size arrays indexed by loop counters below their lengths (lanes, the four
// schedule words, the 64 constants): the bounds are known at compile time.
#![allow(clippy::indexing_slicing)]

use super::K;
use core::arch::x86_64::{
    __m128i, _mm_add_epi32, _mm_alignr_epi8, _mm_loadu_si128, _mm_set_epi64x, _mm_setr_epi32, _mm_sha256msg1_epu32,
    _mm_sha256msg2_epu32, _mm_sha256rnds2_epu32, _mm_shuffle_epi32, _mm_shuffle_epi8, _mm_storeu_si128,
};

cpufeatures::new!(features, "sha", "ssse3", "sse4.1");

/// Whether this CPU runs the kernel (detected once, then cached).
#[inline]
pub(super) fn available() -> bool {
    features::get()
}

/// This CPU's vendor string (`"AuthenticAMD"`, `"GenuineIntel"`, ...) and its family
/// (base plus extended, as vendors number them), read with `cpuid`.
pub(super) fn vendor_and_family() -> ([u8; 12], u32) {
    // SAFETY: `cpuid` exists on every x86-64 CPU, and leaves 0 and 1 always. (Recent
    // Rust declares the intrinsic safe; the block keeps older compilers building.)
    #[allow(unused_unsafe)]
    let (leaf0, leaf1) = unsafe { (core::arch::x86_64::__cpuid(0), core::arch::x86_64::__cpuid(1)) };
    let mut vendor = [0u8; 12];
    for (bytes, register) in vendor.chunks_exact_mut(4).zip([leaf0.ebx, leaf0.edx, leaf0.ecx]) {
        bytes.copy_from_slice(&register.to_le_bytes());
    }
    let base = (leaf1.eax >> 8) & 0xf;
    let extended = if base == 0xf { (leaf1.eax >> 20) & 0xff } else { 0 };
    (vendor, base + extended)
}

/// [`compress`] if this CPU has the features it needs; false (nothing done) if not.
pub(super) fn compress_if_available<const N: usize>(states: &mut [[u32; 8]; N], blocks: [&[[u8; 64]]; N]) -> bool {
    if !available() {
        return false;
    }
    // SAFETY: the CPU has the `sha`, `ssse3` and `sse4.1` features (checked above).
    unsafe { compress(states, blocks) };
    true
}

/// Compress `blocks[lane]` into `states[lane]` for every lane; every lane has the same
/// number of blocks (the caller's step).
///
/// # Safety
/// The CPU must have the `sha`, `ssse3` and `sse4.1` features.
#[target_feature(enable = "sha,ssse3,sse4.1")]
unsafe fn compress<const N: usize>(states: &mut [[u32; 8]; N], blocks: [&[[u8; 64]]; N]) {
    let count = blocks.iter().map(|lane| lane.len()).min().unwrap_or(0);
    // Big-endian words into lanes: reverse the bytes of each 32-bit word.
    let byte_swap = _mm_set_epi64x(0x0c0d_0e0f_0809_0a0b, 0x0405_0607_0001_0203);
    let mut abef = [_mm_setr_epi32(0, 0, 0, 0); N];
    let mut cdgh = abef;
    for lane in 0..N {
        (abef[lane], cdgh[lane]) = pack(&states[lane]);
    }
    // Four rounds of every lane with the schedule words `$w` (+ the constants of step
    // `$step`), and the schedule's next words; written out so every word stays a
    // register (a loop over the steps would index the words through memory).
    macro_rules! rounds {
        ($w:ident, $step:expr) => {
            let k = _mm_setr_epi32(
                K[4 * $step] as i32,
                K[4 * $step + 1] as i32,
                K[4 * $step + 2] as i32,
                K[4 * $step + 3] as i32,
            );
            for lane in 0..N {
                let message = _mm_add_epi32($w[lane], k);
                cdgh[lane] = _mm_sha256rnds2_epu32(cdgh[lane], abef[lane], message);
                abef[lane] = _mm_sha256rnds2_epu32(abef[lane], cdgh[lane], _mm_shuffle_epi32(message, 0x0e));
            }
        };
    }
    // W[t+16..t+20] from the four groups before it, into the oldest group's registers.
    macro_rules! schedule {
        ($w0:ident, $w1:ident, $w2:ident, $w3:ident) => {
            for lane in 0..N {
                let partial =
                    _mm_add_epi32(_mm_sha256msg1_epu32($w0[lane], $w1[lane]), _mm_alignr_epi8($w3[lane], $w2[lane], 4));
                $w0[lane] = _mm_sha256msg2_epu32(partial, $w3[lane]);
            }
        };
    }
    let zero = _mm_setr_epi32(0, 0, 0, 0);
    for index in 0..count {
        let (saved_abef, saved_cdgh) = (abef, cdgh);
        let (mut w0, mut w1, mut w2, mut w3) = ([zero; N], [zero; N], [zero; N], [zero; N]);
        for lane in 0..N {
            let Some(block) = blocks[lane].get(index) else { return };
            for (quarter, word) in [&mut w0[lane], &mut w1[lane], &mut w2[lane], &mut w3[lane]].into_iter().enumerate()
            {
                // SAFETY: `block` is a 64-byte array, so its bytes 16q..16q+16 (q < 4)
                // are readable; the load is unaligned.
                let raw = unsafe { _mm_loadu_si128(block.as_ptr().add(16 * quarter).cast::<__m128i>()) };
                *word = _mm_shuffle_epi8(raw, byte_swap);
            }
        }
        rounds!(w0, 0);
        rounds!(w1, 1);
        rounds!(w2, 2);
        rounds!(w3, 3);
        schedule!(w0, w1, w2, w3);
        rounds!(w0, 4);
        schedule!(w1, w2, w3, w0);
        rounds!(w1, 5);
        schedule!(w2, w3, w0, w1);
        rounds!(w2, 6);
        schedule!(w3, w0, w1, w2);
        rounds!(w3, 7);
        schedule!(w0, w1, w2, w3);
        rounds!(w0, 8);
        schedule!(w1, w2, w3, w0);
        rounds!(w1, 9);
        schedule!(w2, w3, w0, w1);
        rounds!(w2, 10);
        schedule!(w3, w0, w1, w2);
        rounds!(w3, 11);
        schedule!(w0, w1, w2, w3);
        rounds!(w0, 12);
        schedule!(w1, w2, w3, w0);
        rounds!(w1, 13);
        schedule!(w2, w3, w0, w1);
        rounds!(w2, 14);
        schedule!(w3, w0, w1, w2);
        rounds!(w3, 15);
        for lane in 0..N {
            abef[lane] = _mm_add_epi32(abef[lane], saved_abef[lane]);
            cdgh[lane] = _mm_add_epi32(cdgh[lane], saved_cdgh[lane]);
        }
    }
    for lane in 0..N {
        states[lane] = unpack(abef[lane], cdgh[lane]);
    }
}

/// The state words a..h as SHA-NI's two registers, ABEF and CDGH. (`#[inline]` here and
/// on the other helpers: the generic kernel is instantiated in the crate that names
/// `StreamLanes<N>`, which without it calls them; `StreamBatch` lost 20 % so.)
#[inline]
#[target_feature(enable = "sha,ssse3,sse4.1")]
fn pack(state: &[u32; 8]) -> (__m128i, __m128i) {
    let [a, b, c, d, e, f, g, h] = state.map(|word| word as i32);
    (_mm_setr_epi32(f, e, b, a), _mm_setr_epi32(h, g, d, c))
}

/// [`pack`] undone.
#[inline]
#[target_feature(enable = "sha,ssse3,sse4.1")]
fn unpack(abef: __m128i, cdgh: __m128i) -> [u32; 8] {
    let mut out = [[0u32; 4]; 2];
    for (register, words) in [abef, cdgh].into_iter().zip(out.iter_mut()) {
        // SAFETY: `words` is 16 writable bytes; the store is unaligned.
        unsafe { _mm_storeu_si128(words.as_mut_ptr().cast::<__m128i>(), register) };
    }
    let ([f, e, b, a], [h, g, d, c]) = (out[0], out[1]);
    [a, b, c, d, e, f, g, h]
}
