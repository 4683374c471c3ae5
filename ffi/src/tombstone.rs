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

use crate::boundary::{boundary, NO_DETAIL};
use crate::object::{non_null, opaque, store, try_mut};
use crate::out::{outs, Out};
use crate::slice::{bytes_of, copy_decoded, in_buffer, input, mbr_str, output, report_written, text, write_out};
use crate::status::mbr_error;
use core::ffi::{c_char, c_void};
use core::mem::{align_of, size_of, MaybeUninit};
use membrane::json::JsonStr;
use membrane::table::{NodeSlot, ID_CAPACITY};
use membrane::tombstone::{merge_gossip_maps_into, GossipMap, OpDelete, OpTombstone, TombstoneSlot, TombstoneTable};
use membrane::Error;

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

opaque!(mbr_tombstone_table => TombstoneTable<'a>, b"mbr_tomb", "table", MBR_TOMBSTONE_TABLE_SIZE, MBR_TOMBSTONE_TABLE_ALIGN);

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
/// Contract (of the calling entry point): a non-NULL `ptr` is valid for writes of
/// `bytes` bytes for `'s`, handed over to the library (not used by anything else).
pub(crate) fn carve<'s, T: Clone>(
    ptr: *mut c_void,
    bytes: usize,
    empty: &T,
    argument: &'static str,
) -> Result<&'s mut [T], Error> {
    let raw = output(ptr.cast::<MaybeUninit<u8>>(), bytes, argument)?;
    let skip = raw.as_mut_ptr().align_offset(align_of::<T>());
    let count = bytes.checked_sub(skip).map_or(0, |rest| rest / size_of::<T>());
    let Some(aligned) = raw.get_mut(skip..) else { return Ok(&mut []) };
    let first = aligned.as_mut_ptr().cast::<MaybeUninit<T>>();
    // SAFETY: `first` is aligned for `T` (`skip` bytes in) and `count` values of `T`
    // fit in the `aligned` bytes, which are the caller's exclusive storage for 's.
    let slots = unsafe { core::slice::from_raw_parts_mut(first, count) };
    for slot in slots.iter_mut() {
        slot.write(empty.clone());
    }
    // SAFETY: every one of the `count` slots was initialised just above.
    Ok(unsafe { core::slice::from_raw_parts_mut(first.cast::<T>(), count) })
}

