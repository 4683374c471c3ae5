//! Tombstones and ref counts (SPEC §6) for Python: `TombstoneTable` (with the gossip
//! map's merge and emission) and `RefCount`, over the core's fixed-capacity tables.
//!
//! The core never allocates, so its tables live in storage they are given and report
//! `table_full` rather than evict. Here a table owns its storage, and a full table is
//! rebuilt with twice the slots and merged across (the core's own merge), so a Python
//! caller sees a table that grows. Up to 128 distinct node ids at once (the core's node
//! sets are bit sets of 128). Both are safe to share between threads (a lock each).

use crate::errors::OrRaise;
use membrane::refcount::{RefCounts, RefSlot};
use membrane::table::{NodeSlot, MAX_NODES};
use membrane::tombstone::{TombstoneSlot, TombstoneTable};
use membrane::{Error, ErrorCode};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyFrozenSet, PySet};
use std::ptr::NonNull;
use std::sync::{Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

/// Slots a new table starts with.
const FIRST_CAPACITY: usize = 64;

/// Storage handed to a core table for as long as the table lives: a boxed slice given
/// out as `&'static mut` and taken back when this is dropped. The owner declares the
/// table before its storage, so the table (which has no drop code) goes first.
struct Storage<T: 'static>(NonNull<[T]>);

impl<T: Clone> Storage<T> {
    fn new(len: usize, empty: T) -> (Storage<T>, &'static mut [T]) {
        let raw: *mut [T] = Box::into_raw(vec![empty; len].into_boxed_slice());
        // SAFETY: `raw` comes from Box::into_raw, so it is non-null, aligned and
        // initialised; the only reference made from it is the one returned, which the
        // owner's table holds until it is dropped before this storage (see above).
        let slots = unsafe { &mut *raw };
        (Storage(NonNull::from(&mut *slots)), slots)
    }
}

impl<T> Drop for Storage<T> {
    fn drop(&mut self) {
        // SAFETY: the pointer came from Box::into_raw in `new` and is freed once, here;
        // the table that borrowed it has been dropped (field order of the owner).
        unsafe { drop(Box::from_raw(self.0.as_ptr())) }
    }
}

// SAFETY: a Storage is the only owner of its boxed slice (the table borrowing it lives
// beside it, behind the same lock), so moving it to another thread moves the slice.
unsafe impl<T: Send> Send for Storage<T> {}

fn now() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0.0, |elapsed| elapsed.as_secs_f64())
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic cannot leave a table half-changed (the core's calls are all-or-nothing),
    // so a poisoned lock's table is still sound.
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn is_full(result: &Result<impl Sized, Error>) -> bool {
    matches!(result, Err(err) if err.code() == ErrorCode::TableFull)
}

/// A core tombstone table with its storage.
struct OwnedTombstones {
    table: TombstoneTable<'static>,
    _slots: Storage<TombstoneSlot>,
    _nodes: Storage<NodeSlot>,
}

impl OwnedTombstones {
    fn with_capacity(capacity: usize) -> OwnedTombstones {
        let (slots_storage, slots) = Storage::new(capacity, TombstoneSlot::EMPTY);
        let (nodes_storage, nodes) = Storage::new(MAX_NODES, NodeSlot::EMPTY);
        OwnedTombstones { table: TombstoneTable::new(slots, nodes), _slots: slots_storage, _nodes: nodes_storage }
    }

    /// Run `change` on the table; while it fails as full for want of slots (as
    /// `out_of_slots` tells), grow the table and run it again. A change that fails is
    /// unapplied (the core's calls are all or nothing), and merging twice is merging.
    fn grow_while_full<T>(
        &mut self,
        mut change: impl FnMut(&mut TombstoneTable<'static>) -> Result<T, Error>,
        out_of_slots: impl Fn(&TombstoneTable<'static>) -> bool,
    ) -> Result<T, Error> {
        loop {
            let result = change(&mut self.table);
            if !is_full(&result) || !out_of_slots(&self.table) {
                return result;
            }
            let mut bigger = OwnedTombstones::with_capacity(self.table.capacity() * 2);
            bigger.table.merge_from(&self.table)?;
            *self = bigger;
        }
    }
}

/// Tombstones (SPEC §6): per content hash, a deadline (`until`, Unix seconds) and the
/// node ids that announced the delete. Active while `now < until`.
#[pyclass(frozen, module = "membrane_frame", name = "TombstoneTable")]
pub struct Tombstones {
    inner: Mutex<OwnedTombstones>,
}

/// `now`, or the clock when it is None.
fn at(now: Option<f64>) -> f64 {
    now.unwrap_or_else(self::now)
}

#[pymethods]
impl Tombstones {
    #[new]
    fn new() -> Tombstones {
        Tombstones { inner: Mutex::new(OwnedTombstones::with_capacity(FIRST_CAPACITY)) }
    }

    /// Record a tombstone, or refresh one: the later `until` and the union of the
    /// nodes are kept. `SchemaError` (`tombstone_field`) for a hash or node id that is
    /// not 1-128 characters or an `until` that is not finite.
    #[pyo3(signature = (content_hash, until, nodes = Vec::new()))]
    fn record(&self, py: Python<'_>, content_hash: &str, until: f64, nodes: Vec<String>) -> PyResult<()> {
        let nodes: Vec<&str> = nodes.iter().map(String::as_str).collect();
        // A new hash in a table with no free slot; else the node ids ran out (128 at
        // once), which more slots would not cure.
        let out_of_slots =
            |table: &TombstoneTable<'_>| table.get(content_hash).is_none() && table.len() >= table.capacity();
        lock(&self.inner)
            .grow_while_full(|table| table.record_nodes(content_hash, until, &nodes), out_of_slots)
            .or_raise(py)
    }

    /// `(until, frozenset(nodes))` of the tombstone of `content_hash`, expired or not;
    /// None when there is none.
    fn get<'py>(&self, py: Python<'py>, content_hash: &str) -> PyResult<Option<(f64, Bound<'py, PyFrozenSet>)>> {
        let inner = lock(&self.inner);
        let Some(tombstone) = inner.table.get(content_hash) else { return Ok(None) };
        let nodes: Vec<&str> = tombstone.nodes().collect();
        Ok(Some((tombstone.until(), PyFrozenSet::new(py, &nodes)?)))
    }

    /// Whether `content_hash` has a tombstone active at `now` (default: the clock).
    #[pyo3(signature = (content_hash, now = None))]
    fn is_active(&self, content_hash: &str, now: Option<f64>) -> bool {
        lock(&self.inner).table.is_active(content_hash, at(now))
    }

    /// Remove every tombstone expired at `now` (default: the clock); their hashes.
    #[pyo3(signature = (now = None))]
    fn sweep(&self, now: Option<f64>) -> Vec<String> {
        let mut removed = Vec::new();
        lock(&self.inner).table.sweep(at(now), |hash| removed.push(hash.to_owned()));
        removed
    }

    /// Remove the tombstone of `content_hash`; whether there was one.
    fn remove(&self, content_hash: &str) -> bool {
        lock(&self.inner).table.remove(content_hash)
    }

    /// Remove every tombstone.
    fn clear(&self) {
        lock(&self.inner).table.clear();
    }

    /// Every tombstone as `(content_hash, until, frozenset(nodes))`.
    fn items<'py>(&self, py: Python<'py>) -> PyResult<Vec<(String, f64, Bound<'py, PyFrozenSet>)>> {
        let inner = lock(&self.inner);
        inner
            .table
            .iter()
            .map(|tombstone| {
                let nodes: Vec<&str> = tombstone.nodes().collect();
                Ok((tombstone.content_hash().to_owned(), tombstone.until(), PyFrozenSet::new(py, &nodes)?))
            })
            .collect()
    }

    /// Merge a peer's gossip map (`{"<hash>": <until>, ...}`) at `now`: per hash the
    /// later deadline, unknown hashes adopted, expired entries ignored. Returns how many
    /// entries changed the table. `SchemaError` (`tombstone_json`, `tombstone_field`).
    #[pyo3(signature = (text, now = None))]
    fn merge_gossip(&self, py: Python<'_>, text: &[u8], now: Option<f64>) -> PyResult<usize> {
        let now = at(now);
        // A gossip map names no node ids: a full table is out of slots. Maps are
        // bounded (131072 entries), and so is the growth.
        lock(&self.inner).grow_while_full(|table| table.merge_gossip(text, now), |_| true).or_raise(py)
    }

    /// The gossip map of the tombstones active at `now` (SPEC §6 form).
    #[pyo3(signature = (now = None))]
    fn gossip<'py>(&self, py: Python<'py>, now: Option<f64>) -> PyResult<Bound<'py, PyBytes>> {
        let now = at(now);
        let mut inner = lock(&self.inner);
        let mut out = vec![0u8; inner.table.gossip_len(now)];
        let len = inner.table.write_gossip_into(now, &mut out).or_raise(py)?;
        Ok(PyBytes::new(py, out.get(..len).unwrap_or(&[])))
    }

    fn __len__(&self) -> usize {
        lock(&self.inner).table.len()
    }

    fn __repr__(&self) -> String {
        format!("TombstoneTable(len={})", self.__len__())
    }
}

