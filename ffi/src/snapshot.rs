//! Cluster snapshots (SPEC §5): checked in one call, parsed (optionally behind the
//! epoch guard) into caller storage (`mbr_snapshot`) and read through accessors —
//! indexed, or with a cursor (`mbr_snapshot_cursor`) that walks a list or map once —
//! re-emitted in the written form (optionally with a new epoch, as a
//! checkpoint does), and the epoch guard on its own. Files are the caller's business:
//! the `SnapshotStore` of the Rust API has no C counterpart.

use crate::boundary::{boundary, NO_DETAIL};
use crate::object::{opaque, read_into, store, try_mut, try_ref};
use crate::out::Out;
use crate::slice::{copy_decoded, in_buffer, input, write_out};
use crate::status::mbr_error;
use core::ffi::c_char;
use core::mem::MaybeUninit;
use membrane::json::JsonStr;
use membrane::snapshot::{check_epoch, Member, Members, PrimaryEntries, ReplicaEntries, ReplicaNodes, Snapshot};
use membrane::Error;

/// Size in bytes of `mbr_snapshot`.
pub const MBR_SNAPSHOT_SIZE: usize = 256;
/// Alignment in bytes of `mbr_snapshot`.
pub const MBR_SNAPSHOT_ALIGN: usize = 8;

/// A parsed snapshot, in storage the caller owns. Opaque: read it through the
/// `mbr_snapshot_*` functions. It borrows the JSON text it was parsed from, which must
/// stay alive and unchanged while it is used; it owns nothing (copy it freely, never
/// free it). Storage no call has filled is refused with `MBR_INVALID_STATE`.
#[repr(C)]
pub struct mbr_snapshot {
    _opaque: [MaybeUninit<u64>; 32],
}

opaque!(mbr_snapshot => Snapshot<'a>, b"mbr_snap", "snapshot", MBR_SNAPSHOT_SIZE, MBR_SNAPSHOT_ALIGN);

/// The scalar values of a snapshot and the sizes of its lists and maps.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct mbr_snapshot_info {
    /// `schema_version` as read: 5 or 2 (written back as 5).
    pub schema_version: i64,
    /// `captured_at`, Unix seconds.
    pub captured_at: f64,
    /// `cluster_epoch`.
    pub cluster_epoch: u64,
    /// `server.request_count`.
    pub request_count: u64,
    /// `server.error_count`.
    pub error_count: u64,
    /// Entries of `membership`.
    pub member_count: usize,
    /// Entries of `shards.primary_map`.
    pub primary_count: usize,
    /// Entries of `shards.replica_map`.
    pub replica_count: usize,
}

/// The non-string values of one `membership` entry; the `has_*` flags say whether an
/// optional key was present (the value is 0 / false otherwise).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct mbr_member {
    /// `port`.
    pub port: u16,
    /// Whether `cluster_epoch` is present.
    pub has_cluster_epoch: bool,
    /// Whether `healthy` is present.
    pub has_healthy: bool,
    /// Whether `suspect` is present.
    pub has_suspect: bool,
    /// Whether `missed_heartbeats` is present.
    pub has_missed_heartbeats: bool,
    /// `healthy`.
    pub healthy: bool,
    /// `suspect`.
    pub suspect: bool,
    /// `cluster_epoch`.
    pub cluster_epoch: u64,
    /// `missed_heartbeats`.
    pub missed_heartbeats: u64,
}

/// `membership[index].node_id`, for `mbr_snapshot_string`.
pub const MBR_SNAPSHOT_MEMBER_NODE_ID: u32 = 1;
/// `membership[index].host`.
pub const MBR_SNAPSHOT_MEMBER_HOST: u32 = 2;
/// The key (content hash) of entry `index` of `shards.primary_map`.
pub const MBR_SNAPSHOT_PRIMARY_KEY: u32 = 3;
/// The node id of entry `index` of `shards.primary_map`.
pub const MBR_SNAPSHOT_PRIMARY_NODE: u32 = 4;
/// The key (content hash) of entry `index` of `shards.replica_map`.
pub const MBR_SNAPSHOT_REPLICA_KEY: u32 = 5;
/// Node `sub_index` of entry `index` of `shards.replica_map`.
pub const MBR_SNAPSHOT_REPLICA_NODE: u32 = 6;

/// `membership`, for `mbr_snapshot_cursor_init`.
pub const MBR_SNAPSHOT_MEMBERSHIP: u32 = 1;
/// `shards.primary_map`, for `mbr_snapshot_cursor_init`.
pub const MBR_SNAPSHOT_PRIMARY_MAP: u32 = 2;
/// `shards.replica_map`, for `mbr_snapshot_cursor_init`.
pub const MBR_SNAPSHOT_REPLICA_MAP: u32 = 3;

