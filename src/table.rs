//! Fixed-capacity tables over caller storage, shared by [`TombstoneTable`] and
//! [`RefCounts`] (SPEC §6): no allocator, nothing evicted, a full table is an error.
//!
//! A table borrows two slices the caller owns — a static array, a stack array, a
//! `Vec` made once at start-up, or (through a C layer) memory the caller allocated:
//!
//! * `&mut [Slot<V>]`, one slot per content hash. Its length is the table's capacity.
//!   Every slot holds its hash inline (up to [`ID_CAPACITY`] bytes: 128 characters of
//!   up to four UTF-8 bytes each) and two buckets of the table's open-addressing index,
//!   so lookups are O(1) and the index needs no storage of its own.
//! * `&mut [NodeSlot]`, the node ids the table knows. Per-hash node *sets* are bit sets
//!   over this list, so a set costs 16 bytes whatever its size, and merging two sets is
//!   one OR. At most [`MAX_NODES`] distinct node ids can be referenced at once; ids no
//!   entry references any more are reclaimed when the list runs full.
//!
//! The slots are plain data with a `const EMPTY`; the table resets them when it is
//! made, so their previous content does not matter.
//!
//! ```
//! use membrane_frame::table::NodeSlot;
//! use membrane_frame::tombstone::{TombstoneSlot, TombstoneTable};
//! let mut slots = [TombstoneSlot::EMPTY; 4];
//! let mut nodes = [NodeSlot::EMPTY; 8];
//! let mut table = TombstoneTable::new(&mut slots, &mut nodes);
//! table.record("h1", 100.0, Some("node-a"))?;
//! assert_eq!(table.capacity(), 4);
//! # Ok::<(), membrane_frame::Error>(())
//! ```
//!
//! [`TombstoneTable`]: crate::tombstone::TombstoneTable
//! [`RefCounts`]: crate::refcount::RefCounts

use crate::json::JsonStr;
use core::cmp::Ordering;
use core::fmt;

/// Most characters (Unicode scalar values) a content hash or node id may have (SPEC §6).
pub const MAX_ID_CHARS: usize = 128;

/// Bytes reserved inline for one id: [`MAX_ID_CHARS`] characters of up to 4 UTF-8 bytes.
pub const ID_CAPACITY: usize = MAX_ID_CHARS * 4;

/// Most distinct node ids a table can reference at once (node sets are 128-bit sets).
pub const MAX_NODES: usize = 128;

/// Largest number of slots a table uses (its index stores positions as `u32`).
const MAX_SLOTS: usize = (u32::MAX / 2) as usize;

/// A content hash or node id stored inline: 1–128 characters, UTF-8.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Id {
    len: u16,
    bytes: [u8; ID_CAPACITY],
}

impl Id {
    /// The empty id (marks an unused slot).
    pub(crate) const EMPTY: Id = Id { len: 0, bytes: [0; ID_CAPACITY] };

    /// `value` as an id, if it has 1–128 characters.
    pub fn new(value: &str) -> Option<Id> {
        if !is_valid_id(value) {
            return None;
        }
        let mut id = Id::EMPTY;
        id.bytes.get_mut(..value.len())?.copy_from_slice(value.as_bytes());
        id.len = u16::try_from(value.len()).ok()?;
        Some(id)
    }

    /// The decoded value of a JSON string as an id, if it has 1–128 characters.
    pub fn from_json(value: &JsonStr<'_>) -> Option<Id> {
        if let Some(plain) = value.as_str() {
            return Id::new(plain);
        }
        let mut id = Id::EMPTY;
        let mut len = 0usize;
        let mut chars = 0usize;
        for ch in value.chars() {
            chars += 1;
            if chars > MAX_ID_CHARS {
                return None;
            }
            let end = len + ch.len_utf8();
            ch.encode_utf8(id.bytes.get_mut(len..end)?);
            len = end;
        }
        if chars == 0 {
            return None;
        }
        id.len = u16::try_from(len).ok()?;
        Some(id)
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        // Only ever filled from `&str` or `char`s.
        core::str::from_utf8(self.as_bytes()).unwrap_or("")
    }

