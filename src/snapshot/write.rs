//! Writing a snapshot (SPEC §5): the original's `json.dumps(payload, sort_keys=True)`.

use super::{Member, NodeIterRepr, PrimaryMap, ReplicaMap, ReplicaNodeIter, Repr, Snapshot};
use crate::error::Error;
use crate::identity::write_u64;
use crate::json::keys::for_each_sorted;
use crate::json::{write_escaped, JsonStr, StringArray};
use crate::pyfloat::write_repr;
use crate::sink::{encoded_len_of, write_into_checked, writes_exactly, ByteSink};

impl Snapshot<'_> {
    /// Write the snapshot: keys sorted at every level, separators `", "` / `": "`, ASCII
    /// escaping, `captured_at` as Python `repr(float)`, `schema_version` 5. Members keep
    /// their order and write only the fields they have; unknown keys of a parsed text
    /// are not written. Maps of a parsed text whose keys were not in order are written
    /// in order (a bounded-memory selection, `O(n²/256)` key comparisons).
    pub fn write_to<S: ByteSink + ?Sized>(&self, sink: &mut S) -> Result<(), S::Error> {
        sink.write_bytes(b"{\"captured_at\": ")?;
        write_repr(sink, self.captured_at)?;
        sink.write_bytes(b", \"cluster_epoch\": ")?;
        write_u64(sink, self.cluster_epoch)?;
        sink.write_bytes(b", \"membership\": [")?;
        for (i, member) in self.membership.iter().enumerate() {
            if i > 0 {
                sink.write_bytes(b", ")?;
            }
            write_member(sink, &member)?;
        }
        sink.write_bytes(b"], \"schema_version\": 5, \"server\": {\"error_count\": ")?;
        write_u64(sink, self.error_count)?;
        sink.write_bytes(b", \"request_count\": ")?;
        write_u64(sink, self.request_count)?;
        sink.write_bytes(b"}, \"shards\": {\"primary_map\": ")?;
        write_primary(sink, &self.primary_map)?;
        sink.write_bytes(b", \"replica_map\": ")?;
        write_replica(sink, &self.replica_map)?;
        sink.write_bytes(b"}}")
    }

    /// Length in bytes of the written snapshot.
    pub fn encoded_len(&self) -> usize {
        encoded_len_of(|sink| self.write_to(sink))
    }

    /// Write the snapshot into `out`; its length, or `buffer_too_small` with the
    /// length needed (and `out` untouched).
    pub fn write_into(&self, out: &mut [u8]) -> Result<usize, Error> {
        write_into_checked(out, self.encoded_len(), |sink| self.write_to(sink))
    }

    /// Whether the text this snapshot was parsed from is byte for byte what
    /// [`write_to`](Self::write_to) emits. Built snapshots are canonical by
    /// construction.
    pub fn is_canonical(&self) -> bool {
        self.source.is_none_or(|source| writes_exactly(source, |sink| self.write_to(sink)))
    }
}

fn write_bool<S: ByteSink + ?Sized>(sink: &mut S, value: bool) -> Result<(), S::Error> {
    sink.write_bytes(if value { b"true" } else { b"false" })
}

fn write_member<S: ByteSink + ?Sized>(sink: &mut S, member: &Member<'_>) -> Result<(), S::Error> {
    // Keys in sorted order: cluster_epoch, healthy, host, missed_heartbeats, node_id,
    // port, suspect.
    sink.write_bytes(b"{")?;
    if let Some(epoch) = member.cluster_epoch {
        sink.write_bytes(b"\"cluster_epoch\": ")?;
        write_u64(sink, epoch)?;
        sink.write_bytes(b", ")?;
    }
    if let Some(healthy) = member.healthy {
        sink.write_bytes(b"\"healthy\": ")?;
        write_bool(sink, healthy)?;
        sink.write_bytes(b", ")?;
    }
    sink.write_bytes(b"\"host\": ")?;
    write_escaped(sink, &member.host)?;
    if let Some(missed) = member.missed_heartbeats {
        sink.write_bytes(b", \"missed_heartbeats\": ")?;
        write_u64(sink, missed)?;
    }
    sink.write_bytes(b", \"node_id\": ")?;
    write_escaped(sink, &member.node_id)?;
    sink.write_bytes(b", \"port\": ")?;
    write_u64(sink, u64::from(member.port))?;
    if let Some(suspect) = member.suspect {
        sink.write_bytes(b", \"suspect\": ")?;
        write_bool(sink, suspect)?;
    }
    sink.write_bytes(b"}")
}

