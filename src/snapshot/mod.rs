//! Cluster snapshots — `{state_dir}/{node_id}.json` (SPEC §5): a borrowed reader, the
//! sorted writer, the epoch guard, and (with `std`) atomic files.
//!
//! [`Snapshot::parse`] validates a snapshot text (schema 5, or 2 as the original
//! 3.0.x writes it) in one pass and hands back a view whose membership list and shard
//! maps are iterators that walk the text again: nothing is copied or allocated, however
//! many entries the maps hold. [`Snapshot::parse_indexed`] also records where the
//! maps' entries are, in `u32` words the caller provides, and their iterators then read
//! those instead of the text: for reading whole maps of many entries.
//! [`Snapshot::builder`] makes one from Rust values. [`Snapshot::write_to`] emits the
//! original's `json.dumps(payload, sort_keys=True)` form: keys sorted at every level,
//! separators `", "` / `": "`, ASCII escaping, floats as Python `repr`,
//! `schema_version` 5.
//!
//! ## Errors, in this order
//! 1. `snapshot_json`: any strict-JSON problem anywhere in the text (a repeated key in
//!    the shard maps included), or a text that is not an object.
//! 2. `snapshot_version`: `schema_version` missing, not an integer, or not 5 or 2.
//! 3. `snapshot_field`: the first of `cluster_epoch`, `captured_at`, `membership`,
//!    `shards`, `server` (table order) that is missing or breaks its rule; within one
//!    of them the first problem in text order. Nested fields are named by path
//!    (`membership.port`, `shards.replica_map`, `server.error_count`).
//!
//! Offsets point at the offending value, or at the closing `}` of the object that
//! lacks a required key.
//!
//! ```
//! use membrane_frame::snapshot::Snapshot;
//! let text = br#"{"captured_at": 1735600000.123, "cluster_epoch": 17, "membership": [{"cluster_epoch": 17, "healthy": true, "host": "10.0.0.1", "missed_heartbeats": 0, "node_id": "peer-1", "port": 8080, "suspect": false}], "schema_version": 2, "server": {"error_count": 4, "request_count": 123}, "shards": {"primary_map": {"hash1": "node-1"}, "replica_map": {"hash1": ["node-2", "node-3"]}}}"#;
//! let snapshot = Snapshot::parse(text)?;
//! assert_eq!((snapshot.schema_version(), snapshot.cluster_epoch()), (2, 17));
//! let member = snapshot.membership().iter().next().unwrap();
//! assert_eq!((member.node_id.to_string(), member.port), ("peer-1".to_string(), 8080));
//! let (hash, nodes) = snapshot.replica_map().iter().next().unwrap();
//! assert_eq!(hash.as_str(), Some("hash1"));
//! assert_eq!(nodes.iter().map(|n| n.to_string()).collect::<Vec<_>>(), ["node-2", "node-3"]);
//! // Written back: the same text with schema_version 5.
//! let mut out = [0u8; 512];
//! let len = snapshot.write_into(&mut out)?;
//! assert_eq!(out[..len], *String::from_utf8_lossy(text).replace("\"schema_version\": 2", "\"schema_version\": 5").as_bytes());
//! # Ok::<(), membrane_frame::Error>(())
//! ```

mod parse;
#[cfg(feature = "std")]
mod store;
mod write;

#[cfg(feature = "std")]
pub use store::{SaveStep, SnapshotStore};

use crate::error::{Error, ErrorCode};
use crate::json::keys::rewalk_reader;
use crate::json::map_index::MapIndex;
use crate::json::{Event, JsonStr, RawStr, Reader, StringArray, StringMapEntries};
use crate::table::is_valid_json_id;

/// The `schema_version` this crate writes.
pub const SCHEMA_VERSION: i64 = 5;

/// The `schema_version` the original 3.0.x writes; read, never written.
pub const LEGACY_SCHEMA_VERSION: i64 = 2;

/// Capacity of the snapshot reader's duplicate-key table: keys open at once outside
/// the shard maps (whose own keys are checked without it). A snapshot needs about 20;
/// the rest is room for unknown keys. More is `snapshot_json`.
pub const SNAPSHOT_KEY_CAPACITY: usize = 128;

