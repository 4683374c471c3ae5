//! Tombstones (SPEC §6): a fixed-capacity table with the merge rule, the gossip map
//! and the `op_tombstone` / `op_delete` bodies.
//!
//! A tombstone `(content_hash, until, nodes)` says a fragment was deleted and must not
//! be stored again before `until` (absolute Unix seconds): it is *active* while
//! `now < until`. Recording a hash that already has a tombstone keeps the larger
//! `until` and the union of the node sets; merging a peer's tombstones is the same rule
//! per hash, so merges are commutative, associative and idempotent.
//!
//! [`TombstoneTable`] holds them in caller storage (see [`crate::table`]); a full table
//! is `table_full`, never a silent drop. [`GossipMap`] reads the gossip map
//! `{"<hash>": <until>, ...}`; [`TombstoneTable::write_gossip`] writes it (active
//! entries only, keys sorted, `until` as Python `repr(float)`). [`OpTombstone`] and
//! [`OpDelete`] read and write the operation bodies.
//!
//! ```
//! use membrane_frame::table::NodeSlot;
//! use membrane_frame::tombstone::{TombstoneSlot, TombstoneTable};
//! let (mut slots, mut nodes) = ([TombstoneSlot::EMPTY; 16], [NodeSlot::EMPTY; 4]);
//! let mut table = TombstoneTable::new(&mut slots, &mut nodes);
//! table.record("h1", 10.0, Some("node-a"))?;
//! table.merge_gossip(br#"{"h1": 20.5, "h2": 5}"#, 0.0)?;
//! assert!(table.is_active("h1", 20.0) && !table.is_active("h1", 20.5)); // expired at now == until
//! let mut out = [0u8; 64];
//! let len = table.write_gossip_into(1.0, &mut out)?;
//! assert_eq!(&out[..len], br#"{"h1": 20.5, "h2": 5.0}"#);
//! let mut swept = 0;
//! table.sweep(6.0, |_hash| swept += 1);
//! assert_eq!((swept, table.len()), (1, 1));
//! # Ok::<(), membrane_frame::Error>(())
//! ```

mod gossip;
mod ops;

pub use gossip::{merge_gossip_maps, merge_gossip_maps_into, GossipEntries, GossipMap};
pub use ops::{OpDelete, OpTombstone};

use crate::error::{Error, ErrorCode};
use crate::table::{address_seed, is_valid_id, Full, Id, Map, NodeSet, NodeSlot, Nodes, Slot};
use core::cmp::Ordering;
use core::fmt;

/// Most entries a gossip map may hold (SPEC §6); more is `tombstone_field`.
pub const MAX_GOSSIP_ENTRIES: usize = 131_072;

/// Seconds a delete keeps its tombstone when the request names no deadline (SPEC §6).
pub const DEFAULT_TOMBSTONE_TTL: f64 = 60.0;

/// The value part of a tombstone slot (storage only; see [`TombstoneSlot`]).
#[derive(Clone, Debug)]
pub struct TombstoneValue {
    until: f64,
    nodes: NodeSet,
    /// Generation of the gossip merge that last saw this hash (duplicate detection).
    mark: u32,
    /// A placeholder a gossip merge inserted to detect duplicates; never outlives it.
    staged: bool,
}

/// Storage for one tombstone: `[TombstoneSlot::EMPTY; N]`, or
/// `vec![TombstoneSlot::EMPTY; n]` with `std`.
pub type TombstoneSlot = Slot<TombstoneValue>;

impl Slot<TombstoneValue> {
    /// An unused slot, to initialise storage with.
    pub const EMPTY: TombstoneSlot = Slot::empty(TombstoneValue { until: 0.0, nodes: 0, mark: 0, staged: false });
}

/// The larger of two deadlines in IEEE total order, so that `-0.0` and `0.0` merge the
/// same way whatever the order (they are equal as numbers but written differently).
pub(crate) fn later(a: f64, b: f64) -> f64 {
    if b.total_cmp(&a) == Ordering::Greater {
        b
    } else {
        a
    }
}

pub(crate) fn field_error(field: &'static str, reason: &'static str) -> Error {
    Error::new(ErrorCode::TombstoneField, reason).in_field(field)
}

fn full(reason: &'static str) -> Error {
    Error::new(ErrorCode::TableFull, reason)
}