/// Size in bytes of `mbr_snapshot_cursor`.
pub const MBR_SNAPSHOT_CURSOR_SIZE: usize = 512;
/// Alignment in bytes of `mbr_snapshot_cursor`.
pub const MBR_SNAPSHOT_CURSOR_ALIGN: usize = 8;

/// A position in one list or map of a snapshot, in storage the caller owns, for reading
/// a whole map in one pass (the indexed accessors walk from the start on every call).
/// Opaque. It borrows the snapshot's JSON text (not the `mbr_snapshot`), which must stay
/// alive and unchanged while it is used; it owns nothing.
#[repr(C)]
pub struct mbr_snapshot_cursor {
    _opaque: [MaybeUninit<u64>; 64],
}

opaque!(mbr_snapshot_cursor => Cursor<'a>, b"mbr_curs", "cursor", MBR_SNAPSHOT_CURSOR_SIZE, MBR_SNAPSHOT_CURSOR_ALIGN);

/// One entry of a list or map: what the string accessors read.
#[derive(Clone, Copy)]
enum Entry<'a> {
    Member(Member<'a>),
    Primary(JsonStr<'a>, JsonStr<'a>),
    Replica(JsonStr<'a>, ReplicaNodes<'a>),
}

/// The entries of one list or map, in text order.
// The membership walker holds a re-walking reader, the big variant; without an
// allocator it cannot be boxed, and a cursor is caller-owned fixed storage anyway.
#[allow(clippy::large_enum_variant)]
enum Entries<'a> {
    Members(Members<'a>),
    Primary(PrimaryEntries<'a>),
    Replica(ReplicaEntries<'a>),
}

impl<'a> Entries<'a> {
    /// The entries of `list` (`MBR_SNAPSHOT_MEMBERSHIP`, `_PRIMARY_MAP`, `_REPLICA_MAP`).
    fn of(snapshot: &Snapshot<'a>, list: u32) -> Result<Entries<'a>, Error> {
        Ok(match list {
            MBR_SNAPSHOT_MEMBERSHIP => Entries::Members(snapshot.membership().iter()),
            MBR_SNAPSHOT_PRIMARY_MAP => Entries::Primary(snapshot.primary_map().iter()),
            MBR_SNAPSHOT_REPLICA_MAP => Entries::Replica(snapshot.replica_map().iter()),
            _ => {
                return Err(Error::invalid_argument(
                    "list",
                    "not an MBR_SNAPSHOT_MEMBERSHIP / _PRIMARY_MAP / _REPLICA_MAP",
                ))
            }
        })
    }
}

impl<'a> Iterator for Entries<'a> {
    type Item = Entry<'a>;

    fn next(&mut self) -> Option<Entry<'a>> {
        match self {
            Entries::Members(members) => members.next().map(Entry::Member),
            Entries::Primary(entries) => entries.next().map(|(key, node)| Entry::Primary(key, node)),
            Entries::Replica(entries) => entries.next().map(|(key, nodes)| Entry::Replica(key, nodes)),
        }
    }
}

/// The entries of one list or map and the one the cursor is on (`None` before the
/// first `next` and after the last).
pub(crate) struct Cursor<'a> {
    entries: Entries<'a>,
    current: Option<Entry<'a>>,
}

impl<'a> Cursor<'a> {
    /// Move to the next entry; whether there is one.
    fn advance(&mut self) -> bool {
        self.current = self.entries.next();
        self.current.is_some()
    }

    fn entry(&self) -> Result<Entry<'a>, Error> {
        self.current.ok_or(Error::invalid_state("cursor", "the cursor is not on an entry"))
    }
}

fn out_of_range() -> Error {
    Error::invalid_argument("index", "index is past the end of the list or map")
}

/// Entry `index` of the list or map that string `field` belongs to (walks from the start).
fn entry_at<'a>(snapshot: &Snapshot<'a>, field: u32, index: usize) -> Result<Entry<'a>, Error> {
    let list = match field {
        MBR_SNAPSHOT_MEMBER_NODE_ID | MBR_SNAPSHOT_MEMBER_HOST => MBR_SNAPSHOT_MEMBERSHIP,
        MBR_SNAPSHOT_PRIMARY_KEY | MBR_SNAPSHOT_PRIMARY_NODE => MBR_SNAPSHOT_PRIMARY_MAP,
        MBR_SNAPSHOT_REPLICA_KEY | MBR_SNAPSHOT_REPLICA_NODE => MBR_SNAPSHOT_REPLICA_MAP,
        _ => return Err(unknown_field()),
    };
    Entries::of(snapshot, list)?.nth(index).ok_or_else(out_of_range)
}