/// Hand `id` to `callback` NUL-terminated. Contract (of the calling entry point): the
/// callback, if set, is safe to call with `userdata`.
pub(crate) fn report(callback: mbr_id_callback, userdata: *mut c_void, id: &str) {
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
///
/// # Safety
/// `json` is NULL or points to `len` readable bytes.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_gossip_check(json: *const u8, len: usize) -> u32 {
    boundary(NO_DETAIL, || GossipMap::parse(input(json, len, "json")?).map(|_| ()))
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
///
/// # Safety
/// `a` and `b` are each NULL or point to `a_len` / `b_len` readable bytes; `out` is NULL
/// or points to `cap` writable bytes that overlap neither; `written` is NULL or writable.
#[no_mangle]
#[must_use]
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
    boundary(NO_DETAIL, || {
        let written = Out::new(written, "written")?;
        let (a, b, out) = (input(a, a_len, "a")?, input(b, b_len, "b")?, output(out, cap, "out")?);
        let (a, b) = (GossipMap::parse(a)?, GossipMap::parse(b)?);
        report_written(written, merge_gossip_maps_into(&a, &b, now, out).map_err(|err| in_buffer(err, "out")))
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
///
/// # Safety
/// `table` is NULL or points to writable `mbr_tombstone_table` storage; `slots` and
/// `nodes` are each NULL or point to `slots_bytes` / `nodes_bytes` writable bytes handed
/// over for the life of the table.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_tombstone_table_init(
    table: *mut mbr_tombstone_table,
    slots: *mut c_void,
    slots_bytes: usize,
    nodes: *mut c_void,
    nodes_bytes: usize,
    seed: u64,
) -> u32 {
    boundary(NO_DETAIL, || {
        let table = Out::new(table, "table")?;
        non_null(slots, "slots")?;
        let slots = carve(slots, slots_bytes, &TombstoneSlot::EMPTY, "slots")?;
        let nodes = carve(nodes, nodes_bytes, &NodeSlot::EMPTY, "nodes")?;
        if slots.is_empty() {
            return Err(Error::invalid_argument("slots_bytes", "the storage holds no tombstone slot"));
        }
        let value =
            if seed == 0 { TombstoneTable::new(slots, nodes) } else { TombstoneTable::with_seed(slots, nodes, seed) };
        store(table, value);
        Ok(())
    })
}

/// The number of tombstones held (`*len`), how many hashes fit (`*capacity`) and how
/// many distinct node ids (`*node_capacity`, at most 128).
///
/// Returns `MBR_OK`, `MBR_INVALID_STATE` or `MBR_NULL_POINTER`.
///
/// # Safety
/// `table` is NULL or points to an initialised `mbr_tombstone_table` not in use by
/// another call; `len`, `capacity` and `node_capacity` are each NULL or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_tombstone_table_stats(
    table: *mut mbr_tombstone_table,
    len: *mut usize,
    capacity: *mut usize,
    node_capacity: *mut usize,
) -> u32 {
    boundary(NO_DETAIL, || {
        let (len, capacity, node_capacity) = outs!(len, capacity, node_capacity);
        let table = try_mut(table)?;
        len.write(table.len());
        capacity.write(table.capacity());
        node_capacity.write(table.node_capacity());
        Ok(())
    })
}

/// Record a tombstone (SPEC §6): a new hash is added; an existing one keeps the larger
/// `until` and gains `node` (`node.len == 0`: no node).
///
/// Returns `MBR_OK`, `MBR_TOMBSTONE_FIELD` (hash or node not 1–128 characters, `until`
/// not finite), `MBR_TABLE_FULL` (the table is then unchanged), `MBR_INVALID_ARGUMENT`
/// (not UTF-8), `MBR_INVALID_STATE` or `MBR_NULL_POINTER`.
///
/// # Safety
/// `table` is NULL or points to an initialised `mbr_tombstone_table` not in use by
/// another call; the strings are readable; `error` is NULL or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_tombstone_record(
    table: *mut mbr_tombstone_table,
    content_hash: mbr_str,
    until: f64,
    node: mbr_str,
    error: *mut mbr_error,
) -> u32 {
    boundary(error, || {
        let table = try_mut(table)?;
        let (hash, node) = (text(content_hash, "content_hash")?, text(node, "node")?);
        table.record(hash, until, (!node.is_empty()).then_some(node))
    })
}

/// Merge a peer's gossip map received at `now` into the table (per hash the larger
/// `until`; unknown hashes still active at `now` are adopted; node sets unchanged);
/// `*adopted` gets how many hashes were adopted. All or nothing.
///
/// Returns `MBR_OK`, a code of `mbr_gossip_check`, `MBR_TABLE_FULL`,
/// `MBR_INVALID_STATE` or `MBR_NULL_POINTER`.
///
/// # Safety
/// `table` is NULL or points to an initialised `mbr_tombstone_table` not in use by
/// another call; `json` is NULL or points to `len` readable bytes; `adopted` and `error` are
/// each NULL or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_tombstone_merge_gossip(
    table: *mut mbr_tombstone_table,
    json: *const u8,
    len: usize,
    now: f64,
    adopted: *mut usize,
    error: *mut mbr_error,
) -> u32 {
    boundary(error, || {
        let adopted = Out::new(adopted, "adopted")?;
        let (table, json) = (try_mut(table)?, input(json, len, "json")?);
        adopted.write(table.merge_gossip(json, now)?);
        Ok(())
    })
}