fn check_until(until: f64) -> Result<(), Error> {
    if until.is_finite() {
        Ok(())
    } else {
        Err(field_error("until", "until must be a finite number"))
    }
}

/// Tombstones in caller storage (see [`crate::table`] for the storage model).
///
/// Capacity is `slots.len()` hashes and `min(nodes.len(), 128)` distinct node ids at
/// once. Every operation that needs room it does not have fails with `table_full`
/// and leaves the table as it was.
///
/// ```
/// use membrane_frame::table::NodeSlot;
/// use membrane_frame::tombstone::{TombstoneSlot, TombstoneTable};
/// use membrane_frame::ErrorCode;
/// let (mut slots, mut nodes) = ([TombstoneSlot::EMPTY; 1], [NodeSlot::EMPTY; 2]);
/// let mut table = TombstoneTable::new(&mut slots, &mut nodes);
/// table.record("h1", 10.0, Some("a"))?;
/// table.record("h1", 5.0, Some("b"))?; // keeps 10.0, nodes {a, b}
/// let tombstone = table.get("h1").unwrap();
/// assert_eq!(tombstone.until(), 10.0);
/// assert_eq!(tombstone.nodes().collect::<Vec<_>>(), ["a", "b"]);
/// let err = table.record("h2", 10.0, None).unwrap_err();
/// assert_eq!(err.code(), ErrorCode::TableFull);
/// # Ok::<(), membrane_frame::Error>(())
/// ```
pub struct TombstoneTable<'s> {
    map: Map<'s, TombstoneValue>,
    nodes: Nodes<'s>,
    generation: u32,
}