fn unknown_field() -> Error {
    Error::invalid_argument("field", "not an MBR_SNAPSHOT_* string field of this list or map")
}

/// The string `field` of `entry` (node `sub_index` for `MBR_SNAPSHOT_REPLICA_NODE`).
fn string_of<'a>(entry: Entry<'a>, field: u32, sub_index: usize) -> Result<JsonStr<'a>, Error> {
    match (entry, field) {
        (Entry::Member(member), MBR_SNAPSHOT_MEMBER_NODE_ID) => Ok(member.node_id),
        (Entry::Member(member), MBR_SNAPSHOT_MEMBER_HOST) => Ok(member.host),
        (Entry::Primary(key, _), MBR_SNAPSHOT_PRIMARY_KEY) | (Entry::Replica(key, _), MBR_SNAPSHOT_REPLICA_KEY) => {
            Ok(key)
        }
        (Entry::Primary(_, node), MBR_SNAPSHOT_PRIMARY_NODE) => Ok(node),
        (Entry::Replica(_, nodes), MBR_SNAPSHOT_REPLICA_NODE) => nodes
            .iter()
            .nth(sub_index)
            .ok_or(Error::invalid_argument("sub_index", "sub_index is past the end of the node list")),
        _ => Err(unknown_field()),
    }
}

fn member_value(member: &Member<'_>) -> mbr_member {
    mbr_member {
        port: member.port,
        has_cluster_epoch: member.cluster_epoch.is_some(),
        has_healthy: member.healthy.is_some(),
        has_suspect: member.suspect.is_some(),
        has_missed_heartbeats: member.missed_heartbeats.is_some(),
        healthy: member.healthy.unwrap_or(false),
        suspect: member.suspect.unwrap_or(false),
        cluster_epoch: member.cluster_epoch.unwrap_or(0),
        missed_heartbeats: member.missed_heartbeats.unwrap_or(0),
    }
}

/// Validate a snapshot JSON text (SPEC §5); returns the SPEC §8 code, 0 (`MBR_OK`)
/// when the snapshot is accepted: `MBR_SNAPSHOT_JSON`, `MBR_SNAPSHOT_VERSION` or
/// `MBR_SNAPSHOT_FIELD`, in that order of precedence.
///
/// `(NULL, 0)` is an empty text (`MBR_SNAPSHOT_JSON`); `(NULL, n > 0)` is
/// `MBR_NULL_POINTER`. For the offset and field of a problem, use `mbr_snapshot_parse`.
///
/// # Safety
/// `json` is NULL or points to `len` readable bytes.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_snapshot_check(json: *const u8, len: usize) -> u32 {
    boundary(NO_DETAIL, || Snapshot::parse(input(json, len, "json")?).map(|_| ()))
}

/// Parse and validate a snapshot JSON text (SPEC §5) into `*out`, which then borrows
/// the text.
///
/// Returns `MBR_OK`, a code of `mbr_snapshot_check` (with the byte offset and the field
/// path, e.g. `membership.port`, in `*error`), or `MBR_NULL_POINTER`. `error` may be NULL.
///
/// # Safety
/// `json` is NULL or points to `len` readable bytes that stay alive and unchanged while
/// the snapshot is used; `out` and `error` are each NULL or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_snapshot_parse(
    json: *const u8,
    len: usize,
    out: *mut mbr_snapshot,
    error: *mut mbr_error,
) -> u32 {
    boundary(error, || {
        let out = Out::new(out, "out")?;
        store(out, Snapshot::parse(input(json, len, "json")?)?);
        Ok(())
    })
}

/// `mbr_snapshot_parse`, recording in `index` (`index_words` words of 32 bits) where
/// every entry of the shard maps lies, so that the map cursors
/// (`mbr_snapshot_cursor_read_primary`, `_read_replica` and the per-entry calls) read
/// those positions instead of walking the text again. A snapshot needs four words for
/// each primary entry, three for each replica entry and two for each of its node ids;
/// with fewer, `MBR_BUFFER_TOO_SMALL` with the number in `error->needed` (`(NULL, 0)`
/// asks for it) and `*out` untouched. Problems of the text come first, with the codes
/// of `mbr_snapshot_parse`. `*out` then borrows both the text and `index`. A text of
/// 2 GiB or more is parsed as by `mbr_snapshot_parse`, its maps walked in the text.
///
/// Returns `MBR_OK`, a code of `mbr_snapshot_check`, `MBR_BUFFER_TOO_SMALL` or
/// `MBR_NULL_POINTER`. `error` may be NULL.
///
/// # Safety
/// As `mbr_snapshot_parse`; `index` is NULL or points to `index_words` writable
/// `uint32_t`s that no one else uses while the snapshot is used.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_snapshot_parse_indexed(
    json: *const u8,
    len: usize,
    index: *mut u32,
    index_words: usize,
    out: *mut mbr_snapshot,
    error: *mut mbr_error,
) -> u32 {
    boundary(error, || {
        let out = Out::new(out, "out")?;
        let index = crate::slice::output(index, index_words, "index")?;
        let snapshot =
            Snapshot::parse_indexed(input(json, len, "json")?, index).map_err(|err| in_buffer(err, "index"))?;
        store(out, snapshot);
        Ok(())
    })
}

