//! Tombstones (SPEC §6): the table-free merge of two gossip maps
//! (`mbr_gossip_merge`), a tombstone table over caller storage (`mbr_tombstone_table`:
//! record, merge gossip or another table, query, sweep, write gossip, apply op bodies),
//! and the `op_tombstone` / `op_delete` bodies.
//!
//! Table storage: the caller hands raw memory for the slots (one per hash) and the node
//! list (one per distinct node id, at most 128 used); `mbr_*_init` aligns it, fills it
//! with empty slots and reports no error for any content it had before. Size it with
//! `MBR_TOMBSTONE_STORAGE_BYTES(n)` / `MBR_NODE_STORAGE_BYTES(n)` (C macros built from the
//! slot sizes and alignments below), which give room for at least `n` entries.

use super::identity::{copy_decoded, mbr_str, text};
use super::status::mbr_error;
use super::{boundary, input, invalid, non_null, output, put, Slot};
use crate::error::Error;
use crate::json::JsonStr;
use crate::sink::{CountingSink, SliceSink};
use crate::table::{NodeSlot, ID_CAPACITY};
use crate::tombstone::{merge_gossip_maps, GossipMap, OpDelete, OpTombstone, TombstoneSlot, TombstoneTable};
use core::ffi::{c_char, c_void};
use core::mem::{align_of, size_of, MaybeUninit};

/// Bytes reserved per tombstone slot (at least its size; see `MBR_TOMBSTONE_STORAGE_BYTES`).
pub const MBR_TOMBSTONE_SLOT_SIZE: usize = 576;
/// Alignment of the tombstone slots (the init call aligns the storage itself).
pub const MBR_TOMBSTONE_SLOT_ALIGN: usize = 16;
/// Bytes reserved per node-list slot (at least its size; see `MBR_NODE_STORAGE_BYTES`).
pub const MBR_NODE_SLOT_SIZE: usize = 514;
/// Alignment of the node-list slots.
pub const MBR_NODE_SLOT_ALIGN: usize = 2;
/// Size of a buffer that holds any decoded hash or node id (1–128 characters, up to 512
/// UTF-8 bytes) and a NUL.
pub const MBR_ID_BUF_SIZE: usize = 513;
/// Size in bytes of `mbr_tombstone_table`.
pub const MBR_TOMBSTONE_TABLE_SIZE: usize = 128;
/// Alignment in bytes of `mbr_tombstone_table`.
pub const MBR_TOMBSTONE_TABLE_ALIGN: usize = 8;

const _: () = {
    assert!(size_of::<TombstoneSlot>() <= MBR_TOMBSTONE_SLOT_SIZE);
    assert!(align_of::<TombstoneSlot>() <= MBR_TOMBSTONE_SLOT_ALIGN);
    assert!(size_of::<NodeSlot>() <= MBR_NODE_SLOT_SIZE);
    assert!(align_of::<NodeSlot>() <= MBR_NODE_SLOT_ALIGN);
    assert!(MBR_ID_BUF_SIZE == ID_CAPACITY + 1);
    assert!(size_of::<mbr_tombstone_table>() == MBR_TOMBSTONE_TABLE_SIZE);
    assert!(align_of::<mbr_tombstone_table>() == MBR_TOMBSTONE_TABLE_ALIGN);
    assert!(Slot::<TombstoneTable<'static>>::fits::<mbr_tombstone_table>());
};

/// A tombstone table in storage the caller owns, over the slot and node memory given to
/// `mbr_tombstone_table_init`, which must stay alive, in place and otherwise untouched
/// while the table is used. Opaque; do not copy it (the copy would share the slots).
/// Storage no init call has filled is refused with `MBR_INVALID_STATE`. Calls on one
/// table must not overlap (no locking inside); different tables are independent.
#[repr(C)]
pub struct mbr_tombstone_table {
    _opaque: [MaybeUninit<u64>; 16],
}

const TAG_TOMBSTONES: u64 = 0x6d62_725f_746f_6d62; // "mbr_tomb"

/// Receives one hash (decoded UTF-8, NUL-terminated, `len` bytes without the NUL) of
/// `mbr_tombstone_sweep` or `mbr_refcount_holders`. It must not call into the same
/// table.
pub type mbr_id_callback = Option<unsafe extern "C" fn(userdata: *mut c_void, id: *const c_char, len: usize)>;

/// A parsed `op_tombstone` or `op_delete` body: decoded, NUL-terminated strings.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct mbr_op_body {
    /// `content_hash` (decoded UTF-8 and a NUL).
    pub content_hash: [c_char; MBR_ID_BUF_SIZE],
    /// `node_id` (decoded UTF-8 and a NUL).
    pub node_id: [c_char; MBR_ID_BUF_SIZE],
    /// `until` (`op_tombstone`) or `tombstone_until` (`op_delete`; 0 when null).
    pub until: f64,
    /// False for an `op_delete` whose `tombstone_until` is null or missing.
    pub has_until: bool,
}

