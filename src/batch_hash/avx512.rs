//! The x86-64 AVX-512 kernel: SHA-256 compression of sixteen independent messages at
//! once, one message a 32-bit lane of each 512-bit register. It uses no SHA unit: the
//! rounds are rotates, three-input logic (`vpternlogd`) and adds on the vector ports.
//! On an Intel Xeon whose SHA unit starts a `sha256rnds2` only every third cycle, it
//! hashed 2.17x single-stream `sha2` in cache, against 1.25x for the two-lane SHA-NI
//! kernel (docs/performance.md); [`super::Kernel::detect`] picks it there.
//! Written here: no maintained `no_std` crate has a multi-buffer AVX-512 SHA-256.
//!
//! `unsafe` for the block loads (64 bytes from each lane's 64-byte arrays) and for the
//! call into the function compiled for `avx512f` and `avx512bw`, made only where
//! [`available`] found them.
#![allow(unsafe_code)]
// Fixed-size arrays indexed by loop counters below their lengths (the 16 lanes, the 16
// schedule words, the 8 state words, the 64 constants): the bounds are known at compile
// time.
#![allow(clippy::indexing_slicing)]

use super::K;
use core::arch::x86_64::{
    __m512i, _mm512_add_epi32, _mm512_broadcast_i32x4, _mm512_loadu_si512, _mm512_ror_epi32, _mm512_set1_epi32,
    _mm512_setzero_si512, _mm512_shuffle_epi8, _mm512_shuffle_i32x4, _mm512_srli_epi32, _mm512_storeu_si512,
    _mm512_ternarylogic_epi32, _mm512_unpackhi_epi32, _mm512_unpackhi_epi64, _mm512_unpacklo_epi32,
    _mm512_unpacklo_epi64, _mm_set_epi64x,
};

/// Messages the kernel steps together.
pub(super) const WIDTH: usize = 16;

cpufeatures::new!(features, "avx512f", "avx512bw");

/// Whether this CPU runs the kernel (detected once, then cached).
#[inline]
pub(super) fn available() -> bool {
    features::get()
}

/// [`compress`] if this CPU has the features it needs; false (nothing done) if not.
pub(super) fn compress_if_available(states: &mut [[u32; 8]; WIDTH], blocks: [&[[u8; 64]]; WIDTH]) -> bool {
    if !available() {
        return false;
    }
    // SAFETY: the CPU has the `avx512f` and `avx512bw` features (checked above).
    unsafe { compress(states, blocks) };
    true
}

/// Compress `blocks[lane]` into `states[lane]` for every lane; every lane has the same
/// number of blocks (the caller's step).
///
/// # Safety
/// The CPU must have the `avx512f` and `avx512bw` features.
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn compress(states: &mut [[u32; 8]; WIDTH], blocks: [&[[u8; 64]]; WIDTH]) {
    let count = blocks.iter().map(|lane| lane.len()).min().unwrap_or(0);
    // Big-endian words: reverse the bytes of each 32-bit word.
    let byte_swap = _mm512_broadcast_i32x4(_mm_set_epi64x(0x0c0d_0e0f_0809_0a0b, 0x0405_0607_0001_0203));
    // The state word by word across the lanes: `state[i]` holds word i of every lane.
    let mut state = [_mm512_setzero_si512(); 8];
    for (word, register) in state.iter_mut().enumerate() {
        *register = gather_word(states, word);
    }
    for index in 0..count {
        // Row `lane` is that lane's block; transposed, row `t` is word t of every lane.
        let mut w = [_mm512_setzero_si512(); 16];
        for lane in 0..WIDTH {
            let Some(block) = blocks[lane].get(index) else { return };
            // SAFETY: `block` is a 64-byte array, so its 64 bytes are readable; the load
            // is unaligned.
            w[lane] = unsafe { _mm512_loadu_si512(block.as_ptr().cast::<__m512i>()) };
        }
        transpose(&mut w);
        for word in w.iter_mut() {
            *word = _mm512_shuffle_epi8(*word, byte_swap);
        }
        let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut h] = state;
        // One round (FIPS 180-4, 6.2.2 step 3) on every lane with the schedule word `$w`.
        macro_rules! round {
            ($t:expr, $w:expr) => {
                let sigma1 = _mm512_ternarylogic_epi32::<0x96>(
                    _mm512_ror_epi32::<6>(e),
                    _mm512_ror_epi32::<11>(e),
                    _mm512_ror_epi32::<25>(e),
                );
                let choice = _mm512_ternarylogic_epi32::<0xca>(e, f, g);
                let word = _mm512_add_epi32($w, _mm512_set1_epi32(K[$t] as i32));
                let t1 = _mm512_add_epi32(_mm512_add_epi32(h, sigma1), _mm512_add_epi32(choice, word));
                let sigma0 = _mm512_ternarylogic_epi32::<0x96>(
                    _mm512_ror_epi32::<2>(a),
                    _mm512_ror_epi32::<13>(a),
                    _mm512_ror_epi32::<22>(a),
                );
                let majority = _mm512_ternarylogic_epi32::<0xe8>(a, b, c);
                (h, g, f, e, d, c, b) = (g, f, e, _mm512_add_epi32(d, t1), c, b, a);
                a = _mm512_add_epi32(t1, _mm512_add_epi32(sigma0, majority));
            };
        }
        // W[t] (FIPS 180-4, 6.2.2 step 1) into the ring slot `$i` of W[t-16], then its
        // round. Every index is a constant (the steps written out, sixteen at a time), so
        // the sixteen schedule words stay in registers: 14 % faster than a loop over `t`.
        macro_rules! schedule_and_round {
            ($base:expr, $i:literal) => {
                let (w15, w2) = (w[($i + 1) % 16], w[($i + 14) % 16]);
                let s0 = _mm512_ternarylogic_epi32::<0x96>(
                    _mm512_ror_epi32::<7>(w15),
                    _mm512_ror_epi32::<18>(w15),
                    _mm512_srli_epi32::<3>(w15),
                );
                let s1 = _mm512_ternarylogic_epi32::<0x96>(
                    _mm512_ror_epi32::<17>(w2),
                    _mm512_ror_epi32::<19>(w2),
                    _mm512_srli_epi32::<10>(w2),
                );
                w[$i] = _mm512_add_epi32(_mm512_add_epi32(s1, w[($i + 9) % 16]), _mm512_add_epi32(s0, w[$i]));
                round!($base + $i, w[$i]);
            };
        }
        macro_rules! first_round {
            ($base:expr, $i:literal) => {
                round!($i, w[$i]);
            };
        }
        macro_rules! sixteen {
            ($step:ident, $base:expr) => {
                $step!($base, 0);
                $step!($base, 1);
                $step!($base, 2);
                $step!($base, 3);
                $step!($base, 4);
                $step!($base, 5);
                $step!($base, 6);
                $step!($base, 7);
                $step!($base, 8);
                $step!($base, 9);
                $step!($base, 10);
                $step!($base, 11);
                $step!($base, 12);
                $step!($base, 13);
                $step!($base, 14);
                $step!($base, 15);
            };
        }
        sixteen!(first_round, 0);
        sixteen!(schedule_and_round, 16);
        sixteen!(schedule_and_round, 32);
        sixteen!(schedule_and_round, 48);
        for (register, worked) in state.iter_mut().zip([a, b, c, d, e, f, g, h]) {
            *register = _mm512_add_epi32(*register, worked);
        }
    }
    for (word, register) in state.into_iter().enumerate() {
        scatter_word(register, states, word);
    }
}

