//! Decimal → `f64` for JSON number tokens: correctly rounded (ties to even), like
//! `str::parse::<f64>`, but with no panic path.
//!
//! Why not `str::parse`: core's `dec2flt` keeps bounds checks and `unwrap`s that the
//! optimiser cannot remove, so every reader that converts a float could reach a panic in
//! the compiled code, and the crate's panic-freedom proof (`panic-check/`) fails to
//! link. This module uses no indexing, no `unwrap`, no unchecked shifts and no division
//! by a value that could be zero; the equality with `str::parse::<f64>` is tested on
//! millions of generated tokens, hard cases included (`tests/float_parse.rs`).
//!
//! The method, for a token whose significant digits form the integer `D` (at most 800 of
//! them, plus a sticky `1` digit standing for any non-zero digits beyond) and whose
//! value is `D × 10^e`:
//! * Fast path (Clinger): `D <= 2^53` and `|e| <= 22` (or `D × 10^(e-22)` still exact):
//!   one IEEE multiplication or division of two exact values, hence correctly rounded.
//! * `D < 2^64` and `|e| <= 27`: the exact forms below in `u128` arithmetic.
//! * `D < 2^64` otherwise: Eisel–Lemire (Lemire, "Number Parsing at a Gigabyte per
//!   Second", 2021; the algorithm of fast_float and of core's `dec2flt`): `D × 5^e`
//!   from one or two 64×64-bit products with a 128-bit approximation of `5^e`
//!   (`pow5_table.rs`), which decides the rounding for all but rare near-halfway
//!   cases; those fall through to the exact path.
//! * Otherwise exactly, with fixed-size big integers (`2^e` factored out of `10^e`):
//!   `e >= 0`: the top 64 bits of `D × 5^e` and whether any bit below is set;
//!   `e < 0`: 64–65 quotient bits of `D·2^k / 5^-e` and whether the remainder is 0.
//!   Those bits, a sticky flag and a binary exponent are rounded once, to nearest even,
//!   into a normal or subnormal `f64` (or to infinity).
//!
//! Truncating to 800 digits plus a sticky digit is exact for rounding: every midpoint
//! between two neighbouring doubles has at most 767 significant decimal digits, so no
//! midpoint lies strictly between the truncated value and the true one.

use super::digits::digit_run;
use core::cmp::Ordering;

/// Significant digits kept; the rest only set the sticky digit (see the module docs).
const MAX_DIGITS: usize = 800;

/// Limbs of a big integer. The largest value ever formed is below 2^2680: `D < 10^801`,
/// `5^m` with `m <= 324 + 801` (else the value underflows), and the dividend
/// `D·2^k` or `5^m·2^64` with 64 bits more than the divisor.
const LIMBS: usize = 44;

/// `10^0 ..= 10^22`: every one of them is exactly representable as an `f64`.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20,
    1e21, 1e22,
];

/// `5^27`, the largest power of five in a `u64`.
const POW5_27: u64 = 7_450_580_596_923_828_125;

/// A fixed-capacity unsigned big integer, little-endian limbs. Operations that would
/// need more than [`LIMBS`] limbs set `overflow` instead of panicking; the bounds in the
/// module docs show they never do for the values formed here.
#[derive(Clone, Copy)]
struct Big {
    limbs: [u64; LIMBS],
    len: usize,
    overflow: bool,
}

impl Big {
    fn from_u64(value: u64) -> Big {
        let mut big = Big { limbs: [0; LIMBS], len: 0, overflow: false };
        if value != 0 {
            big.push(value);
        }
        big
    }

    fn used(&self) -> &[u64] {
        self.limbs.get(..self.len).unwrap_or(&[])
    }

    fn push(&mut self, limb: u64) {
        match self.limbs.get_mut(self.len) {
            Some(slot) => {
                *slot = limb;
                self.len += 1;
            }
            None => self.overflow = true,
        }
    }

    /// `self = self * factor + addend`.
    fn mul_add_small(&mut self, factor: u64, addend: u64) {
        let mut carry = addend;
        for limb in self.limbs.iter_mut().take(self.len) {
            let wide = u128::from(*limb) * u128::from(factor) + u128::from(carry);
            *limb = wide as u64;
            carry = (wide >> 64) as u64;
        }
        if carry != 0 {
            self.push(carry);
        }
    }

    /// `self *= 5^exp`.
    fn mul_pow5(&mut self, mut exp: u64) {
        while exp >= 27 {
            self.mul_add_small(POW5_27, 0);
            exp -= 27;
        }
        let mut rest = 1u64;
        for _ in 0..exp {
            rest *= 5;
        }
        self.mul_add_small(rest, 0);
    }

    /// `self <<= bits`.
    fn shl(&mut self, bits: u64) {
        if self.len == 0 {
            return;
        }
        let limb_shift = usize::try_from(bits / 64).unwrap_or(usize::MAX);
        let bit_shift = (bits % 64) as u32;
        let new_len = match self.len.checked_add(limb_shift).filter(|&n| n < LIMBS) {
            Some(n) => n + 1,
            None => {
                self.overflow = true;
                return;
            }
        };
        // From the top down, so no limb is overwritten before it is read.
        for i in (0..new_len).rev() {
            let source = |j: Option<usize>| j.and_then(|j| self.used().get(j)).copied().unwrap_or(0);
            let high = source(i.checked_sub(limb_shift));
            let low = source(i.checked_sub(limb_shift + 1));
            let value = if bit_shift == 0 { high } else { (high << bit_shift) | (low >> (64 - bit_shift)) };
            if let Some(slot) = self.limbs.get_mut(i) {
                *slot = value;
            }
        }
        self.len = new_len;
        self.trim();
    }

    /// `self >>= 1`.
    fn shr1(&mut self) {
        let mut carry = 0u64;
        for limb in self.limbs.iter_mut().take(self.len).rev() {
            let next = *limb << 63;
            *limb = (*limb >> 1) | carry;
            carry = next;
        }
        self.trim();
    }

    fn trim(&mut self) {
        while self.used().last() == Some(&0) {
            self.len = self.len.saturating_sub(1);
        }
    }

    fn bit_len(&self) -> u64 {
        match self.used().last() {
            Some(&top) => (self.len as u64 - 1) * 64 + u64::from(64 - top.leading_zeros()),
            None => 0,
        }
    }

    fn cmp(&self, other: &Big) -> Ordering {
        self.len.cmp(&other.len).then_with(|| self.used().iter().rev().cmp(other.used().iter().rev()))
    }