/// A core ref-count table with its storage.
struct OwnedRefs {
    table: RefCounts<'static>,
    _slots: Storage<RefSlot>,
    _nodes: Storage<NodeSlot>,
}

impl OwnedRefs {
    fn with_capacity(capacity: usize) -> OwnedRefs {
        let (slots_storage, slots) = Storage::new(capacity, RefSlot::EMPTY);
        let (nodes_storage, nodes) = Storage::new(MAX_NODES, NodeSlot::EMPTY);
        OwnedRefs { table: RefCounts::new(slots, nodes), _slots: slots_storage, _nodes: nodes_storage }
    }

    /// A table with twice the slots and the same holders.
    fn grown(&self) -> Result<OwnedRefs, Error> {
        let mut bigger = OwnedRefs::with_capacity(self.table.capacity() * 2);
        for hash in self.table.hashes() {
            for node in self.table.holders(hash) {
                bigger.table.acquire(hash, node)?;
            }
        }
        Ok(bigger)
    }
}

/// Reference counts (SPEC §6): per content hash, the set of node ids holding it.
/// Nothing in it is ever serialised.
#[pyclass(frozen, module = "membrane_frame", name = "RefCount")]
pub struct Refs {
    inner: Mutex<OwnedRefs>,
}

#[pymethods]
impl Refs {
    #[new]
    fn new() -> Refs {
        Refs { inner: Mutex::new(OwnedRefs::with_capacity(FIRST_CAPACITY)) }
    }