/// `mbr_snapshot_parse` behind the epoch guard (SPEC §5) with live epoch `live_epoch`:
/// a snapshot whose only problem is a missing `cluster_epoch`, or whose epoch is two or
/// more behind, is `MBR_STALE_EPOCH` (the caller deletes such a file); any other
/// problem keeps its own code (the file must then be left alone).
///
/// # Safety
/// As `mbr_snapshot_parse`.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_snapshot_parse_guarded(
    json: *const u8,
    len: usize,
    live_epoch: u64,
    out: *mut mbr_snapshot,
    error: *mut mbr_error,
) -> u32 {
    boundary(error, || {
        let out = Out::new(out, "out")?;
        store(out, Snapshot::parse_guarded(input(json, len, "json")?, live_epoch)?);
        Ok(())
    })
}

/// The epoch guard alone (SPEC §5): `MBR_OK` iff `persisted_epoch >= live_epoch - 1`;
/// `MBR_STALE_EPOCH` when it is two or more behind, or when `has_persisted_epoch` is
/// false (the snapshot had no epoch).
#[no_mangle]
#[must_use]
pub extern "C" fn mbr_snapshot_epoch_check(live_epoch: u64, persisted_epoch: u64, has_persisted_epoch: bool) -> u32 {
    boundary(NO_DETAIL, || check_epoch(live_epoch, has_persisted_epoch.then_some(persisted_epoch)))
}

/// The scalar values and counts of a snapshot into `*out`.
///
/// Returns `MBR_OK`, `MBR_INVALID_STATE` or `MBR_NULL_POINTER`.
///
/// # Safety
/// `snapshot` is NULL or points to an `mbr_snapshot` (its text alive and unchanged); `out` is NULL
/// or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_snapshot_info_get(snapshot: *const mbr_snapshot, out: *mut mbr_snapshot_info) -> u32 {
    read_into(snapshot, out, "out", |snapshot| {
        Ok(mbr_snapshot_info {
            schema_version: snapshot.schema_version(),
            captured_at: snapshot.captured_at(),
            cluster_epoch: snapshot.cluster_epoch(),
            request_count: snapshot.request_count(),
            error_count: snapshot.error_count(),
            member_count: snapshot.membership().len(),
            primary_count: snapshot.primary_map().len(),
            replica_count: snapshot.replica_map().len(),
        })
    })
}

/// The non-string values of `membership[index]` into `*out` (text order; each call
/// walks the list from the start).
///
/// Returns `MBR_OK`, `MBR_INVALID_ARGUMENT` (index past the end), `MBR_INVALID_STATE`
/// or `MBR_NULL_POINTER`.
///
/// # Safety
/// `snapshot` is NULL or points to an `mbr_snapshot` (its text alive and unchanged); `out` is NULL
/// or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_snapshot_member(snapshot: *const mbr_snapshot, index: usize, out: *mut mbr_member) -> u32 {
    read_into(snapshot, out, "out", |snapshot| {
        Ok(member_value(&snapshot.membership().iter().nth(index).ok_or_else(out_of_range)?))
    })
}

/// The number of node ids of entry `index` of `shards.replica_map` into `*out`.
///
/// Returns `MBR_OK`, `MBR_INVALID_ARGUMENT` (index past the end), `MBR_INVALID_STATE`
/// or `MBR_NULL_POINTER`.
///
/// # Safety
/// `snapshot` is NULL or points to an `mbr_snapshot` (its text alive and unchanged); `out` is NULL
/// or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_snapshot_replica_len(snapshot: *const mbr_snapshot, index: usize, out: *mut usize) -> u32 {
    read_into(snapshot, out, "out", |snapshot| {
        let (_, nodes) = snapshot.replica_map().iter().nth(index).ok_or_else(out_of_range)?;
        Ok(nodes.len())
    })
}