/// One entry of `membership`.
///
/// Strings are borrowed from the snapshot text (or from the caller, for built
/// snapshots); optional fields are `None` when absent and are then not written.
///
/// ```
/// use membrane_frame::snapshot::Member;
/// let member = Member { healthy: Some(true), ..Member::new("peer-1", "10.0.0.1", 8080) };
/// assert_eq!(member.node_id.as_str(), Some("peer-1"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Member<'a> {
    /// `node_id`: 1–128 characters.
    pub node_id: JsonStr<'a>,
    /// `host`.
    pub host: JsonStr<'a>,
    /// `port`.
    pub port: u16,
    /// `cluster_epoch`, the member's own epoch.
    pub cluster_epoch: Option<u64>,
    /// `healthy`.
    pub healthy: Option<bool>,
    /// `suspect`.
    pub suspect: Option<bool>,
    /// `missed_heartbeats`.
    pub missed_heartbeats: Option<u64>,
}

impl<'a> Member<'a> {
    /// A member with the three required fields and no optional ones.
    pub const fn new(node_id: &'a str, host: &'a str, port: u16) -> Member<'a> {
        Member {
            node_id: JsonStr::from_plain(node_id),
            host: JsonStr::from_plain(host),
            port,
            cluster_epoch: None,
            healthy: None,
            suspect: None,
            missed_heartbeats: None,
        }
    }
}

/// Where a list or map lives: in a validated snapshot text (the offset of its first
/// byte; maps also remember whether their keys were in increasing order) or in the
/// caller's slice.
#[derive(Clone, Copy, Debug)]
enum Repr<'a, T: 'a> {
    Text { text: &'a str, at: usize, sorted: bool },
    Values(&'a [T]),
}

/// `membership`: the cluster's members, in order.
#[derive(Clone, Copy, Debug)]
pub struct Membership<'a> {
    repr: Repr<'a, Member<'a>>,
    len: usize,
}

impl<'a> Membership<'a> {
    /// Number of members.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there is no member.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The members, in order.
    pub fn iter(&self) -> Members<'a> {
        match self.repr {
            Repr::Text { text, at, .. } => {
                let mut reader = rewalk_reader(text, at);
                let started = reader.next_event() == Ok(Some(Event::ArrayStart));
                Members(MembersRepr::Text { reader, base: at, done: !started })
            }
            Repr::Values(values) => Members(MembersRepr::Values(values.iter())),
        }
    }
}

/// Iterator over [`Membership`].
pub struct Members<'a>(MembersRepr<'a>);

// The re-walking reader is the big variant; without an allocator it cannot be boxed,
// and iterators are short-lived stack values.
#[allow(clippy::large_enum_variant)]
enum MembersRepr<'a> {
    Text { reader: Reader<'a, 0>, base: usize, done: bool },
    Values(core::slice::Iter<'a, Member<'a>>),
}

impl<'a> Iterator for Members<'a> {
    type Item = Member<'a>;

    fn next(&mut self) -> Option<Member<'a>> {
        match &mut self.0 {
            MembersRepr::Values(values) => values.next().copied(),
            MembersRepr::Text { reader, base, done } => {
                if *done {
                    return None;
                }
                let member = match reader.next_event() {
                    Ok(Some(Event::ObjectStart)) => parse::read_member(reader, *base).ok().and_then(Result::ok),
                    _ => None,
                };
                *done = member.is_none();
                member
            }
        }
    }
}

/// `shards.primary_map`: content hash → primary node id.
#[derive(Clone, Copy, Debug)]
pub struct PrimaryMap<'a> {
    repr: Repr<'a, (&'a str, &'a str)>,
    len: usize,
    /// Where the entries are, when the parse recorded it (`parse_indexed`).
    index: Option<MapIndex<'a>>,
}

