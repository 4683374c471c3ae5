//! Round trips and malformed inputs of the metadata formats (SPEC §5, §6): snapshots,
//! gossip maps and op bodies written → read → written are identical; damaged texts give
//! `snapshot_json` / `snapshot_version` / `snapshot_field` (and the tombstone codes)
//! with offsets inside the text, and never a panic.

use membrane_frame::snapshot::{Member, Snapshot};
use membrane_frame::table::NodeSlot;
use membrane_frame::tombstone::{GossipMap, OpDelete, OpTombstone, TombstoneSlot, TombstoneTable, MAX_GOSSIP_ENTRIES};
use membrane_frame::ErrorCode;
use proptest::prelude::*;

fn write(snapshot: &Snapshot<'_>) -> Vec<u8> {
    let mut out = vec![0u8; snapshot.encoded_len()];
    assert_eq!(snapshot.write_into(&mut out).unwrap(), out.len());
    out
}

/// Strings that exercise the escaping: quotes, backslashes, control and astral
/// characters, U+007F, and plain ASCII.
fn text(max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            4 => prop::char::range('a', 'z'),
            1 => Just('"'),
            1 => Just('\\'),
            1 => Just('/'),
            1 => prop::char::range('\u{0}', '\u{1f}'),
            1 => Just('\u{7f}'),
            1 => Just('\u{e9}'),
            1 => Just('\u{2603}'),
            1 => Just('\u{1f600}'),
        ],
        1..max,
    )
    .prop_map(|chars| chars.into_iter().collect())
}

#[derive(Clone, Debug)]
struct MemberValues {
    node_id: String,
    host: String,
    port: u16,
    cluster_epoch: Option<u64>,
    healthy: Option<bool>,
    suspect: Option<bool>,
    missed_heartbeats: Option<u64>,
}

fn member() -> impl Strategy<Value = MemberValues> {
    (
        text(20),
        text(10),
        any::<u16>(),
        any::<Option<u64>>(),
        any::<Option<bool>>(),
        any::<Option<bool>>(),
        any::<Option<u64>>(),
    )
        .prop_map(|(node_id, host, port, cluster_epoch, healthy, suspect, missed_heartbeats)| MemberValues {
            node_id,
            host,
            port,
            cluster_epoch,
            healthy,
            suspect,
            missed_heartbeats,
        })
}

#[derive(Clone, Debug)]
struct SnapshotValues {
    cluster_epoch: u64,
    captured_at: f64,
    members: Vec<MemberValues>,
    primary: std::collections::BTreeMap<String, String>,
    replica: std::collections::BTreeMap<String, Vec<String>>,
    requests: u64,
    errors: u64,
}

