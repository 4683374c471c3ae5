//! Python's `repr(float)` without allocation (SPEC §3.2, §5, §6).
//!
//! Every JSON text the original implementation wrote puts floats through `float.__repr__`
//! (via `json.dumps`). The digits are the shortest decimal string that reads back as the
//! same `f64`, the closest of those (Ryū computes them, panic-free); this module lays
//! those digits out the way CPython's `float_repr_style = 'short'` does:
//!
//! * decimal exponent `e` (of the form `d.ddd × 10^e`) with `-4 <= e < 16`: positional,
//!   always with a `.` and at least one digit after it (`60.0`, `0.0001`,
//!   `1234567890123456.0`);
//! * otherwise scientific: the digits with a `.` only when there is more than one, then
//!   `e`, the exponent's sign and at least two exponent digits (`1e-05`, `1e+16`,
//!   `2.5e-05`, `1.2345678901234568e+17`, `5e-324`);
//! * an exact tie between two shortest candidates goes to the even last digit, as in
//!   CPython (`1234567890123456.25` is `1234567890123456.2`; `core::fmt`'s `{:e}`
//!   says `.3`);
//! * a leading `-` for negative values, including `-0.0`;
//! * `nan`, `inf`, `-inf` for the non-finite values (JSON writers reject those before
//!   they get here).
//!
//! ```
//! use membrane_frame::pyfloat::PyFloat;
//! assert_eq!(PyFloat::new(60.0).as_str(), "60.0");
//! assert_eq!(PyFloat::new(0.87).as_str(), "0.87");
//! assert_eq!(PyFloat::new(1e-7).as_str(), "1e-07");
//! assert_eq!(PyFloat::new(1e16).as_str(), "1e+16");
//! assert_eq!(PyFloat::new(123456789012345678.0).as_str(), "1.2345678901234568e+17");
//! assert_eq!(PyFloat::new(5e-324).as_str(), "5e-324");
//! assert_eq!(PyFloat::new(-0.0).as_str(), "-0.0");
//! ```

use crate::sink::ByteSink;
use core::fmt;

/// Capacity of the text buffer. The longest repr of an `f64` is 24 bytes
/// (`-2.2250738585072014e-308`, `-0.00012345678901234567`).
pub const MAX_REPR_LEN: usize = 32;

/// Scientific notation is used when the decimal exponent is below this...
const SCI_BELOW: i32 = -4;
/// ...or at least this.
const SCI_FROM: i32 = 16;

/// The `repr` of one `f64`, held on the stack.
///
/// ```
/// use membrane_frame::pyfloat::PyFloat;
/// assert_eq!(PyFloat::new(0.1).as_str(), "0.1");
/// assert_eq!(PyFloat::new(1e22).to_string(), "1e+22");
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct PyFloat {
    buf: [u8; MAX_REPR_LEN],
    len: usize,
}

/// A fixed-capacity `fmt::Write` target.
struct StackText<const N: usize> {
    buf: [u8; N],
    len: usize,
}

impl<const N: usize> StackText<N> {
    const fn new() -> Self {
        StackText { buf: [0; N], len: 0 }
    }

    fn push(&mut self, bytes: &[u8]) {
        let Some(target) = self.buf.get_mut(self.len..).and_then(|rest| rest.get_mut(..bytes.len())) else {
            return;
        };
        target.copy_from_slice(bytes);
        self.len += bytes.len();
    }

    fn push_zeros(&mut self, count: usize) {
        for _ in 0..count {
            self.push(b"0");
        }
    }
}

/// Decimal digits and exponent: the value is `d.ddd × 10^exponent`.
#[derive(Clone, Copy)]
struct Digits {
    buf: [u8; 24],
    count: usize,
    exponent: i32,
}

impl Digits {
    fn as_slice(&self) -> &[u8] {
        self.buf.get(..self.count).unwrap_or(b"0")
    }

