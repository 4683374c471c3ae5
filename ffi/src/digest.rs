//! SHA-256 as the format uses it: the payload digest (whose first 8 bytes are the frame
//! trailer and whose hex is `payload_hash`) and the identity fingerprint; in one call,
//! over a list of byte ranges, or incrementally in caller storage (a payload that exists
//! in pieces, whose `payload_hash` is needed before the first byte is written).

use crate::boundary::{boundary, NO_DETAIL};
use crate::frame::mbr_bytes;
use crate::object::{opaque, store, take, try_mut};
use crate::out::Out;
use crate::slice::{byte_ranges, hex65, input};
use core::ffi::c_char;
use core::mem::MaybeUninit;
use membrane::{Sha256Digest, Sha256Hasher};

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

/// Bytes of caller storage for an `mbr_sha256_state`.
pub const MBR_SHA256_STATE_SIZE: usize = 256;
/// Alignment of that storage.
pub const MBR_SHA256_STATE_ALIGN: usize = 8;

/// A SHA-256 computation in progress, in storage the caller owns (a local, a struct
/// member; opaque): `mbr_sha256_init`, then `mbr_sha256_update` per piece, then
/// `mbr_sha256_final`. It borrows nothing and owns nothing: nothing to free. One thread
/// at a time; a copy of a state in progress is an independent computation.
#[repr(C)]
pub struct mbr_sha256_state {
    _opaque: [MaybeUninit<u64>; 32],
}

opaque!(mbr_sha256_state => Sha256Hasher, b"mbr_sha2", "state", MBR_SHA256_STATE_SIZE, MBR_SHA256_STATE_ALIGN);

/// Start a SHA-256 computation in `*state` (whatever it held before).
///
/// Returns `MBR_OK`, or `MBR_NULL_POINTER`.
///
/// # Safety
/// `state` is NULL or points to writable storage of an `mbr_sha256_state`.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_sha256_init(state: *mut mbr_sha256_state) -> u32 {
    boundary(NO_DETAIL, || {
        store(Out::new(state, "state")?, Sha256Hasher::new());
        Ok(())
    })
}

/// Hash the next `len` bytes at `data` (`(NULL, 0)` is empty) after everything before.
///
/// Returns `MBR_OK`, `MBR_INVALID_STATE` (not initialised, or finished) or
/// `MBR_NULL_POINTER`.
///
/// # Safety
/// `state` is NULL or points to an `mbr_sha256_state` no other thread is using; `data`
/// is NULL or points to `len` readable bytes.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_sha256_update(state: *mut mbr_sha256_state, data: *const u8, len: usize) -> u32 {
    boundary(NO_DETAIL, || {
        let bytes = input(data, len, "data")?;
        try_mut(state)?.update(bytes);
        Ok(())
    })
}

/// The digest of everything given, into `*out`. The state is finished whatever the
/// result (further calls are `MBR_INVALID_STATE` until `mbr_sha256_init`), except that
/// a NULL `out` leaves it as it was.
///
/// Returns `MBR_OK`, `MBR_INVALID_STATE` or `MBR_NULL_POINTER`.
///
/// # Safety
/// `state` is NULL or points to an `mbr_sha256_state` no other thread is using; `out` is
/// NULL or points to a writable `mbr_digest`.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_sha256_final(state: *mut mbr_sha256_state, out: *mut mbr_digest) -> u32 {
    boundary(NO_DETAIL, || {
        let out = Out::new(out, "out")?;
        out.write(mbr_digest::of(&take(state)?.finish()));
        Ok(())
    })
}

/// SHA-256 of the concatenation of `count` byte ranges (`ranges[i]`, each `{NULL, 0}`
/// or `len` readable bytes): the digest of a payload that lies in several buffers (the
/// K and V slabs of each layer), in one call.
///
/// Returns `MBR_OK`, or `MBR_NULL_POINTER` (`ranges` NULL with `count` > 0, a range
/// `{NULL, n > 0}`, `out` NULL), checked before anything is hashed.
///
/// # Safety
/// `ranges` is NULL (with `count` 0) or points to `count` readable `mbr_bytes`, each NULL
/// or pointing to `len` readable bytes; `out` is NULL or points to a writable
/// `mbr_digest`.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_sha256_ranges(ranges: *const mbr_bytes, count: usize, out: *mut mbr_digest) -> u32 {
    boundary(NO_DETAIL, || {
        let out = Out::new(out, "out")?;
        let ranges = byte_ranges(input(ranges, count, "ranges")?, "ranges")?;
        let mut hasher = Sha256Hasher::new();
        ranges.slices().for_each(|range| hasher.update(range));
        out.write(mbr_digest::of(&hasher.finish()));
        Ok(())
    })
}