/// Copy the decoded (unescaped) UTF-8 value of a string (`MBR_SNAPSHOT_MEMBER_NODE_ID`,
/// `..._MEMBER_HOST`, `..._PRIMARY_KEY`, `..._PRIMARY_NODE`, `..._REPLICA_KEY`: entry
/// `index`; `..._REPLICA_NODE`: node `sub_index` of entry `index`; `sub_index` is
/// ignored otherwise) and a NUL into `buf` (`capacity` bytes); `*out_len` gets its
/// length without the NUL. Entries are in text order; each call walks from the start,
/// so reading a whole map this way is quadratic — fine for the few entries of a
/// membership list; for maps of many entries use `mbr_snapshot_cursor_*`.
///
/// Returns `MBR_OK`, `MBR_BUFFER_TOO_SMALL` (`needed` in `*error` includes the NUL),
/// `MBR_INVALID_ARGUMENT` (unknown field, index past the end), `MBR_INVALID_STATE` or
/// `MBR_NULL_POINTER`.
///
/// # Safety
/// `snapshot` is NULL or points to an `mbr_snapshot` (its text alive and unchanged); `buf` is NULL
/// or points to `capacity` writable bytes; `out_len` and `error` are each NULL or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_snapshot_string(
    snapshot: *const mbr_snapshot,
    field: u32,
    index: usize,
    sub_index: usize,
    buf: *mut c_char,
    capacity: usize,
    out_len: *mut usize,
    error: *mut mbr_error,
) -> u32 {
    write_out(buf.cast(), capacity, out_len, error, |buf| {
        let snapshot = try_ref(snapshot)?;
        copy_decoded(&string_of(entry_at(snapshot, field, index)?, field, sub_index)?, buf)
    })
}

/// Set the `cluster_epoch` of a parsed snapshot (what a checkpoint writes after bumping
/// its live epoch).
///
/// Returns `MBR_OK`, `MBR_INVALID_STATE` or `MBR_NULL_POINTER`.
///
/// # Safety
/// `snapshot` is NULL or points to an `mbr_snapshot` (its text alive and unchanged), not in use
/// by another call.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_snapshot_set_cluster_epoch(snapshot: *mut mbr_snapshot, cluster_epoch: u64) -> u32 {
    boundary(NO_DETAIL, || {
        let value = try_mut(snapshot)?;
        *value = value.with_cluster_epoch(cluster_epoch);
        Ok(())
    })
}

/// Whether the text the snapshot was parsed from is byte for byte its written form.
///
/// Returns `MBR_OK`, `MBR_INVALID_STATE` or `MBR_NULL_POINTER`.
///
/// # Safety
/// `snapshot` is NULL or points to an `mbr_snapshot` (its text alive and unchanged); `out` is NULL
/// or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_snapshot_is_canonical(snapshot: *const mbr_snapshot, out: *mut bool) -> u32 {
    read_into(snapshot, out, "out", |snapshot| Ok(snapshot.is_canonical()))
}

/// Write the snapshot in the SPEC §5 form (`schema_version` 5, keys sorted, `", "` /
/// `": "`, ASCII escaping, floats as Python `repr`; unknown keys are not written) into
/// `buf` (`capacity` bytes, no NUL); `*out_len` gets its length. `buf` must not
/// overlap the text the snapshot borrows.
///
/// Returns `MBR_OK`, `MBR_BUFFER_TOO_SMALL` (`needed` in `*error`; `(NULL, 0)` asks for
/// the length), `MBR_INVALID_STATE` or `MBR_NULL_POINTER`.
///
/// # Safety
/// `snapshot` is NULL or points to an `mbr_snapshot` (its text alive and unchanged); `buf` is NULL
/// or points to `capacity` writable bytes that do not overlap that text; `out_len` and
/// `error` are each NULL or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_snapshot_write(
    snapshot: *const mbr_snapshot,
    buf: *mut u8,
    capacity: usize,
    out_len: *mut usize,
    error: *mut mbr_error,
) -> u32 {
    write_out(buf, capacity, out_len, error, |buf| try_ref(snapshot)?.write_into(buf))
}

/// Start a cursor over one list or map of `snapshot` (`MBR_SNAPSHOT_MEMBERSHIP`,
/// `MBR_SNAPSHOT_PRIMARY_MAP` or `MBR_SNAPSHOT_REPLICA_MAP`), before its first entry:
/// call `mbr_snapshot_cursor_next` to move onto it. The cursor borrows the snapshot's
/// text, not `*snapshot`.
///
/// Returns `MBR_OK`, `MBR_INVALID_ARGUMENT` (unknown list), `MBR_INVALID_STATE` (the
/// snapshot) or `MBR_NULL_POINTER`. `*cursor` is initialised only on success.
///
/// # Safety
/// `snapshot` is NULL or points to an `mbr_snapshot` (its text alive and unchanged); `cursor` is
/// NULL or points to writable `mbr_snapshot_cursor` storage.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_snapshot_cursor_init(
    snapshot: *const mbr_snapshot,
    list: u32,
    cursor: *mut mbr_snapshot_cursor,
) -> u32 {
    boundary(NO_DETAIL, || {
        let cursor = Out::new(cursor, "cursor")?;
        let entries = Entries::of(try_ref(snapshot)?, list)?;
        store(cursor, Cursor { entries, current: None });
        Ok(())
    })
}

