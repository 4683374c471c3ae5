//! Differential test of the crate's own decimal → f64 conversion (`src/json/float.rs`,
//! reached through `JsonNumber::as_f64` and the reader's range check) against
//! `str::parse::<f64>`, on generated JSON number tokens with the hard cases in bulk:
//! exact midpoints between neighbouring doubles (ties to even) and tokens just above
//! and below them, subnormals and the smallest subnormal's halfway point, the largest
//! double and the overflow threshold, 0.1 and its neighbours, long and zero-padded
//! digit strings, and random doubles in shortest, `{:?}` and fixed-precision spellings.
//!
//! Every token must either read to exactly the bits `str::parse` gives (sign included),
//! or — exactly when `str::parse` says infinity — be rejected as an invalid number.
//! `FLOAT_CASES` sets the number of tokens (default 50 000; `scripts/check.sh` runs
//! 2 000 000 in release mode).

use membrane_frame::json::{Event, JsonErrorKind, Limits, Reader};

/// splitmix64: deterministic, so a failure names a reproducible case number.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn digit(&mut self) -> char {
        char::from(b'0' + self.below(10) as u8)
    }
}

/// A big decimal integer in base 10^9 limbs (little-endian), for exact expansions.
struct Dec(Vec<u32>);

impl Dec {
    fn from_u64(mut v: u64) -> Dec {
        let mut limbs = Vec::new();
        while v > 0 {
            limbs.push((v % 1_000_000_000) as u32);
            v /= 1_000_000_000;
        }
        Dec(limbs)
    }

    fn mul(&mut self, factor: u64) {
        let mut carry = 0u64;
        for limb in &mut self.0 {
            let v = u64::from(*limb) * factor + carry;
            *limb = (v % 1_000_000_000) as u32;
            carry = v / 1_000_000_000;
        }
        while carry > 0 {
            self.0.push((carry % 1_000_000_000) as u32);
            carry /= 1_000_000_000;
        }
    }

    fn mul_pow(&mut self, base: u64, mut exp: u32) {
        let (chunk, chunk_exp) = if base == 5 { (1_220_703_125, 13) } else { (1 << 30, 30) };
        while exp >= chunk_exp {
            self.mul(chunk);
            exp -= chunk_exp;
        }
        self.mul(base.pow(exp));
    }

    fn to_digits(&self) -> String {
        let mut out = String::new();
        for (i, limb) in self.0.iter().rev().enumerate() {
            if i == 0 {
                out.push_str(&limb.to_string());
            } else {
                out.push_str(&format!("{limb:09}"));
            }
        }
        if out.is_empty() {
            out.push('0');
        }
        out
    }
}

/// The exact decimal of `odd × 2^q` as `(digits, decimal exponent)`.
fn exact(odd: u64, q: i32) -> (String, i32) {
    let mut dec = Dec::from_u64(odd);
    if q >= 0 {
        dec.mul_pow(2, q as u32);
        (dec.to_digits(), 0)
    } else {
        // odd × 2^q = odd × 5^-q × 10^q
        dec.mul_pow(5, q.unsigned_abs());
        (dec.to_digits(), q)
    }
}

/// The exact midpoint between the positive finite double with these bits and the next
/// one up, as `(digits, decimal exponent)`.
fn midpoint(bits: u64) -> (String, i32) {
    let exponent_field = (bits >> 52) as i32;
    let fraction = bits & ((1 << 52) - 1);
    let (mant, e2) = if exponent_field == 0 { (fraction, -1074) } else { (fraction | 1 << 52, exponent_field - 1075) };
    // (mant + 1/2) × 2^e2 = (2·mant + 1) × 2^(e2 - 1)
    exact(2 * mant + 1, e2 - 1)
}

