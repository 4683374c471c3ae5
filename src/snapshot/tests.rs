//! Unit tests of the snapshot's builder rules and of its views, built and parsed.

use super::*;
use std::format;
use std::string::String;
use std::vec::Vec;

const MEMBERS: [Member<'static>; 2] = [Member::new("n1", "10.0.0.1", 7000), Member::new("n2", "10.0.0.2", 7001)];
const PRIMARY: [(&str, &str); 2] = [("h1", "n1"), ("h2", "n2")];
const REPLICAS: [(&str, &[&str]); 2] = [("h1", &["n2", "n3"]), ("h2", &[])];

fn built() -> Snapshot<'static> {
    Snapshot::builder(4, 12.5)
        .membership(&MEMBERS)
        .primary_map(&PRIMARY)
        .replica_map(&REPLICAS)
        .server(9, 2)
        .build()
        .unwrap()
}

fn strings<'a>(items: impl Iterator<Item = JsonStr<'a>>) -> Vec<String> {
    items.map(|item| item.to_string()).collect()
}

/// Every view of `snapshot` against the values `built()` was made of.
fn check_views(snapshot: &Snapshot<'_>) {
    assert_eq!(snapshot.schema_version(), 5);
    assert_eq!((snapshot.cluster_epoch(), snapshot.captured_at()), (4, 12.5));
    assert_eq!((snapshot.request_count(), snapshot.error_count()), (9, 2));
    let membership = snapshot.membership();
    assert_eq!((membership.len(), membership.is_empty()), (2, false));
    let ids: Vec<String> = membership.iter().map(|m| m.node_id.to_string()).collect();
    assert_eq!(ids, ["n1", "n2"]);
    let primary = snapshot.primary_map();
    assert_eq!((primary.len(), primary.is_empty()), (2, false));
    assert_eq!(primary.get("h2").map(|node| node.to_string()), Some("n2".into()));
    assert_eq!(primary.get("h3"), None);
    let pairs: Vec<(String, String)> = primary.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    assert_eq!(pairs, [("h1".into(), "n1".into()), ("h2".into(), "n2".into())]);
    let replicas = snapshot.replica_map();
    assert_eq!((replicas.len(), replicas.is_empty()), (2, false));
    let h1 = replicas.get("h1").unwrap();
    assert_eq!((h1.len(), h1.is_empty()), (2, false));
    assert_eq!(strings(h1.iter()), ["n2", "n3"]);
    let h2 = replicas.get("h2").unwrap();
    assert_eq!((h2.len(), h2.is_empty()), (0, true));
    assert!(replicas.get("h0").is_none());
    let keys: Vec<String> = replicas.iter().map(|(k, nodes)| format!("{k}:{}", nodes.len())).collect();
    assert_eq!(keys, ["h1:2", "h2:0"]);
    // One pass: the same entries, each node handed out as the walk reads it.
    let mut entries = replicas.iter();
    let mut walked = Vec::new();
    loop {
        let mut nodes = Vec::new();
        let Some((key, list)) = entries.next_with_nodes(|node| nodes.push(node.to_string())) else {
            break;
        };
        assert_eq!(nodes, strings(list.iter()));
        walked.push(format!("{key}:{}", nodes.join(",")));
    }
    assert_eq!(walked, ["h1:n2,n3", "h2:"]);
    assert!(entries.next().is_none());
}

#[test]
fn built_and_parsed_snapshots_show_the_same_values() {
    let snapshot = built();
    assert_eq!(snapshot.source(), None);
    check_views(&snapshot);
    let mut out = [0u8; 1024];
    let len = snapshot.write_into(&mut out).unwrap();
    let parsed = Snapshot::parse(&out[..len]).unwrap();
    assert_eq!(parsed.source(), Some(&out[..len]));
    check_views(&parsed);
    for snapshot in [built(), parsed] {
        assert!(check_raw_batches(&snapshot, 1, 2));
        assert!(!check_raw_batches(&snapshot, 2, 1));
    }
}