/// Carve `bytes` bytes at `ptr` into as many `T` as fit once aligned, each set to
/// `empty`. `(NULL, 0)` is no storage.
///
/// # Safety
/// A non-NULL `ptr` must be valid for writes of `bytes` bytes for `'s`, not aliased.
pub(crate) unsafe fn carve<'s, T: Clone>(
    ptr: *mut c_void,
    bytes: usize,
    empty: &T,
    argument: &'static str,
) -> Result<&'s mut [T], Error> {
    // SAFETY: forwarded from the caller.
    let raw = unsafe { output(ptr.cast::<u8>(), bytes, argument)? };
    let skip = raw.as_mut_ptr().align_offset(align_of::<T>());
    let count = bytes.checked_sub(skip).map_or(0, |rest| rest / size_of::<T>());
    if count == 0 {
        return Ok(&mut []);
    }
    // SAFETY: `skip` bytes in, the pointer is aligned for `T`, and `count` values fit
    // in the remaining bytes of the caller's exclusive storage.
    let first = unsafe { raw.as_mut_ptr().add(skip).cast::<T>() };
    for i in 0..count {
        // SAFETY: slot `i < count` lies inside the storage; `write` drops nothing.
        unsafe { first.add(i).write(empty.clone()) };
    }
    // SAFETY: `count` initialised, aligned `T`s, exclusively borrowed for 's.
    Ok(unsafe { core::slice::from_raw_parts_mut(first, count) })
}

/// The table in caller storage.
///
/// # Safety
/// `ptr`, if non-NULL, points to an `mbr_tombstone_table`; if initialised, its storage
/// is alive and not used by anything else for `'s`.
unsafe fn table_mut<'s>(ptr: *mut mbr_tombstone_table) -> Result<&'s mut TombstoneTable<'s>, Error> {
    non_null(ptr, "table")?;
    // SAFETY: forwarded from the caller.
    unsafe { Slot::<TombstoneTable<'s>>::live(ptr, TAG_TOMBSTONES, "table") }
}

/// An id argument as `&str` (`tombstone_field` checks its length later).
///
/// # Safety
/// As [`text`].
unsafe fn id_arg<'a>(value: mbr_str, field: &'static str) -> Result<&'a str, Error> {
    // SAFETY: forwarded from the caller.
    unsafe { text(value, field) }
}

/// Hand `id` to `callback` NUL-terminated.
///
/// # Safety
/// `callback`, if set, must be safe to call with `userdata`.
pub(crate) unsafe fn report(callback: mbr_id_callback, userdata: *mut c_void, id: &str) {
    let Some(callback) = callback else { return };
    let mut buf = [0u8; MBR_ID_BUF_SIZE];
    let len = id.len().min(ID_CAPACITY);
    if let (Some(target), Some(source)) = (buf.get_mut(..len), id.as_bytes().get(..len)) {
        target.copy_from_slice(source);
    }
    // SAFETY: the caller vouches for the callback; the buffer is NUL-terminated and
    // lives across the call.
    unsafe { callback(userdata, buf.as_ptr().cast(), len) }
}

/// Validate a gossip map text (SPEC §6); returns the SPEC §8 code, 0 (`MBR_OK`) when
/// accepted: `MBR_TOMBSTONE_JSON` (any JSON problem, a repeated key included) or
/// `MBR_TOMBSTONE_FIELD` (a key that is not 1–128 characters, a value that is not a
/// number, more than 131072 entries). `(NULL, 0)` is an empty text.
#[no_mangle]
pub unsafe extern "C" fn mbr_gossip_check(json: *const u8, len: usize) -> u32 {
    boundary(core::ptr::null_mut(), || {
        // SAFETY: the caller passes `len` readable bytes.
        let json = unsafe { input(json, len, "json")? };
        GossipMap::parse(json).map(|_| ())
    })
}