    fn as_bytes(&self) -> &[u8] {
        self.bytes.get(..usize::from(self.len)).unwrap_or(&[])
    }

    fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl PartialOrd for Id {
    fn partial_cmp(&self, other: &Id) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Id {
    /// Code point order (Python's `sort_keys`), which is UTF-8 byte order.
    fn cmp(&self, other: &Id) -> Ordering {
        self.as_bytes().cmp(other.as_bytes())
    }
}

impl fmt::Debug for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether `value` has 1–128 characters (SPEC §6 hashes and node ids, §5 node ids).
pub fn is_valid_id(value: &str) -> bool {
    !value.is_empty() && value.len() <= ID_CAPACITY && value.chars().count() <= MAX_ID_CHARS
}

/// Whether a JSON string decodes to 1–128 characters.
pub(crate) fn is_valid_json_id(value: &JsonStr<'_>) -> bool {
    !value.is_empty() && value.chars().take(MAX_ID_CHARS + 1).count() <= MAX_ID_CHARS
}

/// One entry of a table: its key and value.
#[derive(Clone, Debug)]
pub(crate) struct Entry<V> {
    pub(crate) key: Id,
    hash: u32,
    pub(crate) value: V,
}

/// Storage for one entry of a fixed-capacity table, plus two buckets of the table's
/// index. Create storage from the `EMPTY` constant of the concrete slot type
/// ([`TombstoneSlot::EMPTY`](crate::tombstone::TombstoneSlot),
/// [`RefSlot::EMPTY`](crate::refcount::RefSlot)); the content is managed by the table.
#[derive(Clone)]
pub struct Slot<V> {
    pub(crate) entry: Entry<V>,
    index: [u32; 2],
}

impl<V> Slot<V> {
    pub(crate) const fn empty(value: V) -> Slot<V> {
        Slot { entry: Entry { key: Id::EMPTY, hash: 0, value }, index: [0; 2] }
    }
}

impl<V> fmt::Debug for Slot<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Slot").field("key", &self.entry.key).finish_non_exhaustive()
    }
}

/// The table is full (the caller maps it to `table_full`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Full;

/// An open-addressing hash map over caller slots: entries dense in `slots[..len]`,
/// the index (2 buckets per slot, linear probing, load <= 1/2) spread over the slots.
pub(crate) struct Map<'s, V> {
    slots: &'s mut [Slot<V>],
    len: usize,
    seed: u64,
}

