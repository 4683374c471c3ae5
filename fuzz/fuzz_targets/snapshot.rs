//! Cluster snapshots (SPEC §5): the reader never panics; every accessor and iterator of
//! an accepted snapshot is safe; the writer's text re-reads and re-writes to itself;
//! the indexed parse gives the same verdict, and its maps the same entries, one by one
//! and in batches.
#![no_main]

use libfuzzer_sys::fuzz_target;
use membrane_frame::json::{JsonStr, RawStr};
use membrane_frame::snapshot::Snapshot;

fn write(snapshot: &Snapshot<'_>) -> Vec<u8> {
    let mut out = vec![0u8; snapshot.encoded_len()];
    let len = snapshot.write_into(&mut out).expect("encoded_len is enough");
    assert_eq!(len, out.len());
    out
}

/// The maps' entries as the iterators hand them out.
fn map_entries(snapshot: &Snapshot<'_>) -> (Vec<(String, String)>, Vec<(String, Vec<String>)>) {
    let primary = snapshot.primary_map().iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let replica = snapshot
        .replica_map()
        .iter()
        .map(|(k, nodes)| (k.to_string(), nodes.iter().map(|n| n.to_string()).collect()))
        .collect();
    (primary, replica)
}

/// A string as its text spells it, and whether it holds escapes.
type Raw = (Vec<u8>, bool);

fn owned(value: RawStr<'_>) -> Raw {
    (value.bytes.to_vec(), value.has_escapes)
}

fn raw(value: JsonStr<'_>) -> Raw {
    owned(value.into())
}

/// The maps' entries as the iterators hand them out, each string as its text spells it.
fn raw_entries(snapshot: &Snapshot<'_>) -> (Vec<(Raw, Raw)>, Vec<(Raw, Vec<Raw>)>) {
    let primary = snapshot.primary_map().iter().map(|(k, v)| (raw(k), raw(v))).collect();
    let replica = snapshot.replica_map().iter().map(|(k, nodes)| (raw(k), nodes.iter().map(raw).collect())).collect();
    (primary, replica)
}

/// The maps' entries as `read_raw` hands them out, in batches of `room` entries and
/// `node_room` node ids (an entry refused for more node ids is read alone with room for
/// them), each batch's last entry checked against what it handed out.
fn batched_entries(snapshot: &Snapshot<'_>, room: usize, node_room: usize) -> (Vec<(Raw, Raw)>, Vec<(Raw, Vec<Raw>)>) {
    let (mut primary, mut replica) = (Vec::new(), Vec::new());
    let mut entries = snapshot.primary_map().iter();
    while let Some((key, node)) = entries.read_raw(room, |k, v| primary.push((owned(k), owned(v)))) {
        assert_eq!(primary.last(), Some(&(raw(key), raw(node))), "a batch's last entry");
    }
    let mut entries = snapshot.replica_map().iter();
    loop {
        let mut nodes = Vec::new();
        let mut heads = Vec::new();
        let read = match entries.read_raw(
            room,
            node_room,
            |at, n| nodes.push((at, owned(n))),
            |_, k, end| heads.push((owned(k), end)),
        ) {
            Ok(read) => read,
            Err(needed) => {
                assert!(needed > node_room, "refused an entry that fits");
                nodes.clear();
                entries
                    .read_raw(1, needed, |at, n| nodes.push((at, owned(n))), |_, k, end| heads.push((owned(k), end)))
                    .expect("room for its node ids")
            }
        };
        let Some((key, list)) = read else { break };
        let mut start = 0;
        for (head, end) in heads {
            // Node ids handed out for an entry that then did not fit lie past the end.
            let list: Vec<Raw> =
                nodes.iter().filter(|(at, _)| (start..end).contains(at)).map(|(_, n)| n.clone()).collect();
            replica.push((head, list));
            start = end;
        }
        let last = replica.last().expect("an entry");
        assert_eq!(last.0, raw(key), "a batch's last entry");
        assert_eq!(last.1.len(), list.len(), "a batch's last entry");
    }
    (primary, replica)
}

/// `Snapshot::parse_indexed` against `parse`'s `result`, with an index of room for
/// `room` words, then of the words it asks for.
fn check_indexed(data: &[u8], result: &Result<Snapshot<'_>, membrane_frame::Error>, room: usize) {
    let mut index = vec![0u32; room];
    let needed = match (Snapshot::parse_indexed(data, &mut index), result) {
        (Err(err), Ok(_)) if err.code() == membrane_frame::ErrorCode::BufferTooSmall => {
            err.needed().expect("a size") as usize
        }
        (Ok(indexed), Ok(parsed)) => {
            assert_eq!(map_entries(&indexed), map_entries(parsed), "indexed maps");
            let expected = raw_entries(parsed);
            let (room, node_room) = (1 + data.len() % 5, data.len() % 4);
            assert_eq!(batched_entries(&indexed, room, node_room), expected, "indexed maps in batches");
            assert_eq!(batched_entries(parsed, room, node_room), expected, "maps in batches");
            return;
        }
        (indexed, parsed) => {
            assert_eq!(indexed.err(), parsed.as_ref().err().copied(), "indexed parse verdict");
            return;
        }
    };
    assert!(needed > room, "asks for more than it was given");
    let mut index = vec![0u32; needed];
    let indexed = Snapshot::parse_indexed(data, &mut index).expect("the words it asked for are enough");
    if let Ok(parsed) = result {
        assert_eq!(map_entries(&indexed), map_entries(parsed), "indexed maps");
    }
}

fuzz_target!(|data: &[u8]| {
    let _ = Snapshot::parse_guarded(data, data.len() as u64 % 8);
    let result = Snapshot::parse(data);
    check_indexed(data, &result, data.len() % 64);
    let snapshot = match result {
        Ok(snapshot) => snapshot,
        Err(err) => {
            let _ = err.to_string();
            return;
        }
    };
    let members = snapshot.membership();
    assert_eq!(members.iter().count(), members.len());
    for member in members.iter() {
        let _ = (member.node_id.to_string(), member.host.to_string(), member.port);
    }
    let primary = snapshot.primary_map();
    assert_eq!(primary.iter().count(), primary.len());
    for (hash, node) in primary.iter() {
        let _ = (hash, node);
    }
    let replica = snapshot.replica_map();
    assert_eq!(replica.iter().count(), replica.len());
    for (hash, nodes) in replica.iter() {
        assert_eq!(nodes.iter().count(), nodes.len());
        let _ = hash;
    }
    let _ = (snapshot.captured_at(), snapshot.cluster_epoch(), snapshot.request_count(), snapshot.error_count());
    let out = write(&snapshot);
    assert_eq!(snapshot.is_canonical(), out == data, "canonical flag");
    let again = Snapshot::parse(&out).expect("written snapshot re-reads");
    assert_eq!(write(&again), out, "re-emission is a fixed point");
    assert_eq!(again.cluster_epoch(), snapshot.cluster_epoch());
    assert_eq!(again.captured_at().to_bits(), snapshot.captured_at().to_bits());
});
