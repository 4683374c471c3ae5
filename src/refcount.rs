//! Reference counts (SPEC §6): per content hash, the set of node ids holding it.
//!
//! A fixed-capacity table in caller storage (see [`crate::table`]): one [`RefSlot`] per
//! hash, node sets as bit sets over up to 128 node ids. Nothing in a ref count is ever
//! serialised.
//!
//! ```
//! use membrane_frame::refcount::{RefCounts, RefSlot};
//! use membrane_frame::table::NodeSlot;
//! let (mut slots, mut nodes) = ([RefSlot::EMPTY; 8], [NodeSlot::EMPTY; 4]);
//! let mut refs = RefCounts::new(&mut slots, &mut nodes);
//! refs.acquire("h1", "node-a")?;
//! refs.acquire("h1", "node-b")?;
//! assert_eq!(refs.holders("h1").collect::<Vec<_>>(), ["node-a", "node-b"]);
//! assert!(!refs.release("h1", "node-c")); // not a holder, others remain
//! assert!(!refs.release("h1", "node-a"));
//! assert!(refs.release("h1", "node-b")); // the set became empty: the entry is gone
//! assert!(refs.release("h1", "node-b")); // unknown hash
//! # Ok::<(), membrane_frame::Error>(())
//! ```

use crate::error::{Error, ErrorCode};
use crate::table::{address_seed, Full, Id, Map, NodeSet, NodeSlot, Nodes, Slot};
use core::fmt;

/// The value part of a ref-count slot (storage only; see [`RefSlot`]).
#[derive(Clone, Debug)]
pub struct RefValue {
    holders: NodeSet,
}

/// Storage for one hash's holders: `[RefSlot::EMPTY; N]`, or `vec![RefSlot::EMPTY; n]`.
pub type RefSlot = Slot<RefValue>;

impl Slot<RefValue> {
    /// An unused slot, to initialise storage with.
    pub const EMPTY: RefSlot = Slot::empty(RefValue { holders: 0 });
}

/// Per hash, the node ids holding it, in caller storage.
///
/// Capacity is `slots.len()` hashes and `min(nodes.len(), 128)` distinct node ids at
/// once; running out is `table_full` (nothing is evicted, the table is unchanged). A
/// hash or node id that is not 1–128 characters is `invalid_argument`.
///
/// ```
/// use membrane_frame::refcount::{RefCounts, RefSlot};
/// use membrane_frame::table::NodeSlot;
/// let (mut slots, mut nodes) = ([RefSlot::EMPTY; 8], [NodeSlot::EMPTY; 4]);
/// let mut counts = RefCounts::new(&mut slots, &mut nodes);
/// counts.acquire("h1", "node-a")?;
/// counts.acquire("h1", "node-b")?;
/// assert_eq!(counts.holders("h1").count(), 2);
/// assert!(!counts.release("h1", "node-a")); // node-b still holds it
/// assert!(counts.release("h1", "node-b")); // now nobody does: the entry is gone
/// # Ok::<(), membrane_frame::Error>(())
/// ```
pub struct RefCounts<'s> {
    map: Map<'s, RefValue>,
    nodes: Nodes<'s>,
}

fn invalid(reason: &'static str) -> Error {
    Error::new(ErrorCode::InvalidArgument, reason)
}