impl<'a> PrimaryMap<'a> {
    /// Number of entries.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the map is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The entries in stored order (text order; for a built snapshot, slice order,
    /// which is sorted).
    pub fn iter(&self) -> PrimaryEntries<'a> {
        if let Some(index) = self.index {
            return PrimaryEntries(MapRepr::Indexed(index, index.words));
        }
        match self.repr {
            Repr::Text { text, at, .. } => PrimaryEntries(MapRepr::Text(StringMapEntries::new(text, at, false))),
            Repr::Values(values) => PrimaryEntries(MapRepr::Values(values.iter())),
        }
    }

    /// The primary of `content_hash` (a linear search).
    pub fn get(&self, content_hash: &str) -> Option<JsonStr<'a>> {
        self.iter().find(|(key, _)| key.eq_str(content_hash)).map(|(_, node)| node)
    }
}

#[derive(Clone)]
enum MapRepr<'a, T> {
    Text(StringMapEntries<'a>),
    /// The index and the words of the entries not yet read.
    Indexed(MapIndex<'a>, &'a [u32]),
    Values(core::slice::Iter<'a, T>),
}

/// Iterator over [`PrimaryMap`]: `(content_hash, node_id)`.
#[derive(Clone)]
pub struct PrimaryEntries<'a>(MapRepr<'a, (&'a str, &'a str)>);

impl<'a> Iterator for PrimaryEntries<'a> {
    type Item = (JsonStr<'a>, JsonStr<'a>);

    // In line: returned through memory, an entry's flags were read back wider than they
    // were written, a stalled load each (the C ABI's batch read-out, perf).
    #[inline]
    fn next(&mut self) -> Option<(JsonStr<'a>, JsonStr<'a>)> {
        match &mut self.0 {
            MapRepr::Values(values) => values.next().map(|&(k, v)| (JsonStr::from_plain(k), JsonStr::from_plain(v))),
            MapRepr::Text(entries) => entries.next().and_then(|entry| Some((entry.key, entry.value?))),
            MapRepr::Indexed(index, words) => index.next_pair(words),
        }
    }
}

impl<'a> PrimaryEntries<'a> {
    /// The next `room` entries at most, each handed to `each` as the raw strings of its
    /// key and node id, in order; the last of them as [`next`](Iterator::next) gives it,
    /// `None` when the map had ended. A batch as the C ABI's
    /// `mbr_snapshot_cursor_read_primary` hands it out: over the index of a
    /// [`parse_indexed`](Snapshot::parse_indexed) snapshot only its words are read, not
    /// the text.
    ///
    /// ```
    /// use membrane_frame::snapshot::Snapshot;
    /// let text = br#"{"captured_at": 0.5, "cluster_epoch": 3, "membership": [], "schema_version": 5, "server": {"error_count": 0, "request_count": 0}, "shards": {"primary_map": {"h1": "node-1", "h2": "node-2", "h3": "node-3"}, "replica_map": {}}}"#;
    /// let mut index = [0u32; 12];
    /// let snapshot = Snapshot::parse_indexed(text, &mut index)?;
    /// let mut entries = snapshot.primary_map().iter();
    /// let mut nodes = Vec::new();
    /// let last = entries.read_raw(2, |_, node| nodes.push(node.bytes));
    /// assert_eq!(nodes, [&b"node-1"[..], b"node-2"]);
    /// assert_eq!(last.map(|(key, _)| key.as_str()), Some(Some("h2")));
    /// assert_eq!(entries.next().map(|(key, _)| key.as_str()), Some(Some("h3")));
    /// assert!(entries.read_raw(2, |_, _| unreachable!()).is_none());
    /// # Ok::<(), membrane_frame::Error>(())
    /// ```
    pub fn read_raw(
        &mut self,
        room: usize,
        mut each: impl FnMut(RawStr<'a>, RawStr<'a>),
    ) -> Option<(JsonStr<'a>, JsonStr<'a>)> {
        // On microcontrollers, where flash counts, through `next`: the loops over the
        // words cost the image with every C function 1 KB (thumbv7em,
        // `make -C c-examples baremetal-check`).
        #[cfg(target_pointer_width = "64")]
        if let MapRepr::Indexed(index, words) = &mut self.0 {
            // The words of the last entry read, made into strings once at the end.
            let mut last = None;
            for _ in 0..room {
                let entry = *words;
                let (Some(key), Some(node)) = (index.next_raw(words), index.next_raw(words)) else {
                    break;
                };
                each(key, node);
                last = Some(entry);
            }
            return last.and_then(|mut entry| index.next_pair(&mut entry));
        }
        let mut last = None;
        for (key, node) in self.by_ref().take(room) {
            each(key.into(), node.into());
            last = Some((key, node));
        }
        last
    }
}

