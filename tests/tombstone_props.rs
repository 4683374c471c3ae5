//! Tombstones and ref counts (SPEC §6) as properties: the merge is commutative,
//! associative and idempotent; the table behaves like a plain map model; a tombstone
//! expires at exactly `now == until`; a full table is an error, never a drop.

use membrane_frame::refcount::{RefCounts, RefSlot};
use membrane_frame::table::NodeSlot;
use membrane_frame::tombstone::{TombstoneSlot, TombstoneTable};
use membrane_frame::ErrorCode;
use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};

/// What a table holds, comparable: hash -> (until bits, node ids).
type State = BTreeMap<String, (u64, BTreeSet<String>)>;

fn state(table: &TombstoneTable<'_>) -> State {
    table
        .iter()
        .map(|t| (t.content_hash().to_string(), (t.until().to_bits(), t.nodes().map(String::from).collect())))
        .collect()
}

#[derive(Clone, Debug)]
struct Record {
    hash: String,
    until: f64,
    node: Option<String>,
}

fn hash() -> impl Strategy<Value = String> {
    prop_oneof![
        (0..12u8).prop_map(|i| format!("h{i}")),
        Just("\u{e9}t\u{e9}".to_string()),
        Just("\u{2603}".repeat(128)),
        Just("z".repeat(128)),
    ]
}

fn until() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(0.0),
        Just(-0.0),
        Just(-1.0),
        Just(10.0),
        Just(1_735_600_000.5),
        (-1e3..1e10f64),
        Just(f64::MAX),
        Just(f64::MIN_POSITIVE),
    ]
}

fn record() -> impl Strategy<Value = Record> {
    (hash(), until(), proptest::option::of((0..6u8).prop_map(|i| format!("node-{i}"))))
        .prop_map(|(hash, until, node)| Record { hash, until, node })
}

/// Storage for a table big enough for every hash the strategies produce.
fn storage() -> (Vec<TombstoneSlot>, Vec<NodeSlot>) {
    (vec![TombstoneSlot::EMPTY; 32], vec![NodeSlot::EMPTY; 8])
}

fn apply(table: &mut TombstoneTable<'_>, records: &[Record]) {
    for r in records {
        table.record(&r.hash, r.until, r.node.as_deref()).unwrap();
    }
}

/// The model: per hash the largest until (total order, so -0.0 < 0.0) and the union.
fn model(records: &[Record]) -> State {
    let mut model: BTreeMap<String, (f64, BTreeSet<String>)> = BTreeMap::new();
    for r in records {
        let entry = model.entry(r.hash.clone()).or_insert((r.until, BTreeSet::new()));
        if r.until.total_cmp(&entry.0).is_gt() {
            entry.0 = r.until;
        }
        entry.1.extend(r.node.clone());
    }
    model.into_iter().map(|(k, (until, nodes))| (k, (until.to_bits(), nodes))).collect()
}