    /// Read a non-negative decimal in either notation Ryū writes (`0.0001`, `60.0`,
    /// `1.2345e-7`, `5e-324`, `1e16`): its significant digits, without leading or
    /// trailing zeros, and the decimal exponent of the first one.
    fn from_text(text: &[u8]) -> Digits {
        let mut digits = Digits { buf: [0; 24], count: 0, exponent: 0 };
        // Digits before the point, counted from the first significant one (negative
        // while only zeros after the point were seen).
        let mut point: i32 = 0;
        let (mut after_point, mut in_exponent, mut exponent_negative) = (false, false, false);
        let mut written: i32 = 0;
        for &byte in text {
            match byte {
                b'e' | b'E' => in_exponent = true,
                b'-' => exponent_negative = true, // only an exponent has a sign here
                b'.' => after_point = true,
                b'0'..=b'9' if in_exponent => {
                    written = written.saturating_mul(10).saturating_add(i32::from(byte - b'0'));
                }
                // A leading zero after the point moves the first significant digit one
                // place down; before the point it is no digit at all.
                b'0' if digits.count == 0 && after_point => point = point.saturating_sub(1),
                b'0' if digits.count == 0 => {}
                b'0'..=b'9' => {
                    if let Some(slot) = digits.buf.get_mut(digits.count) {
                        *slot = byte;
                        digits.count += 1;
                    }
                    if !after_point {
                        point = point.saturating_add(1);
                    }
                }
                _ => {}
            }
        }
        if exponent_negative {
            written = -written;
        }
        digits.exponent = point.saturating_sub(1).saturating_add(written);
        while digits.as_slice().last() == Some(&b'0') {
            digits.count -= 1;
        }
        if digits.count == 0 {
            // Zero.
            if let Some(first) = digits.buf.first_mut() {
                *first = b'0';
            }
            digits.count = 1;
            digits.exponent = 0;
        }
        digits
    }
}

/// Shortest round-trip digits of a finite, non-negative `f64`, as CPython's `repr`
/// chooses them (David Gay's `dtoa`, mode 0: the shortest digits that read back as the
/// value, the closest of those, an exact tie to the even last digit). Ryū makes the
/// same choice, ties included; it is used rather than `core::fmt`'s `{:e}`, which
/// breaks ties upwards and whose code can panic, because every C entry point of the
/// no_std library is proven panic-free (scripts/ffi-panic-check.sh).
fn shortest_digits(magnitude: f64) -> Digits {
    Digits::from_text(ryu::Buffer::new().format_finite(magnitude).as_bytes())
}

impl PyFloat {
    /// Format `value` as Python's `repr(value)` does.
    pub fn new(value: f64) -> PyFloat {
        let mut out = StackText::<MAX_REPR_LEN>::new();
        if value.is_nan() {
            out.push(b"nan");
        } else if value.is_infinite() {
            out.push(if value < 0.0 { b"-inf" } else { b"inf" });
        } else {
            if value.is_sign_negative() {
                out.push(b"-");
            }
            let digits = shortest_digits(value.abs());
            if (SCI_BELOW..SCI_FROM).contains(&digits.exponent) {
                layout_positional(&mut out, digits.as_slice(), digits.exponent);
            } else {
                layout_scientific(&mut out, digits.as_slice(), digits.exponent);
            }
        }
        PyFloat { buf: out.buf, len: out.len }
    }

    /// The text, e.g. `"60.0"`.
    pub fn as_str(&self) -> &str {
        // Only ASCII is ever written.
        core::str::from_utf8(self.as_bytes()).unwrap_or("")
    }

    /// The text as bytes.
    pub fn as_bytes(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or(&[])
    }
}

/// `-4 <= exponent < 16`: digits with the point placed, at least one digit after it.
fn layout_positional(out: &mut StackText<MAX_REPR_LEN>, digits: &[u8], exponent: i32) {
    if exponent < 0 {
        out.push(b"0.");
        out.push_zeros(exponent.unsigned_abs().saturating_sub(1) as usize);
        out.push(digits);
        return;
    }
    // exponent is 0..=15 here.
    let integer_len = exponent.unsigned_abs() as usize + 1;
    match digits.split_at_checked(integer_len) {
        Some((integer, fraction)) if !fraction.is_empty() => {
            out.push(integer);
            out.push(b".");
            out.push(fraction);
        }
        _ => {
            out.push(digits);
            out.push_zeros(integer_len.saturating_sub(digits.len()));
            out.push(b".0");
        }
    }
}

/// Scientific: `d[.ddd]e±XX`.
fn layout_scientific(out: &mut StackText<MAX_REPR_LEN>, digits: &[u8], exponent: i32) {
    let (first, rest) = digits.split_at_checked(1).unwrap_or((b"0", &[]));
    out.push(first);
    if !rest.is_empty() {
        out.push(b".");
        out.push(rest);
    }
    out.push(if exponent.is_negative() { b"e-" } else { b"e+" });
    // At least two digits (an f64's decimal exponent has at most three).
    let magnitude = exponent.unsigned_abs().min(999);
    let hundreds = (magnitude / 100) as u8;
    if hundreds > 0 {
        out.push(&[b'0' + hundreds]);
    }
    out.push(&[b'0' + (magnitude / 10 % 10) as u8, b'0' + (magnitude % 10) as u8]);
}