/// `shards.replica_map`: content hash → replica node ids.
#[derive(Clone, Copy, Debug)]
pub struct ReplicaMap<'a> {
    repr: Repr<'a, (&'a str, &'a [&'a str])>,
    len: usize,
    /// Where the entries are, when the parse recorded it (`parse_indexed`).
    index: Option<MapIndex<'a>>,
}

impl<'a> ReplicaMap<'a> {
    /// Number of entries.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the map is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The entries in stored order.
    pub fn iter(&self) -> ReplicaEntries<'a> {
        if let Some(index) = self.index {
            return ReplicaEntries(MapRepr::Indexed(index, index.words), index.text);
        }
        match self.repr {
            Repr::Text { text, at, .. } => ReplicaEntries(MapRepr::Text(StringMapEntries::new(text, at, true)), text),
            Repr::Values(values) => ReplicaEntries(MapRepr::Values(values.iter()), ""),
        }
    }

    /// The replicas of `content_hash` (a linear search).
    pub fn get(&self, content_hash: &str) -> Option<ReplicaNodes<'a>> {
        self.iter().find(|(key, _)| key.eq_str(content_hash)).map(|(_, nodes)| nodes)
    }
}

/// Iterator over [`ReplicaMap`]: `(content_hash, nodes)`.
#[derive(Clone)]
pub struct ReplicaEntries<'a>(MapRepr<'a, (&'a str, &'a [&'a str])>, &'a str);

impl<'a> ReplicaEntries<'a> {
    /// The next entry, as [`next`](Iterator::next), with each node id handed to
    /// `each_node` in order as the walk reads it: one pass over the list, where `next`
    /// and then [`ReplicaNodes::iter`] read a parsed list twice.
    ///
    /// ```
    /// use membrane_frame::snapshot::Snapshot;
    /// let replicas: &[(&str, &[&str])] = &[("h1", &["node-a", "node-b"])];
    /// let built = Snapshot::builder(7, 1.5).replica_map(replicas).build()?;
    /// let mut buf = [0u8; 512];
    /// let len = built.write_into(&mut buf)?;
    /// let mut entries = Snapshot::parse(&buf[..len])?.replica_map().iter();
    /// let mut nodes = Vec::new();
    /// let (key, list) = entries.next_with_nodes(|node| nodes.push(node)).unwrap();
    /// assert_eq!((key.as_str(), list.len()), (Some("h1"), 2));
    /// assert_eq!(nodes.iter().map(|n| n.as_str()).collect::<Vec<_>>(), [Some("node-a"), Some("node-b")]);
    /// assert!(entries.next_with_nodes(|_| unreachable!()).is_none());
    /// # Ok::<(), membrane_frame::Error>(())
    /// ```
    #[inline]
    pub fn next_with_nodes(
        &mut self,
        mut each_node: impl FnMut(JsonStr<'a>),
    ) -> Option<(JsonStr<'a>, ReplicaNodes<'a>)> {
        match &mut self.0 {
            MapRepr::Values(values) => values.next().map(|&(k, nodes)| {
                nodes.iter().for_each(|node| each_node(JsonStr::from_plain(node)));
                (JsonStr::from_plain(k), ReplicaNodes(NodesRepr::Values(nodes)))
            }),
            MapRepr::Text(entries) => {
                let entry = entries.next_with_items(each_node)?;
                let nodes = NodesRepr::Text { text: self.1, at: entry.value_at, len: entry.array_len };
                Some((entry.key, ReplicaNodes(nodes)))
            }
            MapRepr::Indexed(index, words) => {
                let (key, nodes) = index.next_list(words)?;
                // Read here, not through `ReplicaNodes::iter`, whose match over every
                // kind of list cost the microcontroller build 244 bytes.
                let mut each = nodes;
                while let Some(node) = index.next_string(&mut each) {
                    each_node(node);
                }
                Some((key, ReplicaNodes(NodesRepr::Indexed(*index, nodes))))
            }
        }
    }

    /// The next `room` entries at most whose node ids number `node_room` at most in all:
    /// each node id handed to `each_node` with its place among them, then the entry's
    /// place and key to `each_entry` with the number of node ids handed out so far; the
    /// last entry as [`next`](Iterator::next) gives it, `Ok(None)` when the map had
    /// ended. Reading stops before an entry whose node ids do not fit what is left of
    /// `node_room`; when that is the first, nothing is read and `Err` gives their number.
    /// A batch as the C ABI's `mbr_snapshot_cursor_read_replica` hands it out: over the
    /// index of a [`parse_indexed`](Snapshot::parse_indexed) snapshot only its words are
    /// read, not the text. Without one, a list is counted as it is read, so `each_node`
    /// may also get the node ids of an entry that then does not fit, at places from
    /// that entry's on.
    ///
    /// ```
    /// use membrane_frame::snapshot::Snapshot;
    /// let text = br#"{"captured_at": 0.5, "cluster_epoch": 3, "membership": [], "schema_version": 5, "server": {"error_count": 0, "request_count": 0}, "shards": {"primary_map": {}, "replica_map": {"h1": ["n1", "n2"], "h2": ["n3"], "h3": ["n4", "n5"]}}}"#;
    /// let mut index = [0u32; 19];
    /// let snapshot = Snapshot::parse_indexed(text, &mut index)?;
    /// let mut entries = snapshot.replica_map().iter();
    /// let mut ends = Vec::new();
    /// let last = entries.read_raw(3, 4, |_, _| {}, |_, key, end| ends.push((key.bytes, end)));
    /// assert_eq!(ends, [(&b"h1"[..], 2), (b"h2", 3)]);
    /// assert_eq!(last.map(|read| read.map(|(key, nodes)| (key.as_str(), nodes.len()))), Ok(Some((Some("h2"), 1))));
    /// assert_eq!(entries.read_raw(3, 1, |_, _| {}, |_, _, _| {}).map(|read| read.is_some()), Err(2));
    /// # Ok::<(), membrane_frame::Error>(())
    /// ```
    #[allow(clippy::type_complexity)] // the last entry as `next` gives it, or a count
    pub fn read_raw(
        &mut self,
        room: usize,
        node_room: usize,
        mut each_node: impl FnMut(usize, RawStr<'a>),
        mut each_entry: impl FnMut(usize, RawStr<'a>, usize),
    ) -> Result<Option<(JsonStr<'a>, ReplicaNodes<'a>)>, usize> {
        let mut used = 0;
        // On microcontrollers through `next_with_nodes`, as `PrimaryEntries::read_raw`.
        #[cfg(target_pointer_width = "64")]
        if let MapRepr::Indexed(index, words) = &mut self.0 {
            // The words of the last entry read, made into strings once at the end.
            let mut last = None;
            for place in 0..room {
                let entry = *words;
                let mut rest = *words;
                let Some((key, mut nodes)) = index.next_raw_list(&mut rest) else { break };
                // Counted before it is read: an entry that does not fit is not touched.
                let count = nodes.len() / 2;
                if count > node_room - used {
                    if place == 0 {
                        return Err(count);
                    }
                    break;
                }
                while let Some(node) = index.next_raw(&mut nodes) {
                    each_node(used, node);
                    used += 1;
                }
                *words = rest;
                each_entry(place, key, used);
                last = Some(entry);
            }
            let nodes_of = |(key, nodes)| (key, ReplicaNodes(NodesRepr::Indexed(*index, nodes)));
            return Ok(last.and_then(|mut entry| index.next_list(&mut entry)).map(nodes_of));
        }
        let mut last = None;
        for place in 0..room {
            let before = self.clone();
            let mut end = used;
            let Some((key, nodes)) = self.next_with_nodes(|node| {
                each_node(end, node.into());
                end += 1;
            }) else {
                break;
            };
            if end > node_room {
                *self = before;
                if place == 0 {
                    return Err(nodes.len());
                }
                break;
            }
            each_entry(place, key.into(), end);
            used = end;
            last = Some((key, nodes));
        }
        Ok(last)
    }
}

impl<'a> Iterator for ReplicaEntries<'a> {
    type Item = (JsonStr<'a>, ReplicaNodes<'a>);

    fn next(&mut self) -> Option<(JsonStr<'a>, ReplicaNodes<'a>)> {
        self.next_with_nodes(|_| {})
    }
}

/// The replica node ids of one hash, in stored order.
#[derive(Clone, Copy, Debug)]
pub struct ReplicaNodes<'a>(NodesRepr<'a>);

#[derive(Clone, Copy, Debug)]
enum NodesRepr<'a> {
    /// The array at `at`, of `len` strings (counted when the map walk passed it).
    Text {
        text: &'a str,
        at: usize,
        len: usize,
    },
    /// The node words of an indexed entry.
    Indexed(MapIndex<'a>, &'a [u32]),
    Values(&'a [&'a str]),
}

impl<'a> ReplicaNodes<'a> {
    /// The node ids.
    pub fn iter(&self) -> ReplicaNodeIter<'a> {
        match self.0 {
            NodesRepr::Text { text, at, .. } => ReplicaNodeIter(NodeIterRepr::Text(StringArray::new(text, at))),
            NodesRepr::Indexed(index, nodes) => ReplicaNodeIter(NodeIterRepr::Indexed(index, nodes)),
            NodesRepr::Values(values) => ReplicaNodeIter(NodeIterRepr::Values(values.iter())),
        }
    }

    /// Number of node ids.
    pub fn len(&self) -> usize {
        match self.0 {
            NodesRepr::Values(values) => values.len(),
            NodesRepr::Text { len, .. } => len,
            NodesRepr::Indexed(_, nodes) => nodes.len() / 2,
        }
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.iter().next().is_none()
    }
}

