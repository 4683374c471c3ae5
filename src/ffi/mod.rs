//! The C ABI (`include/membrane_frame.h`): a thin layer over the Rust API.
//!
//! One file per concept: [`status`] (codes, names, error details), [`identity`],
//! [`frame`] (parsing into views), [`digest`], [`writer`] (one-shot, `writev` and
//! chunked), [`stream`] (the streaming verifier), [`envelope`] (the JSON envelope and
//! the compatibility hash), [`hlc`], [`migrate`] (legacy frames and envelopes to v5),
//! [`snapshot`], [`tombstone`] (gossip, tombstone tables, op bodies), [`refcount`]
//! (cluster metadata, SPEC §5-6), [`version`]. This file holds the
//! conventions every entry point follows (rustls-ffi style):
//!
//! * the return value is a `uint32_t` status: `0` (`MBR_OK`), a SPEC §8 code, a usage
//!   code from 100 up, or `MBR_PANIC`;
//! * every pointer is checked for NULL before anything else happens; an input byte
//!   range given as `(NULL, 0)` is the empty range;
//! * out-parameters are written only on success; the optional `mbr_error *` detail
//!   only on failure;
//! * the body runs inside a panic boundary (`boundary`) that turns a panic into
//!   `MBR_PANIC`;
//! * nothing is allocated and there is no global state: objects live in caller memory
//!   (opaque storage with exported size and alignment), views point into caller buffers.
#![allow(non_camel_case_types)]
// The C ABI takes raw pointers from C and is `unsafe` by nature; each block says why it
// is sound. Entry points are `unsafe extern "C"` and document their contract in C terms.
#![allow(clippy::missing_safety_doc)]

pub mod digest;
pub mod envelope;
pub mod frame;
pub mod hlc;
pub mod identity;
pub mod migrate;
pub mod refcount;
pub mod snapshot;
pub mod status;
pub mod stream;
pub mod tombstone;
pub mod version;
pub mod writer;

use crate::error::{Error, ErrorCode};
use core::mem::{align_of, size_of};
use core::panic::AssertUnwindSafe;
use status::mbr_error;

/// Run the body of an entry point inside a panic boundary.
///
/// `Ok` is `MBR_OK`; an error becomes its number and, when `detail` is not NULL, is
/// described there; a panic becomes `MBR_PANIC`.
pub(crate) fn boundary(detail: *mut mbr_error, body: impl FnOnce() -> Result<(), Error>) -> u32 {
    match std::panic::catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => status::MBR_OK,
        Ok(Err(err)) => {
            status::describe(detail, &err);
            err.code().number()
        }
        Err(_) => {
            status::describe_panic(detail);
            status::MBR_PANIC
        }
    }
}

/// A panic boundary for the few entry points that return a value rather than a status.
pub(crate) fn guard<T>(fallback: T, body: impl FnOnce() -> T) -> T {
    std::panic::catch_unwind(AssertUnwindSafe(body)).unwrap_or(fallback)
}

/// The `null_pointer` error for an argument.
pub(crate) fn null(argument: &'static str) -> Error {
    Error::new(ErrorCode::NullPointer, "a required pointer argument is NULL").in_field(argument)
}

/// An `invalid_argument` error for an argument.
pub(crate) fn invalid(argument: &'static str, reason: &'static str) -> Error {
    Error::new(ErrorCode::InvalidArgument, reason).in_field(argument)
}

/// An `invalid_state` error: the object was never initialised or is finished.
pub(crate) fn invalid_state(argument: &'static str) -> Error {
    Error::new(ErrorCode::InvalidState, "object is not initialised, or already finished").in_field(argument)
}

/// Check that a pointer argument is not NULL.
pub(crate) fn non_null<T>(ptr: *const T, argument: &'static str) -> Result<(), Error> {
    if ptr.is_null() {
        return Err(null(argument));
    }
    Ok(())
}

/// A caller's input bytes: `(NULL, 0)` is empty, `(NULL, n > 0)` is `null_pointer`.
///
/// # Safety
/// A non-NULL `ptr` must be valid for reads of `len` bytes for `'a`, unchanged meanwhile.
pub(crate) unsafe fn input<'a>(ptr: *const u8, len: usize, argument: &'static str) -> Result<&'a [u8], Error> {
    if ptr.is_null() {
        return if len == 0 { Ok(&[]) } else { Err(null(argument)) };
    }
    // SAFETY: non-NULL, and the caller guarantees `len` readable bytes for 'a.
    Ok(unsafe { core::slice::from_raw_parts(ptr, len) })
}

/// A caller's output buffer: `(NULL, 0)` is empty, `(NULL, n > 0)` is `null_pointer`.
///
/// # Safety
/// A non-NULL `ptr` must be valid for writes of `len` bytes for `'a`, not aliased.
pub(crate) unsafe fn output<'a>(ptr: *mut u8, len: usize, argument: &'static str) -> Result<&'a mut [u8], Error> {
    if ptr.is_null() {
        return if len == 0 { Ok(&mut []) } else { Err(null(argument)) };
    }
    // SAFETY: non-NULL, and the caller guarantees `len` writable, unaliased bytes for 'a.
    Ok(unsafe { core::slice::from_raw_parts_mut(ptr, len) })
}

