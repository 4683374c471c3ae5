//! Conformance with the cluster-metadata vectors (SPEC §5, §6, §11): `metadata.jsonl`.
//!
//! Snapshots: every vector gives its `expect`; accepted ones agree with serde_json on
//! every value, write → read → write is identical, and a vector without unknown keys
//! is re-emitted byte for byte (with `schema_version` 5). Gossip: merging `a` and `b`
//! at `now` gives `expect`, and the exact `merged` text in both merge orders.

mod common;

use common::read_jsonl;
use membrane_frame::snapshot::Snapshot;
use membrane_frame::table::NodeSlot;
use membrane_frame::tombstone::{GossipMap, TombstoneSlot, TombstoneTable};
use membrane_frame::ErrorCode;
use serde_json::Value;

fn code_of<T>(result: &Result<T, membrane_frame::Error>) -> String {
    match result {
        Ok(_) => "ok".to_string(),
        Err(err) => err.code().name().to_string(),
    }
}

fn cases(kind: &str) -> Vec<Value> {
    let cases: Vec<Value> = read_jsonl("metadata.jsonl").into_iter().filter(|c| c["kind"] == kind).collect();
    assert!(!cases.is_empty(), "no {kind} vectors");
    cases
}

fn write(snapshot: &Snapshot<'_>) -> Vec<u8> {
    let mut out = vec![0u8; snapshot.encoded_len()];
    let len = snapshot.write_into(&mut out).unwrap();
    assert_eq!(len, out.len());
    out
}

const TOP: [&str; 6] = ["captured_at", "cluster_epoch", "membership", "schema_version", "server", "shards"];
const MEMBER: [&str; 7] = ["cluster_epoch", "healthy", "host", "missed_heartbeats", "node_id", "port", "suspect"];

/// Whether the snapshot uses only the keys this crate writes (so it must re-emit as is).
fn only_known_keys(value: &Value) -> bool {
    let keys_in = |v: &Value, allowed: &[&str]| v.as_object().unwrap().keys().all(|k| allowed.contains(&k.as_str()));
    keys_in(value, &TOP)
        && value["membership"].as_array().unwrap().iter().all(|m| keys_in(m, &MEMBER))
        && keys_in(&value["server"], &["error_count", "request_count"])
        && keys_in(&value["shards"], &["primary_map", "replica_map"])
}

/// Our view of an accepted snapshot against serde_json's reading of the same text.
fn check_values(name: &str, snapshot: &Snapshot<'_>, value: &Value) {
    assert_eq!(snapshot.schema_version(), value["schema_version"].as_i64().unwrap(), "{name}");
    assert_eq!(snapshot.cluster_epoch(), value["cluster_epoch"].as_u64().unwrap(), "{name}");
    assert_eq!(snapshot.captured_at().to_bits(), value["captured_at"].as_f64().unwrap().to_bits(), "{name}");
    assert_eq!(snapshot.request_count(), value["server"]["request_count"].as_u64().unwrap(), "{name}");
    assert_eq!(snapshot.error_count(), value["server"]["error_count"].as_u64().unwrap(), "{name}");
    let members = value["membership"].as_array().unwrap();
    assert_eq!(snapshot.membership().len(), members.len(), "{name}");
    for (ours, theirs) in snapshot.membership().iter().zip(members) {
        assert_eq!(ours.node_id.to_string(), theirs["node_id"].as_str().unwrap(), "{name}");
        assert_eq!(ours.host.to_string(), theirs["host"].as_str().unwrap(), "{name}");
        assert_eq!(u64::from(ours.port), theirs["port"].as_u64().unwrap(), "{name}");
        assert_eq!(ours.cluster_epoch, theirs.get("cluster_epoch").and_then(Value::as_u64), "{name}");
        assert_eq!(ours.healthy, theirs.get("healthy").and_then(Value::as_bool), "{name}");
        assert_eq!(ours.suspect, theirs.get("suspect").and_then(Value::as_bool), "{name}");
        assert_eq!(ours.missed_heartbeats, theirs.get("missed_heartbeats").and_then(Value::as_u64), "{name}");
    }
    let primary = value["shards"]["primary_map"].as_object().unwrap();
    assert_eq!(snapshot.primary_map().len(), primary.len(), "{name}");
    for (key, node) in snapshot.primary_map().iter() {
        assert_eq!(primary[&key.to_string()].as_str().unwrap(), node.to_string(), "{name}");
    }
    let replica = value["shards"]["replica_map"].as_object().unwrap();
    assert_eq!(snapshot.replica_map().len(), replica.len(), "{name}");
    for (key, nodes) in snapshot.replica_map().iter() {
        let theirs: Vec<&str> =
            replica[&key.to_string()].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
        let ours: Vec<String> = nodes.iter().map(|n| n.to_string()).collect();
        assert_eq!(ours, theirs, "{name}");
        assert_eq!(nodes.len(), theirs.len(), "{name}");
    }
    // The one-pass walk hands out the same nodes, entry by entry.
    let mut entries = snapshot.replica_map().iter();
    let mut walked = 0;
    loop {
        let mut ours: Vec<String> = Vec::new();
        let Some((key, _)) = entries.next_with_nodes(|node| ours.push(node.to_string())) else {
            break;
        };
        let theirs: Vec<&str> =
            replica[&key.to_string()].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
        assert_eq!(ours, theirs, "{name}");
        walked += 1;
    }
    assert_eq!(walked, replica.len(), "{name}");
}

