//! The library version, and the version of the C ABI the header describes.

use crate::boundary::guard;
use core::ffi::c_char;

/// Version of the C ABI described by this header. The library reports its own with
/// `mbr_abi_version()`; a program loading the shared library can compare the two.
/// Bumped on any incompatible change (a storage size, a struct layout, a signature).
pub const MBR_ABI_VERSION: u32 = 1;

/// The crate version, e.g. `"0.1.0"`. Never NULL; the string is static.
#[no_mangle]
#[must_use]
pub extern "C" fn mbr_version() -> *const c_char {
    const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "\0");
    guard(c"unknown".as_ptr(), || VERSION.as_ptr().cast())
}

/// The C ABI version of the library (`MBR_ABI_VERSION` of the header it was built with).
#[no_mangle]
#[must_use]
pub extern "C" fn mbr_abi_version() -> u32 {
    guard(MBR_ABI_VERSION, || MBR_ABI_VERSION)
}

/// The major version this header describes (`MBR_VERSION_NUMBER` is
/// major * 10000 + minor * 100 + patch, for `#if` tests; `mbr_version()` gives the
/// loaded library's). A test checks these against the crate version.
pub const MBR_VERSION_MAJOR: u32 = 0;
/// The minor version this header describes.
pub const MBR_VERSION_MINOR: u32 = 1;
/// The patch version this header describes.
pub const MBR_VERSION_PATCH: u32 = 0;
/// `MBR_VERSION_MAJOR * 10000 + MBR_VERSION_MINOR * 100 + MBR_VERSION_PATCH`.
pub const MBR_VERSION_NUMBER: u32 = MBR_VERSION_MAJOR * 10000 + MBR_VERSION_MINOR * 100 + MBR_VERSION_PATCH;

// Two decimal digits each, or MBR_VERSION_NUMBER is ambiguous.
const _: () = assert!(MBR_VERSION_MINOR < 100 && MBR_VERSION_PATCH < 100);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_version_is_the_crate_version() {
        let part = |text: &str| text.parse::<u32>().expect("a numeric version part");
        let (major, minor, patch) = (
            part(env!("CARGO_PKG_VERSION_MAJOR")),
            part(env!("CARGO_PKG_VERSION_MINOR")),
            part(env!("CARGO_PKG_VERSION_PATCH")),
        );
        assert_eq!(
            (MBR_VERSION_MAJOR, MBR_VERSION_MINOR, MBR_VERSION_PATCH),
            (major, minor, patch),
            "update MBR_VERSION_* in ffi/src/version.rs"
        );
        assert_eq!(MBR_VERSION_NUMBER, major * 10000 + minor * 100 + patch);
    }
}
