//! Tombstone wire forms (SPEC §6): gossip maps and `op_tombstone` / `op_delete` bodies.
//! The readers never panic; a gossip map merges into a fixed table without panicking
//! (a full table is an error, not a crash) and the table's gossip text re-reads; op
//! bodies re-emit to texts that read back to the same values.
#![no_main]

use libfuzzer_sys::fuzz_target;
use membrane_frame::table::NodeSlot;
use membrane_frame::tombstone::{GossipMap, OpDelete, OpTombstone, TombstoneSlot, TombstoneTable};

fuzz_target!(|data: &[u8]| {
    if let Ok(map) = GossipMap::parse(data) {
        assert_eq!(map.iter().count(), map.len());
        let _ = map.is_sorted();
        let (mut slots, mut nodes) = ([TombstoneSlot::EMPTY; 32], [NodeSlot::EMPTY; 4]);
        let mut table = TombstoneTable::with_seed(&mut slots, &mut nodes, 7);
        let now = data.len() as f64;
        if table.merge_gossip_map(&map, now).is_ok() {
            let mut out = vec![0u8; table.gossip_len(now)];
            let len = table.write_gossip_into(now, &mut out).expect("gossip_len is enough");
            let written = GossipMap::parse(&out[..len]).expect("written gossip map re-reads");
            assert!(written.is_sorted());
            assert_eq!(written.len(), table.len());
        }
    }
    let (mut slots, mut nodes) = ([TombstoneSlot::EMPTY; 8], [NodeSlot::EMPTY; 2]);
    let _ = TombstoneTable::with_seed(&mut slots, &mut nodes, 1).merge_gossip(data, 0.0);

    if let Ok(op) = OpTombstone::parse(data) {
        let mut out = vec![0u8; op.encoded_len()];
        op.write_into(&mut out).expect("encoded_len is enough");
        let again = OpTombstone::parse(&out).expect("op_tombstone re-reads");
        assert!(again.content_hash().eq_decoded(&op.content_hash()));
        assert!(again.node_id().eq_decoded(&op.node_id()));
        assert_eq!(again.until().to_bits(), op.until().to_bits());
    }
    if let Ok(op) = OpDelete::parse(data) {
        let mut out = vec![0u8; op.encoded_len()];
        op.write_into(&mut out).expect("encoded_len is enough");
        let again = OpDelete::parse(&out).expect("op_delete re-reads");
        assert!(again.content_hash().eq_decoded(&op.content_hash()));
        assert!(again.node_id().eq_decoded(&op.node_id()));
        assert_eq!(again.tombstone_until().map(f64::to_bits), op.tombstone_until().map(f64::to_bits));
    }
});