/// A token `digits` × 10^exp, spelled with the decimal point somewhere in the digits.
fn spell(rng: &mut Rng, digits: &str, exp: i32) -> String {
    let digits = digits.trim_start_matches('0');
    if digits.is_empty() {
        return "0".to_string();
    }
    match rng.below(3) {
        0 => format!("{digits}e{exp}"),
        1 => {
            // d.ddd e(exp + len - 1)
            let (first, rest) = digits.split_at(1);
            let e = exp as i64 + rest.len() as i64;
            if rest.is_empty() {
                format!("{first}E{e:+}")
            } else {
                format!("{first}.{rest}e{e}")
            }
        }
        _ => {
            // 0.000ddd e(exp + len + zeros)
            let zeros = rng.below(30) as usize;
            let e = exp as i64 + digits.len() as i64 + zeros as i64;
            format!("0.{}{digits}e{e}", "0".repeat(zeros))
        }
    }
}

/// Decimal digits minus one in the last place (digits of a positive integer > 0).
fn decrement(digits: &str) -> String {
    let mut bytes = digits.as_bytes().to_vec();
    for b in bytes.iter_mut().rev() {
        if *b == b'0' {
            *b = b'9';
        } else {
            *b -= 1;
            break;
        }
    }
    String::from_utf8(bytes).unwrap()
}

fn random_finite_bits(rng: &mut Rng) -> u64 {
    loop {
        let bits = match rng.below(6) {
            0 => rng.below(1 << 52),                                                   // subnormal
            1 => (rng.below(3) << 52) | rng.below(1 << 52),                            // smallest binades
            2 => ((2046 - rng.below(3)) << 52) | rng.below(1 << 52),                   // largest binades
            3 => 0x3FB9_9999_9999_999A_u64.wrapping_add(rng.below(9)).wrapping_sub(4), // 0.1
            _ => rng.next() & 0x7FFF_FFFF_FFFF_FFFF,
        };
        if bits < 0x7FF0_0000_0000_0000 {
            return bits;
        }
    }
}

/// One generated token (without a sign) of the given kind.
fn token(rng: &mut Rng, case: u64) -> String {
    match case % 10 {
        0 | 1 => {
            let x = f64::from_bits(random_finite_bits(rng));
            match rng.below(3) {
                0 => format!("{x:e}"),
                1 => format!("{x:?}"),
                _ => format!("{x:.*e}", rng.below(25) as usize),
            }
        }
        2..=5 => {
            // A midpoint, exactly, just above, just below, or cut short.
            let bits = if case % 40 == 2 { 0x7FEF_FFFF_FFFF_FFFF } else { random_finite_bits(rng) };
            let (digits, exp) = midpoint(bits);
            match case % 10 {
                2 => spell(rng, &digits, exp),
                3 => {
                    let pad = rng.below(40) as i32;
                    spell(rng, &format!("{digits}{}1", "0".repeat(pad as usize)), exp - pad - 1)
                }
                4 => {
                    let pad = rng.below(40) as i32 + 1;
                    spell(rng, &format!("{}{}", decrement(&digits), "9".repeat(pad as usize)), exp - pad)
                }
                _ => {
                    let keep = (1 + rng.below(25) as usize).min(digits.len());
                    spell(rng, &digits[..keep], exp + (digits.len() - keep) as i32)
                }
            }
        }
        6 | 7 => {
            // Random digit strings, some very long, anywhere near the f64 range.
            let len = match rng.below(4) {
                0 => 1 + rng.below(20),
                1 => 15 + rng.below(10),
                2 => 1 + rng.below(200),
                _ => 700 + rng.below(400),
            } as usize;
            let mut digits: String = (0..len).map(|_| rng.digit()).collect();
            if rng.below(4) == 0 {
                // Runs of 9s and 0s push towards carries and trailing-zero handling.
                let fill = if rng.below(2) == 0 { '9' } else { '0' };
                let from = rng.below(len as u64) as usize;
                digits.replace_range(from.., &fill.to_string().repeat(len - from));
            }
            let exp = rng.below(700) as i32 - 350 - len as i32 / 2;
            spell(rng, &digits, exp)
        }
        8 => {
            // Short significands with exponents at the edges of Clinger's fast path.
            let d = rng.below(1 << 54);
            let exp = rng.below(80) as i32 - 40;
            spell(rng, &d.to_string(), exp)
        }
        _ => {
            // Far out: overflow, underflow, exponents with many digits, zeros.
            match rng.below(6) {
                0 => format!("{}e{}", rng.below(1000) + 1, 300 + rng.below(20)),
                1 => format!("{}e-{}", rng.below(1000) + 1, 320 + rng.below(10)),
                2 => {
                    format!("1e{}{}", if rng.below(2) == 0 { "-" } else { "+" }, "9".repeat(1 + rng.below(30) as usize))
                }
                3 => format!("0.{}e{}", "0".repeat(1 + rng.below(400) as usize), rng.below(1000)),
                4 => format!("0{}", if rng.below(2) == 0 { ".0" } else { "e5" }),
                _ => format!("{}e-{}", "9".repeat(1 + rng.below(30) as usize), 300 + rng.below(60)),
            }
        }
    }
}