/// Word `word` of every lane's state as one register.
#[inline]
#[target_feature(enable = "avx512f")]
fn gather_word(states: &[[u32; 8]; WIDTH], word: usize) -> __m512i {
    let lanes: [u32; WIDTH] = core::array::from_fn(|lane| states[lane][word]);
    // SAFETY: `lanes` is 64 readable bytes; the load is unaligned.
    unsafe { _mm512_loadu_si512(lanes.as_ptr().cast::<__m512i>()) }
}

/// [`gather_word`] undone.
#[inline]
#[target_feature(enable = "avx512f")]
fn scatter_word(register: __m512i, states: &mut [[u32; 8]; WIDTH], word: usize) {
    let mut lanes = [0u32; WIDTH];
    // SAFETY: `lanes` is 64 writable bytes; the store is unaligned.
    unsafe { _mm512_storeu_si512(lanes.as_mut_ptr().cast::<__m512i>(), register) };
    for (state, value) in states.iter_mut().zip(lanes) {
        state[word] = value;
    }
}

/// Transpose a 16 × 16 matrix of 32-bit words held a row a register: afterwards
/// register `t` holds word `t` of every former row. Four rounds of interleaving: words,
/// pairs of words, 128-bit quarters twice.
#[inline]
#[target_feature(enable = "avx512f")]
fn transpose(rows: &mut [__m512i; 16]) {
    let mut words = [_mm512_setzero_si512(); 16];
    for i in 0..8 {
        words[2 * i] = _mm512_unpacklo_epi32(rows[2 * i], rows[2 * i + 1]);
        words[2 * i + 1] = _mm512_unpackhi_epi32(rows[2 * i], rows[2 * i + 1]);
    }
    let mut pairs = [_mm512_setzero_si512(); 16];
    for i in 0..4 {
        pairs[4 * i] = _mm512_unpacklo_epi64(words[4 * i], words[4 * i + 2]);
        pairs[4 * i + 1] = _mm512_unpackhi_epi64(words[4 * i], words[4 * i + 2]);
        pairs[4 * i + 2] = _mm512_unpacklo_epi64(words[4 * i + 1], words[4 * i + 3]);
        pairs[4 * i + 3] = _mm512_unpackhi_epi64(words[4 * i + 1], words[4 * i + 3]);
    }
    // Each 128-bit quarter q of pairs[4i + j] now holds word 4q + j of rows 4i..4i+4.
    let mut halves = [_mm512_setzero_si512(); 16];
    for j in 0..4 {
        halves[j] = _mm512_shuffle_i32x4::<0x88>(pairs[j], pairs[4 + j]);
        halves[4 + j] = _mm512_shuffle_i32x4::<0xdd>(pairs[j], pairs[4 + j]);
        halves[8 + j] = _mm512_shuffle_i32x4::<0x88>(pairs[8 + j], pairs[12 + j]);
        halves[12 + j] = _mm512_shuffle_i32x4::<0xdd>(pairs[8 + j], pairs[12 + j]);
    }
    for j in 0..4 {
        rows[j] = _mm512_shuffle_i32x4::<0x88>(halves[j], halves[8 + j]);
        rows[8 + j] = _mm512_shuffle_i32x4::<0xdd>(halves[j], halves[8 + j]);
        rows[4 + j] = _mm512_shuffle_i32x4::<0x88>(halves[4 + j], halves[12 + j]);
        rows[12 + j] = _mm512_shuffle_i32x4::<0xdd>(halves[4 + j], halves[12 + j]);
    }
}