    /// `self -= other`, for `self >= other`.
    fn sub(&mut self, other: &Big) {
        let mut borrow = false;
        for (i, limb) in self.limbs.iter_mut().enumerate().take(self.len) {
            let rhs = other.used().get(i).copied().unwrap_or(0);
            let (diff, b1) = limb.overflowing_sub(rhs);
            let (diff, b2) = diff.overflowing_sub(u64::from(borrow));
            *limb = diff;
            borrow = b1 || b2;
        }
        self.trim();
    }

    /// The value as a `u128`, if it fits.
    fn to_u128(self) -> Option<u128> {
        match self.used() {
            [] => Some(0),
            [low] => Some(u128::from(*low)),
            [low, high] => Some(u128::from(*low) | (u128::from(*high) << 64)),
            _ => None,
        }
    }

    /// The top 64 bits `t` (top bit set), the exponent `x` and whether any bit below
    /// them is set: `self = (t + ε) × 2^x`. For a non-zero value.
    fn top64(&self) -> (u64, i64, bool) {
        let bits = self.bit_len();
        let limb = |i: u64| usize::try_from(i).ok().and_then(|i| self.used().get(i)).copied().unwrap_or(0);
        if bits <= 64 {
            let value = limb(0);
            let shift = 64 - bits;
            return (value.checked_shl(shift as u32).unwrap_or(0), -(shift as i64), false);
        }
        let shift = bits - 64;
        let (index, offset) = (shift / 64, (shift % 64) as u32);
        let low = limb(index);
        let top = if offset == 0 { low } else { (low >> offset) | (limb(index + 1) << (64 - offset)) };
        let below_mask = if offset == 0 { 0 } else { (1u64 << offset) - 1 };
        let sticky = low & below_mask != 0 || self.used().iter().take(index as usize).any(|&l| l != 0);
        (top, shift as i64, sticky)
    }
}

/// `floor(a / b)` (less than 2^65 here) and whether the remainder is non-zero.
fn divide(mut a: Big, b: &Big) -> (u128, bool) {
    if let (Some(x), Some(y)) = (a.to_u128(), b.to_u128()) {
        let q = x.checked_div(y).unwrap_or(0);
        return (q, x.checked_rem(y).unwrap_or(0) != 0);
    }
    // Binary long division: a quotient of at most 65 bits needs at most 65 steps.
    let steps = a.bit_len().saturating_sub(b.bit_len()).min(100);
    let mut shifted = *b;
    shifted.shl(steps);
    let mut q = 0u128;
    for i in (0..=steps).rev() {
        if a.cmp(&shifted) != Ordering::Less {
            a.sub(&shifted);
            q |= 1u128.checked_shl(i as u32).unwrap_or(0);
        }
        shifted.shr1();
    }
    (q, a.len != 0)
}

/// Round `(mant + ε) × 2^exp2` (`mant` with its top bit set; `0 <= ε < 1`, `ε > 0` iff
/// `sticky`) to the nearest `f64`, ties to even. `None` when that is infinite.
fn round(mant: u64, exp2: i64, sticky: bool) -> Option<f64> {
    // The value lies in [2^e, 2^(e+1)).
    let e = exp2.saturating_add(63);
    if e > 1023 {
        return None;
    }
    // How many low bits of `mant` fall below the result's last bit: 11 for a normal
    // result (53 of 64 bits kept), more for a subnormal one (last bit weighs 2^-1074).
    let shift = if e >= -1022 { 11 } else { (-1011i64).saturating_sub(e) };
    if shift > 64 {
        return Some(0.0); // below 2^-1075, half the smallest subnormal
    }
    let shift = shift as u32;
    let wide = u128::from(mant);
    let kept = (wide >> shift) as u64;
    let rem = wide & ((1u128 << shift) - 1);
    let half = 1u128 << (shift - 1);
    let up = rem > half || (rem == half && (sticky || kept & 1 == 1));
    let kept = kept + u64::from(up);
    // A normal result's hidden bit (2^52 in `kept`) adds one to the exponent field, and
    // a carry out of the significand (kept = 2^53) moves to the next binade, both by
    // plain addition; a subnormal that rounds up to 2^52 becomes the smallest normal.
    let bits = if e >= -1022 { ((e + 1022) as u64) << 52 } else { 0 } + kept;
    if bits >= 0x7FF0_0000_0000_0000 {
        return None;
    }
    Some(f64::from_bits(bits))
}

/// Where the significant digits of a token go: a `u64` for the common short case, a
/// big integer for long ones. The digit walk is the same for both, so it is generic.
trait Digits {
    fn push(&mut self, digit: u8);
}

/// Up to 19 digits (`< 10^19 < 2^64`); more wrap and are not used.
struct Short(u64);

impl Digits for Short {
    fn push(&mut self, digit: u8) {
        self.0 = self.0.wrapping_mul(10).wrapping_add(u64::from(digit));
    }
}

/// Any number of digits, 19 at a time through a `u64`.
struct Long {
    big: Big,
    chunk: u64,
    chunk_digits: u32,
}

impl Digits for Long {
    fn push(&mut self, digit: u8) {
        self.chunk = self.chunk * 10 + u64::from(digit);
        self.chunk_digits += 1;
        if self.chunk_digits >= 19 {
            self.flush();
        }
    }
}

impl Long {
    fn flush(&mut self) {
        if self.chunk_digits != 0 {
            self.big.mul_add_small(10u64.pow(self.chunk_digits), self.chunk);
            self.chunk = 0;
            self.chunk_digits = 0;
        }
    }
}

/// A token split at its exponent: sign, the digits and point before it, its value.
/// `None` when the text is not a number token's shape (never for a token the reader
/// scanned).
fn split(token: &str) -> Option<(bool, &[u8], i64)> {
    let bytes = token.as_bytes();
    let (negative, body) = match bytes.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, bytes),
    };
    let mantissa_end = body.iter().position(|&b| b == b'e' || b == b'E').unwrap_or(body.len());
    let (mantissa, exponent) = body.split_at_checked(mantissa_end)?;
    let mut exp: i64 = 0;
    if let Some((_, text)) = exponent.split_first() {
        let (sign, digits) = match text.split_first() {
            Some((b'-', rest)) => (-1, rest),
            Some((b'+', rest)) => (1, rest),
            _ => (1, text),
        };
        if digits.is_empty() {
            return None;
        }
        for &b in digits {
            if !b.is_ascii_digit() {
                return None;
            }
            // Saturating far beyond any exponent that matters (no text is 10^17 bytes).
            exp = exp.saturating_mul(10).saturating_add(i64::from(b - b'0')).min(100_000_000_000_000_000);
        }
        exp = exp.saturating_mul(sign);
    }
    Some((negative, mantissa, exp))
}