/// `records` merged, in this order, into a fresh table.
fn merged(parts: &[&[Record]]) -> State {
    let mut built: Vec<(Vec<TombstoneSlot>, Vec<NodeSlot>)> = parts.iter().map(|_| storage()).collect();
    let mut tables: Vec<TombstoneTable<'_>> =
        built.iter_mut().map(|(slots, nodes)| TombstoneTable::new(slots, nodes)).collect();
    for (table, records) in tables.iter_mut().zip(parts) {
        apply(table, records);
    }
    let (mut slots, mut nodes) = storage();
    let mut result = TombstoneTable::new(&mut slots, &mut nodes);
    for table in &tables {
        result.merge_from(table).unwrap();
    }
    state(&result)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn the_table_is_the_max_and_union_model(records in prop::collection::vec(record(), 0..40)) {
        let (mut slots, mut nodes) = storage();
        let mut table = TombstoneTable::new(&mut slots, &mut nodes);
        apply(&mut table, &records);
        prop_assert_eq!(state(&table), model(&records));
    }

    #[test]
    fn merge_is_commutative(a in prop::collection::vec(record(), 0..20), b in prop::collection::vec(record(), 0..20)) {
        prop_assert_eq!(merged(&[&a, &b]), merged(&[&b, &a]));
        let both: Vec<Record> = a.iter().chain(&b).cloned().collect();
        prop_assert_eq!(merged(&[&a, &b]), model(&both));
    }

    #[test]
    fn merge_is_associative(
        a in prop::collection::vec(record(), 0..15),
        b in prop::collection::vec(record(), 0..15),
        c in prop::collection::vec(record(), 0..15),
    ) {
        // (a ∪ b) ∪ c against a ∪ (b ∪ c), each union a real table.
        let (mut s1, mut n1) = storage();
        let (mut s2, mut n2) = storage();
        let (mut s3, mut n3) = storage();
        let (mut ta, mut tb, mut tc) =
            (TombstoneTable::new(&mut s1, &mut n1), TombstoneTable::new(&mut s2, &mut n2), TombstoneTable::new(&mut s3, &mut n3));
        apply(&mut ta, &a);
        apply(&mut tb, &b);
        apply(&mut tc, &c);
        let (mut s4, mut n4) = storage();
        let mut left = TombstoneTable::new(&mut s4, &mut n4);
        left.merge_from(&ta).unwrap();
        left.merge_from(&tb).unwrap();
        left.merge_from(&tc).unwrap();
        let (mut s5, mut n5) = storage();
        let mut bc = TombstoneTable::new(&mut s5, &mut n5);
        bc.merge_from(&tb).unwrap();
        bc.merge_from(&tc).unwrap();
        let (mut s6, mut n6) = storage();
        let mut right = TombstoneTable::new(&mut s6, &mut n6);
        right.merge_from(&ta).unwrap();
        right.merge_from(&bc).unwrap();
        prop_assert_eq!(state(&left), state(&right));
    }

    #[test]
    fn merge_is_idempotent(a in prop::collection::vec(record(), 0..30)) {
        let (mut s1, mut n1) = storage();
        let mut table = TombstoneTable::new(&mut s1, &mut n1);
        apply(&mut table, &a);
        let before = state(&table);
        let (mut s2, mut n2) = storage();
        let mut copy = TombstoneTable::new(&mut s2, &mut n2);
        copy.merge_from(&table).unwrap();
        prop_assert_eq!(state(&copy), before.clone());
        copy.merge_from(&table).unwrap();
        table.merge_from(&copy).unwrap();
        prop_assert_eq!(state(&table), before.clone());
        prop_assert_eq!(state(&copy), before);
    }

    #[test]
    fn gossip_merge_is_order_independent_and_idempotent(
        a in prop::collection::vec(record(), 0..20),
        b in prop::collection::vec(record(), 0..20),
        now in until(),
    ) {
        let gossip_of = |records: &[Record]| {
            let (mut slots, mut nodes) = storage();
            let mut table = TombstoneTable::new(&mut slots, &mut nodes);
            apply(&mut table, records);
            let mut out = vec![0u8; table.gossip_len(f64::MIN)];
            let len = table.write_gossip_into(f64::MIN, &mut out).unwrap();
            out.truncate(len);
            out
        };
        let (ga, gb) = (gossip_of(&a), gossip_of(&b));
        let merge_texts = |texts: &[&[u8]]| {
            let (mut slots, mut nodes) = storage();
            let mut table = TombstoneTable::new(&mut slots, &mut nodes);
            for text in texts {
                table.merge_gossip(text, now).unwrap();
            }
            let mut out = vec![0u8; table.gossip_len(now)];
            let len = table.write_gossip_into(now, &mut out).unwrap();
            out.truncate(len);
            out
        };
        let ab = merge_texts(&[&ga, &gb]);
        prop_assert_eq!(&ab, &merge_texts(&[&gb, &ga]));
        prop_assert_eq!(&ab, &merge_texts(&[&ga, &gb, &ga, &gb]));
        // The merged text is itself a fixed point.
        prop_assert_eq!(&ab, &merge_texts(&[&ab]));
    }

    #[test]
    fn sweep_removes_exactly_the_expired(records in prop::collection::vec(record(), 0..40), now in until()) {
        let (mut slots, mut nodes) = storage();
        let mut table = TombstoneTable::new(&mut slots, &mut nodes);
        apply(&mut table, &records);
        let expected: BTreeSet<String> = model(&records)
            .into_iter()
            .filter(|(_, (bits, _))| now >= f64::from_bits(*bits))
            .map(|(k, _)| k)
            .collect();
        let mut swept = BTreeSet::new();
        let count = table.sweep(now, |hash| { swept.insert(hash.to_string()); });
        prop_assert_eq!(count, expected.len());
        prop_assert_eq!(&swept, &expected);
        prop_assert!(table.iter().all(|t| t.is_active(now)));
        prop_assert!(swept.iter().all(|h| table.get(h).is_none()));
    }

    #[test]
    fn ref_counts_follow_the_set_model(ops in prop::collection::vec((0..4u8, 0..5u8, 0..3u8), 0..80)) {
        let (mut slots, mut nodes) = (vec![RefSlot::EMPTY; 8], vec![NodeSlot::EMPTY; 8]);
        let mut refs = RefCounts::new(&mut slots, &mut nodes);
        let mut model: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (op, h, n) in ops {
            let (hash, node) = (format!("h{h}"), format!("n{n}"));
            match op {
                0 | 1 => {
                    refs.acquire(&hash, &node).unwrap();
                    model.entry(hash.clone()).or_default().insert(node);
                }
                2 => {
                    let expected = match model.get_mut(&hash) {
                        None => true,
                        Some(set) => {
                            set.remove(&node);
                            set.is_empty()
                        }
                    };
                    if expected {
                        model.remove(&hash);
                    }
                    prop_assert_eq!(refs.release(&hash, &node), expected);
                }
                _ => {
                    prop_assert_eq!(refs.forget(&hash), model.remove(&hash).is_some());
                }
            }
            for (hash, set) in &model {
                let holders: BTreeSet<String> = refs.holders(hash).map(String::from).collect();
                prop_assert_eq!(&holders, set);
            }
            prop_assert_eq!(refs.len(), model.len());
        }
    }
}

