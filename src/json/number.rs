//! Numbers borrowed from a JSON text: integers read exactly, floats to the nearest f64.

use super::error::{JsonError, JsonErrorKind};
use core::cmp::Ordering;

/// A JSON number token as it stands in the text.
///
/// Integer tokens (no fraction, no exponent) convert exactly with [`as_i64`] /
/// [`as_u64`]; nothing goes through a float.
///
/// [`as_i64`]: JsonNumber::as_i64
/// [`as_u64`]: JsonNumber::as_u64
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JsonNumber<'a> {
    raw: &'a str,
    is_integer: bool,
}

impl<'a> JsonNumber<'a> {
    /// The token text, e.g. `-12`, `0.5e3`.
    pub const fn raw(&self) -> &'a str {
        self.raw
    }

    /// Whether the token is an integer token (no `.`, no exponent).
    pub const fn is_integer(&self) -> bool {
        self.is_integer
    }

    /// The exact value of an integer token within `i64`, else `None`.
    pub fn as_i64(&self) -> Option<i64> {
        if !self.is_integer {
            return None;
        }
        let (negative, digits) = match self.raw.strip_prefix('-') {
            Some(digits) => (true, digits),
            None => (false, self.raw),
        };
        let mut value: i64 = 0;
        for d in digits.bytes() {
            let digit = i64::from(d.wrapping_sub(b'0'));
            value = value.checked_mul(10)?;
            value = if negative { value.checked_sub(digit)? } else { value.checked_add(digit)? };
        }
        Some(value)
    }

    /// The exact value of a non-negative integer token within `u64`, else `None`.
    /// (`-0` is 0.)
    pub fn as_u64(&self) -> Option<u64> {
        if !self.is_integer {
            return None;
        }
        let digits = match self.raw.strip_prefix('-') {
            Some(digits) => {
                return if digits == "0" { Some(0) } else { None };
            }
            None => self.raw,
        };
        let mut value: u64 = 0;
        for d in digits.bytes() {
            value = value.checked_mul(10)?.checked_add(u64::from(d.wrapping_sub(b'0')))?;
        }
        Some(value)
    }

    /// The nearest `f64`, correctly rounded (ties to even), the same value as
    /// `str::parse::<f64>` gives. Always finite: the reader rejects numbers beyond the
    /// `f64` range.
    pub fn as_f64(&self) -> f64 {
        // Not `str::parse`: core's float parser has panic paths the optimiser keeps
        // (see `float.rs`); this conversion has none.
        super::float::parse_f64(self.raw)
    }
}

fn digits_end(text: &[u8], from: usize) -> usize {
    let rest = text.get(from..).unwrap_or(&[]);
    from + rest.iter().position(|b| !b.is_ascii_digit()).unwrap_or(rest.len())
}

