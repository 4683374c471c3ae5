//! The committed C header `include/membrane_frame.h` is exactly what the pinned
//! cbindgen (ffi/Cargo.toml: `cbindgen = "=0.29.4"`) generates from this crate (`ffi/src`)
//! with the repository's `cbindgen.toml`. A change to the C ABI that was not regenerated fails here.
//!
//! Regenerate: `MEMBRANE_BLESS=1 cargo test -p membrane-frame-ffi --lib c_header`.

use std::path::Path;

fn generate(root: &Path) -> String {
    let config = cbindgen::Config::from_file(root.join("cbindgen.toml")).expect("cbindgen.toml is readable");
    let bindings = cbindgen::Builder::new()
        .with_config(config)
        .with_src(root.join("ffi/src/lib.rs"))
        .generate()
        .expect("cbindgen generates the header");
    let mut out = Vec::new();
    bindings.write(&mut out);
    String::from_utf8(out).expect("the header is UTF-8")
}

/// The first differing line, with a little context, for the failure message.
fn first_difference(committed: &str, generated: &str) -> String {
    let (old, new): (Vec<&str>, Vec<&str>) = (committed.lines().collect(), generated.lines().collect());
    let at = old.iter().zip(&new).position(|(a, b)| a != b).unwrap_or(old.len().min(new.len()));
    let show = |lines: &[&str]| {
        lines
            .iter()
            .enumerate()
            .skip(at.saturating_sub(2))
            .take(5)
            .map(|(n, l)| format!("  {:>5} | {l}\n", n + 1))
            .collect::<String>()
    };
    format!(
        "first difference at line {} (committed {} lines, generated {} lines)\n--- committed include/membrane_frame.h\n{}+++ generated from ffi/src\n{}",
        at + 1,
        old.len(),
        new.len(),
        show(&old),
        show(&new)
    )
}

#[test]
// File I/O and a whole code generator: nothing for Miri to check (the plain test run has it).
#[cfg_attr(miri, ignore)]
fn committed_header_matches_cbindgen_output() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("ffi/ lies in the repository");
    let path = root.join("include/membrane_frame.h");
    let generated = generate(root);
    if std::env::var_os("MEMBRANE_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &generated).expect("write include/membrane_frame.h");
        println!("wrote {}", path.display());
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "include/membrane_frame.h is stale: the C ABI in ffi/src changed without regenerating it.\n\
         Run `MEMBRANE_BLESS=1 cargo test -p membrane-frame-ffi --lib c_header` and commit the header.\n{}",
        first_difference(&committed, &generated)
    );
}