impl<'s> RefCounts<'s> {
    /// An empty table over `slots` and `nodes`, its index seeded from the storage
    /// address (see [`with_seed`](Self::with_seed)).
    pub fn new(slots: &'s mut [RefSlot], nodes: &'s mut [NodeSlot]) -> RefCounts<'s> {
        let seed = address_seed(slots);
        RefCounts::with_seed(slots, nodes, seed)
    }

    /// An empty table whose index hashes with `seed`.
    pub fn with_seed(slots: &'s mut [RefSlot], nodes: &'s mut [NodeSlot], seed: u64) -> RefCounts<'s> {
        RefCounts { map: Map::new(slots, seed), nodes: Nodes::new(nodes) }
    }

    /// How many hashes the table can hold.
    pub fn capacity(&self) -> usize {
        self.map.capacity()
    }

    /// Number of hashes with at least one holder.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether no hash is held.
    pub fn is_empty(&self) -> bool {
        self.map.len() == 0
    }

    fn in_use(map: &Map<'_, RefValue>) -> NodeSet {
        map.entries().fold(0, |set, entry| set | entry.value.holders)
    }

    /// Record that `node` holds `content_hash`.
    pub fn acquire(&mut self, content_hash: &str, node: &str) -> Result<(), Error> {
        let key = Id::new(content_hash).ok_or(invalid("content_hash must have 1-128 characters"))?;
        if Id::new(node).is_none() {
            return Err(invalid("node_id must have 1-128 characters"));
        }
        let existing = self.map.find(content_hash);
        if existing.is_none() && self.map.len() >= self.map.capacity() {
            return Err(Error::new(ErrorCode::TableFull, "ref-count table is full"));
        }
        let map = &self.map;
        let bit = self
            .nodes
            .intern(node, || Self::in_use(map))
            .map_err(|Full| Error::new(ErrorCode::TableFull, "node id list is full"))?;
        match existing.and_then(|pos| self.map.entry_mut(pos)) {
            Some(entry) => entry.value.holders |= bit,
            None => {
                self.map
                    .insert_new(key, RefValue { holders: bit })
                    .map_err(|Full| Error::new(ErrorCode::TableFull, "ref-count table is full"))?;
            }
        }
        Ok(())
    }

    /// Record that `node` no longer holds `content_hash`. True iff the hash is unknown
    /// or its holder set became empty (the entry is then removed); false when `node`
    /// was not a holder and others remain, or others still hold it.
    pub fn release(&mut self, content_hash: &str, node: &str) -> bool {
        let Some(pos) = self.map.find(content_hash) else {
            return true;
        };
        let bit = self.nodes.find(node).unwrap_or(0);
        let Some(entry) = self.map.entry_mut(pos) else {
            return true;
        };
        entry.value.holders &= !bit;
        if entry.value.holders == 0 {
            self.map.swap_remove(pos);
            true
        } else {
            false
        }
    }

    /// The node ids holding `content_hash` (none if unknown).
    pub fn holders(&self, content_hash: &str) -> impl Iterator<Item = &str> + '_ {
        let set = self.map.find(content_hash).and_then(|pos| self.map.entry(pos)).map_or(0, |e| e.value.holders);
        self.nodes.names(set)
    }

    /// How many nodes hold `content_hash`.
    pub fn holder_count(&self, content_hash: &str) -> usize {
        self.map
            .find(content_hash)
            .and_then(|pos| self.map.entry(pos))
            .map_or(0, |e| e.value.holders.count_ones() as usize)
    }

    /// Drop `content_hash` whatever its holders (e.g. once the fragment is deleted);
    /// whether it was known.
    pub fn forget(&mut self, content_hash: &str) -> bool {
        match self.map.find(content_hash) {
            Some(pos) => {
                self.map.swap_remove(pos);
                true
            }
            None => false,
        }
    }

    /// Every held hash, in no particular order.
    pub fn hashes(&self) -> impl Iterator<Item = &str> + '_ {
        self.map.entries().map(|entry| entry.key.as_str())
    }
}