impl<'s, V> Map<'s, V> {
    pub(crate) fn new(slots: &'s mut [Slot<V>], seed: u64) -> Map<'s, V> {
        let mut map = Map { slots, len: 0, seed };
        map.clear();
        map
    }

    /// Forget every entry.
    pub(crate) fn clear(&mut self) {
        for slot in self.slots.iter_mut() {
            slot.index = [0; 2];
            slot.entry.key = Id::EMPTY;
        }
        self.len = 0;
    }

    pub(crate) fn capacity(&self) -> usize {
        self.slots.len().min(MAX_SLOTS)
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    fn buckets(&self) -> usize {
        self.capacity() * 2
    }

    fn bucket(&self, at: usize) -> u32 {
        self.slots.get(at / 2).and_then(|slot| slot.index.get(at % 2)).copied().unwrap_or(0)
    }

    fn set_bucket(&mut self, at: usize, value: u32) {
        if let Some(bucket) = self.slots.get_mut(at / 2).and_then(|slot| slot.index.get_mut(at % 2)) {
            *bucket = value;
        }
    }

    fn home(&self, hash: u32) -> usize {
        // Multiply-shift onto 0..buckets (buckets < 2^32).
        ((u64::from(hash) * self.buckets() as u64) >> 32) as usize
    }

    fn next_bucket(&self, at: usize) -> usize {
        if at + 1 >= self.buckets() {
            0
        } else {
            at + 1
        }
    }

    pub(crate) fn hash_of(&self, key: &[u8]) -> u32 {
        seeded_hash(self.seed, key)
    }

    /// The bucket holding entry `pos + 1` (or the first empty bucket on the way).
    fn probe(&self, hash: u32, mut matches: impl FnMut(usize) -> bool) -> (usize, Option<usize>) {
        let mut at = self.home(hash);
        for _ in 0..self.buckets() {
            let value = self.bucket(at);
            if value == 0 {
                return (at, None);
            }
            let pos = (value - 1) as usize;
            if matches(pos) {
                return (at, Some(pos));
            }
            at = self.next_bucket(at);
        }
        (at, None)
    }

    /// Position of the entry with this key.
    pub(crate) fn find(&self, key: &str) -> Option<usize> {
        let hash = self.hash_of(key.as_bytes());
        self.probe(hash, |pos| self.entry(pos).is_some_and(|e| e.hash == hash && e.key.as_bytes() == key.as_bytes())).1
    }

    pub(crate) fn entry(&self, pos: usize) -> Option<&Entry<V>> {
        if pos < self.len {
            self.slots.get(pos).map(|slot| &slot.entry)
        } else {
            None
        }
    }

    pub(crate) fn entry_mut(&mut self, pos: usize) -> Option<&mut Entry<V>> {
        if pos < self.len {
            self.slots.get_mut(pos).map(|slot| &mut slot.entry)
        } else {
            None
        }
    }

    pub(crate) fn entries(&self) -> impl Iterator<Item = &Entry<V>> {
        self.slots.get(..self.len).unwrap_or(&[]).iter().map(|slot| &slot.entry)
    }

    pub(crate) fn entries_mut(&mut self) -> impl Iterator<Item = &mut Entry<V>> {
        self.slots.get_mut(..self.len).unwrap_or(&mut []).iter_mut().map(|slot| &mut slot.entry)
    }

    /// Insert a key the caller knows is absent; its position.
    pub(crate) fn insert_new(&mut self, key: Id, value: V) -> Result<usize, Full> {
        let pos = self.len;
        if pos >= self.capacity() {
            return Err(Full);
        }
        let hash = self.hash_of(key.as_bytes());
        let (bucket, _) = self.probe(hash, |_| false);
        let slot = self.slots.get_mut(pos).ok_or(Full)?;
        slot.entry = Entry { key, hash, value };
        // pos < MAX_SLOTS < u32::MAX.
        self.set_bucket(bucket, pos as u32 + 1);
        self.len = pos + 1;
        Ok(pos)
    }

    /// Empty the bucket at `hole`, shifting later entries of its probe run back.
    fn remove_bucket(&mut self, mut hole: usize) {
        let mut at = hole;
        loop {
            at = self.next_bucket(at);
            let value = self.bucket(at);
            if value == 0 || at == hole {
                break;
            }
            let home = self.entry((value - 1) as usize).map_or(at, |e| self.home(e.hash));
            // The entry may move into the hole unless its home lies in (hole, at].
            let stays = if hole <= at { hole < home && home <= at } else { hole < home || home <= at };
            if !stays {
                self.set_bucket(hole, value);
                hole = at;
            }
        }
        self.set_bucket(hole, 0);
    }

    fn bucket_of(&self, pos: usize) -> Option<usize> {
        let hash = self.entry(pos)?.hash;
        match self.probe(hash, |p| p == pos) {
            (bucket, Some(_)) => Some(bucket),
            _ => None,
        }
    }

    /// Remove the entry at `pos`; the last entry takes its place.
    pub(crate) fn swap_remove(&mut self, pos: usize) {
        let Some(bucket) = self.bucket_of(pos) else {
            return;
        };
        self.remove_bucket(bucket);
        let last = self.len - 1;
        if pos != last {
            if let Some(moved) = self.bucket_of(last) {
                self.set_bucket(moved, pos as u32 + 1);
            }
            if let Some((head, tail)) = self.slots.split_at_mut_checked(last) {
                if let (Some(a), Some(b)) = (head.get_mut(pos), tail.first_mut()) {
                    core::mem::swap(&mut a.entry, &mut b.entry);
                }
            }
        }
        if let Some(slot) = self.slots.get_mut(last) {
            slot.entry.key = Id::EMPTY;
        }
        self.len = last;
    }

    /// Remove every entry for which `keep` is false, calling `removed` first.
    pub(crate) fn retain(
        &mut self,
        mut keep: impl FnMut(&Entry<V>) -> bool,
        mut removed: impl FnMut(&Entry<V>),
    ) -> usize {
        let mut count = 0;
        let mut pos = 0;
        while let Some(entry) = self.entry(pos) {
            if keep(entry) {
                pos += 1;
            } else {
                removed(entry);
                self.swap_remove(pos);
                count += 1;
            }
        }
        count
    }

    /// Put the entries in key order and rebuild the index.
    pub(crate) fn sort(&mut self) {
        let len = self.len;
        let Some(live) = self.slots.get_mut(..len) else {
            return;
        };
        if live.is_sorted_by(|a, b| a.entry.key <= b.entry.key) {
            return;
        }
        heapsort(live, |a, b| a.entry.key < b.entry.key);
        for slot in self.slots.iter_mut() {
            slot.index = [0; 2];
        }
        for pos in 0..len {
            let hash = self.entry(pos).map_or(0, |e| e.hash);
            let (bucket, _) = self.probe(hash, |_| false);
            self.set_bucket(bucket, pos as u32 + 1);
        }
    }
}

/// A seeded multiply-fold hash: fast, and with a seed the caller (or the storage
/// address) chooses, an outsider cannot aim many keys at one bucket.
fn seeded_hash(seed: u64, bytes: &[u8]) -> u32 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    const M: u64 = 0xA076_1D64_78BD_642F;
    let fold = |a: u64, b: u64| {
        let product = u128::from(a) * u128::from(b);
        (product as u64) ^ ((product >> 64) as u64)
    };
    let mut h = fold(seed ^ K, (bytes.len() as u64) ^ M);
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        h = fold(h ^ u64::from_le_bytes(word), M ^ seed.rotate_left(17));
    }
    let mut tail = [0u8; 8];
    let rest = chunks.remainder();
    if let Some(target) = tail.get_mut(..rest.len()) {
        target.copy_from_slice(rest);
    }
    h = fold(h ^ u64::from_le_bytes(tail), K ^ seed);
    h = fold(h, M);
    (h ^ (h >> 32)) as u32
}