    /// Record that `node_id` holds `content_hash`. `UsageError` for a hash or node id
    /// that is not 1-128 characters, or a 129th distinct node id.
    fn acquire(&self, py: Python<'_>, content_hash: &str, node_id: &str) -> PyResult<()> {
        let mut inner = lock(&self.inner);
        loop {
            let result = inner.table.acquire(content_hash, node_id);
            // Out of slots: a new hash and no free slot; else the node ids ran out (128
            // at once), which more slots would not cure.
            let out_of_slots =
                inner.table.holder_count(content_hash) == 0 && inner.table.len() >= inner.table.capacity();
            if !is_full(&result) || !out_of_slots {
                return result.or_raise(py);
            }
            let bigger = inner.grown().or_raise(py)?;
            *inner = bigger;
        }
    }

    /// Release `node_id`'s hold on `content_hash`: True when the hash is unknown or its
    /// last holder is gone (the entry is then removed).
    fn release(&self, content_hash: &str, node_id: &str) -> bool {
        lock(&self.inner).table.release(content_hash, node_id)
    }

    /// A new set of the holders of `content_hash`.
    fn holders<'py>(&self, py: Python<'py>, content_hash: &str) -> PyResult<Bound<'py, PySet>> {
        let inner = lock(&self.inner);
        let holders: Vec<&str> = inner.table.holders(content_hash).collect();
        PySet::new(py, &holders)
    }

    /// Whether `content_hash` has a holder.
    fn is_active(&self, content_hash: &str) -> bool {
        lock(&self.inner).table.holder_count(content_hash) > 0
    }

    /// Drop every holder of `content_hash`; whether it had any.
    fn forget(&self, content_hash: &str) -> bool {
        lock(&self.inner).table.forget(content_hash)
    }

    /// The hashes held.
    fn hashes(&self) -> Vec<String> {
        lock(&self.inner).table.hashes().map(str::to_owned).collect()
    }

    fn __len__(&self) -> usize {
        lock(&self.inner).table.len()
    }

    fn __repr__(&self) -> String {
        format!("RefCount(len={})", self.__len__())
    }
}