#[test]
fn empty_views_are_empty() {
    let snapshot = Snapshot::builder(0, 0.0).build().unwrap();
    for s in [snapshot, Snapshot::parse(br#"{"captured_at": 0, "cluster_epoch": 0, "membership": [], "schema_version": 5, "server": {"error_count": 0, "request_count": 0}, "shards": {"primary_map": {}, "replica_map": {}}}"#).unwrap()] {
        assert!(s.membership().is_empty() && s.primary_map().is_empty() && s.replica_map().is_empty());
        assert_eq!((s.membership().len(), s.primary_map().len(), s.replica_map().len()), (0, 0, 0));
    }
}

#[test]
fn the_builder_refuses_each_rule_with_its_field() {
    let long = "n".repeat(129);
    let bad_members = [Member::new("", "h", 1)];
    let long_members = [Member::new(&long, "h", 1)];
    let cases: [(SnapshotBuilder<'_>, ErrorCode, &str); 9] = [
        (Snapshot::builder(1, f64::NAN), ErrorCode::SnapshotField, "captured_at"),
        (Snapshot::builder(1, f64::INFINITY), ErrorCode::SnapshotField, "captured_at"),
        (Snapshot::builder(1, -0.5), ErrorCode::SnapshotField, "captured_at"),
        (Snapshot::builder(1, 0.0).membership(&bad_members), ErrorCode::SnapshotField, "membership.node_id"),
        (Snapshot::builder(1, 0.0).membership(&long_members), ErrorCode::SnapshotField, "membership.node_id"),
        (
            Snapshot::builder(1, 0.0).primary_map(&[("b", "n"), ("a", "n")]),
            ErrorCode::InvalidArgument,
            "shards.primary_map",
        ),
        (
            Snapshot::builder(1, 0.0).primary_map(&[("a", "n"), ("a", "m")]),
            ErrorCode::InvalidArgument,
            "shards.primary_map",
        ),
        (
            Snapshot::builder(1, 0.0).replica_map(&[("b", &[]), ("a", &[])]),
            ErrorCode::InvalidArgument,
            "shards.replica_map",
        ),
        (
            Snapshot::builder(1, 0.0).replica_map(&[("a", &[]), ("a", &[])]),
            ErrorCode::InvalidArgument,
            "shards.replica_map",
        ),
    ];
    for (builder, code, field) in cases {
        let err = builder.build().unwrap_err();
        assert_eq!((err.code(), err.field()), (code, Some(field)), "{field}");
    }
    // The edges that are allowed: 0.0, one member id of 128 characters, keys in order.
    let edge = "n".repeat(128);
    let edge_members = [Member::new(&edge, "h", 1)];
    assert!(Snapshot::builder(1, 0.0).membership(&edge_members).primary_map(&[("a", "n"), ("b", "n")]).build().is_ok());
}

/// A snapshot text whose shard maps hold `entries` entries each (`json`'s generated
/// maps: strings plain, escaped or non-ASCII, spaced in every way JSON allows), the maps
/// in either order, with an unknown member beside them.
fn generated_snapshot(state: &mut u64, entries: usize) -> String {
    let primary = crate::json::generated_map(state, entries, false);
    let replica = crate::json::generated_map(state, entries, true);
    let shards = if state.is_multiple_of(2) {
        format!(r#"{{"primary_map": {primary}, "other": {{"a": ["b"]}}, "replica_map": {replica}}}"#)
    } else {
        format!(r#"{{"replica_map": {replica},"primary_map":{primary}}}"#)
    };
    format!(
        r#"{{"captured_at": 1.5, "cluster_epoch": 2, "membership": [], "schema_version": 5, "server": {{"error_count": 0, "request_count": 1}}, "shards": {shards}}}"#
    )
}

/// Everything the maps' iterators hand out: primary entries, replica entries, and the
/// replica entries as `next_with_nodes` reads them.
type MapContents = (Vec<(String, String)>, Vec<(String, Vec<String>)>, Vec<String>);

fn map_contents(snapshot: &Snapshot<'_>) -> MapContents {
    let primary = snapshot.primary_map().iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let replica = snapshot.replica_map().iter().map(|(k, nodes)| (k.to_string(), strings(nodes.iter()))).collect();
    // The one-pass read: each node handed out as it is read, the count, the list again.
    let mut walked = Vec::new();
    let mut entries = snapshot.replica_map().iter();
    loop {
        let mut nodes = Vec::new();
        let Some((key, list)) = entries.next_with_nodes(|node| nodes.push(node.to_string())) else {
            break;
        };
        assert_eq!((list.len(), list.is_empty()), (nodes.len(), nodes.is_empty()));
        walked.push(format!("{key}: {}", nodes.join(", ")));
    }
    (primary, replica, walked)
}

/// A string by where it lies: raw strings are views in place, as the iterators' are.
fn place(value: RawStr<'_>) -> (*const u8, usize, bool) {
    (value.bytes.as_ptr(), value.bytes.len(), value.has_escapes)
}

/// The maps read through `read_raw` in batches of `room` entries and `node_room` node
/// ids, against their iterators: the same strings in the same places, each batch's last
/// entry as `next` gave it, a batch cut short only by an entry whose node ids do not fit
/// what is left, and that entry refused with their number when it comes first (the
/// iterator not moved). Whether every replica entry was read.
fn check_raw_batches(snapshot: &Snapshot<'_>, room: usize, node_room: usize) -> bool {
    let expected: Vec<_> = snapshot.primary_map().iter().collect();
    let mut entries = snapshot.primary_map().iter();
    let mut read = Vec::new();
    loop {
        let before = read.len();
        let last = entries.read_raw(room, |key, node| read.push((place(key), place(node))));
        let batch = read.len() - before;
        assert!(batch <= room);
        assert_eq!(last, read.len().checked_sub(1).filter(|_| batch > 0).map(|at| expected[at]));
        if batch == 0 {
            break;
        }
    }
    let places: Vec<_> = expected.iter().map(|&(key, node)| (place(key.into()), place(node.into()))).collect();
    assert_eq!(read, places);

    let expected: Vec<_> =
        snapshot.replica_map().iter().map(|(key, nodes)| (key, nodes.iter().collect::<Vec<_>>())).collect();
    let mut entries = snapshot.replica_map().iter();
    let mut read = Vec::new();
    loop {
        let (mut nodes, mut heads) = (Vec::new(), Vec::new());
        let result = entries.read_raw(
            room,
            node_room,
            |at, node| nodes.push((at, place(node))),
            |at, key, end| heads.push((at, place(key), end)),
        );
        let next = expected.get(read.len());
        let last = match result {
            Err(needed) => {
                let (key, list) = next.unwrap();
                assert_eq!((heads.len(), needed), (0, list.len()));
                assert!(needed > node_room);
                assert_eq!(entries.clone().next().map(|(key, _)| key), Some(*key));
                break;
            }
            Ok(last) => last,
        };
        let mut start = 0;
        for (at, &(head_at, key, end)) in heads.iter().enumerate() {
            assert_eq!(head_at, at);
            // The node ids handed at places start..end: an entry that did not fit may
            // have had its own handed out at places from the end on.
            let list: Vec<_> = (start..end)
                .map(|at| nodes.iter().rev().find(|(place, _)| *place == at).map(|&(_, node)| node))
                .collect::<Option<_>>()
                .unwrap();
            read.push((key, list));
            start = end;
        }
        assert!(heads.len() <= room && start <= node_room);
        let Some(last) = last else {
            assert!(heads.is_empty());
            break;
        };
        let (key, list) = &expected[read.len() - 1];
        assert_eq!((last.0, last.1.iter().collect::<Vec<_>>()), (*key, list.clone()));
        if heads.len() < room {
            // Cut short: the map has ended or the next entry does not fit.
            assert!(expected.get(read.len()).is_none_or(|(_, list)| list.len() > node_room - start));
        }
    }
    let places: Vec<_> = expected
        .iter()
        .map(|(key, list)| (place((*key).into()), list.iter().map(|&node| place(node.into())).collect::<Vec<_>>()))
        .collect();
    assert_eq!(read, places[..read.len()]);
    read.len() == expected.len()
}

#[test]
fn an_indexed_snapshot_reads_what_the_text_holds() {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    for entries in [0, 1, 2, 7, if cfg!(miri) { 9 } else { 300 }] {
        for _ in 0..if cfg!(miri) { 1 } else { 20 } {
            let text = generated_snapshot(&mut state, entries);
            let parsed = Snapshot::parse(text.as_bytes());
            assert!(parsed.is_ok(), "{parsed:?}: {text}");
            let parsed = parsed.unwrap();
            assert!(parsed.primary_map().index.is_none() && parsed.replica_map().index.is_none());
            let needed = match Snapshot::parse_indexed(text.as_bytes(), &mut []) {
                Ok(_) => 0,
                Err(err) => {
                    assert_eq!(err.code(), ErrorCode::BufferTooSmall, "{err}");
                    err.needed().unwrap() as usize
                }
            };
            // Four words a primary entry, three a replica entry and two a node.
            let nodes: usize = parsed.replica_map().iter().map(|(_, nodes)| nodes.len()).sum();
            assert_eq!(needed, 4 * entries + 3 * entries + 2 * nodes);
            let mut index = std::vec![0u32; needed + 3];
            let indexed = Snapshot::parse_indexed(text.as_bytes(), &mut index).unwrap();
            assert!(indexed.primary_map().index.is_some() && indexed.replica_map().index.is_some());
            assert_eq!((indexed.primary_map().len(), indexed.replica_map().len()), (entries, entries));
            assert_eq!(map_contents(&indexed), map_contents(&parsed), "{text}");
            let batches: &[(usize, usize)] =
                if cfg!(miri) { &[(1, 1), (3, 64)] } else { &[(1, 0), (1, 1), (2, 3), (3, 64), (256, 1024)] };
            for &(room, node_room) in batches {
                let whole = check_raw_batches(&indexed, room, node_room);
                assert_eq!(check_raw_batches(&parsed, room, node_room), whole, "{text}");
                assert!(whole || node_room < 3);
            }
            // Escapes are known without reading the text again.
            let escapes = |snapshot: &Snapshot<'_>| -> Vec<bool> {
                snapshot.primary_map().iter().flat_map(|(k, v)| [k.has_escapes(), v.has_escapes()]).collect()
            };
            assert_eq!(escapes(&indexed), escapes(&parsed));
            let mut written = [Vec::new(), Vec::new()];
            for (out, snapshot) in written.iter_mut().zip([&parsed, &indexed]) {
                *out = std::vec![0u8; snapshot.encoded_len()];
                snapshot.write_into(out).unwrap();
            }
            assert_eq!(written[0], written[1]);
            // The words past those needed are not touched.
            assert_eq!(&index[needed..], &[0, 0, 0]);
        }
    }
}

#[test]
fn an_index_too_short_is_buffer_too_small_after_every_problem_of_the_text() {
    let text = br#"{"captured_at": 1.5, "cluster_epoch": 2, "membership": [], "schema_version": 5, "server": {"error_count": 0, "request_count": 1}, "shards": {"primary_map": {"h1": "n1", "h2": "n2"}, "replica_map": {"h1": ["n2"]}}}"#;
    for len in 0..13 {
        let mut index = std::vec![0u32; len];
        let err = Snapshot::parse_indexed(text, &mut index).unwrap_err();
        assert_eq!((err.code(), err.needed()), (ErrorCode::BufferTooSmall, Some(13)), "{len} words");
    }
    assert!(Snapshot::parse_indexed(text, &mut [0u32; 13]).is_ok());
    // A problem of the text wins, whatever the index.
    let bad_epoch = String::from_utf8_lossy(text).replace("\"cluster_epoch\": 2", "\"cluster_epoch\": -2");
    let bad_value = String::from_utf8_lossy(text).replace("\"n2\"}", "2}");
    let bad_json = String::from_utf8_lossy(text).replace("\"h2\"", "\"h1\"");
    for text in [bad_epoch, bad_value, bad_json] {
        let expected = Snapshot::parse(text.as_bytes()).unwrap_err();
        for len in [0, 13, 64] {
            assert_eq!(Snapshot::parse_indexed(text.as_bytes(), &mut std::vec![0u32; len]).unwrap_err(), expected);
        }
    }
}