impl fmt::Display for PyFloat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for PyFloat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PyFloat({})", self.as_str())
    }
}

/// Write `repr(value)` into a sink.
///
/// ```
/// use membrane_frame::{pyfloat::write_repr, SliceSink};
/// let mut buf = [0u8; 32];
/// let mut sink = SliceSink::new(&mut buf);
/// write_repr(&mut sink, 2.5e-5).unwrap();
/// assert_eq!(sink.written(), b"2.5e-05");
/// ```
pub fn write_repr<S: ByteSink + ?Sized>(sink: &mut S, value: f64) -> Result<(), S::Error> {
    sink.write_bytes(PyFloat::new(value).as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repr(value: f64) -> std::string::String {
        PyFloat::new(value).as_str().into()
    }

    /// Both notations Ryū writes give the significant digits alone (the trailing
    /// zeros of `100.0` and the leading ones of `0.00012` dropped) and the exponent of
    /// the first digit, whatever the sign of the written exponent.
    #[test]
    fn digits_are_read_without_leading_or_trailing_zeros() {
        let cases: &[(&[u8], &[u8], i32)] = &[
            (b"100.0", b"1", 2),
            (b"1000000000000000.0", b"1", 15),
            (b"120.5", b"1205", 2),
            (b"0.00012", b"12", -4),
            (b"1e16", b"1", 16),
            (b"1.2345e-7", b"12345", -7),
            (b"5e-324", b"5", -324),
            (b"1.7976931348623157e308", b"17976931348623157", 308),
            (b"0.0", b"0", 0),
        ];
        for &(text, digits, exponent) in cases {
            let read = Digits::from_text(text);
            assert_eq!(
                (read.as_slice(), read.exponent),
                (digits, exponent),
                "{}",
                std::string::String::from_utf8_lossy(text)
            );
        }
    }

    #[test]
    fn a_repr_displays_as_its_text_and_debugs_with_its_type() {
        let value = PyFloat::new(1e-5);
        assert_eq!(std::format!("{value}"), "1e-05");
        assert_eq!(std::format!("{value:?}"), "PyFloat(1e-05)");
    }

    #[test]
    #[allow(clippy::excessive_precision)] // exact ties need every digit
    fn layout_boundaries_follow_cpython() {
        let cases: &[(f64, &str)] = &[
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.0, "1.0"),
            (60.0, "60.0"),
            (0.1, "0.1"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (0.00012345, "0.00012345"),
            (1e15, "1000000000000000.0"),
            (1234567890123456.0, "1234567890123456.0"),
            (1e16, "1e+16"),
            (1.5e16, "1.5e+16"),
            (1e100, "1e+100"),
            (1e-100, "1e-100"),
            (f64::MAX, "1.7976931348623157e+308"),
            (f64::MIN_POSITIVE, "2.2250738585072014e-308"),
            (-f64::MIN_POSITIVE, "-2.2250738585072014e-308"),
            (5e-324, "5e-324"),
            (1234567890123456.25, "1234567890123456.2"),
            (2.98023223876953125e-08, "2.9802322387695312e-08"),
            (1990470691646.78125, "1990470691646.7812"),
            (f64::NAN, "nan"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
        ];
        for &(value, expected) in cases {
            assert_eq!(repr(value), expected, "{value:e}");
        }
    }

    #[test]
    fn output_always_reads_back_to_the_same_value() {
        let mut bits: u64 = 0x9E37_79B9_7F4A_7C15;
        // 10 000 values take minutes under Miri; 200 random ones keep it on the same code.
        for _ in 0..if cfg!(miri) { 200 } else { 10_000 } {
            bits ^= bits << 13;
            bits ^= bits >> 7;
            bits ^= bits << 17;
            let value = f64::from_bits(bits);
            if !value.is_finite() {
                continue;
            }
            let text = repr(value);
            assert!(text.len() <= 24, "{text}");
            assert!(text.contains('.') || text.contains('e'), "{text}");
            assert_eq!(text.parse::<f64>().unwrap().to_bits(), bits, "{text}");
        }
    }
}