/// Our verdict on one token: the value, or the reader's error kind.
fn ours(token: &str) -> Result<f64, JsonErrorKind> {
    let mut reader: Reader = Reader::new(token.as_bytes(), Limits::default());
    match reader.next_event().map_err(|e| e.kind)? {
        Some(Event::Number(n)) => {
            assert!(reader.next_event().map_err(|e| e.kind)?.is_none(), "{token}: one value");
            Ok(n.as_f64())
        }
        other => panic!("{token}: not a number event: {other:?}"),
    }
}

fn check(token: &str) {
    let expected: f64 = token.parse().unwrap_or_else(|e| panic!("generator wrote {token:?}: {e}"));
    match ours(token) {
        Ok(value) => assert!(
            expected.is_finite() && value.to_bits() == expected.to_bits(),
            "{token}: ours {value:e} ({:#x}), str::parse {expected:e} ({:#x})",
            value.to_bits(),
            expected.to_bits()
        ),
        Err(kind) => assert!(
            expected.is_infinite() && kind == JsonErrorKind::InvalidNumber,
            "{token}: ours {kind:?}, str::parse {expected:e}"
        ),
    }
}

#[test]
fn conversion_equals_str_parse_on_generated_tokens() {
    let cases: u64 = std::env::var("FLOAT_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(50_000);
    let mut rng = Rng(0x4D45_4D42_5241_4E45);
    let (mut finite, mut rejected) = (0u64, 0u64);
    for case in 0..cases {
        let body = token(&mut rng, case);
        let token = if rng.below(2) == 0 { format!("-{body}") } else { body };
        check(&token);
        if token.parse::<f64>().unwrap().is_finite() {
            finite += 1;
        } else {
            rejected += 1;
        }
    }
    println!("float differential: {cases} tokens, {finite} equal to str::parse bit for bit, {rejected} rejected as beyond f64 (str::parse: infinity)");
}

#[test]
fn named_hard_cases() {
    for token in [
        "0.1",
        "0.30000000000000004",
        "1.7976931348623157e308",
        "1.7976931348623158e308",
        "1.797693134862315807937289714053e308", // just below the overflow threshold
        "1.7976931348623158079372897140530341507993413271003782693617377898044496829276475094664736e308",
        "1.7976931348623158079372897140530341507993413271003782693617377898044496829276475094664737e308",
        "2.4703282292062327208828439643411068618252990130716238221279284125033775363510437593264991818081799618989828234772285886546332835517796989819938739800539093906315035659515570226392290858392449105184435931802849936536152500319370457678249219365623669863658480757001585769269903706311928279558551332927834338409351978015531246597263579574622766465272827220056374006485499977096599470454020828166226237857393450736339007967761930577506740176324673600968951340535537458516661134223766678604162159680461914467291840300530057530849048765391711386591646239524912623653881879636239373280423891018672348497668235089863388587925628302755995657524455507255189313690836254779186948667994968324049705821028513185451396213837722826145437693412532098591327667236328125e-324",
        "4.9406564584124654e-324",
        "2.2250738585072011e-308",
        "2.2250738585072012e-308",
        "2.2250738585072014e-308",
        "9007199254740993",
        "9007199254740993.0000000000000000000000000000000000001",
        "1e23",
        "1e22",
        "123456789e-330",
        "0.0",
        "-0",
        "1e309",
        "-1e400",
        "1e-400",
    ] {
        check(token);
    }
}