/// A seed from the storage's address (ASLR makes it differ between runs) mixed with a
/// constant; [`TombstoneTable::with_seed`](crate::tombstone::TombstoneTable::with_seed)
/// takes a real random one.
pub(crate) fn address_seed<T>(storage: &[T]) -> u64 {
    (storage.as_ptr().addr() as u64).rotate_left(29) ^ 0x2545_F491_4F6C_DD1D
}

/// Storage for one node id a table knows (see the [module docs](self)).
#[derive(Clone)]
pub struct NodeSlot {
    id: Id,
}

impl NodeSlot {
    /// An unused slot, to initialise storage with.
    pub const EMPTY: NodeSlot = NodeSlot { id: Id::EMPTY };
}

impl fmt::Debug for NodeSlot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("NodeSlot").field(&self.id).finish()
    }
}

/// A set of node ids: bit `i` is `nodes[i]` of the table's node list.
pub(crate) type NodeSet = u128;

/// The node ids a table knows; a node set is a bit set over their positions.
pub(crate) struct Nodes<'s> {
    slots: &'s mut [NodeSlot],
}

impl<'s> Nodes<'s> {
    pub(crate) fn new(slots: &'s mut [NodeSlot]) -> Nodes<'s> {
        for slot in slots.iter_mut() {
            slot.id = Id::EMPTY;
        }
        Nodes { slots }
    }

    pub(crate) fn clear(&mut self) {
        for slot in self.slots.iter_mut() {
            slot.id = Id::EMPTY;
        }
    }

    pub(crate) fn capacity(&self) -> usize {
        self.slots.len().min(MAX_NODES)
    }

    fn live(&self) -> &[NodeSlot] {
        self.slots.get(..self.capacity()).unwrap_or(&[])
    }

    /// The bit of `id`, if the table knows it.
    pub(crate) fn find(&self, id: &str) -> Option<NodeSet> {
        self.live().iter().position(|slot| !slot.id.is_empty() && slot.id.as_str() == id).map(|i| 1u128 << i)
    }

    /// The bit of `id`, adding it if needed. When the list is full, ids outside
    /// `in_use()` are reclaimed first.
    pub(crate) fn intern(&mut self, id: &str, in_use: impl FnOnce() -> NodeSet) -> Result<NodeSet, Full> {
        if let Some(bit) = self.find(id) {
            return Ok(bit);
        }
        let new = Id::new(id).ok_or(Full)?;
        if self.free() == 0 {
            self.reclaim(in_use());
        }
        let capacity = self.capacity();
        let slot =
            self.slots.get_mut(..capacity).unwrap_or(&mut []).iter_mut().enumerate().find(|(_, s)| s.id.is_empty());
        match slot {
            Some((i, slot)) => {
                slot.id = new;
                Ok(1u128 << i)
            }
            None => Err(Full),
        }
    }

    /// Number of unused slots.
    pub(crate) fn free(&self) -> usize {
        self.live().iter().filter(|slot| slot.id.is_empty()).count()
    }

    /// Forget every id whose bit is not in `in_use`.
    pub(crate) fn reclaim(&mut self, in_use: NodeSet) {
        let capacity = self.capacity();
        for (i, slot) in self.slots.iter_mut().take(capacity).enumerate() {
            if in_use >> i & 1 == 0 {
                slot.id = Id::EMPTY;
            }
        }
    }

    /// The ids of a set, in node-list order.
    pub(crate) fn names(&self, set: NodeSet) -> impl Iterator<Item = &str> + '_ {
        self.live()
            .iter()
            .enumerate()
            .filter(move |(i, slot)| set >> i & 1 == 1 && !slot.id.is_empty())
            .map(|(_, slot)| slot.id.as_str())
    }
}