#[test]
fn a_tombstone_expires_at_exactly_now_equals_until() {
    let (mut slots, mut nodes) = storage();
    let mut table = TombstoneTable::new(&mut slots, &mut nodes);
    let until = 1_735_600_060.25;
    table.record("h", until, Some("n")).unwrap();
    let just_before = f64::from_bits(until.to_bits() - 1);
    assert!(table.is_active("h", just_before));
    assert!(!table.is_active("h", until));
    assert!(!table.get("h").unwrap().is_active(until));
    let mut out = [0u8; 64];
    let len = table.write_gossip_into(just_before, &mut out).unwrap();
    assert_eq!(&out[..len], b"{\"h\": 1735600060.25}");
    let len = table.write_gossip_into(until, &mut out).unwrap();
    assert_eq!(&out[..len], b"{}");
    assert_eq!(table.sweep(just_before, |_| {}), 0);
    let mut swept = Vec::new();
    assert_eq!(table.sweep(until, |h| swept.push(h.to_string())), 1);
    assert_eq!(swept, ["h"]);
    // A gossip entry expiring at exactly `now` is not adopted either.
    assert_eq!(table.merge_gossip(b"{\"h\": 5.0, \"g\": 5.000000000000001}", 5.0).unwrap(), 1);
    assert!(table.get("h").is_none() && table.is_active("g", 5.0));
}