/// Write `"key": ` with the separator before it when it is not the first.
fn write_key<S: ByteSink + ?Sized>(sink: &mut S, first: &mut bool, key: &JsonStr<'_>) -> Result<(), S::Error> {
    if !*first {
        sink.write_bytes(b", ")?;
    }
    *first = false;
    write_escaped(sink, key)?;
    sink.write_bytes(b": ")
}

fn write_primary<S: ByteSink + ?Sized>(sink: &mut S, map: &PrimaryMap<'_>) -> Result<(), S::Error> {
    sink.write_bytes(b"{")?;
    let mut first = true;
    match map.repr {
        Repr::Values(values) => {
            for &(key, node) in values {
                write_key(sink, &mut first, &JsonStr::from_plain(key))?;
                write_escaped(sink, &JsonStr::from_plain(node))?;
            }
        }
        Repr::Text { text, at, sorted } => for_each_sorted(text, at, sorted, |key, value_at| {
            write_key(sink, &mut first, &key)?;
            let node = JsonStr::read_at(text, value_at).map_or(JsonStr::from_plain(""), |(node, _)| node);
            write_escaped(sink, &node)
        })?,
    }
    sink.write_bytes(b"}")
}

// One iterator type for both kinds of list: the writer is compiled once per sink.
fn write_nodes<S: ByteSink + ?Sized>(sink: &mut S, nodes: ReplicaNodeIter<'_>) -> Result<(), S::Error> {
    sink.write_bytes(b"[")?;
    for (i, node) in nodes.enumerate() {
        if i > 0 {
            sink.write_bytes(b", ")?;
        }
        write_escaped(sink, &node)?;
    }
    sink.write_bytes(b"]")
}

fn write_replica<S: ByteSink + ?Sized>(sink: &mut S, map: &ReplicaMap<'_>) -> Result<(), S::Error> {
    sink.write_bytes(b"{")?;
    let mut first = true;
    match map.repr {
        Repr::Values(values) => {
            for &(key, nodes) in values {
                write_key(sink, &mut first, &JsonStr::from_plain(key))?;
                write_nodes(sink, ReplicaNodeIter(NodeIterRepr::Values(nodes.iter())))?;
            }
        }
        Repr::Text { text, at, sorted } => for_each_sorted(text, at, sorted, |key, value_at| {
            write_key(sink, &mut first, &key)?;
            write_nodes(sink, ReplicaNodeIter(NodeIterRepr::Text(StringArray::new(text, value_at))))
        })?,
    }
    sink.write_bytes(b"}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsorted_maps_are_written_sorted_and_members_keep_only_their_fields() {
        let text = r#"{"server": {"request_count": 2, "error_count": 1, "x": 0}, "schema_version": 2, "shards": {"replica_map": {"z": [], "\u00e9": ["b", "a"], "a": ["n"]}, "primary_map": {"b": "2", "a": "1"}}, "membership": [{"port": 1, "node_id": "n", "host": "h", "lease": {}}], "cluster_epoch": 3, "captured_at": 10}"#;
        let snapshot = Snapshot::parse(text.as_bytes()).unwrap();
        assert!(!snapshot.is_canonical());
        let mut out = std::vec![0u8; snapshot.encoded_len()];
        let len = snapshot.write_into(&mut out).unwrap();
        let written = core::str::from_utf8(&out[..len]).unwrap();
        assert_eq!(
            written,
            r#"{"captured_at": 10.0, "cluster_epoch": 3, "membership": [{"host": "h", "node_id": "n", "port": 1}], "schema_version": 5, "server": {"error_count": 1, "request_count": 2}, "shards": {"primary_map": {"a": "1", "b": "2"}, "replica_map": {"a": ["n"], "z": [], "\u00e9": ["b", "a"]}}}"#
        );
        let again = Snapshot::parse(written.as_bytes()).unwrap();
        assert!(again.is_canonical());
        assert!(again.primary_map().iter().count() == 2);
    }
}
