//! Integers as decimal digits, shared by the canonical writers and the error text.
//!
//! Where the machine divides 64-bit numbers in one instruction, by ten in a loop; on
//! 32-bit targets by ten in 16-bit steps of 32-bit divisions instead, because there a
//! `u64 / 10` calls the compiler's 64-bit division routine, about 1 KB of a
//! microcontroller's flash that nothing else in a frame reader needs.

/// The digits of `value` at the end of `digits`: the slice written (no sign, no leading
/// zeros, `"0"` for 0).
pub(crate) fn decimal(value: u64, digits: &mut [u8; 20]) -> &[u8] {
    #[cfg(target_pointer_width = "64")]
    let start = by_division(value, digits, divide_natively);
    #[cfg(not(target_pointer_width = "64"))]
    let start = by_division(value, digits, divide_by_ten);
    digits.get(start..).unwrap_or(&[])
}

/// [`decimal`] by dividing by ten with `divide` (quotient and remainder): the index of
/// the first digit.
fn by_division(mut value: u64, digits: &mut [u8; 20], divide: fn(u64) -> (u64, u8)) -> usize {
    let mut start = digits.len();
    for slot in digits.iter_mut().rev() {
        let (quotient, digit) = divide(value);
        *slot = b'0' + digit;
        start -= 1;
        value = quotient;
        if value == 0 {
            break;
        }
    }
    start
}

/// `value / 10` and `value % 10` in the CPU's own 64-bit division.
#[cfg(any(test, target_pointer_width = "64"))]
fn divide_natively(value: u64) -> (u64, u8) {
    (value / 10, (value % 10) as u8)
}

/// `value / 10` and `value % 10` by long division in 16-bit steps: each step divides a
/// number below 10 * 2^16 by ten, which a 32-bit CPU does in one instruction.
#[cfg(any(test, not(target_pointer_width = "64")))]
fn divide_by_ten(value: u64) -> (u64, u8) {
    let mut quotient = 0u64;
    let mut remainder = 0u32;
    for shift in [48, 32, 16, 0] {
        let part = remainder * 0x1_0000 + ((value >> shift) as u32 & 0xFFFF);
        quotient += u64::from(part / 10) << shift;
        remainder = part % 10;
    }
    (quotient, remainder as u8)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::format;

    #[test]
    fn both_ways_write_every_u64_as_display_does() {
        let mut values =
            std::vec![0, 1, 9, 10, 11, 99, 100, 101, 315, 4_294_967_295, 4_294_967_296, u64::MAX - 1, u64::MAX];
        let mut power = 1u64;
        while let Some(next) = power.checked_mul(10) {
            values.extend([power - 1, power, power + 1, next - 1]);
            power = next;
        }
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..if cfg!(miri) { 50 } else { 10_000 } {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            values.push(state >> (state % 64));
        }
        for value in values {
            let mut digits = [0u8; 20];
            let start = by_division(value, &mut digits, divide_natively);
            assert_eq!(&digits[start..], format!("{value}").as_bytes());
            let mut digits = [0u8; 20];
            let start = by_division(value, &mut digits, divide_by_ten);
            assert_eq!(&digits[start..], format!("{value}").as_bytes(), "{value}");
            assert_eq!(decimal(value, &mut [0u8; 20]), format!("{value}").as_bytes());
        }
    }
}
