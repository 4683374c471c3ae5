//! Ref counts (SPEC §6): per hash, the set of node ids holding it, in caller storage
//! (`mbr_refcounts`, over slot and node memory as for `mbr_tombstone_table`).

use crate::boundary::{boundary, NO_DETAIL};
use crate::object::{non_null, opaque, store, try_mut};
use crate::out::{outs, Out};
use crate::slice::{mbr_str, text};
use crate::tombstone::{carve, mbr_id_callback, report};
use core::ffi::c_void;
use core::mem::{align_of, size_of, MaybeUninit};
use membrane::refcount::{RefCounts, RefSlot};
use membrane::table::NodeSlot;
use membrane::Error;

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
};

/// Ref counts in storage the caller owns, over the memory given to
/// `mbr_refcounts_init` (kept alive, in place and untouched meanwhile). Opaque; do not
/// copy. Storage no init call has filled is refused with `MBR_INVALID_STATE`.
#[repr(C)]
pub struct mbr_refcounts {
    _opaque: [MaybeUninit<u64>; 16],
}

opaque!(mbr_refcounts => RefCounts<'a>, b"mbr_refc", "counts", MBR_REFCOUNTS_SIZE, MBR_REFCOUNTS_ALIGN);

/// Initialise empty ref counts in `*counts` over `slots` (`slots_bytes` bytes, one slot
/// per hash) and `nodes` (`nodes_bytes` bytes, one per distinct node id, at most 128
/// used). Both are filled here and must then stay in place, untouched, for the life of
/// the counts. `seed` as for `mbr_tombstone_table_init` (0: from the address).
///
/// Returns `MBR_OK`, `MBR_INVALID_ARGUMENT` (no slot, or no node slot, fits once
/// aligned) or `MBR_NULL_POINTER`.
///
/// # Safety
/// `counts` is NULL or points to writable `mbr_refcounts` storage; `slots` and `nodes`
/// are each NULL or point to `slots_bytes` / `nodes_bytes` writable bytes handed over for
/// the life of the counts.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_refcounts_init(
    counts: *mut mbr_refcounts,
    slots: *mut c_void,
    slots_bytes: usize,
    nodes: *mut c_void,
    nodes_bytes: usize,
    seed: u64,
) -> u32 {
    boundary(NO_DETAIL, || {
        let counts = Out::new(counts, "counts")?;
        non_null(slots, "slots")?;
        non_null(nodes, "nodes")?;
        let slots = carve(slots, slots_bytes, &RefSlot::EMPTY, "slots")?;
        let nodes = carve(nodes, nodes_bytes, &NodeSlot::EMPTY, "nodes")?;
        if slots.is_empty() {
            return Err(Error::invalid_argument("slots_bytes", "the storage holds no ref-count slot"));
        }
        if nodes.is_empty() {
            return Err(Error::invalid_argument("nodes_bytes", "the storage holds no node slot"));
        }
        let value = if seed == 0 { RefCounts::new(slots, nodes) } else { RefCounts::with_seed(slots, nodes, seed) };
        store(counts, value);
        Ok(())
    })
}

/// The number of hashes held (`*len`) and how many fit (`*capacity`).
///
/// Returns `MBR_OK`, `MBR_INVALID_STATE` or `MBR_NULL_POINTER`.
///
/// # Safety
/// `counts` is NULL or points to initialised `mbr_refcounts` not in use by another call; `len` and
/// `capacity` are each NULL or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_refcounts_stats(counts: *mut mbr_refcounts, len: *mut usize, capacity: *mut usize) -> u32 {
    boundary(NO_DETAIL, || {
        let (len, capacity) = outs!(len, capacity);
        let counts = try_mut(counts)?;
        len.write(counts.len());
        capacity.write(counts.capacity());
        Ok(())
    })
}

/// Record that `node` holds `content_hash`.
///
/// Returns `MBR_OK`, `MBR_INVALID_ARGUMENT` (a hash or node id not 1–128 characters, or
/// not UTF-8), `MBR_TABLE_FULL` (unchanged then), `MBR_INVALID_STATE` or
/// `MBR_NULL_POINTER`.
///
/// # Safety
/// `counts` is NULL or points to initialised `mbr_refcounts` not in use by another call; the strings
/// are readable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_refcounts_acquire(
    counts: *mut mbr_refcounts,
    content_hash: mbr_str,
    node: mbr_str,
) -> u32 {
    boundary(NO_DETAIL, || {
        let counts = try_mut(counts)?;
        counts.acquire(text(content_hash, "content_hash")?, text(node, "node")?)
    })
}

/// Record that `node` no longer holds `content_hash`; `*emptied` is true iff the hash
/// is unknown or its holder set became empty (the entry is then removed), false when
/// others still hold it (SPEC §6).
///
/// Returns `MBR_OK`, `MBR_INVALID_ARGUMENT` (not UTF-8), `MBR_INVALID_STATE` or
/// `MBR_NULL_POINTER`.
///
/// # Safety
/// `counts` is NULL or points to initialised `mbr_refcounts` not in use by another call; the strings
/// are readable; `emptied` is NULL or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_refcounts_release(
    counts: *mut mbr_refcounts,
    content_hash: mbr_str,
    node: mbr_str,
    emptied: *mut bool,
) -> u32 {
    boundary(NO_DETAIL, || {
        let emptied = Out::new(emptied, "emptied")?;
        let (counts, hash, node) = (try_mut(counts)?, text(content_hash, "content_hash")?, text(node, "node")?);
        emptied.write(counts.release(hash, node));
        Ok(())
    })
}

/// How many nodes hold `content_hash` into `*count`, handing each node id to
/// `callback` (may be NULL: only counted).
///
/// Returns `MBR_OK`, `MBR_INVALID_ARGUMENT` (not UTF-8), `MBR_INVALID_STATE` or
/// `MBR_NULL_POINTER`.
///
/// # Safety
/// `counts` is NULL or points to initialised `mbr_refcounts` not in use by another call;
/// `content_hash` is readable; `callback`, if set, is safe to call with `userdata`;
/// `count` is NULL or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_refcounts_holders(
    counts: *mut mbr_refcounts,
    content_hash: mbr_str,
    callback: mbr_id_callback,
    userdata: *mut c_void,
    count: *mut usize,
) -> u32 {
    boundary(NO_DETAIL, || {
        let count = Out::new(count, "count")?;
        let (counts, hash) = (try_mut(counts)?, text(content_hash, "content_hash")?);
        let mut n = 0;
        for node in counts.holders(hash) {
            n += 1;
            report(callback, userdata, node);
        }
        count.write(n);
        Ok(())
    })
}

/// Drop `content_hash` whatever its holders; `*forgotten` says whether it was known.
///
/// Returns `MBR_OK`, `MBR_INVALID_ARGUMENT` (not UTF-8), `MBR_INVALID_STATE` or
/// `MBR_NULL_POINTER`.
///
/// # Safety
/// `counts` is NULL or points to initialised `mbr_refcounts` not in use by another call;
/// `content_hash` is readable; `forgotten` is NULL or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_refcounts_forget(
    counts: *mut mbr_refcounts,
    content_hash: mbr_str,
    forgotten: *mut bool,
) -> u32 {
    boundary(NO_DETAIL, || {
        let forgotten = Out::new(forgotten, "forgotten")?;
        let (counts, hash) = (try_mut(counts)?, text(content_hash, "content_hash")?);
        forgotten.write(counts.forget(hash));
        Ok(())
    })
}