fn snapshot_values() -> impl Strategy<Value = SnapshotValues> {
    (
        any::<u64>(),
        prop_oneof![Just(0.0), Just(1_735_600_000.123), 0.0..1e12f64, 0.0..1e-5f64, Just(f64::MAX), Just(5e-324)],
        prop::collection::vec(member(), 0..4),
        prop::collection::btree_map(text(12), text(8), 0..6),
        prop::collection::btree_map(text(12), prop::collection::vec(text(8), 0..3), 0..6),
        any::<u64>(),
        any::<u64>(),
    )
        .prop_map(|(cluster_epoch, captured_at, members, primary, replica, requests, errors)| SnapshotValues {
            cluster_epoch,
            captured_at,
            members,
            primary,
            replica,
            requests,
            errors,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn built_snapshots_round_trip(values in snapshot_values()) {
        let members: Vec<Member<'_>> = values
            .members
            .iter()
            .map(|m| Member {
                cluster_epoch: m.cluster_epoch,
                healthy: m.healthy,
                suspect: m.suspect,
                missed_heartbeats: m.missed_heartbeats,
                ..Member::new(&m.node_id, &m.host, m.port)
            })
            .collect();
        // BTreeMap<String, _> iterates in byte order, which is code-point order.
        let primary: Vec<(&str, &str)> = values.primary.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let replica_nodes: Vec<Vec<&str>> = values.replica.values().map(|v| v.iter().map(String::as_str).collect()).collect();
        let replica: Vec<(&str, &[&str])> =
            values.replica.keys().zip(&replica_nodes).map(|(k, v)| (k.as_str(), v.as_slice())).collect();
        let snapshot = Snapshot::builder(values.cluster_epoch, values.captured_at)
            .membership(&members)
            .primary_map(&primary)
            .replica_map(&replica)
            .server(values.requests, values.errors)
            .build()
            .unwrap();
        let first = write(&snapshot);
        prop_assert!(first.is_ascii());
        // serde_json reads the same values.
        let value: serde_json::Value = serde_json::from_slice(&first).unwrap();
        prop_assert_eq!(value["captured_at"].as_f64().unwrap().to_bits(), values.captured_at.to_bits());
        prop_assert_eq!(value["cluster_epoch"].as_u64().unwrap(), values.cluster_epoch);
        let parsed = Snapshot::parse(&first).unwrap();
        prop_assert!(parsed.is_canonical());
        prop_assert_eq!(write(&parsed), first.clone());
        prop_assert_eq!(parsed.captured_at().to_bits(), values.captured_at.to_bits());
        let read_members: Vec<Member<'_>> = parsed.membership().iter().collect();
        prop_assert_eq!(read_members.len(), members.len());
        for (ours, theirs) in read_members.iter().zip(&members) {
            prop_assert!(ours.node_id.eq_decoded(&theirs.node_id) && ours.host.eq_decoded(&theirs.host));
            prop_assert_eq!((ours.port, ours.cluster_epoch, ours.healthy), (theirs.port, theirs.cluster_epoch, theirs.healthy));
            prop_assert_eq!((ours.suspect, ours.missed_heartbeats), (theirs.suspect, theirs.missed_heartbeats));
        }
        let read_primary: Vec<(String, String)> = parsed.primary_map().iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let expected: Vec<(String, String)> = values.primary.clone().into_iter().collect();
        prop_assert_eq!(read_primary, expected);
        for (key, nodes) in parsed.replica_map().iter() {
            let read: Vec<String> = nodes.iter().map(|n| n.to_string()).collect();
            prop_assert_eq!(&read, &values.replica[&key.to_string()]);
        }
    }

    #[test]
    fn any_damage_to_a_snapshot_is_an_error_with_an_offset_never_a_panic(
        values in snapshot_values(), at in any::<prop::sample::Index>(), byte in any::<u8>(),
    ) {
        let primary: Vec<(&str, &str)> = values.primary.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let snapshot = Snapshot::builder(values.cluster_epoch, values.captured_at).primary_map(&primary).build().unwrap();
        let mut text = write(&snapshot);
        let at = at.index(text.len());
        text[at] = byte;
        match Snapshot::parse(&text) {
            Ok(parsed) => {
                // Whatever still parses writes back and reads again identically.
                let again = write(&parsed);
                prop_assert_eq!(write(&Snapshot::parse(&again).unwrap()), again);
            }
            Err(err) => {
                prop_assert!(matches!(err.code(), ErrorCode::SnapshotJson | ErrorCode::SnapshotVersion | ErrorCode::SnapshotField));
                prop_assert!(err.offset().is_some_and(|o| o as usize <= text.len()));
            }
        }
        // Every proper prefix is not JSON.
        let err = Snapshot::parse(&text[..at]).unwrap_err();
        prop_assert_eq!(err.code(), ErrorCode::SnapshotJson);
        prop_assert!(err.offset().is_some_and(|o| o as usize <= at));
    }

    #[test]
    fn gossip_maps_round_trip(entries in prop::collection::btree_map(text(30), -1e12..1e12f64, 0..30), now in -1e12..1e12f64) {
        let (mut slots, mut nodes) = (vec![TombstoneSlot::EMPTY; 64], vec![NodeSlot::EMPTY; 1]);
        let mut table = TombstoneTable::new(&mut slots, &mut nodes);
        for (hash, until) in &entries {
            table.record(hash, *until, None).unwrap();
        }
        let mut first = vec![0u8; table.gossip_len(now)];
        table.write_gossip_into(now, &mut first).unwrap();
        let map = GossipMap::parse(&first).unwrap();
        prop_assert!(map.is_sorted());
        let read: Vec<(String, u64)> = map.iter().map(|(k, v)| (k.to_string(), v.to_bits())).collect();
        let active: Vec<(String, u64)> =
            entries.iter().filter(|(_, u)| now < **u).map(|(k, u)| (k.clone(), u.to_bits())).collect();
        prop_assert_eq!(read, active);
        let (mut slots2, mut nodes2) = (vec![TombstoneSlot::EMPTY; 64], vec![NodeSlot::EMPTY; 1]);
        let mut again = TombstoneTable::new(&mut slots2, &mut nodes2);
        again.merge_gossip(&first, now).unwrap();
        let mut second = vec![0u8; again.gossip_len(now)];
        again.write_gossip_into(now, &mut second).unwrap();
        prop_assert_eq!(&second, &first);
        // serde_json agrees on every value.
        let value: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(&first).unwrap();
        prop_assert_eq!(value.len(), map.len());
    }

    #[test]
    fn op_bodies_round_trip(hash in text(128), node in text(128), until in -1e15..1e15f64, deadline in any::<Option<i32>>()) {
        let op = OpTombstone::new(&hash, until, &node).unwrap();
        let mut first = vec![0u8; op.encoded_len()];
        op.write_into(&mut first).unwrap();
        let parsed = OpTombstone::parse(&first).unwrap();
        prop_assert!(parsed.content_hash().eq_str(&hash) && parsed.node_id().eq_str(&node));
        prop_assert_eq!(parsed.until().to_bits(), until.to_bits());
        let mut second = vec![0u8; parsed.encoded_len()];
        parsed.write_into(&mut second).unwrap();
        prop_assert_eq!(&second, &first);

        let tombstone_until = deadline.map(|d| f64::from(d) / 4.0);
        let op = OpDelete::new(&hash, &node, tombstone_until).unwrap();
        let mut first = vec![0u8; op.encoded_len()];
        op.write_into(&mut first).unwrap();
        let parsed = OpDelete::parse(&first).unwrap();
        prop_assert_eq!(parsed.tombstone_until().map(f64::to_bits), tombstone_until.map(f64::to_bits));
        let mut second = vec![0u8; parsed.encoded_len()];
        parsed.write_into(&mut second).unwrap();
        prop_assert_eq!(&second, &first);
        // Truncated bodies are tombstone_json.
        for cut in [0, first.len() / 2, first.len() - 1] {
            prop_assert_eq!(OpDelete::parse(&first[..cut]).unwrap_err().code(), ErrorCode::TombstoneJson);
            prop_assert_eq!(GossipMap::parse(&first[..cut]).unwrap_err().code(), ErrorCode::TombstoneJson);
        }
    }
}

/// JSON-ish token soup: mostly well-formed pieces in random order, so the readers get
/// past the first byte often.
fn soup() -> impl Strategy<Value = Vec<u8>> {
    let token = prop_oneof![
        Just("{".to_string()),
        Just("}".to_string()),
        Just("[".to_string()),
        Just("]".to_string()),
        Just(", ".to_string()),
        Just(": ".to_string()),
        Just("\"h1\"".to_string()),
        Just("\"until\"".to_string()),
        Just("\"content_hash\"".to_string()),
        Just("\"node_id\"".to_string()),
        Just("\"schema_version\": 5".to_string()),
        Just("\"shards\": {\"primary_map\": {\"b\": \"n\", \"a\": \"n\"".to_string()),
        Just("1e9".to_string()),
        Just("-0.0".to_string()),
        Just("null".to_string()),
        Just("\"\\u00e9\"".to_string()),
        any::<u8>().prop_map(|b| char::from(b).to_string()),
    ];
    prop::collection::vec(token, 0..40).prop_map(|tokens| tokens.concat().into_bytes())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    #[test]
    fn hostile_texts_never_panic_and_errors_point_inside(text in prop_oneof![soup(), prop::collection::vec(any::<u8>(), 0..64)]) {
        let inside = |err: membrane_frame::Error| err.offset().is_none_or(|o| o as usize <= text.len());
        if let Err(err) = Snapshot::parse(&text) {
            prop_assert!(inside(err), "{}", err);
        }
        if let Err(err) = Snapshot::parse_guarded(&text, 3) {
            prop_assert!(inside(err), "{}", err);
        }
        if let Err(err) = GossipMap::parse(&text) {
            prop_assert!(inside(err), "{}", err);
        }
        if let Err(err) = OpTombstone::parse(&text) {
            prop_assert!(inside(err), "{}", err);
        }
        if let Err(err) = OpDelete::parse(&text) {
            prop_assert!(inside(err), "{}", err);
        }
        let (mut slots, mut nodes) = (vec![TombstoneSlot::EMPTY; 2], vec![NodeSlot::EMPTY; 1]);
        let mut table = TombstoneTable::new(&mut slots, &mut nodes);
        let before = table.len();
        match table.merge_gossip(&text, 0.0) {
            Ok(_) => prop_assert!(GossipMap::parse(&text).is_ok()),
            Err(err) => {
                prop_assert!(inside(err));
                prop_assert_eq!(table.len(), before);
            }
        }
    }
}

#[test]
fn deep_nesting_in_unknown_values_is_an_error_not_a_stack_overflow() {
    let deep = "[".repeat(1 << 20);
    let snapshot = format!("{{\"x\": {deep}");
    assert_eq!(Snapshot::parse(snapshot.as_bytes()).unwrap_err().code(), ErrorCode::SnapshotJson);
    let gossip = format!("{{\"h\": {deep}");
    assert_eq!(GossipMap::parse(gossip.as_bytes()).unwrap_err().code(), ErrorCode::TombstoneJson);
    assert_eq!(OpDelete::parse(gossip.as_bytes()).unwrap_err().code(), ErrorCode::TombstoneJson);
}

const BASE: &str = r#"{"captured_at": 1735600000.123, "cluster_epoch": 17, "membership": [{"cluster_epoch": 17, "healthy": true, "host": "10.0.0.1", "missed_heartbeats": 0, "node_id": "peer-1", "port": 8080, "suspect": false}], "schema_version": 5, "server": {"error_count": 4, "request_count": 123}, "shards": {"primary_map": {"hash1": "node-1"}, "replica_map": {"hash1": ["node-2", "node-3"]}}}"#;

#[test]
fn malformed_snapshots_give_their_code_field_and_offset() {
    // (replace, with, code, field, text at the offset)
    let cases: &[(&str, &str, ErrorCode, Option<&str>, &str)] = &[
        ("\"hash1\": \"node-1\"", "\"hash1\": \"node-1\",", ErrorCode::SnapshotJson, None, "}"),
        ("17, \"membership\"", "017, \"membership\"", ErrorCode::SnapshotJson, None, "17,"),
        ("1735600000.123", "NaN", ErrorCode::SnapshotJson, None, "NaN"),
        (
            "{\"hash1\": \"node-1\"}",
            "{\"hash1\": \"node-1\", \"hash1\": \"x\"}",
            ErrorCode::SnapshotJson,
            None,
            "\"hash1\": \"x\"",
        ),
        ("\"schema_version\": 5", "\"schema_version\": 3", ErrorCode::SnapshotVersion, Some("schema_version"), "3"),
        ("\"schema_version\": 5", "\"schema_version\": 5.0", ErrorCode::SnapshotVersion, Some("schema_version"), "5.0"),
        (
            "\"schema_version\": 5",
            "\"schema_version\": \"5\"",
            ErrorCode::SnapshotVersion,
            Some("schema_version"),
            "\"5\"",
        ),
        ("\"schema_version\": 5, ", "", ErrorCode::SnapshotVersion, Some("schema_version"), "}"),
        (
            "\"cluster_epoch\": 17, \"membership\"",
            "\"cluster_epoch\": 1.5, \"membership\"",
            ErrorCode::SnapshotField,
            Some("cluster_epoch"),
            "1.5",
        ),
        ("\"captured_at\": 1735600000.123, ", "", ErrorCode::SnapshotField, Some("captured_at"), "}"),
        (
            "\"captured_at\": 1735600000.123",
            "\"captured_at\": \"now\"",
            ErrorCode::SnapshotField,
            Some("captured_at"),
            "\"now\"",
        ),
        ("\"port\": 8080", "\"port\": -1", ErrorCode::SnapshotField, Some("membership.port"), "-1"),
        ("\"node_id\": \"peer-1\"", "\"node_id\": \"\"", ErrorCode::SnapshotField, Some("membership.node_id"), "\"\""),
        ("\"host\": \"10.0.0.1\", ", "", ErrorCode::SnapshotField, Some("membership.host"), "}"),
        ("\"suspect\": false", "\"suspect\": null", ErrorCode::SnapshotField, Some("membership.suspect"), "null"),
        ("[\"node-2\", \"node-3\"]", "\"node-2\"", ErrorCode::SnapshotField, Some("shards.replica_map"), "\"node-2\""),
        ("\"replica_map\"", "\"replica_mop\"", ErrorCode::SnapshotField, Some("shards.replica_map"), "}"),
        ("\"error_count\": 4", "\"error_count\": 4e0", ErrorCode::SnapshotField, Some("server.error_count"), "4e0"),
        (
            "\"server\": {\"error_count\": 4, \"request_count\": 123}, ",
            "",
            ErrorCode::SnapshotField,
            Some("server"),
            "}",
        ),
    ];
    assert!(Snapshot::parse(BASE.as_bytes()).unwrap().is_canonical());
    for &(from, to, code, field, at) in cases {
        assert!(BASE.contains(from), "{from}");
        let text = BASE.replacen(from, to, 1);
        let err = Snapshot::parse(text.as_bytes()).unwrap_err();
        assert_eq!((err.code(), err.field()), (code, field), "{to}: {err}");
        let offset = err.offset().unwrap() as usize;
        assert!(text[offset..].starts_with(at), "{to}: offset {offset} points at {:?}", &text[offset..]);
    }
    // Unknown keys anywhere are skipped (and not written back).
    let text = BASE
        .replace("\"port\": 8080", "\"port\": 8080, \"lease\": {\"until\": 5}")
        .replace("{\"captured_at\"", "{\"x\": [1, {\"y\": null}], \"captured_at\"");
    let snapshot = Snapshot::parse(text.as_bytes()).unwrap();
    assert_eq!(write(&snapshot), BASE.as_bytes());
}

#[test]
fn big_unsorted_shard_maps_are_read_and_written_sorted() {
    let n = 5000;
    let entries: Vec<String> = (0..n).rev().map(|i| format!("\"k{:06}\": \"n{}\"", (i * 7919) % n, i % 3)).collect();
    let text = BASE.replace("{\"hash1\": \"node-1\"}", &format!("{{{}}}", entries.join(", ")));
    let snapshot = Snapshot::parse(text.as_bytes()).unwrap();
    assert_eq!(snapshot.primary_map().len(), n);
    let written = write(&snapshot);
    let again = Snapshot::parse(&written).unwrap();
    assert!(again.is_canonical());
    let keys: Vec<String> = again.primary_map().iter().map(|(k, _)| k.to_string()).collect();
    assert!(keys.windows(2).all(|w| w[0] < w[1]) && keys.len() == n);
    // A repeat far apart is still found.
    let dup = text.replacen("\"k000000\": ", "\"k004999\": ", 1);
    let err = Snapshot::parse(dup.as_bytes()).unwrap_err();
    assert_eq!(err.code(), ErrorCode::SnapshotJson);
}

#[test]
fn gossip_maps_hold_up_to_131072_entries() {
    let body = |n: usize| {
        let entries: Vec<String> = (0..n).map(|i| format!("\"{i:064x}\": 1e9")).collect();
        format!("{{{}}}", entries.join(", "))
    };
    let full = body(MAX_GOSSIP_ENTRIES);
    let mut slots = vec![TombstoneSlot::EMPTY; MAX_GOSSIP_ENTRIES];
    let mut nodes = vec![NodeSlot::EMPTY; 1];
    let mut table = TombstoneTable::new(&mut slots, &mut nodes);
    assert_eq!(table.merge_gossip(full.as_bytes(), 0.0), Ok(MAX_GOSSIP_ENTRIES));
    assert_eq!(table.len(), MAX_GOSSIP_ENTRIES);
    let mut out = vec![0u8; table.gossip_len(0.0)];
    table.write_gossip_into(0.0, &mut out).unwrap();
    assert_eq!(GossipMap::parse(&out).unwrap().len(), MAX_GOSSIP_ENTRIES);
    let over = body(MAX_GOSSIP_ENTRIES + 1);
    let err = GossipMap::parse(over.as_bytes()).unwrap_err();
    assert_eq!((err.code(), err.field()), (ErrorCode::TombstoneField, Some("gossip_map")));
    assert_eq!(err.offset(), Some(over.rfind(", \"").unwrap() as u64 + 2));
    // An unsorted big map with a repeat: the table finds it in one pass.
    table.clear();
    let mut entries: Vec<String> = (0..MAX_GOSSIP_ENTRIES).rev().map(|i| format!("\"{i:064x}\": 1e9")).collect();
    entries[100_000] = entries[3].clone();
    let text = format!("{{{}}}", entries.join(", "));
    let err = table.merge_gossip(text.as_bytes(), 0.0).unwrap_err();
    assert_eq!(err.code(), ErrorCode::TombstoneJson);
    assert!(table.is_empty());
}