/// Merge the table `other` into `table` (per hash the larger `until` and the union of
/// the nodes; unknown hashes adopted). All or nothing. `other` must be another table.
///
/// Returns `MBR_OK`, `MBR_TABLE_FULL`, `MBR_INVALID_ARGUMENT` (the same table twice),
/// `MBR_INVALID_STATE` or `MBR_NULL_POINTER`.
///
/// # Safety
/// `table` and `other` are each NULL or point to an initialised `mbr_tombstone_table`
/// not in use by another call; `error` is NULL or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_tombstone_merge_table(
    table: *mut mbr_tombstone_table,
    other: *mut mbr_tombstone_table,
    error: *mut mbr_error,
) -> u32 {
    boundary(error, || {
        non_null(table, "table")?;
        non_null(other, "other")?;
        if core::ptr::eq(table, other) {
            return Err(Error::invalid_argument("other", "a table cannot be merged into itself"));
        }
        // Two distinct tables (checked above), so the two exclusive borrows do not alias.
        let (table, other) = (try_mut(table)?, try_mut(other)?);
        table.merge_from(other)
    })
}

/// The `until` of the tombstone of `content_hash`, active or not, into `*until`;
/// `*found` says whether there is one (`*until` is 0 otherwise).
///
/// Returns `MBR_OK`, `MBR_INVALID_ARGUMENT` (not UTF-8), `MBR_INVALID_STATE` or
/// `MBR_NULL_POINTER`.
///
/// # Safety
/// `table` is NULL or points to an initialised `mbr_tombstone_table` not in use by
/// another call; `content_hash` is readable; `until` and `found` are each NULL or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_tombstone_get(
    table: *mut mbr_tombstone_table,
    content_hash: mbr_str,
    until: *mut f64,
    found: *mut bool,
) -> u32 {
    boundary(NO_DETAIL, || {
        let (until, found) = outs!(until, found);
        let (table, hash) = (try_mut(table)?, text(content_hash, "content_hash")?);
        let value = table.get(hash).map(|t| t.until());
        until.write(value.unwrap_or(0.0));
        found.write(value.is_some());
        Ok(())
    })
}

/// Whether `content_hash` has an active tombstone at `now` (`now < until`), i.e.
/// whether a store request for it must be refused (SPEC §6), into `*active`.
///
/// Returns `MBR_OK`, `MBR_INVALID_ARGUMENT` (not UTF-8), `MBR_INVALID_STATE` or
/// `MBR_NULL_POINTER`.
///
/// # Safety
/// `table` is NULL or points to an initialised `mbr_tombstone_table` not in use by
/// another call; `content_hash` is readable; `active` is NULL or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_tombstone_is_active(
    table: *mut mbr_tombstone_table,
    content_hash: mbr_str,
    now: f64,
    active: *mut bool,
) -> u32 {
    boundary(NO_DETAIL, || {
        let active = Out::new(active, "active")?;
        let (table, hash) = (try_mut(table)?, text(content_hash, "content_hash")?);
        active.write(table.is_active(hash, now));
        Ok(())
    })
}

/// Remove the tombstone of `content_hash`; `*removed` says whether there was one.
///
/// Returns `MBR_OK`, `MBR_INVALID_ARGUMENT` (not UTF-8), `MBR_INVALID_STATE` or
/// `MBR_NULL_POINTER`.
///
/// # Safety
/// `table` is NULL or points to an initialised `mbr_tombstone_table` not in use by
/// another call; `content_hash` is readable; `removed` is NULL or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_tombstone_remove(
    table: *mut mbr_tombstone_table,
    content_hash: mbr_str,
    removed: *mut bool,
) -> u32 {
    boundary(NO_DETAIL, || {
        let removed = Out::new(removed, "removed")?;
        let (table, hash) = (try_mut(table)?, text(content_hash, "content_hash")?);
        removed.write(table.remove(hash));
        Ok(())
    })
}