/// Move the cursor to the next entry (the first, after `mbr_snapshot_cursor_init`);
/// `*has_entry` says whether there is one. At the end it stays at the end.
///
/// Returns `MBR_OK`, `MBR_INVALID_STATE` (not initialised) or `MBR_NULL_POINTER`.
///
/// # Safety
/// `cursor` is NULL or points to an `mbr_snapshot_cursor` (its text alive) not in use
/// by another call; `has_entry` is NULL or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_snapshot_cursor_next(cursor: *mut mbr_snapshot_cursor, has_entry: *mut bool) -> u32 {
    boundary(NO_DETAIL, || {
        let has_entry = Out::new(has_entry, "has_entry")?;
        has_entry.write(try_mut(cursor)?.advance());
        Ok(())
    })
}

/// The non-string values of the member the cursor is on (a `MBR_SNAPSHOT_MEMBERSHIP`
/// cursor) into `*out`.
///
/// Returns `MBR_OK`, `MBR_INVALID_ARGUMENT` (a cursor over a map), `MBR_INVALID_STATE`
/// (not initialised, or not on an entry) or `MBR_NULL_POINTER`.
///
/// # Safety
/// `cursor` is NULL or points to an `mbr_snapshot_cursor` (its text alive); `out` is NULL
/// or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_snapshot_cursor_member(cursor: *const mbr_snapshot_cursor, out: *mut mbr_member) -> u32 {
    read_into(cursor, out, "out", |cursor| match cursor.entry()? {
        Entry::Member(member) => Ok(member_value(&member)),
        _ => Err(Error::invalid_argument("cursor", "not a cursor over MBR_SNAPSHOT_MEMBERSHIP")),
    })
}

/// The number of node ids of the replica entry the cursor is on (a
/// `MBR_SNAPSHOT_REPLICA_MAP` cursor) into `*out`.
///
/// Returns `MBR_OK`, `MBR_INVALID_ARGUMENT` (another list), `MBR_INVALID_STATE` (not
/// initialised, or not on an entry) or `MBR_NULL_POINTER`.
///
/// # Safety
/// `cursor` is NULL or points to an `mbr_snapshot_cursor` (its text alive); `out` is NULL
/// or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_snapshot_cursor_replica_len(cursor: *const mbr_snapshot_cursor, out: *mut usize) -> u32 {
    read_into(cursor, out, "out", |cursor| match cursor.entry()? {
        Entry::Replica(_, nodes) => Ok(nodes.len()),
        _ => Err(Error::invalid_argument("cursor", "not a cursor over MBR_SNAPSHOT_REPLICA_MAP")),
    })
}

/// Copy the decoded (unescaped) UTF-8 value of a string of the entry the cursor is on
/// and a NUL into `buf` (`capacity` bytes), as `mbr_snapshot_string` does for entry
/// `index`: `field` must belong to the cursor's list (`MBR_SNAPSHOT_MEMBER_*` for
/// membership, `..._PRIMARY_*`, `..._REPLICA_*`); `sub_index` picks the node of
/// `MBR_SNAPSHOT_REPLICA_NODE` and is ignored otherwise. `*out_len` gets the length
/// without the NUL.
///
/// Returns `MBR_OK`, `MBR_BUFFER_TOO_SMALL` (`needed` in `*error` includes the NUL),
/// `MBR_INVALID_ARGUMENT` (a field of another list, `sub_index` past the end),
/// `MBR_INVALID_STATE` (not initialised, or not on an entry) or `MBR_NULL_POINTER`.
///
/// # Safety
/// `cursor` is NULL or points to an `mbr_snapshot_cursor` (its text alive); `buf` is NULL
/// or points to `capacity` writable bytes; `out_len` and `error` are each NULL or writable.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_snapshot_cursor_string(
    cursor: *const mbr_snapshot_cursor,
    field: u32,
    sub_index: usize,
    buf: *mut c_char,
    capacity: usize,
    out_len: *mut usize,
    error: *mut mbr_error,
) -> u32 {
    write_out(buf.cast(), capacity, out_len, error, |buf| {
        copy_decoded(&string_of(try_ref(cursor)?.entry()?, field, sub_index)?, buf)
    })
}