/// Iterator over [`ReplicaNodes`].
pub struct ReplicaNodeIter<'a>(NodeIterRepr<'a>);

enum NodeIterRepr<'a> {
    Text(StringArray<'a>),
    Indexed(MapIndex<'a>, &'a [u32]),
    Values(core::slice::Iter<'a, &'a str>),
}

impl<'a> Iterator for ReplicaNodeIter<'a> {
    type Item = JsonStr<'a>;

    #[inline]
    fn next(&mut self) -> Option<JsonStr<'a>> {
        match &mut self.0 {
            NodeIterRepr::Values(values) => values.next().map(|v| JsonStr::from_plain(v)),
            NodeIterRepr::Text(nodes) => nodes.next(),
            NodeIterRepr::Indexed(index, nodes) => index.next_string(nodes),
        }
    }
}

/// A validated cluster snapshot (SPEC §5), parsed from a text or built from values.
///
/// ```
/// use membrane_frame::snapshot::Snapshot;
/// let built = Snapshot::builder(7, 1700000000.5).primary_map(&[("h1", "node-a")]).build()?;
/// let mut text = [0u8; 512];
/// let len = built.write_into(&mut text)?;
/// let read = Snapshot::parse(&text[..len])?;
/// assert!(read.is_canonical());
/// assert_eq!(read.cluster_epoch(), 7);
/// assert_eq!(read.primary_map().get("h1").and_then(|node| node.as_str()), Some("node-a"));
/// # Ok::<(), membrane_frame::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Snapshot<'a> {
    source: Option<&'a [u8]>,
    schema_version: i64,
    captured_at: f64,
    cluster_epoch: u64,
    membership: Membership<'a>,
    primary_map: PrimaryMap<'a>,
    replica_map: ReplicaMap<'a>,
    request_count: u64,
    error_count: u64,
}