/// Merge two gossip tombstone maps (SPEC §6: per hash the larger until) and write the
/// entries still active at `now` (`now < until`) in the §6 written form (keys sorted,
/// `", "` / `": "`, `until` as Python `repr`) into `out` (`cap` bytes, no NUL);
/// `*written` gets its length. The result is the text of merging both maps into an
/// empty table and writing its gossip, in either order.
///
/// Needs no table and no caller storage, whatever the size of the maps (each holds at
/// most 131072 entries, as SPEC §6 requires; more is `MBR_TOMBSTONE_FIELD`): the maps
/// are walked side by side in key order, with 8 KiB of stack when their keys are not
/// already sorted (then `O(n²/256)` key comparisons).
///
/// Returns `MBR_OK`, a code of `mbr_gossip_check` (for `a` first, then `b`),
/// `MBR_BUFFER_TOO_SMALL` or `MBR_NULL_POINTER`. A too-small buffer is reported as by
/// `mbr_envelope_canonicalize`: `out` untouched and `*written` set to the length
/// needed, so `(NULL, 0)` asks for the length. On any other failure `*written` and
/// `out` are untouched. `out` must not overlap `a` or `b`.
#[no_mangle]
pub unsafe extern "C" fn mbr_gossip_merge(
    a: *const u8,
    a_len: usize,
    b: *const u8,
    b_len: usize,
    now: f64,
    out: *mut u8,
    cap: usize,
    written: *mut usize,
) -> u32 {
    boundary(core::ptr::null_mut(), || {
        non_null(written, "written")?;
        // SAFETY: the caller passes readable `a` and `b` and writable `out`, disjoint.
        let (a, b, out) = unsafe { (input(a, a_len, "a")?, input(b, b_len, "b")?, output(out, cap, "out")?) };
        let (a, b) = (GossipMap::parse(a)?, GossipMap::parse(b)?);
        // Count first, so that a too-small buffer is left untouched.
        let mut counter = CountingSink::default();
        let Ok(()) = merge_gossip_maps(&a, &b, now, &mut counter);
        let needed = usize::try_from(counter.0).unwrap_or(usize::MAX);
        let (length, result) = if out.len() < needed {
            (needed, Err(Error::buffer_too_small(needed as u64).in_field("out")))
        } else {
            let mut sink = SliceSink::new(out);
            merge_gossip_maps(&a, &b, now, &mut sink)
                .map_err(|_| Error::buffer_too_small(needed as u64).in_field("out"))?;
            (sink.len(), Ok(()))
        };
        // SAFETY: `written` is non-NULL and writable.
        unsafe { put(written, length) };
        result
    })
}

/// Initialise an empty tombstone table in `*table` over `slots` (`slots_bytes` bytes:
/// one slot per hash) and `nodes` (`nodes_bytes` bytes: one per distinct node id, at
/// most 128 used; `(NULL, 0)` for a table that only ever sees gossip, which carries no
/// node ids). Both are filled here: their previous content does not matter, and they
/// must then stay in place, untouched by the caller, for the life of the table. `seed`
/// keys the index hash: pass a random value where peers could be hostile; 0 derives
/// one from the storage address. Calling it again on a table starts it afresh.
///
/// Returns `MBR_OK`, `MBR_INVALID_ARGUMENT` (`slots` holds no slot once aligned) or
/// `MBR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn mbr_tombstone_table_init(
    table: *mut mbr_tombstone_table,
    slots: *mut c_void,
    slots_bytes: usize,
    nodes: *mut c_void,
    nodes_bytes: usize,
    seed: u64,
) -> u32 {
    boundary(core::ptr::null_mut(), || {
        non_null(table, "table")?;
        non_null(slots, "slots")?;
        // SAFETY: the caller hands over `slots_bytes` and `nodes_bytes` writable bytes
        // for the life of the table.
        let (slots, nodes) = unsafe {
            (
                carve(slots, slots_bytes, &TombstoneSlot::EMPTY, "slots")?,
                carve(nodes, nodes_bytes, &NodeSlot::EMPTY, "nodes")?,
            )
        };
        if slots.is_empty() {
            return Err(invalid("slots_bytes", "the storage holds no tombstone slot"));
        }
        let value =
            if seed == 0 { TombstoneTable::new(slots, nodes) } else { TombstoneTable::with_seed(slots, nodes, seed) };
        // SAFETY: `table` is non-NULL, aligned and writable; the table fits (asserted).
        unsafe { Slot::store(table, TAG_TOMBSTONES, value) };
        Ok(())
    })
}