/// A view of a string of the entry the cursor is on (`field` and `sub_index` as for
/// `mbr_snapshot_cursor_string`), in place in the snapshot's text: no copy, and
/// `mbr_text_decode` only when it has escapes. Reading a whole map this way costs the
/// walk alone.
///
/// Returns `MBR_OK`, `MBR_INVALID_ARGUMENT` (a field of another list, `sub_index` past
/// the end), `MBR_INVALID_STATE` (not initialised, or not on an entry) or
/// `MBR_NULL_POINTER`.
///
/// # Safety
/// `cursor` is NULL or points to an `mbr_snapshot_cursor` (its text alive); `out` is
/// NULL or writable.
#[cfg(feature = "views")]
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_snapshot_cursor_text(
    cursor: *const mbr_snapshot_cursor,
    field: u32,
    sub_index: usize,
    out: *mut crate::view::mbr_text,
) -> u32 {
    read_into(cursor, out, "out", |cursor| Ok(crate::view::mbr_text::of(string_of(cursor.entry()?, field, sub_index)?)))
}

/// Read the next entries of a `MBR_SNAPSHOT_PRIMARY_MAP` cursor in one call: up to
/// `capacity` of them, the key of the `i`-th into `keys[i]` and its node id into
/// `nodes[i]`, as views in place in the snapshot's text (what
/// `mbr_snapshot_cursor_text` gives for each). `*out_count` gets their number; 0 means
/// the map has ended. The cursor is left on the last entry read, as
/// `mbr_snapshot_cursor_next` would leave it, so the next call reads on from there and
/// the other cursor accessors read that entry. One call per `capacity` entries instead
/// of three per entry: for walking a map of many entries.
///
/// Returns `MBR_OK`, `MBR_INVALID_ARGUMENT` (another list, `capacity` 0),
/// `MBR_INVALID_STATE` (not initialised) or `MBR_NULL_POINTER`.
///
/// # Safety
/// `cursor` is NULL or points to an `mbr_snapshot_cursor` (its text alive) not in use
/// by another call; `keys` and `nodes` are each NULL or point to `capacity` writable
/// `mbr_text`s; `out_count` is NULL or writable.
#[cfg(feature = "views")]
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_snapshot_cursor_read_primary(
    cursor: *mut mbr_snapshot_cursor,
    keys: *mut crate::view::mbr_text,
    nodes: *mut crate::view::mbr_text,
    capacity: usize,
    out_count: *mut usize,
) -> u32 {
    use crate::view::mbr_text;
    boundary(NO_DETAIL, || {
        let out_count = Out::new(out_count, "out_count")?;
        let cursor = try_mut(cursor)?;
        let Entries::Primary(entries) = &mut cursor.entries else {
            return Err(Error::invalid_argument("cursor", "not a cursor over MBR_SNAPSHOT_PRIMARY_MAP"));
        };
        let key_slots = crate::slice::output(keys.cast::<MaybeUninit<mbr_text>>(), capacity, "keys")?;
        let node_slots = crate::slice::output(nodes.cast::<MaybeUninit<mbr_text>>(), capacity, "nodes")?;
        if capacity == 0 {
            return Err(no_room());
        }
        let mut count = 0;
        let mut slots = key_slots.iter_mut().zip(node_slots);
        let last = entries.read_raw(capacity, |key, node| {
            if let Some((key_slot, node_slot)) = slots.next() {
                key_slot.write(mbr_text::of_raw(key));
                node_slot.write(mbr_text::of_raw(node));
            }
            count += 1;
        });
        cursor.current = last.map(|(key, node)| Entry::Primary(key, node));
        out_count.write(count);
        Ok(())
    })
}