impl<'a> Snapshot<'a> {
    /// `schema_version` as read (5 or 2); built snapshots are 5. Always written as 5.
    pub fn schema_version(&self) -> i64 {
        self.schema_version
    }

    /// `captured_at`, Unix seconds: finite, `>= 0`.
    pub fn captured_at(&self) -> f64 {
        self.captured_at
    }

    /// `cluster_epoch`.
    pub fn cluster_epoch(&self) -> u64 {
        self.cluster_epoch
    }

    /// `membership`.
    pub fn membership(&self) -> Membership<'a> {
        self.membership
    }

    /// `shards.primary_map`.
    pub fn primary_map(&self) -> PrimaryMap<'a> {
        self.primary_map
    }

    /// `shards.replica_map`.
    pub fn replica_map(&self) -> ReplicaMap<'a> {
        self.replica_map
    }

    /// `server.request_count`.
    pub fn request_count(&self) -> u64 {
        self.request_count
    }

    /// `server.error_count`.
    pub fn error_count(&self) -> u64 {
        self.error_count
    }

    /// The text this snapshot was parsed from (`None` for built ones).
    pub fn source(&self) -> Option<&'a [u8]> {
        self.source
    }

    /// The same snapshot with another `cluster_epoch` (what a checkpoint writes).
    #[must_use]
    pub fn with_cluster_epoch(mut self, cluster_epoch: u64) -> Snapshot<'a> {
        self.cluster_epoch = cluster_epoch;
        self
    }

    /// Start building a snapshot from Rust values.
    ///
    /// ```
    /// use membrane_frame::snapshot::{Member, Snapshot};
    /// let members = [Member { cluster_epoch: Some(3), ..Member::new("n1", "10.0.0.1", 7000) }];
    /// let primary = [("h1", "n1"), ("h2", "n1")]; // sorted by key
    /// let replicas: [(&str, &[&str]); 1] = [("h1", &["n2", "n3"])];
    /// let snapshot = Snapshot::builder(3, 1735600000.5)
    ///     .membership(&members)
    ///     .primary_map(&primary)
    ///     .replica_map(&replicas)
    ///     .server(10, 1)
    ///     .build()?;
    /// let mut out = [0u8; 512];
    /// let len = snapshot.write_into(&mut out)?;
    /// assert_eq!(&out[..len], br#"{"captured_at": 1735600000.5, "cluster_epoch": 3, "membership": [{"cluster_epoch": 3, "host": "10.0.0.1", "node_id": "n1", "port": 7000}], "schema_version": 5, "server": {"error_count": 1, "request_count": 10}, "shards": {"primary_map": {"h1": "n1", "h2": "n1"}, "replica_map": {"h1": ["n2", "n3"]}}}"#);
    /// assert!(Snapshot::builder(3, 0.0).primary_map(&[("b", "n"), ("a", "n")]).build().is_err());
    /// # Ok::<(), membrane_frame::Error>(())
    /// ```
    pub fn builder(cluster_epoch: u64, captured_at: f64) -> SnapshotBuilder<'a> {
        SnapshotBuilder {
            cluster_epoch,
            captured_at,
            membership: &[],
            primary_map: &[],
            replica_map: &[],
            request_count: 0,
            error_count: 0,
        }
    }
}

