//! Rust values in caller-owned opaque storage (`mbr_identity`, `mbr_envelope`, the
//! tables, the writer and the verifier): the storage type says which Rust type lives in
//! it, a tag beside the value says whether one does, and the helpers here are the only
//! code that casts between the two.

use crate::boundary::{boundary, NO_DETAIL};
use crate::out::Out;
use core::marker::PhantomData;
use core::mem::{align_of, size_of};
use membrane::Error;

/// A C storage type that holds one Rust value.
///
/// Storage never filled by the library (zeroed, or garbage) carries no valid tag and is
/// refused with `invalid_state`; the value borrows what it was made from, which the C
/// caller keeps alive (the storage type's documentation says what).
pub(crate) trait Opaque: Sized {
    /// The Rust value, for any lifetime of what it borrows.
    type Value<'a>;
    /// Marks storage that holds a live value (eight ASCII letters, e.g. `mbr_iden`).
    const TAG: u64;
    /// The argument name in errors (`"identity"`, `"writer"`, ...).
    const ARGUMENT: &'static str;
    /// The exported size (`MBR_*_SIZE`).
    const SIZE: usize;
    /// The exported alignment (`MBR_*_ALIGN`).
    const ALIGN: usize;
}

/// `opaque!(mbr_identity => PayloadIdentity<'a>, b"mbr_iden", "identity", SIZE, ALIGN)`:
/// the [`Opaque`] implementation of a storage type (the struct itself and its exported
/// constants stay written out, for cbindgen).
macro_rules! opaque {
    ($storage:ty => $value:ty, $tag:literal, $argument:literal, $size:expr, $align:expr) => {
        impl $crate::object::Opaque for $storage {
            type Value<'a> = $value;
            const TAG: u64 = $crate::object::tag($tag);
            const ARGUMENT: &'static str = $argument;
            const SIZE: usize = $size;
            const ALIGN: usize = $align;
        }
    };
}
pub(crate) use opaque;

/// Tag of storage whose value was moved out (a finished writer or verifier).
const TAG_FINISHED: u64 = tag(b"mbr_done");

/// A tag from its eight letters.
pub(crate) const fn tag(letters: &[u8; 8]) -> u64 {
    u64::from_be_bytes(*letters)
}

/// What the storage holds: the tag, then the value.
#[repr(C)]
struct Slot<T> {
    tag: u64,
    value: T,
}

/// The layout checks of one storage type, evaluated at compile time by every helper
/// that touches it: the exported size and alignment are the real ones, and the slot fits.
struct Layout<C>(PhantomData<C>);

impl<C: Opaque> Layout<C> {
    const CHECKED: () = {
        assert!(size_of::<C>() == C::SIZE, "exported size differs from the type's");
        assert!(align_of::<C>() == C::ALIGN, "exported alignment differs from the type's");
        assert!(size_of::<Slot<C::Value<'static>>>() <= size_of::<C>(), "the value does not fit its storage");
        assert!(align_of::<Slot<C::Value<'static>>>() <= align_of::<C>(), "the storage is not aligned for the value");
    };
}

/// Move `value` into the storage behind `out`, tagged live.
pub(crate) fn store<C: Opaque>(out: Out<'_, C>, value: C::Value<'_>) {
    let () = Layout::<C>::CHECKED;
    // SAFETY: `out` is aligned, writable and exclusive (its contract) storage of a `C`,
    // which fits a `Slot` of the value (checked above); `write` drops nothing.
    unsafe { out.as_ptr().cast::<Slot<C::Value<'_>>>().write(Slot { tag: C::TAG, value }) }
}

/// New storage holding `value` (for storage embedded in a view, like `mbr_frame.identity`).
#[cfg(feature = "envelope")]
pub(crate) fn holding<C: Opaque>(mut empty: C, value: C::Value<'_>) -> C {
    store(Out::to(&mut empty), value);
    empty
}

/// `null_pointer` for a NULL pointer argument, for the calls that check their pointers
/// in the order of their arguments before using any.
pub(crate) fn non_null<T>(ptr: *const T, argument: &'static str) -> Result<(), Error> {
    if ptr.is_null() {
        return Err(Error::null_pointer(argument));
    }
    Ok(())
}

/// The live slot in `object`, or `null_pointer` / `invalid_state`.
///
/// Contract (of the calling entry point): a non-NULL `object` points to aligned,
/// readable storage of a `C`, initialised memory (any bytes); if its tag is `C::TAG`,
/// the library stored a `C::Value` there whose borrows are alive for `'a`.
fn live_slot<'a, C: Opaque>(object: *const C) -> Result<*mut Slot<C::Value<'a>>, Error> {
    let () = Layout::<C>::CHECKED;
    if object.is_null() {
        return Err(Error::null_pointer(C::ARGUMENT));
    }
    let slot = object.cast::<Slot<C::Value<'a>>>().cast_mut();
    // SAFETY: non-NULL, aligned and readable (the contract); the tag is a plain `u64`.
    if unsafe { core::ptr::addr_of!((*slot).tag).read() } != C::TAG {
        return Err(Error::invalid_state(C::ARGUMENT, "object is not initialised, or already finished"));
    }
    Ok(slot)
}

/// The live value in `object`, shared. Contract as for `live_slot`, and nothing mutates
/// the value during the call.
pub(crate) fn try_ref<'a, C: Opaque>(object: *const C) -> Result<&'a C::Value<'a>, Error> {
    let slot = live_slot::<C>(object)?;
    // SAFETY: the tag says the library stored a `C::Value` there (the contract), and
    // nothing mutates it while the reference lives.
    Ok(unsafe { &(*slot).value })
}

/// The live value in `object`, exclusive. Contract as for `live_slot`, and nothing else
/// uses the object during the call (calls on one object must not overlap).
pub(crate) fn try_mut<'a, C: Opaque>(object: *mut C) -> Result<&'a mut C::Value<'a>, Error> {
    let slot = live_slot::<C>(object)?;
    // SAFETY: as in `try_ref`, and the contract makes this the only access.
    Ok(unsafe { &mut (*slot).value })
}

/// Move the live value out of `object` and mark the storage finished, so it is never
/// read or dropped a second time. Contract as for `try_mut`.
pub(crate) fn take<'a, C: Opaque>(object: *mut C) -> Result<C::Value<'a>, Error> {
    let slot = live_slot::<C>(object)?;
    // SAFETY: the value is live and exclusively ours (as in `try_mut`); after reading it
    // out, the tag changes, so it is never read again.
    unsafe {
        core::ptr::addr_of_mut!((*slot).tag).write(TAG_FINISHED);
        Ok(core::ptr::addr_of!((*slot).value).read())
    }
}

/// The shape of most accessors: read `f` of the value in `object` into `*out`.
/// Returns `MBR_OK`, `MBR_INVALID_STATE`, `MBR_NULL_POINTER` (`out` is checked first)
/// or what `f` fails with. Contract as for `Out::new` and `try_ref`.
pub(crate) fn read_into<C: Opaque, T>(
    object: *const C,
    out: *mut T,
    argument: &'static str,
    f: impl FnOnce(&C::Value<'_>) -> Result<T, Error>,
) -> u32 {
    boundary(NO_DETAIL, || {
        let out = Out::new(out, argument)?;
        out.write(f(try_ref(object)?)?);
        Ok(())
    })
}