/// Scan a number starting at `start`; returns the token and the index after it.
pub(crate) fn scan_number(source: &str, start: usize) -> Result<(JsonNumber<'_>, usize), JsonError> {
    let text = source.as_bytes();
    let malformed = |at| Err(JsonError::new(JsonErrorKind::InvalidNumber, at));
    let mut pos = start;
    if text.get(pos) == Some(&b'-') {
        pos += 1;
    }
    let int_start = pos;
    match text.get(pos) {
        Some(b'0') => {
            pos += 1;
            if text.get(pos).is_some_and(u8::is_ascii_digit) {
                return malformed(pos);
            }
        }
        Some(b'1'..=b'9') => pos = digits_end(text, pos),
        Some(_) => return malformed(pos),
        None => return Err(JsonError::new(JsonErrorKind::UnexpectedEnd, pos)),
    }
    let int_end = pos;
    let mut is_integer = true;
    let mut fraction = pos..pos;
    if text.get(pos) == Some(&b'.') {
        is_integer = false;
        let after = digits_end(text, pos + 1);
        if after == pos + 1 {
            return malformed(pos + 1);
        }
        fraction = pos + 1..after;
        pos = after;
    }
    let mut exponent = 0i64;
    if matches!(text.get(pos), Some(b'e' | b'E')) {
        is_integer = false;
        pos += 1;
        let negative = text.get(pos) == Some(&b'-');
        if matches!(text.get(pos), Some(b'+' | b'-')) {
            pos += 1;
        }
        let after = digits_end(text, pos);
        if after == pos {
            return malformed(pos);
        }
        for &digit in text.get(pos..after).unwrap_or(&[]) {
            // Saturating far beyond any exponent that matters.
            exponent = (exponent * 10 + i64::from(digit - b'0')).min(1 << 40);
        }
        if negative {
            exponent = -exponent;
        }
        pos = after;
    }
    // Every byte scanned is ASCII, so these are character boundaries.
    let raw = source.get(start..pos).unwrap_or("");
    let number = JsonNumber { raw, is_integer };
    // A number beyond the f64 range (`1e999`) has no nearest f64; mainstream strict
    // parsers reject it, and so do we. The token lies in [10^m, 10^(m+1)) for the
    // position m of its first significant digit: below 10^308 it is finite, from
    // 10^309 on it is not (f64::MAX is 1.79...e308), and only m = 308 needs converting.
    let first_significant = if text.get(int_start) != Some(&b'0') {
        Some(exponent + (int_end - int_start) as i64 - 1)
    } else {
        let digits = text.get(fraction.clone()).unwrap_or(&[]);
        digits.iter().position(|&d| d != b'0').map(|zeros| exponent - zeros as i64 - 1)
    };
    // Only m = 308 needs a look at the digits, which are compared, not converted: a
    // reader that never asks for a float value links no float code.
    let integer = text.get(int_start..int_end).unwrap_or(&[]);
    let fraction = text.get(fraction).unwrap_or(&[]);
    match first_significant {
        Some(m) if m >= 309 => return malformed(start),
        Some(308) if rounds_to_infinity(integer, fraction) => return malformed(start),
        _ => {}
    }
    Ok((number, pos))
}

/// The digits of 2^1024 - 2^970, the least decimal that rounds to infinity: halfway
/// between `f64::MAX` and 2^1024, a tie that rounds to the even side, 2^1024. Its last
/// digit is not 0.
const INFINITY_THRESHOLD: &[u8; 309] = b"179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497792";