/// Builds a [`Snapshot`] from Rust values; see [`Snapshot::builder`].
///
/// The maps are slices sorted by key (Rust's `str` order, which is code-point order:
/// `slice.sort_unstable_by(|a, b| a.0.cmp(b.0))`) without repeats, so that writing
/// needs no allocation.
///
/// ```
/// use membrane_frame::snapshot::Snapshot;
/// let replicas: &[(&str, &[&str])] = &[("h1", &["node-b", "node-c"])];
/// let snapshot = Snapshot::builder(3, 1.5).replica_map(replicas).server(10, 1).build()?;
/// assert_eq!(snapshot.replica_map().get("h1").map(|nodes| nodes.len()), Some(2));
/// assert_eq!((snapshot.request_count(), snapshot.error_count()), (10, 1));
/// # Ok::<(), membrane_frame::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct SnapshotBuilder<'a> {
    cluster_epoch: u64,
    captured_at: f64,
    membership: &'a [Member<'a>],
    primary_map: &'a [(&'a str, &'a str)],
    replica_map: &'a [(&'a str, &'a [&'a str])],
    request_count: u64,
    error_count: u64,
}

fn field_error(field: &'static str, reason: &'static str) -> Error {
    Error::new(ErrorCode::SnapshotField, reason).in_field(field)
}

