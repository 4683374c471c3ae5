//! Ref counts (SPEC §6): per hash, the set of node ids holding it, in caller storage
//! (`mbr_refcounts`, over slot and node memory as for `mbr_tombstone_table`).

use super::identity::{mbr_str, text};
use super::tombstone::{carve, mbr_id_callback, report};
use super::{boundary, invalid, non_null, put, Slot};
use crate::error::Error;
use crate::refcount::{RefCounts, RefSlot};
use crate::table::NodeSlot;
use core::ffi::c_void;
use core::mem::{align_of, size_of, MaybeUninit};

/// Bytes reserved per ref-count slot (at least its size; see `MBR_REF_STORAGE_BYTES`).
pub const MBR_REF_SLOT_SIZE: usize = 560;
/// Alignment of the ref-count slots (the init call aligns the storage itself).
pub const MBR_REF_SLOT_ALIGN: usize = 16;
/// Size in bytes of `mbr_refcounts`.
pub const MBR_REFCOUNTS_SIZE: usize = 128;
/// Alignment in bytes of `mbr_refcounts`.
pub const MBR_REFCOUNTS_ALIGN: usize = 8;

const _: () = {
    assert!(size_of::<RefSlot>() <= MBR_REF_SLOT_SIZE);
    assert!(align_of::<RefSlot>() <= MBR_REF_SLOT_ALIGN);
    assert!(size_of::<mbr_refcounts>() == MBR_REFCOUNTS_SIZE);
    assert!(align_of::<mbr_refcounts>() == MBR_REFCOUNTS_ALIGN);
    assert!(Slot::<RefCounts<'static>>::fits::<mbr_refcounts>());
};

/// Ref counts in storage the caller owns, over the memory given to
/// `mbr_refcounts_init` (kept alive, in place and untouched meanwhile). Opaque; do not
/// copy. Storage no init call has filled is refused with `MBR_INVALID_STATE`.
#[repr(C)]
pub struct mbr_refcounts {
    _opaque: [MaybeUninit<u64>; 16],
}

const TAG_REFCOUNTS: u64 = 0x6d62_725f_7265_6663; // "mbr_refc"

/// The ref counts in caller storage.
///
/// # Safety
/// `ptr`, if non-NULL, points to an `mbr_refcounts`; if initialised, its storage is
/// alive and not used by anything else for `'s`.
unsafe fn counts_mut<'s>(ptr: *mut mbr_refcounts) -> Result<&'s mut RefCounts<'s>, Error> {
    non_null(ptr, "counts")?;
    // SAFETY: forwarded from the caller.
    unsafe { Slot::<RefCounts<'s>>::live(ptr, TAG_REFCOUNTS, "counts") }
}

/// Initialise empty ref counts in `*counts` over `slots` (`slots_bytes` bytes, one slot
/// per hash) and `nodes` (`nodes_bytes` bytes, one per distinct node id, at most 128
/// used). Both are filled here and must then stay in place, untouched, for the life of
/// the counts. `seed` as for `mbr_tombstone_table_init` (0: from the address).
///
/// Returns `MBR_OK`, `MBR_INVALID_ARGUMENT` (no slot, or no node slot, fits once
/// aligned) or `MBR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn mbr_refcounts_init(
    counts: *mut mbr_refcounts,
    slots: *mut c_void,
    slots_bytes: usize,
    nodes: *mut c_void,
    nodes_bytes: usize,
    seed: u64,
) -> u32 {
    boundary(core::ptr::null_mut(), || {
        non_null(counts, "counts")?;
        non_null(slots, "slots")?;
        non_null(nodes, "nodes")?;
        // SAFETY: the caller hands over the two byte ranges for the life of the counts.
        let (slots, nodes) = unsafe {
            (
                carve(slots, slots_bytes, &RefSlot::EMPTY, "slots")?,
                carve(nodes, nodes_bytes, &NodeSlot::EMPTY, "nodes")?,
            )
        };
        if slots.is_empty() {
            return Err(invalid("slots_bytes", "the storage holds no ref-count slot"));
        }
        if nodes.is_empty() {
            return Err(invalid("nodes_bytes", "the storage holds no node slot"));
        }
        let value = if seed == 0 { RefCounts::new(slots, nodes) } else { RefCounts::with_seed(slots, nodes, seed) };
        // SAFETY: `counts` is non-NULL, aligned and writable; the value fits (asserted).
        unsafe { Slot::store(counts, TAG_REFCOUNTS, value) };
        Ok(())
    })
}