impl<'s> TombstoneTable<'s> {
    /// An empty table over `slots` (one per hash) and `nodes` (one per distinct node
    /// id, at most 128 used). The index is seeded from the storage address; use
    /// [`with_seed`](Self::with_seed) to give a random seed.
    pub fn new(slots: &'s mut [TombstoneSlot], nodes: &'s mut [NodeSlot]) -> TombstoneTable<'s> {
        let seed = address_seed(slots);
        TombstoneTable::with_seed(slots, nodes, seed)
    }

    /// An empty table whose index hashes with `seed` (pick it at random where peers
    /// could be hostile, so they cannot aim many hashes at one bucket).
    pub fn with_seed(slots: &'s mut [TombstoneSlot], nodes: &'s mut [NodeSlot], seed: u64) -> TombstoneTable<'s> {
        TombstoneTable { map: Map::new(slots, seed), nodes: Nodes::new(nodes), generation: 0 }
    }

    /// How many hashes the table can hold.
    pub fn capacity(&self) -> usize {
        self.map.capacity()
    }

    /// How many distinct node ids the table can reference at once (at most 128).
    pub fn node_capacity(&self) -> usize {
        self.nodes.capacity()
    }

    /// Number of tombstones held (active or not yet swept).
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether the table holds no tombstone.
    pub fn is_empty(&self) -> bool {
        self.map.len() == 0
    }

    /// Forget every tombstone and node id.
    pub fn clear(&mut self) {
        self.map.clear();
        self.nodes.clear();
    }

    /// The tombstone of `content_hash`, active or not.
    pub fn get(&self, content_hash: &str) -> Option<Tombstone<'_>> {
        let pos = self.map.find(content_hash)?;
        self.view(pos)
    }

    fn view(&self, pos: usize) -> Option<Tombstone<'_>> {
        let entry = self.map.entry(pos)?;
        Some(Tombstone {
            content_hash: entry.key.as_str(),
            until: entry.value.until,
            nodes: entry.value.nodes,
            names: &self.nodes,
        })
    }

    /// Whether `content_hash` has an active tombstone (`now < until`): a store request
    /// for it must be refused (SPEC §6).
    pub fn is_active(&self, content_hash: &str, now: f64) -> bool {
        self.get(content_hash).is_some_and(|t| t.is_active(now))
    }

    /// Every tombstone, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = Tombstone<'_>> + '_ {
        (0..self.map.len()).filter_map(move |pos| self.view(pos))
    }

    fn nodes_in_use(map: &Map<'_, TombstoneValue>) -> NodeSet {
        map.entries().fold(0, |set, entry| set | entry.value.nodes)
    }

    /// Record a tombstone: a new hash is added; an existing one keeps the larger
    /// `until` and gains `node` (if given).
    ///
    /// `tombstone_field` for a hash or node id that is not 1–128 characters or an
    /// `until` that is not finite; `table_full` when a new hash or node id finds no
    /// room (the table is then unchanged).
    pub fn record(&mut self, content_hash: &str, until: f64, node: Option<&str>) -> Result<(), Error> {
        self.record_nodes(content_hash, until, node.as_slice())
    }

    /// [`record`](Self::record) with any number of node ids.
    pub fn record_nodes(&mut self, content_hash: &str, until: f64, nodes: &[&str]) -> Result<(), Error> {
        let key =
            Id::new(content_hash).ok_or(field_error("content_hash", "content_hash must have 1-128 characters"))?;
        check_until(until)?;
        if !nodes.iter().all(|node| is_valid_id(node)) {
            return Err(field_error("node_id", "node_id must have 1-128 characters"));
        }
        let existing = self.map.find(content_hash);
        if existing.is_none() && self.map.len() >= self.map.capacity() {
            return Err(full("tombstone table is full"));
        }
        let set = self.intern_all(nodes)?;
        match existing.and_then(|pos| self.map.entry_mut(pos)) {
            Some(entry) => {
                entry.value.until = later(entry.value.until, until);
                entry.value.nodes |= set;
            }
            None => {
                let value = TombstoneValue { until, nodes: set, mark: 0, staged: false };
                self.map.insert_new(key, value).map_err(|Full| full("tombstone table is full"))?;
            }
        }
        Ok(())
    }

    /// The set of `ids`, interning them all or none.
    fn intern_all(&mut self, ids: &[&str]) -> Result<NodeSet, Error> {
        let unknown = ids
            .iter()
            .enumerate()
            .filter(|&(i, id)| self.nodes.find(id).is_none() && !ids.iter().take(i).any(|earlier| earlier == id))
            .count();
        if unknown > self.nodes.free() {
            self.nodes.reclaim(Self::nodes_in_use(&self.map));
            if unknown > self.nodes.free() {
                return Err(full("node id list is full"));
            }
        }
        let mut set = 0;
        for id in ids {
            let map = &self.map;
            set |= self.nodes.intern(id, || Self::nodes_in_use(map)).map_err(|Full| full("node id list is full"))?;
        }
        Ok(set)
    }

    /// Merge another table into this one (SPEC §6: per hash the larger `until` and the
    /// union of the nodes; unknown hashes are adopted). All or nothing: `table_full`
    /// when the new hashes or node ids do not fit.
    pub fn merge_from(&mut self, other: &TombstoneTable<'_>) -> Result<(), Error> {
        let new_hashes = other.map.entries().filter(|e| self.map.find(e.key.as_str()).is_none()).count();
        if new_hashes > self.map.capacity().saturating_sub(self.map.len()) {
            return Err(full("tombstone table is full"));
        }
        // Node ids the other table uses, translated into ours up front.
        let used = Self::nodes_in_use(&other.map);
        let mut names: heapless::Vec<&str, { crate::table::MAX_NODES }> = heapless::Vec::new();
        for name in other.nodes.names(used) {
            let _ = names.push(name);
        }
        self.intern_all(&names)?;
        for entry in other.map.entries() {
            let mut set = 0;
            for name in other.nodes.names(entry.value.nodes) {
                set |= self.nodes.find(name).unwrap_or(0);
            }
            let until = entry.value.until;
            match self.map.find(entry.key.as_str()).and_then(|pos| self.map.entry_mut(pos)) {
                Some(mine) => {
                    mine.value.until = later(mine.value.until, until);
                    mine.value.nodes |= set;
                }
                None => {
                    let value = TombstoneValue { until, nodes: set, mark: 0, staged: false };
                    self.map.insert_new(entry.key.clone(), value).map_err(|Full| full("tombstone table is full"))?;
                }
            }
        }
        Ok(())
    }

    /// Remove every tombstone with `now >= until`, handing each removed hash to
    /// `removed`; returns how many were removed.
    ///
    /// ```
    /// # use membrane_frame::table::NodeSlot;
    /// # use membrane_frame::tombstone::{TombstoneSlot, TombstoneTable};
    /// # let (mut slots, mut nodes) = ([TombstoneSlot::EMPTY; 4], [NodeSlot::EMPTY; 1]);
    /// # let mut table = TombstoneTable::new(&mut slots, &mut nodes);
    /// table.record("old", 10.0, None)?;
    /// table.record("new", 11.0, None)?;
    /// let mut gone = heapless::Vec::<heapless::String<128>, 4>::new();
    /// table.sweep(10.0, |hash| { let _ = gone.push(hash.try_into().unwrap()); });
    /// assert_eq!(gone.as_slice(), ["old"]);
    /// # Ok::<(), membrane_frame::Error>(())
    /// ```
    pub fn sweep(&mut self, now: f64, mut removed: impl FnMut(&str)) -> usize {
        self.map.retain(|entry| now < entry.value.until, |entry| removed(entry.key.as_str()))
    }

    /// Remove the tombstone of `content_hash`; whether there was one.
    pub fn remove(&mut self, content_hash: &str) -> bool {
        match self.map.find(content_hash) {
            Some(pos) => {
                self.map.swap_remove(pos);
                true
            }
            None => false,
        }
    }

    /// Apply an `op_tombstone` body: record its hash, deadline and node.
    pub fn apply_op_tombstone(&mut self, op: &OpTombstone<'_>) -> Result<(), Error> {
        let hash = Id::from_json(&op.content_hash())
            .ok_or(field_error("content_hash", "content_hash must have 1-128 characters"))?;
        let node = Id::from_json(&op.node_id()).ok_or(field_error("node_id", "node_id must have 1-128 characters"))?;
        self.record(hash.as_str(), op.until(), Some(node.as_str()))
    }

    /// Apply an `op_delete` body received at `now`: record the tombstone (deadline
    /// `tombstone_until`, or `now + 60 s` when it is null) — the caller removes the
    /// fragment only after this succeeded. Returns the deadline recorded.
    pub fn apply_op_delete(&mut self, op: &OpDelete<'_>, now: f64) -> Result<f64, Error> {
        let until = op.tombstone_until().unwrap_or(now + DEFAULT_TOMBSTONE_TTL);
        let hash = Id::from_json(&op.content_hash())
            .ok_or(field_error("content_hash", "content_hash must have 1-128 characters"))?;
        let node = Id::from_json(&op.node_id()).ok_or(field_error("node_id", "node_id must have 1-128 characters"))?;
        self.record(hash.as_str(), until, Some(node.as_str()))?;
        Ok(until)
    }

    /// Put the entries in key order (the gossip writer does this itself).
    pub(crate) fn sort(&mut self) {
        self.map.sort();
    }

    pub(crate) fn map(&self) -> &Map<'s, TombstoneValue> {
        &self.map
    }

    pub(crate) fn map_mut(&mut self) -> &mut Map<'s, TombstoneValue> {
        &mut self.map
    }

    /// A fresh generation for a gossip merge's duplicate detection.
    pub(crate) fn next_generation(&mut self) -> u32 {
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            for entry in self.map.entries_mut() {
                entry.value.mark = 0;
            }
            self.generation = 1;
        }
        self.generation
    }
}