/// Walk the digits before the exponent: skip leading zeros, keep at most
/// [`MAX_DIGITS`] significant digits (zeros only when a non-zero digit follows) and a
/// sticky `1` for any non-zero digit beyond. Returns `(count, e)`: the pushed digits
/// form `D` with `count` digits, and the token's value is `D × 10^e`.
fn walk<D: Digits>(mantissa: &[u8], mut exp: i64, digits: &mut D) -> Option<(usize, i64)> {
    let mut count = 0usize;
    let mut pending_zeros: u64 = 0;
    let mut sticky = false;
    let mut seen_point = false;
    let mut any_digit = false;
    for &b in mantissa {
        if b == b'.' {
            if seen_point {
                return None;
            }
            seen_point = true;
            continue;
        }
        if !b.is_ascii_digit() {
            return None;
        }
        any_digit = true;
        if seen_point {
            exp = exp.saturating_sub(1);
        }
        let digit = b - b'0';
        if count == 0 && digit == 0 {
            continue; // a leading zero
        }
        if digit == 0 {
            pending_zeros += 1; // kept only if a non-zero digit follows (and there is room)
            continue;
        }
        // A non-zero digit (or any digit once full): first the zeros before it.
        let zeros_kept = pending_zeros.min((MAX_DIGITS - count.min(MAX_DIGITS)) as u64);
        for _ in 0..zeros_kept {
            digits.push(0);
        }
        count += zeros_kept as usize;
        exp = exp.saturating_add((pending_zeros - zeros_kept) as i64);
        pending_zeros = 0;
        if count < MAX_DIGITS {
            digits.push(digit);
            count += 1;
        } else {
            exp = exp.saturating_add(1);
            sticky |= digit != 0;
        }
    }
    if !any_digit {
        return None;
    }
    // Trailing zeros of the significand only scale it.
    exp = exp.saturating_add(pending_zeros as i64);
    if sticky {
        digits.push(1);
        count += 1;
        exp = exp.saturating_sub(1);
    }
    Some((count, exp))
}

/// A number token that starts at `start` in `bytes` with at most 19 significant-or-not
/// digits and an exponent of at most four digits, if any — how `ttl` and
/// `reuse_score` are written (`0.87`, `2.5e-05`, `1.2345678901234568e+17`) — read in
/// one pass: its nearest `f64` and the index after it. `None` for anything else (a
/// longer or an invalid token, a value that rounds to infinity, or one the two quick
/// methods cannot decide), which [`parse_f64`] then reads from the scanned token. The
/// digits are `D < 10^19 < 2^64` exactly and the value `D × 10^q`; it is rounded by the
/// same steps [`parse_f64`] takes first for such a token (Clinger's fast path or exact
/// `u128` forms, then Eisel–Lemire), so it is the value [`parse_f64`] gives, without
/// the second scan of the token.
#[inline]
pub(crate) fn short_decimal_at(bytes: &[u8], start: usize) -> Option<(f64, usize)> {
    let negative = bytes.get(start) == Some(&b'-');
    let int_start = start + usize::from(negative);
    let mut pos = int_start;
    let mut d = 0u64;
    let mut digits = |pos: &mut usize| {
        let from = *pos;
        // Wraps only past 19 digits, which the count below refuses.
        (d, *pos) = digit_run(bytes, from, d);
        *pos - from
    };
    let int_digits = digits(&mut pos);
    if int_digits == 0 || (int_digits > 1 && bytes.get(int_start) == Some(&b'0')) {
        return None;
    }
    let mut frac_digits = 0;
    if bytes.get(pos) == Some(&b'.') {
        pos += 1;
        frac_digits = digits(&mut pos);
        if frac_digits == 0 {
            return None;
        }
    }
    if int_digits + frac_digits > 19 {
        return None;
    }
    // `frac_digits` is at most 19: no overflow.
    let mut exp = -(frac_digits as i64);
    if matches!(bytes.get(pos), Some(b'e' | b'E')) {
        pos += 1;
        let negative_exp = bytes.get(pos) == Some(&b'-');
        pos += usize::from(matches!(bytes.get(pos), Some(b'-' | b'+')));
        let from = pos;
        let mut written = 0i64;
        while let Some(&b) = bytes.get(pos).filter(|b| b.is_ascii_digit()) {
            written = written * 10 + i64::from(b - b'0');
            pos += 1;
            if pos - from > 4 {
                return None;
            }
        }
        if pos == from {
            return None;
        }
        exp += if negative_exp { -written } else { written };
    }
    let signed = |magnitude: f64| if negative { -magnitude } else { magnitude };
    if d == 0 {
        // What follows takes a non-zero significand (as in `magnitude`).
        return Some((signed(0.0), pos));
    }
    // `Some(None)` is infinite: the general reader words that.
    let magnitude = small(d, exp).or_else(|| eisel_lemire(d, exp))??;
    Some((signed(magnitude), pos))
}

/// The nearest `f64` to a JSON number token (ties to even), `±inf` when it is beyond
/// the `f64` range, NaN when the text is not a number token.
pub(crate) fn parse_f64(token: &str) -> f64 {
    let magnitude = match magnitude(token) {
        Some(Some(value)) => value,
        Some(None) => f64::INFINITY,
        None => return f64::NAN,
    };
    if token.starts_with('-') {
        -magnitude
    } else {
        magnitude
    }
}

/// The magnitude: `None` if the text is not a number token, `Some(None)` when the
/// value rounds to infinity.
fn magnitude(token: &str) -> Option<Option<f64>> {
    // Up to 19 digits, one pass: the fast path, else Eisel–Lemire; the exact walk
    // below for longer tokens and for what those two leave undecided.
    if let Some((d, q)) = short_decimal(token) {
        if d == 0 {
            return Some(Some(0.0));
        }
        if let Some(value) = small(d, q).or_else(|| eisel_lemire(d, q)) {
            return Some(value);
        }
    }
    let (_, mantissa, exp) = split(token)?;
    let mut short = Short(0);
    let (count, exp) = walk(mantissa, exp, &mut short)?;
    if count == 0 {
        return Some(Some(0.0));
    }
    // The value lies in [10^(count+exp-1), 10^(count+exp)).
    let decimal_magnitude = (count as i64).saturating_add(exp);
    if decimal_magnitude >= 310 {
        return Some(None); // at least 10^309, above the largest double
    }
    if decimal_magnitude <= -324 {
        return Some(Some(0.0)); // below 10^-324, less than half the smallest subnormal
    }
    if count <= 19 {
        // D < 10^19 < 2^64: the fast path, or exact u128 arithmetic for |e| <= 27.
        if let Some(value) = small(short.0, exp) {
            return Some(value);
        }
        if let Some(value) = eisel_lemire(short.0, exp) {
            return Some(value);
        }
        let mut d = Big::from_u64(0);
        d.mul_add_small(1, short.0);
        return Some(big(d, exp));
    }
    let mut long = Long { big: Big::from_u64(0), chunk: 0, chunk_digits: 0 };
    walk(mantissa, 0, &mut long)?;
    long.flush();
    Some(big(long.big, exp))
}