/// Read the next entries of a `MBR_SNAPSHOT_REPLICA_MAP` cursor in one call, each
/// node list read once: up to `capacity` entries, the key of the `i`-th into `keys[i]`
/// and its node ids into `nodes`, in order, where entry `i`'s are
/// `nodes[node_ends[i - 1] .. node_ends[i]]` (from 0 for the first; a list may be
/// empty). All are views in place in the snapshot's text. Reading stops before an
/// entry whose node ids do not fit in what is left of `nodes` (`node_capacity` in
/// all). `*out_count` gets the number of entries read; 0 means the map has ended. The
/// cursor is left on the last entry read, as `mbr_snapshot_cursor_next` would leave
/// it. Slots of `nodes` past the last `node_ends` are unspecified.
///
/// Returns `MBR_OK`, `MBR_BUFFER_TOO_SMALL` (the next entry alone has more node ids
/// than `node_capacity`: `needed` in `*error` is their number, the cursor has not
/// moved), `MBR_INVALID_ARGUMENT` (another list, `capacity` 0), `MBR_INVALID_STATE`
/// (not initialised) or `MBR_NULL_POINTER`.
///
/// # Safety
/// `cursor` is NULL or points to an `mbr_snapshot_cursor` (its text alive) not in use
/// by another call; `keys` and `node_ends` are each NULL or point to `capacity`
/// writable values; `nodes` is NULL or points to `node_capacity` writable `mbr_text`s;
/// `out_count` and `error` are each NULL or writable.
#[cfg(feature = "views")]
#[no_mangle]
#[must_use]
#[allow(clippy::too_many_arguments)] // three caller arrays and their sizes
pub unsafe extern "C" fn mbr_snapshot_cursor_read_replica(
    cursor: *mut mbr_snapshot_cursor,
    keys: *mut crate::view::mbr_text,
    node_ends: *mut usize,
    capacity: usize,
    nodes: *mut crate::view::mbr_text,
    node_capacity: usize,
    out_count: *mut usize,
    error: *mut mbr_error,
) -> u32 {
    use crate::view::mbr_text;
    boundary(error, || {
        let out_count = Out::new(out_count, "out_count")?;
        let cursor = try_mut(cursor)?;
        let Entries::Replica(entries) = &mut cursor.entries else {
            return Err(Error::invalid_argument("cursor", "not a cursor over MBR_SNAPSHOT_REPLICA_MAP"));
        };
        let key_slots = crate::slice::output(keys.cast::<MaybeUninit<mbr_text>>(), capacity, "keys")?;
        let end_slots = crate::slice::output(node_ends.cast::<MaybeUninit<usize>>(), capacity, "node_ends")?;
        let node_slots = crate::slice::output(nodes.cast::<MaybeUninit<mbr_text>>(), node_capacity, "nodes")?;
        if capacity == 0 {
            return Err(no_room());
        }
        let mut count = 0;
        let each_node = |place: usize, node| {
            // Places past the room are those of an entry that does not fit.
            if let Some(slot) = node_slots.get_mut(place) {
                slot.write(mbr_text::of_raw(node));
            }
        };
        let each_entry = |place: usize, key, end| {
            if let (Some(key_slot), Some(end_slot)) = (key_slots.get_mut(place), end_slots.get_mut(place)) {
                key_slot.write(mbr_text::of_raw(key));
                end_slot.write(end);
            }
            count = place + 1;
        };
        let last = entries
            .read_raw(capacity, node_capacity, each_node, each_entry)
            .map_err(|needed| Error::buffer_too_small(needed as u64).in_field("nodes"))?;
        cursor.current = last.map(|(key, nodes)| Entry::Replica(key, nodes));
        out_count.write(count);
        Ok(())
    })
}

/// A batch read with no room for an entry.
#[cfg(feature = "views")]
fn no_room() -> Error {
    Error::invalid_argument("capacity", "capacity is 0: no room for an entry")
}

/// Views of every node id of the replica entry the cursor is on (a
/// `MBR_SNAPSHOT_REPLICA_MAP` cursor), in order, into `nodes` (room for `capacity`);
/// `*out_len` gets their number. One walk of the list, where
/// `mbr_snapshot_cursor_text` with `MBR_SNAPSHOT_REPLICA_NODE` walks to each node.
///
/// Returns `MBR_OK`, `MBR_BUFFER_TOO_SMALL` (`needed` in `*error` is the number of
/// nodes; `nodes` untouched), `MBR_INVALID_ARGUMENT` (another list),
/// `MBR_INVALID_STATE` (not initialised, or not on an entry) or `MBR_NULL_POINTER`.
///
/// # Safety
/// `cursor` is NULL or points to an `mbr_snapshot_cursor` (its text alive); `nodes` is
/// NULL or points to `capacity` writable `mbr_text`s; `out_len` and `error` are each
/// NULL or writable.
#[cfg(feature = "views")]
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mbr_snapshot_cursor_replica_texts(
    cursor: *const mbr_snapshot_cursor,
    nodes: *mut crate::view::mbr_text,
    capacity: usize,
    out_len: *mut usize,
    error: *mut mbr_error,
) -> u32 {
    boundary(error, || {
        let out_len = Out::new(out_len, "out_len")?;
        let Entry::Replica(_, list) = try_ref(cursor)?.entry()? else {
            return Err(Error::invalid_argument("cursor", "not a cursor over MBR_SNAPSHOT_REPLICA_MAP"));
        };
        // Written as views only once they all fit, so a short array is left as it was.
        let slots = crate::slice::output(nodes.cast::<MaybeUninit<crate::view::mbr_text>>(), capacity, "nodes")?;
        let count = list.len();
        let slots = slots.get_mut(..count).ok_or(Error::buffer_too_small(count as u64).in_field("nodes"))?;
        for (slot, node) in slots.iter_mut().zip(list.iter()) {
            slot.write(crate::view::mbr_text::of(node));
        }
        out_len.write(count);
        Ok(())
    })
}
