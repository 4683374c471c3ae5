//! `repr(float)` conformance: our formatter against CPython itself (SPEC §3.2).
//!
//! The expectations are generated at test time by `scripts/pyfloat_cases.py` under
//! `python3` (override with `MEMBRANE_PYTHON`; the seed with `MEMBRANE_PYFLOAT_SEED`):
//! edge values (every power of two and ten with its neighbours, the layout boundaries,
//! subnormals, extremes), 100 000 doubles with uniformly random bit patterns, 20 000
//! dyadic values where two shortest candidates can tie exactly (a few hundred do), and
//! 20 000 short decimals; each also negated. Without a Python the test fails loudly
//! rather than passing without checking anything.

use membrane_frame::pyfloat::{write_repr, PyFloat};
use membrane_frame::SliceSink;
use std::path::PathBuf;
use std::process::Command;

const RANDOM_CASES: usize = 100_000;

fn python_cases() -> Vec<(u64, String)> {
    let python = std::env::var("MEMBRANE_PYTHON").unwrap_or_else(|_| "python3".into());
    let seed = std::env::var("MEMBRANE_PYFLOAT_SEED").unwrap_or_else(|_| "20261130".into());
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/pyfloat_cases.py");
    let output =
        Command::new(&python).arg(&script).arg(&seed).arg(RANDOM_CASES.to_string()).output().unwrap_or_else(|e| {
            eprintln!("\n{}", "!".repeat(78));
            eprintln!("!!! cannot run {python} {}: {e}", script.display());
            eprintln!("!!! The repr(float) expectations come from CPython; set MEMBRANE_PYTHON.");
            eprintln!("{}\n", "!".repeat(78));
            panic!("no Python to generate repr(float) expectations");
        });
    assert!(output.status.success(), "{python} failed: {}", String::from_utf8_lossy(&output.stderr));
    let text = String::from_utf8(output.stdout).unwrap();
    text.lines()
        .map(|line| {
            let (bits, repr) = line.split_once(' ').unwrap();
            (u64::from_str_radix(bits, 16).unwrap(), repr.to_string())
        })
        .collect()
}

#[test]
fn every_double_formats_exactly_as_python_repr() {
    let cases = python_cases();
    assert!(cases.len() >= RANDOM_CASES + 40_000, "only {} cases", cases.len());
    let mut exponents = std::collections::BTreeSet::new();
    let mut mismatches = Vec::new();
    let mut buf = [0u8; 64];
    for (bits, expected) in &cases {
        let value = f64::from_bits(*bits);
        exponents.insert((bits >> 52) & 0x7FF);
        let repr = PyFloat::new(value);
        if repr.as_str() != expected {
            mismatches.push(format!("{bits:016x}: ours {} python {expected}", repr.as_str()));
            continue;
        }
        let mut sink = SliceSink::new(&mut buf);
        write_repr(&mut sink, value).unwrap();
        assert_eq!(sink.written(), expected.as_bytes());
    }
    assert!(
        mismatches.is_empty(),
        "{} of {} differ, e.g.:\n{}",
        mismatches.len(),
        cases.len(),
        mismatches[..mismatches.len().min(20)].join("\n")
    );
    // Every biased exponent (0 = subnormal .. 2046) occurs.
    assert_eq!(exponents.len(), 2047, "exponent range not covered");
    println!("{} doubles format as CPython's repr", cases.len());
}