/// Sweep (SPEC §6): remove every tombstone with `now >= until`, handing each removed
/// hash to `callback` (may be NULL: not reported); `*removed` gets how many.
///
/// Returns `MBR_OK`, `MBR_INVALID_STATE` or `MBR_NULL_POINTER`.
///
/// # Safety
/// `table` is NULL or points to an initialised `mbr_tombstone_table` not in use by
/// another call; `callback`, if set, is safe to call with `userdata`; `removed` is NULL or
/// writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_tombstone_sweep(
    table: *mut mbr_tombstone_table,
    now: f64,
    callback: mbr_id_callback,
    userdata: *mut c_void,
    removed: *mut usize,
) -> u32 {
    boundary(NO_DETAIL, || {
        let removed = Out::new(removed, "removed")?;
        removed.write(try_mut(table)?.sweep(now, |hash| report(callback, userdata, hash)));
        Ok(())
    })
}

/// Write the gossip map of the tombstones active at `now` (SPEC §6 written form) into
/// `buf` (`capacity` bytes, no NUL); `*out_len` gets its length. Sorts the table.
///
/// Returns `MBR_OK`, `MBR_BUFFER_TOO_SMALL` (`needed` in `*error`; `(NULL, 0)` asks
/// for the length), `MBR_INVALID_STATE` or `MBR_NULL_POINTER`.
///
/// # Safety
/// `table` is NULL or points to an initialised `mbr_tombstone_table` not in use by
/// another call; `buf` is NULL or points to `capacity` writable bytes; `out_len` and `error`
/// are each NULL or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_tombstone_write_gossip(
    table: *mut mbr_tombstone_table,
    now: f64,
    buf: *mut u8,
    capacity: usize,
    out_len: *mut usize,
    error: *mut mbr_error,
) -> u32 {
    write_out(buf, capacity, out_len, error, |buf| try_mut(table)?.write_gossip_into(now, buf))
}

/// Parse an `op_tombstone` body and record it (hash, `until`, node) in the table.
///
/// Returns `MBR_OK`, `MBR_TOMBSTONE_JSON`, `MBR_TOMBSTONE_FIELD`, `MBR_TABLE_FULL`,
/// `MBR_INVALID_STATE` or `MBR_NULL_POINTER`.
///
/// # Safety
/// `table` is NULL or points to an initialised `mbr_tombstone_table` not in use by
/// another call; `json` is NULL or points to `len` readable bytes; `error` is NULL or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_tombstone_apply_op_tombstone(
    table: *mut mbr_tombstone_table,
    json: *const u8,
    len: usize,
    error: *mut mbr_error,
) -> u32 {
    boundary(error, || {
        let (table, json) = (try_mut(table)?, input(json, len, "json")?);
        table.apply_op_tombstone(&OpTombstone::parse(json)?)
    })
}

/// Parse an `op_delete` body received at `now` and record its tombstone (deadline
/// `tombstone_until`, or `now + 60` when null); `*until` gets the deadline recorded.
/// Remove the fragment only after this succeeded (SPEC §6).
///
/// Returns as `mbr_tombstone_apply_op_tombstone`.
///
/// # Safety
/// `table` is NULL or points to an initialised `mbr_tombstone_table` not in use by
/// another call; `json` is NULL or points to `len` readable bytes; `until` and `error` are
/// each NULL or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_tombstone_apply_op_delete(
    table: *mut mbr_tombstone_table,
    json: *const u8,
    len: usize,
    now: f64,
    until: *mut f64,
    error: *mut mbr_error,
) -> u32 {
    boundary(error, || {
        let until = Out::new(until, "until")?;
        let (table, json) = (try_mut(table)?, input(json, len, "json")?);
        until.write(table.apply_op_delete(&OpDelete::parse(json)?, now)?);
        Ok(())
    })
}

/// A parsed body from decoded strings and a deadline.
fn op_body(hash: &JsonStr<'_>, node: &JsonStr<'_>, until: Option<f64>) -> Result<mbr_op_body, Error> {
    let mut body =
        mbr_op_body { content_hash: [0; MBR_ID_BUF_SIZE], node_id: [0; MBR_ID_BUF_SIZE], until: 0.0, has_until: false };
    copy_decoded(hash, bytes_of(&mut body.content_hash))?;
    copy_decoded(node, bytes_of(&mut body.node_id))?;
    body.until = until.unwrap_or(0.0);
    body.has_until = until.is_some();
    Ok(body)
}