/// The number of tombstones held (`*len`), how many hashes fit (`*capacity`) and how
/// many distinct node ids (`*node_capacity`, at most 128).
///
/// Returns `MBR_OK`, `MBR_INVALID_STATE` or `MBR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn mbr_tombstone_table_stats(
    table: *mut mbr_tombstone_table,
    len: *mut usize,
    capacity: *mut usize,
    node_capacity: *mut usize,
) -> u32 {
    boundary(core::ptr::null_mut(), || {
        non_null(len, "len")?;
        non_null(capacity, "capacity")?;
        non_null(node_capacity, "node_capacity")?;
        // SAFETY: the caller passes an initialised table.
        let table = unsafe { table_mut(table)? };
        // SAFETY: all three are non-NULL and writable.
        unsafe {
            put(len, table.len());
            put(capacity, table.capacity());
            put(node_capacity, table.node_capacity());
        }
        Ok(())
    })
}

/// Record a tombstone (SPEC §6): a new hash is added; an existing one keeps the larger
/// `until` and gains `node` (`node.len == 0`: no node).
///
/// Returns `MBR_OK`, `MBR_TOMBSTONE_FIELD` (hash or node not 1–128 characters, `until`
/// not finite), `MBR_TABLE_FULL` (the table is then unchanged), `MBR_INVALID_ARGUMENT`
/// (not UTF-8), `MBR_INVALID_STATE` or `MBR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn mbr_tombstone_record(
    table: *mut mbr_tombstone_table,
    content_hash: mbr_str,
    until: f64,
    node: mbr_str,
    error: *mut mbr_error,
) -> u32 {
    boundary(error, || {
        // SAFETY: the caller passes an initialised table and readable strings.
        let (table, hash, node) =
            unsafe { (table_mut(table)?, id_arg(content_hash, "content_hash")?, id_arg(node, "node")?) };
        table.record(hash, until, (!node.is_empty()).then_some(node))
    })
}

/// Merge a peer's gossip map received at `now` into the table (per hash the larger
/// `until`; unknown hashes still active at `now` are adopted; node sets unchanged);
/// `*adopted` gets how many hashes were adopted. All or nothing.
///
/// Returns `MBR_OK`, a code of `mbr_gossip_check`, `MBR_TABLE_FULL`,
/// `MBR_INVALID_STATE` or `MBR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn mbr_tombstone_merge_gossip(
    table: *mut mbr_tombstone_table,
    json: *const u8,
    len: usize,
    now: f64,
    adopted: *mut usize,
    error: *mut mbr_error,
) -> u32 {
    boundary(error, || {
        non_null(adopted, "adopted")?;
        // SAFETY: the caller passes an initialised table and `len` readable bytes.
        let (table, json) = unsafe { (table_mut(table)?, input(json, len, "json")?) };
        let count = table.merge_gossip(json, now)?;
        // SAFETY: `adopted` is non-NULL and writable.
        unsafe { put(adopted, count) };
        Ok(())
    })
}

/// Merge the table `other` into `table` (per hash the larger `until` and the union of
/// the nodes; unknown hashes adopted). All or nothing. `other` must be another table.
///
/// Returns `MBR_OK`, `MBR_TABLE_FULL`, `MBR_INVALID_ARGUMENT` (the same table twice),
/// `MBR_INVALID_STATE` or `MBR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn mbr_tombstone_merge_table(
    table: *mut mbr_tombstone_table,
    other: *mut mbr_tombstone_table,
    error: *mut mbr_error,
) -> u32 {
    boundary(error, || {
        non_null(table, "table")?;
        non_null(other, "other")?;
        if core::ptr::eq(table, other) {
            return Err(invalid("other", "a table cannot be merged into itself"));
        }
        // SAFETY: two distinct initialised tables (checked above).
        let (table, other) = unsafe { (table_mut(table)?, table_mut(other)?) };
        table.merge_from(other)
    })
}

