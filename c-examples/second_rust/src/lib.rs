//! A stand-in for another Rust static library in the same program: it allocates,
//! formats and catches a panic, so its copy of std (allocator, unwinder, personality
//! routine) is linked in beside the one inside libmembrane_frame.a.

use std::ffi::c_char;

/// Writes "tokens: N" and a NUL into `out` (`capacity` bytes); returns the length, or -1
/// if it does not fit. A panic inside is caught and returns -2.
///
/// # Safety
/// `out` points to `capacity` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn second_rust_describe(tokens: u32, out: *mut c_char, capacity: usize) -> i64 {
    let text = match std::panic::catch_unwind(|| {
        if tokens == u32::MAX {
            panic!("too many tokens");
        }
        format!("tokens: {tokens}")
    }) {
        Ok(text) => text,
        Err(_) => return -2,
    };
    if text.len() + 1 > capacity {
        return -1;
    }
    // SAFETY: `out` has `capacity` > text.len() writable bytes (the contract, checked).
    unsafe {
        std::ptr::copy_nonoverlapping(text.as_ptr(), out.cast::<u8>(), text.len());
        *out.add(text.len()) = 0;
    }
    text.len() as i64
}