/// Parse one op body into `*out`. Contract as for `input` and `Out::new`.
fn parse_op(
    json: *const u8,
    len: usize,
    out: *mut mbr_op_body,
    error: *mut mbr_error,
    read: impl FnOnce(&[u8]) -> Result<mbr_op_body, Error>,
) -> u32 {
    boundary(error, || {
        let out = Out::new(out, "out")?;
        out.write(read(input(json, len, "json")?)?);
        Ok(())
    })
}

/// Parse and validate an `op_tombstone` body `{"content_hash", "until", "node_id"}`
/// into `*out` (decoded strings; `has_until` true).
///
/// Returns `MBR_OK`, `MBR_TOMBSTONE_JSON`, `MBR_TOMBSTONE_FIELD` (offset and field in
/// `*error`) or `MBR_NULL_POINTER`.
///
/// # Safety
/// `json` is NULL or points to `len` readable bytes; `out` and `error` are each NULL or
/// writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_op_tombstone_parse(
    json: *const u8,
    len: usize,
    out: *mut mbr_op_body,
    error: *mut mbr_error,
) -> u32 {
    parse_op(json, len, out, error, |json| {
        let op = OpTombstone::parse(json)?;
        op_body(&op.content_hash(), &op.node_id(), Some(op.until()))
    })
}

/// Parse and validate an `op_delete` body `{"content_hash", "node_id",
/// "tombstone_until"}` into `*out` (`has_until` false for a null or missing deadline).
///
/// Returns as `mbr_op_tombstone_parse`.
///
/// # Safety
/// As `mbr_op_tombstone_parse`.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_op_delete_parse(
    json: *const u8,
    len: usize,
    out: *mut mbr_op_body,
    error: *mut mbr_error,
) -> u32 {
    parse_op(json, len, out, error, |json| {
        let op = OpDelete::parse(json)?;
        op_body(&op.content_hash(), &op.node_id(), op.tombstone_until())
    })
}

/// Write an `op_tombstone` body (keys in SPEC order `content_hash, until, node_id`) into
/// `buf` (`capacity` bytes, no NUL); `*out_len` gets its length.
///
/// Returns `MBR_OK`, `MBR_TOMBSTONE_FIELD` (bad hash, node id or `until`),
/// `MBR_INVALID_ARGUMENT` (not UTF-8), `MBR_BUFFER_TOO_SMALL` (`needed` in `*error`)
/// or `MBR_NULL_POINTER`.
///
/// # Safety
/// The strings are readable; `buf` is NULL or points to `capacity` writable bytes;
/// `out_len` and `error` are each NULL or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_op_tombstone_write(
    content_hash: mbr_str,
    until: f64,
    node_id: mbr_str,
    buf: *mut u8,
    capacity: usize,
    out_len: *mut usize,
    error: *mut mbr_error,
) -> u32 {
    write_out(buf, capacity, out_len, error, |buf| {
        let (hash, node) = (text(content_hash, "content_hash")?, text(node_id, "node_id")?);
        OpTombstone::new(hash, until, node)?.write_into(buf)
    })
}

/// Write an `op_delete` body (keys `content_hash, node_id, tombstone_until`;
/// `tombstone_until` is `null` unless `has_until`) into `buf`; as
/// `mbr_op_tombstone_write`.
///
/// # Safety
/// As `mbr_op_tombstone_write`.
#[no_mangle]
#[must_use]
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
    write_out(buf, capacity, out_len, error, |buf| {
        let (hash, node) = (text(content_hash, "content_hash")?, text(node_id, "node_id")?);
        OpDelete::new(hash, node, has_until.then_some(until))?.write_into(buf)
    })
}