/// The `until` of the tombstone of `content_hash`, active or not, into `*until`;
/// `*found` says whether there is one (`*until` is 0 otherwise).
///
/// Returns `MBR_OK`, `MBR_INVALID_ARGUMENT` (not UTF-8), `MBR_INVALID_STATE` or
/// `MBR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn mbr_tombstone_get(
    table: *mut mbr_tombstone_table,
    content_hash: mbr_str,
    until: *mut f64,
    found: *mut bool,
) -> u32 {
    boundary(core::ptr::null_mut(), || {
        non_null(until, "until")?;
        non_null(found, "found")?;
        // SAFETY: the caller passes an initialised table and a readable string.
        let (table, hash) = unsafe { (table_mut(table)?, id_arg(content_hash, "content_hash")?) };
        let value = table.get(hash).map(|t| t.until());
        // SAFETY: both are non-NULL and writable.
        unsafe {
            put(until, value.unwrap_or(0.0));
            put(found, value.is_some());
        }
        Ok(())
    })
}

/// Whether `content_hash` has an active tombstone at `now` (`now < until`), i.e.
/// whether a store request for it must be refused (SPEC §6), into `*active`.
///
/// Returns `MBR_OK`, `MBR_INVALID_ARGUMENT` (not UTF-8), `MBR_INVALID_STATE` or
/// `MBR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn mbr_tombstone_is_active(
    table: *mut mbr_tombstone_table,
    content_hash: mbr_str,
    now: f64,
    active: *mut bool,
) -> u32 {
    boundary(core::ptr::null_mut(), || {
        non_null(active, "active")?;
        // SAFETY: the caller passes an initialised table and a readable string.
        let (table, hash) = unsafe { (table_mut(table)?, id_arg(content_hash, "content_hash")?) };
        // SAFETY: `active` is non-NULL and writable.
        unsafe { put(active, table.is_active(hash, now)) };
        Ok(())
    })
}

/// Remove the tombstone of `content_hash`; `*removed` says whether there was one.
///
/// Returns `MBR_OK`, `MBR_INVALID_ARGUMENT` (not UTF-8), `MBR_INVALID_STATE` or
/// `MBR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn mbr_tombstone_remove(
    table: *mut mbr_tombstone_table,
    content_hash: mbr_str,
    removed: *mut bool,
) -> u32 {
    boundary(core::ptr::null_mut(), || {
        non_null(removed, "removed")?;
        // SAFETY: the caller passes an initialised table and a readable string.
        let (table, hash) = unsafe { (table_mut(table)?, id_arg(content_hash, "content_hash")?) };
        let was = table.remove(hash);
        // SAFETY: `removed` is non-NULL and writable.
        unsafe { put(removed, was) };
        Ok(())
    })
}

/// Sweep (SPEC §6): remove every tombstone with `now >= until`, handing each removed
/// hash to `callback` (may be NULL: not reported); `*removed` gets how many.
///
/// Returns `MBR_OK`, `MBR_INVALID_STATE` or `MBR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn mbr_tombstone_sweep(
    table: *mut mbr_tombstone_table,
    now: f64,
    callback: mbr_id_callback,
    userdata: *mut c_void,
    removed: *mut usize,
) -> u32 {
    boundary(core::ptr::null_mut(), || {
        non_null(removed, "removed")?;
        // SAFETY: the caller passes an initialised table.
        let table = unsafe { table_mut(table)? };
        // SAFETY: the caller vouches for the callback and its userdata.
        let count = table.sweep(now, |hash| unsafe { report(callback, userdata, hash) });
        // SAFETY: `removed` is non-NULL and writable.
        unsafe { put(removed, count) };
        Ok(())
    })
}