/// The number of hashes held (`*len`) and how many fit (`*capacity`).
///
/// Returns `MBR_OK`, `MBR_INVALID_STATE` or `MBR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn mbr_refcounts_stats(counts: *mut mbr_refcounts, len: *mut usize, capacity: *mut usize) -> u32 {
    boundary(core::ptr::null_mut(), || {
        non_null(len, "len")?;
        non_null(capacity, "capacity")?;
        // SAFETY: the caller passes initialised counts.
        let counts = unsafe { counts_mut(counts)? };
        // SAFETY: both are non-NULL and writable.
        unsafe {
            put(len, counts.len());
            put(capacity, counts.capacity());
        }
        Ok(())
    })
}

/// Record that `node` holds `content_hash`.
///
/// Returns `MBR_OK`, `MBR_INVALID_ARGUMENT` (a hash or node id not 1–128 characters, or
/// not UTF-8), `MBR_TABLE_FULL` (unchanged then), `MBR_INVALID_STATE` or
/// `MBR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn mbr_refcounts_acquire(
    counts: *mut mbr_refcounts,
    content_hash: mbr_str,
    node: mbr_str,
) -> u32 {
    boundary(core::ptr::null_mut(), || {
        // SAFETY: the caller passes initialised counts and readable strings.
        let (counts, hash, node) =
            unsafe { (counts_mut(counts)?, text(content_hash, "content_hash")?, text(node, "node")?) };
        counts.acquire(hash, node)
    })
}

/// Record that `node` no longer holds `content_hash`; `*emptied` is true iff the hash
/// is unknown or its holder set became empty (the entry is then removed), false when
/// others still hold it (SPEC §6).
///
/// Returns `MBR_OK`, `MBR_INVALID_ARGUMENT` (not UTF-8), `MBR_INVALID_STATE` or
/// `MBR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn mbr_refcounts_release(
    counts: *mut mbr_refcounts,
    content_hash: mbr_str,
    node: mbr_str,
    emptied: *mut bool,
) -> u32 {
    boundary(core::ptr::null_mut(), || {
        non_null(emptied, "emptied")?;
        // SAFETY: the caller passes initialised counts and readable strings.
        let (counts, hash, node) =
            unsafe { (counts_mut(counts)?, text(content_hash, "content_hash")?, text(node, "node")?) };
        let result = counts.release(hash, node);
        // SAFETY: `emptied` is non-NULL and writable.
        unsafe { put(emptied, result) };
        Ok(())
    })
}

/// How many nodes hold `content_hash` into `*count`, handing each node id to
/// `callback` (may be NULL: only counted).
///
/// Returns `MBR_OK`, `MBR_INVALID_ARGUMENT` (not UTF-8), `MBR_INVALID_STATE` or
/// `MBR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn mbr_refcounts_holders(
    counts: *mut mbr_refcounts,
    content_hash: mbr_str,
    callback: mbr_id_callback,
    userdata: *mut c_void,
    count: *mut usize,
) -> u32 {
    boundary(core::ptr::null_mut(), || {
        non_null(count, "count")?;
        // SAFETY: the caller passes initialised counts and a readable string.
        let (counts, hash) = unsafe { (counts_mut(counts)?, text(content_hash, "content_hash")?) };
        let mut n = 0;
        for node in counts.holders(hash) {
            n += 1;
            // SAFETY: the caller vouches for the callback and its userdata.
            unsafe { report(callback, userdata, node) };
        }
        // SAFETY: `count` is non-NULL and writable.
        unsafe { put(count, n) };
        Ok(())
    })
}

/// Drop `content_hash` whatever its holders; `*forgotten` says whether it was known.
///
/// Returns `MBR_OK`, `MBR_INVALID_ARGUMENT` (not UTF-8), `MBR_INVALID_STATE` or
/// `MBR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn mbr_refcounts_forget(
    counts: *mut mbr_refcounts,
    content_hash: mbr_str,
    forgotten: *mut bool,
) -> u32 {
    boundary(core::ptr::null_mut(), || {
        non_null(forgotten, "forgotten")?;
        // SAFETY: the caller passes initialised counts and a readable string.
        let (counts, hash) = unsafe { (counts_mut(counts)?, text(content_hash, "content_hash")?) };
        let was = counts.forget(hash);
        // SAFETY: `forgotten` is non-NULL and writable.
        unsafe { put(forgotten, was) };
        Ok(())
    })
}
