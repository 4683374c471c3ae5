//! The library version, and the version of the C ABI the header describes.

use crate::boundary::guard;
use core::ffi::c_char;

/// Version of the C ABI described by this header. The library reports its own with
/// `mbr_abi_version()`; a program loading the shared library can compare the two.
/// Bumped on any incompatible change (a storage size, a struct layout, a signature).
pub const MBR_ABI_VERSION: u32 = 1;

/// The crate version, e.g. `"0.1.0"`. Never NULL; the string is static.
#[no_mangle]
pub extern "C" fn mbr_version() -> *const c_char {
    const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "\0");
    guard(c"unknown".as_ptr(), || VERSION.as_ptr().cast())
}

/// The C ABI version of the library (`MBR_ABI_VERSION` of the header it was built with).
#[no_mangle]
pub extern "C" fn mbr_abi_version() -> u32 {
    guard(MBR_ABI_VERSION, || MBR_ABI_VERSION)
}