/// Write an out-parameter (already checked non-NULL) without reading what was there.
///
/// # Safety
/// `ptr` must be non-NULL, aligned and valid for a write of `T`.
pub(crate) unsafe fn put<T>(ptr: *mut T, value: T) {
    // SAFETY: guaranteed by the caller; `write` does not drop the old (maybe
    // uninitialised) contents.
    unsafe { ptr.write(value) }
}

/// A Rust value kept in caller-allocated opaque storage, with a tag that says whether
/// it is live. Storage that was never initialised (or was finished) has another tag
/// and is refused with `invalid_state` instead of being used.
#[repr(C)]
pub(crate) struct Slot<T> {
    tag: u64,
    value: T,
}

impl<T> Slot<T> {
    /// Whether storage of type `S` can hold a `Slot<T>`.
    pub(crate) const fn fits<S>() -> bool {
        size_of::<Slot<T>>() <= size_of::<S>() && align_of::<Slot<T>>() <= align_of::<S>()
    }

    /// Move `value` into the storage at `storage`, tagged live with `tag`.
    ///
    /// # Safety
    /// `storage` must be non-NULL, aligned and writable for `S`, and `S` must fit a
    /// `Slot<T>` ([`fits`](Self::fits), const-asserted by every user).
    pub(crate) unsafe fn store<S>(storage: *mut S, tag: u64, value: T) {
        // SAFETY: the caller guarantees a writable, aligned `S` that is large enough.
        unsafe { storage.cast::<Slot<T>>().write(Slot { tag, value }) }
    }

    /// The live value in `storage`, or `invalid_state`.
    ///
    /// # Safety
    /// `storage` must be non-NULL and aligned, point to an `S` that fits a `Slot<T>`,
    /// and, when its tag is `tag`, hold a value stored by [`store`](Self::store) with
    /// the same `T` whose borrows are still valid; no other reference to it may exist.
    pub(crate) unsafe fn live<'s, S>(storage: *mut S, tag: u64, argument: &'static str) -> Result<&'s mut T, Error> {
        let slot = storage.cast::<Slot<T>>();
        // SAFETY: reading the tag of readable, aligned storage (caller's guarantee).
        if unsafe { core::ptr::addr_of!((*slot).tag).read() } != tag {
            return Err(invalid_state(argument));
        }
        // SAFETY: the tag says a `T` was stored there; the caller guarantees exclusivity.
        Ok(unsafe { &mut (*slot).value })
    }

    /// The live value in `storage`, shared, or `invalid_state`.
    ///
    /// # Safety
    /// As [`live`](Self::live), except that other shared references may exist.
    pub(crate) unsafe fn shared<'s, S>(storage: *const S, tag: u64, argument: &'static str) -> Result<&'s T, Error> {
        let slot = storage.cast::<Slot<T>>();
        // SAFETY: reading the tag of readable, aligned storage (caller's guarantee).
        if unsafe { core::ptr::addr_of!((*slot).tag).read() } != tag {
            return Err(invalid_state(argument));
        }
        // SAFETY: the tag says a `T` was stored there and is not being mutated.
        Ok(unsafe { &(*slot).value })
    }

    /// Move the live value out of `storage` and mark the storage finished.
    ///
    /// # Safety
    /// As [`live`](Self::live).
    pub(crate) unsafe fn take<S>(storage: *mut S, tag: u64, argument: &'static str) -> Result<T, Error> {
        // SAFETY: forwarded from the caller.
        let value = unsafe { Self::live(storage, tag, argument)? };
        let value: *mut T = value;
        let slot = storage.cast::<Slot<T>>();
        // SAFETY: the value is live; after reading it out the tag is changed, so it is
        // never read (or dropped) a second time.
        unsafe {
            core::ptr::addr_of_mut!((*slot).tag).write(TAG_FINISHED);
            Ok(value.read())
        }
    }
}

/// Tag of storage whose value was moved out (a finished writer or verifier).
pub(crate) const TAG_FINISHED: u64 = 0x6d62_725f_646f_6e65; // "mbr_done"

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::panic)]
    fn a_panic_becomes_mbr_panic_with_its_detail() {
        let mut detail = core::mem::MaybeUninit::<mbr_error>::uninit();
        let status = boundary(detail.as_mut_ptr(), || panic!("deliberate"));
        assert_eq!(status, status::MBR_PANIC);
        // SAFETY: `boundary` filled the detail on failure.
        let detail = unsafe { detail.assume_init() };
        assert_eq!(detail.status, status::MBR_PANIC);
        assert_eq!(guard(7, || -> i32 { panic!("deliberate") }), 7);
    }

    #[test]
    fn errors_fill_the_detail_and_success_leaves_it_alone() {
        let mut detail = core::mem::MaybeUninit::<mbr_error>::zeroed();
        assert_eq!(boundary(detail.as_mut_ptr(), || Ok(())), status::MBR_OK);
        // SAFETY: zero-initialised above.
        assert_eq!(unsafe { detail.assume_init() }.status, 0);
        let status = boundary(detail.as_mut_ptr(), || Err(Error::buffer_too_small(42).in_field("buf")));
        assert_eq!(status, status::MBR_BUFFER_TOO_SMALL);
        // SAFETY: filled on failure.
        let detail = unsafe { detail.assume_init() };
        assert_eq!((detail.needed, detail.offset), (42, status::MBR_NO_OFFSET));
        assert_eq!(detail.field.iter().take_while(|&&c| c != 0).map(|&c| c as u8 as char).collect::<String>(), "buf");
    }
}