fn is_strictly_sorted<T>(entries: &[(&str, T)]) -> bool {
    entries.windows(2).all(|pair| matches!(pair, [a, b] if a.0 < b.0))
}

impl<'a> SnapshotBuilder<'a> {
    /// `membership`.
    #[must_use]
    pub fn membership(mut self, members: &'a [Member<'a>]) -> Self {
        self.membership = members;
        self
    }

    /// `shards.primary_map`, sorted by key.
    #[must_use]
    pub fn primary_map(mut self, entries: &'a [(&'a str, &'a str)]) -> Self {
        self.primary_map = entries;
        self
    }

    /// `shards.replica_map`, sorted by key.
    #[must_use]
    pub fn replica_map(mut self, entries: &'a [(&'a str, &'a [&'a str])]) -> Self {
        self.replica_map = entries;
        self
    }

    /// `server.request_count` and `server.error_count`.
    #[must_use]
    pub fn server(mut self, request_count: u64, error_count: u64) -> Self {
        self.request_count = request_count;
        self.error_count = error_count;
        self
    }

    /// Check the field rules and make the snapshot: `snapshot_field` for a
    /// `captured_at` that is not finite and `>= 0` or a member `node_id` that is not
    /// 1–128 characters; `invalid_argument` for a map that is not sorted by key or
    /// repeats one.
    pub fn build(self) -> Result<Snapshot<'a>, Error> {
        if !(self.captured_at.is_finite() && self.captured_at >= 0.0) {
            return Err(field_error("captured_at", "captured_at must be a finite number >= 0"));
        }
        if !self.membership.iter().all(|m| is_valid_json_id(&m.node_id)) {
            return Err(field_error("membership.node_id", "node_id must have 1-128 characters"));
        }
        let unsorted = |field| {
            Error::new(ErrorCode::InvalidArgument, "map keys must be sorted by code point and unique").in_field(field)
        };
        if !is_strictly_sorted(self.primary_map) {
            return Err(unsorted("shards.primary_map"));
        }
        if !is_strictly_sorted(self.replica_map) {
            return Err(unsorted("shards.replica_map"));
        }
        Ok(Snapshot {
            source: None,
            schema_version: SCHEMA_VERSION,
            captured_at: self.captured_at,
            cluster_epoch: self.cluster_epoch,
            membership: Membership { repr: Repr::Values(self.membership), len: self.membership.len() },
            primary_map: PrimaryMap { repr: Repr::Values(self.primary_map), len: self.primary_map.len(), index: None },
            replica_map: ReplicaMap { repr: Repr::Values(self.replica_map), len: self.replica_map.len(), index: None },
            request_count: self.request_count,
            error_count: self.error_count,
        })
    }
}

/// The epoch guard (SPEC §5): with live epoch `live_epoch`, a snapshot whose
/// `cluster_epoch` is `persisted` is accepted iff `persisted >= live_epoch - 1` (equal,
/// one behind, or ahead). Two or more behind, or no epoch at all, is `stale_epoch`.
///
/// ```
/// use membrane_frame::snapshot::check_epoch;
/// assert!(check_epoch(10, Some(10)).is_ok() && check_epoch(10, Some(9)).is_ok() && check_epoch(10, Some(11)).is_ok());
/// assert!(check_epoch(10, Some(8)).is_err() && check_epoch(10, None).is_err());
/// assert!(check_epoch(0, Some(0)).is_ok());
/// ```
pub fn check_epoch(live_epoch: u64, persisted: Option<u64>) -> Result<(), Error> {
    match persisted {
        None => Err(Error::new(ErrorCode::StaleEpoch, "snapshot has no cluster_epoch").in_field("cluster_epoch")),
        Some(epoch) if epoch.saturating_add(1) >= live_epoch => Ok(()),
        Some(_) => Err(Error::new(ErrorCode::StaleEpoch, "snapshot epoch is two or more behind the live epoch")
            .in_field("cluster_epoch")),
    }
}

#[cfg(test)]
mod tests;