impl fmt::Debug for TombstoneTable<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// One tombstone of a [`TombstoneTable`].
#[derive(Clone, Copy)]
pub struct Tombstone<'t> {
    content_hash: &'t str,
    until: f64,
    nodes: NodeSet,
    names: &'t Nodes<'t>,
}

impl<'t> Tombstone<'t> {
    /// The content hash.
    pub fn content_hash(&self) -> &'t str {
        self.content_hash
    }

    /// The deadline, absolute Unix seconds.
    pub fn until(&self) -> f64 {
        self.until
    }

    /// Whether the tombstone is active at `now` (`now < until`; at `now == until` it has
    /// expired).
    pub fn is_active(&self, now: f64) -> bool {
        now < self.until
    }

    /// The node ids of the tombstone's node set.
    pub fn nodes(&self) -> impl Iterator<Item = &'t str> + 't {
        self.names.names(self.nodes)
    }
}

impl fmt::Debug for Tombstone<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut nodes = heapless::Vec::<&str, { crate::table::MAX_NODES }>::new();
        for node in self.nodes() {
            let _ = nodes.push(node);
        }
        f.debug_struct("Tombstone")
            .field("content_hash", &self.content_hash)
            .field("until", &self.until)
            .field("nodes", &nodes)
            .finish()
    }
}

impl TombstoneValue {
    pub(crate) fn new_staged(mark: u32) -> TombstoneValue {
        TombstoneValue { until: f64::NEG_INFINITY, nodes: 0, mark, staged: true }
    }