impl fmt::Debug for RefCounts<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RefCounts").field("len", &self.len()).field("capacity", &self.capacity()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn release_semantics_follow_the_spec() {
        let (mut slots, mut nodes) = (std::vec![RefSlot::EMPTY; 4], std::vec![NodeSlot::EMPTY; 4]);
        let mut refs = RefCounts::new(&mut slots, &mut nodes);
        assert!(refs.release("unknown", "a"));
        refs.acquire("h", "a").unwrap();
        refs.acquire("h", "a").unwrap();
        assert_eq!(refs.holder_count("h"), 1);
        assert!(!refs.release("h", "never-seen"));
        assert!(!refs.is_empty());
        assert!(refs.release("h", "a"));
        assert_eq!(refs.holders("h").count(), 0);
        assert!(refs.is_empty());
    }

    #[test]
    fn full_tables_are_errors_and_forget_frees_room() {
        let (mut slots, mut nodes) = (std::vec![RefSlot::EMPTY; 1], std::vec![NodeSlot::EMPTY; 1]);
        let mut refs = RefCounts::new(&mut slots, &mut nodes);
        refs.acquire("h1", "a").unwrap();
        assert_eq!(refs.acquire("h2", "a").unwrap_err().code(), ErrorCode::TableFull);
        assert_eq!(refs.acquire("h1", "b").unwrap_err().code(), ErrorCode::TableFull);
        assert_eq!(refs.holders("h1").collect::<std::vec::Vec<_>>(), ["a"]);
        assert!(refs.forget("h1"));
        assert!(!refs.forget("h1"));
        refs.acquire("h2", "b").unwrap();
        assert_eq!(refs.acquire("", "b").unwrap_err().code(), ErrorCode::InvalidArgument);
    }

    /// A full node list frees the ids no entry holds: one that holds two hashes is in
    /// use however many entries share its bit.
    #[test]
    fn a_node_holding_several_hashes_keeps_its_id_when_the_node_list_is_full() {
        let (mut slots, mut nodes) = (std::vec![RefSlot::EMPTY; 4], std::vec![NodeSlot::EMPTY; 2]);
        let mut refs = RefCounts::new(&mut slots, &mut nodes);
        refs.acquire("h1", "a").unwrap();
        refs.acquire("h2", "a").unwrap();
        refs.acquire("h2", "b").unwrap();
        assert_eq!((refs.holder_count("h1"), refs.holder_count("h2"), refs.holder_count("h3")), (1, 2, 0));
        assert_eq!(refs.acquire("h3", "c").unwrap_err().code(), ErrorCode::TableFull);
        assert_eq!(refs.holders("h1").collect::<std::vec::Vec<_>>(), ["a"]);
        // Once "b" holds nothing its id is reclaimed for "c".
        assert!(!refs.release("h2", "b"));
        refs.acquire("h3", "c").unwrap();
        assert_eq!(refs.holders("h3").collect::<std::vec::Vec<_>>(), ["c"]);
        assert_eq!(refs.holders("h2").collect::<std::vec::Vec<_>>(), ["a"]);
    }

    #[test]
    fn a_node_id_needs_1_to_128_characters() {
        let (mut slots, mut nodes) = (std::vec![RefSlot::EMPTY; 2], std::vec![NodeSlot::EMPTY; 2]);
        let mut refs = RefCounts::new(&mut slots, &mut nodes);
        for node in ["", &"n".repeat(129)] {
            let err = refs.acquire("h", node).unwrap_err();
            assert_eq!((err.code(), err.reason()), (ErrorCode::InvalidArgument, "node_id must have 1-128 characters"));
        }
        refs.acquire("h", &"n".repeat(128)).unwrap();
        assert_eq!(refs.len(), 1);
    }

    #[test]
    fn the_table_lists_its_hashes_and_shows_its_size() {
        let (mut slots, mut nodes) = (std::vec![RefSlot::EMPTY; 3], std::vec![NodeSlot::EMPTY; 2]);
        let mut refs = RefCounts::with_seed(&mut slots, &mut nodes, 5);
        assert_eq!(refs.capacity(), 3);
        refs.acquire("h1", "a").unwrap();
        refs.acquire("h2", "a").unwrap();
        refs.acquire("h2", "b").unwrap();
        let mut hashes: std::vec::Vec<&str> = refs.hashes().collect();
        hashes.sort_unstable();
        assert_eq!(hashes, ["h1", "h2"]);
        assert_eq!(std::format!("{refs:?}"), "RefCounts { len: 2, capacity: 3 }");
        // A node that holds nothing releases nothing while the others still hold it.
        assert!(!refs.release("h1", "b"));
        assert_eq!(refs.holder_count("h1"), 1);
    }
}
