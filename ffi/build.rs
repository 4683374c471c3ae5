//! The shared library's SONAME, cargo-c's rule: while the major version is 0, the minor
//! version is the ABI (`libmembrane_frame.so.0.1` for 0.1.x); then the major alone.

fn main() {
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if target_os == "linux" || target_os == "android" || target_os.ends_with("bsd") {
        let major = std::env::var("CARGO_PKG_VERSION_MAJOR").unwrap_or_default();
        let minor = std::env::var("CARGO_PKG_VERSION_MINOR").unwrap_or_default();
        let abi = if major == "0" { format!("0.{minor}") } else { major };
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libmembrane_frame.so.{abi}");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