    pub(crate) fn adopted(until: f64) -> TombstoneValue {
        TombstoneValue { until, nodes: 0, mark: 0, staged: false }
    }

    pub(crate) fn until(&self) -> f64 {
        self.until
    }

    pub(crate) fn raise_until(&mut self, until: f64) {
        self.until = later(self.until, until);
    }

    pub(crate) fn mark(&self) -> u32 {
        self.mark
    }

    pub(crate) fn set_mark(&mut self, mark: u32) {
        self.mark = mark;
    }

    pub(crate) fn is_staged(&self) -> bool {
        self.staged
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn storage(n: usize) -> (std::vec::Vec<TombstoneSlot>, std::vec::Vec<NodeSlot>) {
        (std::vec![TombstoneSlot::EMPTY; n], std::vec![NodeSlot::EMPTY; 4])
    }

    #[test]
    fn record_keeps_the_later_deadline_and_unites_nodes() {
        let (mut slots, mut nodes) = storage(4);
        let mut table = TombstoneTable::new(&mut slots, &mut nodes);
        table.record("h", 5.0, Some("a")).unwrap();
        table.record("h", 3.0, Some("b")).unwrap();
        table.record_nodes("h", 7.0, &["a", "c", "c"]).unwrap();
        let t = table.get("h").unwrap();
        assert_eq!(t.until(), 7.0);
        assert_eq!(t.nodes().collect::<std::vec::Vec<_>>(), ["a", "b", "c"]);
    }

    /// A merge adopts new hashes up to the last free slot; one more and it adopts none.
    #[test]
    fn a_merge_fills_the_table_exactly_or_changes_nothing() {
        let (mut other_slots, mut other_nodes) = storage(4);
        let mut other = TombstoneTable::new(&mut other_slots, &mut other_nodes);
        for hash in ["h2", "h3", "h4"] {
            other.record(hash, 9.0, Some("b")).unwrap();
        }
        let (mut slots, mut nodes) = storage(4);
        let mut table = TombstoneTable::new(&mut slots, &mut nodes);
        table.record("h1", 5.0, Some("a")).unwrap();
        table.merge_from(&other).unwrap();
        assert_eq!(table.len(), 4);

        let (mut small_slots, mut small_nodes) = storage(3);
        let mut small = TombstoneTable::new(&mut small_slots, &mut small_nodes);
        small.record("h1", 5.0, Some("a")).unwrap();
        let error = small.merge_from(&other).unwrap_err();
        assert_eq!(error.code(), ErrorCode::TableFull);
        assert_eq!(small.iter().map(|t| t.content_hash()).collect::<std::vec::Vec<_>>(), ["h1"]);
    }

    /// After `clear` the node list starts again from its first slot, so the order
    /// `nodes` lists is the order the ids come in.
    #[test]
    fn clear_forgets_the_node_ids_too() {
        let (mut slots, mut nodes) = storage(4);
        let mut table = TombstoneTable::new(&mut slots, &mut nodes);
        table.record_nodes("h", 5.0, &["a", "b"]).unwrap();
        table.clear();
        assert!(table.is_empty());
        table.record_nodes("h", 5.0, &["b", "a"]).unwrap();
        assert_eq!(table.get("h").unwrap().nodes().collect::<std::vec::Vec<_>>(), ["b", "a"]);
    }

    /// Unused node ids are reclaimed only when a new id finds no free slot, so while
    /// the list has room every id keeps its place (and the order `nodes` lists).
    #[test]
    fn node_ids_are_reclaimed_only_when_the_list_is_full() {
        let mut slots = std::vec![TombstoneSlot::EMPTY; 4];
        let mut nodes = std::vec![NodeSlot::EMPTY; 3];
        let mut table = TombstoneTable::new(&mut slots, &mut nodes);
        table.record("h1", 10.0, Some("a")).unwrap();
        table.record("h2", 10.0, Some("b")).unwrap();
        assert!(table.remove("h1"));
        // "a" is unused, but "c" still has a free slot: "a" keeps its place.
        table.record("h2", 10.0, Some("c")).unwrap();
        table.record("h3", 10.0, Some("a")).unwrap();
        fn listed(table: &TombstoneTable<'_>, hash: &str) -> std::vec::Vec<std::string::String> {
            table.get(hash).unwrap().nodes().map(std::string::String::from).collect()
        }
        assert_eq!(listed(&table, "h2"), ["b", "c"]);
        assert_eq!(listed(&table, "h3"), ["a"]);
        // Full now: a new id takes the place of one no tombstone uses.
        assert!(table.remove("h3"));
        table.record("h2", 10.0, Some("d")).unwrap();
        assert_eq!(listed(&table, "h2"), ["d", "b", "c"]);
    }

    #[test]
    fn signed_zero_merges_the_same_way_in_both_orders() {
        assert_eq!(later(-0.0, 0.0).to_bits(), 0.0f64.to_bits());
        assert_eq!(later(0.0, -0.0).to_bits(), 0.0f64.to_bits());
    }

    #[test]
    fn bad_values_are_tombstone_field() {
        let (mut slots, mut nodes) = storage(4);
        let mut table = TombstoneTable::new(&mut slots, &mut nodes);
        let field = |r: Result<(), Error>| r.map_err(|e| (e.code(), e.field()));
        assert_eq!(field(table.record("", 1.0, None)), Err((ErrorCode::TombstoneField, Some("content_hash"))));
        assert_eq!(
            field(table.record(&"h".repeat(129), 1.0, None)),
            Err((ErrorCode::TombstoneField, Some("content_hash")))
        );
        assert_eq!(field(table.record("h", f64::NAN, None)), Err((ErrorCode::TombstoneField, Some("until"))));
        assert_eq!(field(table.record("h", f64::INFINITY, None)), Err((ErrorCode::TombstoneField, Some("until"))));
        assert_eq!(field(table.record("h", 1.0, Some(""))), Err((ErrorCode::TombstoneField, Some("node_id"))));
        assert!(table.is_empty());
    }

    #[test]
    fn full_node_list_is_table_full_and_changes_nothing() {
        let mut slots = std::vec![TombstoneSlot::EMPTY; 4];
        let mut nodes = std::vec![NodeSlot::EMPTY; 2];
        let mut table = TombstoneTable::new(&mut slots, &mut nodes);
        table.record_nodes("h1", 5.0, &["a", "b"]).unwrap();
        let err = table.record("h2", 5.0, Some("c")).unwrap_err();
        assert_eq!(err.code(), ErrorCode::TableFull);
        assert!(table.get("h2").is_none());
        // Once h1 is swept, its node ids are reclaimed.
        table.sweep(5.0, |_| {});
        table.record("h2", 6.0, Some("c")).unwrap();
        assert_eq!(table.get("h2").unwrap().nodes().collect::<std::vec::Vec<_>>(), ["c"]);
    }

    #[test]
    fn remove_takes_out_exactly_the_named_tombstone() {
        let (mut slots, mut nodes) = storage(4);
        let mut table = TombstoneTable::new(&mut slots, &mut nodes);
        table.record("a", 1.0, None).unwrap();
        table.record("b", 2.0, Some("n")).unwrap();
        assert!(table.remove("a"));
        assert!(!table.remove("a"));
        assert!(!table.remove("c"));
        assert!(table.get("a").is_none());
        let b = table.get("b").unwrap();
        assert_eq!((b.content_hash(), b.until()), ("b", 2.0));
        assert_eq!((table.len(), table.is_empty()), (1, false));
        assert!(table.remove("b"));
        assert_eq!((table.len(), table.is_empty()), (0, true));
    }

    #[test]
    fn a_wrapped_generation_clears_every_mark_so_no_old_mark_matches() {
        let (mut slots, mut nodes) = storage(4);
        let mut table = TombstoneTable::new(&mut slots, &mut nodes);
        table.record("a", 1.0, None).unwrap();
        table.record("b", 2.0, None).unwrap();
        let marks = |table: &mut TombstoneTable<'_>| {
            table.map_mut().entries_mut().map(|entry| entry.value.mark()).collect::<std::vec::Vec<_>>()
        };
        for entry in table.map_mut().entries_mut() {
            entry.value.set_mark(1);
        }
        table.generation = 6;
        assert_eq!(table.next_generation(), 7);
        assert_eq!(marks(&mut table), [1, 1], "an ordinary step leaves the marks");
        table.generation = u32::MAX;
        assert_eq!(table.next_generation(), 1);
        assert_eq!(marks(&mut table), [0, 0], "after the wrap generation 1 is fresh again");
    }
}