/// Eisel–Lemire: the nearest `f64` to `w × 10^q` for a non-zero `w`, `Some(None)` when
/// that is infinite, `None` when the 128-bit approximation of `5^q` cannot decide the
/// rounding (the exact path then does). Shifts are all in range: `lz <= 63` for a
/// non-zero `w`, and the others are checked.
fn eisel_lemire(w: u64, q: i64) -> Option<Option<f64>> {
    use super::pow5_table::{LARGEST_POWER, POW5_128, SMALLEST_POWER};
    /// Bits below the 55 that matter (52 explicit, the hidden bit, a rounding bit, a
    /// possible leading zero of the product).
    const MASK: u64 = u64::MAX >> 55;
    if w == 0 || q < SMALLEST_POWER {
        return Some(Some(0.0));
    }
    if q > LARGEST_POWER {
        return Some(None);
    }
    let lz = w.leading_zeros();
    let w = w.checked_shl(lz)?;
    let &(high5, low5) = POW5_128.get(usize::try_from(q - SMALLEST_POWER).ok()?)?;
    let first = u128::from(w) * u128::from(high5);
    let (mut lo, mut hi) = (first as u64, (first >> 64) as u64);
    if hi & MASK == MASK {
        // The low word of the power may carry into the bits that matter.
        let second = ((u128::from(w) * u128::from(low5)) >> 64) as u64;
        let (sum, carry) = lo.overflowing_add(second);
        lo = sum;
        hi = hi.wrapping_add(u64::from(carry));
    }
    if lo == u64::MAX && !(-27..=55).contains(&q) {
        return None; // the approximation may be one unit short of a carry
    }
    let upper_bit = (hi >> 63) as u32;
    let shift = upper_bit + 64 - 55;
    let mut mantissa = hi.checked_shr(shift)?;
    // 217 706 / 2^16 approximates log2(10) closely enough for every exponent here.
    let mut power2 = ((q * 217_706) >> 16) + 63 + i64::from(upper_bit) - i64::from(lz) + 1023;
    if power2 <= 0 {
        // Subnormal, or zero: no halfway case can occur this far from 10^0.
        let drop = u32::try_from(1 - power2).ok().filter(|&d| d < 64);
        let Some(drop) = drop else { return Some(Some(0.0)) };
        mantissa = mantissa.checked_shr(drop)?;
        mantissa += mantissa & 1;
        mantissa >>= 1;
        // Rounding up to 2^52 makes it the smallest normal number: the same bits.
        return Some(Some(f64::from_bits(mantissa)));
    }
    // An exact halfway product (possible only for small |q|): round to even.
    if lo <= 1 && (-4..=23).contains(&q) && mantissa & 3 == 1 && mantissa.checked_shl(shift) == Some(hi) {
        mantissa &= !1;
    }
    mantissa += mantissa & 1;
    mantissa >>= 1;
    if mantissa >= 2 << 52 {
        mantissa >>= 1; // 2^53, carried out of the significand: 2^52 one binade up
        power2 += 1;
    }
    mantissa &= !(1 << 52);
    if power2 >= 0x7FF {
        return Some(None);
    }
    Some(Some(f64::from_bits(((power2 as u64) << 52) | mantissa)))
}

/// A token with at most 19 digits (`60.0`, `0.87`, `1e-07`, `2.5e-05`) as `D × 10^q`
/// read in one pass, `D < 10^19 < 2^64` exact; `None` for any other text (the general
/// walk takes it, and says NaN for what is not a number).
#[inline]
fn short_decimal(token: &str) -> Option<(u64, i64)> {
    let body = token.strip_prefix('-').unwrap_or(token).as_bytes();
    let mantissa_end = body.iter().position(|&b| b == b'e' || b == b'E').unwrap_or(body.len());
    let (mantissa, exponent) = body.split_at_checked(mantissa_end)?;
    let (int, fraction) = match mantissa.iter().position(|&b| b == b'.') {
        Some(point) => (mantissa.get(..point)?, mantissa.get(point + 1..)?),
        None => (mantissa, &[][..]),
    };
    let has_point = int.len() != mantissa.len();
    if int.is_empty() || (has_point && fraction.is_empty()) || int.len() + fraction.len() > 19 {
        return None;
    }
    let mut d = 0u64;
    for &b in int.iter().chain(fraction) {
        if !b.is_ascii_digit() {
            return None;
        }
        d = d * 10 + u64::from(b - b'0');
    }
    let mut q = 0i64;
    if let Some((_, rest)) = exponent.split_first() {
        let (negative, digits) = match rest.split_first() {
            Some((b'-', digits)) => (true, digits),
            Some((b'+', digits)) => (false, digits),
            _ => (false, rest),
        };
        if digits.is_empty() {
            return None;
        }
        for &b in digits {
            if !b.is_ascii_digit() {
                return None;
            }
            // Saturating far beyond any exponent that matters.
            q = (q * 10 + i64::from(b - b'0')).min(1 << 40);
        }
        if negative {
            q = -q;
        }
    }
    Some((d, q - fraction.len() as i64))
}

/// `5^0 ..= 5^27`.
const POW5: [u64; 28] = [
    1,
    5,
    25,
    125,
    625,
    3125,
    15625,
    78125,
    390625,
    1953125,
    9765625,
    48828125,
    244140625,
    1220703125,
    6103515625,
    30517578125,
    152587890625,
    762939453125,
    3814697265625,
    19073486328125,
    95367431640625,
    476837158203125,
    2384185791015625,
    11920928955078125,
    59604644775390625,
    298023223876953125,
    1490116119384765625,
    7450580596923828125,
];

/// `D × 10^e` with big integers (see the module docs); `None` when it rounds to
/// infinity. `D` is non-zero with at most 801 digits and `|e|` is bounded by the
/// magnitude checks of the caller, so no big integer overflows.
fn big(digits: Big, exp: i64) -> Option<f64> {
    if digits.overflow {
        return Some(f64::NAN); // not reached, see above
    }
    let (mant, exp2, sticky) = if exp >= 0 {
        // D × 10^e = (D × 5^e) × 2^e.
        let mut n = digits;
        n.mul_pow5(exp as u64);
        if n.overflow {
            return Some(f64::NAN);
        }
        let (top, shift, sticky) = n.top64();
        (top, shift.saturating_add(exp), sticky)
    } else {
        // D × 10^-m = D / 5^m × 2^-m: scale so the quotient has 64 or 65 bits.
        let m = exp.unsigned_abs();
        let mut a = digits;
        let mut b = Big::from_u64(1);
        b.mul_pow5(m);
        let k = (b.bit_len() + 64) as i64 - a.bit_len() as i64;
        if k >= 0 {
            a.shl(k as u64);
        } else {
            b.shl(k.unsigned_abs());
        }
        if a.overflow || b.overflow {
            return Some(f64::NAN);
        }
        let (q, sticky) = divide(a, &b);
        normalize(q, -k - m as i64, sticky)
    };
    round(mant, exp2, sticky)
}