/// Write the gossip map of the tombstones active at `now` (SPEC §6 written form) into
/// `buf` (`capacity` bytes, no NUL); `*out_len` gets its length. Sorts the table.
///
/// Returns `MBR_OK`, `MBR_BUFFER_TOO_SMALL` (`needed` in `*error`; `(NULL, 0)` asks
/// for the length), `MBR_INVALID_STATE` or `MBR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn mbr_tombstone_write_gossip(
    table: *mut mbr_tombstone_table,
    now: f64,
    buf: *mut u8,
    capacity: usize,
    out_len: *mut usize,
    error: *mut mbr_error,
) -> u32 {
    boundary(error, || {
        non_null(out_len, "out_len")?;
        // SAFETY: the caller passes an initialised table and `capacity` writable bytes.
        let (table, buf) = unsafe { (table_mut(table)?, output(buf, capacity, "buf")?) };
        let needed = table.gossip_len(now);
        if buf.len() < needed {
            return Err(Error::buffer_too_small(needed as u64).in_field("buf"));
        }
        let written = table.write_gossip_into(now, buf)?;
        // SAFETY: `out_len` is non-NULL and writable.
        unsafe { put(out_len, written) };
        Ok(())
    })
}

/// Parse an `op_tombstone` body and record it (hash, `until`, node) in the table.
///
/// Returns `MBR_OK`, `MBR_TOMBSTONE_JSON`, `MBR_TOMBSTONE_FIELD`, `MBR_TABLE_FULL`,
/// `MBR_INVALID_STATE` or `MBR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn mbr_tombstone_apply_op_tombstone(
    table: *mut mbr_tombstone_table,
    json: *const u8,
    len: usize,
    error: *mut mbr_error,
) -> u32 {
    boundary(error, || {
        // SAFETY: the caller passes an initialised table and `len` readable bytes.
        let (table, json) = unsafe { (table_mut(table)?, input(json, len, "json")?) };
        table.apply_op_tombstone(&OpTombstone::parse(json)?)
    })
}

/// Parse an `op_delete` body received at `now` and record its tombstone (deadline
/// `tombstone_until`, or `now + 60` when null); `*until` gets the deadline recorded.
/// Remove the fragment only after this succeeded (SPEC §6).
///
/// Returns as `mbr_tombstone_apply_op_tombstone`.
#[no_mangle]
pub unsafe extern "C" fn mbr_tombstone_apply_op_delete(
    table: *mut mbr_tombstone_table,
    json: *const u8,
    len: usize,
    now: f64,
    until: *mut f64,
    error: *mut mbr_error,
) -> u32 {
    boundary(error, || {
        non_null(until, "until")?;
        // SAFETY: the caller passes an initialised table and `len` readable bytes.
        let (table, json) = unsafe { (table_mut(table)?, input(json, len, "json")?) };
        let recorded = table.apply_op_delete(&OpDelete::parse(json)?, now)?;
        // SAFETY: `until` is non-NULL and writable.
        unsafe { put(until, recorded) };
        Ok(())
    })
}

/// Fill `out` from decoded strings and a deadline.
fn op_body(hash: &JsonStr<'_>, node: &JsonStr<'_>, until: Option<f64>) -> Result<mbr_op_body, Error> {
    let mut body =
        mbr_op_body { content_hash: [0; MBR_ID_BUF_SIZE], node_id: [0; MBR_ID_BUF_SIZE], until: 0.0, has_until: false };
    // SAFETY: `c_char` and `u8` have the same size and alignment; the arrays are
    // exclusively borrowed for the two calls.
    let (hash_buf, node_buf) = unsafe {
        (
            core::slice::from_raw_parts_mut(body.content_hash.as_mut_ptr().cast::<u8>(), MBR_ID_BUF_SIZE),
            core::slice::from_raw_parts_mut(body.node_id.as_mut_ptr().cast::<u8>(), MBR_ID_BUF_SIZE),
        )
    };
    copy_decoded(hash, hash_buf)?;
    copy_decoded(node, node_buf)?;
    body.until = until.unwrap_or(0.0);
    body.has_until = until.is_some();
    Ok(body)
}

/// Write a body of `needed` bytes into `buf`, leaving it untouched when too small.
fn write_op(
    needed: usize,
    buf: &mut [u8],
    write: impl FnOnce(&mut [u8]) -> Result<usize, Error>,
) -> Result<usize, Error> {
    if buf.len() < needed {
        return Err(Error::buffer_too_small(needed as u64).in_field("buf"));
    }
    write(buf)
}

