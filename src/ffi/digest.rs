//! SHA-256 as the format uses it: the payload digest (whose first 8 bytes are the frame
//! trailer and whose hex is `payload_hash`) and the identity fingerprint.

use super::{boundary, input, non_null, put};
use crate::digest::Sha256Digest;
use core::ffi::c_char;

/// A SHA-256 digest in the three forms the format uses.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct mbr_digest {
    /// The 32 digest bytes.
    pub sha256: [u8; 32],
    /// The first 8 bytes: the frame trailer when this is a payload's digest.
    pub trailer: [u8; 8],
    /// 64 lower-case hex digits and a NUL: a `payload_hash`, or a fingerprint.
    pub hex: [c_char; 65],
}

impl mbr_digest {
    pub(crate) fn of(digest: &Sha256Digest) -> mbr_digest {
        let mut hex = [0 as c_char; 65];
        for (slot, &digit) in hex.iter_mut().zip(digest.to_hex().as_bytes()) {
            *slot = digit as c_char;
        }
        mbr_digest { sha256: *digest.as_bytes(), trailer: digest.trailer(), hex }
    }
}

/// SHA-256 of `len` bytes at `data` (`(NULL, 0)` is the empty input): one pass gives a
/// payload's `payload_hash` (`hex`) and its frame trailer (`trailer`).
///
/// Returns `MBR_OK`, or `MBR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn mbr_sha256(data: *const u8, len: usize, out: *mut mbr_digest) -> u32 {
    boundary(core::ptr::null_mut(), || {
        non_null(out, "out")?;
        // SAFETY: the caller passes `len` readable bytes at `data` (or NULL and 0).
        let data = unsafe { input(data, len, "data")? };
        let digest = mbr_digest::of(&Sha256Digest::of(data));
        // SAFETY: `out` is non-NULL and points to a writable mbr_digest.
        unsafe { put(out, digest) };
        Ok(())
    })
}