/// A quotient of 64 or 65 bits as 64 bits, an exponent and a sticky flag.
fn normalize(mut q: u128, mut exp2: i64, mut sticky: bool) -> (u64, i64, bool) {
    while q >> 64 != 0 {
        sticky |= q & 1 != 0;
        q >>= 1;
        exp2 += 1;
    }
    (q as u64, exp2, sticky)
}

/// `D × 10^e` for `D < 2^64` without big integers: Clinger's fast path (both operands
/// exact, so one IEEE operation rounds correctly), else for `|e| <= 27` the exact
/// u128 forms of the slow path (`5^27 < 2^63`, so every product and dividend fits).
/// `None` when neither applies; `Some(None)` for an infinite result.
fn small(d: u64, exp: i64) -> Option<Option<f64>> {
    if d <= 1 << 53 {
        if (0..=22).contains(&exp) {
            return Some(Some(d as f64 * *POW10.get(exp as usize)?));
        }
        if (-22..0).contains(&exp) {
            return Some(Some(d as f64 / *POW10.get(exp.unsigned_abs() as usize)?));
        }
        if (23..=37).contains(&exp) {
            // D × 10^(e-22) may still be an exact integer below 2^53 (10^16 alone is not).
            if let Some(scaled) = 10u64.checked_pow((exp - 22) as u32).and_then(|p| d.checked_mul(p)) {
                if scaled <= 1 << 53 {
                    return Some(Some(scaled as f64 * 1e22));
                }
            }
        }
    }
    let pow5 = u128::from(*POW5.get(usize::try_from(exp.unsigned_abs()).ok()?)?);
    let (mant, exp2, sticky) = if exp >= 0 {
        let n = u128::from(d) * pow5; // < 2^64 · 2^63
        let shift = 128 - n.leading_zeros();
        if shift <= 64 {
            let top = (n as u64) << (64 - shift);
            (top, exp - i64::from(64 - shift), false)
        } else {
            let drop = shift - 64;
            let sticky = n & ((1u128 << drop) - 1) != 0;
            ((n >> drop) as u64, exp + i64::from(drop), sticky)
        }
    } else {
        let b_bits = 128 - pow5.leading_zeros();
        let k = b_bits + 64 - (64 - d.leading_zeros()); // <= 63 + 64 - 1
        let a = u128::from(d) << k; // < 2^(b_bits + 64) <= 2^127
        let q = a.checked_div(pow5)?;
        let rem = a.checked_rem(pow5)?;
        normalize(q, exp - i64::from(k), rem != 0)
    };
    Some(round(mant, exp2, sticky))
}

#[cfg(test)]
mod tests {
    use super::super::pow5_table::{LARGEST_POWER, POW5_128, SMALLEST_POWER};
    use super::{big, eisel_lemire, parse_f64, short_decimal, short_decimal_at, small, walk, Big, Digits, Long};
    use crate::json::number::scan_number;
    use core::cmp::Ordering;

    /// Cases per layer test: each layer is checked on its own, not only through
    /// `parse_f64`, where a later layer would hide a layer that gives up too often.
    const CASES: u64 = if cfg!(miri) { 30 } else { 20_000 };