/// Parse and validate an `op_tombstone` body `{"content_hash", "until", "node_id"}`
/// into `*out` (decoded strings; `has_until` true).
///
/// Returns `MBR_OK`, `MBR_TOMBSTONE_JSON`, `MBR_TOMBSTONE_FIELD` (offset and field in
/// `*error`) or `MBR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn mbr_op_tombstone_parse(
    json: *const u8,
    len: usize,
    out: *mut mbr_op_body,
    error: *mut mbr_error,
) -> u32 {
    boundary(error, || {
        non_null(out, "out")?;
        // SAFETY: the caller passes `len` readable bytes.
        let json = unsafe { input(json, len, "json")? };
        let op = OpTombstone::parse(json)?;
        let body = op_body(&op.content_hash(), &op.node_id(), Some(op.until()))?;
        // SAFETY: `out` is non-NULL and writable.
        unsafe { put(out, body) };
        Ok(())
    })
}

/// Parse and validate an `op_delete` body `{"content_hash", "node_id",
/// "tombstone_until"}` into `*out` (`has_until` false for a null or missing deadline).
///
/// Returns as `mbr_op_tombstone_parse`.
#[no_mangle]
pub unsafe extern "C" fn mbr_op_delete_parse(
    json: *const u8,
    len: usize,
    out: *mut mbr_op_body,
    error: *mut mbr_error,
) -> u32 {
    boundary(error, || {
        non_null(out, "out")?;
        // SAFETY: the caller passes `len` readable bytes.
        let json = unsafe { input(json, len, "json")? };
        let op = OpDelete::parse(json)?;
        let body = op_body(&op.content_hash(), &op.node_id(), op.tombstone_until())?;
        // SAFETY: `out` is non-NULL and writable.
        unsafe { put(out, body) };
        Ok(())
    })
}

/// Write an `op_tombstone` body (keys in SPEC order `content_hash, until, node_id`) into
/// `buf` (`capacity` bytes, no NUL); `*out_len` gets its length.
///
/// Returns `MBR_OK`, `MBR_TOMBSTONE_FIELD` (bad hash, node id or `until`),
/// `MBR_INVALID_ARGUMENT` (not UTF-8), `MBR_BUFFER_TOO_SMALL` (`needed` in `*error`)
/// or `MBR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn mbr_op_tombstone_write(
    content_hash: mbr_str,
    until: f64,
    node_id: mbr_str,
    buf: *mut u8,
    capacity: usize,
    out_len: *mut usize,
    error: *mut mbr_error,
) -> u32 {
    boundary(error, || {
        non_null(out_len, "out_len")?;
        // SAFETY: the caller passes readable strings and `capacity` writable bytes.
        let (hash, node, buf) = unsafe {
            (id_arg(content_hash, "content_hash")?, id_arg(node_id, "node_id")?, output(buf, capacity, "buf")?)
        };
        let op = OpTombstone::new(hash, until, node)?;
        let written = write_op(op.encoded_len(), buf, |buf| op.write_into(buf))?;
        // SAFETY: `out_len` is non-NULL and writable.
        unsafe { put(out_len, written) };
        Ok(())
    })
}

/// Write an `op_delete` body (keys `content_hash, node_id, tombstone_until`;
/// `tombstone_until` is `null` unless `has_until`) into `buf`; as
/// `mbr_op_tombstone_write`.
#[no_mangle]
pub unsafe extern "C" fn mbr_op_delete_write(
    content_hash: mbr_str,
    node_id: mbr_str,
    has_until: bool,
    until: f64,
    buf: *mut u8,
    capacity: usize,
    out_len: *mut usize,
    error: *mut mbr_error,
) -> u32 {
    boundary(error, || {
        non_null(out_len, "out_len")?;
        // SAFETY: the caller passes readable strings and `capacity` writable bytes.
        let (hash, node, buf) = unsafe {
            (id_arg(content_hash, "content_hash")?, id_arg(node_id, "node_id")?, output(buf, capacity, "buf")?)
        };
        let op = OpDelete::new(hash, node, has_until.then_some(until))?;
        let written = write_op(op.encoded_len(), buf, |buf| op.write_into(buf))?;
        // SAFETY: `out_len` is non-NULL and writable.
        unsafe { put(out_len, written) };
        Ok(())
    })
}