/// Sort `items` in place by `less`: heapsort, O(n log n) with no allocation. Written
/// here rather than calling `sort_unstable_by` because core's sort has panicking paths
/// the compiler cannot remove, and the tables are inside the C ABI's panic proof
/// (scripts/ffi-panic-check.sh); every access below is checked without a panic.
fn heapsort<T>(items: &mut [T], less: impl Fn(&T, &T) -> bool) {
    for root in (0..items.len() / 2).rev() {
        sift_down(items, root, &less);
    }
    for end in (1..items.len()).rev() {
        if let Some((first, rest)) = items.split_first_mut() {
            if let Some(last) = rest.get_mut(end - 1) {
                core::mem::swap(first, last);
            }
        }
        if let Some(heap) = items.get_mut(..end) {
            sift_down(heap, 0, &less);
        }
    }
}

/// Move `items[root]` down the max-heap `items` until both children are not greater.
fn sift_down<T>(items: &mut [T], mut root: usize, less: &impl Fn(&T, &T) -> bool) {
    loop {
        let Some(mut child) = root.checked_mul(2).and_then(|twice| twice.checked_add(1)) else { return };
        let (Some(left), right) = (items.get(child), items.get(child + 1)) else { return };
        if right.is_some_and(|right| less(left, right)) {
            child += 1;
        }
        let Some((head, tail)) = items.split_at_mut_checked(child) else { return };
        let (Some(parent), Some(larger)) = (head.get_mut(root), tail.first_mut()) else { return };
        if !less(parent, larger) {
            return;
        }
        core::mem::swap(parent, larger);
        root = child;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heapsort_sorts_like_the_standard_sort() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let lengths: std::vec::Vec<usize> =
            if cfg!(miri) { (0..20).chain([64]).collect() } else { (0..70).chain([255, 256, 1000]).collect() };
        for len in lengths {
            let mut items: std::vec::Vec<u32> = (0..len)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    (state % 50) as u32
                })
                .collect();
            let mut expected = items.clone();
            expected.sort();
            heapsort(&mut items, |a, b| a < b);
            assert_eq!(items, expected, "len {len}");
        }
    }

    fn map(slots: &mut [Slot<u32>]) -> Map<'_, u32> {
        Map::new(slots, 7)
    }

    /// A hash that lets an outsider aim keys at one bucket would keep every map
    /// correct, only slow: so the hash's quality is what these assertions check. Every
    /// bit of the key, its length and every bit of the seed change the hash, by about
    /// half its 32 bits on average (a weak mix changes fewer).
    #[test]
    fn the_hash_depends_on_every_key_bit_the_length_and_the_seed_and_mixes_them() {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let (lengths, rounds) = if cfg!(miri) { (0..12, 1) } else { (0..41, 8) };
        let (mut flips, mut changed) = (0u64, 0u64);
        for len in lengths {
            for _ in 0..rounds {
                let seed = next();
                let key: std::vec::Vec<u8> = (0..len).map(|_| next() as u8).collect();
                let hash = seeded_hash(seed, &key);
                let key_flips = (0..len * 8).map(|bit| {
                    let mut flipped = key.clone();
                    flipped[bit / 8] ^= 1 << (bit % 8);
                    seeded_hash(seed, &flipped)
                });
                let seed_flips = (0..64).map(|bit| seeded_hash(seed ^ (1 << bit), &key));
                for other in key_flips.chain(seed_flips) {
                    let distance = (hash ^ other).count_ones();
                    assert!(distance > 0, "a flipped bit left the hash of {key:?} unchanged");
                    (flips, changed) = (flips + 1, changed + u64::from(distance));
                }
                let longer = [&key[..], &[0]].concat();
                assert_ne!(hash, seeded_hash(seed, &longer), "a zero byte appended to {key:?}");
            }
        }
        let mean = changed as f64 / flips as f64;
        assert!((15.5..=16.5).contains(&mean), "a flipped bit changes {mean:.2} of 32 hash bits on average");
    }

    /// Storage at another address gets another seed: 64 neighbouring addresses give
    /// 64 seeds, so no bit of the address is lost in the mix.
    #[test]
    fn every_storage_address_gets_its_own_seed() {
        let storage = [0u8; 64];
        let mut seeds: std::vec::Vec<u64> = (0..64).map(|i| address_seed(&storage[i..])).collect();
        seeds.sort_unstable();
        seeds.dedup();
        assert_eq!(seeds.len(), 64);
        assert!(!seeds.contains(&0) && !seeds.contains(&1));
    }

    #[test]
    fn ids_count_characters_not_bytes() {
        assert!(Id::new(&"é".repeat(128)).is_some());
        assert!(Id::new(&"\u{10ffff}".repeat(128)).is_some());
        assert!(Id::new(&"a".repeat(129)).is_none());
        assert!(Id::new("").is_none());
        let escaped = JsonStr::read_at("\"\\u00e9\\ud83d\\ude00\"", 0).unwrap().0;
        assert_eq!(Id::from_json(&escaped).unwrap().as_str(), "é😀");
        let long = std::format!("\"{}\"", "\\u00e9".repeat(129));
        assert!(Id::from_json(&JsonStr::read_at(&long, 0).unwrap().0).is_none());
    }

    #[test]
    fn insert_find_remove_against_a_model() {
        let mut storage: std::vec::Vec<Slot<u32>> = (0..64).map(|_| Slot::empty(0)).collect();
        let mut m = map(&mut storage);
        let mut model = std::collections::BTreeMap::new();
        let mut state = 0x1234_5678u32;
        let steps = if cfg!(miri) { 300 } else { 20_000u32 };
        for step in 0..steps {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            let key = std::format!("k{}", state % 97);
            match (state >> 8) % 3 {
                0 | 1 => {
                    if m.find(&key).is_none() {
                        let inserted = m.insert_new(Id::new(&key).unwrap(), step);
                        assert_eq!(inserted.is_ok(), model.len() < 64);
                        if inserted.is_ok() {
                            model.insert(key.clone(), step);
                        }
                    }
                }
                _ => {
                    if let Some(pos) = m.find(&key) {
                        m.swap_remove(pos);
                        model.remove(&key);
                    }
                }
            }
            if step % 97 == 0 {
                m.sort();
            }
            assert_eq!(m.len(), model.len());
            // The index holds one bucket per entry and nothing else: a removal that
            // left its bucket behind would still find every key, and fill the index.
            let mut pointed: std::vec::Vec<u32> = (0..m.buckets()).map(|b| m.bucket(b)).filter(|&v| v != 0).collect();
            pointed.sort_unstable();
            assert!(
                pointed.iter().copied().eq(1..=m.len() as u32),
                "index {pointed:?} for {} entries at step {step}",
                m.len()
            );
            if cfg!(miri) && step % 16 != 0 {
                continue;
            }
            for (k, v) in &model {
                assert!(m.find(k).is_some(), "lost {k} at step {step}");
                let pos = m.find(k).unwrap();
                assert_eq!(m.entry(pos).unwrap().value, *v);
            }
            // Past the entries there is nothing to read, change or remove.
            let len = m.len();
            assert!(m.entry(len).is_none() && m.entry_mut(len).is_none());
            m.swap_remove(len);
            assert_eq!(m.len(), len);
        }
    }

    /// At load 1/2 linear probing keeps an entry about half a bucket past its home on
    /// average, and the homes cover most buckets. A home that ignored the hash, or a
    /// probe that skipped ahead, would still find every key, only slowly: so the spread
    /// is what this checks, after inserts, after removals and after the index is rebuilt.
    #[test]
    fn entries_sit_near_their_home_bucket() {
        let n = if cfg!(miri) { 64 } else { 1024 };
        let mut storage: std::vec::Vec<Slot<u32>> = (0..n).map(|_| Slot::empty(0)).collect();
        let mut m = map(&mut storage);
        let check = |m: &Map<'_, u32>, when: &str| {
            let buckets = m.buckets();
            let mut homes = std::collections::BTreeSet::new();
            let mut displacement = 0;
            for pos in 0..m.len() {
                let home = m.home(m.entry(pos).unwrap().hash);
                homes.insert(home);
                displacement += (m.bucket_of(pos).unwrap() + buckets - home) % buckets;
            }
            let mean = displacement as f64 / m.len() as f64;
            assert!(mean < 1.0, "{when}: entries sit {mean:.2} buckets past their home on average");
            // Expected distinct homes at load 1/2: 2n(1 - e^-1/2) = 0.79n.
            assert!(homes.len() * 10 >= m.len() * 7, "{when}: {} homes for {} entries", homes.len(), m.len());
        };
        for i in 0..n {
            m.insert_new(Id::new(&std::format!("key-{i}")).unwrap(), i as u32).unwrap();
        }
        check(&m, "inserted");
        for i in (0..n).step_by(3) {
            let pos = m.find(&std::format!("key-{i}")).unwrap();
            m.swap_remove(pos);
        }
        check(&m, "removed");
        m.sort();
        check(&m, "sorted");
    }

    #[test]
    fn ids_and_slots_format_as_their_text() {
        let id = Id::new("node-é").unwrap();
        assert_eq!(std::format!("{id}"), "node-é");
        assert_eq!(std::format!("{id:?}"), "\"node-é\"");
        let mut slot = Slot::empty(0u32);
        slot.entry.key = id.clone();
        assert_eq!(std::format!("{slot:?}"), "Slot { key: \"node-é\", .. }");
        assert_eq!(std::format!("{:?}", NodeSlot { id }), "NodeSlot(\"node-é\")");
    }

    #[test]
    fn a_full_map_refuses_and_keeps_everything() {
        let mut storage: std::vec::Vec<Slot<u32>> = (0..3).map(|_| Slot::empty(0)).collect();
        let mut m = map(&mut storage);
        for (i, k) in ["a", "b", "c"].iter().enumerate() {
            m.insert_new(Id::new(k).unwrap(), i as u32).unwrap();
        }
        assert_eq!(m.insert_new(Id::new("d").unwrap(), 3), Err(Full));
        assert!(["a", "b", "c"].iter().all(|k| m.find(k).is_some()));
    }

    #[test]
    fn node_list_reclaims_unused_ids_only_when_full() {
        let mut storage = [NodeSlot::EMPTY, NodeSlot::EMPTY];
        let mut nodes = Nodes::new(&mut storage);
        let a = nodes.intern("a", || 0).unwrap();
        let b = nodes.intern("b", || 0).unwrap();
        assert_eq!(nodes.intern("c", || a | b), Err(Full));
        let c = nodes.intern("c", || a).unwrap();
        assert_eq!(c, b);
        assert_eq!(nodes.names(a | c).collect::<std::vec::Vec<_>>(), ["a", "c"]);
    }
}