    /// splitmix64, so a failing case is reproducible.
    fn next(state: &mut u64) -> u64 {
        *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A non-zero significand of a random bit length, so short and long ones are tested.
    fn significand(state: &mut u64) -> u64 {
        (next(state) >> (next(state) % 64)).max(1)
    }

    /// `digits × 10^exp` as `str::parse` rounds it; `None` for infinity.
    fn core_value(digits: &str, exp: i64) -> Option<u64> {
        let value: f64 = format!("{digits}e{exp}").parse().unwrap();
        value.is_finite().then(|| value.to_bits())
    }

    fn bits(value: Option<f64>) -> Option<u64> {
        value.map(f64::to_bits)
    }

    #[test]
    fn the_fast_and_u128_paths_decide_every_exponent_up_to_27_exactly() {
        let mut state = 1;
        for _ in 0..CASES {
            let d = significand(&mut state);
            let exp = (next(&mut state) % 55) as i64 - 27;
            assert_eq!(small(d, exp).map(bits), Some(core_value(&d.to_string(), exp)), "{d}e{exp}");
        }
        for (d, exp) in [(1, 0), (u64::MAX, 27), (u64::MAX, -27), (1 << 53, 22), ((1 << 53) + 1, -22), (1, -27)] {
            assert_eq!(small(d, exp).map(bits), Some(core_value(&d.to_string(), exp)), "{d}e{exp}");
        }
    }

    /// Products `d × 5^e` whose top 64 bits end exactly half a unit above a double's
    /// last bit, with `r` in the bits dropped below them: a tie when `r` is 0, more
    /// than half otherwise, wherever in those bits `r` lies.
    #[test]
    fn a_u128_product_just_above_a_halfway_point_rounds_up_and_one_on_it_to_even() {
        let (mut ties, mut odd, mut even) = (0, 0, 0);
        for e in 1..=27u32 {
            let power = 5u128.pow(e);
            // The bits dropped: as many as keep `d` below 2^64.
            let drop = power.ilog2();
            for k in (0..if cfg!(miri) { 40 } else { 4000u128 }).map(|k| 2 * k * 0x9E37_79B9) {
                // 2^63 + an even significand tail, then exactly half a unit (bit 10).
                let top = (1u128 << 63) | ((k % (1 << 52)) << 11) | (1 << 10);
                let base = top << drop;
                let r = (power - base % power) % power;
                if r >= 1 << drop {
                    continue;
                }
                let d = u64::try_from((base + r) / power).unwrap();
                assert_eq!(small(d, i64::from(e)).map(bits), Some(core_value(&d.to_string(), i64::from(e))), "{d}e{e}");
                match r {
                    0 => ties += 1,
                    _ if r % 2 == 1 => odd += 1,
                    _ => even += 1,
                }
            }
        }
        assert!(ties > 0 && odd > 0 && even > 0, "ties {ties}, odd {odd}, even {even}");
    }

    #[test]
    fn beyond_27_the_fast_path_takes_only_exact_integers_times_1e22() {
        let mut state = 2;
        for _ in 0..CASES {
            let d = significand(&mut state) >> (next(&mut state) % 40);
            let d = d.max(1);
            let exp = 28 + (next(&mut state) % 20) as i64;
            let exact = exp <= 37
                && 10u64.checked_pow((exp - 22) as u32).and_then(|p| d.checked_mul(p)).is_some_and(|n| n <= 1 << 53);
            let expected = exact.then(|| core_value(&d.to_string(), exp));
            assert_eq!(small(d, exp).map(bits), expected, "{d}e{exp}");
            assert_eq!(small(d, -exp), None, "{d}e-{exp}");
        }
        // The edges: the scaled integer at most 2^53, and 10^15 the largest scale.
        assert_eq!(small(9_007_199_254, 28).map(bits), Some(core_value("9007199254", 28)));
        assert_eq!(small(9_007_199_255, 28), None);
        assert_eq!(small(9, 37).map(bits), Some(core_value("9", 37)));
        assert_eq!(small(1, 38), None);
    }

    #[test]
    fn eisel_lemire_decides_almost_every_case_and_always_as_core_does() {
        let mut state = 3;
        let span = (LARGEST_POWER - SMALLEST_POWER + 11) as u64;
        let mut undecided = 0;
        for _ in 0..CASES {
            let w = significand(&mut state);
            let q = SMALLEST_POWER - 5 + (next(&mut state) % span) as i64;
            match eisel_lemire(w, q) {
                Some(value) => assert_eq!(bits(value), core_value(&w.to_string(), q), "{w}e{q}"),
                None => undecided += 1,
            }
        }
        // Only rare near-halfway cases are left undecided: none among these.
        assert_eq!(undecided, 0, "cases left to the exact path");
        // Outside the table: zero below it, infinity above it, and zero for a zero `w`.
        assert_eq!(eisel_lemire(u64::MAX, SMALLEST_POWER - 1).map(bits), Some(Some(0)));
        assert_eq!(eisel_lemire(1, LARGEST_POWER + 1), Some(None));
        assert_eq!(eisel_lemire(0, 10).map(bits), Some(Some(0)));
        // The edges of the range: the largest double, the first infinite value, the
        // smallest subnormal and the value that rounds down to zero; then values that
        // round up to a power of two, carrying out of the significand.
        for (w, q) in [
            (17976931348623157, 292),
            (17976931348623159, 292),
            (49406564584124654, -340),
            (24703282292062327, -340),
            (9999999999999999999, -19),
            (1023999999999999999, -15),
            (1099511627775999999, -6),
        ] {
            assert_eq!(eisel_lemire(w, q).map(bits), Some(core_value(&w.to_string(), q)), "{w}e{q}");
        }
    }

    /// The digits as the big integer the exact path starts from.
    fn big_digits(digits: &str) -> Big {
        let mut long = Long { big: Big::from_u64(0), chunk: 0, chunk_digits: 0 };
        assert_eq!(walk(digits.as_bytes(), 0, &mut long), Some((digits.len(), 0)));
        long.flush();
        long.big
    }

    #[test]
    fn the_exact_path_computes_every_value_core_does() {
        let mut state = 4;
        for _ in 0..CASES / 4 {
            let len = 1 + (next(&mut state) % 45) as usize;
            let mut digits: String = (0..len).map(|_| char::from(b'0' + (next(&mut state) % 10) as u8)).collect();
            // A first and a last digit that are not zero: `walk` would drop the zeros.
            digits.replace_range(..1, &(1 + next(&mut state) % 9).to_string());
            digits.replace_range(len - 1.., &(1 + next(&mut state) % 9).to_string());
            // The caller's bounds: the value lies between 10^-325 and 10^311.
            let magnitude = (next(&mut state) % 635) as i64 - 324;
            let exp = magnitude - len as i64;
            assert_eq!(bits(big(big_digits(&digits), exp)), core_value(&digits, exp), "{digits}e{exp}");
        }
    }

    #[test]
    fn a_bit_below_the_top_64_rounds_a_halfway_value_up_wherever_it_is() {
        // T = 2^63 + 2^10: its 53 leading bits and then exactly half a unit.
        const T: u64 = (1 << 63) | (1 << 10);
        let scaled = |low_bit: Option<u32>| {
            // T × 2^74 = (T << 10) × 2^64, as limbs, and the extra bit.
            let mut limbs = [0, T << 10, T >> 54];
            if let Some(bit) = low_bit {
                limbs[(bit / 64) as usize] |= 1 << (bit % 64);
            }
            let mut n = Big::from_u64(0);
            for limb in limbs.into_iter().rev() {
                n.shl(64);
                n.mul_add_small(1, limb);
            }
            big(n, 0)
        };
        // 2^137 and its next double, (2^52 + 1) × 2^85, spelled as bits (Miri's `powi`
        // is deliberately inexact).
        let even = f64::from_bits((1023 + 137) << 52);
        let up = f64::from_bits(((1023 + 137) << 52) | 1);
        // T × 2^74 is a tie: to even. A bit in the limb the top 64 bits end in (bits
        // 64..74 lie below them) or in a limb below makes it more than half: up.
        assert_eq!(scaled(None), Some(even));
        assert_eq!(scaled(Some(64)), Some(up));
        assert_eq!(scaled(Some(73)), Some(up));
        assert_eq!(scaled(Some(3)), Some(up));
    }

    #[test]
    fn a_value_of_up_to_two_limbs_is_a_u128() {
        assert_eq!(Big::from_u64(0).to_u128(), Some(0));
        assert_eq!(Big::from_u64(7).to_u128(), Some(7));
        let mut two = Big::from_u64(3);
        two.shl(64);
        two.mul_add_small(1, 5);
        assert_eq!(two.to_u128(), Some((3 << 64) | 5));
        two.shl(64);
        assert_eq!(two.to_u128(), None);
    }

    /// What `walk` makes of a mantissa: the digits of `D`, their count and `e`.
    fn walked(mantissa: &str) -> Option<(u64, usize, i64)> {
        let mut short = super::Short(0);
        walk(mantissa.as_bytes(), 0, &mut short).map(|(count, exp)| (short.0, count, exp))
    }

    #[test]
    fn walk_keeps_zeros_only_before_a_non_zero_digit_and_scales_for_the_rest() {
        assert_eq!(walked("1000"), Some((1, 1, 3)));
        assert_eq!(walked("100.0100"), Some((10001, 5, -2)));
        assert_eq!(walked("000.000120"), Some((12, 2, -5)));
        assert_eq!(walked("0.0"), Some((0, 0, -1)));
        assert_eq!(walked("1.2.3"), None);
        assert_eq!(walked("."), None);
        // Past 800 digits: the rest scale the value, a non-zero one as a sticky digit.
        let long = std::format!("{}{}", "9".repeat(800), "0".repeat(5));
        let mut digits = Long { big: Big::from_u64(0), chunk: 0, chunk_digits: 0 };
        assert_eq!(walk(long.as_bytes(), 0, &mut digits), Some((800, 5)));
        let sticky = std::format!("{}{}5", "9".repeat(800), "0".repeat(4));
        assert_eq!(walk(sticky.as_bytes(), 0, &mut digits), Some((801, 4)));
        let sticky = "9".repeat(802);
        assert_eq!(walk(sticky.as_bytes(), 0, &mut digits), Some((801, 1)));
    }

    #[test]
    fn long_significands_with_enormous_exponents_are_infinity_or_zero_at_once() {
        let digits = "1".repeat(30);
        for (exp, expected) in [("99999999999999999999", f64::INFINITY), ("-99999999999999999999", 0.0)] {
            assert_eq!(parse_f64(&std::format!("{digits}e{exp}")), expected);
        }
        // The bounds of the early answers: 10^309 and 10^-324 are beyond the doubles.
        for token in [std::format!("{digits}e279"), std::format!("{digits}e278"), std::format!("{digits}e-354")] {
            assert_eq!(parse_f64(&token).to_bits(), token.parse::<f64>().unwrap().to_bits(), "{token}");
        }
    }

    #[test]
    fn short_tokens_are_split_into_digits_and_exponent_in_one_pass() {
        for (token, expected) in [
            ("60.0", Some((600, -1))),
            ("-0.87", Some((87, -2))),
            ("1e-07", Some((1, -7))),
            ("2.5E+05", Some((25, 4))),
            ("1234567890123456789", Some((1_234_567_890_123_456_789, 0))),
            ("12345678901234567890", None),
            ("1.", None),
            ("1e", None),
            ("1e+", None),
            ("1x", None),
            ("1e5x", None),
        ] {
            assert_eq!(short_decimal(token), expected, "{token}");
        }
    }

    /// `w` with its top bit set for which the first 64×64-bit product's low word is
    /// all ones, for the table entry of `q`: `w = -1 / high5 mod 2^64` (odd `high5`).
    /// `None` where no such `w` has its top bit set, or where the low word of the
    /// power would be added in too.
    fn all_ones_low_word(q: i64) -> Option<u64> {
        let (high5, _) = POW5_128[(q - SMALLEST_POWER) as usize];
        if high5 % 2 == 0 {
            return None;
        }
        // Newton's iteration for the inverse modulo 2^64 (each step doubles the bits).
        let mut inverse = high5;
        for _ in 0..6 {
            inverse = inverse.wrapping_mul(2u64.wrapping_sub(high5.wrapping_mul(inverse)));
        }
        let w = inverse.wrapping_neg();
        let product = u128::from(w) * u128::from(high5);
        let mask = u64::MAX >> 55;
        (w >> 63 == 1 && product as u64 == u64::MAX && (product >> 64) as u64 & mask != mask).then_some(w)
    }

    #[test]
    fn an_all_ones_low_word_is_decided_where_the_power_is_exact_or_a_nearest_quotient() {
        // Within -27..=55 the table's power is exact or one unit off in a way that
        // cannot hide a carry, so Eisel–Lemire still decides; outside it gives up.
        let mut found = (0, 0, 0);
        for q in -60..=80 {
            let Some(w) = all_ones_low_word(q) else { continue };
            let result = eisel_lemire(w, q);
            if (-27..=55).contains(&q) {
                assert_eq!(result.map(bits), Some(core_value(&w.to_string(), q)), "{w}e{q}");
                if q < 0 {
                    found.0 += 1
                } else {
                    found.1 += 1
                }
            } else {
                assert_eq!(result, None, "{w}e{q}");
                found.2 += 1;
            }
        }
        assert!(found.0 > 0 && found.1 > 0 && found.2 > 0, "cases found: {found:?}");
    }

    #[test]
    fn the_exact_path_refuses_what_its_big_integers_cannot_hold() {
        // Beyond the caller's bounds: 5^2000 has more bits than a Big holds; 5^1200
        // fits, but the dividend scaled to 64 bits above it does not.
        assert!(big(Big::from_u64(1), 2000).unwrap().is_nan());
        assert!(big(Big::from_u64(1), -1200).unwrap().is_nan());
        let mut full = Big::from_u64(1);
        full.shl(64 * 43);
        assert!(big(full, 0).unwrap().is_nan());
    }

    #[test]
    fn long_digit_strings_move_into_the_big_integer_19_digits_at_a_time() {
        let mut long = Long { big: Big::from_u64(0), chunk: 0, chunk_digits: 0 };
        for _ in 0..18 {
            long.push(9);
        }
        assert_eq!((long.big.len, long.chunk, long.chunk_digits), (0, 999_999_999_999_999_999, 18));
        long.push(9);
        assert_eq!((long.big.to_u128(), long.chunk_digits), (Some(9_999_999_999_999_999_999), 0));
        long.push(1);
        long.flush();
        assert_eq!(long.big.to_u128(), Some(99_999_999_999_999_999_991));
    }

    #[test]
    fn a_shift_past_the_capacity_sets_overflow_instead_of_losing_the_value() {
        // The shift reserves a limb for the bits carried out of the top one, so 2^2688
        // (43 limbs moved, 44 used) is the largest power of two it makes.
        let mut fits = Big::from_u64(1);
        fits.shl(64 * 42);
        assert!(!fits.overflow);
        assert_eq!(fits.bit_len(), 64 * 42 + 1);
        let mut past = Big::from_u64(1);
        past.shl(64 * 43);
        assert!(past.overflow);
        let mut empty = Big::from_u64(0);
        empty.shl(64 * 100);
        assert!(!empty.overflow && empty.bit_len() == 0);
    }

    /// `5^q` normalised to 128 bits with the top bit set, by exact arithmetic, as
    /// `scripts/pow5_table.py` makes it: truncated for `q >= 0`; for `q < 0`, one more
    /// than the quotient `2^b / 5^-q` (`b` of the script), then truncated.
    fn pow5_128(q: i64) -> u128 {
        let mut power = Big::from_u64(1);
        power.mul_pow5(q.unsigned_abs());
        let len = power.bit_len();
        let mut value = if q >= 0 {
            power
        } else {
            let b = if q >= -27 { len + 127 } else { 2 * len + 128 };
            let mut remainder = Big::from_u64(1);
            remainder.shl(b);
            // Binary long division, one quotient bit per step.
            let steps = b + 1 - len;
            let mut divisor = power;
            divisor.shl(steps);
            let mut quotient = Big::from_u64(0);
            for _ in 0..=steps {
                let bit = remainder.cmp(&divisor) != Ordering::Less;
                if bit {
                    remainder.sub(&divisor);
                }
                quotient.mul_add_small(2, u64::from(bit));
                divisor.shr1();
            }
            quotient.mul_add_small(1, 1);
            quotient
        };
        let len = value.bit_len();
        if len < 128 {
            value.shl(128 - len);
        }
        for _ in 128..len {
            value.shr1();
        }
        value.to_u128().unwrap()
    }

    #[test]
    fn the_power_of_five_table_is_exact() {
        let step = if cfg!(miri) { 217 } else { 1 };
        for q in (SMALLEST_POWER..=LARGEST_POWER).step_by(step) {
            let &(high, low) = POW5_128.get((q - SMALLEST_POWER) as usize).unwrap();
            assert_eq!((u128::from(high) << 64) | u128::from(low), pow5_128(q), "5^{q}");
        }
    }

    #[test]
    fn agrees_with_core_on_hard_cases() {
        for token in [
            "0",
            "-0",
            "0.0e10",
            "1",
            "0.1",
            "0.30000000000000004",
            "1.7976931348623157e308",
            "1.7976931348623158e308",
            "1.7976931348623159e308",
            "-1.7976931348623157e308",
            "5e-324",
            "2.4703282292062327e-324",
            "2.4703282292062328e-324",
            "2.2250738585072011e-308",
            "2.2250738585072012e-308",
            "4.9406564584124654e-324",
            "9007199254740993",
            "9007199254740992.5",
            "123456789012345678901234567890",
            "1e23",
            "8.98846567431158e307",
            "1e-400",
            "100000000000000000000000000000000000000000000e-50",
            "0.000000000000000000000000000000000000000000001e44",
        ] {
            let ours = parse_f64(token);
            let core: f64 = token.parse().unwrap();
            assert_eq!(ours.to_bits(), core.to_bits(), "{token}: {ours:e} vs {core:e}");
        }
        assert_eq!(parse_f64("1e309"), f64::INFINITY);
        assert_eq!(parse_f64("-1e99999999999999999999999"), f64::NEG_INFINITY);
        assert_eq!(parse_f64("1e-99999999999999999999999").to_bits(), 0);
        assert!(parse_f64("").is_nan() && parse_f64("1..2").is_nan() && parse_f64("1e").is_nan());
    }

    #[test]
    fn long_significands_round_with_the_sticky_digit() {
        // The midpoint between 1 and the next double, followed by 900 zeros and a 1:
        // only the sticky digit decides that it rounds up.
        let midpoint = "1.00000000000000011102230246251565404236316680908203125";
        let above = format!("{midpoint}{}1", "0".repeat(900));
        assert_eq!(parse_f64(midpoint), 1.0);
        assert_eq!(parse_f64(&above), above.parse::<f64>().unwrap());
        assert_eq!(parse_f64(&above), 1.0000000000000002);
    }

    /// A token `short_decimal_at` takes is read as the scanner and `parse_f64` read it;
    /// one it refuses has more than 19 digits or more than 4 in its exponent, is
    /// infinite, or is no number at all (or one the quick methods leave undecided).
    fn short_decimal_agrees(text: &str) -> bool {
        let Some((value, end)) = short_decimal_at(text.as_bytes(), 0) else {
            let (token, _) = match scan_number(text, 0) {
                Ok(scanned) => scanned,
                Err(_) => return false,
            };
            let raw = token.raw();
            let mantissa = raw.split(['e', 'E']).next().unwrap_or("");
            let exponent = raw.split(['e', 'E']).nth(1).unwrap_or("");
            let digits = mantissa.bytes().filter(u8::is_ascii_digit).count();
            let exponent_digits = exponent.bytes().filter(u8::is_ascii_digit).count();
            let infinite = parse_f64(raw).is_infinite();
            let undecided = digits <= 19 && {
                let (d, q) = short_decimal(raw).unwrap();
                d != 0 && small(d, q).is_none() && eisel_lemire(d, q).is_none()
            };
            assert!(digits > 19 || exponent_digits > 4 || infinite || undecided, "{text:?} refused");
            return false;
        };
        // A taken token is a number.
        let (token, scanned_end) = scan_number(text, 0).unwrap();
        assert_eq!(end, scanned_end, "{text:?}");
        assert_eq!(value.to_bits(), parse_f64(token.raw()).to_bits(), "{text:?}");
        assert_eq!(value.to_bits(), token.raw().parse::<f64>().unwrap().to_bits(), "{text:?}");
        true
    }

    #[test]
    fn short_decimals_are_read_in_one_pass_as_the_scanner_and_parse_f64_read_them() {
        for (text, taken) in [
            ("0", true),
            ("-0", true),
            ("0.0", true),
            ("-0.0,", true),
            ("0.87}", true),
            ("3600.5 ", true),
            ("123456789012345", true),
            ("1234567890123456", true),
            ("1234567890123456789", true),
            ("12345678901234567890", false),
            ("0.00000000000001", true),
            ("0.000000000000001", true),
            ("0.000000000000000001", true),
            ("0.0000000000000000001", false),
            ("99999999999999.9", true),
            ("0.30000000000000004", true),
            ("0.3333333333333333,", true),
            ("1e3", true),
            ("1.5E-3", true),
            ("1e-07", true),
            ("1e+16", true),
            ("2.5e-05}", true),
            ("1.2345678901234568e+17", true),
            ("5e-324", true),
            ("4e-325", true),
            ("1.7976931348623157e+308", true),
            ("1.7976931348623159e+308", false),
            ("1e309", false),
            ("0e99999", false),
            ("0e9999", true),
            ("1e0000", true),
            ("1e00000", false),
            ("1e", false),
            ("1e+", false),
            ("1e-x", false),
            ("1E+5 ", true),
            ("00", false),
            ("01.5", false),
            ("-", false),
            ("1.", false),
            (".5", false),
            ("-x", false),
            ("12345678901234567890123456789.5", false),
        ] {
            assert_eq!(short_decimal_agrees(text), taken, "{text:?}");
        }
        // Every decimal of up to 17 digits with the point anywhere, and with an exponent
        // now and then, from a generator.
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut taken = 0;
        for _ in 0..if cfg!(miri) { 200 } else { 200_000 } {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let digits = 1 + (state % 17) as usize;
            let mut text = format!("{}", state >> 8);
            text.truncate(digits);
            let point = ((state >> 20) % (digits as u64 + 1)) as usize;
            if point > 0 && point < text.len() {
                text.insert(point, '.');
            }
            if state & 1 == 1 {
                text.insert(0, '-');
            }
            if state & 6 == 6 {
                let exponent = ((state >> 30) % 700) as i64 - 350;
                text.push_str(&format!("{}{exponent}", if state & 8 == 8 { 'e' } else { 'E' }));
            }
            taken += usize::from(short_decimal_agrees(&text));
        }
        assert!(taken > 100, "the generator's decimals are mostly taken ({taken})");
    }
}