#[test]
fn a_full_table_reports_table_full_at_its_capacity_and_drops_nothing() {
    for capacity in [1usize, 2, 7, 64] {
        let mut slots = vec![TombstoneSlot::EMPTY; capacity];
        let mut nodes = vec![NodeSlot::EMPTY; 4];
        let mut table = TombstoneTable::new(&mut slots, &mut nodes);
        assert_eq!(table.capacity(), capacity);
        for i in 0..capacity {
            table.record(&format!("h{i}"), 100.0, Some("n")).unwrap();
        }
        assert_eq!(table.len(), table.capacity());
        let err = table.record("one-more", 100.0, None).unwrap_err();
        assert_eq!(err.code(), ErrorCode::TableFull, "{capacity}");
        let err = table.merge_gossip(b"{\"one-more\": 200.0, \"h0\": 300.0}", 0.0).unwrap_err();
        assert_eq!(err.code(), ErrorCode::TableFull, "{capacity}");
        // Nothing was dropped or half-merged, and known hashes can still be updated.
        assert_eq!(table.len(), capacity);
        assert!((0..capacity).all(|i| table.get(&format!("h{i}")).unwrap().until() == 100.0));
        table.record("h0", 150.0, Some("m")).unwrap();
        assert_eq!(table.merge_gossip(b"{\"h0\": 300.0}", 0.0), Ok(0));
        assert_eq!(table.get("h0").unwrap().until(), 300.0);
        // Sweeping makes room again (h0 lives on until 300).
        assert_eq!(table.sweep(100.0, |_| {}), capacity - 1);
        assert_eq!(table.record("one-more", 100.5, None).is_ok(), capacity > 1);
    }
}

#[test]
fn node_ids_beyond_the_node_list_are_table_full() {
    let mut slots = vec![TombstoneSlot::EMPTY; 4];
    let mut nodes = vec![NodeSlot::EMPTY; 200];
    let mut table = TombstoneTable::new(&mut slots, &mut nodes);
    assert_eq!(table.node_capacity(), 128);
    let ids: Vec<String> = (0..129).map(|i| format!("node-{i}")).collect();
    let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
    assert_eq!(table.record_nodes("h", 1.0, &refs).unwrap_err().code(), ErrorCode::TableFull);
    assert!(table.is_empty());
    table.record_nodes("h", 1.0, &refs[..128]).unwrap();
    assert_eq!(table.get("h").unwrap().nodes().count(), 128);
}

#[test]
fn applied_ops_record_their_decoded_hash_deadline_and_node() {
    use membrane_frame::tombstone::{OpDelete, OpTombstone, DEFAULT_TOMBSTONE_TTL};
    let (mut slots, mut nodes) = storage();
    let mut table = TombstoneTable::new(&mut slots, &mut nodes);
    let op =
        OpTombstone::parse(br#"{"node_id": "n\u0031", "until": 1735600060.5, "content_hash": "h\u00e9"}"#).unwrap();
    table.apply_op_tombstone(&op).unwrap();
    let entry = table.get("h\u{e9}").unwrap();
    assert_eq!(entry.until(), 1735600060.5);
    assert_eq!(entry.nodes().collect::<Vec<_>>(), ["n1"]);
    // op_delete: its own deadline, or `now + 60 s` when it is null.
    let op = OpDelete::parse(br#"{"content_hash": "d1", "node_id": "n2", "tombstone_until": 7.25}"#).unwrap();
    assert_eq!(table.apply_op_delete(&op, 100.0).unwrap(), 7.25);
    assert_eq!(table.get("d1").unwrap().until(), 7.25);
    let op = OpDelete::parse(br#"{"content_hash": "d2", "node_id": "n2", "tombstone_until": null}"#).unwrap();
    assert_eq!(table.apply_op_delete(&op, 100.0).unwrap(), 100.0 + DEFAULT_TOMBSTONE_TTL);
    assert_eq!(table.get("d2").unwrap().until(), 160.0);
    assert_eq!(table.get("d2").unwrap().nodes().collect::<Vec<_>>(), ["n2"]);
    assert_eq!(table.len(), 3);
}

#[test]
fn tables_and_tombstones_debug_as_their_entries() {
    let (mut slots, mut nodes) = storage();
    let mut table = TombstoneTable::new(&mut slots, &mut nodes);
    assert_eq!(format!("{table:?}"), "[]");
    table.record_nodes("h", 1.5, &["n1", "n2"]).unwrap();
    let expected = r#"Tombstone { content_hash: "h", until: 1.5, nodes: ["n1", "n2"] }"#;
    assert_eq!(format!("{:?}", table.get("h").unwrap()), expected);
    assert_eq!(format!("{table:?}"), format!("[{expected}]"));
}
