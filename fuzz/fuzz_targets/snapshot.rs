//! Cluster snapshots (SPEC §5): the reader never panics; every accessor and iterator of
//! an accepted snapshot is safe; the writer's text re-reads and re-writes to itself.
#![no_main]

use libfuzzer_sys::fuzz_target;
use membrane_frame::snapshot::Snapshot;

fn write(snapshot: &Snapshot<'_>) -> Vec<u8> {
    let mut out = vec![0u8; snapshot.encoded_len()];
    let len = snapshot.write_into(&mut out).expect("encoded_len is enough");
    assert_eq!(len, out.len());
    out
}

fuzz_target!(|data: &[u8]| {
    let _ = Snapshot::parse_guarded(data, data.len() as u64 % 8);
    let snapshot = match Snapshot::parse(data) {
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