/// Whether a number whose first significant digit stands for 10^308 is at least
/// [`INFINITY_THRESHOLD`], so that it has no nearest `f64`: its significant digits
/// (integer then fraction, leading zeros skipped) against the threshold's, digit by digit.
fn rounds_to_infinity(integer: &[u8], fraction: &[u8]) -> bool {
    let mut digits = integer.iter().chain(fraction).copied().skip_while(|&d| d == b'0');
    for &limit in INFINITY_THRESHOLD {
        match digits.next().map(|d| d.cmp(&limit)) {
            Some(Ordering::Greater) => return true,
            Some(Ordering::Less) => return false,
            Some(Ordering::Equal) => {}
            // Equal so far and shorter: the threshold's remaining digits end in a non-zero.
            None => return false,
        }
    }
    // Equal to the threshold, or longer with its digits as a prefix.
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn number(s: &str) -> JsonNumber<'_> {
        let (n, end) = scan_number(s, 0).unwrap();
        assert_eq!(end, s.len());
        n
    }

    /// A malformed number is reported at the byte that cannot continue it.
    #[test]
    fn malformed_numbers_point_at_the_byte_that_breaks_them() {
        use JsonErrorKind::{InvalidNumber, UnexpectedEnd};
        for (text, start, kind, offset) in [
            ("01", 0, InvalidNumber, 1),
            ("1.", 0, InvalidNumber, 2),
            ("[1.x]", 1, InvalidNumber, 3),
            ("1e", 0, InvalidNumber, 2),
            ("[1e+]", 1, InvalidNumber, 4),
            ("-a", 0, InvalidNumber, 1),
            ("-", 0, UnexpectedEnd, 1),
        ] {
            assert_eq!(scan_number(text, start).unwrap_err(), JsonError::new(kind, offset), "{text}");
        }
    }

    #[test]
    fn integers_are_exact() {
        assert_eq!(number("9223372036854775807").as_i64(), Some(i64::MAX));
        assert_eq!(number("-9223372036854775808").as_i64(), Some(i64::MIN));
        assert_eq!(number("9223372036854775808").as_i64(), None);
        assert_eq!(number("18446744073709551615").as_u64(), Some(u64::MAX));
        assert_eq!(number("18446744073709551616").as_u64(), None);
        assert_eq!(number("-0").as_u64(), Some(0));
        assert_eq!(number("-1").as_u64(), None);
        assert_eq!(number("1.0").as_i64(), None);
        assert_eq!(number("1e2").as_i64(), None);
    }

    #[test]
    fn floats_parse() {
        assert_eq!(number("0.1").as_f64(), 0.1);
        assert_eq!(number("-2.5E-3").as_f64(), -0.0025);
        assert!(scan_number("1e999", 0).is_err());
        assert!(scan_number("-1.5e308", 0).is_ok());
        assert!(scan_number(&"9".repeat(400), 0).is_err());
        // Around the top of the range, whatever the spelling.
        for finite in [
            "1.7976931348623157e308",
            "17976931348623157e292",
            "0.0017976931348623157e311",
            "1e308",
            "9.9e307",
            "1797693134862315807937e287",
            "0e99999",
            "0.000e400",
            "-1.7976931348623158e308",
        ] {
            assert!(scan_number(finite, 0).is_ok(), "{finite}");
        }
        for infinite in ["1.7976931348623159e308", "1e309", "0.01e311", "10e308", "-2e308", "1e99999999999999999999"] {
            assert!(scan_number(infinite, 0).is_err(), "{infinite}");
        }
        assert!(scan_number(&("1".to_string() + &"0".repeat(308)), 0).is_ok()); // 10^308
        assert!(scan_number(&("1".to_string() + &"0".repeat(309)), 0).is_err());
        // 10^309
    }

    /// At magnitude 10^308 the digits decide, in any spelling: the threshold itself and
    /// anything above it are refused, anything below is read (`str::parse` as the oracle).
    #[test]
    fn the_digits_at_the_threshold_decide_as_str_parse_does() {
        let threshold = core::str::from_utf8(INFINITY_THRESHOLD).unwrap();
        let below = {
            // The threshold less one in its last digit (which is not 0).
            let mut digits = INFINITY_THRESHOLD.to_vec();
            *digits.last_mut().unwrap() -= 1;
            String::from_utf8(digits).unwrap()
        };
        let prefix = &threshold[..40];
        let mut tokens = std::vec::Vec::new();
        for digits in [
            threshold.to_string(),
            below.clone(),
            format!("{threshold}0"),
            format!("{threshold}0001"),
            format!("{below}9999"),
        ] {
            // As an integer, with a point after the first digit, and as 0.000digits.
            tokens.push(digits.clone());
            tokens.push(format!("{}.{}e308", &digits[..1], &digits[1..]));
            tokens.push(format!("-0.000{digits}e312"));
        }
        tokens.push(format!("{prefix}e269"));
        tokens.push(format!("{}.{}9e308", &prefix[..1], &prefix[1..]));
        for token in &tokens {
            let infinite = token.parse::<f64>().unwrap().is_infinite();
            assert_eq!(scan_number(token, 0).is_err(), infinite, "{token}");
        }
        // Both sides were tried.
        assert!(tokens.iter().any(|t| t.parse::<f64>().unwrap().is_infinite()));
        assert!(tokens.iter().any(|t| t.parse::<f64>().unwrap().is_finite()));
    }

    #[test]
    fn rejects_malformed() {
        for bad in ["-", "01", "1.", "1e", "1e+", "-a", ".5"] {
            assert!(scan_number(bad, 0).is_err(), "{bad}");
        }
    }
}
