//! SHA-256 as the format uses it: the payload digest (whose first 8 bytes are the frame
//! trailer and whose hex is `payload_hash`) and the identity fingerprint.

use crate::boundary::{boundary, NO_DETAIL};
use crate::out::Out;
use crate::slice::{hex65, input};
use core::ffi::c_char;
use membrane::Sha256Digest;

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
        mbr_digest { sha256: *digest.as_bytes(), trailer: digest.trailer(), hex: hex65(digest) }
    }
}

/// SHA-256 of `len` bytes at `data` (`(NULL, 0)` is the empty input): one pass gives a
/// payload's `payload_hash` (`hex`) and its frame trailer (`trailer`).
///
/// Returns `MBR_OK`, or `MBR_NULL_POINTER`.
///
/// # Safety
/// `data` is NULL or points to `len` readable bytes; `out` is NULL or points to a
/// writable `mbr_digest`.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_sha256(data: *const u8, len: usize, out: *mut mbr_digest) -> u32 {
    boundary(NO_DETAIL, || {
        let out = Out::new(out, "out")?;
        out.write(mbr_digest::of(&Sha256Digest::of(input(data, len, "data")?)));
        Ok(())
    })
}