/// `Snapshot::parse_indexed` against `parse`'s `result`: the same error, or the same
/// values read through the index, whose size it names exactly.
fn check_indexed(name: &str, text: &[u8], result: &Result<Snapshot<'_>, membrane_frame::Error>) {
    let needed = match Snapshot::parse_indexed(text, &mut []) {
        Err(err) if err.code() == ErrorCode::BufferTooSmall => err.needed().unwrap() as usize,
        other => {
            // A problem of the text, or maps with no entry.
            assert_eq!(other.as_ref().err(), result.as_ref().err(), "{name}");
            0
        }
    };
    let Ok(snapshot) = result else {
        let mut index = vec![0u32; 64];
        assert_eq!(Snapshot::parse_indexed(text, &mut index).err(), result.as_ref().err().copied(), "{name}");
        return;
    };
    if needed > 0 {
        let mut short = vec![0u32; needed - 1];
        let err = Snapshot::parse_indexed(text, &mut short).unwrap_err();
        assert_eq!((err.code(), err.needed()), (ErrorCode::BufferTooSmall, Some(needed as u64)), "{name}");
    }
    let mut index = vec![0u32; needed];
    let indexed = Snapshot::parse_indexed(text, &mut index).unwrap_or_else(|e| panic!("{name}: {e}"));
    check_values(name, &indexed, &serde_json::from_slice(text).unwrap());
    assert_eq!(write(&indexed), write(snapshot), "{name}");
}

#[test]
fn every_snapshot_vector_gives_its_expected_code() {
    let (mut accepted, mut rejected, mut reemitted) = (0, 0, 0);
    for case in cases("snapshot") {
        let name = case["name"].as_str().unwrap();
        let text = case["json"].as_str().unwrap().as_bytes();
        let expected = case["expect"].as_str().unwrap();
        let result = Snapshot::parse(text);
        assert_eq!(code_of(&result), expected, "{name}: {result:?}");
        check_indexed(name, text, &result);
        let snapshot = match result {
            Ok(snapshot) => snapshot,
            Err(err) => {
                rejected += 1;
                let offset = err.offset().unwrap_or_else(|| panic!("{name}: {err} has no offset"));
                assert!(offset as usize <= text.len(), "{name}: offset past the text");
                if err.code() != ErrorCode::SnapshotJson {
                    assert!(err.field().is_some(), "{name}: {err} names no field");
                }
                continue;
            }
        };
        accepted += 1;
        let value: Value = serde_json::from_slice(text).unwrap();
        check_values(name, &snapshot, &value);
        // write -> read -> write is identical.
        let first = write(&snapshot);
        let reread = Snapshot::parse(&first).unwrap_or_else(|e| panic!("{name}: our own output is rejected: {e}"));
        assert!(reread.is_canonical(), "{name}");
        assert_eq!(write(&reread), first, "{name}");
        if only_known_keys(&value) {
            // The vector is the original's own sorted form: ours is the same text, but v5.
            let version = value["schema_version"].as_i64().unwrap();
            let expected = String::from_utf8_lossy(text)
                .replace(&format!("\"schema_version\": {version}, "), "\"schema_version\": 5, ");
            assert_eq!(String::from_utf8_lossy(&first), expected, "{name}: re-emission");
            assert_eq!(snapshot.is_canonical(), version == 5, "{name}");
            reemitted += 1;
        }
    }
    eprintln!("snapshots: {accepted} accepted ({reemitted} re-emitted byte for byte), {rejected} rejected");
    assert!(accepted > 0 && rejected > 0 && reemitted > 0);
}

fn table_storage(n: usize) -> (Vec<TombstoneSlot>, Vec<NodeSlot>) {
    (vec![TombstoneSlot::EMPTY; n], vec![NodeSlot::EMPTY; 4])
}

/// Merge the maps in order into a fresh table and write the gossip at `now`.
fn merge(maps: [&str; 2], now: f64) -> Result<String, membrane_frame::Error> {
    let (mut slots, mut nodes) = table_storage(1024);
    let mut table = TombstoneTable::new(&mut slots, &mut nodes);
    for map in maps {
        table.merge_gossip(map.as_bytes(), now)?;
    }
    let mut out = vec![0u8; table.gossip_len(now)];
    let len = table.write_gossip_into(now, &mut out)?;
    assert_eq!(len, out.len());
    Ok(String::from_utf8(out).unwrap())
}

#[test]
fn every_gossip_vector_merges_to_the_exact_text() {
    let (mut merged_count, mut rejected) = (0, 0);
    for case in cases("gossip") {
        let name = case["name"].as_str().unwrap();
        let (a, b) = (case["a"].as_str().unwrap(), case["b"].as_str().unwrap());
        let now = case["now"].as_f64().unwrap();
        let expected = case["expect"].as_str().unwrap();
        // The standalone reader agrees with the table's.
        let views = [GossipMap::parse(a.as_bytes()), GossipMap::parse(b.as_bytes())];
        let view_code = views.iter().find(|r| r.is_err()).map_or("ok".to_string(), code_of);
        assert_eq!(view_code, expected, "{name}: standalone reader");
        for order in [[a, b], [b, a]] {
            let result = merge(order, now);
            assert_eq!(code_of(&result), expected, "{name}: {result:?}");
            match result {
                Ok(text) => assert_eq!(text, case["merged"].as_str().unwrap(), "{name}"),
                Err(err) => {
                    assert!(err.offset().is_some(), "{name}: {err} has no offset");
                    if err.code() == ErrorCode::TombstoneField {
                        assert!(err.field().is_some(), "{name}");
                    }
                }
            }
        }
        if expected == "ok" {
            merged_count += 1;
            // The merged text reads back and writes again identically.
            let merged = case["merged"].as_str().unwrap();
            assert_eq!(merge([merged, "{}"], now).unwrap(), merged, "{name}: merged text round trip");
        } else {
            rejected += 1;
        }
    }
    eprintln!("gossip: {merged_count} merges reproduced, {rejected} rejected");
    assert!(merged_count > 0 && rejected > 0);
}
